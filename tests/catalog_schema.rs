//! docs/catalog.schema.json describes the catalog: the example catalog validates against
//! it, and mistakes the guard rejects are rejected by it too. The validator below knows
//! the JSON Schema keywords the schema uses, and fails on any other, so that a keyword
//! added to the schema cannot be silently ignored here.

use serde_json::{Map, Value};
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn schema() -> Value {
    let text = std::fs::read_to_string(root().join("docs/catalog.schema.json")).unwrap();
    serde_json::from_str(&text).expect("the schema is JSON")
}

fn catalog_json(toml_text: &str) -> Value {
    toml::from_str::<Value>(toml_text).expect("TOML")
}

/// The errors of `value` against `schema` ("/machine/0/name: ..."), empty when valid.
fn validate(root: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    let schema = schema.as_object().expect("a schema is an object");
    for (keyword, rule) in schema {
        match keyword.as_str() {
            "$schema" | "$id" | "title" | "description" | "$defs" => {}
            "$ref" => {
                let name = rule
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/$defs/"))
                    .expect("only local #/$defs/ references");
                validate(root, &root["$defs"][name], value, at, errors);
            }
            "type" => {
                let ok = match rule.as_str().unwrap() {
                    "object" => value.is_object(),
                    "array" => value.is_array(),
                    "string" => value.is_string(),
                    "integer" => value.is_i64() || value.is_u64(),
                    other => panic!("type {other} is not used by the catalog schema"),
                };
                if !ok {
                    errors.push(format!("{at}: not of type {rule}"));
                }
            }
            "const" => {
                if value != rule {
                    errors.push(format!("{at}: must be {rule}"));
                }
            }
            "minLength" => {
                if let Some(s) = value.as_str()
                    && (s.chars().count() as u64) < rule.as_u64().unwrap()
                {
                    errors.push(format!("{at}: shorter than {rule}"));
                }
            }
            "pattern" => {
                let re = regex::Regex::new(rule.as_str().unwrap()).unwrap();
                if let Some(s) = value.as_str()
                    && !re.is_match(s)
                {
                    errors.push(format!("{at}: `{s}` does not match {rule}"));
                }
            }
            "required" => {
                if let Some(object) = value.as_object() {
                    for key in rule.as_array().unwrap() {
                        if !object.contains_key(key.as_str().unwrap()) {
                            errors.push(format!("{at}: lacks {key}"));
                        }
                    }
                }
            }
            "properties" => {
                if let Some(object) = value.as_object() {
                    for (key, sub) in rule.as_object().unwrap() {
                        if let Some(v) = object.get(key) {
                            validate(root, sub, v, &format!("{at}/{key}"), errors);
                        }
                    }
                }
            }
            "additionalProperties" => {
                assert_eq!(
                    rule,
                    &Value::Bool(false),
                    "only additionalProperties: false"
                );
                let known = schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_else(Map::new);
                if let Some(object) = value.as_object() {
                    for key in object.keys().filter(|k| !known.contains_key(*k)) {
                        errors.push(format!("{at}: unknown key `{key}`"));
                    }
                }
            }
            "items" => {
                if let Some(items) = value.as_array() {
                    for (i, item) in items.iter().enumerate() {
                        validate(root, rule, item, &format!("{at}/{i}"), errors);
                    }
                }
            }
            other => panic!("the schema uses `{other}`, which this test's validator does not know"),
        }
    }
}

fn errors_of(toml_text: &str) -> Vec<String> {
    let schema = schema();
    let mut errors = Vec::new();
    validate(&schema, &schema, &catalog_json(toml_text), "", &mut errors);
    errors
}

#[test]
fn the_example_catalog_validates() {
    let text = std::fs::read_to_string(root().join("examples/catalog.toml")).unwrap();
    assert_eq!(errors_of(&text), Vec::<String>::new());
}

#[test]
fn the_optional_record_table_validates() {
    for syslog in [
        "none",
        "unix:/dev/log",
        "udp://logs.example:514",
        "tcp://10.0.0.1:6514",
    ] {
        let text = format!("version = 1\n[record]\nsyslog = \"{syslog}\"\n");
        assert_eq!(errors_of(&text), Vec::<String>::new(), "{syslog}");
    }
    assert_eq!(
        errors_of("version = 1\n[record]\nsyslog = \"journald\"\n"),
        vec![
            "/record/syslog: `journald` does not match \"^(none|unix:.+|udp://[^/]+:[0-9]+|tcp://[^/]+:[0-9]+)$\""
        ]
    );
}

/// Report-only mode (decision 0060): `[mode]` and a module's `mode`.
#[test]
fn modes_validate() {
    let text = "version = 1\n[mode]\ndefault = \"report\"\nremote-access = \"enforce\"\n\
                [[module]]\nname = \"m\"\nmode = \"enforce\"\n";
    assert_eq!(errors_of(text), Vec::<String>::new());
}

/// `[mode]`'s keys in the schema are the guard's: `default` and the reportable rules, so an
/// editor accepts exactly what the guard does.
#[test]
fn the_schemas_mode_keys_are_the_reportable_rules() {
    let schema = schema();
    let mut keys: Vec<&str> = schema["properties"]["mode"]["properties"]
        .as_object()
        .expect("[mode] lists its keys")
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected: Vec<&str> = mesh_guard::rule::Rule::REPORTABLE.map(|r| r.id()).to_vec();
    expected.push("default");
    keys.sort_unstable();
    expected.sort_unstable();
    assert_eq!(keys, expected);
}

/// Machines named by scheme (issue 13, item 7): the unseen corpus's pattern catalog is
/// valid for the schema, and a pattern that is not a string is not.
#[test]
fn machine_patterns_validate() {
    let text =
        std::fs::read_to_string(root().join("tests/corpus/unseen/catalog-patterns.toml")).unwrap();
    assert_eq!(errors_of(&text), Vec::<String>::new());
    assert_ne!(
        errors_of("version = 1\n[[machine]]\nname = \"n\"\npattern = 3\n"),
        Vec::<String>::new()
    );
}

/// The mistakes the guard rejects, rejected by the schema too (an editor flags them).
#[test]
fn mistakes_are_rejected() {
    let cases: &[(&str, &str)] = &[
        ("version = 2\n", "/version: must be 1"),
        (
            "version = 1\nforge = \"forge\"\n",
            "/forge: not of type \"object\"",
        ),
        (
            "version = 1\n[forge]\nmachine = \"forge\"\n",
            "/forge: lacks \"git_user\"",
        ),
        (
            "version = 1\n[[machine]]\nname = \"a\"\nalias = [\"b\"]\n",
            "/machine/0: unknown key `alias`",
        ),
        (
            "version = 1\n[[machine]]\naliases = [\"b\"]\n",
            "/machine/0: lacks \"name\"",
        ),
        (
            "version = 1\n[[module]]\nname = \"m\"\n[[module.tool]]\nname = \"t\"\n",
            "/module/0/tool/0: lacks \"usage\"",
        ),
        (
            "version = 1\n[[verb]]\nname = \"v\"\nusage = \"u\"\nreplaces = \"ssh\"\n",
            "/verb/0/replaces: not of type \"array\"",
        ),
        (
            "version = 1\n[mesh]\nnetworks = [\"atlas\"]\n",
            "/mesh/networks/0: `atlas` does not match \"^[0-9A-Fa-f:.]+/[0-9]{1,3}$\"",
        ),
        ("version = 1\nmachines = []\n", ": unknown key `machines`"),
        (
            "version = 1\n[mode]\nself-protection = \"report\"\n",
            "/mode: unknown key `self-protection`",
        ),
        (
            "version = 1\n[[module]]\nname = \"m\"\nmode = \"off\"\n",
            "/module/0/mode: `off` does not match \"^(enforce|report)$\"",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(errors_of(text), vec![want.to_string()], "{text}");
    }
}
