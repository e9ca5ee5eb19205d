//! The cache's byte encoding: little-endian integers, length-prefixed strings, a tool's record.

use crate::catalog::index::ToolEntry;

#[derive(Default)]
pub(crate) struct Enc(pub(crate) Vec<u8>);

impl Enc {
    pub(crate) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
    }
    pub(crate) fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
    pub(crate) fn strs(&mut self, v: &[String]) {
        self.u32(v.len() as u32);
        v.iter().for_each(|s| self.str(s));
    }
}

pub(crate) struct Dec<'a> {
    pub(crate) buf: &'a [u8],
}

impl<'a> Dec<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.buf.len() {
            return None;
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Some(head)
    }
    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("four bytes")))
    }
    pub(crate) fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("eight bytes")))
    }
    pub(crate) fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    pub(crate) fn str(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }
    pub(crate) fn strs(&mut self) -> Option<Vec<String>> {
        let n = self.u32()?;
        // Each string takes at least its length: a corrupt count cannot allocate much.
        (0..n).map(|_| self.str()).collect::<Option<Vec<_>>>()
    }
}

pub(crate) fn encode_tool(tool: &ToolEntry) -> Vec<u8> {
    let mut e = Enc::default();
    e.str(&tool.name);
    e.str(&tool.usage);
    e.strs(&tool.replaces);
    match &tool.module {
        Some(m) => {
            e.u8(1);
            e.str(m);
        }
        None => e.u8(0),
    }
    e.0
}

pub(crate) fn decode_tool(bytes: &[u8]) -> Option<ToolEntry> {
    let mut d = Dec { buf: bytes };
    let (name, usage, replaces) = (d.str()?, d.str()?, d.strs()?);
    let module = match d.u8()? {
        0 => None,
        1 => Some(d.str()?),
        _ => return None,
    };
    d.buf.is_empty().then_some(ToolEntry {
        name,
        usage,
        replaces,
        module,
    })
}

impl Clone for Enc {
    fn clone(&self) -> Self {
        Enc(self.0.clone())
    }
}
