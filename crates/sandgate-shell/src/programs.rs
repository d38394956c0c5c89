//! What programs do with their options and operands, as the facets of a
//! registry entry ([`super::registry`]) and the code that reads them: the
//! options and subcommands that run another program, hide one, write what
//! the gate does not judge or take file names from input ([`Program`],
//! read by the walker), which operands and option values a program writes
//! ([`Writer`], [`written`]), how common flags are spelled
//! ([`FlagSpelling`], [`spelled`]), which options take a message, and the
//! scanners of sed scripts and awk programs. Beside them, what is not about
//! one program: the environment variables that pick a program or name a
//! file ([`PROGRAM_VARIABLES`], [`FILE_VARIABLES`]), and the test of a
//! configuration key against the keys an entry lists ([`program_key`]).
//! Options are named in
//! full; how a command spells them (abbreviated, clustered, with an
//! attached value) is read by the one argv parser ([`super::options`]) from
//! the program's grammar. What no facet says as data is a named behaviour
//! of the entry ([`super::registry::Special`]), implemented here: `find`'s
//! `-delete` and `-fprint*`, git's `--output`, `sed -i`, and the sources
//! `mv` moves.

pub use super::entry::{FlagSpelling, Program, RunningOption, Runs, Writer, WrittenOperands};
use super::grammar::ValueKind;
use super::options::{grammar_of, parse, parse_command, Arg, Value, UNKNOWN};
use super::registry::{entry_named, Special};

/// Whether `program` only prints or compares its words.
pub fn text_only(program: &str) -> bool {
    entry_named(program).is_some_and(|e| e.text_only)
}

/// Whether `option` of `program` takes a message.
pub fn text_option(program: &str, option: &str) -> bool {
    entry_named(program).is_some_and(|e| e.text_options.contains(&option))
}

/// The words of the command `words[at..]` that hold the value of a message
/// option (its entry's `text_options`), as the program's grammar (its subcommand's,
/// for a program with subcommands) reads them: `--mess=…` is `--message`.
pub fn text_values(words: &[&str], at: usize) -> Vec<usize> {
    let name = words[at].rsplit('/').next().unwrap_or(words[at]);
    let options = match entry_named(name) {
        Some(e) if !e.text_options.is_empty() => e.text_options,
        _ => return Vec::new(),
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

/// Whether the configuration key `key` names a program or more settings, by
/// the keys and last parts of a [`Special::ProgramSettings`] (git's):
/// compared without case, as whole keys, as prefixes ending in `.`, or as a
/// last part.
pub fn program_key(keys: &[&str], key_ends: &[&str], key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    if keys.iter().any(|p| key.starts_with(p)) {
        return true;
    }
    let last = key.rsplit('.').next().unwrap_or(&key);
    key_ends.contains(&last)
}

/// The [`Program`] facet of the program called `name`, if its entry has one.
pub fn program_named(name: &str) -> Option<&'static Program> {
    entry_named(name)?.runs.as_ref()
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

/// The [`Writer`] facet of the program called `name`, if its entry has one.
pub fn writer_named(name: &str) -> Option<&'static Writer> {
    entry_named(name)?.writes.as_ref()
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

/// The files the command `words[at..]` writes, by its entry's [`Writer`], by
/// git's `--output`/`-o`, and by `find`'s `-delete` and `-fprint*`.
pub fn written(words: &[&str], at: usize) -> Vec<Written> {
    let name = words[at].rsplit('/').next().unwrap_or(words[at]);
    let Some(entry) = entry_named(name) else {
        return Vec::new();
    };
    for special in entry.special {
        match special {
            Special::FindExpression => return find_writes(words, at),
            Special::OutputOptions { short_o } => return output_writes(words, at, short_o),
            Special::SedScripts => return sed_in_place(words, at),
            _ => {}
        }
    }
    let Some(w) = entry.writes.as_ref() else {
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
            if entry.has(Special::RemovesSources) {
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

/// [`Special::OutputOptions`] (git's): `--output=FILE` (diff, log,
/// format-patch, …), `--output-directory`, and `-o` in the subcommands
/// `short_o` names (`format-patch -o DIR`, `archive -o FILE`), read by the
/// subcommand's grammar; a subcommand without one has each `--output` word
/// read as one.
fn output_writes(words: &[&str], at: usize, short_o: &[&str]) -> Vec<Written> {
    let mut out = Vec::new();
    let Some(sub) = subcommand_at(words, at) else {
        return out;
    };
    let value = |v: Value| Written {
        word: v.word,
        offset: v.offset,
        recursive: false,
    };
    if grammar_of(words[at], Some(words[sub])).is_none() {
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
    let o_writes = short_o.contains(&words[sub]);
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

/// The command `words` (its name first, global options already stripped)
/// with its flags in one spelling: each flag on its own, long names (or
/// their abbreviations, for a program that reads them) as their short
/// letter, sorted and without repeats, before the other words in their
/// order. `rm -fr /`, `rm -r -f /`, `rm --recursive --force /` and
/// `rm / -rf` are all `rm -f -r /`. `None` when the program has no entry.
pub fn spelled(words: &[&str]) -> Option<String> {
    spellings(words).into_iter().next()
}

/// [`spelled`]'s form first, then, for each of its flags but the first,
/// the same with that flag moved first: a deny rule that names one flag
/// right after the command (`^git push -f`) matches however many flags come
/// with it (`git push -df` is also `git push -d -f` and `git push -f -d`).
/// Empty when the program has no entry.
pub fn spellings(words: &[&str]) -> Vec<String> {
    let Some((head, flags, others)) = flags_apart(words) else {
        return Vec::new();
    };
    let form = |first: Option<usize>| {
        let mut out: Vec<&str> = head.clone();
        out.extend(first.map(|i| flags[i].as_str()));
        out.extend(
            flags
                .iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != first)
                .map(|(_, f)| f.as_str()),
        );
        out.extend(&others);
        out.join(" ")
    };
    let mut out = vec![form(None)];
    out.extend((1..flags.len()).map(|i| form(Some(i))));
    out
}

/// The words before the flags (the name, without its directory, and the
/// subcommand), the flags in one spelling (sorted, without repeats) and the
/// other words in their order.
fn flags_apart<'a>(words: &[&'a str]) -> Option<(Vec<&'a str>, Vec<String>, Vec<&'a str>)> {
    let name = words.first()?.rsplit('/').next()?;
    let entry = entry_named(name)?
        .spellings
        .iter()
        .find(|e| e.subcommand.is_none_or(|s| words.get(1) == Some(&s)))?;
    let start = if entry.subcommand.is_some() { 2 } else { 1 };
    let grammar = grammar_of(name, entry.subcommand);
    let mapped = |f: &str| -> String {
        entry
            .same
            .iter()
            .find(|(a, _)| *a == f)
            .map_or(f.to_string(), |(_, b)| (*b).to_string())
    };
    // A letter of a cluster: one of the entry's, or a flag of the grammar
    // (`git push -df`: `-d` deletes, `-f` forces).
    let flag_letter = |l: char| {
        entry.letters.contains(l)
            || grammar.is_some_and(|g| g.short_kind(l) == Some(ValueKind::None))
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
            let cluster = w
                .strip_prefix('-')
                .filter(|c| !c.is_empty() && !c.starts_with('-') && c.chars().all(flag_letter));
            if let Some(cluster) = cluster {
                flags.extend(cluster.chars().map(|l| mapped(&format!("-{l}"))));
                continue;
            }
        }
        others.push(w);
    }
    flags.sort();
    flags.dedup();
    let mut head: Vec<&str> = words[..start].to_vec();
    head[0] = name;
    Some((head, flags, others))
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
        use crate::registry::REGISTRY;
        for e in REGISTRY {
            let p = e.name;
            assert!(!p.is_empty() && !p.contains([' ', '/']), "{p:?}");
            for o in e.text_options {
                assert!(o.starts_with('-') && !o.contains('='), "{o:?}");
                assert!(text_option(p, o));
            }
        }
        assert!(text_only("echo") && !text_only("cat"));
        assert!(!text_option("git", "-o"));
    }
}
