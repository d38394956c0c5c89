//! Protected paths under exec isolation, including those missing at start:
//! the supervisor performs each system call that makes a name (`open` and
//! `openat` with `O_CREAT`, `creat`, `mkdir`, `mknod`, `symlink`, `link`,
//! `rename`, in every spelling, and `bind` of a UNIX socket when
//! `unix_sockets` lets the command make one) on the command's behalf, after
//! judging the names it would make or move.
//!
//! Landlock cannot refuse one name in a writable directory, and a read-only
//! bind needs the path to exist, so a missing `.mcp.json` or `.git/hooks`
//! could otherwise be created, and renaming `.git` away would carry the
//! binds of its existing protected paths with it.
//!
//! The supervisor never lets the kernel continue such a call, since the
//! kernel would read the path again from memory another thread can change.
//! The shared decoder ([`crate::supervisor::decode`]) says which call it is;
//! this module reads its paths once, resolves the parent directory once, in the command's own root and
//! mount namespace (`/proc/TID/root`, so the read-only mounts and binds hold
//! for what it does too), judges the resulting path, and then makes the name
//! through that directory's descriptor, with the command's umask and no
//! capabilities, and hands an opened file back with `SECCOMP_IOCTL_NOTIF_ADDFD`.
//! What Landlock would decide for the command, the judgement decides here:
//! names are made only in the writable trees, never in a denied directory,
//! and `/dev/null` and `/dev/tty` stay writable.
//!
//! `openat2` fails with `ENOSYS` (its flags are in memory, where the filter
//! cannot read them), and the C library and most programs fall back to
//! `openat`.
//!
//! This module contains `unsafe` code: the per-thread `umask` (each
//! answering thread has its own file-system context,
//! [`crate::supervisor::caller::own_fs_context`]), and reading a symbolic
//! link.

#![allow(unsafe_code)]

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use crate::notify::{self, Listener, Notif};
use crate::plan::Plan;
pub use crate::supervisor::caller::own_fs_context;
use crate::supervisor::decode::Syscall;
use crate::supervisor::perform::{self, Act, At, Done, LastName};

/// What a path is to an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A directory made (`mkdir`).
    Made,
    /// A name made that is not a directory (`open` with `O_CREAT`, `mknod`,
    /// `bind`): never above a protected path, where a file `.git` saying
    /// `gitdir: elsewhere` would send git to hooks and a config of the
    /// command's choosing.
    MadeFile,
    /// A name made or replaced with something prepared elsewhere: the new
    /// name of a `rename`, of a `link`, of a `symlink`.
    Placed,
    /// The old name of a `rename`.
    Moved,
    /// The existing file of a `link`.
    Linked,
}

/// Exec isolation judges the names a command makes by its plan: names are
/// made only in the writable trees ([`Plan::writable`]), never in a denied
/// directory or file ([`Plan::denied`]), never at or beneath a protected
/// path ([`Plan::protected`], whether or not it exists), and the single
/// writable files ([`Plan::writable_files`]) may be opened to write.
impl Plan {
    fn protects(&self, path: &Path) -> bool {
        self.protected.iter().any(|p| path.starts_with(&p.path))
    }

    fn holds_protected(&self, path: &Path) -> bool {
        self.protected
            .iter()
            .any(|p| p.path != path && p.path.starts_with(path))
    }

    fn in_writable(&self, path: &Path) -> bool {
        self.writable.iter().any(|w| path.starts_with(w))
    }

    fn in_denied(&self, path: &Path) -> bool {
        self.denied.iter().any(|d| path.starts_with(&d.path))
    }

    /// Judges a name `path` (absolute, its parent's symlinks resolved) made
    /// or moved in `role`: `Err` is the errno the command gets.
    pub fn judge_name(&self, path: &Path, role: Role) -> Result<(), i32> {
        if self.protects(path) || self.in_denied(path) {
            return Err(libc::EACCES);
        }
        match role {
            Role::Made => {}
            Role::MadeFile | Role::Placed | Role::Moved => {
                // Moving a directory above a protected path, or putting
                // something prepared in its place, moves the protection or
                // brings in what it would have refused.
                if self.holds_protected(path) {
                    return Err(libc::EACCES);
                }
            }
            Role::Linked => {
                // Another mount in the command's view: the kernel says EXDEV.
                if !self.in_writable(path) {
                    return Err(libc::EXDEV);
                }
                return Ok(());
            }
        }
        let parent = path.parent().unwrap_or(path);
        if self.in_writable(parent) && parent != path {
            Ok(())
        } else {
            Err(libc::EACCES)
        }
    }
}

/// The system calls handed to the supervisor when paths are protected.
pub const NOTIFIED: &[libc::c_long] = &[
    libc::SYS_creat,
    libc::SYS_mkdir,
    libc::SYS_mkdirat,
    libc::SYS_mknod,
    libc::SYS_mknodat,
    libc::SYS_symlink,
    libc::SYS_symlinkat,
    libc::SYS_link,
    libc::SYS_linkat,
    libc::SYS_rename,
    libc::SYS_renameat,
    libc::SYS_renameat2,
];

/// The command thread `tid`, as the supervisor reaches it.
struct Caller<'a> {
    tid: u32,
    root: &'a OwnedFd,
}

/// A name in a directory the supervisor holds open, with the directory's path.
struct Place {
    dir: OwnedFd,
    path: PathBuf,
    name: CString,
}

impl Place {
    /// Where the shared performer makes the name.
    fn at(&self) -> At<'_> {
        At {
            dir: self.dir.as_fd(),
            name: OsStr::from_bytes(self.name.as_bytes()),
        }
    }

    fn full(&self) -> PathBuf {
        self.path.join(OsStr::from_bytes(self.name.as_bytes()))
    }
}

impl Caller<'_> {
    /// The command's view of where directory `dirfd` is (`AT_FDCWD`: its
    /// working directory).
    fn base_path(&self, dirfd: i32) -> Result<PathBuf, i32> {
        let link = match dirfd {
            libc::AT_FDCWD => format!("/proc/{}/cwd", self.tid),
            fd if fd >= 0 => format!("/proc/{}/fd/{fd}", self.tid),
            _ => return Err(libc::EBADF),
        };
        let path = std::fs::read_link(&link).map_err(|_| libc::EBADF)?;
        if !path.is_absolute() || path.to_string_lossy().ends_with(" (deleted)") {
            return Err(libc::ENOENT);
        }
        Ok(path)
    }

    /// Resolves `path` (from directory `base`) to its parent directory,
    /// held open, and its last name; with `follow`, a last name that is a
    /// symbolic link is followed (up to 40 links), as the kernel would.
    fn place(&self, base: i32, path: &[u8], follow: bool) -> Result<Place, i32> {
        if path.is_empty() {
            return Err(libc::ENOENT);
        }
        let mut absolute = if path.first() == Some(&b'/') {
            PathBuf::from(OsStr::from_bytes(path))
        } else {
            self.base_path(base)?.join(OsStr::from_bytes(path))
        };
        for _ in 0..40 {
            let (parent, name) = split(&absolute)?;
            let rel = parent.strip_prefix("/").unwrap_or(&parent);
            let rel = if rel.as_os_str().is_empty() {
                Path::new(".")
            } else {
                rel
            };
            let dir = crate::supervisor::caller::open_path(
                self.root.as_raw_fd(),
                rel,
                crate::supervisor::caller::RESOLVE_IN_ROOT
                    | crate::supervisor::caller::RESOLVE_NO_MAGICLINKS,
            )
            .map_err(errno)?;
            let dir_path = fd_path(&dir)?;
            let name = CString::new(name.into_vec()).map_err(|_| libc::EINVAL)?;
            if follow && entry(&dir, &name).is_some_and(|e| e.is_symlink()) {
                if let Some(target) = readlink_at(&dir, &name) {
                    absolute = if target.first() == Some(&b'/') {
                        PathBuf::from(OsString::from_vec(target))
                    } else {
                        dir_path.join(OsStr::from_bytes(&target))
                    };
                    continue;
                }
            }
            return Ok(Place {
                dir,
                path: dir_path,
                name,
            });
        }
        Err(libc::ELOOP)
    }
}

/// A field of `/proc/TID/status` (`field` with its colon), trimmed.
pub fn status_field(tid: u32, field: &str) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .map(|v| v.trim().to_string())
}

/// What the supervisor keeps between calls, all of it about the sandbox as
/// a whole, which no command in it can change: its root (no command can
/// `chroot`, `pivot_root` or enter a namespace), the threads past the
/// set-up (filters are never removed), and each thread's umask until any
/// thread calls `umask` (then all are read again).
#[derive(Debug, Default)]
pub struct Cache {
    root: Option<OwnedFd>,
    past_setup: std::collections::HashSet<u32>,
    umasks: std::collections::HashMap<u32, u32>,
    /// Until when umasks are read but not kept: a `umask` call continued
    /// a moment ago may not have taken effect yet.
    umask_settling: Option<std::time::Instant>,
}

impl Cache {
    fn root(&mut self, tid: u32) -> Result<&OwnedFd, i32> {
        if self.root.is_none() {
            let root = crate::supervisor::caller::open_path(
                libc::AT_FDCWD,
                Path::new(&format!("/proc/{tid}/root")),
                0,
            )
            .map_err(|_| libc::ESRCH)?;
            self.root = Some(root);
        }
        self.root.as_ref().ok_or(libc::ESRCH)
    }

    fn umask(&mut self, tid: u32) -> u32 {
        if let Some(umask) = self.umasks.get(&tid) {
            return *umask;
        }
        let umask = status_field(tid, "Umask:")
            .and_then(|v| u32::from_str_radix(&v, 8).ok())
            .unwrap_or(0o022);
        let settling = self
            .umask_settling
            .is_some_and(|until| std::time::Instant::now() < until);
        if !settling {
            self.umasks.insert(tid, umask);
        }
        umask
    }

    /// A thread is about to change its umask (and its file-system siblings'):
    /// forget every umask kept.
    pub fn umask_changes(&mut self) {
        self.umasks.clear();
        self.umask_settling =
            Some(std::time::Instant::now() + std::time::Duration::from_millis(100));
    }
}

/// The parent and the last name of `path`, `.` and `..` collapsed
/// lexically only where the kernel would not need the disk (a trailing
/// slash is dropped; a last name of `.` or `..` is refused).
fn split(path: &Path) -> Result<(PathBuf, OsString), i32> {
    let mut parent = PathBuf::from("/");
    let mut last: Option<OsString> = None;
    for c in path.components() {
        if let Some(prev) = last.take() {
            parent.push(prev);
        }
        match c {
            Component::RootDir | Component::Prefix(_) => {}
            Component::CurDir => last = None,
            Component::ParentDir => {
                parent.push("..");
            }
            Component::Normal(n) => last = Some(n.to_os_string()),
        }
    }
    match last {
        Some(name) => Ok((parent, name)),
        None => Err(libc::EEXIST),
    }
}

fn errno(e: io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EACCES)
}

/// The path of a descriptor the supervisor holds, as the command sees it.
fn fd_path(fd: &OwnedFd) -> Result<PathBuf, i32> {
    let path = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .map_err(|_| libc::ENOENT)?;
    if !path.is_absolute() || path.to_string_lossy().ends_with(" (deleted)") {
        return Err(libc::ENOENT);
    }
    Ok(path)
}

/// The target of `name` in `dir` if it is a symbolic link.
fn readlink_at(dir: &OwnedFd, name: &CString) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: `name` is NUL-terminated and `buf` has room for `buf.len()` bytes.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    let n = usize::try_from(n).ok()?;
    buf.truncate(n);
    Some(buf)
}

/// `name` in `dir` itself (a link not followed), if it exists.
fn entry(dir: &OwnedFd, name: &CString) -> Option<crate::beneath::Stat> {
    crate::beneath::stat_at(dir.as_fd(), OsStr::from_bytes(name.as_bytes()))
        .ok()
        .flatten()
}

/// Judges a name to be made: where it exists already, `EEXIST`, as the
/// kernel answers before it checks any permission (`mkdir -p` relies on it).
fn judge_new(plan: &Plan, place: &Place, role: Role) -> Result<(), i32> {
    plan.judge_name(&place.full(), role)
        .map_err(|e| if exists(place) { libc::EEXIST } else { e })
}

/// Whether an `open` with `O_CREAT` and `flags` may go ahead at `place`:
/// making the name is judged; where the file exists already and would
/// not be made, it may be `/dev/null` or `/dev/tty` opened to write, or a
/// file outside the protected paths and denied directories opened only to
/// read, as the kernel would let the command.
fn allowed_open(plan: &Plan, place: &Place, flags: i32) -> Result<(), i32> {
    let full = place.full();
    let refused = match plan.judge_name(&full, Role::MadeFile) {
        Ok(()) => return Ok(()),
        Err(e) => e,
    };
    if !exists(place) {
        return Err(refused);
    }
    if flags & libc::O_EXCL != 0 {
        return Err(libc::EEXIST);
    }
    let writing = flags & libc::O_ACCMODE != libc::O_RDONLY || flags & libc::O_TRUNC != 0;
    if plan.writable_files.contains(&full)
        || (!writing && !plan.protects(&full) && !plan.in_denied(&full))
    {
        Ok(())
    } else {
        Err(refused)
    }
}

fn exists(place: &Place) -> bool {
    entry(&place.dir, &place.name).is_some()
}

/// Whether the caller is the sandbox's own set-up: the wrapper, under no
/// filter but the supervisor's (the command runs under more).
fn in_setup(setup: Option<(u64, u64)>, cache: &mut Cache, tid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(setup) = setup else {
        return false;
    };
    if cache.past_setup.contains(&tid) {
        return false;
    }
    let filters = status_field(tid, "Seccomp_filters:").and_then(|v| v.parse::<u32>().ok());
    if filters.is_some_and(|f| f > 1) {
        // Under the command's filters for good: never the set-up again,
        // and neither is a later thread with this id (set-up is over).
        cache.past_setup.insert(tid);
        return false;
    }
    let exe = std::fs::metadata(format!("/proc/{tid}/exe")).map(|m| (m.dev(), m.ino()));
    exe.ok() == Some(setup) && filters.is_some()
}

/// Answers notified call `n`, decoded by the shared decoder as `call`
/// (`None`: a call it does not know): performs it for the command or fails
/// it, judged by `plan` (resolved, [`crate::plan::resolve_links`]). `setup`
/// is the wrapper that sets the sandbox up (`bwrap`, as device and inode):
/// its calls pass while it runs under this filter alone, before it installs
/// its own filters and starts the command.
pub fn answer(
    listener: &Listener,
    plan: &Plan,
    setup: Option<(u64, u64)>,
    cache: &mut Cache,
    n: &Notif,
    call: Option<Syscall>,
) {
    if in_setup(setup, cache, n.pid) && listener.id_valid(n.id) {
        listener.allow(n.id);
        return;
    }
    match perform(listener, plan, cache, n, call) {
        Ok(Some((fd, cloexec))) => {
            if listener.send_fd(n.id, fd.as_fd(), cloexec).is_err() {
                listener.fail(n.id, libc::EMFILE);
            }
        }
        Ok(None) => listener.succeed(n.id, 0),
        Err(ANSWERED) => {}
        Err(e) => listener.fail(n.id, e),
    }
}

/// What [`perform`] returns for a call another thread answers (an open of a
/// named pipe that waits for its other end); no system call fails with 0.
const ANSWERED: i32 = 0;

/// A call's result from the shared performer, as [`perform`] returns it.
fn done(result: io::Result<Done>) -> Result<Option<(OwnedFd, bool)>, i32> {
    match result.map_err(errno)? {
        Done::Zero => Ok(None),
        Done::Answered => Err(ANSWERED),
        // Only an open hands back a descriptor (see the `Open` arm).
        Done::Fd(_) => Err(libc::EIO),
    }
}

/// The strict copy of a `bind` address: `EINVAL` for one longer than
/// `struct sockaddr_un`, `EFAULT` for one that cannot be read whole.
fn bind_address(pid: u32, addr: u64, len: u32) -> Result<Vec<u8>, i32> {
    let len = len as usize;
    if len > std::mem::size_of::<libc::sockaddr_un>() {
        return Err(libc::EINVAL);
    }
    let mut address = vec![0u8; len];
    let read = notify::read_memory(pid, addr, &mut address).map_err(|_| libc::EFAULT)?;
    if read != len {
        return Err(libc::EFAULT);
    }
    Ok(address)
}

/// Performs the call of `n` for the command, after judging the names it
/// makes or moves: the shared decoder says which call it is, this module
/// resolves its paths in the command's root, and the shared performer
/// ([`perform::act`]) makes it. An opened file comes back with whether the
/// command asked for `O_CLOEXEC`.
fn perform(
    listener: &Listener,
    plan: &Plan,
    cache: &mut Cache,
    n: &Notif,
    call: Option<Syscall>,
) -> Result<Option<(OwnedFd, bool)>, i32> {
    let umask = cache.umask(n.pid);
    let caller = Caller {
        tid: n.pid,
        root: cache.root(n.pid)?,
    };
    let call = call.ok_or(libc::ENOSYS)?;
    let s = |addr: u64| notify::read_cstring(n.pid, addr).map_err(|_| libc::EFAULT);
    // Each arm reads the command's memory first; then `ready` checks that
    // the thread id still names the caller it named when its root was
    // opened and its memory read, so that everything decided below is about
    // that command, and takes on its umask.
    let ready = || {
        if !listener.id_valid(n.id) {
            return Err(libc::ESRCH);
        }
        // SAFETY: umask cannot fail; this thread has its own file system
        // context (see `own_fs_context`), so no other thread sees it.
        unsafe { libc::umask(umask & 0o777) };
        Ok(())
    };
    match call {
        Syscall::Open {
            at: arg,
            flags,
            mode,
        } => {
            let path = s(arg.addr)?;
            ready()?;
            let follow = flags & (libc::O_NOFOLLOW | libc::O_EXCL) == 0;
            // The last name as given first: most are plain files, and the
            // kernel's O_NOFOLLOW says when it is a link to follow after all.
            let mut place = caller.place(arg.dirfd, &path, false)?;
            let mut followed = false;
            loop {
                allowed_open(plan, &place, flags)?;
                let open = Act::Open {
                    at: place.at(),
                    flags,
                    mode,
                    last: LastName::NoFollow,
                };
                match perform::act(listener, n.id, open) {
                    Ok(Done::Fd(fd)) => break Ok(Some((fd, flags & libc::O_CLOEXEC != 0))),
                    Ok(Done::Answered) => break Err(ANSWERED),
                    Ok(Done::Zero) => break Err(libc::EIO),
                    Err(e) => {
                        let e = errno(e);
                        if e == libc::ELOOP && follow && !followed {
                            place = caller.place(arg.dirfd, &path, true)?;
                            followed = true;
                            continue;
                        }
                        break Err(e);
                    }
                }
            }
        }
        Syscall::Mkdir { at: arg, mode } => {
            let path = s(arg.addr)?;
            ready()?;
            let place = caller.place(arg.dirfd, &path, false)?;
            judge_new(plan, &place, Role::Made)?;
            done(perform::act(
                listener,
                n.id,
                Act::Mkdir {
                    at: place.at(),
                    mode,
                },
            ))
        }
        Syscall::Mknod { at: arg, mode } => {
            let path = s(arg.addr)?;
            ready()?;
            let kind = mode & libc::S_IFMT;
            if kind == libc::S_IFCHR || kind == libc::S_IFBLK {
                return Err(libc::EPERM);
            }
            let place = caller.place(arg.dirfd, &path, false)?;
            judge_new(plan, &place, Role::MadeFile)?;
            if !matches!(
                kind,
                0 | libc::S_IFREG | libc::S_IFIFO | libc::S_IFSOCK | libc::S_IFDIR
            ) {
                // No such type of file, as the kernel answers it.
                return Err(libc::EINVAL);
            }
            // No device is made (checked above).
            done(perform::act(
                listener,
                n.id,
                Act::Mknod {
                    at: place.at(),
                    mode,
                },
            ))
        }
        Syscall::Symlink { target, at: arg } => {
            let target = s(target)?;
            let path = s(arg.addr)?;
            ready()?;
            let place = caller.place(arg.dirfd, &path, false)?;
            judge_new(plan, &place, Role::Placed)?;
            let symlink = Act::Symlink {
                target: &target,
                at: place.at(),
            };
            done(perform::act(listener, n.id, symlink))
        }
        Syscall::Link { from, to, flags } => {
            let from_path = s(from.addr)?;
            let path = s(to.addr)?;
            ready()?;
            let to = caller.place(to.dirfd, &path, false)?;
            judge_new(plan, &to, Role::Placed)?;
            if flags & libc::AT_EMPTY_PATH != 0 && from_path.is_empty() {
                // The descriptor itself: linked through its magic link,
                // which keeps its mount (a read-only bind stays EXDEV).
                if from.from_cwd() {
                    return Err(libc::ENOENT);
                }
                let file = crate::supervisor::caller::take_fd(n.pid, from.dirfd).map_err(errno)?;
                let link = Act::LinkFile {
                    file: file.as_fd(),
                    to: to.at(),
                };
                return done(perform::act(listener, n.id, link));
            }
            let follow = flags & libc::AT_SYMLINK_FOLLOW != 0;
            let source = caller.place(from.dirfd, &from_path, follow)?;
            plan.judge_name(&source.full(), Role::Linked)?;
            let link = Act::Link {
                from: source.at(),
                to: to.at(),
            };
            done(perform::act(listener, n.id, link))
        }
        Syscall::Rename { from, to, flags } => {
            let from_path = s(from.addr)?;
            let path = s(to.addr)?;
            ready()?;
            let source = caller.place(from.dirfd, &from_path, false)?;
            let to = caller.place(to.dirfd, &path, false)?;
            plan.judge_name(&source.full(), Role::Moved)?;
            plan.judge_name(&to.full(), Role::Placed)?;
            let rename = Act::Rename {
                from: source.at(),
                to: to.at(),
                flags,
            };
            done(perform::act(listener, n.id, rename))
        }
        Syscall::Bind { fd, addr, len } => {
            let addr = bind_address(n.pid, addr, len)?;
            ready()?;
            let family = addr
                .get(..2)
                .map(|b| i32::from(u16::from_ne_bytes([b[0], b[1]])));
            let path = addr.get(2..).filter(|p| p.first().is_some_and(|b| *b != 0));
            let (Some(libc::AF_UNIX), Some(path)) = (family, path) else {
                // Another family, an abstract name or none: no file is made.
                let sock = crate::supervisor::caller::take_fd(n.pid, fd).map_err(errno)?;
                return crate::supervisor::caller::raw_address_call(
                    sock.as_raw_fd(),
                    &addr,
                    libc::bind,
                )
                .map(|()| None);
            };
            let path = match path.iter().position(|b| *b == 0) {
                Some(end) => &path[..end],
                None => path,
            };
            let place = caller.place(libc::AT_FDCWD, path, false)?;
            if exists(&place) {
                return Err(libc::EADDRINUSE);
            }
            plan.judge_name(&place.full(), Role::MadeFile)?;
            // Bound in the directory already judged, never its path again.
            let bind = Act::Bind {
                tid: n.pid,
                fd,
                at: place.at(),
                umask,
            };
            done(perform::act(listener, n.id, bind))
        }
        Syscall::Remove { .. }
        | Syscall::Truncate { .. }
        | Syscall::Connect { .. }
        | Syscall::Meta(_)
        | Syscall::Context
        | Syscall::Creds
        | Syscall::Exec { .. } => Err(libc::ENOSYS),
    }
}

/// Empties the calling thread's effective capabilities (the permitted set
/// stays, so the kernel still lets it read the commands' memory), so that
/// what the supervisor makes for a command the kernel allows no more than
/// it would the command, which has none. The raw system calls change this
/// thread only.
pub fn drop_effective_capabilities() -> io::Result<()> {
    let mut data = crate::sys::capget()?;
    if data.iter().all(|d| d.effective == 0) {
        return Ok(());
    }
    for d in &mut data {
        d.effective = 0;
    }
    crate::sys::capset(&data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        Plan {
            workdir: PathBuf::from("/w"),
            readable: vec![PathBuf::from("/")],
            protected: [".git/hooks", ".git/config", ".mcp.json", ".claude/commands"]
                .iter()
                .map(|p| crate::plan::Protected {
                    path: Path::new("/w").join(p),
                    why: String::new(),
                    exists: false,
                    only_file: false,
                })
                .collect(),
            writable: vec![PathBuf::from("/w"), PathBuf::from("/tmp")],
            writable_files: vec![PathBuf::from("/dev/null")],
            denied: vec![crate::plan::DeniedDir {
                path: PathBuf::from("/w/secrets"),
                source: crate::plan::DenySource::Floor,
                file: false,
            }],
            gate_only: Vec::new(),
            exact_files: Vec::new(),
            network: false,
            no_new_privs: true,
            best_effort: false,
            unix_sockets: Vec::new(),
            asking: crate::plan::Asking::Never,
            scope: (),
        }
    }

    #[test]
    fn judgements_follow_the_roles() {
        let g = plan();
        let table: &[(&str, Role, Result<(), i32>)] = &[
            ("/w/src/main.rs", Role::Made, Ok(())),
            ("/w/.mcp.json", Role::Made, Err(libc::EACCES)),
            ("/w/.git/hooks", Role::Made, Err(libc::EACCES)),
            ("/w/.git/hooks/pre-commit", Role::Made, Err(libc::EACCES)),
            ("/w/.git/index.lock", Role::Made, Ok(())),
            ("/w/.git", Role::Made, Ok(())),
            ("/w/.git", Role::MadeFile, Err(libc::EACCES)),
            ("/w/.claude", Role::MadeFile, Err(libc::EACCES)),
            ("/w/src/main.rs", Role::MadeFile, Ok(())),
            ("/w/.git", Role::Placed, Err(libc::EACCES)),
            ("/w/.git", Role::Moved, Err(libc::EACCES)),
            ("/w/.claude", Role::Placed, Err(libc::EACCES)),
            ("/w/.claude/settings.json", Role::Placed, Ok(())),
            ("/w/secrets/x", Role::Made, Err(libc::EACCES)),
            ("/etc/passwd", Role::Made, Err(libc::EACCES)),
            ("/tmp/x", Role::Made, Ok(())),
            ("/etc/passwd", Role::Linked, Err(libc::EXDEV)),
            ("/w/.git/config", Role::Linked, Err(libc::EACCES)),
            ("/w/a", Role::Linked, Ok(())),
            ("/w", Role::Made, Err(libc::EACCES)),
        ];
        for (path, role, want) in table {
            assert_eq!(
                g.judge_name(Path::new(path), *role),
                *want,
                "{path} {role:?}"
            );
        }
    }

    #[test]
    fn split_takes_the_last_name() {
        assert_eq!(
            split(Path::new("/a/b/c/")).unwrap(),
            (PathBuf::from("/a/b"), OsString::from("c"))
        );
        assert_eq!(
            split(Path::new("/a/../b")).unwrap(),
            (PathBuf::from("/a/.."), OsString::from("b"))
        );
        assert_eq!(split(Path::new("/")), Err(libc::EEXIST));
    }
}
