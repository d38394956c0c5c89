//! SOCKS5 (RFC 1928) `CONNECT`, by name (`socks5h://`) or address; no
//! authentication. `BIND` and `UDP ASSOCIATE` are refused: UDP does not
//! leave a contained program's namespace.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};

use crate::{join_checked, open, Gate, Via};

const NOT_ALLOWED: u8 = 2;
const HOST_UNREACHABLE: u8 = 4;
const COMMAND_NOT_SUPPORTED: u8 = 7;
const ADDRESS_NOT_SUPPORTED: u8 = 8;

fn reply(stream: &mut TcpStream, code: u8) -> io::Result<()> {
    stream.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0])?;
    stream.flush()
}

pub(crate) fn serve<G: Gate + ?Sized>(
    mut client: TcpStream,
    peer: Option<SocketAddr>,
    gate: &G,
) -> io::Result<()> {
    let mut greeting = [0u8; 2];
    client.read_exact(&mut greeting)?;
    let mut methods = vec![0u8; usize::from(greeting[1])];
    client.read_exact(&mut methods)?;
    if !methods.contains(&0) {
        // No method sandgate speaks ("no authentication" only).
        client.write_all(&[5, 0xff])?;
        return Ok(());
    }
    client.write_all(&[5, 0])?;
    let mut request = [0u8; 4];
    client.read_exact(&mut request)?;
    if request[0] != 5 {
        return Ok(());
    }
    let host = match request[3] {
        1 => {
            let mut a = [0u8; 4];
            client.read_exact(&mut a)?;
            Ipv4Addr::from(a).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            client.read_exact(&mut len)?;
            let mut name = vec![0u8; usize::from(len[0])];
            client.read_exact(&mut name)?;
            String::from_utf8_lossy(&name).into_owned()
        }
        4 => {
            let mut a = [0u8; 16];
            client.read_exact(&mut a)?;
            Ipv6Addr::from(a).to_string()
        }
        _ => return reply(&mut client, ADDRESS_NOT_SUPPORTED),
    };
    let mut port = [0u8; 2];
    client.read_exact(&mut port)?;
    let port = u16::from_be_bytes(port);
    if request[1] != 1 {
        return reply(&mut client, COMMAND_NOT_SUPPORTED);
    }
    let (upstream, target) = match open(gate, &host, port, Via::Socks, peer) {
        Ok(ok) => ok,
        Err(refused) => {
            let code = if refused.reason.contains("connection failed") {
                HOST_UNREACHABLE
            } else {
                NOT_ALLOWED
            };
            return reply(&mut client, code);
        }
    };
    reply(&mut client, 0)?;
    join_checked(
        gate,
        client,
        upstream,
        Vec::new(),
        &target,
        port,
        Via::Socks,
        peer,
    )
}
