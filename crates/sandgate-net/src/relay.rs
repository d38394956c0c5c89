//! Moving a joined connection's bytes from one socket to the other, once
//! every check is done: with `splice(2)` through a pipe, so the bytes stay
//! in the kernel (no copy into sandgate and out again), or, where the
//! kernel cannot splice these sockets (`EINVAL`, `ENOSYS`), through a
//! buffer.

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::OwnedFd;

use rustix::io::Errno;
use rustix::pipe::{fcntl_setpipe_size, pipe_with, splice, PipeFlags, SpliceFlags};

/// The pipe's capacity asked for: a splice moves at most this much. The
/// kernel may refuse it (an unprivileged user past `pipe-user-pages-soft`):
/// the pipe then keeps its default (64 KiB).
const PIPE_SIZE: usize = 256 * 1024;

/// The buffer of the copy where splicing cannot be done.
const BUFFER: usize = 64 * 1024;

/// Move what `from` sends to `to` until `from` ends (`Ok`, with the number
/// of bytes moved) or either fails (`Err`). The caller shuts `to` down.
pub(crate) fn relay(from: &TcpStream, to: &TcpStream) -> io::Result<u64> {
    let kept = KEPT.with(|kept| kept.take());
    let Some((read_end, write_end)) = kept.or_else(new_pipe) else {
        // No descriptor for a pipe: the copy needs none.
        return copy(from, to, 0);
    };
    let mut total = 0u64;
    loop {
        let n = match splice(from, None, &write_end, None, PIPE_SIZE, SpliceFlags::MOVE) {
            Ok(0) => {
                // Empty again: kept for this thread's next connection.
                KEPT.with(|kept| kept.set(Some((read_end, write_end))));
                return Ok(total);
            }
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(e) if cannot_splice(e) => return copy(from, to, total),
            Err(e) => return Err(e.into()),
        };
        let mut left = n;
        while left > 0 {
            match splice(&read_end, None, to, None, left, SpliceFlags::MOVE) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(m) => left -= m,
                Err(Errno::INTR) => {}
                Err(e) if cannot_splice(e) => {
                    // What the pipe holds goes out through the buffer first.
                    drain(read_end, left, to)?;
                    return copy(from, to, total + n as u64);
                }
                Err(e) => return Err(e.into()),
            }
        }
        total += n as u64;
    }
}

thread_local! {
    /// The empty pipe of this thread's last relay (a thread relays one
    /// connection at a time, and the threads are kept): no pipe made and
    /// closed for each connection. A relay that ends with bytes in its
    /// pipe (an error) closes it instead.
    static KEPT: std::cell::Cell<Option<(OwnedFd, OwnedFd)>> =
        const { std::cell::Cell::new(None) };
}

/// A new pipe, as large as the kernel lets it be made.
fn new_pipe() -> Option<(OwnedFd, OwnedFd)> {
    let (read_end, write_end) = pipe_with(PipeFlags::CLOEXEC).ok()?;
    let _ = fcntl_setpipe_size(&write_end, PIPE_SIZE);
    Some((read_end, write_end))
}

/// The kernel cannot splice between these descriptors.
fn cannot_splice(e: Errno) -> bool {
    e == Errno::INVAL || e == Errno::NOSYS
}

/// Write the `left` bytes the pipe's `read_end` holds to `to`.
fn drain(read_end: OwnedFd, left: usize, mut to: &TcpStream) -> io::Result<()> {
    let mut pipe = File::from(read_end);
    let mut held = vec![0u8; left];
    pipe.read_exact(&mut held)?;
    to.write_all(&held)
}

/// The copy through a buffer, counting on from `total`.
fn copy(mut from: &TcpStream, mut to: &TcpStream, mut total: u64) -> io::Result<u64> {
    let mut buf = vec![0u8; BUFFER];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buf[..n])?;
        total += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Shutdown, TcpListener};
    use std::sync::mpsc;
    use std::time::Duration;

    const LIMIT: Duration = Duration::from_secs(120);

    /// A connected pair of loopback sockets; a read or write that waits
    /// a minute fails.
    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (b, _) = listener.accept().unwrap();
        for s in [&a, &b] {
            s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
            s.set_write_timeout(Some(Duration::from_secs(60))).unwrap();
        }
        (a, b)
    }

    /// Sends `size` patterned bytes into one socket, has `mover` move them
    /// to another, and checks that every byte arrives, in order, and that
    /// the end of the sender reaches the reader. Returns what `mover` said.
    fn moved_through(
        size: u32,
        mover: fn(&TcpStream, &TcpStream) -> io::Result<u64>,
    ) -> io::Result<u64> {
        let (mut writer, from) = pair();
        let (to, mut reader) = pair();
        let sent: Vec<u8> = (0..size)
            .map(|i| (i.wrapping_mul(13) % 251) as u8)
            .collect();
        let expected = sent.clone();
        let (fed_tx, fed) = mpsc::channel();
        std::thread::spawn(move || {
            let done = writer
                .write_all(&sent)
                .and_then(|_| writer.shutdown(Shutdown::Write));
            let _ = fed_tx.send(done);
        });
        let (moved_tx, moved) = mpsc::channel();
        std::thread::spawn(move || {
            let done = mover(&from, &to);
            let _ = to.shutdown(Shutdown::Write);
            let _ = moved_tx.send(done);
        });
        let mut got = Vec::new();
        reader.read_to_end(&mut got).unwrap();
        fed.recv_timeout(LIMIT).unwrap().unwrap();
        let said = moved.recv_timeout(LIMIT).unwrap();
        assert_eq!(got.len(), expected.len(), "bytes lost or added");
        assert!(got == expected, "bytes changed on the way");
        said
    }

    #[test]
    fn splice_moves_every_byte_and_ends_with_the_sender() {
        assert_eq!(moved_through(5 << 20, relay).unwrap(), 5 << 20);
    }

    /// The raw descriptors of this thread's kept pipe, if it keeps one.
    fn kept_pipe() -> Option<(i32, i32)> {
        use std::os::fd::AsRawFd;
        KEPT.with(|kept| {
            let pipe = kept.take();
            let raw = pipe.as_ref().map(|(r, w)| (r.as_raw_fd(), w.as_raw_fd()));
            kept.set(pipe);
            raw
        })
    }

    #[test]
    fn a_thread_keeps_its_empty_pipe_for_its_next_relay() {
        let once = |text: &[u8]| {
            let (mut writer, from) = pair();
            let (to, mut reader) = pair();
            writer.write_all(text).unwrap();
            writer.shutdown(Shutdown::Write).unwrap();
            assert_eq!(relay(&from, &to).unwrap(), text.len() as u64);
            to.shutdown(Shutdown::Write).unwrap();
            let mut got = Vec::new();
            reader.read_to_end(&mut got).unwrap();
            assert_eq!(got, text);
        };
        assert_eq!(kept_pipe(), None, "a new thread keeps no pipe");
        once(b"first");
        let kept = kept_pipe().expect("the empty pipe is kept");
        once(b"second, through the same pipe");
        assert_eq!(kept_pipe(), Some(kept));
    }

    #[test]
    fn the_copy_moves_every_byte_where_splice_cannot() {
        // What the relay falls back to after EINVAL or ENOSYS.
        let copied = |from: &TcpStream, to: &TcpStream| copy(from, to, 7);
        assert_eq!(moved_through(3 << 20, copied).unwrap(), 7 + (3 << 20));
    }
}
