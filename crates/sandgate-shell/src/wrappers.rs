//! Commands that run other commands: the [`Wrapper`] facet of a registry
//! entry ([`super::registry`]) and the code that reads it ([`skip_wrapper`]),
//! how a shell gets its script ([`shell_invocation`], [`startup_option`]),
//! and the variables whose assignment can change which program runs
//! ([`HIJACKING_VARIABLES`]). Which commands are wrappers, shells, or run
//! text nobody can see is their entries'; the code here knows nothing about
//! any one command. A wrapper's options are read by its grammar.

pub use super::entry::Wrapper;
use super::options::{grammar_of, parse, Arg, UNKNOWN};
use super::reason::Reason;
use super::registry::entry_named;
use super::words::Word;

/// Shell options that run startup files before the script (a login or
/// interactive shell, a given rc file), which the gate cannot see; named in
/// full, each shell's grammar says how it is spelled (`bash -lc`, `+l`,
/// `-login`).
const SHELL_STARTUP: &[&str] = &[
    "-l",
    "-i",
    "--login",
    "--interactive",
    "--rcfile",
    "--init-file",
];

/// Variables that change which program runs or what a shell reads first. A
/// `NAME=value` prefix setting one of them is stripped only for deny rules: an
/// allow rule must match the form that still shows the assignment.
/// A trailing `*` matches any suffix.
pub const HIJACKING_VARIABLES: &[&str] = &[
    "PATH",
    "LD_*",
    "DYLD_*",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "IFS",
    "PROMPT_COMMAND",
    "BASH_FUNC_*",
];

/// Whether assigning `name` can change which program runs.
pub(crate) fn hijacks(name: &str) -> bool {
    HIJACKING_VARIABLES
        .iter()
        .any(|v| match v.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *v,
        })
}

/// The wrapper called `name`, if it is one.
pub(crate) fn wrapper_named(name: &str) -> Option<&'static Wrapper> {
    entry_named(name)?.wrapper.as_ref()
}

/// The name of the variable a `NAME=value` word assigns.
pub(crate) fn assigned_name(word: &str) -> Option<&str> {
    let (name, _) = word.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some(name)
}

/// Where the wrapped command starts, once a wrapper's options are skipped.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Unwrapped {
    /// Index of the wrapped command's name; `None` when the wrapper runs nothing.
    pub command: Option<usize>,
    /// Variables the wrapper assigns (`env X=1`).
    pub assigned: Vec<String>,
    /// An option of the wrapper written as an abbreviation of several
    /// ([`Reason::AmbiguousOption`]): the command is read on, as each of
    /// them would read it, and cannot be allowed by rules.
    pub ambiguous: Option<Reason>,
}

/// Skips the options, assignments and operands of `wrapper`, whose name is
/// `words[at]`. An option its grammar does not know is an error: guessing whether
/// it takes an argument could hide the real command.
pub(crate) fn skip_wrapper(
    wrapper: &Wrapper,
    words: &[Word],
    at: usize,
) -> Result<Unwrapped, Reason> {
    let name = wrapper.name;
    let grammar = grammar_of(name, None).unwrap_or(&UNKNOWN);
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    let mut i = at + 1;
    let mut ambiguous = None;
    while let Some(word) = words.get(i) {
        let t = word.text.as_str();
        if !t.starts_with('-') || t == "-" {
            break;
        }
        if word.has_expansion {
            return Err(Reason::WrapperOptionExpansion {
                wrapper: name.to_string(),
                option: t.to_string(),
            });
        }
        if t == "--" {
            i += 1;
            break;
        }
        if wrapper.numeric_flags && t[1..].chars().all(|c| c.is_ascii_digit()) {
            i += 1;
            continue;
        }
        // This one word, as the wrapper's grammar reads it (its value may be the next word).
        let one = parse(grammar, &texts[..(i + 2).min(texts.len())], i);
        let mut next = i + 1;
        for a in &one.args {
            match a {
                Arg::Opt {
                    name: opt,
                    word,
                    value,
                    ..
                } if *word == i => {
                    if a.ambiguous() && ambiguous.is_none() {
                        let long = t[2..].split('=').next().unwrap_or("");
                        let fits = grammar.resolve_long(long);
                        let reason = Reason::AmbiguousOption {
                            program: name.to_string(),
                            option: format!("--{long}"),
                            candidates: fits.iter().map(|(n, _)| format!("--{n}")).collect(),
                        };
                        // Where the wrapped command starts is only known
                        // when every option it fits reads a value alike.
                        if fits.iter().any(|(_, k)| *k != fits[0].1) {
                            return Err(reason);
                        }
                        ambiguous = Some(reason);
                    }
                    if let Some(o) = wrapper.opaque.iter().find(|o| opt.is(o)) {
                        return Err(Reason::WrapperRunsOpaque {
                            wrapper: name.to_string(),
                            option: o.to_string(),
                        });
                    }
                    if let Some(v) = value {
                        next = next.max(v.word + 1);
                    }
                }
                Arg::Unknown { word } if *word == i => {
                    let unknown = match t.strip_prefix("--") {
                        Some(long) => format!("--{}", long.split('=').next().unwrap_or(long)),
                        None => t
                            .chars()
                            .skip(1)
                            .find(|c| grammar.short_kind(*c).is_none())
                            .map_or_else(|| t.to_string(), |c| format!("-{c}")),
                    };
                    return Err(Reason::WrapperUnknownOption {
                        wrapper: name.to_string(),
                        option: unknown,
                    });
                }
                _ => {}
            }
        }
        i = next;
    }
    let mut assigned = Vec::new();
    if wrapper.assignments {
        while let Some(var) = words.get(i).and_then(|w| assigned_name(&w.text)) {
            assigned.push(var.to_string());
            i += 1;
        }
    }
    i += wrapper.operands;
    let command = (i < words.len()).then_some(i);
    Ok(Unwrapped {
        command,
        assigned,
        ambiguous,
    })
}

/// How a shell named by `words[at]` gets its script.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ShellInvocation {
    /// `-c`: the script is the first operand (`bash -c SCRIPT`), or the
    /// value of each `-c` / `--command` for a shell whose `-c` takes one
    /// (`fish -c A -c B`): the words at these indices.
    Script(Vec<usize>),
    /// `-c` without a script: the shell reports an error and runs nothing.
    MissingScript,
    /// The first operand names a script file.
    File,
    /// The script comes from standard input (`-s`, or no operand).
    Stdin,
}

/// The shell `words[at]`'s options, read by its grammar (a shell the
/// registry has no grammar for: with none, every `-x` an unknown flag).
fn shell_options(texts: &[&str], at: usize) -> super::options::Parsed {
    let g = grammar_of(texts[at], None).unwrap_or(&UNKNOWN);
    parse(g, texts, at + 1)
}

/// The option of the shell `words[at]` that makes it run startup files
/// before its script (`bash -l`, `--login`, `-i`, `--rcfile F`), if any.
pub(crate) fn startup_option(words: &[Word], at: usize) -> Option<&str> {
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    let parsed = shell_options(&texts, at);
    parsed.args.iter().find_map(|a| match a {
        Arg::Opt { name, word, .. } if SHELL_STARTUP.iter().any(|s| name.is(s)) => {
            Some(words[*word].text.as_str())
        }
        _ => None,
    })
}

/// Reads the options of a shell invocation.
pub(crate) fn shell_invocation(words: &[Word], at: usize) -> Result<ShellInvocation, Reason> {
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    let parsed = shell_options(&texts, at);
    for a in &parsed.args {
        let (Arg::Opt { word, .. } | Arg::Unknown { word }) = a else {
            continue;
        };
        if words[*word].has_expansion {
            return Err(Reason::ShellOptionExpansion {
                option: texts[*word].to_string(),
            });
        }
    }
    let script_values = grammar_of(texts[at], None)
        .is_some_and(|g| g.short_kind('c') == Some(super::options::ValueKind::Required));
    if script_values {
        // fish's `-c SCRIPT`, given once or more.
        let mut scripts = Vec::new();
        for a in parsed.given("-c").chain(parsed.given("--command")) {
            let Arg::Opt { word, value, .. } = a else {
                continue;
            };
            match value {
                Some(v) if v.word == *word || v.offset > 0 => {
                    return Err(Reason::ScriptAttached {
                        word: texts[*word].to_string(),
                    })
                }
                Some(v) => scripts.push(v.word),
                None => return Ok(ShellInvocation::MissingScript),
            }
        }
        scripts.sort_unstable();
        if !scripts.is_empty() {
            return Ok(ShellInvocation::Script(scripts));
        }
    } else if parsed.has("-c") {
        return Ok(match parsed.operands().first() {
            Some(&i) => ShellInvocation::Script(vec![i]),
            None => ShellInvocation::MissingScript,
        });
    }
    Ok(if parsed.has("-s") || parsed.operands().is_empty() {
        ShellInvocation::Stdin
    } else {
        ShellInvocation::File
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split(' ')
            .map(|t| Word {
                text: t.to_string(),
                ..Word::default()
            })
            .collect()
    }

    fn skip(line: &str) -> Result<Unwrapped, Reason> {
        let w = words(line);
        let wrapper = wrapper_named(&w[0].text).expect("a wrapper");
        skip_wrapper(wrapper, &w, 0)
    }

    #[test]
    fn options_and_operands_are_skipped() {
        assert_eq!(skip("timeout 5 rm x").unwrap().command, Some(2));
        assert_eq!(skip("timeout -k 1 -s KILL 5 rm").unwrap().command, Some(6));
        assert_eq!(skip("timeout --signal=KILL 5 rm").unwrap().command, Some(3));
        assert_eq!(skip("nice -10 rm").unwrap().command, Some(2));
        assert_eq!(skip("nice -n 10 rm").unwrap().command, Some(3));
        assert_eq!(skip("nice -n10 rm").unwrap().command, Some(2));
        assert_eq!(skip("sudo -u root -E rm").unwrap().command, Some(4));
        assert_eq!(skip("xargs -0 -I{} rm").unwrap().command, Some(3));
        assert_eq!(skip("xargs -0n 5 rm").unwrap().command, Some(3));
        assert_eq!(skip("env -i -- rm").unwrap().command, Some(3));
        assert_eq!(skip("nohup").unwrap().command, None);
        assert_eq!(skip("timeout 5").unwrap().command, None);
    }

    #[test]
    fn assignments_are_collected() {
        let u = skip("env -u X A=1 LD_PRELOAD=x rm").unwrap();
        assert_eq!(u.command, Some(5));
        assert_eq!(u.assigned, vec!["A", "LD_PRELOAD"]);
        assert!(hijacks("LD_PRELOAD") && hijacks("PATH") && !hijacks("PATHS"));
    }

    #[test]
    fn unknown_and_opaque_options_are_errors() {
        assert_eq!(
            skip("sudo -Z rm").unwrap_err(),
            Reason::WrapperUnknownOption {
                wrapper: "sudo".into(),
                option: "-Z".into()
            }
        );
        assert_eq!(
            skip("sudo -Z rm").unwrap_err().to_string(),
            "unknown option `-Z` of `sudo`"
        );
        assert!(skip("env -S 'rm x'").is_err());
        assert!(skip("sudo -e /etc/passwd").is_err());
        assert!(skip("env --split-string=x").is_err());
    }

    #[test]
    fn shell_invocations() {
        let inv = |s: &str| shell_invocation(&words(s), 0).unwrap();
        assert_eq!(inv("bash -c x"), ShellInvocation::Script(vec![2]));
        assert_eq!(inv("bash -lc x"), ShellInvocation::Script(vec![2]));
        let startup = |s: &str| startup_option(&words(s), 0).map(str::to_string);
        assert_eq!(startup("bash -lc x").as_deref(), Some("-lc"));
        assert_eq!(startup("bash --login -c x").as_deref(), Some("--login"));
        assert_eq!(startup("bash -i -c x").as_deref(), Some("-i"));
        assert_eq!(startup("bash --rcfile f -c x").as_deref(), Some("--rcfile"));
        assert_eq!(startup("bash -c x -l"), None);
        assert_eq!(startup("bash -e -c x"), None);
        assert_eq!(startup("bash -o pipefail -lc x").as_deref(), Some("-lc"));
        assert_eq!(
            inv("bash -o pipefail -ec x"),
            ShellInvocation::Script(vec![4])
        );
        assert_eq!(inv("bash -c"), ShellInvocation::MissingScript);
        assert_eq!(inv("bash"), ShellInvocation::Stdin);
        assert_eq!(inv("sh -s a"), ShellInvocation::Stdin);
        assert_eq!(inv("sh script.sh"), ShellInvocation::File);
        assert_eq!(
            inv("bash --rcfile f -c x"),
            ShellInvocation::Script(vec![4])
        );
    }
}
