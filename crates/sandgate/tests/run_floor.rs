//! `sandgate run` and the built-in floor, against real OpenSSH and git: a
//! confined program cannot read the private key in `~/.ssh`, cannot write
//! there (no question, whatever `sandbox.json` allows), and still pushes over
//! SSH to an `sshd` on 127.0.0.1 with the key held in an `ssh-agent`, because
//! `config`, `known_hosts` and the `*.pub` files stay readable. Both ways of
//! holding the floor are tried: the mount layer and Landlock carving.
//!
//! Everything lives in a throwaway tree: its own HOME, workspace, bare
//! repository, host key, agent socket and sshd configuration.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_common;

use run_common::wait::{Bounded, DEADLINE};
use std::fs;
use std::net::TcpListener;
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use run_common::{supported, text, Tree};

const SSHD: &str = "/usr/sbin/sshd";

/// Why the SSH tools are missing, if they are.
fn missing_tools() -> Option<String> {
    if !Path::new(SSHD).exists() {
        return Some(format!(
            "`{SSHD}` is missing (apt-get install openssh-server, as .ci/run does)"
        ));
    }
    for tool in ["ssh", "ssh-agent", "ssh-add", "ssh-keygen", "git"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output_within(DEADLINE)
            .is_ok_and(|o| o.status.success());
        if !found {
            return Some(format!(
                "`{tool}` is missing (apt-get install openssh-client git, as .ci/run does)"
            ));
        }
    }
    None
}

fn must(cmd: &mut Command) -> Output {
    let out = cmd.output_within(DEADLINE).unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// Kills the processes this test started when it ends.
struct Started(Vec<Child>, Option<Server>);

impl Drop for Started {
    fn drop(&mut self) {
        if let Some(server) = self.1.take() {
            server.stop();
        }
        for child in &mut self.0 {
            run_common::wait::reap(child);
        }
    }
}

/// An SSH server on 127.0.0.1 that cannot lose its port: the test binds
/// the listening socket itself (port 0) and runs `sshd -i` (inetd mode) on
/// each connection it accepts, so no other process can take the port
/// between its choice and a daemon's `bind`.
struct Server {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
    sessions: Arc<Mutex<Vec<run_common::wait::Guard>>>,
}

impl Server {
    fn start(config: &Path) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let sessions = Arc::new(Mutex::new(Vec::new()));
        let (config, flag, list) = (config.to_path_buf(), stop.clone(), sessions.clone());
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        stream.set_nonblocking(false).unwrap();
                        let input = stream.try_clone().unwrap();
                        let session = Command::new(SSHD)
                            .args(["-i", "-e", "-f"])
                            .arg(&config)
                            .stdin(Stdio::from(OwnedFd::from(input)))
                            .stdout(Stdio::from(OwnedFd::from(stream)))
                            .stderr(Stdio::null())
                            .spawn_guarded();
                        match session {
                            Ok(session) => list.lock().unwrap().push(session),
                            Err(e) => eprintln!("cannot start `{SSHD} -i`: {e}"),
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    Err(e) => {
                        eprintln!("accepting an SSH connection: {e}");
                        return;
                    }
                }
            }
        });
        Server {
            port,
            stop,
            thread,
            sessions,
        }
    }

    /// Stops accepting and kills every session (their `Guard`s do). Called
    /// from `Drop`, so it never panics: the accepting thread sees the flag
    /// within 20 ms, and is left to the process's end if it does not.
    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + Duration::from_secs(5);
        while !self.thread.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.clear();
        }
    }
}

fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{what} did not come up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

struct Setup {
    tree: Tree,
    ssh: PathBuf,
    sock: PathBuf,
    remote: PathBuf,
    _started: Started,
}

impl Setup {
    fn new() -> Setup {
        let tree = Tree::new().armed();
        let (root, home, ws) = (tree.root.clone(), tree.home.clone(), tree.ws.clone());
        // Every path below is inside the fresh tree.
        let real_home = std::env::var("HOME").unwrap_or_default();
        assert!(home.starts_with(&root) && ws.starts_with(&root) && home != Path::new(&real_home));
        let ssh = home.join(".ssh");
        let server = root.join("sshd");
        fs::create_dir_all(&ssh).unwrap();
        fs::create_dir_all(&server).unwrap();
        fs::set_permissions(&ssh, fs::Permissions::from_mode(0o700)).unwrap();
        let key = ssh.join("id_ed25519");
        for (file, comment) in [(&key, "user"), (&server.join("host"), "host")] {
            must(
                Command::new("ssh-keygen")
                    .args(["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f"])
                    .arg(file),
            );
        }
        fs::copy(ssh.join("id_ed25519.pub"), server.join("authorized_keys")).unwrap();
        let user = text(&must(Command::new("id").arg("-un")).stdout)
            .trim()
            .to_string();
        let config = server.join("sshd_config");
        fs::write(
            &config,
            format!(
                "HostKey {host}\n\
                 AuthorizedKeysFile {keys}\nUsePAM no\nStrictModes no\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n",
                host = server.join("host").display(),
                keys = server.join("authorized_keys").display(),
            ),
        )
        .unwrap();
        // sshd's privilege separation directory.
        fs::create_dir_all("/run/sshd").unwrap();
        let sshd = Server::start(&config);
        let port = sshd.port;
        let mut started = Started(Vec::new(), Some(sshd));
        let host_pub = fs::read_to_string(server.join("host.pub")).unwrap();
        fs::write(
            ssh.join("known_hosts"),
            format!("[127.0.0.1]:{port} {host_pub}"),
        )
        .unwrap();
        fs::write(
            ssh.join("config"),
            format!(
                "Host gitserver\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  \
                 UserKnownHostsFile {kh}\n  IdentityFile {key}\n  IdentitiesOnly yes\n  \
                 StrictHostKeyChecking yes\n  BatchMode yes\n",
                kh = ssh.join("known_hosts").display(),
                key = key.display(),
            ),
        )
        .unwrap();
        let sock = root.join("agent.sock");
        started.0.push(
            Command::new("ssh-agent")
                .args(["-D", "-a"])
                .arg(&sock)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        // Its socket exists from `bind`, but takes connections only from
        // `listen`: wait until it does.
        wait_for("ssh-agent", || {
            std::os::unix::net::UnixStream::connect(&sock).is_ok()
        });
        must(
            Command::new("ssh-add")
                .arg("-q")
                .arg(&key)
                .env("SSH_AUTH_SOCK", &sock),
        );

        let remote = root.join("remote.git");
        must(
            Command::new("git")
                .args(["init", "-q", "--bare"])
                .arg(&remote),
        );
        let git = |args: &[&str]| {
            must(
                Command::new("git")
                    .args(args)
                    .current_dir(&ws)
                    .env("HOME", &home),
            );
        };
        git(&["init", "-q"]);
        git(&["config", "user.name", "t"]);
        git(&["config", "user.email", "t@example.com"]);
        fs::write(ws.join("file.txt"), "pushed\n").unwrap();
        git(&["add", "file.txt"]);
        git(&["commit", "-q", "-m", "first"]);
        let url = format!("gitserver:{}", remote.display());
        git(&["remote", "add", "origin", &url]);
        Setup {
            tree,
            ssh,
            sock,
            remote,
            _started: started,
        }
    }

    fn env(&self, cmd: &mut Command) {
        cmd.current_dir(&self.tree.ws)
            .env("HOME", &self.tree.home)
            .env("SSH_AUTH_SOCK", &self.sock)
            .env(
                "GIT_SSH_COMMAND",
                format!("ssh -F {}", self.ssh.join("config").display()),
            )
            .env("SANDGATE_AUDIT", "off")
            .env_remove("TMPDIR")
            .env_remove("SANDGATE_CONFIG")
            .env_remove("SANDGATE_LOCAL_CONFIG");
    }

    /// `sh -c SCRIPT`, unconfined.
    fn plain(&self, script: &str) -> Output {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        self.env(&mut cmd);
        cmd.output_within(DEADLINE).unwrap()
    }

    /// `sandgate run --no-ui -- sh -c SCRIPT` with `protection`.
    fn confined(&self, protection: &str, script: &str) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
        cmd.args(["run", "--no-ui", "--", "sh", "-c", script]);
        self.env(&mut cmd);
        cmd.env("SANDGATE_SANDBOX", "1")
            .env("SANDGATE_RUN_PROTECTION", protection);
        cmd.output_within(DEADLINE).unwrap()
    }

    fn dry_run(&self, protection: &str) -> serde_json::Value {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
        cmd.args(["run", "--dry-run", "--json"]);
        self.env(&mut cmd);
        cmd.env("SANDGATE_SANDBOX", "1")
            .env("SANDGATE_RUN_PROTECTION", protection);
        serde_json::from_slice(&must(&mut cmd).stdout).unwrap()
    }

    fn remote_head(&self) -> Option<String> {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(&self.remote)
            .args(["rev-parse", "--verify", "-q", "refs/heads/main"])
            .output_within(DEADLINE)
            .unwrap();
        out.status
            .success()
            .then(|| text(&out.stdout).trim().to_string())
    }

    fn local_head(&self) -> String {
        let out = must(
            Command::new("git")
                .args(["rev-parse", "HEAD"])
                .current_dir(&self.tree.ws),
        );
        text(&out.stdout).trim().to_string()
    }
}

/// The exit status the script printed as `NAME:STATUS`.
fn status(stdout: &str, name: &str) -> i32 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no `{name}:` line in {stdout}"))
}

const SCRIPT: &str = r#"
cat "$HOME/.ssh/id_ed25519"; echo "key:$?"
cat "$HOME/.ssh/known_hosts" "$HOME/.ssh/config" "$HOME/.ssh/id_ed25519.pub" > /dev/null; echo "public:$?"
echo planted >> "$HOME/.ssh/authorized_keys"; echo "write:$?"
git push -q origin HEAD:refs/heads/main; echo "push:$?"
"#;

#[test]
fn the_floor_is_unreadable_and_unwritable_and_ssh_through_the_agent_still_works() {
    if !supported() {
        return;
    }
    if let Some(reason) = missing_tools() {
        run_common::skip(&reason);
        return;
    }
    let setup = Setup::new();
    // Unconfined, the script reads the key, writes into ~/.ssh and pushes.
    let out = setup.plain(SCRIPT);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("PRIVATE KEY") && stdout.contains("key:0"),
        "{stdout}"
    );
    assert!(
        stdout.contains("write:0") && stdout.contains("push:0"),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert_eq!(setup.remote_head(), Some(setup.local_head()));
    fs::remove_file(setup.ssh.join("authorized_keys")).unwrap();

    // Even a sandbox.json that allows ~/.ssh opens nothing there.
    fs::write(
        setup.tree.ws.join(".sandgate/sandbox.json"),
        "{\"enabled\": true, \"allow\": [\"~/.ssh\", \"~\"]}\n",
    )
    .unwrap();
    for protection in ["mount", "carve"] {
        // A new commit to push each time.
        fs::write(setup.tree.ws.join("file.txt"), format!("{protection}\n")).unwrap();
        must(
            Command::new("git")
                .args(["commit", "-q", "-a", "-m", protection])
                .current_dir(&setup.tree.ws),
        );
        let report = setup.dry_run(protection);
        assert_eq!(report["protection"], protection, "{report}");
        let floor = report["floor"].as_array().expect("the floor in the report");
        let ssh_entry = floor
            .iter()
            .find(|f| f["path"] == setup.ssh.to_string_lossy().as_ref())
            .unwrap_or_else(|| panic!("{report}"));
        let readable: Vec<&str> = ssh_entry["readable"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(
            readable,
            ["config", "id_ed25519.pub", "known_hosts"],
            "{report}"
        );

        let out = setup.confined(protection, SCRIPT);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        let all = format!("{stdout}\n{stderr}");
        assert!(
            !all.contains("PRIVATE KEY"),
            "{protection}: the key leaked:\n{all}"
        );
        assert_ne!(status(&stdout, "key"), 0, "{protection}: {all}");
        assert_eq!(status(&stdout, "public"), 0, "{protection}: {all}");
        assert_ne!(status(&stdout, "write"), 0, "{protection}: {all}");
        assert!(
            all.contains("beneath the built-in floor"),
            "{protection}: {all}"
        );
        assert_eq!(status(&stdout, "push"), 0, "{protection}: {all}");
        assert!(!setup.ssh.join("authorized_keys").exists(), "{protection}");
        assert_eq!(
            setup.remote_head(),
            Some(setup.local_head()),
            "{protection}"
        );
    }
}

#[test]
fn an_unprivileged_user_cannot_read_the_floor_either() {
    if !supported() {
        return;
    }
    let uid = must(Command::new("id").arg("-u")).stdout;
    if text(&uid).trim() != "0" {
        run_common::skip("runs the unprivileged path as user 65534, which needs root to set up");
        return;
    }
    let has_setpriv = Command::new("setpriv")
        .arg("--version")
        .output_within(DEADLINE)
        .is_ok_and(|o| o.status.success());
    if !has_setpriv {
        run_common::skip("setpriv is missing (apt-get install util-linux)");
        return;
    }
    // Under /tmp, which user 65534 can reach; the binary is copied there too.
    let tree = Tree::new_in(Path::new("/tmp")).armed();
    let real_home = std::env::var("HOME").unwrap_or_default();
    assert!(tree.home.starts_with(&tree.root) && tree.home != Path::new(&real_home));
    let ssh = tree.home.join(".ssh");
    fs::create_dir_all(&ssh).unwrap();
    fs::write(ssh.join("id_ed25519"), "PRIVATE KEY of nobody\n").unwrap();
    fs::write(ssh.join("known_hosts"), "[127.0.0.1]:22 ssh-ed25519 AAAA\n").unwrap();
    let bin = tree.root.join("sandgate");
    run_common::exe::copy_executable(Path::new(env!("CARGO_BIN_EXE_sandgate")), &bin);
    must(
        Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(&tree.root),
    );
    let script = r#"cat "$HOME/.ssh/id_ed25519"; echo "key:$?"; cat "$HOME/.ssh/known_hosts" >/dev/null; echo "public:$?"; echo x > "$HOME/.ssh/planted"; echo "write:$?""#;
    let as_nobody = |protection: &str, args: &[&str]| {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
            .arg(&bin)
            .args(args)
            .current_dir(&tree.ws)
            .env("HOME", &tree.home)
            .env("SANDGATE_AUDIT", "off")
            .env("SANDGATE_SANDBOX", "1")
            .env("SANDGATE_RUN_PROTECTION", protection)
            .env_remove("TMPDIR");
        cmd.output_within(DEADLINE).unwrap()
    };
    // Unconfined, user 65534 reads its key.
    let plain = Command::new("setpriv")
        .args([
            "--reuid",
            "65534",
            "--regid",
            "65534",
            "--clear-groups",
            "sh",
            "-c",
            script,
        ])
        .env("HOME", &tree.home)
        .output_within(DEADLINE)
        .unwrap();
    assert!(
        text(&plain.stdout).contains("PRIVATE KEY"),
        "{}",
        text(&plain.stderr)
    );
    fs::remove_file(ssh.join("planted")).unwrap();
    for protection in ["mount", "carve"] {
        let dry = as_nobody(protection, &["run", "--dry-run", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap_or_default();
        if v["protection"] != protection {
            run_common::skip(&format!(
                "{protection}: not available here ({})",
                text(&dry.stderr)
            ));
            continue;
        }
        let out = as_nobody(protection, &["run", "--no-ui", "--", "sh", "-c", script]);
        let (stdout, all) = (
            text(&out.stdout),
            format!("{}{}", text(&out.stdout), text(&out.stderr)),
        );
        assert!(
            !all.contains("PRIVATE KEY"),
            "{protection}: the key leaked:\n{all}"
        );
        assert_ne!(status(&stdout, "key"), 0, "{protection}: {all}");
        assert_eq!(status(&stdout, "public"), 0, "{protection}: {all}");
        assert_ne!(status(&stdout, "write"), 0, "{protection}: {all}");
        assert!(!ssh.join("planted").exists(), "{protection}");
    }
}
