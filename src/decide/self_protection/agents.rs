//! Self-protection: an agent CLI started, or its plugins changed, so the guard would not run.

use crate::argv::base_name;
use crate::decide::{Guard, Walk, Why, option_values};
use crate::protect::GUARD_VARIABLES;
use crate::shell::{Command, UNKNOWN};
impl Guard<'_> {
    /// An agent CLI started, or its plugins changed, so that the guard would not run.
    pub(in crate::decide) fn agent_without_guard(
        &self,
        command: &Command,
        walk: &Walk,
    ) -> Option<Why> {
        let (agent, args) = self.agent_in(&command.words)?;
        if let Some(open) = args.iter().position(|a| agent.plugin_commands.contains(a))
            && args[open..].iter().any(|a| agent.plugin_off.contains(a))
            && args[open..].iter().any(|a| {
                a.starts_with("mesh-guard") || a.contains(UNKNOWN) || a == "--all" || a == "-a"
            })
        {
            return Some(Why::PluginOff);
        }
        // `claude config set …`, `copilot config KEY VALUE`: the agent's own command rewrites
        // the settings that hold the guard's hooks, as writing the file would.
        if agent
            .settings_commands
            .iter()
            .any(|shape| runs_shape(shape, args))
        {
            return Some(Why::ChangesGuardFiles);
        }
        let scoped = walk.scopes.last();
        let set_to = |name: &str| -> Vec<String> {
            let own = command
                .env
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, v)| v.clone());
            let script = scoped
                .and_then(|s| s.get(name))
                .into_iter()
                .flatten()
                .cloned();
            own.chain(script).collect()
        };
        for name in GUARD_VARIABLES {
            if !set_to(name).is_empty() {
                return Some(Why::AgentVariable(name.to_string()));
            }
        }
        for name in &agent.config_env {
            let current = self.world.env(name);
            if set_to(name).iter().any(|v| Some(v) != current.as_ref()) {
                return Some(Why::AgentConfigMoved(name.to_string()));
            }
        }
        for value in option_values(args, &agent.settings_options) {
            if self.world.settings_disable_guard(
                &self.world.expand_tilde(&value),
                walk.cwd.as_deref().or(self.world.cwd.as_deref()),
            ) {
                return Some(Why::AgentSettingsOff);
            }
        }
        for value in option_values(args, &agent.setting_sources_options) {
            let given: Vec<&str> = value.split(',').map(str::trim).collect();
            if value.contains(UNKNOWN)
                || self
                    .world
                    .guard_setting_sources()
                    .iter()
                    .any(|s| !given.contains(s))
            {
                return Some(Why::AgentWithoutSettings);
            }
        }
        for value in option_values(args, &agent.config_options) {
            let key = value
                .split('=')
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            if key.contains("hook") || key.contains(UNKNOWN) {
                return Some(Why::AgentHooksAway);
            }
        }
        None
    }

    /// The agent CLI a command runs, and its arguments: by its own name, or through a
    /// launcher or interpreter (`npx @anthropic-ai/claude-code`, `node …/claude-code/cli.js`).
    pub(in crate::decide) fn agent_in<'w>(
        &self,
        words: &'w [String],
    ) -> Option<(&crate::rules::Agent, &'w [String])> {
        // `@anthropic-ai/claude-code@2`, `…/node_modules/@anthropic-ai/claude-code/cli.js`.
        let named = |word: &str| {
            self.rules.agent(strip_version(word)).or_else(|| {
                word.split('/')
                    .find_map(|part| self.rules.agent(strip_version(part)))
            })
        };
        let first = words.first()?;
        if let Some(agent) = self.rules.agent(strip_version(base_name(first))) {
            return Some((agent, &words[1..]));
        }
        self.rules.interpreter(base_name(first))?;
        let at = words[1..].iter().position(|w| !w.starts_with('-'))? + 1;
        named(&words[at]).map(|agent| (agent, &words[at + 1..]))
    }

    pub(in crate::decide) fn mentions_guarded_program(&self, text: &str) -> bool {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
            .any(|token| self.rules.is_guarded(token))
    }
}

/// `claude-code@2.1.0` → `claude-code` (a package's version; a scope's `@` stays).
pub(in crate::decide) fn strip_version(word: &str) -> &str {
    match word.rfind('@') {
        Some(at) if at > 0 => &word[..at],
        _ => word,
    }
}

/// Whether `args` run the subcommand `shape` spells: its words in order, `*` any operand, a
/// word with a dash that option; other options between them are passed over.
fn runs_shape(shape: &str, args: &[String]) -> bool {
    let mut wanted = shape.split_whitespace().peekable();
    for arg in args {
        let Some(want) = wanted.peek() else {
            break;
        };
        if arg == want || (*want == "*" && !arg.starts_with('-')) {
            wanted.next();
        } else if !arg.starts_with('-') {
            return false;
        }
    }
    wanted.peek().is_none()
}
