//! What a word in a program's arguments is to the guard: a machine, a container, a unit, a
//! command to run there, ...

use serde::Deserialize;

/// What a target word is, which decides how it is matched against the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// `[user@]host[:port]` or `ssh://[user@]host[:port]`.
    Host,
    /// `[user@]host:path`, `host::module`, `scp://` / `rsync://` URLs; a local path names nothing.
    HostPath,
    /// A URL that reaches a machine over ssh only with an ssh scheme (`scp://`, `sftp://`,
    /// `ssh://`): curl's and lftp's operands; any other word names nothing.
    SshUrl,
    /// Any URL a client fetches (curl's): an ssh-scheme URL as `ssh-url`; a container
    /// engine's API path (`http://localhost/v1.45/containers/NAME/logs`, over
    /// `--unix-socket /var/run/docker.sock`) names the container NAME.
    Url,
    /// `-J host1,host2`.
    Jump,
    /// Hosts in a list or pattern: `a,b`, `"a b"`, ansible's `a:b:!c`.
    HostList,
    /// `-o ProxyJump=…`, `-o HostName=…`, `-o ProxyCommand=…`, `-o User=…`.
    SshOption,
    /// A forwarding: `-W host:port`, `-L [bind:]port:host:hostport`.
    Forward,
    /// A socket address: socat's `TCP:host:port`, `EXEC:command`.
    SocketAddress,
    /// `-l user`.
    User,
    /// A remote shell program (`rsync -e`, `mosh --ssh`): a command in its own right.
    Rsh,
    /// A container engine's daemon address: `ssh://host`, `tcp://host:port`.
    DaemonHost,
    /// `docker context create --docker host=ssh://atlas,ca=…`: `host=` is a daemon address.
    DaemonEndpoint,
    /// `docker events --filter container=NAME`: a `container=` filter names a container.
    ContainerFilter,
    /// `journalctl -t ID`: a syslog identifier, named after a container, unit or module.
    Identifier,
    /// A container engine context, named after the machine it reaches.
    Context,
    /// A systemd unit, with or without `.service`.
    Unit,
    /// A word of a D-Bus call (`busctl call`, `gdbus`, `dbus-send`): a unit it names as an
    /// argument (`string:x.service`, `'x.service'`) or by its object path
    /// (`/org/freedesktop/systemd1/unit/x_2eservice`).
    DbusWord,
    /// `journalctl -M` / `systemctl -M`: a machine or a container.
    Machine,
    /// A container name or id.
    Container,
    /// A compose service: named after a module or its container.
    Service,
    /// `docker cp name:path`.
    CopyPath,
    /// `journalctl _SYSTEMD_UNIT=x CONTAINER_NAME=y`.
    JournalMatch,
    /// A git repository: `[user@]host:path`, `ssh://…` (as `host-path`), `ext::COMMAND`
    /// (a shell command); a local path or a remote's name names nothing.
    GitUrl,
    /// git's `-c NAME=VALUE` (or, as operands, `git config NAME VALUE`): a value that git
    /// runs (`core.sshCommand`, a `!` alias) is a shell command; `remote.*.url` a git URL.
    GitConfig,
    /// `GIT_CONFIG_PARAMETERS`: git's `-c` settings as git hands them to itself, each
    /// `'NAME'='VALUE'`, shell-quoted, read as `git-config`.
    GitConfigList,
    /// `GIT_CONFIG_COUNT=N`: the settings in `GIT_CONFIG_KEY_<i>`/`GIT_CONFIG_VALUE_<i>` for
    /// `i` below N, read as `git-config`.
    GitConfigCount,
    /// The rest of the words, joined, is a shell command run on the target.
    RemoteCommand,
    /// The rest of the words are a program and its arguments.
    Command,
    /// `docker run --entrypoint PROGRAM IMAGE ARGS…`: the program the `command` operands are
    /// the arguments of.
    Entrypoint,
    /// A verb (`systemctl restart`): names nothing, but is part of the command's shape.
    Verb,
    Ignore,
}

/// What a role is, apart from how a program's words are read (`decide/program/`) and
/// how a value is resolved against the catalog (`decide/target/`).
impl Role {
    /// The placeholder a role stands for in a `replaces` shape.
    pub fn placeholder(self) -> &'static str {
        match self {
            Role::Host
            | Role::HostPath
            | Role::Jump
            | Role::SshOption
            | Role::DaemonHost
            | Role::Context
            | Role::Forward
            | Role::SocketAddress
            | Role::Machine => "machine",
            Role::Unit | Role::DbusWord => "unit",
            Role::Container | Role::Service | Role::CopyPath => "container",
            Role::JournalMatch => "match",
            Role::GitUrl | Role::HostList | Role::DaemonEndpoint | Role::SshUrl | Role::Url => {
                "machine"
            }
            Role::ContainerFilter => "container",
            Role::Identifier => "match",
            Role::User
            | Role::Rsh
            | Role::GitConfig
            | Role::GitConfigList
            | Role::GitConfigCount
            | Role::RemoteCommand
            | Role::Command
            | Role::Entrypoint
            | Role::Verb
            | Role::Ignore => "arg",
        }
    }

    /// A name that only means something on this machine (a unit, a container): under a
    /// remote command it names the other machine's, not the mesh's.
    pub fn is_local_name(self) -> bool {
        matches!(
            self,
            Role::Unit
                | Role::DbusWord
                | Role::Container
                | Role::Service
                | Role::CopyPath
                | Role::JournalMatch
                | Role::Identifier
                | Role::ContainerFilter
        )
    }
}
