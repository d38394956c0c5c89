//! The types of a registry entry's parts: what a program's options and
//! operands run ([`Runs`], [`RunningOption`], [`Program`]), write
//! ([`Writer`], [`WrittenOperands`]), spell ([`FlagSpelling`]) and read
//! ([`Reach`], [`Roots`], [`RecursiveReader`], [`FileForm`],
//! [`Interpreter`]), and how a wrapper reads its command ([`Wrapper`]).
//! Data only: the registry (above this module) is written with them, and
//! the walkers that read a command (above the registry) give them their
//! methods, so that no module refers back to one that refers to it.

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

/// What a recursive reader takes from the tree it walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The content of every file (`grep -r`, `tar c`, `cp -r`).
    Contents,
    /// Only the names (`find`, `du -a`, `ls -Ra`).
    Names,
}

/// Which operands of a recursive reader are the trees it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roots {
    /// Every operand (`diff -r A B`, `tar c A B`).
    All,
    /// Every operand but the last, the destination (`cp -r A B DEST`), or
    /// every operand when a target-directory option names it.
    AllButLast,
    /// Every operand but the first, an archive (`zip -r OUT.zip A B`).
    AllButFirst,
    /// Every operand after the pattern, unless one of these options gives the
    /// pattern (`grep -r PATTERN A B`, `grep -r -e PATTERN A B`).
    AfterPattern(&'static [&'static str]),
    /// `find`'s start points: the operands before the first expression.
    StartPoints,
}

/// A program that reads every file below the directories it is given.
#[derive(Debug, Clone, Copy)]
pub struct RecursiveReader {
    /// The command name.
    pub name: &'static str,
    /// The subcommand it must be given (`git diff`).
    pub subcommand: Option<&'static str>,
    /// Options that make it recursive, named in full; empty: it always is. A
    /// `-d recurse` entry means the option `-d` with the value `recurse` (or
    /// an abbreviation of it, which GNU programs read).
    pub recursive: &'static [&'static str],
    /// `None`: it reads dot-files too. `Some(options)`: it skips them unless
    /// one of these options is given (`rg --hidden`).
    pub hidden: Option<&'static [&'static str]>,
    /// Which operands are the trees read.
    pub roots: Roots,
    /// With no tree given, it reads the working directory.
    pub default_here: bool,
    /// What it takes from the tree.
    pub reach: Reach,
    /// Options that mean the tree is not read after all (`rg --type-list`).
    pub not_reading: &'static [&'static str],
}

/// How an option's value names a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileForm {
    /// `@FILE` (`curl -d @FILE`, `curl -H @FILE`).
    At,
    /// `@FILE` or `NAME@FILE`, unless a `=` comes first (`curl --data-urlencode`).
    NameAt,
    /// `NAME=@FILE` or `NAME=<FILE`, with `;type=…` after and `,` between
    /// files (`curl -F`).
    Form,
    /// The value itself, in which the program expands `{a,b}` and `[1-3]`
    /// (`curl -T "{a,b}"`).
    Glob,
}

/// An interpreter that reads its program from standard input when it is
/// given no program.
#[derive(Debug, Clone, Copy)]
pub struct Interpreter {
    /// The command name.
    pub name: &'static str,
    /// Options that give the program (inline text, a module, a file),
    /// named in full; the interpreter's grammar says how they are spelled.
    pub program_options: &'static [&'static str],
    /// Options after which it runs nothing (`--version`).
    pub stops: &'static [&'static str],
    /// Options that make it read more program from standard input after its
    /// script (`python3 -i x.py`, `php -a`).
    pub interactive: &'static [&'static str],
}

/// A command that runs the command given in its arguments (`timeout 5 rm x`).
#[derive(Debug, Clone, Copy)]
pub struct Wrapper {
    /// The command name (also matched as the last component of a path).
    pub name: &'static str,
    /// `-10` style numeric options are accepted (`nice -10 cmd`).
    pub numeric_flags: bool,
    /// How many operands come between the options and the command (`timeout DURATION`).
    pub operands: usize,
    /// `NAME=value` words may come before the command (`env X=1 cmd`).
    pub assignments: bool,
    /// Runs the command as another user: an allow rule must name the wrapper itself.
    pub elevates: bool,
    /// Options after which the command cannot be analysed (`env -S STRING`,
    /// `sudo -e`), named in full.
    pub opaque: &'static [&'static str],
}
