//! `permissions.network` as the real binary reads, writes, explains and
//! lints it: load errors with hints, tighten-only merging, `policy allow|deny|
//! remove domain`, `policy explain --domain`, `policy lint`, `policy show`,
//! and the `init` presets.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/wait.rs"]
mod wait;

use std::path::PathBuf;
use std::process::Command;

use wait::{Bounded, DEADLINE};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    central: PathBuf,
    local: PathBuf,
    managed: PathBuf,
}

const CENTRAL: &str = "\
# my central policy
permissions:
  commands:
    allow:
      - '^git( |$)'   # git is fine
  network:
    # hosts I trust
    allow:
      - \"github.com\"        # code
      - \"*.githubusercontent.com\"
      - \"127.0.0.1:8080\"
    deny: [\"*.ngrok.io\"]
";

fn env_with(central: &str) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let home = root.join("home");
    let work = root.join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(work.join(".sandgate")).unwrap();
    let central_path = home.join(".sandgate/permissions.yaml");
    std::fs::create_dir_all(central_path.parent().unwrap()).unwrap();
    std::fs::write(&central_path, central).unwrap();
    Env {
        local: work.join(".sandgate/permissions.yaml"),
        managed: home.join("managed.yaml"),
        _tmp: tmp,
        home,
        work,
        central: central_path,
    }
}

fn env() -> Env {
    env_with(CENTRAL)
}

impl Env {
    fn sandgate(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sandgate"));
        cmd.current_dir(&self.work)
            .env("HOME", &self.home)
            .env("SANDGATE_MANAGED_CONFIG", &self.managed)
            .env("SANDGATE_AUDIT", "off")
            .env_remove("SANDGATE_CONFIG")
            .env_remove("SANDGATE_LOCAL_CONFIG");
        cmd
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self
            .sandgate()
            .args(args)
            .stdin(std::process::Stdio::null())
            .output_within(DEADLINE)
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `policy explain --domain` as JSON: the verdict of each port.
    fn verdicts(&self, host: &str) -> Vec<String> {
        let (code, out, err) = self.run(&["--json", "policy", "explain", "--domain", host]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["connections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                c["decision"]["verdict"]
                    .as_str()
                    .unwrap_or("none")
                    .to_string()
            })
            .collect()
    }
}

#[test]
fn explain_decides_by_host_port_deny_first_and_private_addresses_only_when_named() {
    let env = env();
    assert_eq!(env.verdicts("github.com"), ["allow", "allow"]);
    assert_eq!(env.verdicts("GitHub.COM.:443"), ["allow"]);
    assert_eq!(env.verdicts("github.com:22"), ["ask"]);
    assert_eq!(env.verdicts("raw.githubusercontent.com:443"), ["allow"]);
    assert_eq!(env.verdicts("githubusercontent.com:443"), ["ask"]);
    assert_eq!(env.verdicts("x.ngrok.io:443"), ["deny"]);
    assert_eq!(env.verdicts("127.0.0.1:8080"), ["allow"]);
    assert_eq!(env.verdicts("127.0.0.1:8081"), ["deny"]);
    assert_eq!(env.verdicts("[::1]:8080"), ["deny"]);
    assert_eq!(env.verdicts("169.254.169.254:80"), ["deny"]);
    let (code, out, _) = env.run(&["policy", "explain", "--domain", "example.org:8443"]);
    assert_eq!(code, 0);
    assert!(out.contains("decision: ask"), "{out}");
    assert!(
        out.contains("`sandgate policy allow domain example.org:8443`"),
        "{out}"
    );
    let (_, out, _) = env.run(&["policy", "explain", "--domain", "x.ngrok.io:443"]);
    assert!(out.contains("→ deny"), "{out}");
    assert!(out.contains("*.ngrok.io"), "{out}");
    let (code, _, err) = env.run(&["policy", "explain", "--domain", "a b"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a host"), "{err}");
}

#[test]
fn without_a_network_block_nothing_is_filtered_by_host() {
    let env = env_with("permissions:\n  commands:\n    allow: ['^ls$']\n");
    let (code, out, _) = env.run(&["policy", "explain", "--domain", "example.org"]);
    assert_eq!(code, 0);
    assert!(out.contains("not filtered by host"), "{out}");
    let (_, out, _) = env.run(&["policy", "show"]);
    assert!(out.contains("network: not filtered by host"), "{out}");
}

#[test]
fn broad_and_malformed_entries_are_load_errors_with_line_and_hint() {
    for (entry, words, hint) in [
        ("*", "every host", "list the hosts"),
        ("*.com", "public suffix", "*.example.com"),
        ("https://github.com/org", "scheme", "`github.com`"),
        ("github.com/org", "path", "`github.com`"),
        ("::1", "more than one", "[::1]"),
        ("github.com:0", "outside 1 to 65535", "a port is a number"),
    ] {
        let text = format!("permissions:\n  network:\n    allow:\n      - \"{entry}\"\n");
        let env = env_with(&text);
        let (code, _, err) = env.run(&["policy", "show"]);
        assert_eq!(code, 2, "{entry}: {err}");
        assert!(err.contains(words), "{entry}: {err}");
        assert!(err.contains(hint), "{entry}: {err}");
        assert!(err.contains(":4:"), "{entry}: no line in {err}");
    }
    // A structural error elsewhere in the file: the bad entry is named too.
    let env = env_with("permissions:\n  network:\n    allow: [\"*\"]\n  sandbox: 3\n");
    let (code, _, err) = env.run(&["policy", "show"]);
    assert_eq!(code, 2);
    assert!(err.contains("every host"), "{err}");
    assert!(err.contains("sandbox"), "{err}");
    // A list that is no list.
    let env = env_with("permissions:\n  network:\n    allow: github.com\n");
    let (code, _, err) = env.run(&["policy", "show"]);
    assert_eq!(code, 2);
    assert!(err.contains("must be a list of hosts"), "{err}");
}

#[test]
fn local_and_managed_files_only_tighten() {
    let env = env();
    std::fs::write(
        &env.local,
        "permissions:\n  network:\n    allow: [\"evil.example\"]\n    deny: [\"github.com\"]\n",
    )
    .unwrap();
    std::fs::write(
        &env.managed,
        "permissions:\n  network:\n    deny: [\"*.githubusercontent.com\"]\n",
    )
    .unwrap();
    assert_eq!(env.verdicts("github.com"), ["deny", "deny"]);
    assert_eq!(env.verdicts("evil.example:443"), ["ask"]);
    assert_eq!(env.verdicts("raw.githubusercontent.com:443"), ["deny"]);
    let (code, out, _) = env.run(&["policy", "show"]);
    assert_eq!(code, 0);
    assert!(out.contains("network deny (network.deny)"), "{out}");
    let ignored = out.split("ignored:").nth(1).unwrap_or("");
    assert!(ignored.contains("evil.example"), "{out}");
    // A tighten-only file alone switches the filter on: nothing is allowed.
    let env = env_with("permissions:\n  commands:\n    allow: ['^ls$']\n");
    std::fs::write(
        &env.local,
        "permissions:\n  network:\n    deny: [\"*.ngrok.io\"]\n",
    )
    .unwrap();
    assert_eq!(env.verdicts("github.com:443"), ["ask"]);
    let (code, _, err) = env.run(&["policy", "lint"]);
    assert!(code == 0 || code == 1, "{err}");
    std::fs::write(
        &env.local,
        "permissions:\n  network:\n    allow: [\"github.com\"]\n",
    )
    .unwrap();
    let (code, out, _) = env.run(&["policy", "lint"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("ignored"), "{out}");
}

#[test]
fn allow_deny_and_remove_domain_edit_the_central_file_keeping_comments() {
    let env = env();
    let (code, out, err) = env.run(&["policy", "allow", "domain", "PyPI.org."]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("added `pypi.org` to permissions.network.allow"),
        "{out}"
    );
    let text = std::fs::read_to_string(&env.central).unwrap();
    assert!(text.contains("# hosts I trust"), "{text}");
    assert!(text.contains("\"github.com\"        # code"), "{text}");
    assert!(text.contains("pypi.org"), "{text}");
    // The same host however spelt is not written twice.
    let (code, out, _) = env.run(&["policy", "allow", "domain", "pypi.ORG"]);
    assert_eq!(code, 0);
    assert!(out.contains("already in"), "{out}");
    assert_eq!(env.verdicts("pypi.org:443"), ["allow"]);
    // With a port; an IPv6 literal.
    env.run(&["policy", "allow", "domain", "github.com:22"]);
    assert_eq!(env.verdicts("github.com:22"), ["allow"]);
    let (code, _, err) = env.run(&["policy", "allow", "domain", "[::1]:9000"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(env.verdicts("[::1]:9000"), ["allow"]);
    // Bad entries are refused before anything is written.
    let before = std::fs::read_to_string(&env.central).unwrap();
    for bad in ["*", "*.org", "https://pypi.org", "pypi.org/simple"] {
        let (code, _, err) = env.run(&["policy", "allow", "domain", bad]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("hint:"), "{bad}: {err}");
    }
    assert_eq!(std::fs::read_to_string(&env.central).unwrap(), before);
    // An allow entry a deny entry already refuses does nothing: refused.
    let (code, _, err) = env.run(&["policy", "allow", "domain", "a.ngrok.io"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("*.ngrok.io"), "{err}");
    assert_eq!(std::fs::read_to_string(&env.central).unwrap(), before);
    // Deny to the local file; `--read` makes no sense for a domain.
    let (code, _, err) = env.run(&["policy", "deny", "domain", "gist.github.com", "--local"]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&env.local)
        .unwrap()
        .contains("gist.github.com"));
    let (code, _, err) = env.run(&["policy", "allow", "domain", "x.org", "--read"]);
    assert_eq!(code, 2, "{err}");
    // Remove, found however it is spelt.
    let (code, out, err) = env.run(&["policy", "remove", "domain", "PYPI.org"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("removed `pypi.org`"), "{out}");
    assert_eq!(env.verdicts("pypi.org:443"), ["ask"]);
    let (code, _, err) = env.run(&["policy", "remove", "domain", "pypi.org"]);
    assert_eq!(code, 1, "{err}");
    let text = std::fs::read_to_string(&env.central).unwrap();
    assert!(text.contains("# hosts I trust"), "{text}");
}

#[test]
fn allow_domain_creates_the_network_block_in_a_new_file() {
    let env = env();
    std::fs::remove_file(&env.central).unwrap();
    let (code, _, err) = env.run(&["policy", "allow", "domain", "registry.npmjs.org"]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&env.central).unwrap();
    let value: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(
        value["permissions"]["network"]["allow"],
        serde_json::json!(["registry.npmjs.org"])
    );
}

#[test]
fn lint_names_duplicate_shadowed_and_covered_entries() {
    let env = env_with(
        "permissions:\n  network:\n    allow:\n      - \"github.com\"\n      - \"GitHub.com.\"\n      - \"a.ngrok.io\"\n      - \"*.github.com\"\n      - \"api.github.com:443\"\n    deny: [\"*.ngrok.io\"]\n",
    );
    let (code, out, _) = env.run(&["policy", "lint"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(":5: warning: duplicate: `GitHub.com.`"),
        "{out}"
    );
    assert!(out.contains(":6: warning: shadowed: `a.ngrok.io`"), "{out}");
    assert!(
        out.contains(":8: warning: covered: `api.github.com:443`"),
        "{out}"
    );
    assert!(!out.contains(":4: warning"), "{out}");
    assert!(!out.contains(":7: warning"), "{out}");
}

#[test]
fn init_presets_list_their_registries_and_the_model_endpoints_commented() {
    for (preset, hosts) in [
        ("readonly", &["github.com"][..]),
        ("node", &["registry.npmjs.org", "github.com"][..]),
        ("rust", &["index.crates.io", "static.crates.io"][..]),
        ("python", &["pypi.org", "files.pythonhosted.org"][..]),
    ] {
        let env = env();
        let (code, text, err) = env.run(&["init", "--print", "--preset", preset]);
        assert_eq!(code, 0, "{preset}: {err}");
        let value: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        let allow: Vec<&str> = value["permissions"]["network"]["allow"]
            .as_array()
            .unwrap_or_else(|| panic!("{preset}: no network.allow"))
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for host in hosts {
            assert!(allow.contains(host), "{preset}: {host} not in {allow:?}");
        }
        for endpoint in [
            "api.anthropic.com",
            "api.openai.com",
            "generativelanguage.googleapis.com",
        ] {
            assert!(!allow.contains(&endpoint), "{preset}: {endpoint} listed");
            assert!(
                text.contains(&format!("# - \"{endpoint}\"")),
                "{preset}: {endpoint} not there, commented"
            );
        }
        // Uncommented, the endpoints load.
        let open = text.replace("# - \"", "- \"");
        std::fs::write(&env.central, open).unwrap();
        assert_eq!(env.verdicts("api.anthropic.com:443"), ["allow"]);
        assert_eq!(env.verdicts("api.openai.com:443"), ["allow"]);
    }
    let env = env();
    let (_, rust, _) = env.run(&["init", "--print", "--preset", "rust"]);
    assert!(!rust.contains("registry.npmjs.org"));
}
