//! `sandgate run` with the tools that unpack, copy and install into the
//! workspace: `tar xf`, `cp -a`, `rsync -a`, `unzip`, `pip install` into a
//! venv, `npm install` from a local tarball and `git clone`. Each one works
//! inside the workspace, keeping modes and times, with no question and no
//! denial, while the same program still cannot write outside.
//!
//! The inputs are made outside the workspace, unconfined; only the step
//! under test runs confined.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use run_common::wait::{Bounded, DEADLINE};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output};

mod run_common;

use run_common::ci::PATH;
use run_common::{supported, text, wait, Tree};

/// Whether `program` is installed; under CI a missing one fails the test.
fn has(program: &str, package: &str) -> bool {
    let found = run_common::ci::has(program);
    if !found {
        run_common::skip(&format!(
            "`{program}` is not installed (package `{package}`)"
        ));
    }
    found
}

fn tree() -> Option<Tree> {
    if !supported() {
        return None;
    }
    Some(Tree::new().armed())
}

fn sh(tree: &Tree, dir: &Path, script: &str) -> Output {
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", script])
        .current_dir(dir)
        .env("PATH", PATH)
        .env("HOME", &tree.home)
        .env("OUT", &tree.out);
    let out = wait::output_within(&mut cmd, 300, script);
    assert!(
        out.status.success(),
        "setup `{script}`: {}",
        text(&out.stderr)
    );
    out
}

/// `sandgate run --no-ui -- sh -c SCRIPT` in the workspace, which must
/// succeed without a single denial.
fn confined(tree: &Tree, script: &str) -> Output {
    confined_allowing(tree, script, &[])
}

/// [`confined`], where denial lines containing one of `expected` are fine.
fn confined_allowing(tree: &Tree, script: &str, expected: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
    cmd.args(["run", "--no-ui", "--", "/bin/sh", "-c", script])
        .current_dir(&tree.ws)
        .env("PATH", PATH)
        .env("HOME", &tree.home)
        .env("OUT", &tree.out)
        .env("SANDGATE_AUDIT", "off")
        .env("SANDGATE_SANDBOX", "1")
        .env_remove("TMPDIR")
        .env_remove("SANDGATE_CONFIG")
        .env_remove("SANDGATE_LOCAL_CONFIG");
    let out = wait::output_within(&mut cmd, 300, script);
    let stderr = text(&out.stderr);
    let unexpected = stderr
        .lines()
        .any(|l| l.contains("denied") && !expected.iter().any(|e| l.contains(e)));
    assert!(
        out.status.success() && !unexpected,
        "`{script}` under sandgate run: exit {:?}\nstdout: {}\nstderr: {stderr}",
        out.status.code(),
        text(&out.stdout)
    );
    out
}

/// `outside/src`: a directory (0750) with a file (0640, an old mtime), a
/// subdirectory with an executable, and a relative symlink.
fn source_tree(tree: &Tree) {
    let src = tree.out.join("src");
    fs::create_dir_all(src.join("bin")).unwrap();
    fs::write(src.join("data.txt"), "data\n").unwrap();
    fs::write(src.join("bin/run.sh"), "#!/bin/sh\necho run\n").unwrap();
    std::os::unix::fs::symlink("data.txt", src.join("link")).unwrap();
    fs::set_permissions(src.join("data.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    fs::set_permissions(src.join("bin/run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(&src, fs::Permissions::from_mode(0o750)).unwrap();
    sh(tree, &src, "touch -d 2001-02-03T04:05:06 data.txt bin");
}

/// The copy of [`source_tree`] at `dst` keeps contents, modes, times and the link.
fn same_tree(dst: &Path) {
    assert_eq!(fs::read_to_string(dst.join("data.txt")).unwrap(), "data\n");
    let mode = |p: &Path| fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&dst.join("data.txt")), 0o640, "{}", dst.display());
    assert_eq!(mode(&dst.join("bin/run.sh")), 0o755);
    assert_eq!(mode(dst), 0o750);
    let mtime = fs::metadata(dst.join("data.txt")).unwrap().mtime();
    assert_eq!(mtime, 981_173_106, "mtime of data.txt kept");
    assert_eq!(
        fs::read_link(dst.join("link")).unwrap(),
        Path::new("data.txt")
    );
}

/// Nothing of the tool's work landed outside the workspace.
fn outside_untouched(tree: &Tree, names: &[&str]) {
    let mut found: Vec<String> = fs::read_dir(&tree.out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut expected: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    expected.sort();
    assert_eq!(found, expected);
}

#[test]
fn tar_xf_unpacks_with_modes_and_times() {
    let Some(t) = tree() else { return };
    if !has("tar", "tar") {
        return;
    }
    source_tree(&t);
    sh(&t, &t.out, "tar cf src.tar src");
    confined(&t, "tar xf \"$OUT/src.tar\"");
    same_tree(&t.ws.join("src"));
    outside_untouched(&t, &["keep.txt", "src", "src.tar"]);
}

#[test]
fn cp_a_copies_with_modes_and_times() {
    let Some(t) = tree() else { return };
    source_tree(&t);
    confined(&t, "cp -a \"$OUT/src\" copy");
    same_tree(&t.ws.join("copy"));
}

#[test]
fn rsync_a_copies_with_modes_and_times() {
    let Some(t) = tree() else { return };
    if !has("rsync", "rsync") {
        return;
    }
    source_tree(&t);
    confined(&t, "rsync -a \"$OUT/src/\" mirror/");
    same_tree(&t.ws.join("mirror"));
}

#[test]
fn unzip_unpacks_with_modes_and_times() {
    let Some(t) = tree() else { return };
    if !has("unzip", "unzip") || !has("python3", "python3") {
        return;
    }
    source_tree(&t);
    // A zip with Unix modes, made by Python's zipfile (no `zip` needed).
    sh(
        &t,
        &t.out,
        "python3 -c 'import zipfile, os\nwith zipfile.ZipFile(\"src.zip\", \"w\") as z:\n    for d, _, fs in os.walk(\"src\"):\n        z.write(d)\n        [z.write(os.path.join(d, f)) for f in fs]\n'",
    );
    confined(&t, "unzip -q \"$OUT/src.zip\"");
    let dst = t.ws.join("src");
    assert_eq!(fs::read_to_string(dst.join("data.txt")).unwrap(), "data\n");
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dst.join("data.txt")), 0o640);
    assert_eq!(mode(&dst.join("bin/run.sh")), 0o755);
    // zip keeps local times to two seconds.
    let mtime = fs::metadata(dst.join("data.txt")).unwrap().mtime();
    assert!((mtime - 981_173_106).abs() <= 2, "mtime {mtime}");
}

#[test]
fn pip_installs_a_local_wheel_into_a_venv() {
    let Some(t) = tree() else { return };
    if !has("python3", "python3 python3-venv") {
        return;
    }
    // A minimal wheel, built by hand outside the workspace.
    sh(
        &t,
        &t.out,
        "python3 -c 'import zipfile\nwith zipfile.ZipFile(\"hello_sg-1.0-py3-none-any.whl\", \"w\") as z:\n    z.writestr(\"hello_sg.py\", \"GREETING = \\\"hi from the wheel\\\"\\n\")\n    z.writestr(\"hello_sg-1.0.dist-info/METADATA\", \"Metadata-Version: 2.1\\nName: hello-sg\\nVersion: 1.0\\n\")\n    z.writestr(\"hello_sg-1.0.dist-info/WHEEL\", \"Wheel-Version: 1.0\\nGenerator: hand\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n\")\n    z.writestr(\"hello_sg-1.0.dist-info/RECORD\", \"\")\n'",
    );
    let out = confined(
        &t,
        "python3 -m venv venv && venv/bin/pip install -q --no-index --disable-pip-version-check \"$OUT/hello_sg-1.0-py3-none-any.whl\" && venv/bin/python -c 'import hello_sg; print(hello_sg.GREETING)'",
    );
    assert_eq!(text(&out.stdout).trim(), "hi from the wheel");
    assert!(t.ws.join("venv/bin/python").exists());
}

#[test]
fn npm_installs_a_local_tarball() {
    let Some(t) = tree() else { return };
    if !has("npm", "npm") {
        return;
    }
    let pkg = t.out.join("pkg");
    fs::create_dir_all(&pkg).unwrap();
    fs::write(
        pkg.join("package.json"),
        "{\"name\": \"hello-sg\", \"version\": \"1.0.0\", \"main\": \"index.js\", \"bin\": {\"hello-sg\": \"cli.js\"}}\n",
    )
    .unwrap();
    fs::write(pkg.join("index.js"), "module.exports = 'hi from npm';\n").unwrap();
    fs::write(
        pkg.join("cli.js"),
        "#!/usr/bin/env node\nconsole.log(require('./index.js'));\n",
    )
    .unwrap();
    sh(
        &t,
        &pkg,
        "npm pack --silent --cache \"$HOME/.npm\" >/dev/null",
    );
    fs::write(
        t.ws.join("package.json"),
        "{\"name\": \"ws\", \"version\": \"0.0.0\"}\n",
    )
    .unwrap();
    let out = confined(
        &t,
        "npm install --offline --no-audit --no-fund --silent \"$OUT/pkg/hello-sg-1.0.0.tgz\" && ./node_modules/.bin/hello-sg",
    );
    assert_eq!(text(&out.stdout).trim(), "hi from npm");
}

#[test]
fn git_clone_makes_a_working_repository() {
    let Some(t) = tree() else { return };
    if !has("git", "git") {
        return;
    }
    let repo = t.out.join("repo");
    fs::create_dir_all(&repo).unwrap();
    sh(
        &t,
        &repo,
        "git init -q && git config user.email a@b && git config user.name n && echo one > f && git add f && git commit -qm one",
    );
    // A local clone tries to hard-link the objects first; the links fail
    // as across file systems (logged) and git copies them.
    let out = confined_allowing(
        &t,
        "git clone -q \"$OUT/repo\" clone && cd clone && git config user.email a@b && git config user.name n && echo two >> f && git commit -qam two && git log --format=%s",
        &["a hard link would give the workspace a name for a file outside"],
    );
    assert_eq!(text(&out.stdout), "two\none\n");
    // sandgate names the new repository, whose config is the program's.
    let stderr = text(&out.stderr);
    let note = format!(
        "made a git repository at `{}`",
        t.ws.join("clone/.git").display()
    );
    assert_eq!(stderr.matches(&note).count(), 1, "{stderr}");
    // Names like it are not repositories; a `.git` made by hand is one.
    let out = confined(
        &t,
        "mkdir -p plain/.github && touch plain/.gitignore && mkdir -p byhand/.git && mkdir -p byhand/.git",
    );
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("plain"), "{stderr}");
    assert_eq!(
        stderr.matches("made a git repository at").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("byhand/.git"), "{stderr}");
    // The source repository is unchanged.
    let log = sh(&t, &repo, "git log --format=%s");
    assert_eq!(text(&log.stdout), "one\n");
}

/// A program that serves on a UNIX socket in the workspace: in the root
/// and in a directory made during the run (where sandgate binds the
/// program's own socket for it, with the program's umask) and in one that
/// existed at start (where the kernel does), it binds, listens and is
/// reached; at a protected name and outside the allowed set the bind fails.
#[test]
fn unix_sockets_bind_listen_and_connect_in_the_workspace() {
    let Some(t) = tree() else { return };
    if !has("python3", "python3") {
        return;
    }
    fs::create_dir(t.ws.join("sub")).unwrap();
    let outside = t.out.join("out.sock");
    let script = format!(
        r#"umask 077; mkdir made && python3 -c '
import os, socket, stat, sys
for path in ["root.sock", "made/m.sock", "sub/s.sock"]:
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(1)
    client = socket.socket(socket.AF_UNIX)
    client.connect(path)
    server.accept()[0].sendall(b"hi")
    print(path, client.recv(2).decode(), oct(stat.S_IMODE(os.stat(path).st_mode)))
# A name as long as the kernel takes, bound in the root by sandgate.
socket.socket(socket.AF_UNIX).bind("l" * 100)
print("long name bound")
for path in [".mcp.json", sys.argv[1]]:
    try:
        socket.socket(socket.AF_UNIX).bind(path)
        print(path, "bound")
    except OSError as e:
        print(path, e.errno)
' {outside}"#,
        outside = outside.display()
    );
    let out = confined_allowing(&t, &script, &[".mcp.json", "out.sock"]);
    let stdout = text(&out.stdout);
    for path in ["root.sock", "made/m.sock", "sub/s.sock"] {
        assert!(stdout.contains(&format!("{path} hi 0o700")), "{stdout}");
    }
    assert!(stdout.contains("long name bound"), "{stdout}");
    assert!(
        stdout.contains(&format!(".mcp.json {}", libc::EACCES)),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("{} {}", outside.display(), libc::EACCES)),
        "{stdout}"
    );
    assert!(!t.ws.join(".mcp.json").exists());
    assert!(!outside.exists());
}

/// Connects over TCP to `127.0.0.1:$TCP_PORT`; connects to each UNIX socket
/// path given, sends a hello and prints `PATH ok` or `PATH ERRNO`; then
/// starts a daemon (it forks twice and its parent exits) that listens on
/// `daemon.sock`, says on a pipe when it listens, and connects to it; the
/// daemon stays until the client has closed. Every wait has a deadline, and
/// the daemon gives up after it too.
const CONNECT_EACH_PY: &str = r#"import os, select, socket, sys
socket.setdefaulttimeout(10)
tcp = socket.create_connection(("127.0.0.1", int(os.environ["TCP_PORT"])))
tcp.sendall(b"hello over tcp")
tcp.close()
print("tcp ok")
for path in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        s.sendall(b"hello from inside")
        print(path, "ok")
    except OSError as e:
        print(path, e.errno)
sys.stdout.flush()
ready_r, ready_w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.close(ready_r)
        try:
            server = socket.socket(socket.AF_UNIX)
            server.bind("daemon.sock")
            server.listen(1)
            os.write(ready_w, b"1")
            conn = server.accept()[0]
            conn.sendall(b"daemon says hi")
            # Alive until the client has its answer: the run judges the
            # listener by its process after connecting, and refuses one that
            # has gone (it can no longer tell whose it was).
            conn.recv(1)
        finally:
            os._exit(0)
    os._exit(0)
os.close(ready_w)
os.wait()
if not select.select([ready_r], [], [], 10)[0] or os.read(ready_r, 1) != b"1":
    sys.exit("the daemon did not listen")
client = socket.socket(socket.AF_UNIX)
client.connect("daemon.sock")
print(client.recv(64).decode())
client.close()
"#;

/// `connect()` reaches the program's own listeners (one of a daemon it
/// started, which left its parent) and, of the listeners outside the run,
/// only the one `unixSockets` lists: not another, not one whose socket
/// file lies in the workspace; TCP goes through. In both protections.
#[test]
fn unix_sockets_outside_the_run_are_reached_only_when_listed() {
    use std::io::Read;
    use std::os::unix::net::UnixListener;
    if !supported() || !has("python3", "python3") {
        return;
    }
    for protection in ["mount", "carve"] {
        let t = Tree::new();
        let listed = t.out.join("listed.sock");
        let unlisted = t.out.join("unlisted.sock");
        let in_workspace = t.ws.join("outsider.sock");
        let listeners: Vec<UnixListener> = [&listed, &unlisted, &in_workspace]
            .iter()
            .map(|p| {
                let l = UnixListener::bind(p).unwrap();
                l.set_nonblocking(true).unwrap();
                l
            })
            .collect();
        fs::create_dir_all(t.ws.join(".sandgate")).unwrap();
        fs::write(
            t.ws.join(".sandgate/sandbox.json"),
            format!(
                "{{\"enabled\": true, \"unixSockets\": [\"{}\"]}}\n",
                listed.display()
            ),
        )
        .unwrap();
        fs::write(t.out.join("connect_each.py"), CONNECT_EACH_PY).unwrap();
        let dry = Command::new(env!("CARGO_BIN_EXE_sandgate"))
            .args(["run", "--dry-run", "--json"])
            .current_dir(&t.ws)
            .env("HOME", &t.home)
            .env("SANDGATE_AUDIT", "off")
            .env_remove("SSH_AUTH_SOCK")
            .output_within(DEADLINE)
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap();
        assert_eq!(
            v["unixSockets"],
            serde_json::json!([{"path": listed, "state": "socket"}]),
            "{v}"
        );
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = tcp.local_addr().unwrap().port().to_string();
        let out = wait::output_within(
            Command::new(env!("CARGO_BIN_EXE_sandgate"))
                .args(["run", "--no-ui", "--", "python3"])
                .arg(t.out.join("connect_each.py"))
                .args([&listed, &unlisted, &in_workspace])
                .current_dir(&t.ws)
                .env("PATH", PATH)
                .env("HOME", &t.home)
                .env("SANDGATE_AUDIT", "off")
                .env("SANDGATE_RUN_PROTECTION", protection)
                .env("TCP_PORT", &port)
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .env_remove("TMPDIR"),
            60,
            protection,
        );
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        let seen = format!("{protection}: stdout {stdout}\nstderr {stderr}");
        assert!(out.status.success(), "{seen}");
        assert!(
            stdout.contains(&format!("{} ok", listed.display())),
            "{seen}"
        );
        for refused in [&unlisted, &in_workspace] {
            assert!(
                stdout.contains(&format!("{} {}", refused.display(), libc::EACCES)),
                "{seen}"
            );
            assert!(
                stderr.contains(&format!("denied connect of `{}`", refused.display())),
                "{seen}"
            );
        }
        assert!(stdout.contains("daemon says hi"), "{seen}");
        // The network is not sandgate run's business: TCP goes through.
        assert!(stdout.contains("tcp ok"), "{seen}");
        // The client connected and closed before `sandgate run` exited.
        tcp.set_nonblocking(true).unwrap();
        let (mut stream, _) = tcp.accept().unwrap();
        stream.set_nonblocking(false).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        let mut said = String::new();
        stream.read_to_string(&mut said).unwrap();
        assert_eq!(said, "hello over tcp");
        let hello = |l: &UnixListener| {
            let mut said = String::new();
            while let Ok((mut stream, _)) = l.accept() {
                stream.set_nonblocking(false).unwrap();
                stream
                    .set_read_timeout(Some(std::time::Duration::from_secs(10)))
                    .unwrap();
                let _ = stream.read_to_string(&mut said);
            }
            said.contains("hello from inside")
        };
        assert!(hello(&listeners[0]), "{seen}");
        assert!(!hello(&listeners[1]), "{seen}");
        assert!(!hello(&listeners[2]), "{seen}");
    }
}
