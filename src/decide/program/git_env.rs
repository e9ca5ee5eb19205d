//! git's `-c` settings given through its environment rather than its command line:
//! `GIT_CONFIG_PARAMETERS`, and `GIT_CONFIG_COUNT` with its numbered keys and values. Each
//! setting is read as `-c NAME=VALUE` is (a command git runs, a remote's URL).

use crate::argv::base_name;
use crate::decide::{Context, Guard, Walk, target};
use crate::rules::Role;
use crate::shell::{Command, UNKNOWN};

impl Guard<'_> {
    /// Any program may run git (`npm install`, `make`, `cargo build`), and git reads these
    /// settings from the environment it inherits: a setting that makes git run a command
    /// (`core.sshCommand`) runs it for them too. git's own rules read them as its options.
    pub(in crate::decide) fn git_settings_for_any_program(
        &self,
        command: &Command,
        walk: &mut Walk,
    ) {
        let program = command.words.first().map_or("", |w| base_name(w));
        if walk.in_git_setting
            || self
                .rules
                .program(program)
                .is_some_and(|p| p.env.contains_key("GIT_CONFIG_PARAMETERS"))
        {
            return;
        }
        let mut settings: Vec<String> = walk
            .env_values(command, "GIT_CONFIG_PARAMETERS")
            .flat_map(|v| shell_words::split(v).unwrap_or_default())
            .collect();
        let counts: Vec<String> = walk
            .env_values(command, "GIT_CONFIG_COUNT")
            .cloned()
            .collect();
        for count in counts {
            settings.extend(numbered(&count, command, walk));
        }
        if settings.is_empty() {
            return;
        }
        let cx = Context {
            command,
            over: "git's ssh".into(),
            shape: vec!["git".into()],
            user: None,
            carried: Default::default(),
            elsewhere: false,
        };
        walk.in_git_setting = true;
        for setting in settings {
            match target::git_config(&setting) {
                target::GitConfig::Command(source) => {
                    self.payload(source, command.depth + 1, &[], walk);
                }
                target::GitConfig::Url(url) => {
                    let shape = "git <machine>".to_string();
                    self.candidate(Role::GitUrl, url.to_string(), &cx, shape, walk);
                }
                target::GitConfig::Nothing => {}
            }
        }
        walk.in_git_setting = false;
    }

    /// What `git config` stored earlier in the command line runs when git runs again: a
    /// later `git`, or a program no rule knows (a script, a build that may run git). A
    /// program the rules know otherwise (`echo`, `ssh`, a shell, a wrapper) runs no git
    /// setting; the shell and wrapper are followed to what they run.
    pub(in crate::decide) fn stored_git_commands(&self, command: &Command, walk: &mut Walk) {
        if walk.git_stored.is_empty() || walk.in_git_setting {
            return;
        }
        let program = command.words.first().map_or("", |w| base_name(w));
        let known = self.rules.program(program).is_some()
            || self.rules.arguments(program).is_some()
            || self.rules.shell(program).is_some()
            || self.rules.interpreter(program).is_some()
            || self.rules.wrapper(program).is_some();
        if program != "git" && known {
            return;
        }
        // Each runs once: walked again it would find nothing new.
        let stored = std::mem::take(&mut walk.git_stored);
        walk.in_git_setting = true;
        for (source, depth) in &stored {
            self.payload(source, *depth, &[], walk);
        }
        walk.in_git_setting = false;
    }

    pub(in crate::decide) fn git_settings_from_env(
        &self,
        role: Role,
        value: &str,
        cx: &Context,
        shape: &str,
        walk: &mut Walk,
    ) {
        let settings = if role == Role::GitConfigList {
            // Not shell-quoted as git writes it: git refuses it and runs nothing.
            shell_words::split(value).unwrap_or_default()
        } else {
            numbered(value, cx.command, walk)
        };
        for setting in settings {
            self.candidate(Role::GitConfig, setting, cx, shape.to_string(), walk);
        }
    }
}

/// `NAME=VALUE` for each `GIT_CONFIG_KEY_<i>`/`GIT_CONFIG_VALUE_<i>` git reads under
/// `GIT_CONFIG_COUNT=count`: the first `count`. Only those the command sets can name
/// anything, so they are the ones looked at; a count that cannot be known may reach them all.
fn numbered(count: &str, command: &Command, walk: &Walk) -> Vec<String> {
    let count = if count.contains(UNKNOWN) {
        u64::MAX
    } else {
        count.trim().parse::<u64>().unwrap_or(0)
    };
    let mut numbers: Vec<&str> = command
        .env
        .iter()
        .map(|(name, _)| name)
        .chain(walk.scopes.last().into_iter().flat_map(|s| s.keys()))
        .filter_map(|name| name.strip_prefix("GIT_CONFIG_KEY_"))
        .filter(|i| i.parse::<u64>().is_ok_and(|i| i < count))
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    let values =
        |name: String| -> Vec<String> { walk.env_values(command, &name).cloned().collect() };
    let mut settings = Vec::new();
    for i in numbers {
        let keys = values(format!("GIT_CONFIG_KEY_{i}"));
        for value in values(format!("GIT_CONFIG_VALUE_{i}")) {
            settings.extend(keys.iter().map(|key| format!("{key}={value}")));
        }
    }
    settings
}
