use super::*;
use crate::ondisk::read::Reader;

fn shell(recipes: &Recipes, name: &str) -> Vec<Step> {
    recipes
        .get(name)
        .map(|r| r.steps.clone())
        .unwrap_or_default()
}

fn code(text: &str) -> Step {
    Step::Shell(text.to_string())
}

fn recipe(name: &str) -> Step {
    Step::Recipe(name.to_string(), vec![])
}

#[test]
fn package_json_scripts_are_shell_lines() {
    let recipes =
        package_json::parse(r#"{"scripts": {"build": "tsc", "deploy": "rsync a www:", "n": 3}}"#)
            .unwrap();
    assert_eq!(shell(&recipes, "build"), [code("tsc")]);
    assert_eq!(shell(&recipes, "deploy"), [code("rsync a www:")]);
    assert_eq!(shell(&recipes, "n"), [Step::Unknown]);
    assert_eq!(package_json::parse("{}").unwrap().recipes, []);
    assert_eq!(package_json::parse("[1]"), None);
    assert_eq!(package_json::parse("{\"scripts\": "), None);
}

#[test]
fn a_justfile_gives_bodies_parameters_dependencies_and_aliases() {
    let text = "\
set shell := [\"bash\", \"-cu\"]
host := `hostname`

# the default
default: build
build:
    cargo build
deploy target='web': build (push \"x\") && notify
    @rsync -a out {{target}}:/srv \\
      --delete
    -ssh {{target}} restart
push what:
    scp {{what}} db:
notify:
script:
    #!/usr/bin/env bash
    ssh api uptime
python:
    #!/usr/bin/env python3
    print('ssh db')
alias d := deploy
";
    let recipes = justfile::parse(text).unwrap();
    assert_eq!(recipes.default, ["default"]);
    assert!(recipes.parse_time.contains(&"hostname".to_string()));
    assert_eq!(shell(&recipes, "default"), [recipe("build")]);
    let deploy = recipes.get("deploy").unwrap();
    assert_eq!(deploy.params, ["target"]);
    assert_eq!(
        deploy.steps,
        [
            recipe("build"),
            Step::Recipe("push".into(), vec!["x".into()]),
            recipe("notify"),
            code("rsync -a out {{target}}:/srv \\\n--delete"),
            code("ssh {{target}} restart"),
        ]
    );
    assert_eq!(shell(&recipes, "script"), [code("ssh api uptime")]);
    assert_eq!(shell(&recipes, "python"), [Step::Unknown]);
    assert_eq!(shell(&recipes, "d"), [recipe("deploy")]);
    assert!(!recipes.partial);
    // Another shell: no line is shell code.
    let fish = justfile::parse("set shell := [\"fish\", \"-c\"]\nx:\n    ssh db\n").unwrap();
    assert_eq!(shell(&fish, "x"), [Step::Unknown]);
    // An import hides recipes: a name not found may still be one.
    assert!(justfile::parse("import 'other.just'\n").unwrap().partial);
}

#[test]
fn a_taskfile_gives_commands_dependencies_and_calls() {
    let text = "\
version: '3'
vars:
  REV: {sh: git rev-parse HEAD}
tasks:
  one: ssh db uptime
  list: [make, ssh api]
  full:
    deps: [one, {task: list}]
    preconditions:
      - sh: test -f x
    cmds:
      - scp a cache:/x
      - cmd: ssh cache restart
      - task: one
      - defer: ssh web cleanup
      - for: [a, b]
        cmd: echo {{.ITEM}}
";
    let recipes = taskfile::parse(text).unwrap();
    assert_eq!(recipes.parse_time, ["git rev-parse HEAD"]);
    assert_eq!(shell(&recipes, "one"), [code("ssh db uptime")]);
    assert_eq!(shell(&recipes, "list"), [code("make"), code("ssh api")]);
    assert_eq!(
        shell(&recipes, "full"),
        [
            recipe("one"),
            recipe("list"),
            code("test -f x"),
            code("scp a cache:/x"),
            code("ssh cache restart"),
            recipe("one"),
            code("ssh web cleanup"),
            Step::Unknown,
        ]
    );
    assert_eq!(taskfile::parse("a: [1\n"), None);
    assert_eq!(taskfile::parse("a: 1\n---\nb: 2\n"), None);
}

#[test]
fn yaml_aliases_are_unknown_and_never_copied() {
    // The billion laughs: each level names the one before nine times.
    let mut text = String::from("a0: &a0 [ssh, db]\n");
    for level in 1..10 {
        let refs: Vec<String> = (0..9).map(|_| format!("*a{}", level - 1)).collect();
        text.push_str(&format!("a{level}: &a{level} [{}]\n", refs.join(", ")));
    }
    text.push_str("tasks:\n  x: *a9\n  y:\n    cmds: *a9\n");
    let recipes = taskfile::parse(&text).unwrap();
    assert_eq!(shell(&recipes, "x"), [Step::Unknown]);
    assert_eq!(shell(&recipes, "y"), [Step::Unknown]);
    // Nesting past the bound is not read.
    let deep = format!("tasks: {}{}\n", "[".repeat(200), "]".repeat(200));
    assert_eq!(taskfile::parse(&deep), None);
}

#[test]
fn makefile_toml_pyproject_tox_and_noxfile() {
    let cargo = cargo_make::parse(
        "[tasks.a]\ncommand = \"scp\"\nargs = [\"x y\", \"db:\"]\ndependencies = [\"b\"]\n\
         [tasks.b]\nscript = [\"ssh api\", \"ls\"]\n[tasks.c]\nrun_task = { name = [\"a\", \"b\"] }\n\
         [tasks.d]\nscript_runner = \"@duckscript\"\nscript = \"exec ssh db\"\n",
    )
    .unwrap();
    assert_eq!(shell(&cargo, "a"), [recipe("b"), code("scp 'x y' db:")]);
    assert_eq!(shell(&cargo, "b"), [code("ssh api\nls")]);
    assert_eq!(shell(&cargo, "c"), [recipe("a"), recipe("b")]);
    assert_eq!(shell(&cargo, "d"), [Step::Unknown]);

    let pdm = pyproject::pdm(
        "[tool.pdm.scripts]\na = \"ssh db\"\nb = {cmd = [\"scp\", \"x y\", \"db:\"]}\n\
         c = {composite = [\"a\", \"ls -l\"]}\nd = {call = \"pkg:main\"}\n_ = {env_file = \".env\"}\n",
    )
    .unwrap();
    assert_eq!(shell(&pdm, "a"), [code("ssh db")]);
    assert_eq!(shell(&pdm, "b"), [code("scp 'x y' db:")]);
    assert_eq!(shell(&pdm, "c"), [recipe("a"), code("ls -l")]);
    assert_eq!(shell(&pdm, "d"), [Step::Unknown]);
    assert!(pdm.get("_").is_none());
    let poetry =
        pyproject::poetry("[tool.poetry.scripts]\ndeploy = \"shop.cli:deploy\"\n").unwrap();
    assert_eq!(
        shell(&poetry, "deploy"),
        [Step::Python(vec![
            "shop/cli.py".into(),
            "shop/cli/__init__.py".into(),
            "src/shop/cli.py".into(),
            "src/shop/cli/__init__.py".into()
        ])]
    );
    let odd = pyproject::poetry("[project.scripts]\nx = \"../up:main\"\n").unwrap();
    assert_eq!(shell(&odd, "x"), [Step::Unknown]);

    let tox = tox::parse(
        "[tox]\nenvlist = py311, lint\n[testenv]\ncommands = pytest {posargs}\n\
         [testenv:lint]\ncommands =\n    ruff check\n    - ssh {env:HOST} x\n",
    )
    .unwrap();
    assert_eq!(tox.default, ["py311", "lint"]);
    assert_eq!(
        shell(&tox, "lint"),
        [
            code("ruff check"),
            code(&format!("ssh {} x", crate::shell::UNKNOWN))
        ]
    );
    assert_eq!(tox.fallback.as_deref(), Some(&[code("pytest \"$@\"")][..]));

    let nox = nox::parse(
        "import nox\n\n@nox.session\ndef tests(session):\n    session.run(\"pytest\", *session.posargs)\n\n\
         @nox.session(name=\"ship\")\ndef deploy(session):\n    session.run(\"rsync\", \"-a\", \"d/\", \"api:/x\", external=True)\n    session.notify(\"tests\")\n",
    )
    .unwrap();
    assert_eq!(nox.default, ["tests", "ship"]);
    assert_eq!(
        shell(&nox, "tests"),
        [code(&format!("pytest {}", crate::shell::UNKNOWN))]
    );
    assert_eq!(
        shell(&nox, "ship"),
        [code("rsync -a d/ api:/x"), recipe("tests")]
    );
}

fn lookup<'a>(format: Format, files: &'a [String], cwd: &'a str) -> Lookup<'a> {
    Lookup {
        format,
        files,
        upward: true,
        cwd,
        file: None,
        dir: None,
    }
}

#[test]
fn the_file_is_found_upward_and_a_hostile_one_is_unreadable_fast() {
    let root = tempfile::tempdir().unwrap();
    let sub = root.path().join("a/b");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(
        root.path().join("package.json"),
        r#"{"scripts":{"x":"ssh db"}}"#,
    )
    .unwrap();
    let files = vec!["package.json".to_string()];
    let cwd = sub.to_str().unwrap();
    let Found::Recipes(found) = find(
        &lookup(Format::PackageJson, &files, cwd),
        &mut Reader::default(),
    ) else {
        panic!("found upward");
    };
    assert_eq!(found.dir, root.path().to_str().unwrap());
    assert_eq!(
        found.shown,
        root.path().join("package.json").to_str().unwrap()
    );
    // Not upward: nothing there.
    let flat = Lookup {
        upward: false,
        ..lookup(Format::PackageJson, &files, cwd)
    };
    assert_eq!(find(&flat, &mut Reader::default()), Found::Absent);

    // Huge, a FIFO, a device, a file that does not parse: unreadable, never empty.
    let hostile = tempfile::tempdir().unwrap();
    let dir = hostile.path().to_str().unwrap();
    std::fs::write(hostile.path().join("huge.json"), vec![b' '; 300 * 1024]).unwrap();
    std::fs::write(hostile.path().join("broken.json"), "{\"scripts\": {").unwrap();
    let fifo = std::ffi::CString::new(format!("{dir}/fifo.json")).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let started = std::time::Instant::now();
    for file in ["huge.json", "broken.json", "fifo.json", "/dev/zero"] {
        let named = Lookup {
            file: Some(file),
            ..lookup(Format::PackageJson, &files, dir)
        };
        assert!(
            matches!(find(&named, &mut Reader::default()), Found::Unreadable(_)),
            "{file}"
        );
    }
    // Answered without waiting on the FIFO's writer or reading the device.
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn a_noxfile_call_whose_argument_starts_with_a_wide_character_is_read() {
    let nox = nox::parse(
        "@nox.session\ndef t(session):\n    session.run(é)\n    session.run(\"ssh\", \"atlas\")\n",
    )
    .unwrap();
    assert_eq!(
        shell(&nox, "t"),
        [
            code(crate::shell::UNKNOWN.encode_utf8(&mut [0; 4])),
            code("ssh atlas")
        ],
        "{nox:?}"
    );
}
