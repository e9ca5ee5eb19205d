use super::*;

fn recipes(text: &str) -> Vec<(String, Vec<String>)> {
    parse(text).recipes
}

fn rule(targets: &str, lines: &[&str]) -> (String, Vec<String>) {
    (
        targets.into(),
        lines.iter().map(|l| l.to_string()).collect(),
    )
}

#[test]
fn recipes_of_every_target_with_prefixes_stripped() {
    let text = ".PHONY: build test\nbuild:\n\t@cargo build\n\t-rm -f x\n\t+@ make -C sub\ntest: build ; cargo test\n";
    assert_eq!(
        recipes(text),
        [
            rule(".PHONY", &[]),
            rule("build", &["cargo build", "rm -f x", "make -C sub"]),
            rule("test", &["cargo test"]),
        ]
    );
}

#[test]
fn continuations_stay_one_line() {
    let text = "push:\n\tscp a \\\n\t  web:/srv/ && \\\n\tssh web true\n\techo done\n";
    assert_eq!(
        recipes(text)[0].1,
        ["scp a \\\n  web:/srv/ && \\\nssh web true", "echo done"]
    );
    assert_eq!(
        recipes("X = a \\\n b\nall:\n\tls\n")[0],
        rule("all", &["ls"])
    );
}

#[test]
fn variables_stay_as_written_and_assignments_are_not_rules() {
    let text = "HOST := web\nDEST ?= $(HOST):/srv\nall:\n\tssh $(HOST) ${DEST} $$HOME\n";
    assert_eq!(
        recipes(text),
        [rule("all", &["ssh $(HOST) ${DEST} $$HOME"])]
    );
}

#[test]
fn code_run_while_reading_is_returned() {
    let text =
        "V := $(shell ssh db cat /etc/version)\nW != ssh cache hostname\nX = ${shell echo (a)}\n";
    assert_eq!(
        parse(text).parse_time,
        ["ssh db cat /etc/version", "ssh cache hostname", "echo (a)"]
    );
}

#[test]
fn tab_lines_outside_a_rule_and_comments_are_not_recipes() {
    let text =
        "# all:\n\tssh nowhere\nall:\n\t# a comment the shell sees\n\n\tls\nX = 1\n\tssh stray\n";
    assert_eq!(
        recipes(text),
        [rule("all", &["# a comment the shell sees", "ls"])]
    );
}

#[test]
fn what_hides_commands_makes_it_incomplete() {
    assert!(parse("all:\n\tls\n").complete);
    let with_include = parse("include rules.mk\nall:\n\tls\n");
    assert!(!with_include.complete);
    assert_eq!(with_include.includes, ["rules.mk"]);
    let with_define = parse("define RUN\nssh db\nendef\nall:\n\t$(RUN)\n");
    assert!(!with_define.complete);
    assert_eq!(with_define.recipes, [rule("all", &["$(RUN)"])]);
    assert!(!parse(".RECIPEPREFIX = >\nall:\n> ssh db\n").complete);
}

#[test]
fn conditionals_keep_both_branches() {
    let text = "all:\nifeq ($(X),1)\n\tssh a\nelse\n\tssh b\nendif\n";
    let found = recipes(text);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1, ["ssh a", "ssh b"]);
}

#[test]
fn the_shell_and_one_shell_are_reported() {
    let text =
        "SHELL := /usr/bin/python3\noverride .SHELLFLAGS = -c\n.ONESHELL:\nall:\n\tprint(1)\n";
    let makefile = parse(text);
    assert_eq!(makefile.shell, ["/usr/bin/python3", "-c"]);
    assert!(makefile.one_shell);
    assert!(!parse("all:\n\tls\n").one_shell);
}

#[test]
fn a_dry_run_still_runs_plus_lines_and_recursive_makes() {
    let text = "push: ; +ssh a\n\tssh b\n\t@+ssh c\n\t$(MAKE) -C sub\nother:\n\tssh d\n";
    let makefile = parse(text);
    assert_eq!(makefile.dry_run.len(), makefile.recipes.len());
    assert_eq!(makefile.dry_run[0], ["ssh a", "ssh c", "$(MAKE) -C sub"]);
    assert!(makefile.dry_run[1].is_empty());
}
