//! Why part of a command line cannot be analysed, as a type: each case the
//! analysis meets is one variant with what it found. [`Reason`]'s `Display`
//! says it in words for people (the policy's decisions quote it); tests and
//! callers match the variant.
//!
//! A few variants carry a sentence from the registry (an entry's `opaque`, a
//! program's asking options) or from a sub-parser (sed scripts, awk
//! programs): the variant says what kind of thing was found, the text says
//! why that program's case is a problem.

use std::fmt;

pub use super::braces::TooMany;

/// Nesting that goes deeper than the analysis follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nesting {
    /// The syntax tree (`((((…))))`, `$($(…))`).
    Syntax,
    /// Shell scripts inside shell scripts (`bash -c 'bash -c …'`).
    Scripts,
    /// Commands run by commands (`find -exec find -exec …`).
    Commands,
}

/// Why part of a command line cannot be analysed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The line is longer than the analysis reads.
    TooLong {
        /// The limit, in bytes.
        max: usize,
    },
    /// tree-sitter-bash could not be set up.
    NoParser,
    /// The parser skipped part of the text.
    Skipped {
        /// What it skipped.
        text: String,
    },
    /// A syntax error: something missing, or unexpected text.
    ParseError {
        /// Its line, from 1.
        line: usize,
        /// Its column, from 1.
        column: usize,
        /// The syntax that is missing, if that is the error.
        missing: Option<String>,
        /// The text near the error.
        near: String,
    },
    /// Nested deeper than the analysis follows.
    TooDeep {
        /// What is nested.
        what: Nesting,
        /// The limit.
        max: usize,
    },
    /// More simple commands, counting those that commands run (`find
    /// -exec … -exec …`), than the analysis follows.
    TooManyCommands {
        /// The limit.
        max: usize,
    },
    /// A word that belongs to no command the parser found.
    StrayWord {
        /// The word.
        word: String,
    },
    /// The parser read a redirection target differently from bash.
    MisreadTarget {
        /// The target.
        target: String,
    },
    /// A redirection target only known when the command runs.
    TargetExpansion {
        /// The target.
        target: String,
    },
    /// A redirection target that is a pattern.
    TargetPattern {
        /// The target.
        target: String,
    },
    /// A brace expression makes more than the analysis follows.
    Braces {
        /// The start of the word.
        word: String,
        /// Which limit it passes.
        too_many: TooMany,
    },
    /// The parser read a word differently from bash.
    MisreadWord {
        /// The word.
        word: String,
    },
    /// The command name is only known when the command runs.
    NameExpansion {
        /// The name as written.
        name: String,
    },
    /// The command name is a pattern.
    NamePattern {
        /// The name as written.
        name: String,
    },
    /// A wrapper's option is only known when the command runs.
    WrapperOptionExpansion {
        /// The wrapper.
        wrapper: String,
        /// The option as written.
        option: String,
    },
    /// A wrapper option that runs a command the analysis cannot read
    /// (`env -S`, `sudo -e`).
    WrapperRunsOpaque {
        /// The wrapper.
        wrapper: String,
        /// The option.
        option: String,
    },
    /// A wrapper option the registry does not know: whether it takes a
    /// value, and so where the command starts, is not known.
    WrapperUnknownOption {
        /// The wrapper.
        wrapper: String,
        /// The option.
        option: String,
    },
    /// A long option written as an abbreviation that fits several of the
    /// program's options (`grep --re`: `--recursive`, `--regexp`). GNU
    /// `getopt_long`, git's parse-options and argparse refuse it; other
    /// parsers (npm's nopt, another implementation of the program) read it
    /// their own way: the gate cannot tell what the program would do.
    AmbiguousOption {
        /// The program, with its subcommand (`git diff`).
        program: String,
        /// The option as written, without its value (`--re`).
        option: String,
        /// Every option it fits, in full (`--recursive`).
        candidates: Vec<String>,
    },
    /// A shell or an interpreter may run a program read from a descriptor.
    ReadsDescriptor {
        /// The program.
        program: String,
        /// The word that names the descriptor.
        word: String,
    },
    /// A command the analysis cannot read, by name (`eval`, `source`, `csh`):
    /// the sentence of its registry entry.
    Opaque(&'static str),
    /// An interpreter reads its program from its input.
    ProgramFromInput {
        /// The interpreter.
        program: String,
        /// Where the input comes from ("standard input", "a heredoc", …).
        from: String,
    },
    /// A shell reads its commands from its input.
    CommandsFromInput {
        /// The shell.
        shell: String,
        /// Where the input comes from.
        from: String,
    },
    /// `fish -C`: commands run before the script.
    FishInitCommand {
        /// The option as written.
        option: String,
    },
    /// A shell option that runs its startup files first (`bash -l`).
    StartupFiles {
        /// The shell.
        shell: String,
        /// The option as written.
        option: String,
    },
    /// A shell's option is only known when the command runs.
    ShellOptionExpansion {
        /// The option as written.
        option: String,
    },
    /// `fish --command=SCRIPT`: the script is attached to its option.
    ScriptAttached {
        /// The word.
        word: String,
    },
    /// A script that holds a placeholder replaced with input at run time
    /// (`xargs -I{} sh -c 'rm {}'`).
    ScriptPlaceholder {
        /// What runs it (`sh -c`).
        by: String,
        /// The placeholder.
        placeholder: String,
    },
    /// A script that is only known when the command runs.
    ScriptExpansion {
        /// What runs it (`bash -c`, `git rebase --exec`).
        by: String,
    },
    /// A script in which nothing could be checked.
    ScriptRunsNothing {
        /// What runs it.
        by: String,
        /// The script, when a shell runs it with `-c`.
        script: Option<String>,
    },
    /// An assignment to a variable that picks a program (`GIT_PAGER`).
    PicksProgram {
        /// The variable.
        variable: String,
    },
    /// An assignment to a variable that names a file, a directory or
    /// settings the program uses.
    NamesFile {
        /// The variable.
        variable: String,
    },
    /// A program's option that asks on its own (its registry entry's sentence).
    AskingOption {
        /// The program.
        program: String,
        /// The option.
        option: String,
        /// Why, from the program's entry.
        why: &'static str,
    },
    /// `git -c KEY=…` setting a program, an alias or more settings.
    SetsProgram {
        /// The program.
        program: String,
        /// The setting as written.
        setting: String,
    },
    /// An option whose value names something that runs (`--with X`).
    AskingValue {
        /// The program.
        program: String,
        /// The option.
        option: String,
        /// The value that asks.
        value: &'static str,
        /// Why, from the program's entry.
        why: &'static str,
    },
    /// A word that sets one of the program's settings (`key=…`).
    AskingPrefix {
        /// The program.
        program: String,
        /// The prefix.
        prefix: &'static str,
        /// Why, from the program's entry.
        why: &'static str,
    },
    /// A keyword of the program's language that loads code from a search
    /// path.
    LoadsModules {
        /// The program.
        program: String,
        /// The keyword.
        keyword: &'static str,
    },
    /// A program (or its subcommand or option) that runs commands the
    /// analysis cannot see.
    RunsHidden {
        /// The program, with its subcommand and option as written.
        what: String,
    },
    /// A program that runs commands, said of the whole program.
    RunsCommands {
        /// The program.
        program: String,
    },
    /// An option that writes files or directories the gate does not judge.
    WritesUnjudged {
        /// The program, with its subcommand and option.
        what: String,
    },
    /// An option that takes the names of what the program opens from its
    /// input or a list file.
    NamesFromInput {
        /// The program, with its subcommand.
        program: String,
        /// The option.
        option: String,
    },
    /// `git config KEY` setting something that runs later.
    GitConfigProgram {
        /// The key.
        key: String,
    },
    /// A sed script the analysis cannot follow (the sub-parser's sentence).
    SedScript(String),
    /// A sed script only known when the command runs.
    SedScriptExpansion,
    /// A command to run that is empty.
    EmptyCommand,
    /// A program text (awk) only known when the command runs.
    ProgramTextExpansion {
        /// The program.
        program: String,
        /// The text.
        text: String,
    },
    /// A program text (awk) that runs commands or opens files the analysis
    /// cannot name (the sub-parser's sentence).
    ProgramText {
        /// The program.
        program: String,
        /// The text.
        text: String,
        /// Why.
        why: String,
    },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Reason::*;
        match self {
            TooLong { max } => write!(f, "the command is longer than {max} bytes"),
            NoParser => f.write_str("the shell parser is not available"),
            Skipped { text } => write!(f, "the parser skipped `{}`", text.escape_debug()),
            ParseError {
                line,
                column,
                missing: Some(kind),
                ..
            } => write!(f, "parse error at {line}:{column}: missing `{kind}`"),
            ParseError {
                line,
                column,
                missing: None,
                near,
            } => write!(f, "parse error at {line}:{column} near `{near}`"),
            TooDeep {
                what: Nesting::Syntax,
                max,
            } => write!(f, "the command is nested more than {max} levels deep"),
            TooDeep {
                what: Nesting::Scripts,
                max,
            } => write!(f, "shell scripts are nested more than {max} deep"),
            TooDeep {
                what: Nesting::Commands,
                max,
            } => write!(f, "commands are nested more than {max} deep"),
            TooManyCommands { max } => write!(
                f,
                "the line runs more than {max} commands, counting those its commands run"
            ),
            StrayWord { word } => {
                write!(f, "cannot tell which command the word `{word}` belongs to")
            }
            MisreadTarget { target } => write!(
                f,
                "the parser misread the redirection target `{}`",
                target.escape_debug()
            ),
            TargetExpansion { target } => {
                write!(f, "the redirection target `{target}` is an expansion")
            }
            TargetPattern { target } => write!(f, "the redirection target `{target}` is a pattern"),
            Braces { word, too_many } => {
                let why = match too_many {
                    TooMany::Words(n) => format!("makes more than {n} words"),
                    TooMany::Braces(n) => format!("holds more than {n} braces"),
                };
                write!(
                    f,
                    "the brace expression in `{}` {why}, more than the analysis follows",
                    word.escape_debug()
                )
            }
            MisreadWord { word } => {
                write!(f, "the parser misread the word `{}`", word.escape_debug())
            }
            NameExpansion { name } => write!(f, "the command name `{name}` is an expansion"),
            NamePattern { name } => write!(f, "the command name `{name}` is a pattern"),
            WrapperOptionExpansion { wrapper, option } => {
                write!(f, "option `{option}` of `{wrapper}` is an expansion")
            }
            WrapperRunsOpaque { wrapper, option } => {
                write!(f, "`{wrapper} {option}` runs a command that cannot be analysed")
            }
            WrapperUnknownOption { wrapper, option } => {
                write!(f, "unknown option `{option}` of `{wrapper}`")
            }
            AmbiguousOption {
                program,
                option,
                candidates,
            } => write!(
                f,
                "`{option}` abbreviates several options of `{program}` (`{}`): the program may refuse it or read it as any of them",
                candidates.join("`, `")
            ),
            ReadsDescriptor { program, word } => write!(
                f,
                "`{program}` may run a program read from `{word}`, which the gate cannot see"
            ),
            Opaque(why) => f.write_str(why),
            ProgramFromInput { program, from } => {
                write!(f, "`{program}` reads its program from {from}")
            }
            CommandsFromInput { shell, from } => {
                write!(f, "`{shell}` reads its commands from {from}")
            }
            FishInitCommand { option } => {
                write!(f, "`fish {option}` runs commands the gate cannot see")
            }
            StartupFiles { shell, option } => write!(
                f,
                "`{shell} {option}` runs the shell's startup files first, which the gate cannot see"
            ),
            ShellOptionExpansion { option } => write!(f, "shell option `{option}` is an expansion"),
            ScriptAttached { word } => write!(f, "the script of `{word}` is attached to its option"),
            ScriptPlaceholder { by, placeholder } => write!(
                f,
                "the script of `{by}` holds `{placeholder}`, which is replaced with input at run time"
            ),
            ScriptExpansion { by } => write!(f, "the script of `{by}` holds an expansion"),
            ScriptRunsNothing {
                by,
                script: Some(script),
            } => write!(
                f,
                "the script of `{by}` runs no command that can be checked (`{}`)",
                script.escape_debug()
            ),
            ScriptRunsNothing { by, script: None } => {
                write!(f, "the script of `{by}` runs no command that can be checked")
            }
            PicksProgram { variable } => write!(
                f,
                "`{variable}` picks a program that runs, which the gate cannot see"
            ),
            NamesFile { variable } => write!(
                f,
                "`{variable}` names a file, a directory or settings that the program writes, reads or runs, which the gate does not judge"
            ),
            AskingOption {
                program,
                option,
                why,
            } => write!(f, "`{program} {option}` {why}"),
            SetsProgram { program, setting } => write!(
                f,
                "`{program} -c {setting}` sets a program, an alias or more settings that the gate cannot see"
            ),
            AskingValue {
                program,
                option,
                value,
                why,
            } => write!(f, "`{program} {option}` with `{value}` {why}"),
            AskingPrefix {
                program,
                prefix,
                why,
            } => write!(f, "`{program} {prefix}…` {why}"),
            LoadsModules { program, keyword } => write!(
                f,
                "`{program}` `{keyword}` loads code or data from a search path the gate does not judge"
            ),
            RunsHidden { what } => write!(f, "`{what}` runs a program the gate cannot see"),
            RunsCommands { program } => write!(f, "`{program}` runs commands the gate cannot see"),
            WritesUnjudged { what } => {
                write!(f, "`{what}` writes files or directories the gate does not judge")
            }
            NamesFromInput { program, option } => write!(
                f,
                "`{program} {option}` takes the names of what it opens from its input or a file, which the gate cannot see"
            ),
            GitConfigProgram { key } => write!(
                f,
                "`git config {key}` sets a program, an alias or more settings that run later"
            ),
            SedScript(why) => f.write_str(why),
            SedScriptExpansion => f.write_str("the sed script holds an expansion"),
            EmptyCommand => f.write_str("the command given to run is empty"),
            ProgramTextExpansion { program, text } => write!(
                f,
                "the {program} program `{}` holds an expansion, so it could run commands or open any file",
                text.escape_debug()
            ),
            ProgramText { program, text, why } => {
                write!(f, "the {program} program `{}` {why}", text.escape_debug())
            }
        }
    }
}
