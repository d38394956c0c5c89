//! HTTP through the proxy: `CONNECT host:port` tunnels and plain requests
//! in absolute form (`GET http://host/path HTTP/1.1`).

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};

use crate::{join, join_checked, open, retrying, Gate, Refused, Via};

/// The largest request head read (request line and headers).
const MAX_HEAD: usize = 64 * 1024;

/// A request head: its lines, and the bytes read after it.
struct Head {
    method: String,
    target: String,
    version: String,
    headers: Vec<(String, String)>,
    rest: Vec<u8>,
}

fn read_head(stream: &mut TcpStream) -> io::Result<Option<Head>> {
    let mut buf = Vec::with_capacity(2048);
    let mut chunk = [0u8; 2048];
    let end = loop {
        if let Some(at) = find(&buf, b"\r\n\r\n") {
            break at;
        }
        if buf.len() > MAX_HEAD {
            return Ok(None);
        }
        let n = retrying(|| stream.read(&mut chunk))?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let rest = buf[end + 4..].to_vec();
    let Ok(text) = std::str::from_utf8(&buf[..end]) else {
        return Ok(None);
    };
    let mut lines = text.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (first.next(), first.next(), first.next(), first.next())
    else {
        return Ok(None);
    };
    let mut headers = Vec::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Ok(None);
        };
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    Ok(Some(Head {
        method: method.to_string(),
        target: target.to_string(),
        version: version.to_string(),
        headers,
        rest,
    }))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn respond(stream: &mut TcpStream, status: &str, body: &str) -> io::Result<()> {
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(text.as_bytes())?;
    stream.flush()
}

fn forbid(stream: &mut TcpStream, refused: &Refused) -> io::Result<()> {
    respond(stream, "403 Forbidden", &refused.body())
}

/// `host:port` of an authority (`[v6]:port`, `host:port`, `host` with
/// `default`).
fn authority(text: &str, default: Option<u16>) -> Option<(String, u16)> {
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default?,
            None => return None,
        };
        return Some((host.to_string(), port));
    }
    match text.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => Some((host.to_string(), port.parse().ok()?)),
        Some(_) => None,
        None => Some((text.to_string(), default?)),
    }
}

pub(crate) fn serve<G: Gate + ?Sized>(
    mut client: TcpStream,
    peer: Option<SocketAddr>,
    gate: &G,
) -> io::Result<()> {
    let Some(head) = read_head(&mut client)? else {
        return respond(
            &mut client,
            "400 Bad Request",
            "sandgate: not an HTTP request\n",
        );
    };
    if head.method.eq_ignore_ascii_case("CONNECT") {
        let Some((host, port)) = authority(&head.target, None) else {
            return respond(
                &mut client,
                "400 Bad Request",
                "sandgate: CONNECT needs host:port\n",
            );
        };
        let (upstream, target) = match open(gate, &host, port, Via::Connect, peer) {
            Ok(ok) => ok,
            Err(refused) => return forbid(&mut client, &refused),
        };
        client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
        return join_checked(
            gate,
            client,
            upstream,
            head.rest,
            &target,
            port,
            Via::Connect,
            peer,
        );
    }
    plain(client, head, peer, gate)
}

/// A plain request in absolute form: checked by its URL's host, sent on
/// with `Connection: close` so the next request is checked too.
fn plain<G: Gate + ?Sized>(
    mut client: TcpStream,
    head: Head,
    peer: Option<SocketAddr>,
    gate: &G,
) -> io::Result<()> {
    let Some(after) = head
        .target
        .strip_prefix("http://")
        .or_else(|| head.target.strip_prefix("HTTP://"))
    else {
        let body = if head.target.starts_with('/') {
            "sandgate: this is a proxy; send the request with an absolute URL \
             (http://host/path), or CONNECT host:port for a tunnel\n"
        } else {
            "sandgate: only http:// URLs and CONNECT go through this proxy\n"
        };
        return respond(&mut client, "400 Bad Request", body);
    };
    let (auth, path) = match after.find(['/', '?', '#']) {
        Some(i) => (&after[..i], &after[i..]),
        None => (after, "/"),
    };
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    if auth.contains('@') {
        return respond(
            &mut client,
            "400 Bad Request",
            "sandgate: a URL with user information is not sent through\n",
        );
    }
    let Some((host, port)) = authority(auth, Some(80)) else {
        return respond(&mut client, "400 Bad Request", "sandgate: bad URL host\n");
    };
    // The Host header must name the URL's host: a server picks its site by it.
    for (name, value) in &head.headers {
        if name.eq_ignore_ascii_case("host") {
            let same = authority(value, Some(port)).is_some_and(|(h, p)| {
                p == port
                    && h.trim_end_matches('.')
                        .eq_ignore_ascii_case(host.trim_end_matches('.'))
            });
            if !same {
                let refused = Refused {
                    host_port: format!("{host}:{port}"),
                    reason: format!("the Host header `{value}` names another host than the URL"),
                    allow_with: None,
                };
                return forbid(&mut client, &refused);
            }
        }
    }
    let (mut upstream, _) = match open(gate, &host, port, Via::Http, peer) {
        Ok(ok) => ok,
        Err(refused) => return forbid(&mut client, &refused),
    };
    let mut out = format!("{} {} {}\r\n", head.method, path, head.version);
    let mut has_host = false;
    for (name, value) in &head.headers {
        let lower = name.to_ascii_lowercase();
        if lower == "proxy-connection" || lower == "proxy-authorization" || lower == "connection" {
            continue;
        }
        if lower == "host" {
            has_host = true;
        }
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    if !has_host {
        out.push_str(&format!("Host: {auth}\r\n"));
    }
    out.push_str("Connection: close\r\n\r\n");
    upstream.write_all(out.as_bytes())?;
    join(client, upstream, &head.rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_split_host_and_port() {
        assert_eq!(authority("a.com:443", None), Some(("a.com".into(), 443)));
        assert_eq!(authority("a.com", Some(80)), Some(("a.com".into(), 80)));
        assert_eq!(authority("a.com", None), None);
        assert_eq!(authority("[::1]:8080", None), Some(("::1".into(), 8080)));
        assert_eq!(authority("[::1]", Some(80)), Some(("::1".into(), 80)));
        assert_eq!(authority("::1:80", None), None);
        assert_eq!(authority("a.com:x", None), None);
        assert_eq!(authority("a.com:99999", None), None);
    }
}
