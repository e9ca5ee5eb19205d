use super::*;
use crate::ondisk::ssh::tests_memory::Memory;

fn known(name: &str) -> Option<Value> {
    Some(Value::Known(name.into()))
}

#[test]
fn services_and_their_container_names_are_read() {
    let text = "\
# a project
name: shop
x-common:
  restart: always
services:
  redis:
    image: redis:7 # pinned
    ports:
    - \"6379:6379\"
    command: |
      redis-server
      container_name: not-this-one
  web:
    container_name: \"shop-web\"
    environment: [A=1, B=2]
  db:
    container_name: ${DB_NAME:-postgres}
volumes:
  data:
";
    let services = read_services(text).unwrap();
    assert_eq!(services.get("redis"), Some(&None));
    assert_eq!(services.get("web"), Some(&known("shop-web")));
    assert_eq!(services.get("db"), Some(&Some(Value::Unknown)));
    assert_eq!(services.get("data"), None);
}

#[test]
fn hostile_input_is_malformed_never_guessed() {
    let cases = [
        // Anchors, aliases and merge keys can give a service another's container_name.
        "x-c: &c\n  container_name: redis\nservices:\n  cache:\n    <<: *c\n",
        "services:\n  cache: *c\n",
        "services:\n  cache:\n    container_name: *name\n",
        "services:\n  cache: &c\n    image: x\n",
        // Flow style at the levels read.
        "services: {cache: {container_name: redis}}\n",
        "services:\n  cache: {container_name: redis}\n",
        "services:\n  cache:\n    environment: {\n    container_name: redis\n    }\n",
        // Tabs.
        "services:\n\tcache:\n\t\timage: x\n",
        "services:\n  cache:\n    container_name:\tredis\n",
        // Tags, several documents, directives, includes, complex keys.
        "services:\n  cache:\n    container_name: !reset null\n",
        "services:\n  cache:\n    image: x\n---\nservices:\n  other:\n    image: y\n",
        "%YAML 1.2\n---\nservices:\n  cache:\n    image: x\n",
        "include:\n  - other.yaml\nservices:\n  cache:\n    image: x\n",
        "services:\n  ? cache\n  : image: x\n",
        // Twice the same service, or the same key twice.
        "services:\n  cache:\n    image: x\n  cache:\n    image: y\n",
        "services:\n  cache:\n    image: x\nservices:\n  other:\n    image: y\n",
        "services:\n  cache:\n    container_name: a\n    container_name: b\n",
        // A block scalar's value is on the lines below.
        "services:\n  cache:\n    container_name: >-\n      redis\n",
        "services:\n  cache:\n    container_name: |\n      redis\n",
        // A quoted value running over lines; escapes.
        "services:\n  cache:\n    container_name: \"red\n      is\"\n",
        "services:\n  cache:\n    container_name: \"re\\x64is\"\n",
        // Odd indentation.
        "services:\n    cache:\n      image: x\n  other:\n    image: y\n",
        "services:\n  cache:\n      image: x\n    container_name: redis\n",
        "services:\n  cache:\n    image: x\n   container_name: redis\n",
        // Keys it does not read as names.
        "services:\n  \"ca che\":\n    image: x\n",
        "services:\n  cache: null\n",
        "- services\n",
    ];
    for text in cases {
        assert_eq!(read_services(text), Err(Malformed), "{text:?}");
    }
}

#[test]
fn huge_and_deep_input_ends_quickly() {
    let mut deep = String::from("services:\n  cache:\n    labels:\n");
    for depth in 0..5_000 {
        deep.push_str(&" ".repeat(6 + depth));
        deep.push_str("a:\n");
    }
    // Nesting below the levels read is skipped, whatever its depth.
    assert_eq!(read_services(&deep).unwrap().get("cache"), Some(&None));
    let long = "services:\n  cache:\n    image: x\n".to_string() + &"# c\n".repeat(MAX_LINES);
    assert_eq!(read_services(&long), Err(Malformed));
    let wide = format!("services:\n  cache:\n    image: {}\n", "x".repeat(200_000));
    assert_eq!(read_services(&wide).unwrap().len(), 1);
}

fn memory(files: &[(&str, &str)]) -> Memory {
    let mut memory = Memory::default();
    for (path, text) in files {
        memory.files.insert(path.to_string(), text.to_string());
    }
    memory
}

fn query(cwd: &str) -> Query {
    Query {
        cwd: cwd.into(),
        ..Query::default()
    }
}

const NO_ENV: Env = &|_| None;

#[test]
fn the_project_is_found_upward_with_its_overrides() {
    let mut files = memory(&[
        ("/p/compose.yaml", "services:\n  redis:\n    image: r\n"),
        (
            "/p/compose.override.yml",
            "services:\n  redis:\n    container_name: redis\n",
        ),
    ]);
    let Project::Known(services) = project(&query("/p/src/app"), NO_ENV, &mut files) else {
        panic!("known");
    };
    assert_eq!(services["redis"], vec![Value::Known("redis".into())]);
    // No compose file anywhere: a project with no services.
    let mut none = memory(&[]);
    assert_eq!(
        project(&query("/q/r"), NO_ENV, &mut none),
        Project::Known(Services::new())
    );
}

#[test]
fn what_compose_might_read_otherwise_is_unknown() {
    let both = [
        ("/p/compose.yaml", "services:\n  a:\n    image: r\n"),
        ("/p/docker-compose.yml", "services:\n  a:\n    image: r\n"),
    ];
    assert_eq!(
        project(&query("/p"), NO_ENV, &mut memory(&both)),
        Project::Unknown
    );
    let env_sets = [
        ("/p/compose.yaml", "services:\n  a:\n    image: r\n"),
        ("/p/.env", "COMPOSE_FILE=prod.yaml\n"),
    ];
    assert_eq!(
        project(&query("/p"), NO_ENV, &mut memory(&env_sets)),
        Project::Unknown
    );
    let other_client = [("/p/src/podman-compose.yml", "services: {}\n")];
    assert_eq!(
        project(&query("/p/src"), NO_ENV, &mut memory(&other_client)),
        Project::Unknown
    );
    let unreadable = [("/p/compose.yaml", "<unreadable>")];
    assert_eq!(
        project(&query("/p"), NO_ENV, &mut memory(&unreadable)),
        Project::Unknown
    );
    let stdin = Query {
        files: vec!["-".into()],
        ..query("/p")
    };
    assert_eq!(project(&stdin, NO_ENV, &mut memory(&[])), Project::Unknown);
}

#[test]
fn files_given_replace_the_lookup() {
    let files = [
        ("/p/compose.yaml", "services:\n  a:\n    image: r\n"),
        ("/p/deploy/prod.yaml", "services:\n  b:\n    image: r\n"),
    ];
    let given = Query {
        files: vec!["deploy/prod.yaml".into()],
        ..query("/p")
    };
    let Project::Known(services) = project(&given, NO_ENV, &mut memory(&files)) else {
        panic!("known");
    };
    assert_eq!(services.keys().collect::<Vec<_>>(), ["b"]);
    let env: Env = &|name| (name == "COMPOSE_FILE").then(|| "deploy/prod.yaml".to_string());
    let Project::Known(services) = project(&query("/p"), env, &mut memory(&files)) else {
        panic!("known");
    };
    assert_eq!(services.keys().collect::<Vec<_>>(), ["b"]);
    // A file that is not there: compose stops; nothing is known of it.
    let missing = Query {
        files: vec!["none.yaml".into()],
        ..query("/p")
    };
    assert_eq!(
        project(&missing, NO_ENV, &mut memory(&files)),
        Project::Unknown
    );
}
