//! What the gate knows about single programs' arguments, kept as data beside
//! [`super::WRAPPERS`]: which programs only print or compare their arguments
//! (so a word whose value is unknown cannot make them open a file), which
//! options take a message rather than a path, which options, subcommands and
//! environment variables run another program ([`PROGRAMS`],
//! [`PROGRAM_VARIABLES`]), how common flags are spelled
//! ([`FLAG_SPELLINGS`]), and which operands a program writes ([`WRITERS`]).
//! Options are named in full; how a command spells them (abbreviated,
//! clustered, with an attached value) is read by the one argv parser
//! ([`super::options`]) from the program's grammar ([`super::grammar`]). The
//! code that reads the tables knows nothing about any one program, except
//! where [`written`] reads a write no table describes by hand: `find`'s
//! `-delete` and `-fprint*`, git's `--output`, `sed -i`, and the sources
//! `mv` moves.

use super::options::{grammar_of, parse, parse_command, Arg, Value, UNKNOWN};

/// Programs that never open a file named by an argument: they print, compare
/// or compute with their words. A word holding an unknown expansion
/// (`echo "$X"`) is no path for them.
pub const TEXT_ONLY_PROGRAMS: &[&str] = &[
    "echo", "printf", "true", "false", ":", "test", "[", "sleep", "expr", "seq", "basename",
    "dirname", "export", "local", "declare", "typeset", "readonly", "unset", "shift", "exit",
    "return", "let",
];

/// Per program, the options whose value is a message, not a path
/// (`git commit -m "$(cat <<'EOF' … EOF)"`), as written attached (`--message=`)
/// or as the next word.
pub const TEXT_OPTIONS: &[(&str, &[&str])] = &[("git", &["-m", "--message"])];

/// Commands that change the working directory for the commands after them.
pub const DIRECTORY_CHANGERS: &[&str] = &["cd", "pushd", "popd"];

/// Options that make a program work in another directory, per program,
/// named in full (the program's grammar reads how they are spelled); for a
/// wrapper (`env -C DIR cmd`, `sudo -D DIR cmd`), the command it runs.
pub const DIRECTORY_OPTIONS: &[(&str, &[&str])] = &[
    ("git", &["-C"]),
    ("make", &["-C", "--directory"]),
    ("tar", &["-C", "--directory"]),
    ("env", &["-C", "--chdir"]),
    ("sudo", &["-D", "--chdir"]),
];

/// Wrappers that write a file of their own, and the options naming it.
pub const WRAPPER_OUTPUTS: &[(&str, &[&str])] = &[("time", &["-o", "--output"])];

/// Whether `program` only prints or compares its words.
pub fn text_only(program: &str) -> bool {
    TEXT_ONLY_PROGRAMS.contains(&program)
}

/// Whether `option` of `program` takes a message.
pub fn text_option(program: &str, option: &str) -> bool {
    TEXT_OPTIONS
        .iter()
        .any(|(p, opts)| *p == program && opts.contains(&option))
}

/// The words of the command `words[at..]` that hold the value of a message
/// option ([`TEXT_OPTIONS`]), as the program's grammar (its subcommand's,
/// for a program with subcommands) reads them: `--mess=…` is `--message`.
pub fn text_values(words: &[&str], at: usize) -> Vec<usize> {
    let name = words[at].rsplit('/').next().unwrap_or(words[at]);
    let Some((_, options)) = TEXT_OPTIONS.iter().find(|(p, _)| *p == name) else {
        return Vec::new();
    };
    let sub = program_named(name)
        .filter(|p| !p.subcommands.is_empty())
        .and_then(|_| subcommand_at(words, at))
        .filter(|&s| grammar_of(name, Some(words[s])).is_some());
    let parsed = parse_command(words, at, sub);
    options
        .iter()
        .flat_map(|o| parsed.values(o))
        .map(|v| v.word)
        .collect()
}

/// What an option or subcommand of a program does with the words it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// The words after it, up to a `;` or `+` word, are a command
    /// (`find -exec CMD {} ;`); `{}` stands for each file found.
    CommandUntilTerminator,
    /// The words after it are a command (`git bisect run CMD …`).
    CommandWords,
    /// Its value is a shell script (`git rebase --exec 'make'`).
    Script,
    /// The words after it, joined by spaces, are a shell script
    /// (`git submodule foreach CMD …`).
    ScriptWords,
    /// Its value names or holds a program the gate cannot see (a pager, an
    /// interpreter's inline text): the command is unanalysable.
    Hidden,
    /// The names of the files it opens come from standard input or a file
    /// (`sort --files0-from=-`, `tar -T list`, `cpio -o`): the command is
    /// unanalysable.
    NamesFromInput,
    /// It writes, empties or rewrites files or directories the gate does not
    /// judge (`cargo clippy --fix`, `pytest --basetemp=DIR`, `node --prof`):
    /// the command is unanalysable.
    Writes,
}

/// An option of a program that runs something.
#[derive(Debug, Clone, Copy)]
pub struct RunningOption {
    /// The option as written (`-exec`, `--exec`, `-c`); a long option also
    /// matches `--opt=VALUE`, a short one `-cVALUE` and a cluster ending in it.
    pub name: &'static str,
    /// What it runs.
    pub runs: Runs,
}

/// A program whose options or subcommands run other programs. A program
/// with subcommands has its own options (its grammar's) stripped before the
/// subcommand.
#[derive(Debug, Clone, Copy)]
pub struct Program {
    /// The command name (also matched as the last component of a path).
    pub name: &'static str,
    /// Options (wherever its grammar reads them) that run something.
    pub options: &'static [RunningOption],
    /// Subcommands (the first word after the global options) and the
    /// options that run something there; an option named `""` means the
    /// words after the subcommand itself (`git bisect run CMD`).
    pub subcommands: &'static [(&'static [&'static str], &'static [RunningOption])],
    /// The first operand is program text (`awk 'PROGRAM'`), scanned for what
    /// runs programs or writes files, unless one of these options gives the
    /// program instead.
    pub text_operand: Option<&'static [&'static str]>,
    /// Global options before the subcommand that make the command work on
    /// what the gate cannot judge (another repository, a pager), with why.
    pub asking_globals: &'static [(&'static str, &'static str)],
    /// Options whose value, attached or the next word, makes the program run
    /// another one when it holds a text: (option, text, why).
    pub asking_values: &'static [(&'static str, &'static str, &'static str)],
    /// Words of the program's own language that load code or data from a
    /// search path (`jq`'s `import` and `include`): a word holding one as a
    /// token makes the command unanalysable.
    pub module_keywords: &'static [&'static str],
    /// Beginnings of words that set any of the program's settings
    /// (`pnpm --config.KEY=VALUE`), with why: such a word makes the command
    /// unanalysable.
    pub asking_prefixes: &'static [(&'static str, &'static str)],
}

const fn program(name: &'static str) -> Program {
    Program {
        name,
        options: &[],
        subcommands: &[],
        text_operand: None,
        asking_globals: &[],
        asking_values: &[],
        module_keywords: &[],
        asking_prefixes: &[],
    }
}

const fn hidden(name: &'static str) -> RunningOption {
    RunningOption {
        name,
        runs: Runs::Hidden,
    }
}

const fn runs(name: &'static str, runs: Runs) -> RunningOption {
    RunningOption { name, runs }
}

const fn names_from(name: &'static str) -> RunningOption {
    RunningOption {
        name,
        runs: Runs::NamesFromInput,
    }
}

const fn writes(name: &'static str) -> RunningOption {
    RunningOption {
        name,
        runs: Runs::Writes,
    }
}

/// `--files0-from`, as `sort`, `wc` and `du` spell it.
const FILES0_FROM: &[RunningOption] = &[names_from("--files0-from")];
/// `-c`/`--check`: the checksum tools read the files a list names.
const CHECK_LIST: &[RunningOption] = &[names_from("-c"), names_from("--check")];

/// Programs that run other programs through their options or subcommands.
pub const PROGRAMS: &[Program] = &[
    Program {
        options: &[
            runs("-exec", Runs::CommandUntilTerminator),
            runs("-execdir", Runs::CommandUntilTerminator),
            runs("-ok", Runs::CommandUntilTerminator),
            runs("-okdir", Runs::CommandUntilTerminator),
            names_from("-files0-from"),
        ],
        ..program("find")
    },
    Program {
        options: &[
            hidden("--exec-path"),
            hidden("--config-env"),
            names_from("--pathspec-from-file"),
            // Verifying a signature runs gpg or ssh-keygen, which read and
            // lock files in the floor (`~/.gnupg`, `~/.ssh/allowed_signers`).
            hidden("--show-signature"),
            hidden("--verify-signatures"),
        ],
        subcommands: &[
            (&["submodule", "foreach"], &[runs("", Runs::ScriptWords)]),
            (&["hash-object"], &[names_from("--stdin-paths")]),
            (&["update-index"], &[names_from("--stdin")]),
            (&["checkout-index"], &[names_from("--stdin")]),
            (
                &["rebase"],
                &[runs("--exec", Runs::Script), runs("-x", Runs::Script)],
            ),
            (&["bisect", "run"], &[runs("", Runs::CommandWords)]),
            (
                &["difftool"],
                &[runs("--extcmd", Runs::Script), runs("-x", Runs::Script)],
            ),
            (
                &["filter-branch"],
                &[
                    runs("--env-filter", Runs::Script),
                    runs("--tree-filter", Runs::Script),
                    runs("--index-filter", Runs::Script),
                    runs("--parent-filter", Runs::Script),
                    runs("--msg-filter", Runs::Script),
                    runs("--commit-filter", Runs::Script),
                    runs("--tag-name-filter", Runs::Script),
                ],
            ),
            (&["mergetool"], &[hidden("--tool"), hidden("-t")]),
            (&["daemon"], &[hidden("--access-hook")]),
            (&["verify-commit"], &[runs("", Runs::Hidden)]),
            (&["verify-tag"], &[runs("", Runs::Hidden)]),
            (&["tag"], &[hidden("-v"), hidden("--verify")]),
        ],
        asking_globals: &[
            (
                "--git-dir",
                "works on another repository, whose settings can run programs",
            ),
            ("--work-tree", "reads another work tree"),
            ("--namespace", "works in another namespace"),
            ("--super-prefix", "works as part of another repository"),
            (
                "-p",
                "pipes its output through a pager, which writes its history file",
            ),
            (
                "--paginate",
                "pipes its output through a pager, which writes its history file",
            ),
        ],
        asking_values: &[
            (
                "--format",
                "%G",
                "shows signatures, which runs gpg or ssh-keygen on the floor",
            ),
            (
                "--pretty",
                "%G",
                "shows signatures, which runs gpg or ssh-keygen on the floor",
            ),
        ],
        ..program("git")
    },
    Program {
        options: &[
            hidden("--to-command"),
            hidden("-I"),
            hidden("--use-compress-program"),
            hidden("--checkpoint-action"),
            hidden("--info-script"),
            hidden("--new-volume-script"),
            hidden("-F"),
            hidden("--rsh-command"),
            hidden("--rmt-command"),
            names_from("-T"),
            names_from("--files-from"),
        ],
        ..program("tar")
    },
    Program {
        options: &[
            hidden("--compress-program"),
            names_from("--files0-from"),
        ],
        ..program("sort")
    },
    Program {
        options: FILES0_FROM,
        ..program("wc")
    },
    Program {
        options: FILES0_FROM,
        ..program("du")
    },
    Program {
        options: &[
            names_from("-o"),
            names_from("--create"),
            names_from("-p"),
            names_from("--pass-through"),
        ],
        ..program("cpio")
    },
    Program {
        options: &[names_from("-@"), names_from("--names-stdin")],
        ..program("zip")
    },
    Program {
        options: CHECK_LIST,
        ..program("md5sum")
    },
    Program {
        options: CHECK_LIST,
        ..program("sha1sum")
    },
    Program {
        options: CHECK_LIST,
        ..program("sha256sum")
    },
    Program {
        options: CHECK_LIST,
        ..program("sha512sum")
    },
    Program {
        options: CHECK_LIST,
        ..program("b2sum")
    },
    Program {
        options: &[names_from("-K"), names_from("--config")],
        ..program("curl")
    },
    Program {
        options: &[names_from("--config"), hidden("-e"), hidden("--execute")],
        ..program("wget")
    },
    Program {
        options: &[
            hidden("--pre"),
            hidden("--hostname-bin"),
            // Compressed files are read through gzip, xz, bzip2, zstd, …
            hidden("-z"),
            hidden("--search-zip"),
        ],
        ..program("rg")
    },
    Program {
        // The output goes through `pr`.
        options: &[hidden("-l"), hidden("--paginate")],
        ..program("diff")
    },
    Program {
        options: &[hidden("-f"), hidden("--from-file")],
        module_keywords: &["import", "include"],
        ..program("jq")
    },
    Program {
        options: &[
            hidden("-e"),
            hidden("--rsh"),
            hidden("--rsync-path"),
            names_from("--files-from"),
        ],
        ..program("rsync")
    },
    Program {
        options: &[hidden("-c")],
        ..program("python")
    },
    Program {
        options: &[hidden("-c")],
        ..program("python3")
    },
    Program {
        options: &[hidden("-c")],
        ..program("python2")
    },
    Program {
        options: NODE_OPTIONS,
        ..program("node")
    },
    Program {
        options: &[hidden("-e"), hidden("--eval")],
        ..program("bun")
    },
    Program {
        options: &[hidden("-e"), hidden("-E")],
        ..program("perl")
    },
    Program {
        options: &[hidden("-e")],
        ..program("ruby")
    },
    Program {
        options: &[hidden("-r"), hidden("-B"), hidden("-R"), hidden("-E")],
        ..program("php")
    },
    Program {
        options: &[
            hidden("-e"),
            hidden("-E"),
            hidden("--eval"),
            hidden("--print"),
        ],
        ..program("julia")
    },
    Program {
        options: &[hidden("-e")],
        ..program("Rscript")
    },
    Program {
        options: &[hidden("-e")],
        ..program("R")
    },
    Program {
        options: &[hidden("-e")],
        ..program("lua")
    },
    Program {
        options: &[hidden("-c"), hidden("--cmd"), hidden("-S")],
        ..program("vim")
    },
    Program {
        options: &[hidden("-c"), hidden("--cmd"), hidden("-S")],
        ..program("nvim")
    },
    Program {
        options: &[hidden("-c")],
        ..program("su")
    },
    Program {
        options: &[hidden("-c"), hidden("--command")],
        ..program("script")
    },
    Program {
        options: &[hidden("-o")],
        ..program("ssh")
    },
    Program {
        options: &[runs("", Runs::ScriptWords)],
        ..program("watch")
    },
    Program {
        options: &[hidden("")],
        ..program("parallel")
    },
    Program {
        options: &[
            hidden("-i"),
            hidden("--include"),
            hidden("-l"),
            hidden("--load"),
        ],
        text_operand: Some(&["-f", "--file", "-E", "--exec"]),
        ..program("awk")
    },
    Program {
        options: &[
            hidden("-i"),
            hidden("--include"),
            hidden("-l"),
            hidden("--load"),
        ],
        text_operand: Some(&["-f", "--file", "-E", "--exec"]),
        ..program("gawk")
    },
    Program {
        text_operand: Some(&["-f"]),
        ..program("mawk")
    },
    // The presets' build tools: options that run a program named on the
    // line, load code from elsewhere, or write outside what the gate judges.
    Program {
        options: CARGO_OPTIONS,
        ..program("cargo")
    },
    Program {
        options: NPM_OPTIONS,
        ..program("npm")
    },
    Program {
        options: YARN_OPTIONS,
        ..program("yarn")
    },
    Program {
        options: PNPM_OPTIONS,
        asking_prefixes: &[(
            "--config.",
            "sets one of pnpm's settings (the script shell, the store, …), which the gate does not judge",
        )],
        ..program("pnpm")
    },
    Program {
        options: PYTEST_OPTIONS,
        ..program("pytest")
    },
    Program {
        options: PYTEST_OPTIONS,
        ..program("py.test")
    },
    Program {
        options: PIP_OPTIONS,
        ..program("pip")
    },
    Program {
        options: PIP_OPTIONS,
        ..program("pip3")
    },
    Program {
        options: MYPY_OPTIONS,
        ..program("mypy")
    },
    Program {
        options: &[
            writes("--add-noqa"),
            writes("--fix"),
            writes("--fix-only"),
            writes("--unsafe-fixes"),
            writes("--output-file"),
            writes("-o"),
            writes("--cache-dir"),
            hidden("--config"),
        ],
        ..program("ruff")
    },
    Program {
        options: &[
            writes("--output-file"),
            hidden("--config"),
            hidden("--append-config"),
        ],
        ..program("flake8")
    },
    Program {
        options: &[writes("--cache-dir")],
        ..program("black")
    },
    Program {
        options: &[
            hidden("--init-hook"),
            hidden("--load-plugins"),
            hidden("--rcfile"),
            writes("--output"),
            // The imports checker's graphs, the spelling checker's words.
            writes("--import-graph"),
            writes("--ext-import-graph"),
            writes("--int-import-graph"),
            writes("--spelling-private-dict-file"),
        ],
        ..program("pylint")
    },
    Program {
        options: &[
            hidden("--pythonpath"),
            hidden("--venvpath"),
            hidden("-v"),
            writes("--createstub"),
            writes("--writebaseline"),
        ],
        ..program("pyright")
    },
    Program {
        options: &[
            hidden("-c"),
            hidden("--conf"),
            hidden("-x"),
            hidden("--override"),
            hidden("--installpkg"),
            writes("--workdir"),
            writes("--root"),
        ],
        ..program("tox")
    },
    Program {
        options: &[
            hidden("-f"),
            hidden("--noxfile"),
            writes("--envdir"),
            writes("--report"),
        ],
        ..program("nox")
    },
    Program {
        options: &[
            hidden("--with"),
            hidden("--with-requirements"),
            hidden("--python"),
            hidden("-p"),
            hidden("--directory"),
            hidden("--project"),
            hidden("--env-file"),
            writes("--cache-dir"),
        ],
        ..program("uv")
    },
];

/// Programs that run another named after a word (`python -m pytest`, `uv
/// run pytest`): the words after it are read as that program's, by its
/// entry in [`PROGRAMS`].
pub const PROGRAM_RUNNERS: &[(&str, &str)] = &[("python", "-m"), ("uv", "run")];

/// cargo: a configuration given on the line can name a runner, a linker or
/// flags that run programs; the target, artifact and log files go where
/// the options say; `--fix` rewrites sources; `--open` starts a browser.
const CARGO_OPTIONS: &[RunningOption] = &[
    hidden("--config"),
    hidden("-Z"),
    hidden("-C"),
    hidden("--manifest-path"),
    hidden("--open"),
    // nextest's configuration files name setup scripts and wrappers.
    hidden("--config-file"),
    hidden("--tool-config-file"),
    hidden("--user-config-file"),
    writes("--fix"),
    writes("--target-dir"),
    writes("--artifact-dir"),
    writes("--logfile"),
];

/// npm: the shell that runs scripts, the programs it starts, configuration
/// files, another prefix, and where logs and the cache are written.
const NPM_OPTIONS: &[RunningOption] = &[
    hidden("--script-shell"),
    hidden("--shell"),
    hidden("--node-options"),
    hidden("--node-gyp"),
    hidden("--git"),
    hidden("--call"),
    hidden("--userconfig"),
    hidden("--globalconfig"),
    hidden("--prefix"),
    hidden("-C"),
    hidden("--editor"),
    hidden("--browser"),
    hidden("--viewer"),
    hidden("--init-module"),
    writes("--logs-dir"),
    writes("--cache"),
];

/// yarn: another directory, its configuration file, and where the cache
/// and the modules go.
const YARN_OPTIONS: &[RunningOption] = &[
    hidden("--cwd"),
    hidden("--use-yarnrc"),
    writes("--cache-folder"),
    writes("--preferred-cache-folder"),
    writes("--global-folder"),
    writes("--link-folder"),
    writes("--modules-folder"),
];

/// pnpm: another directory, more settings, and where its state and store go.
const PNPM_OPTIONS: &[RunningOption] = &[
    hidden("-C"),
    hidden("--dir"),
    hidden("--env-file"),
    hidden("--npmrc-auth-file"),
    writes("--state-dir"),
    writes("--store-dir"),
];

/// node: options that load other code or write profiles, traces, reports
/// and test results.
const NODE_OPTIONS: &[RunningOption] = &[
    hidden("-e"),
    hidden("--eval"),
    hidden("-p"),
    hidden("--print"),
    hidden("-r"),
    hidden("--require"),
    hidden("--import"),
    hidden("--loader"),
    hidden("--experimental-loader"),
    hidden("--test-reporter"),
    hidden("--run"),
    hidden("--inspect"),
    hidden("--inspect-brk"),
    hidden("--inspect-wait"),
    // An env file can set NODE_OPTIONS; OpenSSL's configuration loads engines.
    hidden("--env-file"),
    hidden("--env-file-if-exists"),
    hidden("--openssl-config"),
    writes("--tls-keylog"),
    writes("--cpu-prof-dir"),
    writes("--heap-prof-dir"),
    writes("--test-reporter-destination"),
    writes("--prof"),
    writes("--cpu-prof"),
    writes("--heap-prof"),
    writes("--heapsnapshot-signal"),
    writes("--heapsnapshot-near-heap-limit"),
    writes("--diagnostic-dir"),
    writes("--trace-events-enabled"),
    writes("--trace-event-categories"),
    writes("--trace-event-file-pattern"),
    writes("--redirect-warnings"),
    writes("--report-on-signal"),
    writes("--report-on-fatalerror"),
    writes("--report-uncaught-exception"),
    writes("--report-dir"),
    writes("--report-directory"),
    writes("--report-filename"),
    writes("--build-snapshot"),
    writes("--perf-basic-prof"),
    writes("--perf-basic-prof-only-functions"),
    writes("--perf-prof"),
    writes("--logfile"),
    writes("--experimental-sea-config"),
];

/// pytest: `--basetemp` is emptied before the run; result, log and debug
/// files are written; settings given on the line can move them.
const PYTEST_OPTIONS: &[RunningOption] = &[
    writes("--basetemp"),
    writes("--junitxml"),
    writes("--junit-xml"),
    writes("--debug"),
    writes("--report-log"),
    writes("--log-file"),
    writes("--html"),
    writes("--cov-report"),
    writes("--rootdir"),
    hidden("-c"),
    hidden("--config-file"),
    hidden("-o"),
    hidden("--override-ini"),
    hidden("--pdbcls"),
    hidden("--pastebin"),
];

/// pip: the log and cache files, another interpreter.
const PIP_OPTIONS: &[RunningOption] = &[writes("--log"), writes("--cache-dir"), hidden("--python")];

/// mypy: another interpreter, installing stubs, reports and the cache.
const MYPY_OPTIONS: &[RunningOption] = &[
    hidden("--python-executable"),
    hidden("--install-types"),
    hidden("--config-file"),
    writes("--junit-xml"),
    writes("--cache-dir"),
    writes("--html-report"),
    writes("--xml-report"),
    writes("--txt-report"),
    writes("--xslt-html-report"),
    writes("--xslt-txt-report"),
    writes("--linecount-report"),
    writes("--linecoverage-report"),
    writes("--lineprecision-report"),
    writes("--cobertura-xml-report"),
    writes("--any-exprs-report"),
];

/// Environment variables that pick a program which then runs: setting one
/// (`GIT_PAGER=x git log`, `env PAGER=x …`, `export GIT_SSH_COMMAND=…`)
/// makes the command unanalysable. A trailing `*` matches any suffix.
pub const PROGRAM_VARIABLES: &[&str] = &[
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_KEY_*",
    "GIT_CONFIG_VALUE_*",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_TEMPLATE_DIR",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "LESSOPEN",
    "LESSCLOSE",
    "BROWSER",
    "PERL5OPT",
    "PERL5LIB",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "NODE_OPTIONS",
    "RUBYOPT",
    "TAR_OPTIONS",
    "RSYNC_RSH",
];

/// Keys of `git -c KEY=VALUE` and `git config KEY VALUE` whose value is a
/// program, a script or a file of more settings. Matched case-insensitively,
/// as whole keys, as prefixes ending in `.`, or as a last part.
pub const GIT_PROGRAM_KEYS: &[&str] = &[
    "alias.",
    "pager.",
    "filter.",
    "include.",
    "includeif.",
    // Signatures run gpg or ssh-keygen; formats may show them.
    "gpg.",
    "log.showsignature",
    "pretty.",
    "format.pretty",
    // Another work tree; files read or written elsewhere.
    "core.worktree",
    "core.attributesfile",
    "core.excludesfile",
    "mailmap.",
    "blame.ignorerevsfile",
    "trace2.",
];

/// Last parts of git configuration keys that name a program.
pub const GIT_PROGRAM_KEY_ENDS: &[&str] = &[
    "pager",
    "editor",
    "sshcommand",
    "fsmonitor",
    "hookspath",
    "askpass",
    "gitproxy",
    "external",
    "textconv",
    "command",
    "cmd",
    "program",
    "helper",
    "driver",
    "packobjectshook",
    "path",
];

/// Whether assigning `name` picks a program.
pub fn picks_program(name: &str) -> bool {
    listed(PROGRAM_VARIABLES, name)
}

/// Environment variables that name a file or directory a program then
/// writes or reads, or settings that load code or change what is read: the
/// gate does not judge their values, so setting one makes the command
/// unanalysable. A trailing `*` matches any suffix.
pub const FILE_VARIABLES: &[&str] = &[
    // git: another repository, work tree or index; trace files.
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_INDEX_FILE",
    "GIT_SHALLOW_FILE",
    "GIT_TRACE*",
    "GNUPGHOME",
    // Where every program reads its settings (a `.gitconfig` or
    // `git/config` naming a pager, a `.curlrc`) and writes its caches.
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "CURL_HOME",
    "WGETRC",
    // Temporary files of every program.
    "TMPDIR",
    "TMP",
    "TEMP",
    // Configuration files that add options, startup files, history files.
    "RIPGREP_CONFIG_PATH",
    "BASH_ENV",
    "ENV",
    "ZDOTDIR",
    "HISTFILE",
    "LESS",
    "LESSKEY*",
    "LESSHISTFILE",
    "MANOPT",
    // Rust: the compiler, its wrappers, flags and the build configuration.
    "RUSTC*",
    "RUSTDOC*",
    "RUSTFLAGS",
    "RUSTUP_*",
    "CARGO",
    "CARGO_HOME",
    "CARGO_BUILD_*",
    "CARGO_TARGET_*",
    "CARGO_HOST_*",
    "CARGO_ENCODED_*",
    "CARGO_ALIAS_*",
    "CARGO_REGISTRIES_*",
    "CARGO_REGISTRY_*",
    "CARGO_CREDENTIAL_*",
    "CARGO_NET_*",
    "CARGO_UNSTABLE_*",
    "CARGO_PROFILE_*",
    "CARGO_DOC_*",
    "CARGO_INSTALL_*",
    "CARGO_HTTP_*",
    "CC",
    "CXX",
    "AR",
    "LD",
    "CC_*",
    "CXX_*",
    "AR_*",
    "TARGET_*",
    "HOST_*",
    "CFLAGS",
    "CXXFLAGS",
    "LDFLAGS",
    "PKG_CONFIG*",
    // Node: npm's settings (the script shell), module paths, coverage files.
    "npm_config_*",
    "NPM_CONFIG_*",
    "YARN_*",
    "PNPM_*",
    "NODE_PATH",
    "NODE_V8_COVERAGE",
    "NODE_REPL_HISTORY",
    // Python: pip's settings and log, test and lint settings and caches.
    "PIP_*",
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "COVERAGE_*",
    "MYPY_CACHE_DIR",
    "MYPYPATH",
    "PYLINTHOME",
    "PYLINTRC",
    "RUFF_*",
    "BLACK_CACHE_DIR",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PYTHONPYCACHEPREFIX",
    "PYTHONBREAKPOINT",
    "PYTHONEXECUTABLE",
    "VIRTUAL_ENV",
    "UV_*",
    "TOX_*",
];

/// Whether assigning `name` names a file or setting the gate does not judge.
pub fn names_file(name: &str) -> bool {
    listed(FILE_VARIABLES, name)
}

fn listed(table: &[&str], name: &str) -> bool {
    table.iter().any(|v| match v.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *v,
    })
}

/// Whether the git configuration key `key` names a program or more settings.
pub fn git_program_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    if GIT_PROGRAM_KEYS.iter().any(|p| key.starts_with(p)) {
        return true;
    }
    let last = key.rsplit('.').next().unwrap_or(&key);
    GIT_PROGRAM_KEY_ENDS.contains(&last)
}

/// The program called `name`, if the table knows it.
pub fn program_named(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.name == name)
}

/// Whether `word` is the option `opt`: exactly, as `--opt=VALUE` for a long
/// option, or as a short cluster holding its letter (`-Bc` for `-c`).
pub fn is_option(word: &str, opt: &str) -> bool {
    if opt.is_empty() {
        return false;
    }
    if word == opt {
        return true;
    }
    if opt.starts_with("--") || (opt.len() > 2 && opt.starts_with('-')) {
        // A long option (GNU `--x` or find's `-exec`): exact, or `=VALUE`.
        return word
            .strip_prefix(opt)
            .is_some_and(|rest| rest.starts_with('='));
    }
    let letter = &opt[1..];
    word.starts_with('-') && !word.starts_with("--") && word[1..].contains(letter)
}

/// Programs whose operands (or some options' values) are files they write,
/// delete or change. Options are named in full (`-t`, `--target-directory`);
/// how each is spelled and whether it takes a value is the program's
/// grammar's ([`super::grammar`]).
#[derive(Debug, Clone, Copy)]
pub struct Writer {
    /// The command name.
    pub name: &'static str,
    /// Which operands are written.
    pub operands: WrittenOperands,
    /// Options whose value is a written file or directory (`-t DIR`, `-o FILE`).
    pub writes_value: &'static [&'static str],
    /// Options that make the write recursive (`-r`, `-R`, `--recursive`).
    pub recursive: &'static [&'static str],
    /// `NAME=` operands whose value is written (`dd of=FILE`).
    pub assigned: &'static [&'static str],
}

/// Which operands of a [`Writer`] are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrittenOperands {
    /// None (only option values).
    None,
    /// Every operand (`touch a b`, `rm a b`).
    All,
    /// The last operand, or the value of a target-directory option
    /// (`cp a b DEST`, `cp -t DEST a b`); `mv` also removes its sources.
    Last,
    /// Every operand but the first (`chmod MODE FILE…`).
    AllButFirst,
}

const fn writer(name: &'static str, operands: WrittenOperands) -> Writer {
    Writer {
        name,
        operands,
        writes_value: &[],
        recursive: &[],
        assigned: &[],
    }
}

/// `-t DIR`, `--target-directory=DIR`.
const TARGET_DIRECTORY: &[&str] = &["-t", "--target-directory"];

/// Programs that write their operands, for the path write check.
pub const WRITERS: &[Writer] = &[
    Writer {
        writes_value: TARGET_DIRECTORY,
        recursive: &["-r", "-R", "--recursive", "-a", "--archive"],
        ..writer("cp", WrittenOperands::Last)
    },
    Writer {
        writes_value: TARGET_DIRECTORY,
        ..writer("mv", WrittenOperands::Last)
    },
    Writer {
        writes_value: TARGET_DIRECTORY,
        ..writer("install", WrittenOperands::Last)
    },
    Writer {
        writes_value: TARGET_DIRECTORY,
        ..writer("ln", WrittenOperands::Last)
    },
    writer("tee", WrittenOperands::All),
    Writer {
        assigned: &["of"],
        ..writer("dd", WrittenOperands::None)
    },
    writer("touch", WrittenOperands::All),
    writer("mkdir", WrittenOperands::All),
    writer("truncate", WrittenOperands::All),
    Writer {
        recursive: &["-r", "-R", "--recursive"],
        ..writer("rm", WrittenOperands::All)
    },
    writer("rmdir", WrittenOperands::All),
    writer("unlink", WrittenOperands::All),
    writer("shred", WrittenOperands::All),
    Writer {
        recursive: &["-R", "--recursive"],
        ..writer("chmod", WrittenOperands::AllButFirst)
    },
    Writer {
        recursive: &["-R", "--recursive"],
        ..writer("chown", WrittenOperands::AllButFirst)
    },
    Writer {
        recursive: &["-R", "--recursive"],
        ..writer("chgrp", WrittenOperands::AllButFirst)
    },
    Writer {
        // `-T DIR`: its temporary files are written in DIR.
        writes_value: &["-o", "--output", "-T", "--temporary-directory"],
        ..writer("sort", WrittenOperands::None)
    },
];

/// The writer called `name`, if the table knows it.
pub fn writer_named(name: &str) -> Option<&'static Writer> {
    WRITERS.iter().find(|w| w.name == name)
}

/// A file a command writes, found in its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The index of the word that names it, in the command's words.
    pub word: usize,
    /// Where in that word the path starts (after `of=`, `--output=`, `-o`).
    pub offset: usize,
    /// The write reaches everything below the path (`rm -r`, `chmod -R`).
    pub recursive: bool,
}

/// The files the command `words[at..]` writes, by the [`WRITERS`] table, by
/// git's `--output`/`-o`, and by `find`'s `-delete` and `-fprint*`.
pub fn written(words: &[&str], at: usize) -> Vec<Written> {
    let name = words[at].rsplit('/').next().unwrap_or(words[at]);
    match name {
        "find" => return find_writes(words, at),
        "git" => return git_writes(words, at),
        "sed" => return sed_in_place(words, at),
        _ => {}
    }
    let Some(w) = writer_named(name) else {
        return Vec::new();
    };
    let parsed = parse_command(words, at, None);
    let recursive = parsed.has_any(w.recursive);
    let mut out = Vec::new();
    let mut target_option = false;
    for opt in w.writes_value {
        for v in parsed.values(opt) {
            target_option = true;
            out.push(Written {
                word: v.word,
                offset: v.offset,
                recursive: false,
            });
        }
    }
    let mut operands = Vec::new();
    for i in parsed.operands() {
        let t = words[i];
        if let Some(name) = w
            .assigned
            .iter()
            .find(|a| t.strip_prefix(**a).is_some_and(|r| r.starts_with('=')))
        {
            out.push(Written {
                word: i,
                offset: name.len() + 1,
                recursive: false,
            });
        } else {
            operands.push(i);
        }
    }
    let whole = |word: usize, recursive: bool| Written {
        word,
        offset: 0,
        recursive,
    };
    match w.operands {
        WrittenOperands::None => {}
        WrittenOperands::All => out.extend(operands.iter().map(|&o| whole(o, recursive))),
        WrittenOperands::AllButFirst => {
            out.extend(operands.iter().skip(1).map(|&o| whole(o, recursive)))
        }
        WrittenOperands::Last => {
            if !target_option {
                if let Some(&last) = operands.last().filter(|_| operands.len() > 1) {
                    out.push(whole(last, false));
                }
            }
            // `mv` removes its sources: everything below them moves.
            if name == "mv" {
                let sources = if target_option {
                    &operands[..]
                } else {
                    &operands[..operands.len().saturating_sub(1)]
                };
                out.extend(sources.iter().map(|&o| whole(o, true)));
            }
        }
    }
    out
}

/// `find`: `-delete` removes what it finds below each start point;
/// `-fprint FILE`, `-fprint0 FILE`, `-fprintf FILE FORMAT` and `-fls FILE` write FILE.
fn find_writes(words: &[&str], at: usize) -> Vec<Written> {
    let mut out = Vec::new();
    let starts: Vec<usize> = (at + 1..words.len())
        .take_while(|&i| !words[i].starts_with(['-', '(', '!', ',']) || words[i] == "-")
        .collect();
    for (i, t) in words.iter().enumerate().skip(at + 1) {
        match *t {
            "-delete" => {
                if starts.is_empty() {
                    // No start point is `.`: the engine reads an empty path as the working directory.
                    out.push(Written {
                        word: at,
                        offset: words[at].len(),
                        recursive: true,
                    });
                }
                out.extend(starts.iter().map(|&s| Written {
                    word: s,
                    offset: 0,
                    recursive: true,
                }));
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" if i + 1 < words.len() => {
                out.push(Written {
                    word: i + 1,
                    offset: 0,
                    recursive: false,
                });
            }
            _ => {}
        }
    }
    out
}

/// git: `--output=FILE` (diff, log, format-patch, …), `format-patch -o DIR`
/// / `--output-directory`, `archive -o FILE`, read by the subcommand's
/// grammar; a subcommand without one has each `--output` word read as one.
fn git_writes(words: &[&str], at: usize) -> Vec<Written> {
    let mut out = Vec::new();
    let Some(sub) = subcommand_at(words, at) else {
        return out;
    };
    let value = |v: Value| Written {
        word: v.word,
        offset: v.offset,
        recursive: false,
    };
    if grammar_of("git", Some(words[sub])).is_none() {
        for (i, t) in words.iter().enumerate().skip(sub + 1) {
            if let Some(r) = t.strip_prefix("--output") {
                if r.is_empty() && i + 1 < words.len() {
                    out.push(value(Value {
                        word: i + 1,
                        offset: 0,
                    }));
                } else if r.starts_with('=') {
                    out.push(value(Value {
                        word: i,
                        offset: "--output=".len(),
                    }));
                }
            }
        }
        return out;
    }
    let parsed = parse_command(words, at, Some(sub));
    let o_writes = matches!(words[sub], "format-patch" | "archive");
    for opt in ["--output", "--output-directory", "-o"] {
        if opt == "-o" && !o_writes {
            continue;
        }
        out.extend(parsed.values(opt).map(value));
    }
    out
}

/// The index of the subcommand of the program `words[at]` (`git`, `cargo`):
/// the first operand after the program's own options.
pub fn subcommand_at(words: &[&str], at: usize) -> Option<usize> {
    let g = grammar_of(words[at], None).unwrap_or(&UNKNOWN);
    parse(g, words, at + 1).args.iter().find_map(|a| match a {
        Arg::Operand(i) => Some(*i),
        _ => None,
    })
}

/// `sed -i`: every file operand is written (the script is the first operand
/// unless `-e`/`-f` gave it).
fn sed_in_place(words: &[&str], at: usize) -> Vec<Written> {
    let parsed = parse_command(words, at, None);
    if !parsed.has_any(&["-i", "--in-place"]) {
        return Vec::new();
    }
    let script_given = parsed.has_any(SED_SCRIPT_OPTIONS);
    let operands = parsed.operands();
    let files = if script_given {
        &operands[..]
    } else {
        operands.get(1..).unwrap_or_default()
    };
    files
        .iter()
        .map(|&o| Written {
            word: o,
            offset: 0,
            recursive: false,
        })
        .collect()
}

/// The options that give sed its script.
const SED_SCRIPT_OPTIONS: &[&str] = &["-e", "--expression", "-f", "--file"];

/// What a sed script does beyond printing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SedEffect {
    /// `w FILE`, `W FILE`, `s///w FILE`: writes FILE.
    Writes(String),
    /// `r FILE`, `R FILE`: reads FILE.
    Reads(String),
}

/// Scans a sed script for commands that run programs (`e`, `s///e`) or
/// touch files (`w`, `W`, `r`, `R`, `s///w`). `Err` names what runs a
/// program, or what could not be read.
pub fn sed_script(script: &str) -> Result<Vec<SedEffect>, String> {
    let b = script.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let file_arg = |i: &mut usize| -> String {
        // The file name is the rest of the line, after blanks.
        while *i < b.len() && (b[*i] == b' ' || b[*i] == b'\t') {
            *i += 1;
        }
        let start = *i;
        while *i < b.len() && b[*i] != b'\n' {
            *i += 1;
        }
        script[start..*i].to_string()
    };
    while i < b.len() {
        // Blanks, separators and addresses.
        match b[i] {
            b' '
            | b'\t'
            | b'\n'
            | b';'
            | b'{'
            | b'}'
            | b'!'
            | b','
            | b'$'
            | b'0'..=b'9'
            | b'~'
            | b'+' => {
                i += 1;
                continue;
            }
            b'/' | b'\\' => {
                let delim = if b[i] == b'\\' {
                    i += 1;
                    *b.get(i).ok_or("a sed address ends after `\\`")?
                } else {
                    b'/'
                };
                i += 1;
                while i < b.len() && b[i] != delim {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                // Address flags `I` and `M`.
                while i < b.len() && matches!(b[i], b'I' | b'M') {
                    i += 1;
                }
                continue;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        let c = b[i];
        i += 1;
        match c {
            b'e' => return Err("sed's `e` command runs a shell command".into()),
            b'w' | b'W' => out.push(SedEffect::Writes(file_arg(&mut i))),
            b'r' | b'R' => out.push(SedEffect::Reads(file_arg(&mut i))),
            b'a' | b'i' | b'c' => {
                // Text to the end of the line (GNU one-liner form), with `\` continuations.
                while i < b.len() && b[i] != b'\n' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b':' | b'b' | b't' | b'T' => {
                while i < b.len() && b[i] != b'\n' && b[i] != b';' {
                    i += 1;
                }
            }
            b's' | b'y' => {
                let delim = *b.get(i).ok_or("a sed `s` command ends early")?;
                if delim == b'\n' || delim == b'\\' {
                    return Err("a sed `s` command has an unusual delimiter".into());
                }
                i += 1;
                for _ in 0..2 {
                    while i < b.len() && b[i] != delim {
                        if b[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    if i >= b.len() {
                        return Err("a sed `s` command is not closed".into());
                    }
                    i += 1;
                }
                if c == b's' {
                    while i < b.len() && !matches!(b[i], b';' | b'\n' | b'}' | b' ') {
                        match b[i] {
                            b'e' => {
                                return Err(
                                    "sed's `s///e` flag runs the pattern space as a command".into(),
                                )
                            }
                            b'w' => {
                                i += 1;
                                out.push(SedEffect::Writes(file_arg(&mut i)));
                                break;
                            }
                            _ => i += 1,
                        }
                    }
                }
            }
            b'p' | b'P' | b'd' | b'D' | b'n' | b'N' | b'g' | b'G' | b'h' | b'H' | b'x' | b'l'
            | b'q' | b'Q' | b'=' | b'z' | b'F' | b'v' => {
                // No argument, or a number / label we do not need.
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            other => {
                return Err(format!(
                    "the sed script holds `{}`, which the gate does not read",
                    char::from(other).escape_default()
                ))
            }
        }
    }
    Ok(out)
}

/// A file an awk program opens by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AwkEffect {
    /// `getline < "FILE"`: reads FILE.
    Reads(String),
    /// `print > "FILE"`, `printf … >> "FILE"`: writes FILE.
    Writes(String),
}

/// Scans an awk program for what opens files or runs commands. The files
/// named by string literals are returned; `Err` says what runs a command or
/// names a file only known at run time (`system()`, a pipe, `ARGV`,
/// `getline < name`, `print > $2`, `@include`).
pub fn awk_program(text: &str) -> Result<Vec<AwkEffect>, String> {
    if text.contains("system") {
        return Err("can run commands (`system`)".into());
    }
    if text.contains('|') {
        return Err("can run commands through a pipe".into());
    }
    if text.contains("ARGV") || text.contains("ARGC") {
        return Err("changes the files it reads (`ARGV`)".into());
    }
    if text.contains("@include") || text.contains("@load") {
        return Err("loads more program text (`@include`, `@load`)".into());
    }
    let b = text.as_bytes();
    let mut out = Vec::new();
    let skip_blanks = |mut i: usize| {
        while i < b.len() && matches!(b[i], b' ' | b'\t') {
            i += 1;
        }
        i
    };
    // A string literal at `i`: its text and the index after it.
    let literal = |i: usize| -> Option<(String, usize)> {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let mut j = i + 1;
        let mut s = Vec::new();
        while j < b.len() && b[j] != b'"' {
            if b[j] == b'\\' {
                j += 1;
            }
            if let Some(&c) = b.get(j) {
                s.push(c);
            }
            j += 1;
        }
        (j < b.len()).then(|| (String::from_utf8_lossy(&s).into_owned(), j + 1))
    };
    let mut from = 0;
    while let Some(p) = text[from..].find("getline") {
        let mut i = skip_blanks(from + p + "getline".len());
        // An optional variable: `getline line < "f"`.
        while i < b.len()
            && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'$' | b'[' | b']'))
        {
            i += 1;
        }
        i = skip_blanks(i);
        if b.get(i) == Some(&b'<') {
            match literal(skip_blanks(i + 1)) {
                Some((file, _)) => out.push(AwkEffect::Reads(file)),
                None => return Err("reads a file whose name is only known at run time".into()),
            }
        }
        from = from + p + 1;
    }
    let mut from = 0;
    while let Some(p) = text[from..].find("print") {
        let mut i = from + p + "print".len();
        let mut depth = 0usize;
        while i < b.len() {
            match b[i] {
                b'"' => match literal(i) {
                    Some((_, end)) => {
                        i = end;
                        continue;
                    }
                    None => break,
                },
                b'(' => depth += 1,
                b')' => depth = depth.saturating_sub(1),
                b';' | b'}' | b'\n' if depth == 0 => break,
                b'>' if depth == 0 => {
                    let mut j = i + 1;
                    if b.get(j) == Some(&b'>') {
                        j += 1;
                    }
                    match literal(skip_blanks(j)) {
                        Some((file, _)) => out.push(AwkEffect::Writes(file)),
                        None => {
                            return Err("writes a file whose name is only known at run time".into())
                        }
                    }
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        from = from + p + 1;
    }
    Ok(out)
}

/// How a program spells its common flags: a cluster of these letters is
/// split (`-fd` → `-f -d`), long names mean their short letter
/// (`--force` → `-f`), and some letters mean another (`rm -R` → `-r`).
#[derive(Debug, Clone, Copy)]
pub struct FlagSpelling {
    /// The program.
    pub program: &'static str,
    /// Its subcommand, for git.
    pub subcommand: Option<&'static str>,
    /// Short options that take no value.
    pub letters: &'static str,
    /// Long options and the short option they mean.
    pub long: &'static [(&'static str, &'static str)],
    /// Short options that mean another one.
    pub same: &'static [(&'static str, &'static str)],
}

/// The flag spellings sandgate knows (see [`spelled`]).
pub const FLAG_SPELLINGS: &[FlagSpelling] = &[
    FlagSpelling {
        program: "rm",
        subcommand: None,
        letters: "rRfidvI",
        long: &[
            ("--recursive", "-r"),
            ("--force", "-f"),
            ("--dir", "-d"),
            ("--verbose", "-v"),
        ],
        same: &[("-R", "-r")],
    },
    FlagSpelling {
        program: "chmod",
        subcommand: None,
        letters: "Rvcf",
        long: &[
            ("--recursive", "-R"),
            ("--verbose", "-v"),
            ("--changes", "-c"),
            ("--silent", "-f"),
            ("--quiet", "-f"),
        ],
        same: &[],
    },
    FlagSpelling {
        program: "chown",
        subcommand: None,
        letters: "RvcfhHLP",
        long: &[
            ("--recursive", "-R"),
            ("--verbose", "-v"),
            ("--changes", "-c"),
            ("--silent", "-f"),
            ("--quiet", "-f"),
            ("--no-dereference", "-h"),
        ],
        same: &[],
    },
    FlagSpelling {
        program: "git",
        subcommand: Some("clean"),
        letters: "dfxXnqi",
        long: &[
            ("--force", "-f"),
            ("--dry-run", "-n"),
            ("--quiet", "-q"),
            ("--interactive", "-i"),
        ],
        same: &[],
    },
    FlagSpelling {
        program: "git",
        subcommand: Some("push"),
        letters: "fuvqn",
        long: &[
            ("--force", "-f"),
            ("--set-upstream", "-u"),
            ("--verbose", "-v"),
            ("--quiet", "-q"),
            ("--dry-run", "-n"),
        ],
        same: &[],
    },
    FlagSpelling {
        program: "git",
        subcommand: Some("reset"),
        letters: "qp",
        long: &[("--quiet", "-q"), ("--patch", "-p")],
        same: &[],
    },
    FlagSpelling {
        program: "git",
        subcommand: Some("checkout"),
        letters: "fqp",
        long: &[("--force", "-f"), ("--quiet", "-q"), ("--patch", "-p")],
        same: &[],
    },
    FlagSpelling {
        program: "git",
        subcommand: Some("branch"),
        letters: "dDfrav",
        long: &[
            ("--delete", "-d"),
            ("--force", "-f"),
            ("--remotes", "-r"),
            ("--all", "-a"),
        ],
        same: &[],
    },
];

/// The command `words` (its name first, global options already stripped)
/// with its flags in one spelling: each flag on its own, long names (or
/// their abbreviations, for a program that reads them) as their short
/// letter, sorted and without repeats, before the other words in their
/// order. `rm -fr /`, `rm -r -f /`, `rm --recursive --force /` and
/// `rm / -rf` are all `rm -f -r /`. `None` when the program has no entry.
pub fn spelled(words: &[&str]) -> Option<String> {
    let name = words.first()?.rsplit('/').next()?;
    let entry = FLAG_SPELLINGS
        .iter()
        .find(|e| e.program == name && e.subcommand.is_none_or(|s| words.get(1) == Some(&s)))?;
    let start = if entry.subcommand.is_some() { 2 } else { 1 };
    let grammar = grammar_of(name, entry.subcommand);
    let mapped = |f: &str| -> String {
        entry
            .same
            .iter()
            .find(|(a, _)| *a == f)
            .map_or(f.to_string(), |(_, b)| (*b).to_string())
    };
    let mut flags: Vec<String> = Vec::new();
    let mut others: Vec<&str> = Vec::new();
    let mut options = true;
    for w in words.iter().skip(start) {
        if options && *w == "--" {
            options = false;
            others.push(w);
            continue;
        }
        if options {
            // `--recur` is `--recursive` to a program that reads abbreviations.
            let full = w
                .strip_prefix("--")
                .filter(|l| !l.is_empty() && !l.contains('='))
                .and_then(|l| grammar.map(|g| g.resolve_long(l)))
                .filter(|m| m.len() == 1)
                .map(|m| format!("--{}", m[0].0));
            let long = full.as_deref().unwrap_or(w);
            if let Some((_, short)) = entry.long.iter().find(|(l, _)| *l == long) {
                flags.push(mapped(short));
                continue;
            }
            let cluster = w.strip_prefix('-').filter(|c| {
                !c.is_empty() && !c.starts_with('-') && c.chars().all(|l| entry.letters.contains(l))
            });
            if let Some(cluster) = cluster {
                flags.extend(cluster.chars().map(|l| mapped(&format!("-{l}"))));
                continue;
            }
        }
        others.push(w);
    }
    flags.sort();
    flags.dedup();
    let mut out: Vec<&str> = words[..start].to_vec();
    out[0] = name;
    out.extend(flags.iter().map(String::as_str));
    out.extend(others);
    Some(out.join(" "))
}

/// The sed scripts of `sed` at `words[at]`: each `-e SCRIPT`,
/// `--expression=SCRIPT`, or else the first operand; with the index of the
/// word that holds it.
pub fn sed_scripts<'a>(words: &[&'a str], at: usize) -> Vec<(usize, &'a str)> {
    let parsed = parse_command(words, at, None);
    let mut out = Vec::new();
    for a in &parsed.args {
        if let Arg::Opt {
            name,
            value: Some(v),
            ..
        } = a
        {
            if name.is("-e") || name.is("--expression") {
                out.push((v.word, v.text(words)));
            }
        }
    }
    if out.is_empty() && !parsed.has_any(&["-f", "--file"]) {
        if let Some(&i) = parsed.operands().first() {
            out.push((i, words[i]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_a_plain_name() {
        for p in TEXT_ONLY_PROGRAMS {
            assert!(!p.is_empty() && !p.contains([' ', '/']), "{p:?}");
        }
        for (p, opts) in TEXT_OPTIONS {
            assert!(!p.is_empty() && !opts.is_empty(), "{p:?}");
            for o in *opts {
                assert!(o.starts_with('-') && !o.contains('='), "{o:?}");
                assert!(text_option(p, o));
            }
        }
        assert!(text_only("echo") && !text_only("cat"));
        assert!(!text_option("git", "-o"));
    }
}
