//! Escape attempts against the real binary, for every way sandgate confines a
//! command (`sandgate exec` under `landlock` and `bwrap`, and `sandgate run`),
//! as root and as an unprivileged user.
//!
//! Every row runs twice on a fresh tree each time: first unconfined (the
//! same script under `/bin/sh`, as the same user), where the attempt must
//! succeed, so that a row that cannot fail fails; then confined, where it
//! must not. The unprivileged user is `sandgate-test` (created by `.ci/run`),
//! entered with `setpriv --reuid`; its tree lives where that user can reach
//! it, and the binary is copied there, wherever the checkout is.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/wait.rs"]
mod wait;

use wait::{Bounded, DEADLINE};

use std::fs;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixDatagram, UnixListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use sandgate_confine::preload::MARKER;

#[path = "../../../tests/support/exe.rs"]
mod exe;

#[path = "../../../tests/support/ci.rs"]
mod ci;

use ci::{has, is_root, skip as missing, PATH, TEST_USER};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Who runs an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Root,
    User { uid: u32, gid: u32 },
}

fn test_user() -> Option<Who> {
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id")
            .args([flag, TEST_USER])
            .output_within(DEADLINE)
            .ok()?;
        text(&out.stdout).trim().parse().ok()
    };
    Some(Who::User {
        uid: id("-u")?,
        gid: id("-g")?,
    })
}

/// The users this machine can test: root and the test user when the tests
/// run as root, else only the user running them (as `Root`'s stand-in
/// there is nobody to switch to).
fn users() -> Vec<Who> {
    if !is_root() {
        missing("the escape tests run as root and as `sandgate-test`; run them as root");
        return Vec::new();
    }
    let mut users = vec![Who::Root];
    if !has("setpriv") {
        missing("`setpriv` is not installed (package util-linux)");
        return users;
    }
    match test_user() {
        Some(user) => users.push(user),
        None => missing(&format!(
            "the user `{TEST_USER}` does not exist (`useradd --system {TEST_USER}`; .ci/run creates it)"
        )),
    }
    users
}

/// How an attempt is confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Landlock,
    Bwrap,
    /// `landlock` with `unix_sockets` listed: the connect supervisor is on.
    LandlockSockets,
    /// `bwrap` with `unix_sockets` listed.
    BwrapSockets,
    Run,
    /// `sandgate run` holding its protected paths by carving Landlock rules
    /// around them instead of read-only mounts (`SANDGATE_RUN_PROTECTION=carve`).
    RunCarve,
}

impl Mode {
    fn available(self) -> bool {
        match self {
            Mode::Landlock | Mode::LandlockSockets | Mode::Run | Mode::RunCarve => {
                let abi = sandgate_sandbox::landlock_abi();
                if abi < 6 {
                    missing(&format!(
                        "the kernel has Landlock ABI {abi}; these tests need 6"
                    ));
                    return false;
                }
                true
            }
            Mode::Bwrap | Mode::BwrapSockets => {
                if has("bwrap") {
                    return true;
                }
                missing("`bwrap` is not installed (package bubblewrap)");
                false
            }
        }
    }
}

/// The base directory for trees: reachable by every user, outside every
/// tree `sandgate run` lets a program write (`/tmp`, `/var/tmp`, …), and
/// wherever the checkout is.
fn base() -> &'static Path {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        let base = PathBuf::from("/run/sandgate-escape-tests");
        fs::create_dir_all(&base).unwrap();
        fs::set_permissions(&base, fs::Permissions::from_mode(0o755)).unwrap();
        base
    })
}

/// Whether every user can reach and run `path`: it and each directory
/// above it are executable by others.
fn runnable_by_all(path: &Path) -> bool {
    path.ancestors()
        .all(|p| fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
}

/// The binary, where every user can run it: in place when they can reach
/// it, else copied once per test process to `bin-PID` (directories left by
/// test processes that have ended are removed first).
fn binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let source = Path::new(env!("CARGO_BIN_EXE_sandgate"));
        if runnable_by_all(source) {
            return source.to_path_buf();
        }
        for entry in fs::read_dir(base()).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("bin-") {
                if !Path::new("/proc").join(pid).exists() {
                    let _ = fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = base().join(format!("bin-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        let bin = dir.join("sandgate");
        if fs::hard_link(source, &bin).is_ok() {
            fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
        } else {
            exe::copy_executable(source, &bin);
        }
        bin
    })
}

/// `root/home` (with `.ssh/id_rsa`), `root/work` (the workdir or
/// workspace), `root/outside` (with `file.txt`), `root/bin` (helper
/// scripts), all owned by the user the attempt runs as.
struct Tree {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    work: PathBuf,
    outside: PathBuf,
    who: Who,
}

const KEY: &str = "SECRET KEY MATERIAL\n";

/// Opens a file by a handle given in hex (`HANDLE`, from `name_to_handle_at`
/// outside) on the mount at `MOUNT`, and prints it.
const OPEN_BY_HANDLE_PY: &str = r#"import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
raw = bytes.fromhex(os.environ["HANDLE"])
buf = ctypes.create_string_buffer(raw, len(raw))
mount = os.open(os.environ["MOUNT"], os.O_RDONLY)
fd = libc.open_by_handle_at(mount, buf, os.O_RDONLY)
if fd < 0:
    sys.exit("open_by_handle_at: " + os.strerror(ctypes.get_errno()))
sys.stdout.write(os.read(fd, 4096).decode())
"#;

/// Prints the handle of `argv[1]` in hex.
const NAME_TO_HANDLE_PY: &str = r#"import ctypes, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(8 + 128)
struct.pack_into("I", buf, 0, 128)
mount_id = ctypes.c_int()
if libc.name_to_handle_at(-100, sys.argv[1].encode(), buf, ctypes.byref(mount_id), 0) != 0:
    sys.exit("name_to_handle_at failed")
size = struct.unpack_from("I", buf, 0)[0]
print(buf.raw[: 8 + size].hex())
"#;

/// Attaches to `VICTIM` with ptrace; exits 0 when attached.
const PTRACE_PY: &str = r#"import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH, PTRACE_DETACH = 16, 17
pid = int(os.environ["VICTIM"])
if libc.ptrace(PTRACE_ATTACH, pid, 0, 0) != 0:
    sys.exit("ptrace: " + os.strerror(ctypes.get_errno()))
os.waitpid(pid, 0)
libc.ptrace(PTRACE_DETACH, pid, 0, 0)
print("attached")
"#;

/// Connects to the UNIX socket at `SOCK`; exits 0 when connected.
const CONNECT_PY: &str = r#"import os, socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(os.environ["SOCK"])
s.sendall(b"hello from inside\n")
print("connected")
"#;

/// `chmod(argv[1], 0777)` through the 32-bit system call ABI (`int 0x80`)
/// from this 64-bit process: machine code in memory below 4 GiB, where a
/// 32-bit pointer reaches; exits 0 when the call succeeded.
const INT80_CHMOD_PY: &str = r#"import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
# PROT_READ|WRITE|EXEC, MAP_PRIVATE|MAP_ANONYMOUS|MAP_32BIT
mem = libc.mmap(None, 4096, 7, 0x22 | 0x40, -1, 0)
path = sys.argv[1].encode() + b"\0"
ctypes.memmove(mem + 256, path, len(path))
le = lambda v: v.to_bytes(4, "little")
# push rbx; mov eax, 15 (chmod); mov ebx, path; mov ecx, 0777; int 0x80;
# movsxd rax, eax; pop rbx; ret
code = b"\x53\xb8" + le(15) + b"\xbb" + le(mem + 256) + b"\xb9" + le(0o777) + b"\xcd\x80\x48\x63\xc0\x5b\xc3"
ctypes.memmove(mem, code, len(code))
rc = ctypes.CFUNCTYPE(ctypes.c_long)(mem)()
print("int 0x80 chmod:", rc)
sys.exit(0 if rc == 0 else 1)
"#;

/// Metadata changes named relative to a directory the supervisor could
/// not name before: one called `d (deleted)`, and a removed working
/// directory, whose `..` still leads out. Prints what each call did.
const UNNAMED_BASE_PY: &str = r#"import os
outside = os.path.join(os.environ["OUTSIDE"], "file.txt")
work = os.getcwd()
def attempt(name, call):
    try:
        call()
        print(name, "ok")
    except OSError as e:
        print(name, e.strerror)
os.mkdir("d (deleted)")
fd = os.open("d (deleted)", os.O_RDONLY)
rel = os.path.relpath(outside, os.path.join(work, "d (deleted)"))
attempt("chmod beside", lambda: os.chmod(rel, 0o600, dir_fd=fd))
attempt("utime beside", lambda: os.utime(rel, (1, 1), dir_fd=fd))
attempt("chmod .git/config beside", lambda: os.chmod("../.git/config", 0o606, dir_fd=fd))
os.mkdir("gone")
os.chdir("gone")
rel = os.path.relpath(outside, os.getcwd())
os.rmdir("../gone")
attempt("chmod from a removed cwd", lambda: os.chmod(rel, 0o604))
attempt("chmod .git/config from a removed cwd", lambda: os.chmod("../.git/config", 0o660))
"#;

/// Sets the "no dump" inode flag (`chattr +d`) of `argv[1]` with the
/// `FS_IOC_SETFLAGS` ioctl, on a descriptor opened only for reading; prints
/// the flags before and after.
const CHATTR_PY: &str = r#"import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
get = lambda: struct.unpack("l", fcntl.ioctl(fd, 0x80086601, struct.pack("l", 0)))[0]
before = get()
try:
    fcntl.ioctl(fd, 0x40086602, struct.pack("l", before | 0x40))
    print("set", hex(before), hex(get()))
except OSError as e:
    print("refused:", e.strerror)
"#;

/// Pushes a character into the input of a terminal that is the caller's
/// controlling terminal (a new pseudo-terminal, in a new session), as a
/// program would push a command for the shell that reads the terminal once
/// the program ends; exits 0 when `TIOCSTI` succeeded and the character
/// arrived.
const TIOCSTI_PY: &str = r#"import fcntl, os, pty, sys, termios
master, slave = pty.openpty()
name = os.ttyname(slave)
pid = os.fork()
if pid == 0:
    os.setsid()
    tty = os.open(name, os.O_RDWR)
    try:
        fcntl.ioctl(tty, termios.TIOCSTI, b"Z")
    except OSError as e:
        print("TIOCSTI:", e)
        os._exit(1)
    os._exit(0)
_, status = os.waitpid(pid, 0)
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(1)
attrs = termios.tcgetattr(slave)
attrs[3] &= ~termios.ICANON
termios.tcsetattr(slave, termios.TCSANOW, attrs)
got = os.read(slave, 1)
print("pushed:", got)
sys.exit(0 if got == b"Z" else 1)
"#;

/// Sends a datagram to the UNIX socket at `SOCK` from one end of a datagram
/// socket pair (no `socket(AF_UNIX)` needed); exits 0 when sent.
const SENDTO_PAIR_PY: &str = r#"import os, socket
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
a.sendto(b"hello from inside", os.environ["SOCK"])
print("sent")
"#;

/// Like [`SENDTO_PAIR_PY`] with a `SOCK_RAW` pair, which `AF_UNIX` makes a
/// datagram pair.
const SENDTO_RAW_PAIR_PY: &str = r#"import os, socket
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_RAW)
a.sendto(b"hello from inside", os.environ["SOCK"])
print("sent")
"#;

/// Connects to the abstract UNIX socket named `NAME`; exits 0 when connected.
const CONNECT_ABSTRACT_PY: &str = r#"import os, socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("\0" + os.environ["NAME"])
s.sendall(b"hello from inside\n")
print("connected")
"#;

/// A Python module for the race rows: `flipping(first, second)` keeps a
/// buffer in shared memory switching between two values of one length from
/// another process, so that a supervisor which checked the value and let
/// the kernel read it again could be fooled; `tries()` repeats for 4
/// seconds.
const FLIP_PY: &str = r#"import contextlib, ctypes, mmap, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)

@contextlib.contextmanager
def flipping(first, second):
    shared = mmap.mmap(-1, len(first))
    shared[:] = first
    flipper = os.fork()
    if flipper == 0:
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: never outlive the test
        stop = time.time() + 8
        while time.time() < stop:
            # Each value stays a while, so that a call meets either about
            # half the time, whatever the two processes' timing.
            for _ in range(100):
                shared[:] = second
                for _ in range(200):
                    pass
                shared[:] = first
                for _ in range(200):
                    pass
        os._exit(0)
    try:
        yield ctypes.c_char.from_buffer(shared)
    finally:
        os.kill(flipper, signal.SIGKILL)
        os.waitpid(flipper, 0)

def tries():
    # Bounded by time, not tries: on a loaded machine the other process may
    # not run at all during a few thousand quick tries.
    end = time.time() + 4
    while time.time() < end:
        yield
"#;

/// Calls `connect()` on an address that another process keeps switching
/// between the listed socket `LISTED` and the unlisted `SOCK` (see
/// [`FLIP_PY`]); prints `UNLISTED` and stops at the first connection to
/// `SOCK` (or after 4 seconds).
const CONNECT_SWAP_PY: &str = r#"import ctypes, os, socket, struct
from flip import flipping, libc, tries
def addr(path):
    raw = path.encode()
    return struct.pack("H", socket.AF_UNIX) + raw + b"\0" * (108 - len(raw))
with flipping(addr(os.environ["LISTED"]), addr(os.environ["SOCK"])) as buf:
    for _ in tries():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        if libc.connect(s.fileno(), ctypes.byref(buf), 110) == 0 and s.getpeername() == os.environ["SOCK"]:
            s.sendall(b"hello from inside\n")
            print("UNLISTED")
            break
        s.close()
"#;

/// Calls `open(O_CREAT)` on a path that another process keeps switching
/// between a plain name and the protected `.mcp.json` (see [`FLIP_PY`]);
/// stops once `.mcp.json` exists (or after 4 seconds).
const CREATE_SWAP_PY: &str = r#"import ctypes, os
from flip import flipping, libc, tries
with flipping(b"plain-name.json\0", b".mcp.json\0\0\0\0\0\0\0") as buf:
    for _ in tries():
        if os.path.exists(".mcp.json"):
            break
        fd = libc.open(ctypes.byref(buf), os.O_CREAT | os.O_WRONLY, 0o644)
        if fd >= 0:
            os.close(fd)
"#;

/// `openat(AT_FDCWD, name, O_WRONLY|O_CREAT|O_TRUNC)` for each argument,
/// with `$MARKER` in the sixth argument as `sandgate run`'s preload library
/// puts it there; each file made says `gitdir:` or sets `core.fsmonitor`.
/// Without `sandgate run` the marker is an unused argument.
const FORGED_OPEN_PY: &str = r#"import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
L = ctypes.c_long
marker = ctypes.c_ulong(int(os.environ["MARKER"]))
flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
for name in sys.argv[1:]:
    fd = libc.syscall(L(257), L(-100), name.encode(), L(flags), L(0o644), L(0), marker)
    if fd < 0:
        print(name, os.strerror(ctypes.get_errno()))
        continue
    body = b"gitdir: prep\n" if name == ".git" else b"[core]\n\tfsmonitor = evil\n"
    os.write(fd, body)
    os.close(fd)
    print(name, "made")
"#;

/// The socket that the `-sockets` policies list, in `outside`.
const LISTED: &str = "listed.sock";

impl Tree {
    fn new(who: Who) -> Tree {
        let tmp = tempfile::tempdir_in(base()).unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (home, work, outside, bin) = (
            root.join("home"),
            root.join("work"),
            root.join("outside"),
            root.join("bin"),
        );
        for d in [&home.join(".ssh"), &work, &outside, &bin] {
            fs::create_dir_all(d).unwrap();
        }
        fs::write(home.join(".ssh/id_rsa"), KEY).unwrap();
        fs::set_permissions(home.join(".ssh"), fs::Permissions::from_mode(0o700)).unwrap();
        fs::write(outside.join("file.txt"), "outside\n").unwrap();
        for (name, body) in [
            ("open_by_handle.py", OPEN_BY_HANDLE_PY),
            ("name_to_handle.py", NAME_TO_HANDLE_PY),
            ("ptrace.py", PTRACE_PY),
            ("connect.py", CONNECT_PY),
            ("sendto_pair.py", SENDTO_PAIR_PY),
            ("sendto_raw_pair.py", SENDTO_RAW_PAIR_PY),
            ("connect_abstract.py", CONNECT_ABSTRACT_PY),
            ("connect_swap.py", CONNECT_SWAP_PY),
            ("create_swap.py", CREATE_SWAP_PY),
            ("flip.py", FLIP_PY),
            ("forged_open.py", FORGED_OPEN_PY),
            ("int80_chmod.py", INT80_CHMOD_PY),
            ("unnamed_base.py", UNNAMED_BASE_PY),
            ("chattr.py", CHATTR_PY),
            ("tiocsti.py", TIOCSTI_PY),
        ] {
            fs::write(bin.join(name), body).unwrap();
        }
        let policy = format!(
            "permissions:\n  paths:\n    deny: [{}]\n    allow: [\"/**\"]\n  commands:\n    shell: false\n    allow: [\".\"]\n",
            sandgate_policy::credentials::CREDENTIAL_STORES
                .iter()
                .map(|s| format!("\"{}\"", s.rule))
                .collect::<Vec<_>>()
                .join(", ")
        );
        // The same without the credential stores' rules: the control.
        let open = "permissions:\n  paths:\n    allow: [\"/**\"]\n  commands:\n    shell: false\n    allow: [\".\"]\n";
        for mode in ["landlock", "bwrap"] {
            fs::write(
                root.join(format!("{mode}-open.yaml")),
                format!("{open}  exec:\n    isolation:\n      mode: {mode}\n"),
            )
            .unwrap();
            fs::write(
                root.join(format!("{mode}.yaml")),
                format!("{policy}  exec:\n    isolation:\n      mode: {mode}\n"),
            )
            .unwrap();
            fs::write(
                root.join(format!("{mode}-sockets.yaml")),
                format!(
                    "{policy}  exec:\n    isolation:\n      mode: {mode}\n      unix_sockets: [\"{}\"]\n",
                    outside.join(LISTED).display()
                ),
            )
            .unwrap();
        }
        fs::create_dir_all(work.join(".sandgate")).unwrap();
        fs::write(
            work.join(".sandgate/sandbox.json"),
            format!(
                "{{\"enabled\": true, \"unixSockets\": [\"{}\"]}}\n",
                outside.join(LISTED).display()
            ),
        )
        .unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        if let Who::User { uid, gid } = who {
            let status = Command::new("chown")
                .arg("-R")
                .arg(format!("{uid}:{gid}"))
                .arg(&root)
                .status_within(DEADLINE)
                .unwrap();
            assert!(status.success());
        }
        Tree {
            _tmp: tmp,
            root,
            home,
            work,
            outside,
            who,
        }
    }

    /// Writes a token into three credential stores, the tree user's.
    fn plant_credentials(&self) {
        let (gh, kube) = (self.home.join(".config/gh"), self.home.join(".kube"));
        for dir in [&gh, &kube] {
            fs::create_dir_all(dir).unwrap();
        }
        let files = [
            self.home.join(".netrc"),
            gh.join("hosts.yml"),
            kube.join("config"),
        ];
        for file in &files {
            fs::write(file, "TOKEN\n").unwrap();
        }
        let config = self.home.join(".config");
        self.give(&[&config, &gh, &kube, &files[0], &files[1], &files[2]]);
    }

    /// Gives `paths` (made after the tree) to the tree's user.
    fn give(&self, paths: &[&Path]) {
        if let Who::User { uid, gid } = self.who {
            for path in paths {
                std::os::unix::fs::lchown(path, Some(uid), Some(gid)).unwrap();
            }
        }
    }

    fn bin(&self, name: &str) -> String {
        self.root.join("bin").join(name).display().to_string()
    }

    /// A command run as this tree's user, in the workdir, with a clean environment.
    fn command(&self, program: &str) -> Command {
        let who = match self.who {
            Who::Root => None,
            Who::User { uid, gid } => Some((uid, gid)),
        };
        let mut cmd = ci::as_user(program, who);
        cmd.env_clear()
            .env("PATH", PATH)
            .env("HOME", &self.home)
            // The scripts in `bin` import each other: no byte code is
            // written beside them, outside the workdir.
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("SANDGATE_NO_UI", "1")
            .env("SANDGATE_AUDIT", "off")
            .env("SANDGATE_CACHE_DIR", self.root.join("cache"))
            .env("OUTSIDE", &self.outside)
            .env("WORK", &self.work)
            .current_dir(&self.work)
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `git ARGS` in the workdir as this tree's user, unconfined.
    fn git(&self, args: &str) {
        let mut cmd = self.command("git");
        cmd.args(args.split(' '))
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t");
        let out = cmd.output_within(DEADLINE).unwrap();
        assert!(out.status.success(), "git {args}: {}", seen(&out));
    }

    /// Runs `script` with `/bin/sh -c` in the workdir as this tree's user,
    /// unconfined, to prepare an attempt; it must succeed.
    fn prepare(&self, script: &str) {
        let out = self
            .command("/bin/sh")
            .arg("-c")
            .arg(script)
            .output_within(DEADLINE)
            .unwrap();
        assert!(out.status.success(), "{script}: {}", seen(&out));
    }

    /// A long-running process outside the sandbox, as this tree's user, in `outside`.
    fn victim(&self) -> Victim {
        let mut cmd = self.command("sleep");
        cmd.arg("60").current_dir(&self.outside);
        let victim = Victim(cmd.spawn().unwrap());
        // `setpriv` execs `sleep`: the pid stays the same; wait until it has.
        let comm = Path::new("/proc").join(victim.pid()).join("comm");
        let start = Instant::now();
        while fs::read_to_string(&comm).unwrap_or_default().trim() != "sleep" {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the victim did not start"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        victim
    }
}

struct Victim(Child);

impl Victim {
    fn pid(&self) -> String {
        self.0.id().to_string()
    }

    /// Whether the victim ended within `wait`.
    fn ended_within(&mut self, wait: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < wait {
            if self.0.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        wait::reap(&mut self.0);
    }
}

/// Runs scripts either unconfined or confined by one mode.
struct Runner<'a> {
    tree: &'a Tree,
    mode: Option<Mode>,
}

impl Runner<'_> {
    /// Runs `script` with `/bin/sh -c`, confined or not, with extra environment.
    fn sh_with(&self, script: &str, envs: &[(&str, &str)]) -> Output {
        self.output(self.command_for(script, envs))
    }

    /// Runs `script` like [`Runner::sh`], started by a shell (as root) that
    /// first runs `prefix` (in a mount namespace of its own with `unshare`):
    /// what the user did before starting sandgate, such as opening a
    /// descriptor that sandgate and the program would inherit, or a bind
    /// mount. Nothing of it reaches the host's mounts.
    fn sh_after(&self, prefix: &str, unshare: bool, script: &str) -> Output {
        let inner = self.command_for(script, &[]);
        let mut cmd = if unshare {
            let mut c = Command::new("unshare");
            c.args(["--mount", "--propagation", "private", "/bin/sh"]);
            c
        } else {
            Command::new("/bin/sh")
        };
        cmd.arg("-c")
            .arg(format!("{prefix}\nexec \"$@\""))
            .arg("sh")
            .arg(inner.get_program())
            .args(inner.get_args())
            .env_clear();
        for (k, v) in inner.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        if let Some(dir) = inner.get_current_dir() {
            cmd.current_dir(dir);
        }
        cmd.stdin(Stdio::null());
        self.output(cmd)
    }

    /// The command that runs `script` with `/bin/sh -c`, confined or not.
    fn command_for(&self, script: &str, envs: &[(&str, &str)]) -> Command {
        let t = self.tree;
        let mut cmd = match self.mode {
            None => {
                let mut c = t.command("/bin/sh");
                c.arg("-c").arg(script);
                c
            }
            Some(
                mode @ (Mode::Landlock | Mode::Bwrap | Mode::LandlockSockets | Mode::BwrapSockets),
            ) => {
                let name = match mode {
                    Mode::Landlock => "landlock",
                    Mode::Bwrap => "bwrap",
                    Mode::LandlockSockets => "landlock-sockets",
                    _ => "bwrap-sockets",
                };
                let mut c = t.command(binary().to_str().unwrap());
                c.arg("--config")
                    .arg(t.root.join(format!("{name}.yaml")))
                    .args(["exec", "--"])
                    .arg(script);
                c
            }
            Some(Mode::Run | Mode::RunCarve) => {
                let mut c = t.command(binary().to_str().unwrap());
                c.args(["run", "--no-ui", "--", "/bin/sh", "-c"])
                    .arg(script);
                if self.mode == Some(Mode::RunCarve) {
                    c.env("SANDGATE_RUN_PROTECTION", "carve");
                }
                c
            }
        };
        for (k, v) in envs {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs `cmd`, and checks that the gate did not stop it.
    fn output(&self, mut cmd: Command) -> Output {
        let out = cmd.output_within(DEADLINE).unwrap();
        if matches!(self.mode, Some(mode) if !RUN.contains(&mode)) {
            assert!(
                !text(&out.stderr).contains("sandgate: denied:"),
                "the gate, not the sandbox, stopped it: {}",
                text(&out.stderr)
            );
        }
        out
    }

    fn sh(&self, script: &str) -> Output {
        self.sh_with(script, &[])
    }

    /// Like [`Runner::sh`], but unconfined the script first gets its own mount
    /// namespace prepared by `setup` (root only): the situation a sandbox
    /// builds with mounts, so that the unconfined run shows what the attempt
    /// does to it. Nothing of it reaches the host's mounts.
    fn sh_in_mounts(&self, setup: &str, script: &str) -> Output {
        match self.mode {
            None => self.sh_with(
                "exec unshare --mount --propagation private /bin/sh -c \"$SETUP; $SCRIPT\"",
                &[("SETUP", setup), ("SCRIPT", script)],
            ),
            Some(_) => self.sh(script),
        }
    }
}

/// One escape attempt: prepares what it needs, runs through `runner`, and
/// returns whether it got out, with what it saw for the failure message.
type Attempt = fn(&Tree, &Runner) -> (bool, String);

struct Row {
    name: &'static str,
    /// Needs root to work even unconfined (`mknod`, `mount`, file handles).
    root_only: bool,
    /// The modes that must hold it.
    held_by: &'static [Mode],
    attempt: Attempt,
}

fn seen(out: &Output) -> String {
    format!(
        "exit {:?}, stdout `{}`, stderr `{}`",
        out.status.code(),
        text(&out.stdout).trim(),
        text(&out.stderr).trim()
    )
}

fn mode_of(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

const ALL: &[Mode] = &[
    Mode::Landlock,
    Mode::Bwrap,
    Mode::LandlockSockets,
    Mode::BwrapSockets,
    Mode::Run,
];
const EXEC: &[Mode] = &[
    Mode::Landlock,
    Mode::Bwrap,
    Mode::LandlockSockets,
    Mode::BwrapSockets,
];
/// Every mode, `sandgate run` with both ways of holding protected paths.
const EVERY: &[Mode] = &[
    Mode::Landlock,
    Mode::Bwrap,
    Mode::LandlockSockets,
    Mode::BwrapSockets,
    Mode::Run,
    Mode::RunCarve,
];
/// `sandgate run` with either way of holding protected paths.
const RUN: &[Mode] = &[Mode::Run, Mode::RunCarve];

fn rows() -> Vec<Row> {
    vec![
        Row {
            name: "write a file outside",
            root_only: false,
            held_by: ALL,
            attempt: |t, r| {
                let out = r.sh("echo x > \"$OUTSIDE/new.txt\"; echo y >> \"$OUTSIDE/file.txt\"");
                let got = t.outside.join("new.txt").exists()
                    || fs::read_to_string(t.outside.join("file.txt")).unwrap() != "outside\n";
                (got, seen(&out))
            },
        },
        Row {
            name: "write outside through a symlink in the workdir",
            root_only: false,
            held_by: ALL,
            attempt: |t, r| {
                std::os::unix::fs::symlink(&t.outside, t.work.join("link")).unwrap();
                let out = r.sh("echo x > link/via-link.txt");
                (t.outside.join("via-link.txt").exists(), seen(&out))
            },
        },
        Row {
            name: "read ~/.ssh/id_rsa",
            root_only: false,
            held_by: EVERY,
            attempt: |_, r| {
                let out = r.sh("cat \"$HOME/.ssh/id_rsa\"");
                (text(&out.stdout).contains("SECRET"), seen(&out))
            },
        },
        Row {
            name: "chmod, chown and touch -d of a file outside, chmod 777 ~/.ssh",
            root_only: false,
            held_by: ALL,
            attempt: |t, r| {
                let file = t.outside.join("file.txt");
                let before = fs::metadata(&file).unwrap();
                let chown = if t.who == Who::Root {
                    "chown 1:1 \"$OUTSIDE/file.txt\";"
                } else {
                    ""
                };
                let out = r.sh(&format!(
                    "chmod 600 \"$OUTSIDE/file.txt\"; {chown} touch -d 2001-01-01 \"$OUTSIDE/file.txt\"; chmod 777 \"$HOME/.ssh\""
                ));
                let after = fs::metadata(&file).unwrap();
                let got = mode_of(&file) == 0o600
                    || after.uid() != before.uid()
                    || after.mtime() != before.mtime()
                    || mode_of(&t.home.join(".ssh")) == 0o777;
                (got, seen(&out))
            },
        },
        Row {
            name: "chmod through /proc/self/fd and /proc/thread-self/fd of a file outside",
            root_only: false,
            held_by: ALL,
            attempt: |t, r| {
                let out = r.sh(
                    "exec 3< \"$OUTSIDE/file.txt\"; chmod 600 /proc/self/fd/3; cd /proc && chmod 604 thread-self/fd/3",
                );
                let mode = mode_of(&t.outside.join("file.txt"));
                (mode == 0o600 || mode == 0o604, seen(&out))
            },
        },
        Row {
            name: "fchmod through a descriptor opened outside, and set an extended attribute there",
            root_only: false,
            held_by: ALL,
            attempt: |t, r| {
                let file = t.outside.join("file.txt");
                let out = r.sh(
                    "python3 -c 'import os; os.fchmod(os.open(os.environ[\"OUTSIDE\"] + \"/file.txt\", os.O_RDONLY), 0o600)'; python3 -c 'import os; os.setxattr(os.environ[\"OUTSIDE\"] + \"/file.txt\", \"user.sandgate\", b\"1\")'",
                );
                let xattr = Command::new("python3")
                    .args(["-c", "import os, sys; print(os.listxattr(sys.argv[1]))"])
                    .arg(&file)
                    .output_within(DEADLINE)
                    .unwrap();
                let got = mode_of(&file) == 0o600 || text(&xattr.stdout).contains("user.sandgate");
                (got, seen(&out))
            },
        },
        Row {
            name: "chmod and utime outside and of .git/config, relative to a directory named `d (deleted)` or a removed working directory",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.git("init -q");
                let file = t.outside.join("file.txt");
                let config = t.work.join(".git/config");
                let config_mode = mode_of(&config);
                let out = r.sh(&format!("python3 {}", t.bin("unnamed_base.py")));
                let got = matches!(mode_of(&file), 0o600 | 0o604)
                    || fs::metadata(&file).unwrap().mtime() == 1
                    || mode_of(&config) != config_mode;
                (got, seen(&out))
            },
        },
        Row {
            name: "set an inode flag (chattr +d, the FS_IOC_SETFLAGS ioctl) of a file outside",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let file = t.outside.join("file.txt");
                let out = r.sh(&format!(
                    "python3 {} \"$OUTSIDE/file.txt\"",
                    t.bin("chattr.py")
                ));
                let flags = Command::new("lsattr").arg("-d").arg(&file).output_within(DEADLINE).unwrap();
                let attrs = text(&flags.stdout);
                let got = attrs.split_whitespace().next().unwrap_or("").contains('d');
                (got, seen(&out))
            },
        },
        Row {
            name: "write .git/hooks/pre-commit and .git/config in the workdir",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.git("init -q");
                let config = fs::read_to_string(t.work.join(".git/config")).unwrap();
                let out = r.sh(
                    "echo 'echo evil' > .git/hooks/pre-commit; printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config",
                );
                let got = t.work.join(".git/hooks/pre-commit").exists()
                    || fs::read_to_string(t.work.join(".git/config")).unwrap() != config;
                (got, seen(&out))
            },
        },
        Row {
            name:
                "create missing protected paths (.mcp.json, .gitmodules, .vscode, .claude/commands)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let out = r.sh(
                    "echo '{}' > .mcp.json; python3 -c 'open(\".gitmodules\", \"w\")'; mkdir -p .vscode .claude/commands; echo x > .claude/commands/evil.md",
                );
                let got = [".mcp.json", ".gitmodules", ".vscode", ".claude/commands"]
                    .iter()
                    .any(|p| t.work.join(p).exists());
                (got, seen(&out))
            },
        },
        Row {
            name: "create .mcp.json while another process switches the path from a plain name to it",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let out = r.sh(&format!("python3 {}", t.bin("create_swap.py")));
                (t.work.join(".mcp.json").exists(), seen(&out))
            },
        },
        Row {
            name: "make .git a file that sends git to a prepared directory (gitdir:)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let out = r.sh(
                    "mkdir -p prep/hooks && git init -q --bare prep 2>/dev/null; printf 'gitdir: prep\\n' > .git",
                );
                (t.work.join(".git").is_file(), seen(&out))
            },
        },
        Row {
            name: "rewrite a worktree's .git file to send git to a prepared repository",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.prepare("printf 'gitdir: /elsewhere/.git/worktrees/w\\n' > .git");
                let before = fs::read_to_string(t.work.join(".git")).unwrap();
                let out = r.sh(
                    "mkdir -p prep && git init -q --bare prep 2>/dev/null; python3 -c 'f = open(\".git\", \"r+\"); f.write(\"gitdir: prep\\n\")'; printf 'gitdir: prep\\n' > .git",
                );
                let after = fs::read_to_string(t.work.join(".git")).unwrap_or_default();
                (after != before, seen(&out))
            },
        },
        Row {
            name: "write a submodule's config and hooks in .git/modules (git status of the project runs them)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.prepare("git init -q ../outside/sub && git -C ../outside/sub -c user.name=t -c user.email=t@t commit -q --allow-empty -m s && git init -q && git -c protocol.file.allow=always submodule add -q ../outside/sub sm");
                let config = t.work.join(".git/modules/sm/config");
                let before = fs::read_to_string(&config).unwrap();
                let out = r.sh(
                    "printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/modules/sm/config; mkdir -p .git/modules/sm/hooks; echo evil > .git/modules/sm/hooks/pre-commit",
                );
                let got = fs::read_to_string(&config).unwrap() != before
                    || t.work.join(".git/modules/sm/hooks/pre-commit").exists();
                (got, seen(&out))
            },
        },
        Row {
            name: "add a hook to the directory core.hooksPath names in the worktree (.githooks)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.git("init -q");
                t.git("config core.hooksPath .githooks");
                let out = r.sh("mkdir -p .githooks && echo 'echo evil' > .githooks/pre-commit");
                (t.work.join(".githooks/pre-commit").exists(), seen(&out))
            },
        },
        Row {
            name: "replace a .git symbolic link by a directory with a hook and a config",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.prepare("git init -q --bare ../outside/repo.git && ln -s ../outside/repo.git .git");
                let out = r.sh(
                    "rm .git && mkdir -p .git/hooks; echo 'echo evil' > .git/hooks/pre-commit; printf '[core]\\n\\tfsmonitor = evil\\n' > .git/config",
                );
                let got = t.work.join(".git/hooks/pre-commit").exists()
                    || t.work.join(".git/config").exists();
                (got, seen(&out))
            },
        },
        Row {
            name: "bind a UNIX socket at the missing .mcp.json",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let out = r.sh(
                    "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\".mcp.json\")'",
                );
                (fs::symlink_metadata(t.work.join(".mcp.json")).is_ok(), seen(&out))
            },
        },
        Row {
            name: "forge sandgate run's fast-path marker to create missing protected files (.mcp.json, .gitmodules, .bashrc, a .git file)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let names = [".mcp.json", ".gitmodules", ".bashrc", ".git"];
                let out = r.sh_with(
                    &format!("python3 {} {}", t.bin("forged_open.py"), names.join(" ")),
                    &[("MARKER", &MARKER.to_string())],
                );
                let got = names.iter().any(|p| t.work.join(p).exists());
                (got, seen(&out))
            },
        },
        Row {
            name: "forge the fast-path marker to create .git/config, missing from an existing .git",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.git("init -q");
                fs::remove_file(t.work.join(".git/config")).unwrap();
                let out = r.sh_with(
                    &format!("python3 {} .git/config", t.bin("forged_open.py")),
                    &[("MARKER", &MARKER.to_string())],
                );
                (t.work.join(".git/config").exists(), seen(&out))
            },
        },
        Row {
            name: "point .git/commondir at a prepared directory whose config runs a program",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.git("init -q");
                let out = r.sh(
                    "mkdir -p prep && cp -r .git/. prep/ && printf '[core]\\n\\tfsmonitor = evil\\n' >> prep/config && echo ../prep > .git/commondir",
                );
                (t.work.join(".git/commondir").exists(), seen(&out))
            },
        },
        Row {
            name: "point a linked worktree's commondir at a prepared directory (.git/worktrees/NAME/commondir, config.worktree)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.git("init -q");
                t.git("commit -q --allow-empty -m one");
                t.git("worktree add -q ../outside/wt");
                let admin = t.work.join(".git/worktrees/wt");
                let before = fs::read_to_string(admin.join("commondir")).unwrap();
                let out = r.sh(
                    "mkdir -p prep && cp -r .git/. prep/ && printf '[core]\\n\\tfsmonitor = evil\\n' >> prep/config && echo ../../../prep > .git/worktrees/wt/commondir; printf '[core]\\n\\tfsmonitor = evil\\n' > .git/worktrees/wt/config.worktree",
                );
                let got = fs::read_to_string(admin.join("commondir")).unwrap() != before
                    || admin.join("config.worktree").exists();
                (got, seen(&out))
            },
        },
        Row {
            name: "rewrite a submodule checkout's .git file to name a prepared repository",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.prepare("mkdir ../outside/src && cd ../outside/src && git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m s");
                t.git("init -q");
                t.git("-c protocol.file.allow=always submodule add -q ../outside/src libs/foo");
                let dot_git = t.work.join("libs/foo/.git");
                let before = fs::read_to_string(&dot_git).unwrap();
                let out = r.sh(
                    "mkdir -p prep && cp -r .git/modules/libs/foo/. prep/ && printf '[core]\\n\\tfsmonitor = evil\\n' >> prep/config; echo 'gitdir: ../../prep' > libs/foo/.git || { rm -f libs/foo/.git && echo 'gitdir: ../../prep' > libs/foo/.git; }",
                );
                let now = fs::read_to_string(&dot_git).unwrap_or_default();
                (now != before, seen(&out))
            },
        },
        Row {
            name: "add a hook and a config to a repository inside the project (a folder of projects)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.prepare("mkdir proj && cd proj && git init -q && rm -rf .git/hooks");
                let out = r.sh(
                    "mkdir -p proj/.git/hooks; printf '#!/bin/sh\\necho evil\\n' > proj/.git/hooks/pre-commit; printf '[core]\\n\\tfsmonitor = evil\\n' >> proj/.git/config",
                );
                let got = t.work.join("proj/.git/hooks/pre-commit").exists()
                    || fs::read_to_string(t.work.join("proj/.git/config"))
                        .unwrap()
                        .contains("evil");
                (got, seen(&out))
            },
        },
        Row {
            name: "add a skill, a command rule or a hook script the agents run (.agents/skills, .codex/rules, .codex/hooks, .gemini/skills; ~/.codex/rules)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let made = [
                    t.work.join(".agents/skills/x/SKILL.md"),
                    t.work.join(".codex/rules/default.rules"),
                    t.work.join(".codex/hooks/h.sh"),
                    t.work.join(".gemini/skills/y/SKILL.md"),
                    t.home.join(".codex/rules/default.rules"),
                ];
                let script: Vec<String> = made
                    .iter()
                    .map(|p| {
                        format!(
                            "mkdir -p {}; echo evil > {}",
                            p.parent().unwrap().display(),
                            p.display()
                        )
                    })
                    .collect();
                let out = r.sh(&script.join("; "));
                (made.iter().any(|p| p.exists()), seen(&out))
            },
        },
        Row {
            name: "add a hook to the agents' project settings (.claude/settings.json, .claude/settings.local.json, .gemini/settings.json, .codex/hooks.json)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                agent_settings_rewritten(
                    t,
                    r,
                    &t.work,
                    "hook='{\"hooks\":{\"PreToolUse\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"evil\"}]}]}}'; echo \"$hook\" > .claude/settings.json; echo \"$hook\" > .claude/settings.local.json; mkdir -p .gemini .codex; echo \"$hook\" > .gemini/settings.json; echo \"$hook\" > .codex/hooks.json",
                    &[".claude/settings.local.json", ".gemini/settings.json", ".codex/hooks.json"],
                )
            },
        },
        Row {
            name: "rewrite the agents' user settings in the home directory (~/.claude/settings.json, ~/.codex/config.toml, ~/.gemini/settings.json, ~/.claude/commands)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                agent_settings_rewritten(
                    t,
                    r,
                    &t.home,
                    "echo '{\"hooks\":{}}' > .claude/settings.json; mkdir -p .codex .gemini .claude/commands; echo 'notify = [\"evil\"]' > .codex/config.toml; echo '{}' > .gemini/settings.json; echo evil > .claude/commands/x.md",
                    &[".codex/config.toml", ".gemini/settings.json", ".claude/commands/x.md"],
                )
            },
        },
        Row {
            name: "rename a prepared directory onto a missing .claude",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let out = r.sh(
                    "mkdir -p prep/commands && echo evil > prep/commands/evil.md && mv -T prep .claude",
                );
                (t.work.join(".claude/commands/evil.md").exists(), seen(&out))
            },
        },
        Row {
            name: "make .claude a symbolic link to a prepared directory",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let out = r.sh(
                    "mkdir -p prep/commands && echo evil > prep/commands/evil.md && ln -s prep .claude",
                );
                (t.work.join(".claude/commands/evil.md").exists(), seen(&out))
            },
        },
        Row {
            name: "move .git away and rename a prepared .git with core.hooksPath in its place",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.git("init -q");
                let out = r.sh(
                    "mkdir g && cp -r .git g/.git && printf '[core]\\n\\thooksPath = /evil\\n' >> g/.git/config && mv .git .git-old; mv g/.git .git",
                );
                let config = fs::read_to_string(t.work.join(".git/config")).unwrap_or_default();
                (config.contains("hooksPath"), seen(&out))
            },
        },
        Row {
            name: "move .git/hooks away and make a new one with a hook",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.git("init -q");
                let out = r.sh(
                    "mv .git/hooks .git/hooks-old; mkdir -p .git/hooks && echo 'echo evil' > .git/hooks/pre-commit",
                );
                (t.work.join(".git/hooks/pre-commit").exists(), seen(&out))
            },
        },
        Row {
            name: "chmod a file outside through the 32-bit system call ABI (int 0x80)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let file = t.outside.join("file.txt");
                let out = r.sh(&format!(
                    "python3 {} \"$OUTSIDE/file.txt\"",
                    t.bin("int80_chmod.py")
                ));
                (mode_of(&file) == 0o777, seen(&out))
            },
        },
        Row {
            name: "type into the terminal (TIOCSTI), for the shell that reads it once the program ends",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                // Without CAP_SYS_ADMIN, TIOCSTI works only where the kernel
                // still allows it (`dev.tty.legacy_tiocsti`).
                let legacy = fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti")
                    .map_or(true, |v| v.trim() == "1");
                if t.who != Who::Root && !legacy {
                    return (r.mode.is_none(), "skipped: TIOCSTI needs CAP_SYS_ADMIN here".into());
                }
                let out = r.sh(&format!("python3 {}", t.bin("tiocsti.py")));
                (out.status.success(), seen(&out))
            },
        },
        Row {
            name: "set up an io_uring, whose operations (connect, setxattr, renameat) no supervisor sees",
            root_only: false,
            held_by: EVERY,
            attempt: |_, r| {
                let out = r.sh(
                    "python3 -c 'import ctypes, sys; p = (ctypes.c_ubyte * 120)(); fd = ctypes.CDLL(None).syscall(425, 4, p); print(\"io_uring_setup:\", fd); sys.exit(fd < 0)'",
                );
                (out.status.success(), seen(&out))
            },
        },
        Row {
            name: "hard-link a file from outside into the workdir, then write it there",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let out = r.sh("ln \"$OUTSIDE/file.txt\" linked.txt && echo changed >> linked.txt");
                let now = fs::read_to_string(t.outside.join("file.txt")).unwrap();
                (now != "outside\n", seen(&out))
            },
        },
        Row {
            name: "make the missing repository a nested .git file names, with a hook (gitdir: ../elsewhere)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.prepare("mkdir -p proj && printf 'gitdir: ../named\\n' > proj/.git");
                let out = r.sh(
                    "mkdir -p named/hooks && echo 'echo evil' > named/hooks/pre-commit; printf '[core]\\n\\tfsmonitor = evil\\n' > named/config",
                );
                let got = t.work.join("named/hooks/pre-commit").exists()
                    || t.work.join("named/config").exists();
                (got, seen(&out))
            },
        },
        Row {
            name: "hard links: a second name for .git/config written through, a prepared file linked in as a hook",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.git("init -q");
                let config = fs::read_to_string(t.work.join(".git/config")).unwrap();
                let out = r.sh(
                    "ln .git/config cfg && printf '[core]\\n\\tfsmonitor = evil\\n' >> cfg; echo 'echo evil' > hook && ln hook .git/hooks/pre-commit",
                );
                let got = t.work.join(".git/hooks/pre-commit").exists()
                    || fs::read_to_string(t.work.join(".git/config")).unwrap() != config;
                (got, seen(&out))
            },
        },
        Row {
            name: "symbolic links: write .git/hooks through one, make a hook one to a prepared file",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.git("init -q");
                let out = r.sh(
                    "ln -s .git/hooks h && echo 'echo evil' > h/pre-commit; echo 'echo evil' > hook && ln -s ../../hook .git/hooks/pre-push",
                );
                let hooks = t.work.join(".git/hooks");
                let got = hooks.join("pre-commit").exists()
                    || fs::symlink_metadata(hooks.join("pre-push")).is_ok();
                (got, seen(&out))
            },
        },
        Row {
            name: "cp -r a prepared directory to a missing .vscode and into an existing .idea",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.prepare("mkdir .idea");
                let out = r.sh(
                    "mkdir -p prep && echo '{}' > prep/tasks.json && cp -r prep .vscode; cp -r prep/. .idea/",
                );
                let got = t.work.join(".vscode/tasks.json").exists()
                    || t.work.join(".idea/tasks.json").exists();
                (got, seen(&out))
            },
        },
        Row {
            name: "mknod a character device and write to it",
            root_only: true,
            held_by: EVERY,
            attempt: |t, r| {
                // 1:3 is /dev/null: the device works without leaving a trace.
                let out = r.sh("mknod ./kd c 1 3 && echo hi > ./kd && echo wrote");
                use std::os::unix::fs::FileTypeExt;
                let is_dev = fs::symlink_metadata(t.work.join("kd"))
                    .is_ok_and(|m| m.file_type().is_char_device());
                (is_dev && text(&out.stdout).contains("wrote"), seen(&out))
            },
        },
        Row {
            name: "mknod a block device",
            root_only: true,
            held_by: EVERY,
            attempt: |t, r| {
                // 7:0 is the first loop device; it is made, never opened.
                let out = r.sh("mknod ./kb b 7 0");
                use std::os::unix::fs::FileTypeExt;
                let is_dev = fs::symlink_metadata(t.work.join("kb"))
                    .is_ok_and(|m| m.file_type().is_block_device());
                (is_dev, seen(&out))
            },
        },
        Row {
            name: "ptrace attach to a process outside",
            root_only: false,
            held_by: ALL,
            attempt: |t, r| {
                let victim = t.victim();
                let out = r.sh_with(
                    &format!("python3 {}", t.bin("ptrace.py")),
                    &[("VICTIM", &victim.pid())],
                );
                (text(&out.stdout).contains("attached"), seen(&out))
            },
        },
        Row {
            name: "kill -TERM a process outside",
            root_only: false,
            held_by: ALL,
            attempt: |t, r| {
                let mut victim = t.victim();
                let out = r.sh_with("kill -TERM \"$VICTIM\"", &[("VICTIM", &victim.pid())]);
                (victim.ended_within(Duration::from_secs(2)), seen(&out))
            },
        },
        Row {
            name: "write through /proc/PID/cwd of a process outside",
            root_only: false,
            held_by: ALL,
            attempt: |t, r| {
                let victim = t.victim();
                let out = r.sh_with(
                    "echo x > \"/proc/$VICTIM/cwd/via-proc.txt\"",
                    &[("VICTIM", &victim.pid())],
                );
                (t.outside.join("via-proc.txt").exists(), seen(&out))
            },
        },
        Row {
            name: "remount / read-write, then write outside",
            root_only: true,
            held_by: EVERY,
            attempt: |t, r| {
                let out = r.sh_in_mounts(
                    "mount --bind / / && mount -o remount,ro,bind /",
                    "mount -o remount,rw,bind / ; echo x > \"$OUTSIDE/after-remount.txt\"",
                );
                (t.outside.join("after-remount.txt").exists(), seen(&out))
            },
        },
        Row {
            name: "umount ~/.ssh, then read the key",
            root_only: true,
            held_by: EVERY,
            attempt: |_, r| {
                let out = r.sh_in_mounts(
                    "mount -t tmpfs none \"$HOME/.ssh\"",
                    "umount -l \"$HOME/.ssh\" ; cat \"$HOME/.ssh/id_rsa\"",
                );
                (text(&out.stdout).contains("SECRET"), seen(&out))
            },
        },
        Row {
            name: "read and write ~/.ssh/id_rsa through a hard link in the workdir made before",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                fs::hard_link(t.home.join(".ssh/id_rsa"), t.work.join("key")).unwrap();
                let out = r.sh("cat key; echo PWNED > key; echo PWNED >> key");
                (stole_or_changed_the_key(t, &out), seen(&out))
            },
        },
        Row {
            name: "read and write ~/.ssh/id_rsa through hard links outside the workdir",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                fs::hard_link(t.home.join(".ssh/id_rsa"), t.home.join("key-backup")).unwrap();
                fs::hard_link(t.home.join(".ssh/id_rsa"), t.outside.join("key")).unwrap();
                let out = r.sh(
                    "cat \"$HOME/key-backup\"; cat \"$OUTSIDE/key\"; echo PWNED >> \"$OUTSIDE/key\"",
                );
                (stole_or_changed_the_key(t, &out), seen(&out))
            },
        },
        Row {
            name: "write ~/.ssh/config and ~/.sandgate's policy through hard links in the workdir",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let (config, policy) = (
                    t.home.join(".ssh/config"),
                    t.home.join(".sandgate/permissions.yaml"),
                );
                fs::create_dir_all(t.home.join(".sandgate")).unwrap();
                fs::write(&config, "Host x\n").unwrap();
                fs::write(&policy, "permissions:\n  sandbox: true\n").unwrap();
                t.give(&[&config, &t.home.join(".sandgate"), &policy]);
                fs::hard_link(&config, t.work.join("cfg")).unwrap();
                fs::hard_link(&policy, t.work.join("pol")).unwrap();
                let out = r.sh("echo '  Hostname evil' >> cfg; echo 'sandbox: false' > pol");
                let changed = fs::read_to_string(&config).unwrap() != "Host x\n"
                    || fs::read_to_string(&policy).unwrap() != "permissions:\n  sandbox: true\n";
                (changed, seen(&out))
            },
        },
        Row {
            name: "descriptors inherited open on ~/.ssh/id_rsa and ~/.ssh",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let out = r.sh_after(
                    "exec 3<\"$HOME/.ssh/id_rsa\" 4>>\"$HOME/.ssh/id_rsa\"",
                    false,
                    "cat <&3; echo PWNED >&4",
                );
                let first = stole_or_changed_the_key(t, &out);
                let dir = r.sh_after(
                    "exec 5<\"$HOME/.ssh\"",
                    false,
                    "cat /proc/self/fd/5/id_rsa",
                );
                let second = text(&dir.stdout).contains("SECRET");
                (first || second, format!("{}; {}", seen(&out), seen(&dir)))
            },
        },
        Row {
            name: "~/.ssh/id_rsa bind-mounted into the workdir, ~/.ssh bind-mounted elsewhere",
            root_only: true,
            held_by: EVERY,
            attempt: |t, r| {
                fs::write(t.work.join("key"), "").unwrap();
                fs::create_dir_all(t.outside.join("ssh-view")).unwrap();
                let out = r.sh_after(
                    "mount --bind \"$HOME/.ssh/id_rsa\" \"$WORK/key\" && \
                     mount --bind \"$HOME/.ssh\" \"$OUTSIDE/ssh-view\"",
                    true,
                    "cat key; cat \"$OUTSIDE/ssh-view/id_rsa\"; echo PWNED >> key",
                );
                (stole_or_changed_the_key(t, &out), seen(&out))
            },
        },
        Row {
            name: "read and write ~/.ssh/id_rsa through a hard link in a directory that cannot be listed",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let vault = t.home.join("vault");
                fs::create_dir(&vault).unwrap();
                fs::hard_link(t.home.join(".ssh/id_rsa"), vault.join("key")).unwrap();
                t.give(&[&vault]);
                fs::set_permissions(&vault, fs::Permissions::from_mode(0o311)).unwrap();
                let out = r.sh("cat \"$HOME/vault/key\"; echo PWNED >> \"$HOME/vault/key\"");
                (stole_or_changed_the_key(t, &out), seen(&out))
            },
        },
        Row {
            name: "read the credential stores (~/.netrc, ~/.config/gh/hosts.yml, ~/.kube/config)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.plant_credentials();
                let out = r.sh(CAT_CREDENTIALS);
                (text(&out.stdout).contains("TOKEN"), seen(&out))
            },
        },
        Row {
            name: "read and write ~/.netrc through a hard link in the workdir made before",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                t.plant_credentials();
                fs::hard_link(t.home.join(".netrc"), t.work.join("netrc")).unwrap();
                let out = r.sh("cat netrc; echo PWNED >> netrc");
                let changed = fs::read_to_string(t.home.join(".netrc")).unwrap() != "TOKEN\n";
                (text(&out.stdout).contains("TOKEN") || changed, seen(&out))
            },
        },
        Row {
            name: "open_by_handle_at to read ~/.ssh/id_rsa",
            root_only: true,
            held_by: EVERY,
            attempt: |t, r| {
                let key = t.home.join(".ssh/id_rsa");
                let handle = Command::new("python3")
                    .env("PATH", PATH)
                    .arg(t.bin("name_to_handle.py"))
                    .arg(&key)
                    .output_within(DEADLINE)
                    .unwrap();
                assert!(handle.status.success(), "{}", seen(&handle));
                let handle = text(&handle.stdout).trim().to_string();
                let mount = mount_point(&key);
                let out = r.sh_with(
                    &format!("python3 {}", t.bin("open_by_handle.py")),
                    &[("HANDLE", &handle), ("MOUNT", mount.to_str().unwrap())],
                );
                (text(&out.stdout).contains("SECRET"), seen(&out))
            },
        },
        Row {
            name: "connect() to a UNIX socket by path, listener outside",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| connect_to_listener(t, r, &t.outside.join("listener.sock")),
        },
        Row {
            name: "connect() to a UNIX socket in the workdir whose listener is outside",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| connect_to_listener(t, r, &t.work.join("planted.sock")),
        },
        Row {
            name: "run a command outside through a tmux server's socket (tmux new-window)",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                if !has("tmux") {
                    missing("`tmux` is not installed (package tmux)");
                    return (r.mode.is_none(), "skipped: no tmux".into());
                }
                let sock = t.outside.join("tmux.sock");
                // The panes run `$SHELL` (the test user's login shell may
                // be `nologin`).
                t.prepare(&format!(
                    "SHELL=/bin/sh tmux -S {} new-session -d -s held 'sleep 30'",
                    sock.display()
                ));
                let marker = t.outside.join("via-tmux");
                let out = r.sh(&format!(
                    "tmux -S {} new-window 'touch {}'",
                    sock.display(),
                    marker.display()
                ));
                let start = Instant::now();
                while !marker.exists() && start.elapsed() < Duration::from_secs(2) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                let got = marker.exists();
                t.prepare(&format!("tmux -S {} kill-server", sock.display()));
                (got, seen(&out))
            },
        },
        Row {
            name: "sendto() from a datagram socket pair to a UNIX socket by path, listener outside",
            root_only: false,
            held_by: EXEC,
            attempt: |t, r| datagram_sent(t, r, "sendto_pair.py"),
        },
        Row {
            name: "sendto() from a SOCK_RAW unix socket pair (a datagram pair) to a UNIX socket by path, listener outside",
            root_only: false,
            held_by: EXEC,
            attempt: |t, r| datagram_sent(t, r, "sendto_raw_pair.py"),
        },
        Row {
            name: "connect() to an abstract UNIX socket, listener outside",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                use std::os::linux::net::SocketAddrExt;
                let name = format!("sandgate-escape-{}", t.root.display());
                let address = std::os::unix::net::SocketAddr::from_abstract_name(&name).unwrap();
                let listener = UnixListener::bind_addr(&address).unwrap();
                listener.set_nonblocking(true).unwrap();
                let out = r.sh_with(
                    &format!("python3 {}", t.bin("connect_abstract.py")),
                    &[("NAME", &name)],
                );
                (accepted_hello(&listener), seen(&out))
            },
        },
        Row {
            name: "connect() while another process switches the address from a listed socket to an unlisted one",
            root_only: false,
            held_by: EVERY,
            attempt: |t, r| {
                let listed = t.outside.join(LISTED);
                let sock = t.outside.join("unlisted.sock");
                let mut listeners = Vec::new();
                for path in [&listed, &sock] {
                    let l = UnixListener::bind(path).unwrap();
                    fs::set_permissions(path, fs::Permissions::from_mode(0o777)).unwrap();
                    l.set_nonblocking(true).unwrap();
                    listeners.push(l);
                }
                let out = r.sh_with(
                    &format!("python3 {}", t.bin("connect_swap.py")),
                    &[
                        ("LISTED", listed.to_str().unwrap()),
                        ("SOCK", sock.to_str().unwrap()),
                    ],
                );
                (accepted_hello(&listeners[1]), seen(&out))
            },
        },
    ]
}

/// Runs `script`, which sends a datagram to a listener outside; whether it
/// arrived.
/// Makes `base/.claude/settings.json` (`{}`), then runs `script` in `base`
/// through `r`: whether it changed that file or made any of `made`.
fn agent_settings_rewritten(
    t: &Tree,
    r: &Runner,
    base: &Path,
    script: &str,
    made: &[&str],
) -> (bool, String) {
    let existing = base.join(".claude/settings.json");
    t.prepare(&format!(
        "cd '{}' && mkdir .claude && echo '{{}}' > .claude/settings.json",
        base.display()
    ));
    let out = r.sh(&format!("cd '{}' && {script}", base.display()));
    let got = fs::read_to_string(&existing).unwrap() != "{}\n"
        || made.iter().any(|p| base.join(p).exists());
    (got, seen(&out))
}

fn datagram_sent(t: &Tree, r: &Runner, script: &str) -> (bool, String) {
    let sock = t.outside.join("datagram.sock");
    let listener = UnixDatagram::bind(&sock).unwrap();
    fs::set_permissions(&sock, fs::Permissions::from_mode(0o777)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let out = r.sh_with(
        &format!("python3 {}", t.bin(script)),
        &[("SOCK", sock.to_str().unwrap())],
    );
    let mut buf = [0u8; 64];
    let got = listener
        .recv(&mut buf)
        .is_ok_and(|n| buf[..n].starts_with(b"hello from inside"));
    (got, seen(&out))
}

/// Listens at `sock` (outside the sandbox, in this test process), then runs
/// `connect.py` through `r`: whether it got connected and said hello.
fn connect_to_listener(t: &Tree, r: &Runner, sock: &Path) -> (bool, String) {
    let listener = UnixListener::bind(sock).unwrap();
    fs::set_permissions(sock, fs::Permissions::from_mode(0o777)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let out = r.sh_with(
        &format!("python3 {}", t.bin("connect.py")),
        &[("SOCK", sock.to_str().unwrap())],
    );
    (accepted_hello(&listener), seen(&out))
}

/// Whether some connection waiting on `listener` said hello from inside.
fn accepted_hello(listener: &UnixListener) -> bool {
    while let Ok((mut stream, _)) = listener.accept() {
        let mut buf = String::new();
        stream.set_nonblocking(false).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let _ = stream.read_to_string(&mut buf);
        if buf.contains("hello from inside") {
            return true;
        }
    }
    false
}

/// Prints the three credential stores [`Tree::plant_credentials`] fills.
const CAT_CREDENTIALS: &str =
    "cat \"$HOME/.netrc\"; cat \"$HOME/.config/gh/hosts.yml\"; cat \"$HOME/.kube/config\"";

/// The credential stores are hidden only while the policy denies them: with
/// the rules removed, every surface reads them (exec isolation with a policy
/// without them, `sandgate run` under a central policy without them).
#[test]
fn credential_stores_are_read_where_the_policy_removed_their_rules() {
    if !has("python3") {
        return missing("`python3` is not installed");
    }
    for mode in [Mode::Landlock, Mode::Bwrap, Mode::Run, Mode::RunCarve] {
        if !mode.available() {
            continue;
        }
        for who in users() {
            let t = Tree::new(who);
            t.plant_credentials();
            let central = t.home.join(".sandgate/permissions.yaml");
            fs::create_dir_all(central.parent().unwrap()).unwrap();
            fs::write(
                &central,
                "permissions:\n  paths:\n    deny: [\"/dev/mem\"]\n",
            )
            .unwrap();
            t.give(&[&t.home.join(".sandgate"), &central]);
            for name in ["landlock", "bwrap"] {
                fs::copy(
                    t.root.join(format!("{name}-open.yaml")),
                    t.root.join(format!("{name}.yaml")),
                )
                .unwrap();
            }
            let out = Runner {
                tree: &t,
                mode: Some(mode),
            }
            .sh(CAT_CREDENTIALS);
            assert_eq!(
                text(&out.stdout).matches("TOKEN").count(),
                3,
                "{mode:?} as {who:?}: {}",
                seen(&out)
            );
        }
    }
}

/// Whether the attempt printed the key or changed it.
fn stole_or_changed_the_key(t: &Tree, out: &Output) -> bool {
    text(&out.stdout).contains("SECRET")
        || fs::read_to_string(t.home.join(".ssh/id_rsa")).unwrap() != KEY
}

/// The mount point of the file system holding `path` (for `open_by_handle_at`).
fn mount_point(path: &Path) -> PathBuf {
    let out = Command::new("stat")
        .args(["-c", "%m"])
        .arg(path)
        .output_within(DEADLINE)
        .unwrap();
    PathBuf::from(text(&out.stdout).trim())
}

fn check_row(row: &Row, mode: Mode, who: Who) {
    if row.root_only && who != Who::Root {
        return;
    }
    let label = format!("{} ({mode:?}, as {who:?})", row.name);
    let tree = Tree::new(who);
    let (free, what) = (row.attempt)(
        &tree,
        &Runner {
            tree: &tree,
            mode: None,
        },
    );
    assert!(
        free,
        "{label}: the attempt does not work even unconfined: {what}"
    );
    drop(tree);
    let tree = Tree::new(who);
    let (escaped, what) = (row.attempt)(
        &tree,
        &Runner {
            tree: &tree,
            mode: Some(mode),
        },
    );
    assert!(!escaped, "{label}: escaped: {what}");
    eprintln!("held: {label}");
}

fn check_mode(mode: Mode) {
    if !mode.available() || !has("python3") {
        if !has("python3") {
            missing("`python3` is not installed");
        }
        return;
    }
    for who in users() {
        // `ESCAPE_ROW=text` runs only the rows whose name holds `text`.
        let only = std::env::var("ESCAPE_ROW").unwrap_or_default();
        for row in rows()
            .iter()
            .filter(|r| r.held_by.contains(&mode) && r.name.contains(only.as_str()))
        {
            check_row(row, mode, who);
        }
    }
}

#[test]
fn exec_landlock_holds_every_row() {
    check_mode(Mode::Landlock);
}

#[test]
fn exec_bwrap_holds_every_row() {
    check_mode(Mode::Bwrap);
}

#[test]
fn exec_landlock_with_listed_sockets_holds_every_row() {
    check_mode(Mode::LandlockSockets);
}

#[test]
fn exec_bwrap_with_listed_sockets_holds_every_row() {
    check_mode(Mode::BwrapSockets);
}

/// The calls the supervisor performs for a command (the names it makes
/// or moves) answer as the kernel would: a symbolic link is followed to
/// the file it names (and refused when that is protected), `/dev/null`
/// takes writes, `mkdir -p` of a directory outside is fine, a file outside
/// opens to read with `O_CREAT`, renames, hard links and FIFOs work, and the
/// command's umask holds; in both exec modes, as root and as the test user.
#[test]
fn names_made_for_the_command_are_as_the_kernel_would_make_them() {
    let script = "set -e; echo a > a.txt; ln -s a.txt l; echo b > l; cat a.txt; \
        ln -s .mcp.json l2; if (echo x > l2) 2>/dev/null; then echo wrote; fi; test ! -e .mcp.json; \
        echo x > /dev/null; mkdir -p \"$OUTSIDE\"; \
        python3 -c 'import os; os.close(os.open(os.environ[\"OUTSIDE\"] + \"/file.txt\", os.O_RDONLY | os.O_CREAT))'; \
        mkdir d; mv d e; ln a.txt e/hard; mkfifo e/fifo; test -p e/fifo; \
        umask 077; echo s > secret; stat -c %a secret; echo done";
    for mode in [Mode::Landlock, Mode::Bwrap] {
        if !mode.available() || !has("python3") {
            continue;
        }
        for who in users() {
            let t = Tree::new(who);
            let out = Runner {
                tree: &t,
                mode: Some(mode),
            }
            .sh(script);
            assert_eq!(
                text(&out.stdout),
                "b\n600\ndone\n",
                "{mode:?}, {who:?}: {}",
                seen(&out)
            );
            assert_eq!(fs::read_to_string(t.work.join("e/hard")).unwrap(), "b\n");
        }
    }
}

/// With `unix_sockets` listed, the listed socket is reachable by its
/// absolute path, a relative one and a symlink in the workdir, in both exec
/// modes and for both users; an unlisted one next to it is refused.
#[test]
fn listed_unix_sockets_connect_and_only_they() {
    for mode in [Mode::LandlockSockets, Mode::BwrapSockets] {
        if !mode.available() || !has("python3") {
            continue;
        }
        for who in users() {
            let t = Tree::new(who);
            let listed = t.outside.join(LISTED);
            let other = t.outside.join("other.sock");
            let mut listeners = Vec::new();
            for path in [&listed, &other] {
                let l = UnixListener::bind(path).unwrap();
                fs::set_permissions(path, fs::Permissions::from_mode(0o777)).unwrap();
                l.set_nonblocking(true).unwrap();
                listeners.push(l);
            }
            std::os::unix::fs::symlink(&listed, t.work.join("link.sock")).unwrap();
            let r = Runner {
                tree: &t,
                mode: Some(mode),
            };
            for spelling in [
                listed.display().to_string(),
                "../outside/listed.sock".to_string(),
                "link.sock".to_string(),
            ] {
                let out = r.sh_with(
                    &format!("python3 {}", t.bin("connect.py")),
                    &[("SOCK", &spelling)],
                );
                assert!(
                    text(&out.stdout).contains("connected") && accepted_hello(&listeners[0]),
                    "{mode:?}, {who:?}, `{spelling}`: {}",
                    seen(&out)
                );
            }
            let out = r.sh_with(
                &format!("python3 {}", t.bin("connect.py")),
                &[("SOCK", other.to_str().unwrap())],
            );
            assert!(
                !out.status.success() && text(&out.stderr).contains("Permission denied"),
                "{mode:?}, {who:?}: {}",
                seen(&out)
            );
            assert!(!accepted_hello(&listeners[1]), "{mode:?}, {who:?}");
            // A socket of the command's own, in the workdir, is made and
            // reached, also under a name as long as the kernel takes.
            let out = r.sh(
                "python3 -c 'import socket; l = socket.socket(socket.AF_UNIX); l.bind(\"own.sock\"); l.listen(1); socket.socket(socket.AF_UNIX).bind(\"l\" * 100); print(\"bound\")'",
            );
            use std::os::unix::fs::FileTypeExt;
            for name in ["own.sock".to_string(), "l".repeat(100)] {
                assert!(
                    fs::symlink_metadata(t.work.join(&name))
                        .is_ok_and(|m| m.file_type().is_socket()),
                    "{name}: {mode:?}, {who:?}: {}",
                    seen(&out)
                );
            }
        }
    }
}

#[test]
fn run_holds_every_row() {
    check_mode(Mode::Run);
}

#[test]
fn run_carving_holds_every_row() {
    check_mode(Mode::RunCarve);
}

/// Neither exec mode leaves the command a capability, even as root; both
/// set no-new-privileges and install their filters; the bwrap preset runs
/// in its own PID namespace.
#[test]
fn exec_modes_drop_every_capability() {
    for mode in [Mode::Landlock, Mode::Bwrap] {
        if mode.available() {
            capabilities_dropped(mode);
        }
    }
}

fn capabilities_dropped(mode: Mode) {
    for who in users() {
        let tree = Tree::new(who);
        let runner = Runner {
            tree: &tree,
            mode: Some(mode),
        };
        let out = runner.sh("grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status; echo pid $$");
        let stdout = text(&out.stdout);
        let mut expected = vec![
            "CapEff:\t0000000000000000",
            "CapPrm:\t0000000000000000",
            "CapAmb:\t0000000000000000",
            "NoNewPrivs:\t1",
            "Seccomp:\t2",
        ];
        // Only a caller with CAP_SETPCAP (root) can empty the bounding set
        // under Landlock; bwrap empties it inside its user namespace.
        if who == Who::Root || mode == Mode::Bwrap {
            expected.push("CapBnd:\t0000000000000000");
        }
        for line in expected {
            assert!(
                stdout.contains(line),
                "{mode:?}, {who:?}: {line} in {stdout}"
            );
        }
        if mode == Mode::Landlock {
            continue;
        }
        // The shell is one of the first processes of its own PID namespace.
        let pid: u32 = stdout
            .lines()
            .find_map(|l| l.strip_prefix("pid "))
            .and_then(|p| p.trim().parse().ok())
            .unwrap();
        assert!(pid < 10, "{mode:?}, {who:?}: pid {pid}");
    }
}

/// Protected paths leave git working: in a workdir cloned from a repository
/// outside, `git fetch`, `git checkout -b` and `git commit` succeed
/// confined, as root and as the test user, in every mode.
#[test]
fn git_commit_checkout_and_fetch_still_work() {
    for mode in [Mode::Landlock, Mode::Bwrap, Mode::Run] {
        if !mode.available() {
            continue;
        }
        for who in users() {
            let t = Tree::new(who);
            let upstream = t.outside.join("upstream");
            fs::create_dir(&upstream).unwrap();
            if let Who::User { uid, gid } = who {
                std::os::unix::fs::chown(&upstream, Some(uid), Some(gid)).unwrap();
            }
            t.git(&format!("init -q {}", upstream.display()));
            t.git(&format!(
                "-C {} commit -q --allow-empty -m one",
                upstream.display()
            ));
            t.git(&format!("clone -q {} repo", upstream.display()));
            t.git(&format!(
                "-C {} commit -q --allow-empty -m two",
                upstream.display()
            ));
            let r = Runner {
                tree: &t,
                mode: Some(mode),
            };
            let out = r.sh_with(
                "cd repo && git fetch -q origin && git merge -q --ff-only origin/HEAD 2>/dev/null || git merge -q --ff-only FETCH_HEAD; git checkout -q -b work && echo x > f && git add f && git commit -qm three && git log --format=%s",
                &[
                    ("GIT_AUTHOR_NAME", "t"),
                    ("GIT_AUTHOR_EMAIL", "t@t"),
                    ("GIT_COMMITTER_NAME", "t"),
                    ("GIT_COMMITTER_EMAIL", "t@t"),
                ],
            );
            assert_eq!(
                text(&out.stdout),
                "three\ntwo\none\n",
                "{mode:?}, {who:?}: {}",
                seen(&out)
            );
        }
    }
}

/// sandgate runs `bwrap` itself, outside the sandbox: one a confined
/// program planted on `PATH` (here a `bin` in the workdir) is passed over
/// for the system's, and `--dry-run` names it.
#[test]
fn a_bwrap_planted_on_path_is_not_run() {
    if !Mode::Bwrap.available() {
        return;
    }
    for who in users() {
        let t = Tree::new(who);
        t.prepare(
            "mkdir bin && printf '#!/bin/sh\\necho planted > \"$OUTSIDE/planted\"\\nexec /usr/bin/bwrap \"$@\"\\n' > bin/bwrap && chmod 755 bin/bwrap",
        );
        let path = format!("{}:{PATH}", t.work.join("bin").display());
        let marker = t.outside.join("planted");
        // Unconfined, the planted one is what `PATH` finds.
        let out = t
            .command("/bin/sh")
            .args(["-c", "bwrap --version"])
            .env("PATH", &path)
            .output_within(DEADLINE)
            .unwrap();
        assert!(marker.exists(), "{who:?}: not found first: {}", seen(&out));
        fs::remove_file(&marker).unwrap();
        let exec = |args: &[&str]| {
            t.command(binary().to_str().unwrap())
                .arg("--config")
                .arg(t.root.join("bwrap.yaml"))
                .arg("exec")
                .args(args)
                .env("PATH", &path)
                .output_within(DEADLINE)
                .unwrap()
        };
        let out = exec(&["--", "echo ran"]);
        assert_eq!(text(&out.stdout), "ran\n", "{who:?}: {}", seen(&out));
        assert!(!marker.exists(), "{who:?}: the planted bwrap ran");
        let out = exec(&["--dry-run", "--", "echo ran"]);
        let shown = text(&out.stdout);
        assert!(
            shown.contains(&format!(
                "`{}` is not used",
                t.work.join("bin/bwrap").display()
            )),
            "{who:?}: {shown}"
        );
        assert!(shown.contains("/usr/bin/bwrap"), "{who:?}: {shown}");
        assert!(!marker.exists(), "{who:?}: the planted bwrap ran");
    }
}

/// sandgate run from inside the workdir (a build in the project) is one of
/// the protected paths: a confined command cannot replace the executable
/// the agents' hooks start next, in every mode, as root and as the test
/// user. Unconfined, the same command replaces it.
#[test]
fn sandgate_itself_in_the_workdir_is_read_only() {
    for mode in [Mode::Landlock, Mode::Bwrap, Mode::Run] {
        if !mode.available() {
            continue;
        }
        for who in users() {
            // A running executable cannot be written (`ETXTBSY`), but it
            // can be replaced by a rename.
            let replace = "cp /bin/true bin/new && mv -f bin/new bin/sandgate";
            for confined in [false, true] {
                let t = Tree::new(who);
                t.prepare("mkdir bin");
                let copy = t.work.join("bin/sandgate");
                exe::copy_executable(binary(), &copy);
                if let Who::User { uid, gid } = who {
                    std::os::unix::fs::chown(&copy, Some(uid), Some(gid)).unwrap();
                }
                let before = fs::metadata(&copy).unwrap().len();
                let out = if !confined {
                    t.command("/bin/sh")
                        .args(["-c", replace])
                        .output_within(DEADLINE)
                        .unwrap()
                } else if mode == Mode::Run {
                    t.command(copy.to_str().unwrap())
                        .args(["run", "--no-ui", "--", "/bin/sh", "-c", replace])
                        .output_within(DEADLINE)
                        .unwrap()
                } else {
                    let config = if mode == Mode::Bwrap {
                        "bwrap"
                    } else {
                        "landlock"
                    };
                    t.command(copy.to_str().unwrap())
                        .arg("--config")
                        .arg(t.root.join(format!("{config}.yaml")))
                        .args(["exec", "--", replace])
                        .output_within(DEADLINE)
                        .unwrap()
                };
                let replaced = fs::metadata(&copy).unwrap().len() != before;
                assert_eq!(
                    replaced,
                    !confined,
                    "{mode:?}, {who:?}, confined {confined}: {}",
                    seen(&out)
                );
            }
        }
    }
}

/// Root under `sandgate run` loses the capabilities that act around
/// Landlock and the supervisor (kernel modules, `bpf`, mount namespaces of
/// its own, the host's network, …) and keeps those installing and unpacking
/// need. Unconfined, root makes a mount namespace of its own (a throw-away
/// one); confined, in both protections, it cannot.
#[test]
fn run_drops_the_capabilities_that_reach_around_it() {
    if !is_root() {
        missing("this test needs root: run the escape tests as root");
        return;
    }
    if !Mode::Run.available() {
        return;
    }
    let script =
        "grep -E '^Cap(Eff|Bnd):' /proc/self/status; unshare --mount true && echo own-namespace";
    for mode in [None, Some(Mode::Run), Some(Mode::RunCarve)] {
        let t = Tree::new(Who::Root);
        let out = Runner { tree: &t, mode }.sh(script);
        let stdout = text(&out.stdout);
        assert_eq!(
            stdout.contains("own-namespace"),
            mode.is_none(),
            "{mode:?}: {}",
            seen(&out)
        );
        if mode.is_none() {
            continue;
        }
        for set in ["CapEff:", "CapBnd:"] {
            let bits = stdout
                .lines()
                .find_map(|l| l.strip_prefix(set))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
                .unwrap();
            for cap in sandgate_confine::AROUND_CONFINEMENT {
                assert_eq!(bits & (1 << cap), 0, "{mode:?}: {set} keeps {cap}");
            }
            // CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_SETUID stay.
            for cap in [0, 1, 3, 7] {
                assert_ne!(bits & (1 << cap), 0, "{mode:?}: {set} lost {cap}");
            }
        }
    }
}
