//! The walk of a whole command, and the files it reads (`xargs … < hosts.txt`, `for h in
//! $(cat hosts.txt)`, `parallel … :::: hosts.txt`): only where the command runs a guarded
//! or unknown program are they read, through [`crate::ondisk::disk::Disk::input`] (bounded),
//! and the command walked again with their text, so their lines are the values, exactly.

use crate::decide::*;
use std::rc::Rc;

impl Guard<'_> {
    /// The walk of a whole command. `xargs … < hosts.txt`: where it runs a guarded or
    /// unknown program, the files it reads are read (bounded) and it is walked again with
    /// their lines.
    pub(in crate::decide) fn walk_command(&self, source: &str) -> Walk {
        let walk = self.walk_source(source, Rc::default());
        if !walk.inputs.is_empty()
            && !self.quick_pass(&walk)
            && let Some(read) = self.read_inputs(&walk)
        {
            return self.walk_source(source, Rc::new(read));
        }
        walk
    }

    /// The walk of `source`, with the text of the files in `read` known.
    pub(in crate::decide) fn walk_source(
        &self,
        source: &str,
        read: Rc<HashMap<String, String>>,
    ) -> Walk {
        let mut walk = Walk {
            read,
            ..Walk::default()
        };
        // `$HOME` is what bash would expand it to: the session's home, as the hook sees it.
        let known: HashMap<String, Vec<String>> = self
            .world
            .home
            .iter()
            .map(|h| ("HOME".to_string(), vec![h.to_string_lossy().into_owned()]))
            .collect();
        match shell::parse_reading(source, 0, &known, &walk.read.clone()) {
            Ok(script) => self.script(script, &mut walk),
            Err(_) => walk.unparsable.push(source.to_string()),
        }
        walk
    }

    /// Nothing the command runs is guarded, unknown or unreadable: it passes unjudged.
    pub(in crate::decide) fn quick_pass(&self, walk: &Walk) -> bool {
        walk.candidates.is_empty()
            && !walk.guarded
            && walk.unknown_programs.is_empty()
            && walk.unknown_code.is_empty()
            && walk.unparsable.is_empty()
    }

    /// The text of the files the command reads, by path as written; `None` when none could
    /// be read. A relative path is read from the session's directory only where the
    /// command has not `cd`'d elsewhere.
    pub(in crate::decide) fn read_inputs(&self, walk: &Walk) -> Option<HashMap<String, String>> {
        let disk = self.world.disk.clone()?;
        let moved = walk.cwd.is_some() || walk.cwd_unknown;
        let mut read = HashMap::new();
        for path in &walk.inputs {
            let full = if path.starts_with('/') {
                PathBuf::from(path)
            } else if moved {
                continue;
            } else {
                self.world.cwd.as_ref()?.join(path)
            };
            if let Some(text) = disk.input(&full) {
                read.insert(path.clone(), text);
            }
        }
        (!read.is_empty()).then_some(read)
    }
}
