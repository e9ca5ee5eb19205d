use super::tests::{go, known, with_config};
use super::*;

#[test]
fn proxy_jump_lists_resolve_each_hop() {
    let config = "Host target\n  ProxyJump j1,admin@j2:2022\nHost j1\n  HostName jump-one\n  ProxyJump outer\n\
                  Host j2\n  HostName jump-two\n  ProxyJump never\n";
    let mut memory = with_config(config, "");
    let Proxy::Jumps(hops) = go(&mut memory, "target").proxy else {
        panic!("jumps")
    };
    assert_eq!(hops.len(), 2);
    assert_eq!(hops[0].hostname, known("jump-one"));
    let Proxy::Jumps(outer) = &hops[0].proxy else {
        panic!("j1's own jump")
    };
    assert_eq!(outer[0].hostname, known("outer"));
    assert_eq!(hops[1].hostname, known("jump-two"));
    assert_eq!(hops[1].user, known("admin"));
    assert_eq!(hops[1].port, known("2022"));
    // The hop after the first is reached through the earlier ones, not its own ProxyJump.
    assert_eq!(hops[1].proxy, Proxy::None);
}

#[test]
fn a_jump_loop_is_bounded() {
    let mut memory = with_config("Host *\n  ProxyJump %h-jump\nHost a\n", "");
    assert_eq!(go(&mut memory, "a").proxy, Proxy::Unknown);
    let mut memory = with_config("Host a\n ProxyJump b\nHost b\n ProxyJump a\n", "");
    let mut proxy = go(&mut memory, "a").proxy;
    let mut depth = 0;
    while let Proxy::Jumps(hops) = proxy {
        proxy = hops[0].proxy.clone();
        depth += 1;
    }
    assert_eq!(proxy, Proxy::Unknown);
    assert_eq!(depth, MAX_JUMP_DEPTH);
}

#[test]
fn proxy_command_comes_back_as_text_with_tokens() {
    let mut memory = with_config(
        "Host a\n HostName real\n User u\n ProxyCommand ssh -W %h:%p %r@bastion # %n\n",
        "",
    );
    assert_eq!(
        go(&mut memory, "a").proxy,
        Proxy::Command("ssh -W real:22 u@bastion # a".into())
    );
    let mut memory = with_config("Host a\n ProxyCommand nc %l %h\n", "");
    assert_eq!(go(&mut memory, "a").proxy, Proxy::Command("nc \0 a".into()));
    // Whichever of ProxyCommand and ProxyJump comes first wins.
    let mut memory = with_config("Host a\n ProxyCommand none\n ProxyJump b\n", "");
    assert_eq!(go(&mut memory, "a").proxy, Proxy::None);
}

#[test]
fn destinations() {
    let d = |s, p| parse_destination(s, p);
    assert_eq!(d("u@h", false).unwrap().user.as_deref(), Some("u"));
    assert_eq!(
        d("ssh://u@h:2200", false).unwrap().port.as_deref(),
        Some("2200")
    );
    assert_eq!(d("h:22", false).unwrap().host, "h:22");
    assert_eq!(d("[fd00::1]:22", true).unwrap().host, "fd00::1");
    assert_eq!(d("fd00::1", true).unwrap().host, "fd00::1");
    assert_eq!(d("u@", true), None);
}

#[test]
fn proxy_jump_takes_the_rest_of_the_line_up_to_a_comment() {
    let mut memory = with_config("Host a\n  ProxyJump=ssh://u@j1:2,j2 # the bastions\n", "");
    let Proxy::Jumps(hops) = go(&mut memory, "a").proxy else {
        panic!("jumps")
    };
    let names: Vec<_> = hops.iter().map(|h| h.hostname.clone()).collect();
    assert_eq!(names, [known("j1"), known("j2")]);
    assert_eq!((&hops[0].user, &hops[0].port), (&known("u"), &known("2")));
}
