//! What `echo`/`printf` print, for commands that feed their output to a shell.

use crate::shell::{Command, Stdin};

/// What a command writes on its standard output, when the command text alone tells.
pub(crate) fn output_of(command: &Command) -> Stdin {
    let program = command
        .words
        .first()
        .map(|w| w.rsplit('/').next().unwrap_or(w));
    let args = command.words.get(1..).unwrap_or_default();
    match program {
        Some("echo") => {
            let args = args
                .iter()
                .skip_while(|w| matches!(w.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"));
            Stdin::Text(args.cloned().collect::<Vec<_>>().join(" "))
        }
        Some("printf") => match args.split_first() {
            Some((format, rest)) => Stdin::Text(printf(format, rest)),
            None => Stdin::Unknown,
        },
        // `cat` of nothing, or of files the command wrote, and `tee`, pass text on.
        Some("cat") if args.is_empty() => command.stdin.clone(),
        Some("cat") => {
            let known: Option<Vec<&str>> = args
                .iter()
                .map(|a| {
                    command
                        .files
                        .iter()
                        .find(|(p, _)| p == a)
                        .map(|(_, t)| t.as_str())
                })
                .collect();
            known.map_or(Stdin::Unknown, |texts| Stdin::Text(texts.concat()))
        }
        Some("tee") => match &command.stdin {
            Stdin::Text(text) => Stdin::Text(text.clone()),
            _ => Stdin::Unknown,
        },
        _ => Stdin::Unknown,
    }
}

/// `printf FORMAT ARGS…`: `%s`-like conversions take the arguments in turn, and the
/// format is used again while arguments remain, as bash does; `\n` is a newline.
pub(crate) fn printf(format: &str, args: &[String]) -> String {
    let mut out = String::new();
    let mut rest = args.iter();
    loop {
        let mut used = false;
        let mut chars = format.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '%' => {
                    // Flags, width and precision come before the conversion letter.
                    while chars
                        .next_if(|d| d.is_ascii_digit() || "-+ #.*'".contains(*d))
                        .is_some()
                    {}
                    match chars.next() {
                        Some('%') => out.push('%'),
                        Some(_) => {
                            used = true;
                            out.push_str(rest.next().map_or("", String::as_str));
                        }
                        None => out.push('%'),
                    }
                }
                '\\' => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(other) => out.push(other),
                    None => out.push('\\'),
                },
                _ => out.push(c),
            }
        }
        if !used || rest.len() == 0 || out.len() > 64 * 1024 {
            return out;
        }
    }
}

#[cfg(test)]
mod printf_tests {
    use super::printf;

    #[test]
    fn formats_like_bash() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            printf("%s\\n", &args(&["atlas", "orion"])),
            "atlas\norion\n"
        );
        assert_eq!(printf("ssh %s", &args(&["atlas"])), "ssh atlas");
        assert_eq!(printf("%-5s|%%", &args(&["a"])), "a|%");
        assert_eq!(printf("plain", &args(&["x"])), "plain");
    }
}
