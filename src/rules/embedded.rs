//! The built-in rules as compiled data: build.rs writes each entry of `rules/*.toml` as one
//! string in the form below (`compile`, which build.rs includes), and the rule types
//! deserialize it through serde directly (`read`; decision 0083). Nothing is scanned,
//! unescaped or validated: every string and list says its length first, and the compiler
//! checked the whole entry is UTF-8. As JSON, reading the entries a `git status` needs was
//! half its instructions; as a tree of Rust values, an entry's pieces lay scattered over the
//! binary's read-only pages.
//!
//! A length is two ASCII characters, high 7 bits then low (so an entry stays UTF-8). A value
//! is a tag character, then:
//! - `f`, `t`: nothing (false, true);
//! - `i`: a length, then an i64 in that many decimal digits;
//! - `s`: a length, then a string of that many bytes;
//! - `a`: a count (a length), then that many values;
//! - `m`: a count, then that many pairs of a key (a length and its bytes, no tag) and a value.
//!
//! The rules' enums are unit variants, written as their names; TOML's other forms of an enum
//! do not read.

use serde::de::value::{BorrowedStrDeserializer, Error};
use serde::de::{self, DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};

/// Reads a compiled entry as the rule type `T`; build.rs checked that it does.
pub(crate) fn read<T: de::Deserialize<'static>>(entry: &'static str) -> Result<T, Error> {
    let mut reader = Reader { rest: entry };
    let value = T::deserialize(&mut reader)?;
    match reader.rest {
        "" => Ok(value),
        _ => Err(Error::custom("characters left after the entry")),
    }
}

/// `value` in this form. A string or a list of 16k or more stops the build.
#[cfg_attr(not(test), allow(dead_code))] // build.rs's, and the tests'
pub(crate) fn compile(value: &toml::Value) -> String {
    fn count(n: usize, out: &mut String) {
        assert!(n < 1 << 14, "a built-in string or list under 16k");
        out.push(char::from((n >> 7) as u8));
        out.push(char::from((n & 0x7f) as u8));
    }
    fn str(s: &str, out: &mut String) {
        count(s.len(), out);
        out.push_str(s);
    }
    fn write(value: &toml::Value, out: &mut String) {
        match value {
            toml::Value::Boolean(b) => out.push(if *b { 't' } else { 'f' }),
            toml::Value::Integer(i) => {
                out.push('i');
                str(&i.to_string(), out);
            }
            toml::Value::String(s) => {
                out.push('s');
                str(s, out);
            }
            toml::Value::Array(items) => {
                out.push('a');
                count(items.len(), out);
                items.iter().for_each(|item| write(item, out));
            }
            toml::Value::Table(table) => {
                out.push('m');
                count(table.len(), out);
                for (key, item) in table {
                    str(key, out);
                    write(item, out);
                }
            }
            other => panic!("the built-in rules hold no {}: {other}", other.type_str()),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}

/// The part of an entry not yet read.
struct Reader {
    rest: &'static str,
}

impl Reader {
    fn take(&mut self, n: usize) -> Result<&'static str, Error> {
        let (taken, rest) = self
            .rest
            .split_at_checked(n)
            .ok_or_else(|| Error::custom("the entry ends early, or inside a character"))?;
        self.rest = rest;
        Ok(taken)
    }

    fn byte(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?.as_bytes()[0])
    }

    fn count(&mut self) -> Result<usize, Error> {
        match *self.take(2)?.as_bytes() {
            [high, low] if high < 0x80 && low < 0x80 => {
                Ok(usize::from(high) << 7 | usize::from(low))
            }
            _ => Err(Error::custom("a length is two ASCII characters")),
        }
    }

    fn str(&mut self) -> Result<&'static str, Error> {
        let len = self.count()?;
        self.take(len)
    }
}

impl de::Deserializer<'static> for &mut Reader {
    type Error = Error;

    fn deserialize_any<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.byte()? {
            b'f' => visitor.visit_bool(false),
            b't' => visitor.visit_bool(true),
            b'i' => visitor.visit_i64(self.str()?.parse().map_err(Error::custom)?),
            b's' => visitor.visit_borrowed_str(self.str()?),
            b'a' => {
                let left = self.count()?;
                let mut items = Items { reader: self, left };
                let value = visitor.visit_seq(&mut items)?;
                items.done(value)
            }
            b'm' => {
                let left = self.count()?;
                let mut items = Items { reader: self, left };
                let value = visitor.visit_map(&mut items)?;
                items.done(value)
            }
            tag => Err(Error::custom(format_args!("no value has the tag {tag}"))),
        }
    }

    // TOML has no null: a key that is there holds a value.
    fn deserialize_option<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'static>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    // The rules' enums are unit variants, each written as its name.
    fn deserialize_enum<V: Visitor<'static>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.rest.as_bytes().first() {
            Some(b's') => {
                self.byte()?;
                visitor.visit_enum(BorrowedStrDeserializer::new(self.str()?))
            }
            _ => self.deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        <W: Visitor<'static>>
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// The values of an array, or the pairs of a table, not yet read.
struct Items<'r> {
    reader: &'r mut Reader,
    left: usize,
}

impl Items<'_> {
    /// A visitor that stopped short would leave the reader inside this list.
    fn done<T>(self, value: T) -> Result<T, Error> {
        match self.left {
            0 => Ok(value),
            left => Err(Error::invalid_length(left, &"every item read")),
        }
    }
}

impl SeqAccess<'static> for Items<'_> {
    type Error = Error;

    fn next_element_seed<S: DeserializeSeed<'static>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.reader).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

impl MapAccess<'static> for Items<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'static>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let key = self.reader.str()?;
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'static>>(&mut self, seed: S) -> Result<S::Value, Error> {
        seed.deserialize(&mut *self.reader)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Program, Role};

    #[test]
    fn an_entry_reads_as_its_toml_reads() {
        static ENTRY: &str = "m\0\x06\
            \0\x05namesa\0\x02s\0\x01xs\0\x02x2\
            \0\x04overs\0\x01x\
            \0\x08operandsa\0\x01s\0\x07host...\
            \0\x07optionsm\0\x02\0\x02-Js\0\x04jump\0\x02-ls\0\x04user\
            \0\x0eonly_by_targett\
            \0\x0bshort_values\0\x02lJ";
        let compiled: Program = read(ENTRY).unwrap();
        let toml: Program = toml::from_str(
            "names = [\"x\", \"x2\"]\nover = \"x\"\noperands = [\"host...\"]\n\
             options = { -J = \"jump\", -l = \"user\" }\nonly_by_target = true\n\
             short_value = \"lJ\"\n",
        )
        .unwrap();
        for program in [&compiled, &toml] {
            assert_eq!(program.names, ["x", "x2"]);
            assert_eq!(program.options["-J"], Role::Jump);
            assert_eq!(program.options["-l"], Role::User);
            assert!(program.operands[0].rest && program.operands[0].role == Role::Host);
            assert!(program.only_by_target);
            assert_eq!(program.syntax.short_value, "lJ");
        }
        let value: toml::Value = read(ENTRY).unwrap();
        assert_eq!(value["options"]["-J"].as_str(), Some("jump"));
        // 128 bytes: a length past 7 bits.
        let long = format!("a\0\x02s\x01\x00{}i\0\x02-7", "é".repeat(64)).leak();
        let (text, number): (String, i64) = read(long).unwrap();
        assert_eq!((text.chars().count(), number), (64, -7));
    }

    #[test]
    fn any_toml_value_the_rules_can_hold_reads_back_as_it_was_compiled() {
        let long = "x".repeat(200);
        let text = format!(
            "s = [\"\", \"\\r\\t\\u0000\\u007f\", \"é\", \"😀\", \"\\u2028\\u202e\", \"{long}\"]\n\
             i = [0, -1, 9223372036854775807, -9223372036854775808]\n\
             b = [true, false]\nempty = []\nnested = [[], [[\"a\"]], [1, \"x\"]]\n\
             [t]\n\"key with spaces\" = {{}}\n\"é\" = {{ a = {{ b = 1 }} }}\n"
        );
        let value: toml::Value = toml::from_str(&text).unwrap();
        let compiled: &'static str = compile(&value).leak();
        assert_eq!(read::<toml::Value>(compiled).unwrap(), value);
        let many = toml::Value::Array(vec![toml::Value::Boolean(true); 300]);
        assert_eq!(read::<toml::Value>(compile(&many).leak()).unwrap(), many);
    }

    #[test]
    fn a_broken_entry_is_an_error_not_a_panic() {
        let whole = "m\0\x02\0\x05namesa\0\x01s\0\x02\u{e9}\0\x04overs\0\x01x";
        assert_eq!(read::<Program>(whole).unwrap().names, ["é"]);
        // Cut anywhere, it ends early (or inside the `é`); with more, something is left over.
        for end in 0..whole.len() {
            let cut = &whole.as_bytes()[..end];
            let cut: &'static str = String::from_utf8_lossy(cut).into_owned().leak();
            assert!(read::<Program>(cut).is_err(), "cut at {end}");
        }
        assert!(read::<Program>(format!("{whole}t").leak()).is_err());
        let unknown = "m\0\x01\0\x05extrat";
        assert!(
            read::<Program>(unknown)
                .unwrap_err()
                .to_string()
                .contains("extra")
        );
        let wrong_type = "m\0\x02\0\x05namess\0\x01x\0\x04overs\0\x01x";
        assert!(read::<Program>(wrong_type).is_err());
        let inside_a_character = "s\0\x01\u{e9}";
        assert!(read::<String>(inside_a_character).is_err());
        assert!(read::<String>("s\u{e9}").is_err(), "a length is ASCII");
        assert!(read::<toml::Value>("z").is_err());
    }
}
