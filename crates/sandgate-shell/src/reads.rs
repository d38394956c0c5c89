//! What programs read beyond the words they are given, as the facets of a
//! registry entry ([`super::registry`]) and the code that reads them: the
//! whole directory trees a program reads ([`RecursiveReader`],
//! [`recursive_reads`]), option values that name a file in a form of their
//! own (`curl -d @FILE`, [`FileForm`], [`file_values`]), interpreters that
//! read their program from standard input ([`Interpreter`]); beside them,
//! what is not about one program: shell settings that widen what a pattern
//! matches ([`GLOB_OPTIONS`]), where `cd`, `pushd` and `popd` move
//! ([`directory_change`]), and the commands that make symlinks. The
//! functions here read words; they know nothing of the disk.

pub use super::entry::{FileForm, Interpreter, Reach, RecursiveReader, Roots};
use super::options::{grammar_of, parse, parse_command, Arg, ValueKind, UNKNOWN};
use super::programs::subcommand_at;
use super::registry::{entry_named, without_version, Chdir, GlobOptions, Special};

/// The trees `words[at..]` reads (indices into `words`; `None` for the
/// working directory when no tree is named), whether it reads dot-files and
/// what it takes; `None` when the command reads no tree.
pub fn recursive_reads(
    words: &[&str],
    at: usize,
) -> Option<(&'static RecursiveReader, Vec<Option<usize>>, bool)> {
    let name = words[at].rsplit('/').next().unwrap_or(words[at]);
    let readers = entry_named(name)?.reads;
    if readers.is_empty() {
        return None;
    }
    let sub = subcommand_at(words, at);
    let entry = readers.iter().find(|r| {
        r.subcommand
            .is_none_or(|s| sub.is_some_and(|i| words[i] == s))
    })?;
    let (parsed, start) = match (entry.subcommand, sub) {
        (Some(_), Some(i)) => (parse_command(words, at, Some(i)), i + 1),
        _ => (parse_command(words, at, None), at + 1),
    };
    let has = |opts: &[&str]| {
        opts.iter().any(|o| match o.split_once(' ') {
            // `-d recurse`, `--directories=rec`: GNU reads an abbreviated value too.
            Some((opt, value)) => parsed.values(opt).any(|v| {
                let v = v.text(words);
                !v.is_empty() && value.starts_with(v)
            }),
            None => parsed.has(o),
        })
    };
    if has(entry.not_reading) || (!entry.recursive.is_empty() && !has(entry.recursive)) {
        return None;
    }
    let hidden = entry.hidden.is_none_or(has);
    let (operands, given) = match entry.roots {
        Roots::StartPoints => (find_start_points(words, at, start), false),
        Roots::AfterPattern(p) => (parsed.operands(), parsed.has_any(p)),
        _ => (parsed.operands(), false),
    };
    let mut roots: Vec<Option<usize>> = match entry.roots {
        Roots::All | Roots::StartPoints => operands.iter().map(|&i| Some(i)).collect(),
        Roots::AllButLast => {
            let target = has(&["-t", "--target-directory"]);
            let keep = if target {
                operands.len()
            } else {
                operands.len().saturating_sub(1)
            };
            operands[..keep].iter().map(|&i| Some(i)).collect()
        }
        Roots::AllButFirst => operands.iter().skip(1).map(|&i| Some(i)).collect(),
        Roots::AfterPattern(_) => {
            let skip = usize::from(!given);
            operands.iter().skip(skip).map(|&i| Some(i)).collect()
        }
    };
    if roots.is_empty() && entry.default_here {
        roots.push(None);
    }
    Some((entry, roots, hidden))
}

/// `find`'s start points: after its leading options (`-H`, `-L`, `-P`,
/// `-D LIST`, `-O3`, by its grammar), the words before the first expression
/// word.
fn find_start_points(words: &[&str], at: usize, start: usize) -> Vec<usize> {
    let g = grammar_of(words[at], None).unwrap_or(&UNKNOWN);
    let mut i = start;
    while let Some(t) = words.get(i) {
        let mut chars = t.chars();
        let (Some('-'), Some(c)) = (chars.next(), chars.next()) else {
            break;
        };
        let alone = chars.next().is_none();
        match g.short_kind(c) {
            Some(ValueKind::Required) if alone => i += 2,
            Some(ValueKind::None) if alone => i += 1,
            Some(ValueKind::Optional) => i += 1,
            _ => break,
        }
    }
    let mut out = Vec::new();
    while let Some(t) = words.get(i) {
        if (t.starts_with(['-', '(', '!', ',']) && *t != "-") || *t == ")" {
            break;
        }
        out.push(i);
        i += 1;
    }
    out
}

/// The files named by option values of `words[at..]` in the forms its
/// entry's `file_values` give, and by its request items when its entry says
/// `file_items`: the index of the word and the file's text.
pub fn file_values(words: &[&str], at: usize) -> Vec<(usize, String)> {
    let name = words[at].rsplit('/').next().unwrap_or(words[at]);
    let Some(entry) = entry_named(name) else {
        return Vec::new();
    };
    if entry.file_items {
        return (at + 1..words.len())
            .filter(|&i| !words[i].starts_with('-'))
            .filter_map(|i| words[i].split_once('@').map(|(_, f)| (i, f.to_string())))
            .collect();
    }
    let options = entry.file_values;
    if options.is_empty() {
        return Vec::new();
    }
    let parsed = parse_command(words, at, None);
    let mut out = Vec::new();
    for a in &parsed.args {
        let Arg::Opt {
            name,
            value: Some(v),
            ..
        } = a
        else {
            continue;
        };
        for (opt, form) in options {
            if name.is(opt) {
                for file in files_in(v.text(words), *form) {
                    out.push((v.word, file));
                }
            }
        }
    }
    out
}

fn files_in(value: &str, form: FileForm) -> Vec<String> {
    match form {
        FileForm::Glob => {
            if value.contains(['{', '[']) {
                vec![value.to_string()]
            } else {
                Vec::new()
            }
        }
        FileForm::At => value
            .strip_prefix('@')
            .map(|f| vec![f.to_string()])
            .unwrap_or_default(),
        FileForm::NameAt => match (value.find('='), value.find('@')) {
            (Some(e), Some(a)) if e < a => Vec::new(),
            (_, Some(a)) => vec![value[a + 1..].to_string()],
            _ => Vec::new(),
        },
        FileForm::Form => {
            let Some((_, v)) = value.split_once('=') else {
                return Vec::new();
            };
            let Some(files) = v.strip_prefix(['@', '<']) else {
                return Vec::new();
            };
            let files = files.split(';').next().unwrap_or(files);
            let files = files.trim_matches('"');
            let mut out: Vec<String> = files.split(',').map(str::to_string).collect();
            if out.len() > 1 {
                out.push(files.to_string());
            }
            out
        }
    }
}

/// The local path of a `file:` URL (`file:///etc/passwd`,
/// `file://localhost/etc/passwd`, `FILE:/etc/passwd`), percent-decoded as
/// curl decodes it; `None` for any other word.
pub fn file_url_path(word: &str) -> Option<String> {
    let scheme = word.get(..5)?;
    if !scheme.eq_ignore_ascii_case("file:") {
        return None;
    }
    let rest = &word[5..];
    let path = match rest.strip_prefix("//") {
        Some(after) => &after[after.find('/').unwrap_or(after.len())..],
        None => rest,
    };
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    let path = String::from_utf8_lossy(&out).into_owned();
    Some(if path.is_empty() { "/".into() } else { path })
}

/// Shell options that make a pattern match more than bash's defaults do:
/// dot-files (`dotglob`, zsh's `globdots`), any case (`nocaseglob`), any
/// depth (`globstar`) or extended patterns (`extglob`). Compared without
/// case, `_` or `-`, and without a leading `no` (zsh's `unsetopt caseglob`
/// and `setopt nocaseglob` are one setting).
pub const GLOB_OPTIONS: &[&str] = &[
    "dotglob",
    "globdots",
    "caseglob",
    "globstar",
    "globstarshort",
    "extglob",
    "extendedglob",
    "kshglob",
    "globasciiranges",
    "globsubst",
];

/// Variables whose assignment changes what patterns match: a non-empty
/// `GLOBIGNORE` turns on `dotglob`; `BASHOPTS` and `SHELLOPTS` set options
/// for the shells a command starts.
pub const GLOB_VARIABLES: &[&str] = &["GLOBIGNORE", "BASHOPTS", "SHELLOPTS"];

/// Whether the shell option `name` widens patterns.
pub fn widens_globs(name: &str) -> bool {
    let mut n: String = name
        .chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .collect::<String>()
        .to_ascii_lowercase();
    if let Some(rest) = n.strip_prefix("no") {
        n = rest.to_string();
    }
    GLOB_OPTIONS.contains(&n.as_str())
}

/// Why the command `words[at..]` widens what later patterns match (`shopt
/// -s dotglob`, `bash -O nocaseglob`, `set -o globstar`, zsh's `setopt`), or
/// `None`. `expansion[i]`: whether word `i` holds an expansion, which could
/// name any option.
pub fn glob_widening(words: &[&str], expansion: &[bool], at: usize) -> Option<String> {
    let name = words[at].rsplit('/').next().unwrap_or(words[at]);
    let args = &words[at + 1..];
    let unknown = expansion
        .get(at + 1..)
        .unwrap_or_default()
        .iter()
        .any(|e| *e);
    let named = |opts: &[&str]| opts.iter().any(|o| widens_globs(o));
    let by = || {
        Some(format!(
            "`{}` changes what patterns match",
            words[at..].join(" ")
        ))
    };
    let kind = entry_named(name)?.special.iter().find_map(|s| match s {
        Special::SetsGlobOptions(kind) => Some(*kind),
        _ => None,
    })?;
    match kind {
        GlobOptions::Shopt => {
            // `shopt -s NAME…`, as its grammar reads it.
            let parsed = parse_command(words, at, None);
            let names: Vec<&str> = parsed.operands().iter().map(|&i| words[i]).collect();
            if parsed.has("-s") && (unknown || named(&names)) {
                return by();
            }
        }
        GlobOptions::Setopt if unknown || named(args) => return by(),
        GlobOptions::Setopt => {}
        GlobOptions::Flags { capital_g } => {
            // `-o NAME`, `+o NAME`, `-O NAME`, `+O NAME`, ksh's `-G`, as the
            // command's grammar reads its options (`bash -eO globstar`):
            // only those before the script count.
            let parsed = parse_command(words, at, None);
            for a in &parsed.args {
                // An option word holding an expansion could spell any
                // option (`set -$X globdots`, where `X=o`).
                let (Arg::Opt { word, .. } | Arg::Unknown { word }) = a else {
                    continue;
                };
                if expansion.get(*word).copied().unwrap_or(false) {
                    return by();
                }
                let Arg::Opt { name, value, .. } = a else {
                    continue;
                };
                if name.is("-G") && capital_g {
                    return by();
                }
                if !(name.is("-o") || name.is("-O")) {
                    continue;
                }
                let Some(v) = value else { continue };
                let opaque = expansion.get(v.word).copied().unwrap_or(false);
                if opaque || widens_globs(v.text(words)) {
                    return by();
                }
            }
        }
    }
    None
}

/// Where a `cd`, `pushd` or `popd` leaves the shell, as bash reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// Where it was: `pushd -n DIR`, `popd -n`, or a line bash refuses
    /// without moving (`pushd A B`: too many arguments).
    Stays,
    /// To `$HOME` (`cd` alone).
    Home,
    /// To the directory the word at this index names (`cd DIR`, `pushd --
    /// -dir`).
    To(usize),
    /// Somewhere known only when it runs: `popd`, `pushd` alone (it swaps
    /// the stack's top two), `pushd +N` / `-N` (it rotates the stack), `cd -`
    /// and `pushd -` (the previous directory), an option bash refuses that
    /// another shell reads (zsh's `pushd -q DIR`).
    Unknown,
}

/// What a `cd`, `pushd` or `popd` does to the working directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirectoryChange {
    /// Where bash leaves it.
    pub to: Move,
    /// The word zsh reads as OLD in its `cd OLD NEW` / `pushd OLD NEW`
    /// (the working directory with OLD replaced by NEW), bash's `pushd -n
    /// DIR` among them: the second to last word when there are two or more
    /// after zsh's own options (`-q`, `-s`, `-L`, `-P`) and a `--`. When
    /// `$PWD` holds that text, zsh moves where bash does not.
    pub zsh_old: Option<usize>,
}

/// What the command `words[at..]` does to the working directory, if it is
/// a `cd`, `pushd` or `popd` ([`Special::ChangesDirectory`]), its options
/// read by the one argv parser with its entry's grammar.
pub fn directory_change(words: &[&str], at: usize) -> Option<DirectoryChange> {
    let name = words[at].rsplit('/').next().unwrap_or(words[at]);
    let how = entry_named(name)?.special.iter().find_map(|s| match s {
        Special::ChangesDirectory(how) => Some(*how),
        _ => None,
    })?;
    let parsed = parse_command(words, at, None);
    let operands = parsed.operands();
    let after_dashes = |i: usize| parsed.end_of_options.is_some_and(|e| i > e);
    let unknown_option = parsed.args.iter().any(|a| matches!(a, Arg::Unknown { .. }));
    let to = match how {
        // `cd [-L|-P [-e]] [-@] [DIR]`: the first operand; a `-`, `+N` or
        // `-N` word is left unknown.
        Chdir::Cd => match operands.first() {
            None => Move::Home,
            Some(&i) if words[i].starts_with(['+', '-']) => Move::Unknown,
            Some(&i) => Move::To(i),
        },
        Chdir::Pushd if parsed.has("-n") => Move::Stays,
        Chdir::Pushd if unknown_option => Move::Unknown,
        Chdir::Pushd => match operands[..] {
            [] => Move::Unknown,
            // `pushd -` is `cd -`, even after `--`.
            [i] if words[i] == "-" => Move::Unknown,
            [i] if words[i].starts_with(['+', '-']) && !after_dashes(i) => Move::Unknown,
            [i] => Move::To(i),
            // bash: too many arguments.
            _ => Move::Stays,
        },
        Chdir::Popd if parsed.has("-n") => Move::Stays,
        Chdir::Popd => Move::Unknown,
    };
    // zsh's own options (`-q`, `-s`, `-L`, `-P`) and a `--` after them end
    // before OLD; any other word, `-n` among them, is an operand to zsh.
    let zsh_options = |w: &str| {
        w.strip_prefix('-')
            .is_some_and(|l| !l.is_empty() && l.chars().all(|c| "qsLP".contains(c)))
    };
    let mut first = at
        + 1
        + words[at + 1..]
            .iter()
            .take_while(|w| zsh_options(w))
            .count();
    if words.get(first) == Some(&"--") {
        first += 1;
    }
    let args = words.len().saturating_sub(first);
    let zsh_old = (how != Chdir::Popd && args >= 2).then(|| words.len() - 2);
    Some(DirectoryChange { to, zsh_old })
}

/// The operands of `ln -s` / `cp -s` that name the symlinks made, as
/// indices into `words`, and the targets (for `DIR/basename` when the
/// destination is a directory); `None` when the command makes no symlink.
pub fn symlinks_made(words: &[&str], at: usize) -> Option<(Vec<usize>, Vec<usize>)> {
    let name = words[at].rsplit('/').next().unwrap_or(words[at]);
    let long = entry_named(name)?.special.iter().find_map(|s| match s {
        Special::MakesSymlinks(long) => Some(*long),
        _ => None,
    })?;
    let parsed = parse_command(words, at, None);
    if !parsed.has_any(&["-s", long]) {
        return None;
    }
    let target_dir = ["-t", "--target-directory"]
        .iter()
        .find_map(|o| parsed.values(o).last())
        .map(|v| v.word);
    let mut operands = parsed.operands();
    let (links, targets) = match target_dir {
        Some(d) => (vec![d], operands),
        None if operands.len() > 1 => {
            let last = operands.pop().unwrap_or_default();
            (vec![last], operands)
        }
        None => (Vec::new(), operands),
    };
    Some((links, targets))
}

/// The interpreter called `name` (`python3.12` is `python`).
pub fn interpreter_named(name: &str) -> Option<&'static Interpreter> {
    let base = without_version(name);
    entry_named(base)?.interpreter.as_ref()
}

/// Paths that are the standard input of the program that opens them.
pub const STDIN_PATHS: &[&str] = &["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];

/// Whether the interpreter `words[at]` reads its program from standard
/// input: no program option, and no script operand (or `-`, `/dev/stdin`).
pub fn reads_program_from_stdin(interp: &Interpreter, words: &[&str], at: usize) -> bool {
    let g = grammar_of(interp.name, None).unwrap_or(&UNKNOWN);
    let parsed = parse(g, words, at + 1);
    for a in &parsed.args {
        match a {
            Arg::Opt { name, .. } => {
                let is = |list: &[&str]| list.iter().any(|o| name.is(o));
                if is(interp.stops) {
                    return false;
                }
                if is(interp.interactive) {
                    return true;
                }
                if is(interp.program_options) {
                    return false;
                }
            }
            Arg::Unknown { word } => {
                if interp.stops.contains(&words[*word]) {
                    return false;
                }
            }
            Arg::Operand(i) => return STDIN_PATHS.contains(&words[*i]),
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<&str> {
        s.split(' ').collect()
    }

    #[test]
    fn trees_read() {
        let roots = |s: &str| {
            let w = split(s);
            recursive_reads(&w, 0).map(|(_, r, hidden)| {
                let r: Vec<&str> = r.iter().map(|i| i.map_or(".", |i| w[i])).collect();
                (r.join(" "), hidden)
            })
        };
        assert_eq!(roots("grep -r x ~"), Some(("~".into(), true)));
        assert_eq!(roots("grep -rn -e x a b"), Some(("a b".into(), true)));
        assert_eq!(roots("grep -r x"), Some((".".into(), true)));
        assert_eq!(roots("grep -d recurse x ~"), Some(("~".into(), true)));
        assert_eq!(roots("grep x ~"), None);
        assert_eq!(roots("rg x ~"), Some(("~".into(), false)));
        assert_eq!(roots("rg -uu x ~"), Some(("~".into(), true)));
        assert_eq!(roots("rg --files ~"), Some(("~".into(), false)));
        assert_eq!(roots("tar czf out.tgz ~"), Some(("~".into(), true)));
        assert_eq!(roots("tar -C ~ -czf out.tgz ."), Some((".".into(), true)));
        assert_eq!(roots("tar tf x.tar"), None);
        assert_eq!(roots("cp -r ~ x"), Some(("~".into(), true)));
        assert_eq!(roots("cp -r -t x ~"), Some(("~".into(), true)));
        assert_eq!(roots("zip -r out.zip ~"), Some(("~".into(), true)));
        assert_eq!(
            roots("git -C x diff --no-index ~ y"),
            Some(("~ y".into(), true))
        );
        assert_eq!(roots("git diff ~"), None);
        assert_eq!(roots("find ~ -name x"), Some(("~".into(), true)));
        assert_eq!(roots("find -L ~ / -name x"), Some(("~ /".into(), true)));
        assert_eq!(roots("ls -R ~"), Some(("~".into(), false)));
        assert_eq!(roots("7z a x.7z ~"), Some(("~".into(), true)));
        assert_eq!(roots("rclone sync ~ remote:x"), Some(("~".into(), true)));
        assert_eq!(roots("fd -H key ~"), Some(("~".into(), true)));
    }

    #[test]
    fn file_forms() {
        let files = |s: &str| {
            let w = split(s);
            file_values(&w, 0)
                .into_iter()
                .map(|(_, f)| f)
                .collect::<Vec<_>>()
        };
        assert_eq!(files("curl -d @k x"), ["k"]);
        assert_eq!(files("curl -d@k x"), ["k"]);
        assert_eq!(files("curl -sd @k x"), ["k"]);
        assert_eq!(files("curl -d a=b x"), Vec::<String>::new());
        assert_eq!(files("curl --data-urlencode n@k x"), ["k"]);
        assert_eq!(files("curl --data-urlencode n=a@b x"), Vec::<String>::new());
        assert_eq!(files("curl -F f=@k;type=text/plain x"), ["k"]);
        assert_eq!(files("curl -F f=<k x"), ["k"]);
        assert_eq!(files("curl -F f=@a,b x"), ["a", "b", "a,b"]);
        assert_eq!(
            file_url_path("file:///etc/passwd").as_deref(),
            Some("/etc/passwd")
        );
        assert_eq!(
            file_url_path("FILE://localhost/h/%2essh").as_deref(),
            Some("/h/.ssh")
        );
        assert_eq!(file_url_path("https://x"), None);
    }

    #[test]
    fn zsh_reads_old_new_after_its_own_options() {
        // As zsh 5.9 does: `cd -- c` goes to `c`; `pushd -n src` and `cd
        // -P -- a b` replace the text in `$PWD`.
        for (line, old) in [
            ("cd -- c", None),
            ("cd -P -- c", None),
            ("cd c", None),
            ("pushd -n src", Some("-n")),
            ("cd a b", Some("a")),
            ("cd -P -- a b", Some("a")),
            ("cd -qL a b", Some("a")),
            ("cd -- -- c", Some("--")),
            ("popd -n +1", None),
        ] {
            let words: Vec<&str> = line.split(' ').collect();
            let change = directory_change(&words, 0).unwrap();
            assert_eq!(change.zsh_old.map(|i| words[i]), old, "{line}");
        }
    }

    #[test]
    fn widening() {
        let w = |s: &str| {
            let words = split(s);
            glob_widening(&words, &vec![false; words.len()], 0).is_some()
        };
        assert!(w("shopt -s dotglob"));
        assert!(w("shopt -s nullglob dotglob"));
        assert!(!w("shopt -s nullglob"));
        assert!(!w("shopt -u dotglob"));
        assert!(w("bash -O nocaseglob -c x"));
        assert!(w("setopt GLOB_DOTS"));
        assert!(w("unsetopt caseglob"));
        assert!(w("set -o globstar"));
        assert!(!w("set -o pipefail"));
        assert!(!w("bash -c x"));
    }

    #[test]
    fn stdin_programs() {
        let reads = |s: &str| {
            let w = split(s);
            let i = interpreter_named(w[0]).expect("an interpreter");
            reads_program_from_stdin(i, &w, 0)
        };
        assert!(reads("python3"));
        assert!(reads("python3.12 -u -"));
        assert!(reads("python3 -W ignore"));
        assert!(!reads("python3 x.py"));
        assert!(!reads("python3 -m http.server"));
        assert!(!reads("python3 --version"));
        assert!(reads("node /dev/stdin"));
        assert!(!reads("node -v"));
        assert!(reads("perl -w"));
        assert!(!reads("ruby x.rb"));
        assert!(reads("python3 -i x.py"));
        assert!(reads("php -a"));
    }
}
