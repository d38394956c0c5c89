//! Running one command for real under `strace -f` in a fresh copy of the
//! template, and reading what it did from the trace: the files it wrote,
//! the floor and credential-store paths it opened or listed, and the
//! programs it ran.
//!
//! strace prints one file per process (`-ff`) and, with `-y`, the path of
//! every descriptor, `AT_FDCWD` included, so relative names resolve without
//! following `chdir` by hand.

use crate::wait::{Bounded, BoundedChild, DEADLINE};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::fixture::Tree;

/// The system calls traced: everything that writes a name, opens, lists or
/// stats one, or runs a program.
const SYSCALLS: &str = "open,openat,openat2,creat,unlink,unlinkat,rmdir,rename,renameat,renameat2,\
mkdir,mkdirat,link,linkat,symlink,symlinkat,chmod,fchmod,fchmodat,chown,fchown,lchown,fchownat,\
truncate,ftruncate,utimensat,utimes,utime,futimesat,mknod,mknodat,execve,execveat,stat,lstat,\
newfstatat,statx,access,faccessat,faccessat2,readlink,readlinkat,getdents64,getdents,chdir,fchdir";

/// Makes every mount read-only but `$1`, the tree (bound onto itself so it
/// is a mount of its own), /dev, /proc and /sys; then runs the rest. The
/// mount namespace is private (unshare's default), so nothing of this
/// reaches the host. Exits 125 when a mount cannot be made read-only.
const READ_ONLY_BUT_TREE: &str = r#"tree=$1; shift
mount --bind -- "$tree" "$tree" || { echo "oracle: cannot bind $tree" >&2; exit 125; }
mounts=$(while read -r _ m _ o _; do
  case $m in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*|"$tree") continue ;; esac
  case $o in ro|ro,*) continue ;; esac
  echo "$m"
done < /proc/self/mounts)
for m in $mounts; do
  case $m in *\\*) echo "oracle: cannot read the mount point $m" >&2; exit 125 ;; esac
  mount -o remount,bind,ro -- "$m" || { echo "oracle: cannot make $m read-only" >&2; exit 125; }
done
# The working directory was found before the tree's own mount: find it again.
cd -- "$PWD" || exit 125
exec "$@""#;

/// What kind of access a traced call made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Opened for writing, created, removed, renamed, linked, or changed
    /// its mode, owner, size or times.
    Write,
    /// Opened for reading (a directory too).
    Open,
    /// Listed a directory's entries.
    List,
    /// Looked at a name without opening it (stat, access, readlink).
    Look,
}

/// One traced call on a path.
#[derive(Debug, Clone)]
pub struct Touch {
    /// The system call.
    pub call: String,
    /// The path, absolute and with `.`/`..` collapsed.
    pub path: PathBuf,
    /// The kind of access.
    pub access: Access,
}

/// One program started.
#[derive(Debug, Clone)]
pub struct Exec {
    /// The executable's path as given to execve.
    pub path: String,
    /// Its arguments.
    pub argv: Vec<String>,
    /// The process's working directory.
    pub cwd: PathBuf,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Run {
    /// Every traced path access of every process.
    pub touches: Vec<Touch>,
    /// Every successful execve after the first (the shell that runs the line).
    pub execs: Vec<Exec>,
    /// stdout and stderr, lossy, at most a few kilobytes.
    pub output: String,
    /// True when the run passed its deadline and was killed.
    pub timed_out: bool,
    /// Why the run could not be traced, if it could not.
    pub error: Option<String>,
}

/// The environment a run gets besides HOME, TMPDIR and the working
/// directory: `PATH` and the variables the toolchains need.
#[derive(Debug, Clone, Default)]
pub struct RunEnv {
    /// `PATH`.
    pub path: String,
    /// More variables (RUSTUP_HOME, …).
    pub vars: Vec<(String, String)>,
}

/// Runs `command` with `bash -c` under strace in `tree`, which must be a
/// fresh copy of the template.
pub fn run(tree: &Tree, command: &str, env: &RunEnv, timeout_secs: u64) -> Run {
    let home = tree.home();
    let cwd = tree.project();
    let tmp = tree.tmp();
    // Never run a generated command anywhere but in its throwaway tree.
    let temp_root = std::fs::canonicalize(std::env::temp_dir()).unwrap();
    for dir in [&home, &cwd, &tmp] {
        assert!(
            dir.starts_with(&tree.root) && tree.root.starts_with(&temp_root) && dir.is_dir(),
            "refusing to run `{command}`: {} is not in the throwaway tree {}",
            dir.display(),
            tree.root.display()
        );
    }
    assert!(tree.root != temp_root && tree.root.components().count() > 2);
    if let Err(why) = stays_in_tree(command) {
        panic!("refusing to run `{command}`: {why}");
    }
    let traces = tree.root.join("strace");
    std::fs::create_dir(&traces).unwrap();
    // The run's processes die with the test: setpriv kills unshare when
    // the thread that started it ends, unshare kills its child (the pid
    // namespace's first process) when it dies, and every process of a pid
    // namespace dies with its first. The namespace has no network but its
    // own loopback, and its own /proc, so strace's `-y` names descriptors
    // of the right processes.
    let mut c = Command::new("setpriv");
    c.args(["--pdeathsig", "KILL", "--", "unshare"])
        .args(unshare_args());
    // Everything but the tree (and /dev, /proc, /sys) is read-only in the
    // run's mount namespace, so a command that breaks the promise outside
    // its tree (`RUSTC_WRAPPER=touch` touches the real rustc) writes
    // nothing there: the attempt is traced, failing with EROFS, and judged
    // as the write it would have been.
    c.args(["--", "sh", "-c", READ_ONLY_BUT_TREE, "sh"])
        .arg(&tree.root)
        .args(["timeout", "-k", "2", &timeout_secs.to_string()])
        .args([
            "strace",
            "--seccomp-bpf",
            "-ff",
            "-qq",
            "-y",
            "-s",
            "4096",
            "-e",
            "signal=none",
        ])
        .arg("-e")
        .arg(format!("trace={SYSCALLS}"))
        .arg("-o")
        .arg(traces.join("t"))
        .args(["bash", "-c", command])
        .env_clear()
        .env("HOME", &home)
        .env("TMPDIR", &tmp)
        .env("PATH", &env.path)
        .env("LANG", "C.UTF-8")
        .env("USER", "dev")
        .env("TERM", "dumb")
        .envs(env.vars.iter().map(|(k, v)| (k, v)))
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    let start = Instant::now();
    let child = match c.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Run {
                error: Some(format!("cannot start strace: {e}")),
                ..Run::default()
            }
        }
    };
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output_within(DEADLINE));
    });
    let out = match rx.recv_timeout(Duration::from_secs(timeout_secs + 10)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // The process group this run made, and only it.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status_within(DEADLINE);
            return Run {
                timed_out: true,
                ..Run::default()
            };
        }
    };
    let mut output = String::from_utf8_lossy(&out.stdout).to_string();
    output.push_str(&String::from_utf8_lossy(&out.stderr));
    if output.len() > 4096 {
        let mut end = 4096;
        while !output.is_char_boundary(end) {
            end -= 1;
        }
        output.truncate(end);
    }
    let timed_out =
        out.status.code() == Some(124) || start.elapsed() >= Duration::from_secs(timeout_secs);
    let mut run = Run {
        output,
        timed_out,
        ..Run::default()
    };
    let mut names: Vec<_> = std::fs::read_dir(&traces)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    // The first process (the lowest pid, barring wrap-around) is the shell.
    names.sort_by_key(|p| {
        p.extension()
            .and_then(|e| e.to_str())
            .and_then(|e| e.parse::<u64>().ok())
            .unwrap_or(u64::MAX)
    });
    if names.is_empty() {
        run.error = Some(format!("no trace: {}", run.output));
        return run;
    }
    for (i, name) in names.iter().enumerate() {
        let text = std::fs::read_to_string(name).unwrap_or_default();
        parse_process(&text, i == 0, &cwd, &mut run);
    }
    std::fs::remove_dir_all(&traces).unwrap();
    run
}

/// Whether `command` names only paths in its tree: relative ones that
/// climb at most to the tree's root (the project lies two levels below the
/// home, which lies one below the root), the home's, and of the absolute
/// ones only `/dev/stdin` and `/dev/null`.
pub fn stays_in_tree(command: &str) -> Result<(), String> {
    for climb in ["../../..", "~/../..", "HOME/../..", "}/../..", "\"/../.."] {
        if command.contains(climb) {
            return Err(format!("it climbs out of its tree (`{climb}`)"));
        }
    }
    let bytes = command.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        let starts_word = i == 0 || b" \t=\"'{,(:<>|;&".contains(&bytes[i - 1]);
        if *b == b'/' && starts_word {
            let rest = &command[i..];
            if !(rest.starts_with("/dev/stdin") || rest.starts_with("/dev/null")) {
                return Err(format!("it names an absolute path (`{rest}`)"));
            }
        }
    }
    Ok(())
}

/// unshare's options for a run: a pid namespace (with its own /proc) that
/// dies with unshare, a private mount namespace, and no network. Unless
/// root, a user namespace too, in which the run is root (to make its
/// mounts read-only).
pub fn unshare_args() -> Vec<&'static str> {
    let mut args = Vec::new();
    if !nix_is_root() {
        args.push("--map-root-user");
    }
    args.extend([
        "--net",
        "--pid",
        "--fork",
        "--kill-child=KILL",
        "--mount-proc",
    ]);
    args
}

fn nix_is_root() -> bool {
    static ROOT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ROOT.get_or_init(|| {
        let out = Command::new("id")
            .arg("-u")
            .output_within(DEADLINE)
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim() == "0"
    })
}

/// Reads one process's trace.
fn parse_process(text: &str, first: bool, start_cwd: &Path, run: &mut Run) {
    let mut cwd = start_cwd.to_path_buf();
    let mut execs = 0;
    for line in text.lines() {
        let Some(open) = line.find('(') else { continue };
        let call = &line[..open];
        if !call.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            continue;
        }
        let Some(eq) = line.rfind(") = ") else {
            continue;
        };
        let args = &line[open + 1..eq];
        let ret = &line[eq + 4..];
        let ok = !ret.starts_with('-');
        let strings = quoted_strings(args);
        let fds = fd_paths(args);
        if let Some(p) = fds.first().filter(|_| args.starts_with("AT_FDCWD")) {
            cwd = PathBuf::from(p);
        }
        let resolve = |dirfd: Option<&str>, name: &str| -> PathBuf {
            let base = dirfd.map(PathBuf::from).unwrap_or_else(|| cwd.clone());
            normalize(&base.join(name))
        };
        let mut touch = |path: PathBuf, access: Access| {
            run.touches.push(Touch {
                call: call.to_string(),
                path,
                access,
            })
        };
        match call {
            "execve" | "execveat" => {
                if !ok {
                    continue;
                }
                execs += 1;
                if first && execs == 1 {
                    continue;
                }
                let path = strings.first().cloned().unwrap_or_default();
                run.execs.push(Exec {
                    path,
                    argv: argv_of(args),
                    cwd: cwd.clone(),
                });
            }
            "chdir" if ok => {
                if let Some(name) = strings.first() {
                    cwd = resolve(None, name);
                    touch(cwd.clone(), Access::Look);
                }
            }
            "fchdir" if ok => {
                if let Some(p) = fds.first() {
                    cwd = PathBuf::from(p);
                }
            }
            "open" | "openat" | "openat2" | "creat" => {
                let write = call == "creat"
                    || ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC"]
                        .iter()
                        .any(|f| args.contains(f));
                // The opened file as the kernel found it, else the name.
                let path = match (ok, ret_path(ret)) {
                    (true, Some(p)) => PathBuf::from(p),
                    _ => {
                        let Some(name) = strings.first() else {
                            continue;
                        };
                        let dirfd = if call == "openat" || call == "openat2" {
                            fds.first().map(String::as_str)
                        } else {
                            None
                        };
                        resolve(dirfd, name)
                    }
                };
                if write && !ok && !ret.contains("EROFS") {
                    // A write that did not happen is not a write; the name
                    // was still looked at. One that only the run's
                    // read-only mounts stopped is.
                    touch(path, Access::Look);
                } else {
                    touch(path, if write { Access::Write } else { Access::Open });
                }
            }
            "getdents64" | "getdents" => {
                if let Some(p) = fds.first() {
                    touch(PathBuf::from(p), Access::List);
                }
            }
            "ftruncate" | "fchmod" | "fchown" if ok => {
                if let Some(p) = fds.first() {
                    touch(PathBuf::from(p), Access::Write);
                }
            }
            _ => {
                let writes = matches!(
                    call,
                    "unlink"
                        | "unlinkat"
                        | "rmdir"
                        | "rename"
                        | "renameat"
                        | "renameat2"
                        | "mkdir"
                        | "mkdirat"
                        | "link"
                        | "linkat"
                        | "symlink"
                        | "symlinkat"
                        | "chmod"
                        | "fchmodat"
                        | "chown"
                        | "lchown"
                        | "fchownat"
                        | "truncate"
                        | "utimensat"
                        | "utimes"
                        | "utime"
                        | "futimesat"
                        | "mknod"
                        | "mknodat"
                );
                let at = call.ends_with("at") || call == "renameat2" || call == "faccessat2";
                let mut fd_iter = fds.iter();
                for name in &strings {
                    // Each name of an *at call follows its own directory.
                    let dirfd = if at {
                        fd_iter.next().map(String::as_str)
                    } else {
                        None
                    };
                    let path = if name.is_empty() {
                        // AT_EMPTY_PATH: the descriptor itself.
                        match dirfd {
                            Some(d) => PathBuf::from(d),
                            None => continue,
                        }
                    } else {
                        resolve(dirfd, name)
                    };
                    let access = if writes && (ok || ret.contains("EROFS")) {
                        Access::Write
                    } else {
                        Access::Look
                    };
                    // symlink's first string is the link's text, not a name.
                    if (call == "symlink" || call == "symlinkat") && Some(name) == strings.first() {
                        continue;
                    }
                    touch(path, access);
                }
            }
        }
    }
}

/// The string literals among a call's arguments, unescaped.
fn quoted_strings(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = args.chars().peekable();
    let mut depth = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth = depth.saturating_sub(1),
            '"' => {
                let s = unescape(&mut chars);
                if depth == 0 {
                    out.push(s);
                }
            }
            _ => {}
        }
    }
    out
}

/// execve's argument vector: the strings of its first `[...]`.
fn argv_of(args: &str) -> Vec<String> {
    let Some(start) = args.find(", [") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut chars = args[start + 3..].chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => out.push(unescape(&mut chars)),
            ']' => break,
            _ => {}
        }
    }
    out
}

/// Reads a C-escaped string up to its closing quote.
fn unescape(chars: &mut std::iter::Peekable<std::str::Chars>) -> String {
    let mut bytes = Vec::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('n') => bytes.push(b'\n'),
                Some('t') => bytes.push(b'\t'),
                Some('r') => bytes.push(b'\r'),
                Some('v') => bytes.push(0x0b),
                Some('f') => bytes.push(0x0c),
                Some('x') => {
                    let hex: String = chars.by_ref().take(2).collect();
                    bytes.push(u8::from_str_radix(&hex, 16).unwrap_or(b'?'));
                }
                Some(d @ '0'..='7') => {
                    let mut v = d.to_digit(8).unwrap();
                    for _ in 0..2 {
                        match chars.peek() {
                            Some(n @ '0'..='7') => {
                                v = v * 8 + n.to_digit(8).unwrap();
                                chars.next();
                            }
                            _ => break,
                        }
                    }
                    bytes.push(v as u8);
                }
                Some(other) => {
                    let mut buf = [0; 4];
                    bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                }
                None => break,
            },
            other => {
                let mut buf = [0; 4];
                bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The paths strace printed for descriptors among the arguments
/// (`3</a/b>`, `AT_FDCWD</a>`), in order.
fn fd_paths(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = args.as_bytes();
    let mut i = 0;
    while let Some(off) = args[i..].find("</") {
        let at = i + off;
        // A descriptor: digits or AT_FDCWD right before `<`.
        let before = &args[..at];
        let is_fd = before.ends_with("AT_FDCWD")
            || before
                .bytes()
                .last()
                .map(|b| b.is_ascii_digit())
                .unwrap_or(false);
        let Some(end) = args[at..].find('>') else {
            break;
        };
        if is_fd && bytes[at + 1] == b'/' {
            out.push(args[at + 1..at + end].to_string());
        }
        i = at + end;
    }
    out
}

/// The path of the descriptor a call returned (`3</a/b>`).
fn ret_path(ret: &str) -> Option<&str> {
    let start = ret.find("</")?;
    let end = ret[start..].find('>')?;
    Some(&ret[start + 1..start + end])
}

/// `path` with `.` and `..` collapsed, lexically.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_stay_in_their_tree() {
        for ok in [
            "cat ../../.ssh/id_rsa",
            "cat ~/../home/.ssh/config",
            "RIPGREP_CONFIG_PATH=/dev/stdin rg KEY notes.txt",
            "git --super-prefix x/ show",
            "cat {../..,x}/.ssh/id_rsa",
        ] {
            assert!(stays_in_tree(ok).is_ok(), "{ok}");
        }
        for bad in [
            "cat /etc/passwd",
            "sort -o=/tmp/x a",
            "cat {x,/etc/shadow}",
            "cat ../../../x",
            "ls ~/../..",
            "cat \"$HOME\"/../../x",
        ] {
            assert!(stays_in_tree(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_names_descriptors_and_argv() {
        let line = r#"openat(AT_FDCWD</h/p>, "../x\"y", O_WRONLY|O_CREAT|O_TRUNC, 0666)"#;
        assert_eq!(quoted_strings(line), vec!["../x\"y".to_string()]);
        assert_eq!(ret_path("3</h/x>"), Some("/h/x"));
        assert_eq!(fd_paths(&line[7..]), vec!["/h/p".to_string()]);
        let exec = r#""/usr/bin/gpg", ["gpg", "--verify", "a b"], 0x5 /* 3 vars */"#;
        assert_eq!(argv_of(exec), vec!["gpg", "--verify", "a b"]);
        assert_eq!(
            normalize(Path::new("/a/b/../../c/./d")),
            PathBuf::from("/c/d")
        );
    }
}
