//! Report-only mode's settings and which applies (decision 0060).

use super::*;

fn modes(default: Option<Mode>, rules: &[(&str, Mode)], modules: &[(&str, Mode)]) -> Modes {
    let family = |id: &str| Family::from_id(id).unwrap();
    Modes {
        default,
        rules: rules.iter().map(|(r, m)| (family(r), *m)).collect(),
        modules: modules.iter().map(|(n, m)| (n.to_string(), *m)).collect(),
        unset: Vec::new(),
    }
}

#[test]
fn enforce_unless_said_and_never_for_the_guards_own_rules() {
    let none = Modes::default();
    assert_eq!(none.of(Some(Family::RemoteAccess), &[]).mode, Mode::Enforce);
    let all = modes(Some(Mode::Report), &[], &[]);
    assert_eq!(
        all.of(Some(Family::MeshContainer), &["logs".into()]).mode,
        Mode::Report
    );
    assert_eq!(all.of(Some(Family::Unverifiable), &[]).mode, Mode::Report);
    for rule in ALWAYS_ENFORCED {
        assert_eq!(
            all.of(Family::from_id(rule), &[]).mode,
            Mode::Enforce,
            "{rule}"
        );
    }
}

#[test]
fn the_families_are_the_reportable_rules_and_the_rest_always_enforced() {
    // The catalog names `decide::Rule`'s ids itself (it sits below `decide`): held here.
    for rule in crate::rule::Rule::ALL {
        let family = Family::from_id(rule.id());
        assert_eq!(
            family.is_none(),
            ALWAYS_ENFORCED.contains(&rule.id()),
            "{}",
            rule.id()
        );
    }
    for family in Family::ALL {
        assert!(
            crate::rule::Rule::from_id(family.id()).is_some(),
            "{family:?}"
        );
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
    assert_eq!(
        m.of(Some(Family::MeshContainer), &["logs".into()]).mode,
        Report
    );
    assert_eq!(
        m.of(Some(Family::MeshContainer), &["vault".into()]).mode,
        Enforce
    );
    assert_eq!(
        m.of(Some(Family::MeshUnit), &["legacy".into()]).mode,
        Report
    );
    assert_eq!(
        m.of(Some(Family::RemoteAccess), &["legacy".into()]).mode,
        Enforce
    );
    assert_eq!(m.of(Some(Family::MeshUnit), &["logs".into()]).mode, Enforce);
    assert_eq!(
        m.of(
            Some(Family::RemoteDaemon),
            &["legacy".into(), "vault".into()]
        )
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
    let d = m.of(Some(Family::RemoteAccess), &on(&["controller", "metrics"]));
    assert_eq!(d.mode, Enforce);
    assert_eq!(
        d.by,
        By::Module {
            name: "metrics".into(),
            own: false
        }
    );
    let d = m.of(Some(Family::RemoteAccess), &on(&["controller", "vault"]));
    assert_eq!((d.mode, d.by.module()), (Enforce, Some("vault")));
    let d = m.of(Some(Family::RemoteAccess), &on(&["controller"]));
    assert_eq!((d.mode, d.by.module()), (Report, Some("controller")));
    // Under a reported rule family, a module without a mode of its own is reported too.
    let r = modes(
        None,
        &[("remote-access", Report)],
        &[("controller", Report)],
    );
    assert_eq!(
        r.of(Some(Family::RemoteAccess), &on(&["controller", "metrics"]))
            .mode,
        Report
    );
    assert_eq!(
        r.of(Some(Family::RemoteDaemon), &on(&["controller", "metrics"]))
            .mode,
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
