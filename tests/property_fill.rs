//! Property (issue 30): for generated catalogs and commands, every placeholder that the
//! command's named objects determine is filled, and filled right. Each catalog has machines
//! with aliases and a pattern machine, modules that name their machines by name, alias,
//! another case, the pattern machine's name or not at all, and tools whose usages hold every
//! placeholder kind. Each command names a machine (in one of the ways ssh accepts it) and a
//! unit or container of a module that runs there. The test knows what the command
//! determines (its oracle), fills each offered tool's usage from it by the catalog format's
//! rule (`docs/catalog.md`), and compares: a usage with a placeholder left open, a wrong
//! machine or module, or a part left out that was known fails.
//! `MESH_GUARD_PROPERTY_SEED` picks another seed.

use mesh_guard::catalog;
use mesh_guard::rules::Rules;
use mesh_guard::search::{Answer, search};
use mesh_guard::world::World;
use std::collections::HashMap;
use std::fmt::Write as _;

#[allow(dead_code)]
#[path = "common/xorshift.rs"]
mod xorshift;
use xorshift::XorShift;

const MACHINE_NAMES: &[&str] = &[
    "ops", "edge", "render", "encoder", "vault", "atlas", "orion", "kiln", "quay", "ledger",
];
const MODULE_NAMES: &[&str] = &["web", "transcode", "archive", "ingest", "billing", "search"];
/// The pattern machine: every `pool-NN` host.
const POOL: &str = "pool";

struct Machine {
    name: String,
    aliases: Vec<String>,
}

struct Module {
    name: String,
    /// The machines it runs on, by their catalog name (`pool` for the pattern machine).
    runs_on: Vec<String>,
    containers: Vec<String>,
    units: Vec<String>,
}

struct Tool {
    usage: String,
    module: Option<String>,
}

struct Mesh {
    machines: Vec<Machine>,
    modules: Vec<Module>,
    tools: HashMap<String, Tool>,
    toml: String,
}

/// The seat verbs: every placeholder kind, required and optional.
const VERBS: &[(&str, &str, &[&str])] = &[
    (
        "logs",
        "gen logs <module> [--machine <machine>]",
        &["journalctl", "docker logs", "ssh <machine> journalctl"],
    ),
    (
        "exec",
        "gen exec <machine> -- <command>",
        &["ssh <machine>", "docker exec <container>"],
    ),
    ("copy", "gen copy <source> <machine>:<path>", &["scp"]),
    (
        "status",
        "gen status <module> [--machine <machine>] [--unit <unit>]",
        &["systemctl status", "docker inspect"],
    ),
    (
        "restart",
        "gen restart <module> --machine <machine> [<container>]",
        &["systemctl restart", "docker restart"],
    ),
];

fn mesh(rng: &mut XorShift) -> Mesh {
    let mut toml = String::from("version = 1\n");
    let count = 3 + rng.below(MACHINE_NAMES.len() - 3);
    let machines: Vec<Machine> = MACHINE_NAMES[..count]
        .iter()
        .enumerate()
        .map(|(i, name)| Machine {
            name: name.to_string(),
            aliases: vec![format!("{name}.gen.lan"), format!("10.9.0.{}", i + 1)],
        })
        .collect();
    for m in &machines {
        let aliases: Vec<String> = m.aliases.iter().map(|a| format!("{a:?}")).collect();
        let _ = writeln!(
            toml,
            "[[machine]]\nname = {:?}\naliases = [{}]\n",
            m.name,
            aliases.join(", ")
        );
    }
    let _ = writeln!(
        toml,
        "[[machine]]\nname = {POOL:?}\npattern = \"pool-[0-9]{{2}}\"\n"
    );
    let mut tools = HashMap::new();
    let mut modules = Vec::new();
    for (k, name) in MODULE_NAMES[..2 + rng.below(MODULE_NAMES.len() - 2)]
        .iter()
        .enumerate()
    {
        // 0 to 3 machines, each written as the operator might: name, alias, upper case.
        let mut runs_on: Vec<String> = Vec::new();
        let mut written: Vec<String> = Vec::new();
        for _ in 0..rng.below(4) {
            let (canonical, as_written) = if rng.below(5) == 0 {
                (POOL.to_string(), POOL.to_string())
            } else {
                let m = rng.pick(&machines);
                let w = match rng.below(3) {
                    0 => m.name.clone(),
                    1 => rng.pick(&m.aliases).clone(),
                    _ => m.name.to_uppercase(),
                };
                (m.name.clone(), w)
            };
            if !runs_on.contains(&canonical) {
                runs_on.push(canonical);
                written.push(format!("{as_written:?}"));
            }
        }
        let mut containers: Vec<String> = (0..1 + rng.below(2))
            .map(|i| format!("{name}-c{i}"))
            .collect();
        let mut units: Vec<String> = (0..1 + rng.below(2))
            .map(|i| format!("{name}-u{i}.service"))
            .collect();
        // A container and the unit that runs it, under one name.
        if rng.below(2) == 0 {
            containers[0] = format!("{name}-svc");
            units[0] = format!("{name}-svc.service");
        }
        let quoted = |v: &[String]| {
            v.iter()
                .map(|s| format!("{s:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            toml,
            "[[module]]\nname = {name:?}\ncontainers = [{}]\nunits = [{}]",
            quoted(&containers),
            quoted(&units)
        );
        if !written.is_empty() {
            let _ = writeln!(toml, "machines = [{}]", written.join(", "));
        }
        // A module's own tools: one that knows its module, one that needs a machine.
        let own = [
            (
                format!("shell_{k}"),
                "gen shell <module> --machine <machine>".to_string(),
                "docker exec <container> sh",
            ),
            (
                format!("drain_{k}"),
                format!("gen {name} drain <container> [--machine <machine>]"),
                "docker stop <container>",
            ),
            (
                format!("gpu_{k}"),
                "gen gpu <module> --machine <machine>".to_string(),
                "ssh <machine> nvidia-smi",
            ),
        ];
        for (tool, usage, replaces) in own.into_iter().filter(|_| rng.below(2) == 0) {
            let _ = writeln!(
                toml,
                "  [[module.tool]]\n  name = {tool:?}\n  usage = {usage:?}\n  replaces = [{replaces:?}]"
            );
            tools.insert(
                tool,
                Tool {
                    usage,
                    module: Some(name.to_string()),
                },
            );
        }
        toml.push('\n');
        modules.push(Module {
            name: name.to_string(),
            runs_on,
            containers,
            units,
        });
    }
    for (name, usage, replaces) in VERBS {
        let replaces: Vec<String> = replaces.iter().map(|r| format!("{r:?}")).collect();
        let _ = writeln!(
            toml,
            "[[verb]]\nname = {name:?}\nusage = {usage:?}\nreplaces = [{}]\n",
            replaces.join(", ")
        );
        tools.insert(
            name.to_string(),
            Tool {
                usage: usage.to_string(),
                module: None,
            },
        );
    }
    Mesh {
        machines,
        modules,
        tools,
        toml,
    }
}

/// A command and what it determines: placeholder name → value.
struct Case {
    command: String,
    determined: HashMap<&'static str, String>,
    /// Text no usage may hold: a jump host's name where the command runs elsewhere.
    forbidden: Option<String>,
}

/// A machine for `module` to be reached on, as the catalog names it in a refusal and as
/// the command writes it.
fn reach(rng: &mut XorShift, mesh: &Mesh, module: &Module) -> (String, String) {
    let name = if module.runs_on.is_empty() {
        rng.pick(&mesh.machines).name.clone()
    } else {
        rng.pick(&module.runs_on).clone()
    };
    if name == POOL {
        let host = format!("pool-{:02}", rng.below(100));
        return (host.clone(), host);
    }
    let machine = mesh.machines.iter().find(|m| m.name == name).unwrap();
    let written = match rng.below(4) {
        0 => machine.name.clone(),
        1 => rng.pick(&machine.aliases).clone(),
        2 => format!("deploy@{}", machine.name),
        _ => machine.name.to_uppercase(),
    };
    (name, written)
}

fn case(rng: &mut XorShift, mesh: &Mesh) -> Case {
    let module = rng.pick(&mesh.modules);
    let unit = rng.pick(&module.units).clone();
    let unit_named = if rng.below(2) == 0 {
        unit.trim_end_matches(".service").to_string()
    } else {
        unit.clone()
    };
    let container = rng.pick(&module.containers).clone();
    let (machine, host) = reach(rng, mesh, module);
    let bare_host = host.rsplit('@').next().unwrap_or(&host).to_string();
    let mut determined: HashMap<&'static str, String> = HashMap::new();
    determined.insert("module", module.name.clone());
    let on_machine = |d: &mut HashMap<&'static str, String>| {
        d.insert("machine", machine.clone());
    };
    let mut forbidden = None;
    let command = match rng.below(14) {
        0 => {
            on_machine(&mut determined);
            determined.insert("unit", unit_named.clone());
            determined.insert("command", format!("journalctl -u {unit_named} -n 100"));
            format!("ssh {host} journalctl -u {unit_named} -n 100")
        }
        1 => {
            on_machine(&mut determined);
            determined.insert("unit", unit_named.clone());
            if rng.below(2) == 0 {
                format!("journalctl -M {bare_host} -u {unit_named}")
            } else {
                format!("journalctl --machine={bare_host} --unit={unit_named}")
            }
        }
        2 => {
            on_machine(&mut determined);
            determined.insert("container", container.clone());
            format!("docker -H ssh://{host} logs -f {container}")
        }
        3 => {
            on_machine(&mut determined);
            determined.insert("container", container.clone());
            format!("export DOCKER_HOST=ssh://{host}; docker logs -f {container}")
        }
        4 => {
            on_machine(&mut determined);
            determined.insert("unit", unit_named.clone());
            format!("systemctl -H {host} status {unit_named}")
        }
        5 => {
            // The jump host is another machine; the command runs on the destination.
            on_machine(&mut determined);
            determined.insert("command", "nvidia-smi".to_string());
            let jump = rng.pick(&mesh.machines).name.clone();
            let option = if rng.below(2) == 0 {
                format!("-J {jump}")
            } else {
                format!("-o ProxyJump={jump}")
            };
            determined.remove("module");
            format!("ssh {option} {host} nvidia-smi")
        }
        6 => {
            on_machine(&mut determined);
            determined.insert("source", "cut.mp4".to_string());
            determined.insert("path", "/srv/in/".to_string());
            determined.remove("module");
            format!("scp cut.mp4 {host}:/srv/in/")
        }
        7 => {
            determined.insert("container", container.clone());
            single_machine(mesh, module, &mut determined);
            format!("docker restart {container}")
        }
        8 => {
            determined.insert("unit", unit_named.clone());
            single_machine(mesh, module, &mut determined);
            format!("systemctl status {unit_named}")
        }
        9 => {
            determined.insert("container", container.clone());
            determined.insert("command", "sh".to_string());
            single_machine(mesh, module, &mut determined);
            format!("docker exec -it {container} sh")
        }
        10 => {
            on_machine(&mut determined);
            determined.insert("container", container.clone());
            determined.insert("command", format!("docker stop {container}"));
            format!("ssh {host} docker stop {container}")
        }
        12 => {
            // The daemon the option names runs what `exec` carries.
            on_machine(&mut determined);
            determined.insert("container", container.clone());
            determined.insert("command", "ls /srv".to_string());
            format!("docker -H ssh://{host} exec -it {container} ls /srv")
        }
        11 => {
            // Through a mesh machine to a host outside the mesh: no tool runs there.
            determined.clear();
            determined.insert("command", "uptime".to_string());
            forbidden = Some(machine.clone());
            format!("ssh -J {host} cdn.example.com uptime")
        }
        _ => {
            on_machine(&mut determined);
            determined.insert("unit", unit_named.clone());
            determined.insert("command", format!("'sudo systemctl restart {unit_named}'"));
            format!("ssh {host} 'sudo systemctl restart {unit_named}'")
        }
    };
    Case {
        command,
        determined,
        forbidden,
    }
}

/// A module on one machine (not the pattern machine, which is many hosts) determines it.
fn single_machine(_mesh: &Mesh, module: &Module, d: &mut HashMap<&'static str, String>) {
    if let [only] = module.runs_on.as_slice()
        && only != POOL
    {
        d.insert("machine", only.clone());
    }
}

/// The catalog format's rule: a placeholder is filled when determined; an optional part
/// whose placeholders are not all determined is left out; a required one stays open.
fn expected(usage: &str, values: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = usage;
    while let Some(open) = rest.find(['[', '<']) {
        out.push_str(&rest[..open]);
        let optional = rest[open..].starts_with('[');
        let close = rest[open..].find(if optional { ']' } else { '>' }).unwrap();
        let inner = &rest[open + 1..open + close];
        if optional {
            let filled = expected(inner, values);
            if filled.contains('<') {
                out.truncate(out.trim_end().len());
            } else {
                out.push_str(&filled);
            }
        } else {
            out.push_str(&values(inner).unwrap_or_else(|| format!("<{inner}>")));
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out.trim_end().to_string()
}

#[test]
fn every_placeholder_the_command_determines_is_filled() {
    let seed = std::env::var("MESH_GUARD_PROPERTY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x0f11_3030_u64);
    let mut rng = XorShift::new(seed);
    let rules = Rules::load(None).unwrap();
    let dir = std::env::temp_dir().join(format!("mesh-guard-property-fill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    let (mut offered, mut cases) = (0, 0);
    for n in 0..60 {
        let mesh = mesh(&mut rng);
        let path = dir.join(format!("catalog-{n}.toml"));
        std::fs::write(&path, &mesh.toml).unwrap();
        let catalog = catalog::load(&path).unwrap_or_else(|e| panic!("{e:?}\n{}", mesh.toml));
        for _ in 0..25 {
            let case = case(&mut rng, &mesh);
            cases += 1;
            let answer = search(&catalog, &rules, &World::default(), &case.command).unwrap();
            let Answer::Found(tools) = answer else {
                continue;
            };
            for found in tools {
                offered += 1;
                let tool = &mesh.tools[&found.tool];
                let values = |p: &str| match (p, &tool.module) {
                    ("module", Some(own)) => Some(own.clone()),
                    _ => case.determined.get(p).cloned(),
                };
                let want = expected(&tool.usage, &values);
                if let Some(hop) = &case.forbidden
                    && (found.usage.contains("<machine>") || found.usage.contains(hop.as_str()))
                {
                    failures.push(format!(
                        "  `{}` (catalog {n}): {} offered `{}`, which does not run where the command runs",
                        case.command, found.tool, found.usage
                    ));
                } else if found.usage != want {
                    failures.push(format!(
                        "  `{}` (catalog {n}): {} offered `{}`, determined `{want}`",
                        case.command, found.tool, found.usage
                    ));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        offered > cases,
        "{offered} usages offered for {cases} commands: the generator names too little"
    );
    assert!(
        failures.is_empty(),
        "{} of {offered} usages not filled as determined (seed {seed}):\n{}\n{}",
        failures.len(),
        failures
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n"),
        ""
    );
}
