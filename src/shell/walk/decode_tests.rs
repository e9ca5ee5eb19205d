use super::*;

fn run(program: &str, args: &[&str], input: &[u8]) -> Option<Vec<u8>> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    decoded(program, &args, input).expect("a decoder")
}

fn text(program: &str, args: &[&str], input: &str) -> Option<String> {
    run(program, args, input.as_bytes()).map(|b| String::from_utf8(b).unwrap())
}

#[test]
fn base64_decodes_exactly_or_not_at_all() {
    assert_eq!(
        text("base64", &["-d"], "c3NoIGRiIHVwdGltZQ==").as_deref(),
        Some("ssh db uptime")
    );
    assert_eq!(
        text("base64", &["--decode"], "aGVsbG8=\n").as_deref(),
        Some("hello")
    );
    assert_eq!(text("base64", &["-D"], "aGk=").as_deref(), Some("hi"));
    assert_eq!(
        text("base64", &["-d"], "c3No\nIGRi").as_deref(),
        Some("ssh db")
    );
    // GNU base64 fails on these after printing part of them: unknown, not a guess.
    assert_eq!(text("base64", &["-d"], "aGVsbG8"), None);
    assert_eq!(text("base64", &["-d"], "c3No!IGRi"), None);
    assert_eq!(text("base64", &["-d"], "aGk=aGk="), None);
    assert_eq!(
        text("base64", &["-di"], "c3No!IGRi").as_deref(),
        Some("ssh db")
    );
    // A file operand, or an option not read: unknown.
    assert_eq!(text("base64", &["-d", "payload"], "aGk="), None);
    assert_eq!(text("base64", &["-d", "-w0"], "aGk="), None);
    // Encoding is not a decoder's job here.
    assert_eq!(decoded("base64", &[], b"x"), None);
}

#[test]
fn openssl_xxd_rev_and_tr_are_computed_as_the_programs_do() {
    let b64 = "c3NoIGRiIHVwdGltZQ==";
    for args in [
        &["base64", "-d"][..],
        &["enc", "-base64", "-d"],
        &["enc", "-d", "-a"],
    ] {
        assert_eq!(
            text("openssl", args, b64).as_deref(),
            Some("ssh db uptime"),
            "{args:?}"
        );
    }
    // openssl reads lines of at most 64 characters unless told `-A`.
    let long = "YWFh".repeat(20);
    assert_eq!(text("openssl", &["base64", "-d"], &long), None);
    assert_eq!(
        text("openssl", &["base64", "-d", "-A"], &long),
        Some("aaa".repeat(20))
    );
    assert_eq!(text("openssl", &["base64"], b64), None);
    assert_eq!(text("openssl", &["enc", "-aes-256-cbc", "-d"], b64), None);
    assert_eq!(
        text("xxd", &["-r", "-p"], "7373 6820\n6462").as_deref(),
        Some("ssh db")
    );
    assert_eq!(text("xxd", &["-rp"], "737").as_deref(), None);
    assert_eq!(decoded("xxd", &["-r".into()], b"00000000: 7373"), None);
    assert_eq!(
        text("rev", &[], "bd hss\nipa").as_deref(),
        Some("ssh db\napi")
    );
    assert_eq!(
        text("tr", &["n-za-m", "a-z"], "ffu qo").as_deref(),
        Some("ssh db")
    );
    assert_eq!(
        text("tr", &["-d", "_"], "s_s_h db").as_deref(),
        Some("ssh db")
    );
    // SET2 shorter than SET1 is padded with its last character.
    assert_eq!(text("tr", &["abc", "x"], "abcd").as_deref(), Some("xxxd"));
    assert_eq!(text("tr", &["[:lower:]", "[:upper:]"], "ssh"), None);
    assert_eq!(text("tr", &["-s", " "], "a  b"), None);
}

/// `printf 'ssh db uptime' | gzip -c`, as bytes.
fn gzip_of_ssh_db_uptime() -> Vec<u8> {
    vec![
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x2b, 0x2e, 0xce, 0x50, 0x48,
        0x49, 0x52, 0x28, 0x2d, 0x28, 0xc9, 0xcc, 0x4d, 0x05, 0x00, 0x77, 0x04, 0xc5, 0x4e, 0x0d,
        0x00, 0x00, 0x00,
    ]
}

#[test]
fn gzip_is_inflated_with_its_checks() {
    let member = gzip_of_ssh_db_uptime();
    for (program, args) in [
        ("gzip", &["-dc"][..]),
        ("gzip", &["-d"]),
        ("gzip", &["--decompress", "--stdout"]),
        ("gunzip", &[]),
        ("gunzip", &["-c"]),
        ("zcat", &[]),
    ] {
        assert_eq!(
            run(program, args, &member).as_deref(),
            Some(&b"ssh db uptime"[..]),
            "{program} {args:?}"
        );
    }
    // A damaged CRC, a cut stream, two members: gzip would fail or go on; unknown here.
    let mut damaged = member.clone();
    damaged[member.len() - 6] ^= 1;
    assert_eq!(run("zcat", &[], &damaged), None);
    assert_eq!(run("zcat", &[], &member[..member.len() - 3]), None);
    assert_eq!(
        run("zcat", &[], &[member.clone(), member.clone()].concat()),
        None
    );
    assert_eq!(run("zcat", &[], b"not gzip at all, just text"), None);
    // Compression is not decoding.
    assert_eq!(decoded("gzip", &[], &member), None);
}

#[test]
fn a_bomb_is_unknown_and_answered_fast() {
    // 1 MiB of zeros deflates to about 1 KiB: past the bound, the output is unknown.
    let mut bomb = vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 3];
    // Stored-nothing dynamic blocks are hard to write by hand; a run of fixed-Huffman
    // blocks that each repeat one byte 258 times at distance 1 does the same.
    let mut bits = BitWriter::default();
    bits.push(0, 1); // not the final block
    bits.push(1, 2); // fixed Huffman
    bits.literal(b'a');
    for _ in 0..(2 * MAX_DECODED_BYTES / 258) {
        bits.length_258_distance_1();
    }
    bits.push(0, 7); // end of block
    bits.push(1, 1); // final block
    bits.push(1, 2);
    bits.push(0, 7);
    bomb.extend(bits.finish());
    bomb.extend([0; 8]);
    assert!(bomb.len() < 8 * 1024, "{}", bomb.len());
    assert_eq!(run("zcat", &[], &bomb), None);
    // A huge literal to decode is bounded the same way.
    let huge = "QUFB".repeat(MAX_DECODED_BYTES / 3 + 10);
    assert_eq!(text("base64", &["-d"], &huge), None);
}

#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    used: u32,
}

impl BitWriter {
    /// `count` bits of `value`, least significant first (deflate's order for fields).
    fn push(&mut self, value: u32, count: u32) {
        for i in 0..count {
            if self.used.is_multiple_of(8) {
                self.bytes.push(0);
            }
            let bit = ((value >> i) & 1) as u8;
            *self.bytes.last_mut().unwrap() |= bit << (self.used % 8);
            self.used += 1;
        }
    }

    /// A Huffman code, most significant bit first.
    fn code(&mut self, code: u32, length: u32) {
        for i in (0..length).rev() {
            self.push((code >> i) & 1, 1);
        }
    }

    fn literal(&mut self, byte: u8) {
        // Fixed Huffman: literals 0-143 are 8 bits from 0x30.
        self.code(0x30 + u32::from(byte), 8);
    }

    fn length_258_distance_1(&mut self) {
        // Length 258 is symbol 285: 8 bits from 0xC0 (280-287), 285 = 0xC5.
        self.code(0xc5, 8);
        // Distance 1 is distance code 0: 5 bits.
        self.code(0, 5);
    }

    fn finish(self) -> Vec<u8> {
        self.bytes
    }
}
