//! What a decoder prints for input the command itself gave it (`echo … | base64 -d`), so a
//! payload decoded into a shell is judged as the shell runs it. Each decoder is computed
//! exactly as the program would, or not at all: an input it would reject, an option it is
//! not read for, a character set it cannot be sure of, is unknown output (decision 0055).

use crate::shell::UNKNOWN;

/// Decoded output is bounded as a command is (`decide::MAX_SOURCE_BYTES`).
pub(crate) const MAX_DECODED_BYTES: usize = 256 * 1024;

/// What `program args` writes for `input`, if it is a decoder this knows and the answer is
/// exact; `None` for any other program.
pub(crate) fn decoded(program: &str, args: &[String], input: &[u8]) -> Option<Option<Vec<u8>>> {
    let flag = |names: &[&str]| args.iter().any(|a| names.contains(&a.as_str()));
    // Short options may come together (`-dc`, `-rp`): each letter counts.
    let letters = |letters: &str| -> bool {
        args.iter().any(|a| {
            a.len() > 1
                && a.starts_with('-')
                && !a.starts_with("--")
                && letters.chars().all(|l| a.contains(l))
        })
    };
    let operands = || args.iter().any(|a| !a.starts_with('-'));
    let answer = match program {
        "base64" if letters("d") || letters("D") || flag(&["--decode"]) => (!operands()
            && only_options(args, "dDi", &["--decode", "--ignore-garbage"]))
        .then(|| base64(input, letters("i") || flag(&["--ignore-garbage"])))
        .flatten(),
        "openssl" => openssl(args, input),
        "xxd" if letters("r") && letters("p") => (!operands() && only_options(args, "rp", &[]))
            .then(|| hex(input))
            .flatten(),
        "rev" if args.is_empty() => rev(input),
        "tr" => tr(args, input),
        "zcat" | "gzcat" => (args.is_empty()).then(|| gunzip(input)).flatten(),
        "gunzip" | "gzip"
            if (program == "gunzip" || letters("d") || flag(&["--decompress"]))
                && (args.is_empty() || letters("c") || flag(&["--stdout"]) || !operands()) =>
        {
            (!operands() && only_options(args, "dcfq", &["--decompress", "--stdout"]))
                .then(|| gunzip(input))
                .flatten()
        }
        _ => return None,
    };
    Some(answer.filter(|out| out.len() <= MAX_DECODED_BYTES))
}

/// Whether every argument is one of these options (short letters may be combined).
fn only_options(args: &[String], short: &str, long: &[&str]) -> bool {
    args.iter().all(|a| {
        long.contains(&a.as_str())
            || (a.len() > 1
                && a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].chars().all(|c| short.contains(c)))
    })
}

/// GNU base64 decoding: newlines are skipped, padding ends the data; any other character
/// outside the alphabet stops it with an error (its output so far is not known here) unless
/// `-i` skips it.
fn base64(input: &[u8], ignore_garbage: bool) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(input.len() * 3 / 4);
    let (mut bits, mut count, mut padding, mut sextets) = (0u32, 0u32, 0usize, 0usize);
    for &c in input {
        if c == b'\n' {
            continue;
        }
        if c == b'=' {
            padding += 1;
            continue;
        }
        let Some(v) = value(c) else {
            if ignore_garbage {
                continue;
            }
            return None;
        };
        // Data after padding is a second stream that GNU base64 rejects.
        if padding > 0 {
            return None;
        }
        sextets += 1;
        bits = (bits << 6) | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    // A final group must be complete, with its padding: GNU base64 prints what it decoded
    // of a partial one and fails, which is not repeated here.
    let complete = matches!((sextets % 4, padding), (0, 0) | (2, 2) | (3, 1));
    complete.then_some(out)
}

/// `openssl base64 -d` and `openssl enc -base64 -d` (`-a`): lines of at most 64 characters
/// unless `-A` says the input is one line.
fn openssl(args: &[String], input: &[u8]) -> Option<Vec<u8>> {
    let (command, options) = args.split_first()?;
    let decode = options.iter().any(|a| a == "-d");
    let base64_mode = command == "base64"
        || (command == "enc" && options.iter().any(|a| a == "-base64" || a == "-a"));
    let known = options
        .iter()
        .all(|a| matches!(a.as_str(), "-d" | "-A" | "-base64" | "-a"));
    if !decode || !base64_mode || !known {
        return None;
    }
    let one_line = options.iter().any(|a| a == "-A");
    let text = std::str::from_utf8(input).ok()?;
    if !one_line && text.lines().any(|line| line.len() > 64) {
        return None;
    }
    let joined: Vec<u8> = text
        .bytes()
        .filter(|c| !matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
        .collect();
    base64(&joined, false)
}

/// `xxd -r -p`: hex digits in pairs, whitespace anywhere.
fn hex(input: &[u8]) -> Option<Vec<u8>> {
    let digits: Vec<u8> = input
        .iter()
        .copied()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits
        .chunks(2)
        .map(|pair| {
            let text = std::str::from_utf8(pair).ok()?;
            u8::from_str_radix(text, 16).ok()
        })
        .collect()
}

/// `rev`: each line's characters reversed.
fn rev(input: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(input).ok()?;
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| line.chars().rev().collect())
        .collect();
    Some(lines.join("\n").into_bytes())
}

/// `tr SET1 SET2` and `tr -d SET1` over ASCII, with ranges and backslash escapes; classes,
/// repeats, `-c` and `-s` are not read (unknown).
fn tr(args: &[String], input: &[u8]) -> Option<Vec<u8>> {
    if !input.is_ascii() {
        return None;
    }
    match args {
        [delete, set] if delete == "-d" => {
            let set = tr_set(set)?;
            Some(input.iter().copied().filter(|c| !set.contains(c)).collect())
        }
        [from, to] if !from.starts_with('-') => {
            let (from, to) = (tr_set(from)?, tr_set(to)?);
            let last = *to.last()?;
            let map = |c: u8| {
                // The last position of a byte in SET1 wins, and SET2 is padded with its last.
                from.iter()
                    .rposition(|&f| f == c)
                    .map_or(c, |at| to.get(at).copied().unwrap_or(last))
            };
            Some(input.iter().map(|&c| map(c)).collect())
        }
        _ => None,
    }
}

fn tr_set(text: &str) -> Option<Vec<u8>> {
    if !text.is_ascii() || text.contains('[') || text.contains(UNKNOWN) {
        return None;
    }
    let bytes = text.as_bytes();
    let mut chars = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let c = if bytes[at] == b'\\' && at + 1 < bytes.len() {
            at += 1;
            match bytes[at] {
                b'n' => b'\n',
                b't' => b'\t',
                b'\\' => b'\\',
                b'0'..=b'7' => return None,
                other => other,
            }
        } else {
            bytes[at]
        };
        at += 1;
        chars.push(c);
    }
    // Ranges: `a-z` (a `-` first or last is itself).
    let mut set = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if i + 2 < chars.len() && chars[i + 1] == b'-' {
            let (low, high) = (chars[i], chars[i + 2]);
            if low > high {
                return None;
            }
            set.extend(low..=high);
            i += 3;
        } else {
            set.push(chars[i]);
            i += 1;
        }
    }
    (!set.is_empty()).then_some(set)
}

/// One gzip member (RFC 1952), inflated within the bound, its CRC and length checked: a
/// stream gzip would reject or that holds more than one member is unknown.
fn gunzip(input: &[u8]) -> Option<Vec<u8>> {
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    const FHCRC: u8 = 2;
    if input.len() < 18 || input[0..3] != [0x1f, 0x8b, 8] {
        return None;
    }
    let flags = input[3];
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let length = usize::from(u16::from_le_bytes([*input.get(at)?, *input.get(at + 1)?]));
        at += 2 + length;
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            at += input.get(at..)?.iter().position(|&b| b == 0)? + 1;
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    let body = input.get(at..input.len().checked_sub(8)?)?;
    let (out, consumed) = inflate(body)?;
    let trailer = &input[input.len() - 8..];
    let crc = u32::from_le_bytes(trailer[0..4].try_into().ok()?);
    let size = u32::from_le_bytes(trailer[4..8].try_into().ok()?);
    // The deflate stream must end exactly at the trailer: anything between is a second
    // member or garbage, whose handling this does not repeat.
    let exact = consumed == body.len() && crc32(&out) == crc && size == out.len() as u32;
    exact.then_some(out)
}

/// A raw deflate stream inflated into at most [`MAX_DECODED_BYTES`], with how many bytes
/// of `body` it took; `None` if it is broken or larger.
fn inflate(body: &[u8]) -> Option<(Vec<u8>, usize)> {
    use miniz_oxide::inflate::TINFLStatus;
    use miniz_oxide::inflate::core::{DecompressorOxide, decompress, inflate_flags};
    let mut state = Box::<DecompressorOxide>::default();
    let mut out = vec![0u8; MAX_DECODED_BYTES];
    let flags = inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
    let (status, consumed, written) = decompress(&mut state, body, &mut out, 0, flags);
    if status != TINFLStatus::Done {
        return None;
    }
    out.truncate(written);
    Some((out, consumed))
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
