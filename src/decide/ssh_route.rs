//! Where an ssh connection goes through ssh's own configuration: the ssh clients'
//! destinations, and git's over its ssh transport (`GIT_SSH_COMMAND='ssh -F x'`).

use super::*;
use crate::ondisk::Value;

/// The ssh clients whose destination goes through ssh's configuration.
const SSH_CLIENTS: [&str; 6] = ["ssh", "scp", "sftp", "rsync", "autossh", "mosh"];

impl Guard<'_> {
    /// `ssh ci`: the hosts ssh's configuration sends the destination to (`HostName`,
    /// `ProxyJump`), each a candidate of its own; a `ProxyCommand` is walked as a command.
    pub(super) fn ssh_config(&self, role: Role, value: &str, cx: &Context, walk: &mut Walk) {
        let Some(disk) = self.protected.disk.clone() else {
            return;
        };
        let words = &cx.command.words;
        let program = words.first().map(|p| base_name(p)).unwrap_or("");
        let (args, destination, git) = if role == Role::GitUrl && program == "git" {
            let Some((args, destination)) = self.git_ssh(value, cx, walk) else {
                return;
            };
            (args, destination, true)
        } else {
            if !matches!(role, Role::Host | Role::HostPath)
                || !SSH_CLIENTS.contains(&program)
                || !is_known(value)
            {
                return;
            }
            let Some(destination) = target::ssh_destination(role, value) else {
                return;
            };
            (words[1..].to_vec(), destination.to_string(), false)
        };
        let (args, destination) = (&args[..], destination.as_str());
        let mut options = option_values(args, &["-o".into()]);
        options.extend(
            option_values(args, &["-J".into()])
                .into_iter()
                .map(|j| format!("ProxyJump {j}")),
        );
        let given = option_values(args, &["-F".into()])
            .pop()
            .map(|f| self.protected.expand_tilde(&f));
        // git runs its transport from the top of the work tree, not from here: what a
        // relative `-F` file says is only what the host may be.
        let elsewhere = git && given.as_deref().is_some_and(|f| !f.starts_with('/'));
        let config = given.map(|f| {
            self.protected
                .resolve(&f, walk.cwd.as_deref())
                .to_string_lossy()
                .into_owned()
        });
        let mut route = disk.ssh(destination, options, config);
        if elsewhere {
            let hosts = std::mem::replace(&mut route.hosts, vec![Value::Unknown]);
            route.possible.extend(
                hosts
                    .into_iter()
                    .filter_map(|h| h.known().map(String::from)),
            );
        }
        let (user, typed) = match destination.rsplit_once('@') {
            Some((user, host)) => (Some(user), host),
            None => (None, destination),
        };
        // An unknown host the configuration may make one of these words: they flow in.
        if route.hosts.contains(&Value::Unknown) {
            walk.flows.extend(route.possible);
        }
        for host in route.hosts {
            let value = match host {
                Value::Known(h) if h.eq_ignore_ascii_case(typed) => continue,
                Value::Known(h) => match user {
                    Some(user) => format!("{user}@{h}"),
                    None => h,
                },
                Value::Unknown => UNKNOWN.to_string(),
            };
            let shape = format!("{} <machine>", program);
            walk.candidates.push(Candidate {
                role: Role::Host,
                value,
                command: cx.command.words.clone(),
                over: cx.over.clone(),
                shape,
                user: cx.user.clone(),
                command_written: cx.command.written.clone(),
                carried: cx.carried.clone(),
                speculative: walk.speculative > 0,
                route: false,
            });
        }
        for source in route.commands {
            self.payload(&source, cx.command.depth + 1, &[], walk);
        }
    }
}

impl Guard<'_> {
    /// git over ssh (`git fetch box:/srv/app.git`): the arguments its transport gives ssh
    /// (`GIT_SSH_COMMAND='ssh -F x'`, none for plain `ssh`) and the destination; `None`
    /// when git uses no ssh, or a transport whose options are not known to be ssh's.
    fn git_ssh(&self, value: &str, cx: &Context, walk: &Walk) -> Option<(Vec<String>, String)> {
        let target::GitUrl::Remote(url) = target::git_url(value) else {
            return None;
        };
        let destination = target::ssh_destination(Role::HostPath, &url)?.to_string();
        if cx
            .command
            .words
            .iter()
            .any(|w| w.to_ascii_lowercase().starts_with("core.sshcommand"))
        {
            return None;
        }
        let args = match walk.env_values(cx.command, "GIT_SSH_COMMAND").next() {
            // git runs it with the shell, the destination after it.
            Some(source) => {
                let script = shell::parse(source, cx.command.depth + 1, &HashMap::new()).ok()?;
                let [command] = script.commands.as_slice() else {
                    return None;
                };
                let (program, args) = command.words.split_first()?;
                if base_name(program) != "ssh" || !command.words.iter().all(|w| is_known(w)) {
                    return None;
                }
                args.to_vec()
            }
            None if walk.env_values(cx.command, "GIT_SSH").next().is_some() => return None,
            None => vec![],
        };
        Some((args, destination))
    }
}
