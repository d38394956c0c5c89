//! What the gate knows about single programs' arguments, kept as data beside
//! [`super::WRAPPERS`]: which programs only print or compare their arguments
//! (so a word whose value is unknown cannot make them open a file), which
//! options take a message rather than a path, which options, subcommands and
//! environment variables run another program ([`PROGRAMS`],
//! [`PROGRAM_VARIABLES`]), which global options are stripped before a
//! subcommand, how common flags are spelled ([`FLAG_SPELLINGS`]), and which
//! operands a program writes ([`WRITERS`]). The code that reads the tables
//! knows nothing about any one program.

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

/// A program whose options or subcommands run other programs, and the
/// global options stripped before its subcommand.
#[derive(Debug, Clone, Copy)]
pub struct Program {
    /// The command name (also matched as the last component of a path).
    pub name: &'static str,
    /// Options (anywhere after the name) that run something.
    pub options: &'static [RunningOption],
    /// Subcommands (the first word after the global options) and the
    /// options that run something there; an option named `""` means the
    /// words after the subcommand itself (`git bisect run CMD`).
    pub subcommands: &'static [(&'static [&'static str], &'static [RunningOption])],
    /// Global options before the subcommand that take no value.
    pub global_flags: &'static [&'static str],
    /// Global options before the subcommand that take a value, attached
    /// (`--git-dir=x`, `-Cdir`) or as the next word.
    pub global_with_value: &'static [&'static str],
    /// The first operand is program text (`awk 'PROGRAM'`), scanned for what
    /// runs programs or writes files, unless one of these options gives the
    /// program instead.
    pub text_operand: Option<&'static [&'static str]>,
}

const fn program(name: &'static str) -> Program {
    Program {
        name,
        options: &[],
        subcommands: &[],
        global_flags: &[],
        global_with_value: &[],
        text_operand: None,
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
        ],
        ..program("find")
    },
    Program {
        options: &[
            hidden("--exec-path"),
            hidden("--config-env"),
            names_from("--pathspec-from-file"),
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
        ],
        global_flags: &[
            "-p",
            "--paginate",
            "-P",
            "--no-pager",
            "--no-replace-objects",
            "--no-lazy-fetch",
            "--no-optional-locks",
            "--no-advice",
            "--bare",
            "--literal-pathspecs",
            "--glob-pathspecs",
            "--noglob-pathspecs",
            "--icase-pathspecs",
            "--html-path",
            "--man-path",
            "--info-path",
        ],
        global_with_value: &[
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--super-prefix",
            "--attr-source",
            "--list-cmds",
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
        options: &[hidden("--compress-program"), names_from("--files0-from")],
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
        options: &[hidden("--pre")],
        ..program("rg")
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
        options: &[
            hidden("-e"),
            hidden("--eval"),
            hidden("-p"),
            hidden("--print"),
        ],
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
pub const GIT_PROGRAM_KEYS: &[&str] = &["alias.", "pager.", "filter.", "include.", "includeif."];

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
    PROGRAM_VARIABLES.iter().any(|v| match v.strip_suffix('*') {
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
/// delete or change.
#[derive(Debug, Clone, Copy)]
pub struct Writer {
    /// The command name.
    pub name: &'static str,
    /// Which operands are written.
    pub operands: WrittenOperands,
    /// Short options that take a value (so the value is no operand), as letters.
    pub short_with_value: &'static str,
    /// Long options that take a value, attached with `=` or as the next word.
    pub long_with_value: &'static [&'static str],
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
        short_with_value: "",
        long_with_value: &[],
        writes_value: &[],
        recursive: &[],
        assigned: &[],
    }
}

/// Programs that write their operands, for the path write check.
pub const WRITERS: &[Writer] = &[
    Writer {
        short_with_value: "tS",
        long_with_value: &[
            "--target-directory",
            "--suffix",
            "--backup",
            "--reflink",
            "--sparse",
            "--preserve",
            "--no-preserve",
            "--context",
        ],
        writes_value: &["-t", "--target-directory"],
        recursive: &["-r", "-R", "--recursive", "-a", "--archive"],
        ..writer("cp", WrittenOperands::Last)
    },
    Writer {
        short_with_value: "tS",
        long_with_value: &["--target-directory", "--suffix", "--backup", "--context"],
        writes_value: &["-t", "--target-directory"],
        ..writer("mv", WrittenOperands::Last)
    },
    Writer {
        short_with_value: "tSgmoZ",
        long_with_value: &[
            "--target-directory",
            "--suffix",
            "--backup",
            "--group",
            "--mode",
            "--owner",
            "--strip-program",
            "--context",
        ],
        writes_value: &["-t", "--target-directory"],
        ..writer("install", WrittenOperands::Last)
    },
    Writer {
        short_with_value: "tS",
        long_with_value: &["--target-directory", "--suffix", "--backup"],
        writes_value: &["-t", "--target-directory"],
        ..writer("ln", WrittenOperands::Last)
    },
    Writer {
        long_with_value: &["--output-error"],
        ..writer("tee", WrittenOperands::All)
    },
    Writer {
        assigned: &["of"],
        ..writer("dd", WrittenOperands::None)
    },
    Writer {
        short_with_value: "drt",
        long_with_value: &["--date", "--reference", "--time"],
        ..writer("touch", WrittenOperands::All)
    },
    Writer {
        short_with_value: "mZ",
        long_with_value: &["--mode", "--context"],
        ..writer("mkdir", WrittenOperands::All)
    },
    Writer {
        short_with_value: "rs",
        long_with_value: &["--reference", "--size"],
        ..writer("truncate", WrittenOperands::All)
    },
    Writer {
        long_with_value: &["--interactive", "--preserve-root"],
        recursive: &["-r", "-R", "--recursive"],
        ..writer("rm", WrittenOperands::All)
    },
    writer("rmdir", WrittenOperands::All),
    writer("unlink", WrittenOperands::All),
    Writer {
        short_with_value: "nsu",
        long_with_value: &["--iterations", "--size", "--random-source", "--remove"],
        ..writer("shred", WrittenOperands::All)
    },
    Writer {
        long_with_value: &["--reference"],
        recursive: &["-R", "--recursive"],
        ..writer("chmod", WrittenOperands::AllButFirst)
    },
    Writer {
        long_with_value: &["--reference", "--from"],
        recursive: &["-R", "--recursive"],
        ..writer("chown", WrittenOperands::AllButFirst)
    },
    Writer {
        long_with_value: &["--reference"],
        recursive: &["-R", "--recursive"],
        ..writer("chgrp", WrittenOperands::AllButFirst)
    },
    Writer {
        short_with_value: "kotSTy",
        long_with_value: &[
            "--key",
            "--field-separator",
            "--buffer-size",
            "--temporary-directory",
            "--parallel",
            "--files0-from",
            "--random-source",
            "--sort",
            "--batch-size",
            "--output",
        ],
        writes_value: &["-o", "--output"],
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
    let mut out = Vec::new();
    let mut operands = Vec::new();
    let mut recursive = false;
    let mut target_option = false;
    let mut i = at + 1;
    let mut options = true;
    while i < words.len() {
        let t = words[i];
        if options && t == "--" {
            options = false;
            i += 1;
            continue;
        }
        if options && t.starts_with("--") {
            let (opt, value) = match t.split_once('=') {
                Some((o, _)) => (o, Some(o.len() + 1)),
                None => (t, None),
            };
            if w.recursive.contains(&opt) {
                recursive = true;
            }
            if w.long_with_value.contains(&opt) {
                let (word, offset) = match value {
                    Some(off) => (i, off),
                    None => {
                        i += 1;
                        (i, 0)
                    }
                };
                if w.writes_value.contains(&opt) && word < words.len() {
                    target_option = true;
                    out.push(Written {
                        word,
                        offset,
                        recursive: false,
                    });
                }
            }
            i += 1;
            continue;
        }
        if options && t.len() > 1 && t.starts_with('-') {
            for (pos, c) in t.char_indices().skip(1) {
                let short = &t[pos..pos + c.len_utf8()];
                if w.recursive.iter().any(|r| r.len() == 2 && &r[1..] == short) {
                    recursive = true;
                }
                if w.short_with_value.contains(c) {
                    let rest = pos + c.len_utf8();
                    let (word, offset) = if rest < t.len() {
                        (i, rest)
                    } else {
                        i += 1;
                        (i, 0)
                    };
                    if w.writes_value
                        .iter()
                        .any(|o| o.len() == 2 && &o[1..] == short)
                        && word < words.len()
                    {
                        target_option = true;
                        out.push(Written {
                            word,
                            offset,
                            recursive: false,
                        });
                    }
                    break;
                }
            }
            i += 1;
            continue;
        }
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
        i += 1;
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
/// / `--output-directory`, `archive -o FILE`.
fn git_writes(words: &[&str], at: usize) -> Vec<Written> {
    let mut out = Vec::new();
    let sub = words
        .iter()
        .skip(at + 1)
        .position(|w| !w.starts_with('-'))
        .map(|p| p + at + 1);
    for (i, t) in words.iter().enumerate().skip(at + 1) {
        for opt in ["--output", "--output-directory"] {
            if let Some(r) = t.strip_prefix(opt) {
                if r.is_empty() && i + 1 < words.len() {
                    out.push(Written {
                        word: i + 1,
                        offset: 0,
                        recursive: false,
                    });
                } else if r.starts_with('=') {
                    out.push(Written {
                        word: i,
                        offset: opt.len() + 1,
                        recursive: false,
                    });
                }
            }
        }
        let o_writes = sub.is_some_and(|s| matches!(words[s], "format-patch" | "archive"));
        if o_writes && Some(i) > sub && *t == "-o" && i + 1 < words.len() {
            out.push(Written {
                word: i + 1,
                offset: 0,
                recursive: false,
            });
        } else if o_writes
            && Some(i) > sub
            && t.starts_with("-o")
            && t.len() > 2
            && !t.starts_with("--")
        {
            out.push(Written {
                word: i,
                offset: 2,
                recursive: false,
            });
        }
    }
    out
}

/// `sed -i`: every file operand is written (the script is the first operand
/// unless `-e`/`-f` gave it).
fn sed_in_place(words: &[&str], at: usize) -> Vec<Written> {
    let mut in_place = false;
    let mut script_given = false;
    let mut operands = Vec::new();
    let mut i = at + 1;
    while i < words.len() {
        let t = words[i];
        if t == "-i" || t.starts_with("--in-place") || (t.starts_with("-i") && !t.starts_with("--"))
        {
            in_place = true;
        } else if t == "-e" || t == "-f" || t == "--expression" || t == "--file" {
            script_given = true;
            i += 1;
        } else if t.starts_with("--expression=") || t.starts_with("--file=") {
            script_given = true;
        } else if t.starts_with('-') && !t.starts_with("--") && t.len() > 1 {
            if t[1..].contains('i') {
                in_place = true;
            }
            if let Some(p) = t[1..].find(['e', 'f']) {
                script_given = true;
                if p + 2 == t.len() {
                    i += 1;
                }
            }
        } else if !t.starts_with('-') {
            operands.push(i);
        }
        i += 1;
    }
    if !in_place {
        return Vec::new();
    }
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
/// with its flags in one spelling: each flag on its own, long names as their
/// short letter, sorted and without repeats, before the other words in their
/// order. `rm -fr /`, `rm -r -f /`, `rm --recursive --force /` and
/// `rm / -rf` are all `rm -f -r /`. `None` when the program has no entry.
pub fn spelled(words: &[&str]) -> Option<String> {
    let name = words.first()?.rsplit('/').next()?;
    let entry = FLAG_SPELLINGS
        .iter()
        .find(|e| e.program == name && e.subcommand.is_none_or(|s| words.get(1) == Some(&s)))?;
    let start = if entry.subcommand.is_some() { 2 } else { 1 };
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
            if let Some((_, short)) = entry.long.iter().find(|(l, _)| l == w) {
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
    let mut out = Vec::new();
    let mut file_given = false;
    let mut first_operand = None;
    let mut i = at + 1;
    while i < words.len() {
        let t = words[i];
        if t == "-e" || t == "--expression" {
            if let Some(s) = words.get(i + 1) {
                out.push((i + 1, *s));
            }
            i += 2;
            continue;
        }
        if let Some(s) = t.strip_prefix("--expression=") {
            out.push((i, s));
        } else if t == "-f" || t == "--file" {
            file_given = true;
            i += 2;
            continue;
        } else if t.starts_with("--file=") {
            file_given = true;
        } else if t.starts_with('-') && !t.starts_with("--") && t.len() > 1 {
            // A cluster ending in `e` or `f` takes the next word (`-ne SCRIPT`).
            if let Some(p) = t[1..].find(['e', 'f']) {
                let attached = &t[p + 2..];
                let is_e = t.as_bytes()[p + 1] == b'e';
                if attached.is_empty() {
                    if is_e {
                        if let Some(s) = words.get(i + 1) {
                            out.push((i + 1, *s));
                        }
                    } else {
                        file_given = true;
                    }
                    i += 2;
                    continue;
                }
                if is_e {
                    out.push((i, attached));
                } else {
                    file_given = true;
                }
            }
        } else if !t.starts_with('-') && first_operand.is_none() {
            first_operand = Some(i);
        }
        i += 1;
    }
    if out.is_empty() && !file_given {
        if let Some(i) = first_operand {
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
