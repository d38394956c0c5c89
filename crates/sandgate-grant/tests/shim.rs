//! `compat.sh` sourced under bash and dash: every helper works, the run-time
//! detection is right, and `need_bash` / `require` exit 2. A BSD userland is
//! simulated with PATH shims for `sed` and `stat` that behave like BSD's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/wait.rs"]
mod wait;

use wait::{Bounded, DEADLINE};

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use sandgate_grant::COMPAT_SH;

#[path = "../../../tests/support/exe.rs"]
mod exe;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Absolute path of a program on the test's PATH.
fn which(program: &str) -> Option<PathBuf> {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output_within(DEADLINE)
        .ok()?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && path.starts_with('/')).then(|| PathBuf::from(path))
}

fn shells() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for name in ["bash", "dash"] {
        match which(name) {
            Some(p) => found.push(p),
            None => eprintln!("skipping {name}: not installed"),
        }
    }
    assert!(!found.is_empty(), "neither bash nor dash is installed");
    found
}

struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("compat.sh"), COMPAT_SH).unwrap();
        Sandbox { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Source the shim in `shell`, then run `script`, with `path` as PATH.
    fn run(&self, shell: &Path, path: &str, script: &str) -> Run {
        let out = Command::new(shell)
            .arg("-c")
            .arg(format!(". ./compat.sh\n{script}"))
            .current_dir(self.path())
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.path())
            .output_within(DEADLINE)
            .unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).to_string(),
        }
    }

    /// A directory of links to just `programs`, for a PATH without bash or sha tools.
    fn bin_with(&self, name: &str, programs: &[&str]) -> PathBuf {
        let bin = self.path().join(name);
        fs::create_dir_all(&bin).unwrap();
        for program in programs {
            if let Some(real) = which(program) {
                let _ = symlink(real, bin.join(program));
            }
        }
        bin
    }

    fn script(&self, dir: &Path, name: &str, body: &str) {
        fs::create_dir_all(dir).unwrap();
        exe::write_executable(&dir.join(name), body);
    }
}

fn system_path() -> String {
    std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
}

const BASIC_TOOLS: &[&str] = &[
    "uname", "sed", "stat", "readlink", "dirname", "basename", "cat", "touch", "ln", "mkdir",
];

#[test]
fn it_exports_what_it_detects_at_run_time() {
    let sb = Sandbox::new();
    let os = Command::new("uname")
        .arg("-s")
        .output_within(DEADLINE)
        .unwrap();
    let os = String::from_utf8_lossy(&os.stdout).trim().to_string();
    let bash_major = which("bash").map(|bash| {
        let out = Command::new(bash)
            .arg("-c")
            .arg("echo ${BASH_VERSINFO[0]}")
            .output_within(DEADLINE)
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    });
    for shell in shells() {
        let run = sb.run(
            &shell,
            &system_path(),
            "sh -c 'echo \"$SANDGATE_OS|$SANDGATE_USERLAND|$SANDGATE_BASH_MAJOR\"'",
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        let expected = format!(
            "{os}|gnu|{}",
            bash_major.clone().unwrap_or_else(|| "0".into())
        );
        assert_eq!(run.stdout, expected, "exported to children ({shell:?})");
        let report = sb.run(&shell, &system_path(), "compat_report");
        assert!(
            report.stdout.starts_with(&format!(
                "sandgate-compat: os={os} userland=gnu bash_major="
            )),
            "{}",
            report.stdout
        );
    }
}

#[test]
fn without_bash_the_major_is_zero_and_need_bash_exits_2() {
    let Some(dash) = which("dash") else {
        eprintln!("skipping: dash is not installed");
        return;
    };
    let sb = Sandbox::new();
    let bin = sb.bin_with("nobash", BASIC_TOOLS);
    let path = bin.display().to_string();
    let run = sb.run(&dash, &path, "echo $SANDGATE_BASH_MAJOR");
    assert_eq!(run.stdout, "0", "{}", run.stderr);
    let run = sb.run(&dash, &path, "need_bash 3\necho reached");
    assert_eq!(run.code, 2);
    assert!(!run.stdout.contains("reached"));
    assert!(run.stderr.contains("no bash found"), "{}", run.stderr);
}

#[test]
fn need_bash_and_require_exit_2_never_1() {
    let sb = Sandbox::new();
    for shell in shells() {
        let run = sb.run(&shell, &system_path(), "need_bash 99\necho reached");
        assert_eq!(run.code, 2, "{shell:?}: {}", run.stderr);
        assert!(!run.stdout.contains("reached"));
        assert!(run.stderr.contains("bash 99 or newer"), "{}", run.stderr);

        let run = sb.run(&shell, &system_path(), "need_bash four\necho reached");
        assert_eq!(run.code, 2, "{shell:?}: {}", run.stderr);

        let run = sb.run(
            &shell,
            &system_path(),
            "require sh no-such-tool-1 cat no-such-tool-2\necho reached",
        );
        assert_eq!(run.code, 2, "{shell:?}");
        assert!(!run.stdout.contains("reached"));
        assert!(
            run.stderr.contains("no-such-tool-1 no-such-tool-2"),
            "{}",
            run.stderr
        );
        assert!(
            !run.stderr.contains(" sh"),
            "only missing commands are named"
        );

        let run = sb.run(
            &shell,
            &system_path(),
            "require sh cat\nneed_bash 0\necho reached",
        );
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (0, "reached"),
            "{}",
            run.stderr
        );
    }
    if let Some(bash) = which("bash") {
        let run = sb.run(&bash, &system_path(), "need_bash 3\necho reached");
        assert_eq!(
            run.stdout, "reached",
            "bash 3 or newer is present: {}",
            run.stderr
        );
    }
}

#[test]
fn every_helper_works_on_a_gnu_userland() {
    let sb = Sandbox::new();
    for shell in shells() {
        check_helpers(&sb, &shell, &system_path(), "gnu");
    }
}

#[test]
fn every_helper_works_on_a_simulated_bsd_userland() {
    let sb = Sandbox::new();
    let real_sed = which("sed").unwrap();
    let real_stat = which("stat").unwrap();
    let shims = sb.path().join("bsd-bin");
    // BSD sed: no --version, and -i always takes the next argument as a backup suffix.
    sb.script(
        &shims,
        "sed",
        &format!(
            "#!/bin/sh\n\
             if [ \"$1\" = --version ]; then echo 'sed: illegal option -- -' >&2; exit 1; fi\n\
             if [ \"$1\" = -i ]; then\n\
               suffix=$2; shift 2\n\
               if [ -n \"$suffix\" ]; then echo \"bsd sed: backup suffix '$suffix'\" >&2; exit 70; fi\n\
               exec {sed} -i \"$@\"\n\
             fi\n\
             exec {sed} \"$@\"\n",
            sed = real_sed.display()
        ),
    );
    // BSD stat: -f FORMAT with %z (size) and %m (mtime); no -c.
    sb.script(
        &shims,
        "stat",
        &format!(
            "#!/bin/sh\n\
             if [ \"$1\" != -f ]; then echo \"stat: illegal option -- $1\" >&2; exit 1; fi\n\
             fmt=$2; shift 2\n\
             [ \"$1\" = -- ] && shift\n\
             case $fmt in\n\
               %z) exec {stat} -c %s -- \"$1\" ;;\n\
               %m) exec {stat} -c %Y -- \"$1\" ;;\n\
               *) echo \"stat: unsupported format $fmt\" >&2; exit 1 ;;\n\
             esac\n",
            stat = real_stat.display()
        ),
    );
    let path = format!("{}:{}", shims.display(), system_path());
    for shell in shells() {
        check_helpers(&sb, &shell, &path, "bsd");
    }
}

fn check_helpers(sb: &Sandbox, shell: &Path, path: &str, userland: &str) {
    let work = sb.path().join(format!(
        "work-{}-{userland}",
        shell.file_name().unwrap().to_string_lossy()
    ));
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).unwrap();
    let w = work.display();
    let script = format!(
        "set -e\n\
         echo \"userland=$SANDGATE_USERLAND\"\n\
         printf 'hello world\\n' > {w}/f.txt\n\
         sed_i 's/world/there/' {w}/f.txt\n\
         echo \"edited=$(cat {w}/f.txt)\"\n\
         printf 'abc' > {w}/abc\n\
         echo \"size=$(stat_size {w}/abc)\"\n\
         touch -d @1700000000 {w}/abc\n\
         echo \"mtime=$(stat_mtime {w}/abc)\"\n\
         echo \"sha=$(sha256 {w}/abc)\"\n\
         mkdir -p {w}/real/dir\n\
         ln -s real/dir {w}/hop1\n\
         ln -s hop1 {w}/hop2\n\
         printf x > {w}/real/dir/file\n\
         ln -s ../hop2/file {w}/real/flink\n\
         echo \"link=$(readlink_f {w}/hop2)\"\n\
         echo \"flink=$(readlink_f {w}/real/flink)\"\n"
    );
    let run = sb.run(shell, path, &script);
    let canonical = fs::canonicalize(&work).unwrap();
    let c = canonical.display();
    let expected = format!(
        "userland={userland}\n\
         edited=hello there\n\
         size=3\n\
         mtime=1700000000\n\
         sha=ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n\
         link={c}/real/dir\n\
         flink={c}/real/dir/file"
    );
    assert_eq!(run.stdout, expected, "{shell:?} {userland}: {}", run.stderr);
    assert_eq!(run.code, 0);
    let leftovers: Vec<String> = fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("f.txt") && n != "f.txt")
        .collect();
    assert!(leftovers.is_empty(), "sed_i left backups: {leftovers:?}");
}

#[test]
fn readlink_f_walks_links_where_readlink_has_no_f() {
    let sb = Sandbox::new();
    let real_readlink = which("readlink").unwrap();
    let shims = sb.path().join("old-readlink");
    sb.script(
        &shims,
        "readlink",
        &format!(
            "#!/bin/sh\n\
             case $1 in -f) echo 'readlink: illegal option -- f' >&2; exit 1 ;; esac\n\
             exec {} \"$@\"\n",
            real_readlink.display()
        ),
    );
    let path = format!("{}:{}", shims.display(), system_path());
    let base = sb.path().join("tree");
    fs::create_dir_all(base.join("a/b")).unwrap();
    fs::write(base.join("a/b/target"), "x").unwrap();
    symlink("a/b/target", base.join("l1")).unwrap();
    symlink("l1", base.join("l2")).unwrap();
    symlink(base.join("a"), base.join("abs")).unwrap();
    let canonical = fs::canonicalize(&base).unwrap();
    for shell in shells() {
        let run = sb.run(
            &shell,
            &path,
            &format!(
                "readlink_f {b}/l2\nreadlink_f {b}/abs\nreadlink_f {b}/abs/b/../b/target",
                b = base.display()
            ),
        );
        assert_eq!(
            run.stdout,
            format!(
                "{c}/a/b/target\n{c}/a\n{c}/a/b/target",
                c = canonical.display()
            ),
            "{shell:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn sha256_exits_2_when_no_tool_can_compute_it() {
    let sb = Sandbox::new();
    let bin = sb.bin_with("nosha", BASIC_TOOLS);
    fs::write(sb.path().join("abc"), "abc").unwrap();
    for shell in shells() {
        let run = sb.run(
            &shell,
            &bin.display().to_string(),
            "sha256 abc\necho reached",
        );
        assert_eq!(run.code, 2, "{shell:?}: {}", run.stderr);
        assert!(run.stderr.contains("sha256sum"), "{}", run.stderr);
    }
    // shasum alone is enough.
    if which("shasum").is_some() {
        let bin = sb.bin_with("shasum-only", &[BASIC_TOOLS, &["shasum", "perl"]].concat());
        for shell in shells() {
            let run = sb.run(&shell, &bin.display().to_string(), "sha256 abc");
            assert_eq!(
                run.stdout, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                "{shell:?}: {}",
                run.stderr
            );
        }
    }
}

#[test]
fn sourcing_sets_no_shell_options_and_the_shim_passes_sh_n() {
    let sb = Sandbox::new();
    for shell in shells() {
        let check = Command::new(&shell)
            .arg("-n")
            .arg(sb.path().join("compat.sh"))
            .output_within(DEADLINE)
            .unwrap();
        assert!(check.status.success(), "{shell:?} -n");
        let run = Command::new(&shell)
            .arg("-c")
            .arg("before=$-; . ./compat.sh; [ \"$before\" = \"$-\" ] && echo same")
            .current_dir(sb.path())
            .output_within(DEADLINE)
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&run.stdout).trim(),
            "same",
            "{shell:?}"
        );
    }
}
