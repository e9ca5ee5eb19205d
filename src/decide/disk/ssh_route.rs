//! Where an ssh connection goes through ssh's own configuration: the ssh clients'
//! destinations, and git's over its ssh transport (`GIT_SSH_COMMAND='ssh -F x'`).

use crate::decide::*;
use crate::ondisk::Value;

/// The ssh clients whose destination goes through ssh's configuration.
const SSH_CLIENTS: [&str; 6] = ["ssh", "scp", "sftp", "rsync", "autossh", "mosh"];

impl Guard<'_> {
    /// `ssh ci`: the hosts ssh's configuration sends the destination to (`HostName`,
    /// `ProxyJump`), each a candidate of its own; a `ProxyCommand` is walked as a command.
    pub(in crate::decide) fn ssh_config(
        &self,
        role: Role,
        value: &str,
        cx: &Context,
        walk: &mut Walk,
    ) {
        let Some(disk) = self.world.disk.clone() else {
            return;
        };
        let words = &cx.command.words;
        let program = words.first().map(|p| base_name(p)).unwrap_or("");
        // `args`: the words ssh is given (`None`: a transport whose options cannot be known).
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
            let args = match program {
                // Their own options are not ssh's (`rsync -F` is a filter): ssh's come from
                // the remote shell they run (`-e 'ssh -F x'`, `RSYNC_RSH`, `--ssh=`).
                "rsync" | "mosh" => self.remote_shell_args(program, cx, walk),
                _ => Some(words[1..].to_vec()),
            };
            (args, destination.to_string(), false)
        };
        let unknown_transport = args.is_none();
        let ssh = ssh_options(&args.unwrap_or_default(), self.ssh_short_values(program));
        let destination = destination.as_str();
        let mut options = ssh.options;
        options.extend(ssh.jumps.into_iter().map(|j| format!("ProxyJump {j}")));
        let given = ssh.config.map(|f| self.world.expand_tilde(&f));
        // git runs its transport from the top of the work tree, not from here: what a
        // relative `-F` file says is only what the host may be; and a transport whose
        // options are not known may send the host anywhere the default would, or elsewhere.
        let elsewhere =
            unknown_transport || (git && given.as_deref().is_some_and(|f| !f.starts_with('/')));
        let config = given.map(|f| {
            self.world
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
        // `Host forge` with `User git`: ssh logs in as git, as `git@forge` says (the forge's
        // account rule counts it); `user@` and `-l` on the command line win over it.
        let configured = match (user, &cx.user, &route.user) {
            (None, None, Some(configured)) if !git && is_known(configured) => {
                Some(configured.clone())
            }
            _ => None,
        };
        if let Some(configured) = &configured
            && let Some(typed_candidate) = walk.candidates.last_mut()
            && typed_candidate.value == value
            && typed_candidate.user.is_none()
        {
            typed_candidate.user = Some(configured.clone());
        }
        // An unknown host the configuration may make one of these words: they flow in.
        if route.hosts.contains(&Value::Unknown) {
            walk.flows.extend(route.possible);
        }
        // The hosts are the jumps, then the destination: a jump only passes the connection on.
        let destination_at = route.hosts.len().saturating_sub(1);
        for (at, host) in route.hosts.into_iter().enumerate() {
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
                user: if at == destination_at {
                    configured.clone().or_else(|| cx.user.clone())
                } else {
                    cx.user.clone()
                },
                command_written: cx.command.written.clone(),
                carried: cx.carried.clone(),
                speculative: walk.speculative > 0,
                route: at < destination_at,
                runners: walk.runners.clone(),
                read_from: walk.reading.last().cloned(),
            });
        }
        for source in route.commands {
            self.proxy_command(&source, cx, walk);
        }
    }

    /// A `ProxyCommand` is the way to the destination, not where the command runs: the
    /// machines it reaches are hops of the outer command, as `-J` ones are (`ssh -o
    /// ProxyCommand='ssh -W %h:%p gate' worker` reaches `worker` through `gate`), so the
    /// destination is refused first, for its tools, and a hop to elsewhere is a jump.
    pub(in crate::decide) fn proxy_command(&self, source: &str, cx: &Context, walk: &mut Walk) {
        let before = walk.candidates.len();
        self.payload(source, cx.command.depth + 1, &[], walk);
        for c in &mut walk.candidates[before..] {
            c.route = true;
            if c.role == Role::Host {
                c.command.clone_from(&cx.command.words);
                c.command_written.clone_from(&cx.command.written);
                c.shape = cx.shape.join(" ");
            }
        }
    }
}

impl Guard<'_> {
    /// git over ssh (`git fetch box:/srv/app.git`): the arguments its transport gives ssh
    /// (`GIT_SSH_COMMAND='ssh -F x'` or `-c core.sshCommand=…`, none for plain `ssh`; `None`
    /// for a transport whose options are not known to be ssh's) and the destination; `None`
    /// when git uses no ssh.
    fn git_ssh(
        &self,
        value: &str,
        cx: &Context,
        walk: &Walk,
    ) -> Option<(Option<Vec<String>>, String)> {
        let target::GitUrl::Remote(url) = target::git_url(value) else {
            return None;
        };
        let destination = target::ssh_destination(Role::HostPath, &url)?.to_string();
        let words = &cx.command.words;
        // `-c core.sshCommand=…` wins over the environment, as in git.
        let configured = words.windows(2).rev().find_map(|pair| {
            let (flag, setting) = (&pair[0], &pair[1]);
            let (key, command) = setting.split_once('=')?;
            (flag == "-c" && key.eq_ignore_ascii_case("core.sshcommand")).then_some(command)
        });
        let mentions_ssh_command = words
            .iter()
            .any(|w| w.to_ascii_lowercase().contains("core.sshcommand"));
        let args = match configured.or_else(|| {
            walk.env_values(cx.command, "GIT_SSH_COMMAND")
                .next()
                .map(String::as_str)
        }) {
            // git runs it with the shell, the destination after it.
            Some(source) => self.ssh_command_args(source, cx),
            None if mentions_ssh_command => None,
            None if walk.env_values(cx.command, "GIT_SSH").next().is_some() => None,
            None => Some(vec![]),
        };
        Some((args, destination))
    }

    /// The remote shell's ssh words for `rsync` (`-e`/`--rsh`, else `RSYNC_RSH`) or `mosh`
    /// (`--ssh`): none when it runs plain ssh, `None` when what it runs cannot be known.
    fn remote_shell_args(&self, program: &str, cx: &Context, walk: &Walk) -> Option<Vec<String>> {
        let args = &cx.command.words[1..];
        let given = match program {
            // rsync keeps the last of `-e` and `--rsh`, wherever each is.
            "rsync" => last_value(args, 'e', "--rsh", self.ssh_short_values(program))
                .or_else(|| walk.env_values(cx.command, "RSYNC_RSH").next().cloned()),
            _ => option_values(args, &["--ssh".into()]).pop(),
        };
        match given {
            Some(source) => self.ssh_command_args(&source, cx),
            None => Some(vec![]),
        }
    }

    /// The arguments of a command line that runs ssh (`ssh -F x -o …`); `None` when it runs
    /// something else, several commands, or words that cannot be known.
    fn ssh_command_args(&self, source: &str, cx: &Context) -> Option<Vec<String>> {
        let script = shell::parse(source, cx.command.depth + 1, &HashMap::new()).ok()?;
        let [command] = script.commands.as_slice() else {
            return None;
        };
        let (program, args) = command.words.split_first()?;
        if base_name(program) != "ssh" || !command.words.iter().all(|w| is_known(w)) {
            return None;
        }
        Some(args.to_vec())
    }

    /// The short options of `program` that take a value (ssh's for the ssh transports).
    fn ssh_short_values(&self, program: &str) -> &str {
        let name = if matches!(program, "git" | "mosh") {
            "ssh"
        } else {
            program
        };
        self.rules
            .program(name)
            .map_or("", |p| p.syntax.short_value.as_str())
    }
}

/// What an ssh command line says of its configuration: `-o` options, `-J` jumps and the
/// last `-F` file.
struct SshOptions {
    options: Vec<String>,
    jumps: Vec<String>,
    config: Option<String>,
}

/// Reads ssh's `-o`, `-J` and `-F` as getopt does: apart (`-F x`), joined (`-Fx`), at the
/// end of a bundle of flags (`-4Fx`), and `--` ends the options. `takes_value` lists the
/// program's short options that take a value, so the rest of a word after one is its value.
fn ssh_options(args: &[String], takes_value: &str) -> SshOptions {
    let values = |letter| short_values(args, letter, takes_value);
    SshOptions {
        options: values('o'),
        jumps: values('J'),
        // ssh keeps the last `-F`.
        config: values('F').pop(),
    }
}

/// Every value of the short option `letter` in `args`, read as getopt reads a bundle.
fn short_values(args: &[String], letter: char, takes_value: &str) -> Vec<String> {
    values_at(args, letter, None, takes_value)
        .into_iter()
        .map(|(_, value)| value)
        .collect()
}

/// The value of the option given last, as the short `letter` or the `long` spelling.
fn last_value(args: &[String], letter: char, long: &str, takes_value: &str) -> Option<String> {
    values_at(args, letter, Some(long), takes_value)
        .pop()
        .map(|(_, value)| value)
}

/// Each value of the option `letter` (and `long`, `--long X` or `--long=X`) with the index of
/// the word it starts in, in order, read as getopt reads them; `--` ends the options.
fn values_at(
    args: &[String],
    letter: char,
    long: Option<&str>,
    takes_value: &str,
) -> Vec<(usize, String)> {
    let mut values = Vec::new();
    let mut words = args.iter().enumerate();
    while let Some((at, word)) = words.next() {
        if word == "--" {
            break;
        }
        if let Some(long) = long.filter(|l| word.starts_with(l)) {
            match &word[long.len()..] {
                "" => values.extend(words.next().map(|(_, v)| (at, v.clone()))),
                rest => values.extend(rest.strip_prefix('=').map(|v| (at, v.to_string()))),
            }
            continue;
        }
        let Some(flags) = word.strip_prefix('-').filter(|f| !f.starts_with('-')) else {
            continue;
        };
        for (i, c) in flags.char_indices() {
            if c == letter || takes_value.contains(c) {
                let rest = &flags[i + c.len_utf8()..];
                let value = if rest.is_empty() {
                    words.next().map(|(_, v)| v.clone())
                } else {
                    Some(rest.to_string())
                };
                if c == letter {
                    values.extend(value.map(|v| (at, v)));
                }
                break;
            }
        }
    }
    values
}
