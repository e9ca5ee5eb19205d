//! `docker compose logs redis`: a compose command's service word names a service of the
//! local project, whose container is `<project>-redis-1`, unless the project's files give
//! it a `container_name`. Which project and which files are read as compose would
//! (`-f`, `COMPOSE_FILE`, `--project-directory`, the lookup upward); where that cannot be
//! known, or the project does not define the word, the word stays a container name.

use crate::decide::*;
use crate::ondisk::Value;
use crate::ondisk::compose::{Project, Query};

impl Guard<'_> {
    /// The container names a compose service word stands for: none for a service of the
    /// readable local project that names no container, its `container_name` otherwise;
    /// `None` when that cannot be known.
    pub(in crate::decide) fn compose_service(
        &self,
        word: &str,
        cx: &Context,
        walk: &Walk,
    ) -> Option<Vec<String>> {
        let disk = self.world.disk.clone()?;
        if !is_known(word) {
            return None;
        }
        let cwd = self.known_cwd(walk)?;
        let words = &cx.command.words;
        let (syntax, start) = self.compose_args(words)?;
        let mut query = Query {
            cwd: cwd.to_str()?.to_string(),
            ..Query::default()
        };
        let scanned = argv::scan(syntax, &words[start..]);
        for arg in &scanned {
            let Arg::Option { name, value } = arg else {
                break;
            };
            let value = || value.clone().filter(|v| is_known(v));
            match name.as_str() {
                "-f" | "--file" => query.files.push(value()?),
                "--project-directory" => query.project_directory = Some(value()?),
                "--env-file" => query.env_file = true,
                _ => {}
            }
        }
        let mut own: Vec<(&str, String)> = Vec::new();
        for var in ["COMPOSE_FILE", "COMPOSE_PATH_SEPARATOR"] {
            if let Some(value) = walk.env_values(cx.command, var).next() {
                if !is_known(value) {
                    return None;
                }
                own.push((var, value.clone()));
            }
        }
        let own = move |name: &str| own.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone());
        let Project::Known(services) = disk.compose(&query, &own) else {
            return None;
        };
        services
            .get(word)?
            .iter()
            .map(|name| match name {
                Value::Known(name) => Some(name.clone()),
                Value::Unknown => None,
            })
            .collect()
    }

    /// compose's own option syntax, and where its options start in `words`:
    /// `docker-compose -f x logs`, `docker --context c compose -f x logs`.
    fn compose_args<'r>(&'r self, words: &[String]) -> Option<(&'r crate::rules::Syntax, usize)> {
        let program = base_name(words.first()?);
        let spec = self.rules.program(program)?;
        let (spec, start) = match spec.same_as.split_first() {
            Some((real, sub)) if sub.len() == 1 && sub[0] == "compose" => {
                (self.rules.program(real)?, 1)
            }
            Some(_) => return None,
            None => {
                let at = (1..words.len()).find(|&at| {
                    words[at] == "compose"
                        && !argv::scan(&spec.syntax, &words[1..at])
                            .iter()
                            .any(|a| matches!(a, Arg::Operand(_)))
                })?;
                (spec, at + 1)
            }
        };
        let compose = spec
            .subcommand
            .iter()
            .find(|s| s.names.iter().any(|n| n == "compose"))?;
        Some((&compose.syntax, start))
    }
}
