//! Acting on a judged path without following a symbolic link: a walk from a
//! held directory descriptor.
//!
//! A path the gate judged is canonical: absolute, without `.`, `..` or any
//! symlink. Whatever is opened, created, renamed or removed for it afterwards
//! must be that path, even when another process swaps a directory on the way
//! for a symlink between the check and the use. Opening by name follows the
//! swapped-in link; this module never does:
//!
//! - [`open`] resolves an absolute path with `openat2(RESOLVE_NO_SYMLINKS)`,
//!   and [`open_beneath`] a relative one beneath a held directory with
//!   `RESOLVE_BENEATH` as well. A symlink anywhere on the way, the last
//!   component included, fails with `ELOOP`; the caller reports that the
//!   path changed since it was judged.
//! - Where `openat2` is missing (Linux before 5.6, or a seccomp profile that
//!   answers `ENOSYS`), the same walk is made one component at a time with
//!   `openat(O_PATH | O_NOFOLLOW)`, checking that each step is a directory.
//! - The directory operations ([`mkdir_at`], [`remove_at`], [`rename_at`],
//!   [`link_at`], [`symlink_at`], [`stat_at`]) take a held directory and one
//!   name, and never follow a symlink in that name.
//! - [`tmpfile_in`] makes an unnamed file in a held directory (`O_TMPFILE`),
//!   which [`link_anonymous`] later names: a writer killed half-way leaves
//!   nothing behind.
//!
//! `sandgate run` performs the writes it allows for the program through this
//! module, and the MCP file tools open what they read and write through it.
//!
//! This is one of the modules of the crate that contain `unsafe` code: the
//! raw system calls, each block with its `SAFETY:` comment. The standard
//! library and `nix` offer neither `openat2` nor a descriptor-relative walk.

#![allow(unsafe_code)]

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once `openat2` answered `ENOSYS`: the component walk is used from then on.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// What `fstat` says about an open file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// The device the file is on.
    pub dev: u64,
    /// Its inode number.
    pub ino: u64,
    /// Type and permission bits (`st_mode`).
    pub mode: u32,
    /// Number of hard links.
    pub nlink: u64,
    /// Size in bytes.
    pub size: u64,
}

impl Stat {
    fn from_raw(st: &libc::stat) -> Stat {
        Stat {
            dev: st.st_dev,
            ino: st.st_ino,
            mode: st.st_mode,
            nlink: st.st_nlink,
            size: u64::try_from(st.st_size).unwrap_or(0),
        }
    }

    /// `(dev, ino)`: which file this is.
    pub fn identity(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }

    /// A directory.
    pub fn is_dir(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFDIR
    }

    /// A regular file.
    pub fn is_file(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFREG
    }

    /// A symbolic link.
    pub fn is_symlink(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFLNK
    }

    /// A socket.
    pub fn is_socket(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFSOCK
    }

    /// The permission bits (`0o7777`).
    pub fn permissions(&self) -> u32 {
        self.mode & 0o7777
    }
}

/// Whether an error says that a symlink (or a non-directory) was met where
/// the judged path has a directory or a file: the path changed since the check.
pub fn is_swapped(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::ELOOP) | Some(libc::EXDEV) | Some(libc::ENOTDIR)
    )
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// The descriptor a system call returned, owned, or its error.
pub(crate) fn owned(fd: libc::c_long) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = libc::c_int::try_from(fd).map_err(io::Error::other)?;
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The mode `openat`/`openat2` take: only with `O_CREAT` or `O_TMPFILE`
/// (`openat2` refuses a mode otherwise).
fn create_mode(flags: i32, mode: u32) -> u32 {
    if flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE {
        mode & 0o7777
    } else {
        0
    }
}

/// `openat2` with `O_CLOEXEC` added; no allocation (the `mount` module
/// uses it too).
pub(crate) fn raw_openat2(
    dirfd: libc::c_int,
    path: &CStr,
    flags: i32,
    mode: u32,
    resolve: u64,
) -> io::Result<OwnedFd> {
    // SAFETY: open_how is plain integers; all-zero is a valid value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.mode = u64::from(create_mode(flags, mode));
    how.resolve = resolve;
    // SAFETY: `path` is NUL-terminated and `how` is a live open_how whose
    // size we pass; the kernel only reads them.
    owned(unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dirfd,
            path.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    })
}

fn raw_openat(dirfd: libc::c_int, name: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    // SAFETY: `name` is NUL-terminated; the kernel only reads it.
    let fd = unsafe {
        libc::openat(
            dirfd,
            name.as_ptr(),
            flags | libc::O_CLOEXEC,
            create_mode(flags, mode) as libc::c_uint,
        )
    };
    owned(libc::c_long::from(fd))
}

/// `fstat` of an open descriptor (`O_PATH` ones included).
pub fn stat(fd: BorrowedFd<'_>) -> io::Result<Stat> {
    // SAFETY: stat is plain integers; all-zero is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: an open descriptor and a live, writable stat buffer.
    check(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
    Ok(Stat::from_raw(&st))
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`: the entry `name` itself, or
/// `None` when there is none.
pub fn stat_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Option<Stat>> {
    let name = single(name)?;
    // SAFETY: stat is plain integers; all-zero is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: an open directory descriptor, a NUL-terminated name and a live
    // stat buffer; AT_SYMLINK_NOFOLLOW never follows the name.
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    match check(rc) {
        Ok(_) => Ok(Some(Stat::from_raw(&st))),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// One path component, as a C string: not empty, no `/`, not `.` or `..`.
fn single(name: &OsStr) -> io::Result<CString> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.contains(&b'/') || bytes == b"." || bytes == b".." {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    cstring(bytes)
}

/// The normal components of a relative path; `..`, a root or a prefix is `EXDEV`
/// (it would leave the directory), `.` is skipped.
fn beneath_components(rel: &Path) -> io::Result<Vec<&OsStr>> {
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => parts.push(n),
            Component::CurDir => {}
            _ => return Err(io::Error::from_raw_os_error(libc::EXDEV)),
        }
    }
    Ok(parts)
}

/// The walk without `openat2`: each component opened with
/// `O_PATH | O_NOFOLLOW` and checked to be a directory, the last one opened
/// with `flags | O_NOFOLLOW`. Errors are those of `openat2` with
/// `RESOLVE_NO_SYMLINKS`: `ELOOP` for a symlink, `ENOTDIR` for a file on the way.
pub(crate) fn walk_nofollow(
    start: BorrowedFd<'_>,
    parts: &[&OsStr],
    flags: i32,
    mode: u32,
) -> io::Result<OwnedFd> {
    let Some((last, dirs)) = parts.split_last() else {
        // The start directory itself.
        return raw_openat(start.as_raw_fd(), c".", flags, mode);
    };
    let mut held: Option<OwnedFd> = None;
    for part in dirs {
        let name = single(part)?;
        let at = held.as_ref().map_or(start.as_raw_fd(), |f| f.as_raw_fd());
        let next = raw_openat(at, &name, libc::O_PATH | libc::O_NOFOLLOW, 0)?;
        let st = stat(next.as_fd())?;
        if st.is_symlink() {
            return Err(io::Error::from_raw_os_error(libc::ELOOP));
        }
        if !st.is_dir() {
            return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
        }
        held = Some(next);
    }
    let at = held.as_ref().map_or(start.as_raw_fd(), |f| f.as_raw_fd());
    let name = single(last)?;
    let fd = raw_openat(at, &name, flags | libc::O_NOFOLLOW, mode)?;
    if flags & libc::O_PATH != 0 && flags & libc::O_NOFOLLOW == 0 && stat(fd.as_fd())?.is_symlink()
    {
        // O_PATH | O_NOFOLLOW returns the link itself; without O_NOFOLLOW the
        // caller asked for what it points to, which this walk never follows.
        return Err(io::Error::from_raw_os_error(libc::ELOOP));
    }
    Ok(fd)
}

fn root() -> io::Result<OwnedFd> {
    raw_openat(libc::AT_FDCWD, c"/", libc::O_PATH | libc::O_DIRECTORY, 0)
}

/// Opens the absolute path `path` with `flags` (`O_CLOEXEC` is always added)
/// without following any symbolic link on the way or at its end.
pub fn open(path: &Path, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    if !path.is_absolute() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let c = cstring(path.as_os_str().as_bytes())?;
        match raw_openat2(libc::AT_FDCWD, &c, flags, mode, libc::RESOLVE_NO_SYMLINKS) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                NO_OPENAT2.store(true, Ordering::Relaxed);
            }
            other => return other,
        }
    }
    let rel = path.strip_prefix("/").map_err(io::Error::other)?;
    let parts = beneath_components(rel)?;
    let root = root()?;
    walk_nofollow(root.as_fd(), &parts, flags, mode)
}

/// Opens `rel` beneath the held directory `dir` with `flags`, without
/// following any symbolic link and without leaving `dir` (an absolute path
/// or `..` is `EXDEV`).
pub fn open_beneath(dir: BorrowedFd<'_>, rel: &Path, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let parts = beneath_components(rel)?;
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let c = if parts.is_empty() {
            c".".to_owned()
        } else {
            cstring(rel.as_os_str().as_bytes())?
        };
        match raw_openat2(
            dir.as_raw_fd(),
            &c,
            flags,
            mode,
            libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_BENEATH,
        ) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                NO_OPENAT2.store(true, Ordering::Relaxed);
            }
            other => return other,
        }
    }
    walk_nofollow(dir, &parts, flags, mode)
}

/// Opens the directory `path` (absolute) as an `O_PATH` descriptor to walk
/// from, without following any symlink.
pub fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    open(path, libc::O_PATH | libc::O_DIRECTORY, 0)
}

/// The parent directory of the absolute path `path`, held (`O_PATH`, no
/// symlink followed), and its last component.
pub fn open_parent(path: &Path) -> io::Result<(OwnedFd, &OsStr)> {
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
    Ok((open_dir(parent)?, name))
}

/// Creates the directory `path` (absolute) and any missing parents with
/// `mode` (less the umask), like `mkdir -p`, and returns it held. No
/// symlink is followed: one on the way is `ELOOP`.
pub fn create_dirs(path: &Path, mode: u32) -> io::Result<OwnedFd> {
    let rel = path
        .strip_prefix("/")
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let parts = beneath_components(rel)?;
    let mut held = root()?;
    for part in parts {
        match open_beneath(
            held.as_fd(),
            Path::new(part),
            libc::O_PATH | libc::O_DIRECTORY,
            0,
        ) {
            Ok(next) => held = next,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                match mkdir_at(held.as_fd(), part, mode) {
                    Ok(()) => {}
                    Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
                    Err(e) => return Err(e),
                }
                held = open_beneath(
                    held.as_fd(),
                    Path::new(part),
                    libc::O_PATH | libc::O_DIRECTORY,
                    0,
                )?;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(held)
}

/// `mkdirat(dir, name, mode)`.
pub fn mkdir_at(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> io::Result<()> {
    let name = single(name)?;
    // SAFETY: an open directory descriptor and a NUL-terminated name.
    check(unsafe {
        libc::mkdirat(
            dir.as_raw_fd(),
            name.as_ptr(),
            (mode & 0o7777) as libc::mode_t,
        )
    })?;
    Ok(())
}

/// `mknodat(dir, name, mode, 0)` for a regular file, FIFO or socket; a
/// device is `EPERM`.
pub fn mknod_at(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> io::Result<()> {
    let kind = mode & libc::S_IFMT;
    if kind != 0 && kind != libc::S_IFREG && kind != libc::S_IFIFO && kind != libc::S_IFSOCK {
        return Err(io::Error::from_raw_os_error(libc::EPERM));
    }
    let name = single(name)?;
    // SAFETY: an open directory descriptor and a NUL-terminated name; no device.
    check(unsafe { libc::mknodat(dir.as_raw_fd(), name.as_ptr(), kind | (mode & 0o7777), 0) })?;
    Ok(())
}

/// `unlinkat(dir, name)`, with `AT_REMOVEDIR` for a directory.
pub fn remove_at(dir: BorrowedFd<'_>, name: &OsStr, is_dir: bool) -> io::Result<()> {
    let name = single(name)?;
    let flags = if is_dir { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: an open directory descriptor and a NUL-terminated name.
    check(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) })?;
    Ok(())
}

/// `renameat2(from_dir, from, to_dir, to, flags)`.
pub fn rename_at(
    from_dir: BorrowedFd<'_>,
    from: &OsStr,
    to_dir: BorrowedFd<'_>,
    to: &OsStr,
    flags: u32,
) -> io::Result<()> {
    let from = single(from)?;
    let to = single(to)?;
    // SAFETY: open directory descriptors and NUL-terminated names.
    check(unsafe {
        libc::renameat2(
            from_dir.as_raw_fd(),
            from.as_ptr(),
            to_dir.as_raw_fd(),
            to.as_ptr(),
            flags,
        )
    })?;
    Ok(())
}

/// `linkat(from_dir, from, to_dir, to, 0)`: never follows `from`.
pub fn link_at(
    from_dir: BorrowedFd<'_>,
    from: &OsStr,
    to_dir: BorrowedFd<'_>,
    to: &OsStr,
) -> io::Result<()> {
    let from = single(from)?;
    let to = single(to)?;
    // SAFETY: open directory descriptors and NUL-terminated names; flags 0
    // never follows a symlink.
    check(unsafe {
        libc::linkat(
            from_dir.as_raw_fd(),
            from.as_ptr(),
            to_dir.as_raw_fd(),
            to.as_ptr(),
            0,
        )
    })?;
    Ok(())
}

/// `symlinkat(target, dir, name)`.
pub fn symlink_at(target: &[u8], dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let target = cstring(target)?;
    let name = single(name)?;
    // SAFETY: an open directory descriptor and NUL-terminated strings.
    check(unsafe { libc::symlinkat(target.as_ptr(), dir.as_raw_fd(), name.as_ptr()) })?;
    Ok(())
}

/// `ftruncate(fd, len)`.
pub fn truncate(fd: BorrowedFd<'_>, len: i64) -> io::Result<()> {
    // SAFETY: an open descriptor; integers only.
    check(unsafe { libc::ftruncate(fd.as_raw_fd(), len) })?;
    Ok(())
}

/// `fchmod(fd, mode)`.
pub fn chmod(fd: BorrowedFd<'_>, mode: u32) -> io::Result<()> {
    // SAFETY: an open descriptor; integers only.
    check(unsafe { libc::fchmod(fd.as_raw_fd(), (mode & 0o7777) as libc::mode_t) })?;
    Ok(())
}

/// An unnamed regular file in the held directory `dir`, open for writing
/// (`O_TMPFILE`), or `None` where the file system cannot make one.
pub fn tmpfile_in(dir: BorrowedFd<'_>, mode: u32) -> io::Result<Option<OwnedFd>> {
    match raw_openat(
        dir.as_raw_fd(),
        c".",
        libc::O_TMPFILE | libc::O_WRONLY,
        mode,
    ) {
        Ok(fd) => Ok(Some(fd)),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL)
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Gives the unnamed file `file` (from [`tmpfile_in`]) the name `name` in
/// the held directory `dir`. It is linked through `/proc/self/fd`, which
/// needs no privilege (`AT_EMPTY_PATH` would need `CAP_DAC_READ_SEARCH`).
pub fn link_anonymous(file: BorrowedFd<'_>, dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let name = single(name)?;
    let proc_path = cstring(format!("/proc/self/fd/{}", file.as_raw_fd()).as_bytes())?;
    // SAFETY: NUL-terminated strings and an open directory descriptor;
    // AT_SYMLINK_FOLLOW resolves only the /proc magic link to our own file.
    check(unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            proc_path.as_ptr(),
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::io::Read;
    use std::os::unix::fs::symlink;

    fn tree() -> (tempfile::TempDir, std::path::PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir_all(base.join("a/b")).unwrap();
        fs::write(base.join("a/b/f"), "inside").unwrap();
        fs::create_dir(base.join("outside")).unwrap();
        fs::write(base.join("outside/f"), "secret").unwrap();
        symlink(base.join("outside"), base.join("a/link")).unwrap();
        symlink(base.join("outside/f"), base.join("a/b/flink")).unwrap();
        (tmp, base)
    }

    fn read(fd: OwnedFd) -> String {
        let mut s = String::new();
        fs::File::from(fd).read_to_string(&mut s).unwrap();
        s
    }

    fn errno(r: io::Result<OwnedFd>) -> i32 {
        r.map(|_| ()).unwrap_err().raw_os_error().unwrap()
    }

    #[test]
    fn opens_paths_without_symlinks_and_refuses_the_others() {
        let (_t, base) = tree();
        assert_eq!(
            read(open(&base.join("a/b/f"), libc::O_RDONLY, 0).unwrap()),
            "inside"
        );
        // Plain opens follow the links; this walk refuses them.
        assert_eq!(fs::read_to_string(base.join("a/link/f")).unwrap(), "secret");
        assert_eq!(
            errno(open(&base.join("a/link/f"), libc::O_RDONLY, 0)),
            libc::ELOOP
        );
        assert_eq!(
            errno(open(&base.join("a/b/flink"), libc::O_RDONLY, 0)),
            libc::ELOOP
        );
        assert_eq!(
            errno(open(Path::new("a/b"), libc::O_RDONLY, 0)),
            libc::EINVAL
        );
    }

    #[test]
    fn the_component_walk_gives_the_same_answers() {
        let (_t, base) = tree();
        let dir = open_dir(&base).unwrap();
        let walk = |rel: &str, flags: i32| {
            let parts = beneath_components(Path::new(rel)).unwrap();
            walk_nofollow(dir.as_fd(), &parts, flags, 0)
        };
        assert_eq!(read(walk("a/b/f", libc::O_RDONLY).unwrap()), "inside");
        assert_eq!(errno(walk("a/link/f", libc::O_RDONLY)), libc::ELOOP);
        assert_eq!(errno(walk("a/b/flink", libc::O_RDONLY)), libc::ELOOP);
        assert_eq!(errno(walk("a/link", libc::O_PATH)), libc::ELOOP);
        assert_eq!(errno(walk("a/b/f/x", libc::O_RDONLY)), libc::ENOTDIR);
        // O_PATH | O_NOFOLLOW is the link itself, as with openat2.
        let link = walk("a/link", libc::O_PATH | libc::O_NOFOLLOW).unwrap();
        assert!(stat(link.as_fd()).unwrap().is_symlink());
        let link2 = open_beneath(
            dir.as_fd(),
            Path::new("a/link"),
            libc::O_PATH | libc::O_NOFOLLOW,
            0,
        )
        .unwrap();
        assert!(stat(link2.as_fd()).unwrap().is_symlink());
        for rel in ["a/link/f", "a/b/flink"] {
            assert_eq!(
                errno(open_beneath(dir.as_fd(), Path::new(rel), libc::O_RDONLY, 0)),
                libc::ELOOP,
                "{rel}"
            );
        }
        assert_eq!(
            errno(open_beneath(
                dir.as_fd(),
                Path::new("../x"),
                libc::O_RDONLY,
                0
            )),
            libc::EXDEV
        );
        assert_eq!(
            errno(open_beneath(
                dir.as_fd(),
                Path::new("/etc/passwd"),
                libc::O_RDONLY,
                0
            )),
            libc::EXDEV
        );
    }

    #[test]
    fn creates_directories_and_unnamed_files_in_the_held_directory() {
        let (_t, base) = tree();
        let made = create_dirs(&base.join("a/b/new/deeper"), 0o755).unwrap();
        assert!(stat(made.as_fd()).unwrap().is_dir());
        assert!(base.join("a/b/new/deeper").is_dir());
        assert_eq!(
            create_dirs(&base.join("a/link/new"), 0o755)
                .map(|_| ())
                .unwrap_err()
                .raw_os_error(),
            Some(libc::ELOOP)
        );
        assert!(!base.join("outside/new").exists());

        let dir = open_dir(&base.join("a/b")).unwrap();
        let file = tmpfile_in(dir.as_fd(), 0o600)
            .unwrap()
            .expect("O_TMPFILE on the test file system");
        let names = || fs::read_dir(base.join("a/b")).unwrap().count();
        let before = names();
        std::io::Write::write_all(&mut fs::File::from(file.try_clone().unwrap()), b"new").unwrap();
        assert_eq!(names(), before, "an unnamed file has no entry");
        link_anonymous(file.as_fd(), dir.as_fd(), OsStr::new("t")).unwrap();
        rename_at(
            dir.as_fd(),
            OsStr::new("t"),
            dir.as_fd(),
            OsStr::new("f"),
            0,
        )
        .unwrap();
        assert_eq!(fs::read_to_string(base.join("a/b/f")).unwrap(), "new");
        assert_eq!(stat_at(dir.as_fd(), OsStr::new("t")).unwrap(), None);
        assert!(stat_at(dir.as_fd(), OsStr::new("flink"))
            .unwrap()
            .unwrap()
            .is_symlink());
        assert_eq!(
            stat_at(dir.as_fd(), OsStr::new("../x"))
                .unwrap_err()
                .raw_os_error(),
            Some(libc::EINVAL)
        );
    }
}
