//! Moving a joined connection's bytes from one socket to the other, once
//! every check is done: with `splice(2)` through a pipe, so the bytes stay
//! in the kernel (no copy into sandgate and out again), or, where the
//! kernel cannot splice these sockets (`EINVAL`, `ENOSYS`), through a
//! buffer.
//!
//! The pipe starts at the kernel's default capacity (64 KiB). A relay that
//! has moved [`GROW_AFTER`] bytes is a bulk transfer: its pipe grows to
//! [`LARGE`], so each splice moves more and the relay wakes less often (a
//! 100 MiB download through the proxy takes about 5% less time than with a
//! 256 KiB pipe for every relay, BENCHMARKS.md). At most [`MAX_LARGE`]
//! pipes are large at once, and a pipe shrinks back when its relay ends:
//! every pipe's capacity counts against its user's `pipe-user-pages-soft`
//! (64 MiB by default), and past it every new pipe of that user, in any
//! program, gets one page (pipe(7)).

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicUsize, Ordering};

use rustix::io::Errno;
use rustix::pipe::{fcntl_setpipe_size, pipe_with, splice, PipeFlags, SpliceFlags};

/// The capacity of a new pipe (the kernel's default): a splice moves at most
/// this much.
const SMALL: usize = 64 * 1024;

/// The capacity a bulk transfer's pipe grows to. The kernel may refuse it
/// (an unprivileged user past `pipe-user-pages-soft`): the pipe then stays
/// small.
const LARGE: usize = 1024 * 1024;

/// What a relay moves before its pipe grows.
const GROW_AFTER: u64 = 1024 * 1024;

/// How many pipes may be large at once, in this process.
const MAX_LARGE: usize = 8;

/// The pipes large now.
static LARGE_NOW: AtomicUsize = AtomicUsize::new(0);

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
    let mut pipe = Capacity::Small;
    let done = through_pipe(from, to, &read_end, &write_end, &mut pipe);
    let small = pipe.shrink(&write_end, &LARGE_NOW);
    match done {
        Moved::All(total) => {
            if small {
                // Empty again, and small: kept for this thread's next connection.
                KEPT.with(|kept| kept.set(Some((read_end, write_end))));
            }
            Ok(total)
        }
        Moved::Failed(e) => Err(e),
        Moved::CannotSplice { total, left } => {
            // What the pipe holds goes out through the buffer first.
            drain(read_end, left, to)?;
            copy(from, to, total)
        }
    }
}

/// How a relay through the pipe ended.
enum Moved {
    /// `from` ended; the pipe is empty.
    All(u64),
    /// Either socket failed.
    Failed(io::Error),
    /// The kernel cannot splice these sockets: `total` bytes were moved,
    /// `left` of them are still in the pipe.
    CannotSplice { total: u64, left: usize },
}

fn through_pipe(
    from: &TcpStream,
    to: &TcpStream,
    read_end: &OwnedFd,
    write_end: &OwnedFd,
    pipe: &mut Capacity,
) -> Moved {
    let mut total = 0u64;
    loop {
        if total >= GROW_AFTER {
            pipe.grow(write_end, &LARGE_NOW);
        }
        let n = match splice(from, None, write_end, None, pipe.size(), SpliceFlags::MOVE) {
            Ok(0) => return Moved::All(total),
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(e) if cannot_splice(e) => return Moved::CannotSplice { total, left: 0 },
            Err(e) => return Moved::Failed(e.into()),
        };
        let mut left = n;
        while left > 0 {
            match splice(read_end, None, to, None, left, SpliceFlags::MOVE) {
                Ok(0) => return Moved::Failed(io::ErrorKind::WriteZero.into()),
                Ok(m) => left -= m,
                Err(Errno::INTR) => {}
                Err(e) if cannot_splice(e) => {
                    return Moved::CannotSplice {
                        total: total + n as u64,
                        left,
                    }
                }
                Err(e) => return Moved::Failed(e.into()),
            }
        }
        total += n as u64;
    }
}

/// The capacity of a relay's pipe.
enum Capacity {
    Small,
    /// Grown to [`LARGE`], holding one of the [`MAX_LARGE`] places.
    Large,
    /// Growing was refused (no place left, or the kernel said no): small
    /// for the rest of this relay.
    StaysSmall,
}

impl Capacity {
    /// What one splice moves at most.
    fn size(&self) -> usize {
        match self {
            Capacity::Large => LARGE,
            Capacity::Small | Capacity::StaysSmall => SMALL,
        }
    }

    /// Grow the pipe, once, if one of the places counted in `large_now`
    /// is free and the kernel agrees.
    fn grow(&mut self, write_end: &OwnedFd, large_now: &AtomicUsize) {
        if !matches!(self, Capacity::Small) {
            return;
        }
        let taken = large_now.fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
            (now < MAX_LARGE).then_some(now + 1)
        });
        *self = match taken {
            Ok(_) if fcntl_setpipe_size(write_end, LARGE).is_ok() => {
                #[cfg(test)]
                tests::GREW.with(|grew| grew.set(true));
                Capacity::Large
            }
            Ok(_) => {
                large_now.fetch_sub(1, Ordering::AcqRel);
                Capacity::StaysSmall
            }
            Err(_) => Capacity::StaysSmall,
        };
    }

    /// Give a large pipe's place back, shrinking it (which the kernel
    /// refuses while it holds more than the small size). True when the pipe
    /// is small now.
    fn shrink(&mut self, write_end: &OwnedFd, large_now: &AtomicUsize) -> bool {
        if !matches!(self, Capacity::Large) {
            return true;
        }
        large_now.fetch_sub(1, Ordering::AcqRel);
        *self = Capacity::StaysSmall;
        fcntl_setpipe_size(write_end, SMALL).is_ok()
    }
}

thread_local! {
    /// The empty pipe of this thread's last relay (a thread relays one
    /// connection at a time, and the threads are kept): no pipe made and
    /// closed for each connection. A relay that ends with bytes in its
    /// pipe (an error), or with a pipe it could not shrink, closes it
    /// instead.
    static KEPT: std::cell::Cell<Option<(OwnedFd, OwnedFd)>> =
        const { std::cell::Cell::new(None) };
}

/// A new pipe, of the kernel's default capacity.
fn new_pipe() -> Option<(OwnedFd, OwnedFd)> {
    pipe_with(PipeFlags::CLOEXEC).ok()
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

    thread_local! {
        /// A pipe of this thread's relays grew.
        pub(super) static GREW: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

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

    /// The capacity of the pipe whose write end is `write_end`.
    fn capacity(write_end: &OwnedFd) -> usize {
        rustix::pipe::fcntl_getpipe_size(write_end).unwrap()
    }

    #[test]
    fn a_bulk_transfer_grows_its_pipe_and_leaves_it_small() {
        let (mut writer, from) = pair();
        let (to, mut reader) = pair();
        let (fed_tx, fed) = mpsc::channel();
        std::thread::spawn(move || {
            // Sent, and (dropped) ended.
            let _ = fed_tx.send(writer.write_all(&vec![7u8; 3 << 20]).is_ok());
        });
        let (read_tx, read) = mpsc::channel();
        std::thread::spawn(move || {
            let mut got = Vec::new();
            let _ = read_tx.send(reader.read_to_end(&mut got).map(|_| got.len()).ok());
        });
        GREW.with(|grew| grew.set(false));
        assert_eq!(relay(&from, &to).unwrap(), 3 << 20);
        assert!(GREW.with(|grew| grew.get()), "the pipe grew");
        to.shutdown(Shutdown::Write).unwrap();
        assert!(fed.recv_timeout(LIMIT).unwrap());
        assert_eq!(read.recv_timeout(LIMIT).unwrap(), Some(3 << 20));
        KEPT.with(|kept| {
            let pipe = kept.take().expect("the pipe is kept");
            assert_eq!(capacity(&pipe.1), SMALL, "the kept pipe is small again");
        });
    }

    #[test]
    fn no_more_than_the_places_grow_and_a_shrunk_pipe_gives_its_place_back() {
        static PLACES: AtomicUsize = AtomicUsize::new(0);
        let pipes: Vec<_> = (0..MAX_LARGE + 1).map(|_| new_pipe().unwrap()).collect();
        let mut sizes: Vec<Capacity> = (0..pipes.len()).map(|_| Capacity::Small).collect();
        for (size, (_, write_end)) in sizes.iter_mut().zip(&pipes) {
            size.grow(write_end, &PLACES);
        }
        for (i, (size, (_, write_end))) in sizes.iter().zip(&pipes).enumerate() {
            let (expected, moves) = if i < MAX_LARGE {
                (LARGE, LARGE)
            } else {
                (SMALL, SMALL)
            };
            assert_eq!(capacity(write_end), expected, "pipe {i}");
            assert_eq!(size.size(), moves, "pipe {i}");
        }
        assert_eq!(PLACES.load(Ordering::Acquire), MAX_LARGE);
        // The last was refused for this relay: it does not grow later.
        let (_, last_write) = pipes.last().unwrap();
        assert!(sizes[0].shrink(&pipes[0].1, &PLACES));
        sizes.last_mut().unwrap().grow(last_write, &PLACES);
        assert_eq!(capacity(last_write), SMALL);
        assert_eq!(capacity(&pipes[0].1), SMALL, "shrunk");
        assert_eq!(
            PLACES.load(Ordering::Acquire),
            MAX_LARGE - 1,
            "its place given back"
        );
        // A new relay's pipe takes the free place.
        let mut next = Capacity::Small;
        next.grow(&pipes[0].1, &PLACES);
        assert_eq!(capacity(&pipes[0].1), LARGE);
        for (size, (_, write_end)) in sizes.iter_mut().zip(&pipes).skip(1) {
            assert!(size.shrink(write_end, &PLACES));
        }
        assert!(next.shrink(&pipes[0].1, &PLACES));
        assert_eq!(PLACES.load(Ordering::Acquire), 0);
    }

    #[test]
    fn the_copy_moves_every_byte_where_splice_cannot() {
        // What the relay falls back to after EINVAL or ENOSYS.
        let copied = |from: &TcpStream, to: &TcpStream| copy(from, to, 7);
        assert_eq!(moved_through(3 << 20, copied).unwrap(), 7 + (3 << 20));
    }
}
