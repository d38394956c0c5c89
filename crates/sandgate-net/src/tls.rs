//! The server name (SNI) of a TLS ClientHello, read before anything goes
//! out (RFC 8446 §4.1.2, RFC 6066 §3).

use std::io::{self, Read};
use std::net::TcpStream;

/// The largest TLS record (2^14 bytes of plaintext plus room an encrypted
/// record may add).
const MAX_RECORD: usize = 16_384 + 2_048;

/// Read the program's first TLS record whole, after `prefix` (what was
/// read already), when its first byte says it is a handshake (22);
/// otherwise whatever one read returned (the program speaks something
/// else, such as SSH). An empty vector: it closed without a byte.
pub fn read_first_record(prefix: Vec<u8>, stream: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut out = prefix;
    if out.is_empty() {
        let mut head = [0u8; 5];
        let n = crate::retrying(|| stream.read(&mut head))?;
        out.extend_from_slice(&head[..n]);
        if n == 0 {
            return Ok(out);
        }
    }
    if out[0] != 22 {
        return Ok(out);
    }
    if out.len() < 5 {
        let mut rest = vec![0u8; 5 - out.len()];
        stream.read_exact(&mut rest)?;
        out.extend_from_slice(&rest);
    }
    let len = usize::from(u16::from_be_bytes([out[3], out[4]]));
    if len > MAX_RECORD {
        return Ok(out);
    }
    if out.len() < 5 + len {
        let mut body = vec![0u8; 5 + len - out.len()];
        stream.read_exact(&mut body)?;
        out.extend_from_slice(&body);
    }
    Ok(out)
}

/// Whether `record` starts a TLS handshake whose ClientHello is not whole
/// in it (spread over records, or larger than a record): its server name
/// cannot be read, so it is treated as naming another host.
pub fn is_unreadable_hello(record: &[u8]) -> bool {
    if record.first() != Some(&22) || record.len() < 9 {
        return record.first() == Some(&22);
    }
    let len = usize::from(u16::from_be_bytes([record[3], record[4]]));
    if record.len() < 5 + len || record[5] != 1 {
        return record.len() < 5 + len;
    }
    let hello =
        (usize::from(record[6]) << 16) | (usize::from(record[7]) << 8) | usize::from(record[8]);
    hello + 4 > len
}

/// A byte reader over a slice; every read past the end is `None`.
struct Cursor<'a> {
    bytes: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.bytes.len() < n {
            return None;
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Some(head)
    }
    fn u8(&mut self) -> Option<usize> {
        self.take(1).map(|b| usize::from(b[0]))
    }
    fn u16(&mut self) -> Option<usize> {
        self.take(2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
    }
    fn u24(&mut self) -> Option<usize> {
        self.take(3)
            .map(|b| (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]))
    }
    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(n)
    }
    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(n)
    }
}

/// The host name a TLS record holding a whole ClientHello names, if it
/// names one. A ClientHello spread over several records is not read (its
/// name is then `None`, as for a hello without one).
pub fn server_name(record: &[u8]) -> Option<String> {
    let mut r = Cursor { bytes: record };
    if r.u8()? != 22 {
        return None;
    }
    r.take(2)?; // legacy record version
    let body = r.vec16()?;
    let mut h = Cursor { bytes: body };
    if h.u8()? != 1 {
        return None; // not a ClientHello
    }
    let len = h.u24()?;
    let hello = h.take(len)?;
    let mut c = Cursor { bytes: hello };
    c.take(2)?; // legacy version
    c.take(32)?; // random
    c.vec8()?; // session id
    c.vec16()?; // cipher suites
    c.vec8()?; // compression methods
    let extensions = c.vec16()?;
    let mut e = Cursor { bytes: extensions };
    while !e.bytes.is_empty() {
        let kind = e.u16()?;
        let data = e.vec16()?;
        if kind != 0 {
            continue;
        }
        let mut s = Cursor { bytes: data };
        let list = s.vec16()?;
        let mut l = Cursor { bytes: list };
        while !l.bytes.is_empty() {
            let name_type = l.u8()?;
            let name = l.vec16()?;
            if name_type == 0 {
                return std::str::from_utf8(name).ok().map(str::to_string);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ClientHello record as a client writes it, with `sni` if given.
    pub(crate) fn hello(sni: Option<&str>) -> Vec<u8> {
        let mut ext = Vec::new();
        if let Some(name) = sni {
            let mut entry = vec![0u8];
            entry.extend_from_slice(&(name.len() as u16).to_be_bytes());
            entry.extend_from_slice(name.as_bytes());
            let mut list = (entry.len() as u16).to_be_bytes().to_vec();
            list.extend_from_slice(&entry);
            ext.extend_from_slice(&0u16.to_be_bytes());
            ext.extend_from_slice(&(list.len() as u16).to_be_bytes());
            ext.extend_from_slice(&list);
        }
        // A supported_versions extension before nothing else, to be skipped.
        ext.extend_from_slice(&[0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04]);
        let mut hello = vec![0x03, 0x03];
        hello.extend_from_slice(&[7u8; 32]);
        hello.extend_from_slice(&[0]); // session id
        hello.extend_from_slice(&[0, 2, 0x13, 0x01]); // one suite
        hello.extend_from_slice(&[1, 0]); // null compression
        hello.extend_from_slice(&(ext.len() as u16).to_be_bytes());
        hello.extend_from_slice(&ext);
        let mut hs = vec![1u8];
        hs.extend_from_slice(&(hello.len() as u32).to_be_bytes()[1..]);
        hs.extend_from_slice(&hello);
        let mut rec = vec![22, 3, 1];
        rec.extend_from_slice(&(hs.len() as u16).to_be_bytes());
        rec.extend_from_slice(&hs);
        rec
    }

    #[test]
    fn the_server_name_is_read_and_truncations_are_none() {
        let rec = hello(Some("api.github.com"));
        assert_eq!(server_name(&rec).as_deref(), Some("api.github.com"));
        assert_eq!(server_name(&hello(None)), None);
        for cut in 0..rec.len() {
            assert_eq!(server_name(&rec[..cut]), None, "cut at {cut}");
        }
        let mut not_hello = rec.clone();
        not_hello[5] = 2;
        assert_eq!(server_name(&not_hello), None);
        assert_eq!(server_name(b"SSH-2.0-OpenSSH\r\n"), None);
        assert!(!is_unreadable_hello(&rec));
        assert!(!is_unreadable_hello(b"SSH-2.0-OpenSSH\r\n"));
        assert!(is_unreadable_hello(&rec[..20]));
        // A hello announced longer than its record.
        let mut split = rec.clone();
        split[7] = 0x7f;
        assert!(is_unreadable_hello(&split));
    }
}
