//! Property (issue 28): every usage the guard offers passes the guard. The usages come from
//! every place an agent is shown one: a refusal's filled usages (`check --json`), `search`
//! (which the MCP tool `mesh_search` answers from), and the "instead of" table (`instead-of`,
//! also the SessionStart table), its placeholders filled with the catalog's own names. Each
//! must pass as written, piped, behind `cd … &&`, quoted into `bash -c`, and behind `sudo`,
//! over the example catalog, the unseen mesh and catalogs generated from a fixed seed
//! (`MESH_GUARD_PROPERTY_SEED` picks another), whose mesh CLI is not always called `mesh`.

mod common;
#[allow(dead_code)]
#[path = "common/xorshift.rs"]
mod xorshift;

use common::{Scratch, call};
use serde_json::Value;
use std::path::{Path, PathBuf};
use xorshift::XorShift;

fn seed() -> u64 {
    std::env::var("MESH_GUARD_PROPERTY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x0ffe_12ed)
        .max(1)
}

const CLIS: &[&str] = &["mesh", "lab", "fleet", "grid", "meshctl"];
const HOSTS: &[&str] = &[
    "web", "db", "api", "build", "render", "gpu1", "cache", "node-7", "bastion", "vault",
];
const MODULES: &[&str] = &["orders", "billing", "search", "kv", "frontend", "ci"];

/// A catalog of random names, valid, with the seat verbs and one tool per module.
fn generated(rng: &mut XorShift, n: usize) -> String {
    let cli = *rng.pick(CLIS);
    let mut text = String::from("version = 1\n");
    let mut hosts: Vec<&str> = Vec::new();
    while hosts.len() < 3 {
        let h = *rng.pick(HOSTS);
        if !hosts.contains(&h) {
            hosts.push(h);
        }
    }
    for h in &hosts {
        text += &format!("[[machine]]\nname = \"{h}{n}\"\n");
    }
    let mut modules: Vec<&str> = Vec::new();
    while modules.len() < 2 {
        let m = *rng.pick(MODULES);
        if !modules.contains(&m) {
            modules.push(m);
        }
    }
    for (i, m) in modules.iter().enumerate() {
        let host = hosts[i % hosts.len()];
        text += &format!(
            "[[module]]\nname = \"{m}\"\nmachines = [\"{host}{n}\"]\n\
             containers = [\"{m}-app\", \"{m}-worker\"]\nunits = [\"{m}.service\"]\n\
             [[module.tool]]\nname = \"{m}_console\"\nusage = \"{cli} {m} console --machine <machine>\"\n\
             replaces = [\"docker exec <container> sh\", \"ssh <machine> {m}ctl\"]\n"
        );
    }
    for (verb, usage, replaces) in [
        (
            "logs",
            "logs <module> [--machine <machine>]",
            "\"journalctl\", \"docker logs\", \"ssh <machine> journalctl\"",
        ),
        (
            "exec",
            "exec <machine> -- <command>",
            "\"ssh <machine>\", \"docker exec <container>\"",
        ),
        (
            "copy",
            "copy <source> <machine>:<path>",
            "\"scp\", \"rsync\"",
        ),
        (
            "restart",
            "restart <module> [--machine <machine>]",
            "\"systemctl restart\", \"docker restart\"",
        ),
    ] {
        text += &format!(
            "[[verb]]\nname = \"{verb}\"\nusage = \"{cli} {usage}\"\nreplaces = [{replaces}]\n"
        );
    }
    text
}

/// The names a catalog holds, by kind, read from its TOML.
struct Names {
    machines: Vec<String>,
    modules: Vec<String>,
    containers: Vec<String>,
    units: Vec<String>,
}

fn names(text: &str) -> Names {
    let table: toml::Table = text.parse().expect("catalog parses");
    let list = |key: &str, field: &str| -> Vec<String> {
        let mut out = Vec::new();
        for entry in table
            .get(key)
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
        {
            match entry.get(field) {
                Some(Value2::String(s)) => out.push(s.clone()),
                Some(Value2::Array(items)) => {
                    out.extend(items.iter().filter_map(|i| i.as_str().map(String::from)))
                }
                _ => {}
            }
        }
        out
    };
    Names {
        machines: list("machine", "name"),
        modules: list("module", "name"),
        containers: list("module", "containers"),
        units: list("module", "units"),
    }
}

use toml::Value as Value2;

/// Commands the guard refuses, one per kind of object, with the shapes agents write.
fn refused(names: &Names) -> Vec<String> {
    let mut out = Vec::new();
    let (unit, container) = (&names.units[0], &names.containers[0]);
    for m in &names.machines {
        out.push(format!("ssh {m} uptime"));
        // A remote command naming the mesh's own unit and container: the usage carries it.
        out.push(format!("ssh {m} 'sudo journalctl -u {unit} -n 200'"));
        out.push(format!("ssh {m} docker logs {container} --tail 50"));
        out.push(format!("ssh {m} 'cd /srv/app && make build'"));
        out.push(format!("scp dist.tar {m}:/srv/"));
    }
    for c in &names.containers {
        out.push(format!("docker logs {c}"));
        out.push(format!("docker exec -it {c} sh -c 'ls /; echo done'"));
    }
    for u in &names.units {
        out.push(format!("journalctl -u {u} -n 100"));
        out.push(format!("systemctl restart {u}"));
    }
    out
}

fn usages_in(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("usage", Value::String(u)) => into.push(u.clone()),
                    _ => usages_in(v, into),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| usages_in(v, into)),
        _ => {}
    }
}

fn json(catalog: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--catalog", catalog.to_str().unwrap()];
    all.extend(args);
    let out = call(&all, &[], b"");
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", out.stdout))
}

/// A template's placeholders filled with the catalog's own names, as an agent would.
fn filled(usage: &str, names: &Names) -> String {
    let mut out = usage.replace(['[', ']'], "");
    let command = format!("'sudo journalctl -u {} -n 50'", names.units[0]);
    for (placeholder, value) in [
        ("<machine>", names.machines[0].as_str()),
        ("<module>", names.modules[0].as_str()),
        ("<container>", names.containers[0].as_str()),
        ("<unit>", names.units[0].as_str()),
        ("<command>", command.as_str()),
        ("<source>", "./dist.tar"),
        ("<path>", "/srv/"),
    ] {
        out = out.replace(placeholder, value);
    }
    out
}

/// Every usage offered for `catalog`: refusals', search's, and the table's.
fn offered(catalog: &Path, text: &str) -> Vec<String> {
    let names = names(text);
    let mut usages = Vec::new();
    for command in refused(&names) {
        let check = json(catalog, &["check", "--json", &command]);
        assert_eq!(check["decision"], "refuse", "`{command}` is a refusal case");
        usages_in(&check["instead"], &mut usages);
        usages_in(&json(catalog, &["search", "--json", &command]), &mut usages);
    }
    let mut table = Vec::new();
    usages_in(
        &json(catalog, &["instead-of", "--format", "json"]),
        &mut table,
    );
    usages.extend(table.iter().map(|u| filled(u, &names)));
    // A usage that still holds a placeholder is one the agent fills: filled, it must pass.
    let with_placeholders: Vec<String> = usages
        .iter()
        .filter(|u| u.contains('<'))
        .map(|u| filled(u, &names))
        .collect();
    usages.retain(|u| !u.contains('<'));
    usages.extend(with_placeholders);
    usages.sort();
    usages.dedup();
    usages
}

fn check_all(catalog: &Path, text: &str) -> usize {
    let usages = offered(catalog, text);
    assert!(
        !usages.is_empty(),
        "{}: no usage offered",
        catalog.display()
    );
    let mut failures = Vec::new();
    for usage in &usages {
        let quoted = shell_words::quote(usage).into_owned();
        for form in [
            usage.clone(),
            format!("{usage} | grep -i error"),
            format!("cd /srv/app && {usage}"),
            format!("bash -c {quoted}"),
            format!("sudo {usage}"),
        ] {
            let out = call(
                &[
                    "--catalog",
                    catalog.to_str().unwrap(),
                    "check",
                    "--json",
                    &form,
                ],
                &[],
                b"",
            );
            if out.code != 0 {
                failures.push(format!("{form}\n    {}", out.stdout.trim()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{}: offered usages the guard refuses:\n{}",
        catalog.display(),
        failures.join("\n")
    );
    usages.len()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_usage_offered_for_the_example_meshes_passes() {
    for path in ["examples/catalog.toml", "tests/corpus/unseen/catalog.toml"] {
        let catalog = root().join(path);
        let text = std::fs::read_to_string(&catalog).unwrap();
        let checked = check_all(&catalog, &text);
        assert!(checked >= 10, "{path}: only {checked} usages");
    }
}

#[test]
fn every_usage_offered_for_generated_meshes_passes() {
    let mut rng = XorShift::new(seed());
    let dir = Scratch::new("offered");
    for n in 0..6 {
        let text = generated(&mut rng, n);
        let catalog = dir.write(&format!("catalog-{n}.toml"), &text);
        check_all(&catalog, &text);
    }
}
