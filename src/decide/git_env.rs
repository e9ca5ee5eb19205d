//! git's `-c` settings given through its environment rather than its command line:
//! `GIT_CONFIG_PARAMETERS`, and `GIT_CONFIG_COUNT` with its numbered keys and values. Each
//! setting is read as `-c NAME=VALUE` is (a command git runs, a remote's URL).

use super::{Context, Guard, Walk};
use crate::rules::Role;
use crate::shell::UNKNOWN;

impl Guard<'_> {
    pub(super) fn git_settings_from_env(
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
            numbered(value, cx, walk)
        };
        for setting in settings {
            self.candidate(Role::GitConfig, setting, cx, shape.to_string(), walk);
        }
    }
}

/// `NAME=VALUE` for each `GIT_CONFIG_KEY_<i>`/`GIT_CONFIG_VALUE_<i>` git reads under
/// `GIT_CONFIG_COUNT=count`: the first `count`. Only those the command sets can name
/// anything, so they are the ones looked at; a count that cannot be known may reach them all.
fn numbered(count: &str, cx: &Context, walk: &Walk) -> Vec<String> {
    let count = if count.contains(UNKNOWN) {
        u64::MAX
    } else {
        count.trim().parse::<u64>().unwrap_or(0)
    };
    let mut numbers: Vec<&str> = cx
        .command
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
        |name: String| -> Vec<String> { walk.env_values(cx.command, &name).cloned().collect() };
    let mut settings = Vec::new();
    for i in numbers {
        let keys = values(format!("GIT_CONFIG_KEY_{i}"));
        for value in values(format!("GIT_CONFIG_VALUE_{i}")) {
            settings.extend(keys.iter().map(|key| format!("{key}={value}")));
        }
    }
    settings
}
