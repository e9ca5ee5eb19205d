//! Report-only mode's settings and which applies (decision 0060).

use super::*;

fn modes(default: Option<Mode>, rules: &[(Rule, Mode)], modules: &[(&str, Mode)]) -> Modes {
    Modes {
        default,
        rules: rules.to_vec(),
        modules: modules.iter().map(|(n, m)| (n.to_string(), *m)).collect(),
        unset: Vec::new(),
    }
}

#[test]
fn enforce_unless_said_and_never_for_the_guards_own_rules() {
    let none = Modes::default();
    assert_eq!(none.of(Rule::RemoteAccess, &[]).mode, Mode::Enforce);
    let all = modes(Some(Mode::Report), &[], &[]);
    assert_eq!(
        all.of(Rule::MeshContainer, &["logs".into()]).mode,
        Mode::Report
    );
    assert_eq!(all.of(Rule::Unverifiable, &[]).mode, Mode::Report);
    for rule in [Rule::SelfProtection, Rule::Override, Rule::FailClosed] {
        let decided = all.of(rule, &["logs".into()]);
        assert_eq!(
            (decided.mode, decided.by),
            (Mode::Enforce, By::Always),
            "{rule}"
        );
    }
}

#[test]
fn mode_names_only_the_reportable_rules_and_says_the_rest_are_always_enforced() {
    let source = Source::new("catalog.toml".into(), "[mode]\nx = \"report\"\n".into());
    for rule in Rule::ALL {
        let setting =
            BTreeMap::from([(rule.id().to_string(), Spanned::new(0..8, "report".into()))]);
        let (mut set, mut errors) = (Modes::default(), Vec::new());
        table(&source, &setting, &mut set, &mut errors);
        if rule.reportable() {
            assert_eq!(
                (set.rule(rule), errors.len()),
                (Some(Mode::Report), 0),
                "{rule}"
            );
        } else {
            assert!(set.rules.is_empty(), "{rule}");
            assert!(errors[0].to_string().contains("always enforced"), "{rule}");
        }
    }
}

#[test]
fn a_rules_or_a_modules_setting_wins_over_the_default_and_enforce_wins_a_disagreement() {
    use Mode::*;
    let m = modes(
        Some(Enforce),
        &[(Rule::MeshContainer, Report), (Rule::RemoteAccess, Enforce)],
        &[("vault", Enforce), ("legacy", Report)],
    );
    assert_eq!(m.of(Rule::MeshContainer, &["logs".into()]).mode, Report);
    assert_eq!(m.of(Rule::MeshContainer, &["vault".into()]).mode, Enforce);
    assert_eq!(m.of(Rule::MeshUnit, &["legacy".into()]).mode, Report);
    assert_eq!(m.of(Rule::RemoteAccess, &["legacy".into()]).mode, Enforce);
    assert_eq!(m.of(Rule::MeshUnit, &["logs".into()]).mode, Enforce);
    assert_eq!(
        m.of(Rule::RemoteDaemon, &["legacy".into(), "vault".into()])
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
    let d = m.of(Rule::RemoteAccess, &on(&["controller", "metrics"]));
    assert_eq!(d.mode, Enforce);
    assert_eq!(
        d.by,
        By::Module {
            name: "metrics".into(),
            own: false
        }
    );
    let d = m.of(Rule::RemoteAccess, &on(&["controller", "vault"]));
    assert_eq!((d.mode, d.by.module()), (Enforce, Some("vault")));
    let d = m.of(Rule::RemoteAccess, &on(&["controller"]));
    assert_eq!((d.mode, d.by.module()), (Report, Some("controller")));
    // Under a reported rule family, a module without a mode of its own is reported too.
    let r = modes(
        None,
        &[(Rule::RemoteAccess, Report)],
        &[("controller", Report)],
    );
    assert_eq!(
        r.of(Rule::RemoteAccess, &on(&["controller", "metrics"]))
            .mode,
        Report
    );
    assert_eq!(
        r.of(Rule::RemoteDaemon, &on(&["controller", "metrics"]))
            .mode,
        Enforce
    );
}

#[test]
fn the_caches_lines_give_the_settings_back() {
    use Mode::*;
    let m = modes(
        Some(Report),
        &[(Rule::MeshUnit, Enforce)],
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
        &[(Rule::RemoteAccess, Enforce)],
        &[("db", Enforce)],
    );
    assert_eq!(
        m.describe(),
        "report for the whole mesh, enforce for rule remote-access, enforce for module db; self-protection and the override's rules always enforced"
    );
    assert!(!m.all_enforced());
    assert!(Modes::default().all_enforced());
}
