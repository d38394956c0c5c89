//! Path canonicalization: the subject a path rule is matched against.
//!
//! `~` is expanded as bash expands it (`~`, `~/…` and `~//…` are `$HOME`
//! followed by the rest; `~user` is that user's home from the user database;
//! `~+` is the working directory), the path made absolute against the working
//! directory, repeated slashes, `.` and `..` collapsed (after the expansion,
//! never before), and symlinks resolved for the existing part of the path.
//! A dangling symlink is followed to where a write through it would land, so a
//! link into `~/.ssh` is judged as `~/.ssh`.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one path may pass through before it is refused (as the kernel's `ELOOP`).
const MAX_SYMLINKS: usize = 40;

/// Why a path cannot be canonicalized. Every such path is denied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CanonError {
    /// The path contains a NUL byte.
    Nul,
    /// The path (or a symlink on its way) is not valid UTF-8.
    NotUtf8(String),
    /// Too many levels of symbolic links.
    SymlinkLoop(String),
    /// Reading a symlink or metadata failed for another reason.
    Io(String, String),
    /// `~name` names no user of the user database, or a directory only the
    /// shell knows (`~-`, the previous directory).
    Tilde(String),
    /// The path is longer than the kernel takes ([`MAX_PATH_BYTES`]).
    TooLong(usize),
}

/// The longest path resolved (Linux's `PATH_MAX`): the kernel refuses a
/// longer one in any system call, and resolving one costs time that grows
/// with the square of its components.
pub const MAX_PATH_BYTES: usize = 4096;

impl fmt::Display for CanonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CanonError::Nul => f.write_str("the path contains a NUL byte"),
            CanonError::NotUtf8(p) => write!(f, "the path `{p}` is not valid UTF-8"),
            CanonError::SymlinkLoop(p) => write!(f, "too many levels of symbolic links at `{p}`"),
            CanonError::Io(p, e) => write!(f, "cannot resolve `{p}`: {e}"),
            CanonError::Tilde(p) => {
                write!(f, "`{p}` names no home directory the user database knows")
            }
            CanonError::TooLong(n) => write!(
                f,
                "the path is {n} bytes long, more than the {MAX_PATH_BYTES} bytes the kernel accepts"
            ),
        }
    }
}

impl std::error::Error for CanonError {}

/// The tilde prefix of a path or shell word: what comes before its first `/`,
/// when the word starts with `~`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tilde<'a> {
    /// The word does not start with `~`.
    None,
    /// `~`, `~/…`: the home directory; the rest (empty, or starting with `/`).
    Home(&'a str),
    /// `~+`, `~+/…`: the working directory; the rest.
    Cwd(&'a str),
    /// `~name/…`: that user's home; the name and the rest.
    User(&'a str, &'a str),
    /// `~-` (the previous directory) or `~N`, `~+N`, `~-N` (the directory
    /// stack): only the running shell knows them.
    Shell(&'a str),
}

/// Split the tilde prefix off `path` as bash reads it.
pub fn tilde(path: &str) -> Tilde<'_> {
    let Some(after) = path.strip_prefix('~') else {
        return Tilde::None;
    };
    let (prefix, rest) = match after.find('/') {
        Some(i) => after.split_at(i),
        None => (after, ""),
    };
    match prefix {
        "" => Tilde::Home(rest),
        "+" => Tilde::Cwd(rest),
        "-" => Tilde::Shell(prefix),
        p if p
            .trim_start_matches(['+', '-'])
            .bytes()
            .all(|b| b.is_ascii_digit()) =>
        {
            Tilde::Shell(prefix)
        }
        p => Tilde::User(p, rest),
    }
}

/// The home directory of the user `name`, from the user database.
pub fn user_home(name: &str) -> Option<PathBuf> {
    let user = nix::unistd::User::from_name(name).ok()??;
    Some(user.dir)
}

/// `base` followed by `rest` (empty or starting with `/`), as the shell joins
/// an expanded tilde prefix with the rest of the word: the slashes of `rest`
/// are kept, so `~//.ssh` stays below the home directory.
fn join_rest(base: &Path, rest: &str) -> PathBuf {
    let rest = rest.trim_start_matches('/');
    if rest.is_empty() {
        base.to_path_buf()
    } else {
        base.join(rest)
    }
}

/// Expand a leading `~`, `~/…` or `~//…` to `home` followed by the rest, and
/// `~user/…` through the user database. Anything else is returned as it is
/// (an unknown `~user` stays literal, as bash leaves it).
pub fn expand_tilde(path: &str, home: &Path) -> PathBuf {
    match tilde(path) {
        Tilde::Home(rest) => join_rest(home, rest),
        Tilde::User(name, rest) => match user_home(name) {
            Some(dir) => join_rest(&dir, rest),
            None => PathBuf::from(path),
        },
        Tilde::None | Tilde::Cwd(_) | Tilde::Shell(_) => PathBuf::from(path),
    }
}

/// [`expand_tilde`] that also knows `~+` (the working directory) and refuses
/// what it cannot expand: a `~user` the user database does not know, `~-` and
/// the directory stack.
pub fn expand_tilde_strict(path: &str, cwd: &Path, home: &Path) -> Result<PathBuf, CanonError> {
    match tilde(path) {
        Tilde::None => Ok(PathBuf::from(path)),
        Tilde::Home(rest) => Ok(join_rest(home, rest)),
        Tilde::Cwd(rest) => Ok(join_rest(cwd, rest)),
        Tilde::User(name, rest) => match user_home(name) {
            Some(dir) => Ok(join_rest(&dir, rest)),
            None => Err(CanonError::Tilde(format!("~{name}"))),
        },
        Tilde::Shell(prefix) => Err(CanonError::Tilde(format!("~{prefix}"))),
    }
}

/// Canonicalize `path` as docs/policy.md ("Paths are canonical before they
/// are matched") says. An empty path means `cwd`.
///
/// `cwd` should itself be canonical (see `Context::new`).
pub fn canonicalize(path: &str, cwd: &Path, home: &Path) -> Result<PathBuf, CanonError> {
    if path.contains('\0') {
        return Err(CanonError::Nul);
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(CanonError::TooLong(path.len()));
    }
    let expanded = if path.is_empty() {
        cwd.to_path_buf()
    } else {
        expand_tilde_strict(path, cwd, home)?
    };
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    let resolved = match canonicalize_existing(&absolute) {
        Some(p) => p,
        None => canonicalize_walk(&absolute)?,
    };
    if resolved.to_str().is_none() {
        return Err(CanonError::NotUtf8(resolved.to_string_lossy().into_owned()));
    }
    Ok(resolved)
}

/// Where a path word of a command points, and what is there.
#[derive(Debug)]
pub struct Resolved {
    /// The canonical path.
    pub path: PathBuf,
    /// The metadata of what the path names, when it exists (symlinks followed).
    pub meta: Option<std::fs::Metadata>,
}

/// Canonicalize `rest` relative to `base`, which must itself be canonical (an
/// absolute `rest` starts over from `/`). Walks only the components of
/// `rest`, one `lstat` each, so a plain word costs one system call. A
/// component that cannot be looked at (no permission) ends the walk like a
/// missing one: the rest is collapsed lexically, as the command itself could
/// not go further either. Used for the words of a command, most of which name
/// no path at all.
pub fn canonicalize_in(base: &Path, rest: &str) -> Result<Resolved, CanonError> {
    if rest.contains('\0') {
        return Err(CanonError::Nul);
    }
    if rest.len() > MAX_PATH_BYTES {
        return Err(CanonError::TooLong(rest.len()));
    }
    let mut pending: VecDeque<OsString> = components_of(Path::new(rest));
    let mut resolved = if rest.starts_with('/') {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    };
    let mut links_followed = 0usize;
    let mut exists = true;
    let mut meta = None;
    while let Some(name) = pending.pop_front() {
        if name == "." || name.is_empty() {
            continue;
        }
        if name == ".." {
            resolved.pop();
            meta = None;
            continue;
        }
        resolved.push(&name);
        if !exists {
            continue;
        }
        match std::fs::symlink_metadata(&resolved) {
            Ok(m) if m.file_type().is_symlink() => {
                links_followed += 1;
                if links_followed > MAX_SYMLINKS {
                    return Err(CanonError::SymlinkLoop(display(&resolved)));
                }
                let target = std::fs::read_link(&resolved)
                    .map_err(|e| CanonError::Io(display(&resolved), e.to_string()))?;
                resolved.pop();
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                for part in components_of(&target).into_iter().rev() {
                    pending.push_front(part);
                }
                meta = None;
            }
            Ok(m) => meta = Some(m),
            Err(_) => {
                exists = false;
                meta = None;
            }
        }
    }
    if resolved.to_str().is_none() {
        return Err(CanonError::NotUtf8(resolved.to_string_lossy().into_owned()));
    }
    // A trailing `..` leaves what is there unknown: look.
    if exists && meta.is_none() {
        meta = std::fs::metadata(&resolved).ok();
    }
    Ok(Resolved {
        path: resolved,
        meta,
    })
}

/// Collapse `.` and `..` without touching the file system.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut parts = Vec::new();
    push_normal(&mut parts, path.as_os_str().as_bytes());
    let mut out = PathBuf::from("/");
    for part in parts {
        out.push(OsStr::from_bytes(part));
    }
    out
}

/// Add the components of `piece` to `parts` as [`normalize_lexically`] reads
/// them: empty parts and `.` are dropped, `..` drops the part before it (never
/// above the root). An absolute piece starts over, as `Path::join` does.
pub(crate) fn push_normal<'a>(parts: &mut Vec<&'a [u8]>, piece: &'a [u8]) {
    if piece.starts_with(b"/") {
        parts.clear();
    }
    for part in piece.split(|&b| b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
}

/// Let the kernel resolve a path that exists: open it with `O_PATH` (which
/// neither reads nor triggers anything) and read back where the descriptor
/// points. Three system calls instead of one per component. `None` whenever
/// that is not possible (a missing or dangling part, no `/proc`, a deleted
/// file); [`canonicalize_walk`] then walks the path, with the same result.
#[cfg(target_os = "linux")]
fn canonicalize_existing(absolute: &Path) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;

    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
        .open(absolute)
        .ok()?;
    let target = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()?;
    let bytes = target.as_os_str().as_bytes();
    (target.is_absolute() && !bytes.ends_with(b" (deleted)")).then_some(target)
}

#[cfg(not(target_os = "linux"))]
fn canonicalize_existing(_absolute: &Path) -> Option<PathBuf> {
    None
}

/// Walk an absolute path component by component, resolving every symlink met on
/// the way, including dangling ones. Once a component does not exist, the rest
/// cannot exist either and is collapsed lexically.
fn canonicalize_walk(absolute: &Path) -> Result<PathBuf, CanonError> {
    let mut pending: VecDeque<OsString> = components_of(absolute);
    let mut resolved = PathBuf::from("/");
    let mut links_followed = 0usize;
    let mut exists = true;

    while let Some(name) = pending.pop_front() {
        if name == "." || name.is_empty() {
            continue;
        }
        if name == ".." {
            resolved.pop();
            continue;
        }
        let candidate = resolved.join(&name);
        if !exists {
            resolved = candidate;
            continue;
        }
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links_followed += 1;
                if links_followed > MAX_SYMLINKS {
                    return Err(CanonError::SymlinkLoop(display(&candidate)));
                }
                let target = std::fs::read_link(&candidate)
                    .map_err(|e| CanonError::Io(display(&candidate), e.to_string()))?;
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                for part in components_of(&target).into_iter().rev() {
                    pending.push_front(part);
                }
            }
            Ok(_) => resolved = candidate,
            Err(e) if is_absent(&e) => {
                exists = false;
                resolved = candidate;
            }
            Err(e) => return Err(CanonError::Io(display(&candidate), e.to_string())),
        }
    }
    Ok(resolved)
}

fn is_absent(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

fn components_of(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect()
}

fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let cwd = home.join("projects/app");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        (tmp, home, cwd)
    }

    #[test]
    fn collapses_dots_and_expands_tilde() {
        let (_t, home, cwd) = setup();
        let c = |p: &str| canonicalize(p, &cwd, &home).unwrap();
        assert_eq!(c("~/projects/../.ssh/id_rsa"), home.join(".ssh/id_rsa"));
        assert_eq!(c(""), cwd);
        assert_eq!(c("./a/./b/../c"), cwd.join("a/c"));
        assert_eq!(c("../../.ssh"), home.join(".ssh"));
        assert_eq!(c("//etc/./passwd"), PathBuf::from("/etc/passwd"));
        assert_eq!(c("/../../etc"), PathBuf::from("/etc"));
    }

    #[test]
    fn a_path_longer_than_the_kernel_takes_is_refused_unresolved() {
        let (_t, home, cwd) = setup();
        let at_limit = "a/".repeat(MAX_PATH_BYTES / 2);
        assert!(canonicalize(&at_limit, &cwd, &home).is_ok());
        assert!(canonicalize_in(&cwd, &at_limit).is_ok());
        let over = format!("{at_limit}b");
        let err = canonicalize(&over, &cwd, &home).unwrap_err();
        assert!(matches!(err, CanonError::TooLong(4097)), "{err}");
        assert!(err.to_string().contains("4096 bytes"), "{err}");
        assert!(matches!(
            canonicalize_in(&cwd, &over),
            Err(CanonError::TooLong(4097))
        ));
    }

    #[test]
    fn follows_symlinks_and_dangling_links() {
        let (_t, home, cwd) = setup();
        symlink(home.join(".ssh"), cwd.join("keys")).unwrap();
        symlink(home.join(".ssh/not_yet"), cwd.join("dangling")).unwrap();
        symlink("../../.ssh", cwd.join("relative")).unwrap();
        let c = |p: &str| canonicalize(p, &cwd, &home).unwrap();
        assert_eq!(c("keys/id_rsa"), home.join(".ssh/id_rsa"));
        assert_eq!(c("dangling"), home.join(".ssh/not_yet"));
        assert_eq!(c("relative/x"), home.join(".ssh/x"));
        assert_eq!(c("keys/../x"), home.join("x"));
    }

    #[test]
    fn proc_self_root_resolves() {
        let (_t, home, cwd) = setup();
        let p = canonicalize("/proc/self/root/etc/passwd", &cwd, &home).unwrap();
        assert_eq!(p, PathBuf::from("/etc/passwd"));
    }

    #[test]
    fn the_kernel_fast_path_and_the_walk_agree() {
        let (_t, home, cwd) = setup();
        std::fs::create_dir_all(cwd.join("a/b")).unwrap();
        symlink(home.join(".ssh"), cwd.join("keys")).unwrap();
        symlink("a/b", cwd.join("ab")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "k").unwrap();
        for p in [
            "keys/id_rsa",
            "ab/../b",
            "a/./b/..",
            "keys",
            "/proc/self/root/etc",
            ".",
        ] {
            let absolute = cwd.join(p);
            let fast = canonicalize_existing(&absolute);
            if cfg!(target_os = "linux") {
                assert!(fast.is_some(), "{p}");
            }
            if let Some(fast) = fast {
                assert_eq!(fast, canonicalize_walk(&absolute).unwrap(), "{p}");
            }
        }
        assert_eq!(canonicalize_existing(&cwd.join("missing/x")), None);
    }

    #[test]
    fn refuses_nul_and_loops() {
        let (_t, home, cwd) = setup();
        assert_eq!(canonicalize("a\0b", &cwd, &home), Err(CanonError::Nul));
        symlink(cwd.join("loop"), cwd.join("loop")).unwrap();
        assert!(matches!(
            canonicalize("loop", &cwd, &home),
            Err(CanonError::SymlinkLoop(_))
        ));
    }
}
