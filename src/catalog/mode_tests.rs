//! Report-only mode's settings and which applies (decision 0060).

use super::*;

fn modes(default: Option<Mode>, rules: &[(&str, Mode)], modules: &[(&str, Mode)]) -> Modes {
    Modes {
        default,
        rules: rules.iter().map(|(r, m)| (r.to_string(), *m)).collect(),
        modules: modules.iter().map(|(n, m)| (n.to_string(), *m)).collect(),
        unset: Vec::new(),
    }
}

#[test]
fn enforce_unless_said_and_never_for_the_guards_own_rules() {
    let none = Modes::default();
    assert_eq!(none.of("remote-access", &[]).mode, Mode::Enforce);
    let all = modes(Some(Mode::Report), &[], &[]);
    assert_eq!(
        all.of("mesh-container", &["logs".into()]).mode,
        Mode::Report
    );
    assert_eq!(all.of("unverifiable", &[]).mode, Mode::Report);
    for rule in ALWAYS_ENFORCED {
        assert_eq!(all.of(rule, &[]).mode, Mode::Enforce, "{rule}");
    }
}

#[test]
fn a_rules_or_a_modules_setting_wins_over_the_default_and_enforce_wins_a_disagreement() {
    use Mode::*;
    let m = modes(
        Some(Enforce),
        &[("mesh-container", Report), ("remote-access", Enforce)],
        &[("vault", Enforce), ("legacy", Report)],
    );
    assert_eq!(m.of("mesh-container", &["logs".into()]).mode, Report);
    assert_eq!(m.of("mesh-container", &["vault".into()]).mode, Enforce);
    assert_eq!(m.of("mesh-unit", &["legacy".into()]).mode, Report);
    assert_eq!(m.of("remote-access", &["legacy".into()]).mode, Enforce);
    assert_eq!(m.of("mesh-unit", &["logs".into()]).mode, Enforce);
    assert_eq!(
        m.of("remote-daemon", &["legacy".into(), "vault".into()])
            .mode,
        Enforce
    );
}

#[test]
fn a_machine_is_reported_only_if_every_module_on_it_is() {
    use Mode::*;
    let m = modes(None, &[], &[("controller", Report), ("vault", Enforce)]);
    let on = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    // metrics has no mode: it is under the whole mesh's, enforce, and decides.
    let d = m.of("remote-access", &on(&["controller", "metrics"]));
    assert_eq!(d.mode, Enforce);
    assert_eq!(
        d.by,
        By::Module {
            name: "metrics".into(),
            own: false
        }
    );
    let d = m.of("remote-access", &on(&["controller", "vault"]));
    assert_eq!((d.mode, d.by.module()), (Enforce, Some("vault")));
    let d = m.of("remote-access", &on(&["controller"]));
    assert_eq!((d.mode, d.by.module()), (Report, Some("controller")));
    // Under a reported rule family, a module without a mode of its own is reported too.
    let r = modes(
        None,
        &[("remote-access", Report)],
        &[("controller", Report)],
    );
    assert_eq!(
        r.of("remote-access", &on(&["controller", "metrics"])).mode,
        Report
    );
    assert_eq!(
        r.of("remote-daemon", &on(&["controller", "metrics"])).mode,
        Enforce
    );
}

#[test]
fn the_caches_lines_give_the_settings_back() {
    use Mode::*;
    let m = modes(
        Some(Report),
        &[("mesh-unit", Enforce)],
        &[("odd\tname", Report)],
    );
    let mut m = m;
    m.unset = vec![("metrics".into(), vec!["atlas".into(), "orion".into()])];
    assert_eq!(Modes::decoded(&m.encoded()), Some(m));
    assert_eq!(Modes::decoded(&["rule\tx\tmaybe".into()]), None);
}

#[test]
fn describe_says_every_setting() {
    use Mode::*;
    let m = modes(
        Some(Report),
        &[("remote-access", Enforce)],
        &[("db", Enforce)],
    );
    assert_eq!(
        m.describe(),
        "report for the whole mesh, enforce for rule remote-access, enforce for module db; self-protection and the override's rules always enforced"
    );
    assert!(!m.all_enforced());
    assert!(Modes::default().all_enforced());
}
