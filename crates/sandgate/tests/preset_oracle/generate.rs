//! The generated commands: each preset's programs × their real options ×
//! the shell spellings of issue 29 (brace expressions, abbreviated long
//! options, optional-value options, `VAR=… cmd` prefixes, `bash -lc '…'`,
//! `cd DIR && …`, `$HOME`/`~`/`..` spellings, `<<<` and pipes).

use std::collections::BTreeSet;

use super::options::{git_options, help_text, listed, parse_find_help, parse_help};
use super::options::{shortest_prefix, Opt, Value};

/// One generated command.
#[derive(Debug, Clone)]
pub struct Case {
    /// The command line.
    pub command: String,
    /// The program it is about (`sort`, `git log`, `cargo build`).
    pub program: String,
    /// The spellings it uses (`brace`, `abbrev`, `optval`, `env`, `cd`,
    /// `bash`, `spelling`, `pipe`, `option`).
    pub tags: Vec<&'static str>,
}

/// How a program takes its operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Reads the files it names.
    Reader,
    /// Walks the directories it names.
    Walker,
    /// Names no files (or only through options).
    Other,
}

/// One program of a preset.
struct Program {
    /// How its commands start (`sort`, `git log`, `cargo build`).
    prefix: String,
    /// The operands its commands end with.
    operand: String,
    kind: Kind,
    options: Vec<Opt>,
    /// Environment assignments that matter to it.
    envs: Vec<String>,
    /// Whether it is one of the heavy ecosystem programs (whose runs are
    /// sampled).
    heavy: bool,
}

/// Values given to options that take one: a new file here, one outside
/// the project, a floor file, standard input or output, a program.
const VALUES: &[&str] = &["out.txt", "~/.ssh/id_rsa", "touch", "-"];

/// Floor and credential-store files, in the spellings the shell allows.
pub const FILE_SPELLINGS: &[&str] = &[
    "~/.ssh/id_rsa",
    "$HOME/.ssh/id_rsa",
    "\"$HOME\"/.aws/credentials",
    "${HOME}/.gnupg/pubring.kbx",
    "../../.ssh/id_rsa",
    "~/../home/.ssh/config",
    "{~/.ssh/id_rsa,}",
    "~/.ss{h..h}/id_rsa",
    "{notes.txt,~/.aws/credentials}",
    "{x,$HOME/.ssh/id_rsa}",
    "{~,~}/.ssh/config",
    "~/.{ssh,aws}/config",
    "{../..,x}/.ssh/id_rsa",
    "~/.netrc",
    "../../.git-credentials",
    "$HOME/.config/gh/hosts.yml",
    "~/.docker/config.json",
    "~/.kube/token",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials.toml",
    "~/.vault-token",
    "{notes.txt,~/.netrc}",
];

/// Directories that hold the floor or a credential store, in the
/// spellings the shell allows.
pub const DIR_SPELLINGS: &[&str] = &[
    "~",
    "$HOME",
    "\"$HOME\"",
    "../..",
    "{~,src}",
    "{.,~}",
    "~/.kube",
    "~/.config",
    "~/.password-store",
    "{~,~}/.ssh",
    "~/.ss{h,}",
];

/// Assignments every program is tried with.
const COMMON_ENVS: &[&str] = &["TMPDIR=.", "PAGER=touch", "BASH_ENV=~/.ssh/config"];

const GIT_ENVS: &[&str] = &[
    "GIT_DIR=../..",
    "GIT_WORK_TREE=~",
    "GIT_WORK_TREE=../..",
    "GIT_INDEX_FILE=idx",
    "GIT_TRACE=out.txt",
    "GIT_TRACE2=out.txt",
    "GIT_TRACE2_EVENT=out.txt",
    "GIT_TRACE2_PERF=out.txt",
    "GIT_TRACE_PACKET=out.txt",
    "GIT_TRACE_SETUP=out.txt",
    "GIT_EXTERNAL_DIFF=touch",
    "GIT_PAGER=touch",
    "GIT_SSH_COMMAND=touch",
    "GIT_CONFIG_GLOBAL=~/.ssh/config",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=touch",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=log.showSignature GIT_CONFIG_VALUE_0=true",
    "GIT_NAMESPACE=x",
    "GIT_OBJECT_DIRECTORY=~/.ssh",
    "GIT_EXEC_PATH=.",
    "GIT_EDITOR=touch",
];

/// git's options before the subcommand.
const GIT_GLOBAL: &[&str] = &[
    "-c log.showSignature=true",
    "-c core.fsmonitor=touch",
    "-c core.pager=touch",
    "-c diff.external=touch",
    "-c gpg.program=touch",
    "-C ../..",
    "-C ~",
    "--git-dir=.evil-git",
    "--git-dir=../..",
    "--work-tree=../..",
    "--work-tree=\"$HOME\"",
    "--work-tree=~",
    "--namespace x",
    "--super-prefix x/",
    "--exec-path=.",
    "-p",
    "--paginate",
    "--no-pager",
    "--config-env=core.pager=HOME",
];

/// git log/show options a completion list leaves out.
const GIT_LOG_EXTRA: &[&str] = &[
    "--show-signature",
    "--format=%G?",
    "--pretty=format:%GS",
    "--format=%GK",
    "--output=",
    "--ext-diff",
    "--textconv",
    "-p",
    "--stat",
    "--all",
    "--follow",
    "--graph",
    "--walk-reflogs",
    "--color-words",
    "--word-diff[=]",
    "--notes[=]",
    "--decorate[=]",
];

fn program(prefix: &str, operand: &str, kind: Kind, options: Vec<Opt>) -> Program {
    Program {
        prefix: prefix.to_string(),
        operand: operand.to_string(),
        kind,
        options,
        envs: COMMON_ENVS.iter().map(|s| s.to_string()).collect(),
        heavy: false,
    }
}

fn help(argv: &[&str]) -> Vec<Opt> {
    help_text(argv).map(|t| parse_help(&t)).unwrap_or_default()
}

/// The programs of the `readonly` preset (and so of every preset).
fn readonly_programs() -> Vec<Program> {
    let mut out = Vec::new();
    for (name, operand) in [
        ("cat", "notes.txt"),
        ("head", "notes.txt"),
        ("tail", "notes.txt"),
        ("wc", "notes.txt"),
        ("nl", "notes.txt"),
        ("sort", "notes.txt"),
        ("uniq", "notes.txt"),
        ("cut", "-c1 notes.txt"),
        ("stat", "notes.txt"),
        ("realpath", "notes.txt"),
        ("readlink", "-f notes.txt"),
        ("diff", "a.txt b.txt"),
        ("cmp", "a.txt b.txt"),
        ("comm", "a.txt b.txt"),
        ("grep", "KEY notes.txt"),
        ("rg", "KEY notes.txt"),
        ("jq", ". data.json"),
    ] {
        out.push(program(
            name,
            operand,
            Kind::Reader,
            help(&[name, "--help"]),
        ));
    }
    // egrep and fgrep are grep: their spellings of paths only.
    for name in ["egrep", "fgrep"] {
        out.push(program(name, "KEY notes.txt", Kind::Reader, Vec::new()));
    }
    for (name, operand) in [("ls", "."), ("du", "."), ("df", ".")] {
        out.push(program(
            name,
            operand,
            Kind::Walker,
            help(&[name, "--help"]),
        ));
    }
    let mut find = program(
        "find",
        "",
        Kind::Walker,
        help_text(&["find", "--help"])
            .map(|t| parse_find_help(&t))
            .unwrap_or_default(),
    );
    find.prefix = "find".into();
    out.push(find);
    for (name, operand) in [
        ("tr", "a b"),
        ("basename", "src/x"),
        ("dirname", "src/x"),
        ("which", "cat"),
        ("echo", "hi"),
        ("printf", "'%s\\n' hi"),
        ("pwd", ""),
        ("true", ""),
        ("false", ""),
    ] {
        let options = if matches!(name, "echo" | "printf" | "pwd" | "true" | "false") {
            Vec::new()
        } else {
            help(&[name, "--help"])
        };
        out.push(program(name, operand, Kind::Other, options));
    }
    for (sub, operand) in [
        ("status", ""),
        ("log", ""),
        ("diff", ""),
        ("show", ""),
        ("blame", "README.md"),
        ("shortlog", "HEAD"),
        ("describe", "--tags"),
        ("rev-parse", "HEAD"),
        ("ls-files", ""),
        ("ls-tree", "HEAD"),
        ("cat-file", "-p HEAD"),
    ] {
        let mut options = git_options(sub);
        // git's diff options are tried with `git diff`; log and show
        // take them too, and add their own.
        if sub == "diff" {
            options.extend(listed(&[
                "--output=",
                "--ext-diff",
                "--textconv",
                "--no-index",
            ]));
        }
        if matches!(sub, "log" | "show") {
            options.extend(listed(GIT_LOG_EXTRA));
        }
        dedup(&mut options);
        let mut p = program(&format!("git {sub}"), operand, Kind::Other, options);
        p.envs.extend(GIT_ENVS.iter().map(|s| s.to_string()));
        out.push(p);
    }
    for branch in [
        "git branch",
        "git branch -a",
        "git remote -v",
        "git stash list",
        "git tag -l",
        "git reflog",
    ] {
        let mut p = program(branch, "", Kind::Other, Vec::new());
        p.envs.extend(GIT_ENVS.iter().map(|s| s.to_string()));
        out.push(p);
    }
    out
}

fn dedup(options: &mut Vec<Opt>) {
    let mut seen = BTreeSet::new();
    options.retain(|o| seen.insert(o.name.clone()));
}

fn heavy(prefix: &str, operand: &str, options: Vec<Opt>, envs: &[&str]) -> Program {
    let mut p = program(prefix, operand, Kind::Other, options);
    p.envs = envs.iter().map(|s| s.to_string()).collect();
    p.heavy = true;
    p
}

const RUST_ENVS: &[&str] = &[
    "RUSTC_WRAPPER=touch",
    "RUSTC_WORKSPACE_WRAPPER=touch",
    "RUSTC=touch",
    "RUSTDOC=touch",
    "RUSTFLAGS=-Clinker=touch",
    "CARGO_BUILD_RUSTC_WRAPPER=touch",
    "CARGO_TARGET_DIR=../out",
    "CARGO_BUILD_TARGET_DIR=~/out",
    "CARGO_HOME=../..",
    "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=touch",
    "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=touch",
    "BROWSER=touch",
    "TMPDIR=.",
];

const NODE_ENVS: &[&str] = &[
    "npm_config_script_shell=touch",
    "npm_config_cache=../cache",
    "npm_config_logs_dir=../logs",
    "npm_config_userconfig=~/.ssh/config",
    "npm_config_prefix=../..",
    "NODE_OPTIONS=--require=./x.js",
    "NODE_OPTIONS=--cpu-prof",
    "NODE_V8_COVERAGE=../cov",
    "TMPDIR=.",
];

const PYTHON_ENVS: &[&str] = &[
    "PIP_LOG_FILE=../pip.log",
    "PIP_LOG=../pip.log",
    "PYTHONSTARTUP=~/.ssh/config",
    "PYTEST_ADDOPTS=--basetemp=docs",
    "PYTEST_ADDOPTS=--junitxml=../out.xml",
    "MYPY_CACHE_DIR=../cache",
    "RUFF_CACHE_DIR=../cache",
    "PYTHONPYCACHEPREFIX=../pyc",
    "TMPDIR=.",
];

/// Commands of the ecosystem presets that no option list yields.
pub fn extra_commands(preset: &str) -> &'static [&'static str] {
    match preset {
        "rust" => &[
            "cargo build --config 'build.rustflags=[\"-Clinker=touch\"]'",
            "cargo test --config 'target.x86_64-unknown-linux-gnu.runner=\"touch\"'",
            "cargo clippy --fix --allow-no-vcs",
            "cargo test -- --logfile out.txt",
            "cargo doc --open",
            "cargo build --target-dir ../out",
            "cargo check --target-dir=~/out",
            "cargo --config 'build.rustc-wrapper=\"touch\"' build",
            "rustc --version",
            "rustup show",
            "cargo -V",
        ],
        "node" => &[
            "npm test --script-shell=touch",
            "npm test --logs-dir=../logs",
            "npm test --cache=../cache",
            "npm run build --script-shell touch",
            "node --test --test-reporter-destination=../out.txt",
            "node --test --prof",
            "node --test --trace-events-enabled",
            "node --test --cpu-prof",
            "node --test --heap-prof",
            "node --test --redirect-warnings=../w.txt",
            "npm --version",
            "node --version",
        ],
        "python" => &[
            "pip list --log=../pip.log",
            "pip3 list --log ../pip.log",
            "pytest --basetemp=docs",
            "pytest --basetemp=../..",
            "pytest --junitxml=../out.xml",
            "pytest --debug",
            "pytest --debug=../debug.log",
            "ruff check --add-noqa",
            "pylint --init-hook='open(\"x\", \"w\")' app",
            "mypy --python-executable touch app",
            "mypy --junit-xml ../out.xml app",
            "mypy --cache-dir=../cache app",
            "flake8 --output-file=../out.txt",
            "python3 -m pytest -q",
            "python3 -m unittest",
            "python3 -m compileall -q app",
            "python3 --version",
            "pip list",
        ],
        _ => &[],
    }
}

fn ecosystem_programs(preset: &str) -> Vec<Program> {
    let mut out = Vec::new();
    match preset {
        "rust" => {
            for sub in [
                "build", "check", "test", "clippy", "doc", "bench", "tree", "metadata",
            ] {
                out.push(heavy(
                    &format!("cargo {sub}"),
                    "",
                    help(&["cargo", sub, "--help"]),
                    RUST_ENVS,
                ));
            }
            out.push(heavy(
                "cargo fmt --check",
                "",
                help(&["cargo", "fmt", "--help"]),
                RUST_ENVS,
            ));
        }
        "node" => {
            let npm = listed(&[
                "--script-shell=",
                "--logs-dir=",
                "--cache=",
                "--prefix=",
                "--userconfig=",
                "--globalconfig=",
                "--node-options=",
                "--workspace=",
                "--loglevel=",
                "--foreground-scripts",
                "--ignore-scripts",
                "--offline",
                "--json",
                "--long",
                "--all",
                "--parseable",
            ]);
            for prefix in ["npm test", "npm run build", "npm run lint", "npm ls"] {
                out.push(heavy(prefix, "", npm.clone(), NODE_ENVS));
            }
            out.push(heavy(
                "node --test",
                "",
                help(&["node", "--help"]),
                NODE_ENVS,
            ));
            for prefix in ["yarn test", "pnpm test"] {
                out.push(heavy(prefix, "", Vec::new(), NODE_ENVS));
            }
        }
        "python" => {
            for (prefix, operand, argv) in [
                ("pytest", "-q", vec!["pytest", "--help"]),
                ("mypy", "app", vec!["mypy", "--help"]),
                ("ruff check", ".", vec!["ruff", "check", "--help"]),
                ("black --check", ".", vec!["black", "--help"]),
                ("flake8", "app", vec!["flake8", "--help"]),
                ("pylint", "app", vec!["pylint", "--help"]),
                ("pip list", "", vec!["pip", "list", "--help"]),
            ] {
                out.push(heavy(prefix, operand, help(&argv), PYTHON_ENVS));
            }
            // These make environments and are slow: the bare command and
            // the prefixes that move what they write.
            for prefix in ["tox", "nox", "pyright", "uv run pytest"] {
                out.push(heavy(
                    prefix,
                    "",
                    Vec::new(),
                    &["TMPDIR=.", "PYTHONPYCACHEPREFIX=../pyc"],
                ));
            }
        }
        _ => {}
    }
    out
}

/// The programs (their first word) a preset's commands need on this
/// machine.
pub fn needed_programs(preset: &str) -> Vec<&'static str> {
    let mut out = vec![
        "cat", "head", "tail", "wc", "nl", "sort", "uniq", "cut", "stat", "realpath", "readlink",
        "diff", "cmp", "comm", "grep", "rg", "jq", "ls", "du", "df", "find", "tr", "git",
    ];
    out.extend(match preset {
        "rust" => &["cargo", "rustc", "rustup"][..],
        "node" => &["npm", "node", "yarn", "pnpm"][..],
        "python" => &[
            "python3", "pip", "pytest", "mypy", "ruff", "black", "flake8", "pylint", "tox", "nox",
            "pyright", "uv",
        ][..],
        _ => &[][..],
    });
    out
}

fn join(parts: &[&str]) -> String {
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every command of `preset`, without duplicates, in a stable order.
pub fn cases(preset: &str) -> Vec<Case> {
    let mut programs = readonly_programs();
    if preset != "readonly" {
        // The other presets add their ecosystem to readonly's programs,
        // which readonly's run already covers.
        programs = ecosystem_programs(preset);
    }
    let mut out: Vec<Case> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut push = |out: &mut Vec<Case>, command: String, program: &str, tags: &[&'static str]| {
        if seen.insert(command.clone()) {
            out.push(Case {
                command,
                program: program.to_string(),
                tags: tags.to_vec(),
            });
        }
    };
    for extra in extra_commands(preset) {
        let program = extra.split(' ').take(2).collect::<Vec<_>>().join(" ");
        push(&mut out, extra.to_string(), &program, &["extra"]);
    }
    for p in &programs {
        let pre = p.prefix.as_str();
        let opd = p.operand.as_str();
        let name = pre;
        push(&mut out, join(&[pre, opd]), name, &["bare"]);
        // Options, each with what it may take.
        // A flag of a program that walks or compares directories is tried
        // on the home directory, which holds the floor.
        let flag_operand = match pre {
            "ls" | "du" | "find" => "~",
            "grep" | "rg" => "KEY ~",
            "diff" => "~ .",
            _ => opd,
        };
        // rg, jq and find take no abbreviations.
        let abbreviates = !matches!(pre, "rg" | "jq" | "find");
        for o in &p.options {
            let abbrev = shortest_prefix(&o.name, &p.options).filter(|_| abbreviates);
            let long = o.name.starts_with("--");
            match o.value {
                Value::None => {
                    push(
                        &mut out,
                        join(&[pre, &o.name, flag_operand]),
                        name,
                        &["option"],
                    );
                    if let Some(a) = &abbrev {
                        push(&mut out, join(&[pre, a, flag_operand]), name, &["abbrev"]);
                    }
                }
                Value::Required => {
                    let values: &[&str] = if p.heavy { &VALUES[..3] } else { VALUES };
                    for v in values {
                        if long {
                            push(
                                &mut out,
                                join(&[pre, &format!("{}={v}", o.name), opd]),
                                name,
                                &["option", "value"],
                            );
                        }
                        if !long || matches!(*v, "out.txt" | "~/.ssh/id_rsa") {
                            push(
                                &mut out,
                                join(&[pre, &o.name, v, opd]),
                                name,
                                &["option", "value"],
                            );
                        }
                    }
                    if let Some(a) = &abbrev {
                        push(
                            &mut out,
                            join(&[pre, &format!("{a}=out.txt"), opd]),
                            name,
                            &["abbrev"],
                        );
                        push(
                            &mut out,
                            join(&[pre, a, "~/.ssh/id_rsa", opd]),
                            name,
                            &["abbrev"],
                        );
                    }
                }
                Value::Optional => {
                    push(&mut out, join(&[pre, &o.name, opd]), name, &["option"]);
                    for v in ["~/.ssh/id_rsa", "../../pwned.txt", "~/.netrc"] {
                        push(&mut out, join(&[pre, &o.name, v]), name, &["optval"]);
                        if p.kind != Kind::Other {
                            push(&mut out, join(&[pre, &o.name, v, opd]), name, &["optval"]);
                        }
                    }
                    if let Some(a) = &abbrev {
                        push(
                            &mut out,
                            join(&[pre, a, "~/.ssh/id_rsa"]),
                            name,
                            &["abbrev", "optval"],
                        );
                    }
                }
            }
        }
        // The floor and the credential stores, spelled every way.
        let spellings: &[&str] = match p.kind {
            Kind::Reader => FILE_SPELLINGS,
            Kind::Walker => DIR_SPELLINGS,
            Kind::Other => &[],
        };
        for s in spellings {
            let tag = if s.contains('{') { "brace" } else { "spelling" };
            let command = if pre == "find" || opd.is_empty() {
                join(&[pre, s])
            } else if matches!(pre, "grep" | "egrep" | "fgrep" | "rg") {
                join(&[pre, "-r KEY", s])
            } else if pre == "jq" {
                join(&[pre, ".", s])
            } else {
                join(&[pre, s])
            };
            push(&mut out, command.clone(), name, &[tag]);
            if tag == "brace" || s.starts_with('$') {
                push(
                    &mut out,
                    format!("bash -c '{command}'"),
                    name,
                    &["bash", tag],
                );
            }
            if tag == "brace" {
                push(
                    &mut out,
                    format!("bash -lc '{command}'"),
                    name,
                    &["bash", tag],
                );
            }
            if matches!(pre, "diff" | "cmp" | "comm") {
                push(&mut out, join(&[pre, "notes.txt", s]), name, &[tag]);
            }
            if pre == "uniq" {
                push(&mut out, join(&[pre, "notes.txt", s]), name, &[tag]);
            }
        }
        if p.kind != Kind::Other {
            let tail = if p.kind == Kind::Reader {
                ".ssh/id_rsa"
            } else {
                ""
            };
            for cd in [
                "cd",
                "cd ~",
                "cd ../..",
                "cd \"$HOME\"",
                "cd ~/.ssh",
                "cd .. && cd ..",
            ] {
                let target = if cd == "cd ~/.ssh" && p.kind == Kind::Reader {
                    "id_rsa"
                } else {
                    tail
                };
                let inner = if matches!(pre, "grep" | "egrep" | "fgrep" | "rg") {
                    join(&[pre, "-r KEY", target])
                } else {
                    join(&[pre, target])
                };
                push(&mut out, format!("{cd} && {inner}"), name, &["cd"]);
            }
        }
        // Standard input: a here-string and a pipe.
        if p.kind == Kind::Reader || p.kind == Kind::Walker {
            push(
                &mut out,
                format!("{} <<< 'KEY x'", join(&[pre, "-"])),
                name,
                &["pipe"],
            );
            push(
                &mut out,
                format!("cat notes.txt | {}", join(&[pre, "-"])),
                name,
                &["pipe"],
            );
            push(
                &mut out,
                format!("printf '%s\\0' ~ | {} --files0-from=-", pre),
                name,
                &["pipe"],
            );
        }
        // Environment prefixes.
        for env in &p.envs {
            push(
                &mut out,
                format!("{env} {}", join(&[pre, opd])),
                name,
                &["env"],
            );
        }
        if matches!(pre, "git status" | "git log" | "git diff" | "git show") {
            let sub = &pre[4..];
            for g in GIT_GLOBAL {
                let command = join(&["git", g, sub, opd]);
                push(&mut out, command.clone(), name, &["option"]);
                if !command.contains('\'') {
                    push(
                        &mut out,
                        format!("bash -c '{command}'"),
                        name,
                        &["bash", "option"],
                    );
                }
            }
        }
    }
    // Specific forms of the issue.
    if preset == "readonly" {
        for c in [
            "printf '%s\\0' ~ | find -files0-from - -name id_rsa",
            "RIPGREP_CONFIG_PATH=/dev/stdin rg KEY notes.txt <<< '--pre=touch'",
            "rg --hostname-bin touch KEY notes.txt",
            "rg --search-zip KEY notes.txt",
            "rg --pre touch KEY notes.txt",
            "diff --paginate a.txt b.txt",
            "diff -l a.txt b.txt",
            "bash --rcfile ~/.ssh/config -ic 'cat notes.txt'",
            "bash --init-file notes.txt -c 'cat notes.txt'",
            "bash --login -c 'cat notes.txt'",
            "nohup ls",
            "TMPDIR=. sort -S 1K notes.txt",
            "TMPDIR=~ sort -S 1K notes.txt",
            "find -fls - -name x",
            "git diff --output - HEAD",
            "jq -n 'import \"token\" as $t {search: \"~/.aws/sso/cache\"}; $t'",
            "jq -L ~/.aws/sso/cache -n 'import \"token\" as $t; $t'",
            "uniq {~,~}/.ssh/config",
            "sort --files0=- <<< notes.txt",
            "wc --files0-f=- <<< notes.txt",
            "cd && du",
            "du -s \"$HOME\"",
            "git --work-tree=\"$HOME\" status -uall",
            "git log --format=%G?",
            "git show --show-signature",
            "git log --show-signature",
            "time -o out.txt ls",
        ] {
            push(
                &mut out,
                c.to_string(),
                c.split(' ').next().unwrap(),
                &["issue"],
            );
        }
    }
    out
}
