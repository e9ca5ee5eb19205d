use super::*;

#[test]
fn host_forms() {
    assert_eq!(split_host("git@forge:22"), (Some("git"), "forge"));
    assert_eq!(
        split_host("ssh://root@atlas:2222/x"),
        (Some("root"), "atlas")
    );
    assert_eq!(split_host("[fd00:20::13]:22"), (None, "fd00:20::13"));
    assert_eq!(split_host("fd00:20::13"), (None, "fd00:20::13"));
    assert_eq!(host_of_path("u@atlas:/tmp/x"), Some("u@atlas"));
    assert_eq!(host_of_path("atlas::module"), Some("atlas"));
    assert_eq!(host_of_path("./a:b"), None);
    assert_eq!(host_of_path("/x/y:z"), None);
    assert_eq!(host_of_path("local.txt"), None);
    assert_eq!(host_of_path("u@[fd00::1]:/x"), Some("u@[fd00::1]"));
    assert_eq!(host_of_path("u@atlas"), None);
    assert_eq!(
        ssh_option("ProxyJump=atlas"),
        Some(("proxyjump".into(), "atlas"))
    );
    assert_eq!(
        ssh_option("HostName atlas"),
        Some(("hostname".into(), "atlas"))
    );
}
