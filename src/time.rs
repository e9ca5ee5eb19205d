//! UTC times for the record and the audit views: RFC 3339 in and out, and relative times like `2h`.
//!
//! Hand-written calendar arithmetic (proleptic Gregorian, UTC) rather than a date crate: the
//! views need two conversions, and the hook binary stays small.

const MS_PER_DAY: i64 = 86_400_000;

/// Reads `--since`/`--until`: a span back from `now_ms` (`30s`, `15m`, `2h`, `7d`), an RFC 3339
/// time (`2026-11-30T10:00:00Z`, `2026-11-30T11:00:00.5+01:00`), or a bare date (midnight UTC).
/// Returns UTC milliseconds since the epoch.
pub fn parse_time(s: &str, now_ms: i64) -> Result<i64, TimeError> {
    let s = s.trim();
    if let Some(span) = relative_ms(s) {
        return span
            .and_then(|ms| now_ms.checked_sub(ms))
            .ok_or_else(|| TimeError::TooFarBack(s.to_string()));
    }
    rfc3339_ms(s).ok_or_else(|| TimeError::Unreadable(s.to_string()))
}

/// Why a `--since`/`--until` (or `audit prune --before`) time cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeError {
    /// Neither a span nor an RFC 3339 time.
    Unreadable(String),
    /// A span back from now before the earliest time there is.
    TooFarBack(String),
}

impl std::fmt::Display for TimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimeError::Unreadable(s) => write!(
                f,
                "cannot read the time {s:?}: expected a span back from now (30s, 15m, 2h, 7d) \
                 or an RFC 3339 time (2026-11-30T10:00:00Z)"
            ),
            TimeError::TooFarBack(s) => write!(f, "the span {s:?} reaches too far back"),
        }
    }
}

impl std::error::Error for TimeError {}

/// A span (`30s`, `15m`, `2h`, `7d`) in milliseconds; `None` when `s` is not one or overflows.
pub fn span_ms(s: &str) -> Option<i64> {
    relative_ms(s.trim()).flatten()
}

/// An RFC 3339 date and time (a `T` and an offset required) in UTC milliseconds.
pub fn rfc3339_time_ms(s: &str) -> Option<i64> {
    s.contains(['T', 't']).then(|| rfc3339_ms(s)).flatten()
}

/// `Some(None)` when `s` has the shape of a span but overflows.
fn relative_ms(s: &str) -> Option<Option<i64>> {
    let unit = match s.chars().last()? {
        's' => 1_000,
        'm' => 60_000,
        'h' => 3_600_000,
        'd' => MS_PER_DAY,
        _ => return None,
    };
    let digits = &s[..s.len() - 1];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<i64>().ok().and_then(|n| n.checked_mul(unit)))
}

/// A cursor over the ASCII text of a time.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn digits(&mut self, n: usize) -> Option<i64> {
        let part = self.b.get(self.at..self.at + n)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.at += n;
        Some(part.iter().fold(0, |acc, d| acc * 10 + i64::from(d - b'0')))
    }

    fn eat(&mut self, options: &[u8]) -> Option<u8> {
        let c = *self.b.get(self.at)?;
        if options.contains(&c) {
            self.at += 1;
            Some(c)
        } else {
            None
        }
    }

    fn done(&self) -> bool {
        self.at == self.b.len()
    }
}

fn rfc3339_ms(s: &str) -> Option<i64> {
    let mut c = Cursor {
        b: s.as_bytes(),
        at: 0,
    };
    let year = c.digits(4)?;
    c.eat(b"-")?;
    let month = c.digits(2)?;
    c.eat(b"-")?;
    let day = c.digits(2)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    if c.done() {
        return days.checked_mul(MS_PER_DAY);
    }
    // RFC 3339 allows a space for the `T` (section 5.6, note).
    c.eat(b"Tt ")?;
    let hour = c.digits(2)?;
    c.eat(b":")?;
    let minute = c.digits(2)?;
    c.eat(b":")?;
    // 60 is a leap second; it is counted as the next minute's first.
    let second = c.digits(2)?;
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut frac_ms = 0;
    if c.eat(b".").is_some() {
        let mut scale = 100;
        let mut any = false;
        while let Some(d) = c.digits(1) {
            frac_ms += d * scale;
            scale /= 10;
            any = true;
        }
        if !any {
            return None;
        }
    }
    let offset_s = match c.eat(b"Zz+-")? {
        b'Z' | b'z' => 0,
        sign => {
            let oh = c.digits(2)?;
            c.eat(b":")?;
            let om = c.digits(2)?;
            if oh > 23 || om > 59 {
                return None;
            }
            let off = oh * 3600 + om * 60;
            if sign == b'-' { -off } else { off }
        }
    };
    if !c.done() {
        return None;
    }
    let secs = hour * 3600 + minute * 60 + second - offset_s;
    days.checked_mul(MS_PER_DAY)?
        .checked_add(secs * 1000 + frac_ms)
}

/// `ms` as RFC 3339 in UTC, to the second (`2026-11-30T10:00:00Z`) or to the millisecond.
pub fn format_time(ms: i64, millis: bool) -> String {
    TimeText::of(ms, millis).as_str().to_string()
}

/// [`format_time`]'s text, held on the stack: a view of a million rows writes a time per row
/// and need not allocate for it (issue 39).
pub struct TimeText {
    bytes: [u8; 48],
    len: usize,
}

impl TimeText {
    pub fn of(ms: i64, millis: bool) -> TimeText {
        let days = ms.div_euclid(MS_PER_DAY);
        let in_day = ms.rem_euclid(MS_PER_DAY);
        let (y, mo, d) = civil_from_days(days);
        let (h, mi, s) = (in_day / 3_600_000, in_day / 60_000 % 60, in_day / 1000 % 60);
        let mut t = TimeText {
            bytes: [0; 48],
            len: 0,
        };
        if (0..=9999).contains(&y) {
            // The usual years, digit by digit, as the formatting below writes them.
            t.digits(y, 4);
            for (sep, n) in [(b'-', mo), (b'-', d), (b'T', h), (b':', mi), (b':', s)] {
                t.push(sep);
                t.digits(n, 2);
            }
            if millis {
                t.push(b'.');
                t.digits(in_day % 1000, 3);
            }
            t.push(b'Z');
            return t;
        }
        use std::fmt::Write;
        let _ = if millis {
            write!(
                t,
                "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}Z",
                in_day % 1000
            )
        } else {
            write!(t, "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
        };
        t
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII digits and separators, or whole `str`s (`write_str`), are ever put in.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }

    fn push(&mut self, b: u8) {
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    /// `n` (0 ≤ n < 10^width) in `width` digits, zero-padded.
    fn digits(&mut self, n: i64, width: u32) {
        for place in (0..width).rev() {
            self.push(b'0' + (n / 10_i64.pow(place) % 10) as u8);
        }
    }
}

impl std::fmt::Write for TimeText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let slot = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Leap years in 1..y (before year `y`), counted with floor division so years before 1 work too.
fn leaps_before(y: i64) -> i64 {
    let p = y - 1;
    p.div_euclid(4) - p.div_euclid(100) + p.div_euclid(400)
}

/// Days from 1970-01-01 to the first of January of `y`.
fn days_to_year(y: i64) -> i64 {
    (y - 1970) * 365 + leaps_before(y) - leaps_before(1970)
}

/// Days from 1970-01-01 to `y-m-d` (a valid date).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let before_month: i64 = (1..m).map(|mm| days_in_month(y, mm)).sum();
    days_to_year(y) + before_month + d - 1
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    // A 400-year cycle has 146 097 days; the estimate is at most a year off either way.
    let mut y = 1970 + days.saturating_mul(400).div_euclid(146_097);
    while days_to_year(y) > days {
        y -= 1;
    }
    while days_to_year(y + 1) <= days {
        y += 1;
    }
    let mut rest = days - days_to_year(y);
    let mut m = 1;
    while m < 12 && rest >= days_in_month(y, m) {
        rest -= days_in_month(y, m);
        m += 1;
    }
    (y, m, rest + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_text_is_what_formatting_writes() {
        let old = |ms: i64, millis: bool| {
            let days = ms.div_euclid(MS_PER_DAY);
            let in_day = ms.rem_euclid(MS_PER_DAY);
            let (y, mo, d) = civil_from_days(days);
            let (h, mi, s) = (in_day / 3_600_000, in_day / 60_000 % 60, in_day / 1000 % 60);
            if millis {
                format!(
                    "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}Z",
                    in_day % 1000
                )
            } else {
                format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
            }
        };
        let mut ms = -70_000_000_000_000_i64;
        while ms < 300_000_000_000_000 {
            for millis in [false, true] {
                assert_eq!(format_time(ms, millis), old(ms, millis), "{ms}");
            }
            ms += 987_654_321_987;
        }
        for ms in [
            i64::MIN,
            i64::MAX,
            0,
            -1,
            253_402_300_799_999,
            253_402_300_800_000,
        ] {
            for millis in [false, true] {
                assert_eq!(format_time(ms, millis), old(ms, millis), "{ms}");
            }
        }
    }

    #[test]
    fn calendar_round_trips_over_centuries() {
        // Every day from 1600 to 2400 (both leap-rule exceptions, both directions).
        let start = days_from_civil(1600, 1, 1);
        let end = days_from_civil(2400, 12, 31);
        let (mut y, mut m, mut d) = (1600, 1, 1);
        for days in start..=end {
            assert_eq!(civil_from_days(days), (y, m, d), "day {days}");
            assert_eq!(days_from_civil(y, m, d), days);
            d += 1;
            if d > days_in_month(y, m) {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
    }

    #[test]
    fn known_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
    }
}
