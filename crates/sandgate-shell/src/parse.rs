//! The walk over a tree-sitter-bash syntax tree.

use std::cell::RefCell;

use tree_sitter::{Node, Parser, Tree};

use super::braces;
use super::grammar::Grammar;
use super::kinds::{kind, Kind};
use super::options::{
    ambiguous_option, grammar_of, has_subcommand_grammars, parse, parse_command, Arg, Value,
    UNKNOWN,
};
use super::plain::{plain_commands, PlainCommand};
use super::programs::{
    awk_program, is_option, names_file, picks_program, program_key, program_named, sed_script,
    sed_scripts, spellings, AwkEffect, RunningOption, Runs,
};
use super::reads::{interpreter_named, reads_program_from_stdin};
use super::reason::{Nesting, Reason};
use super::registry::{alias_of, entry_named, has_special, Entry, Shell, Special};
use super::words::{slice, text, Word};
use super::wrappers::{
    hijacks, shell_invocation, skip_wrapper, startup_option, wrapper_named, ShellInvocation,
};
use super::{Analysis, Form, FormKind, Read, Redirect, ShellWord, SimpleCommand, Unanalysable};

/// Deeper syntax trees are not walked: the walk is recursive.
const MAX_DEPTH: usize = 200;
/// `bash -c` scripts nested deeper than this are not analysed.
const MAX_SCRIPT_NESTING: usize = 8;
/// How many simple commands one line may make, counting those its commands
/// run: each `-exec` of a `find` run by a `find -exec` is followed from
/// every level, which doubles the commands with each (found by the fuzz
/// target: an 868-byte line made 196,162 of them in 3 s).
const MAX_COMMANDS: usize = 1_000;
/// Longer command lines are not parsed.
const MAX_LEN: usize = 1 << 20;
/// At most this many parse errors are reported.
const MAX_ERRORS: usize = 3;

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    Some(parser)
}

/// Parses with this thread's parser, made once.
fn parse_tree(src: &str) -> Option<Tree> {
    PARSER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            if slot.is_none() {
                *slot = new_parser();
            }
            slot.as_mut()?.parse(src, None)
        }
        // Only reachable through re-entry, which the walk never does; still no panic.
        Err(_) => new_parser()?.parse(src, None),
    })
}

pub(super) fn analyse(command: &str, shortcut: bool) -> Analysis {
    let mut walker = Walker {
        out: Analysis::default(),
        nesting: 0,
        shortcut,
        placeholders: Vec::new(),
    };
    walker.script(command);
    walker.out
}

struct Walker {
    out: Analysis,
    /// How many `bash -c` scripts enclose the one being walked.
    nesting: usize,
    /// Lines of plain words skip the parser (see [`plain_commands`]).
    shortcut: bool,
    /// Texts that a program running the current command replaces with its
    /// input (`xargs -I{}`, `find -exec … {}`): a script holding one is built
    /// at run time.
    placeholders: Vec<String>,
}

/// What feeds a command's standard input, when it is not the terminal or a pipe.
#[derive(Clone, Copy)]
enum Stdin {
    Heredoc,
    HereString,
    File,
}

impl Stdin {
    fn describe(self) -> &'static str {
        match self {
            Stdin::Heredoc => "a heredoc",
            Stdin::HereString => "a here-string",
            Stdin::File => "a file",
        }
    }
}

impl Walker {
    fn unanalysable(&mut self, source: &str, reason: Reason) {
        self.out.unanalysable.push(Unanalysable {
            source: source.to_string(),
            reason,
        });
    }

    /// Parses and walks one script: the command line itself or a `bash -c` argument.
    fn script(&mut self, src: &str) {
        if src.len() > MAX_LEN {
            self.unanalysable(
                &src.chars().take(40).collect::<String>(),
                Reason::TooLong { max: MAX_LEN },
            );
            return;
        }
        if self.shortcut {
            if let Some(commands) = plain_commands(src) {
                for command in commands {
                    self.plain_command(command);
                }
                return;
            }
        }
        let Some(tree) = parse_tree(src) else {
            self.unanalysable(src, Reason::NoParser);
            return;
        };
        let root = tree.root_node();
        if root.has_error() {
            self.parse_errors(root, src.as_bytes());
        }
        if let Some(skipped) = skipped_text(root, src.as_bytes()) {
            self.unanalysable(
                &skipped,
                Reason::Skipped {
                    text: skipped.clone(),
                },
            );
        }
        self.walk(root, src.as_bytes(), 0);
    }

    /// Lists the syntax errors of a tree, without recursion.
    fn parse_errors(&mut self, root: Node<'_>, src: &[u8]) {
        let mut found = 0;
        let mut cursor = root.walk();
        'walk: loop {
            let node = cursor.node();
            let error = node.is_error() && !is_read_write_redirect(node, src);
            if error || node.is_missing() {
                let at = node.start_position();
                let (line, column) = (at.row + 1, at.column + 1);
                let snippet: String = text(node, src).chars().take(40).collect();
                let reason = Reason::ParseError {
                    line,
                    column,
                    missing: node.is_missing().then(|| node.kind().to_string()),
                    near: snippet.clone(),
                };
                self.unanalysable(&snippet, reason);
                found += 1;
                if found == MAX_ERRORS {
                    break;
                }
            } else if node.has_error() && cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
    }

    fn walk(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        if depth > MAX_DEPTH {
            let snippet: String = text(node, src).chars().take(40).collect();
            self.unanalysable(
                &snippet,
                Reason::TooDeep {
                    what: Nesting::Syntax,
                    max: MAX_DEPTH,
                },
            );
            return;
        }
        match kind(node) {
            Kind::Command => self.command(node, &[], None, src, depth),
            Kind::RedirectedStatement => self.redirected_statement(node, src, depth),
            // `for ((i = 0; …))` assigns arithmetically; nothing runs.
            Kind::VariableAssignment
                if node
                    .parent()
                    .is_some_and(|p| kind(p) == Kind::CStyleForStatement) =>
            {
                self.walk_children(node, src, depth)
            }
            Kind::VariableAssignment | Kind::VariableAssignments => {
                self.bare_assignments(node, src, depth)
            }
            Kind::DeclarationCommand | Kind::UnsetCommand => self.declaration(node, src, depth),
            Kind::FileRedirect => {
                let extra = self.file_redirect(node, src, depth);
                if let Some(first) = extra.first() {
                    let word = text(*first, src).to_string();
                    self.unanalysable(&word, Reason::StrayWord { word: word.clone() });
                }
            }
            Kind::Comment | Kind::HeredocContent => {}
            Kind::ForStatement | Kind::Array => {
                self.listed_patterns(node, src);
                self.walk_children(node, src, depth)
            }
            _ => self.walk_children(node, src, depth),
        }
    }

    /// The patterns of a `for … in WORDS` list or an array `(WORDS)`: the
    /// shell expands them although no command takes them as words.
    fn listed_patterns(&mut self, node: Node<'_>, src: &[u8]) {
        let mut cursor = node.walk();
        let mut more = cursor.goto_first_child();
        while more {
            let child = cursor.node();
            let value = kind(node) == Kind::Array || cursor.field_name() == Some("value");
            more = cursor.goto_next_sibling();
            if !value || !child.is_named() {
                continue;
            }
            let made = brace_words(word_of(&[child], src));
            self.unexpanded_braces(&made, text(child, src));
            for word in made.into_iter().filter(|w| w.has_pattern) {
                self.out.patterns.push(ShellWord {
                    text: word.text,
                    expansion: word.has_expansion,
                    pattern: true,
                    assignment: false,
                });
            }
        }
    }

    fn walk_children(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        // Most nodes walked are words: no cursor (an allocation) for a leaf.
        if node.named_child_count() == 0 {
            return;
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.walk(child, src, depth + 1);
        }
    }

    fn redirected_statement(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        let body = node.child_by_field_name("body");
        // The body's own redirections come first in the list, as in the source.
        let mark = self.out.redirects.len();
        let mut extra = Vec::new();
        let mut stdin = None;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if Some(child) == body {
                continue;
            }
            match kind(child) {
                Kind::FileRedirect => {
                    if redirect_operator(child) == Some("<") && descriptor_is_stdin(child, src) {
                        stdin = Some(Stdin::File);
                    }
                    extra.extend(self.file_redirect(child, src, depth + 1));
                }
                Kind::HeredocRedirect => {
                    stdin = Some(Stdin::Heredoc);
                    self.walk(child, src, depth + 1);
                }
                Kind::HerestringRedirect => {
                    stdin = Some(Stdin::HereString);
                    self.walk(child, src, depth + 1);
                }
                _ => self.walk(child, src, depth + 1),
            }
        }
        let own = self.out.redirects.split_off(mark);
        match body {
            Some(body) if kind(body) == Kind::Command => {
                self.command(body, &extra, stdin, src, depth + 1)
            }
            Some(body) => {
                if let Some(first) = extra.first() {
                    let word = text(*first, src).to_string();
                    self.unanalysable(&word, Reason::StrayWord { word: word.clone() });
                }
                self.walk(body, src, depth + 1);
            }
            None => {}
        }
        self.out.redirects.extend(own);
    }

    /// Records a redirection's write target; returns the words the grammar put
    /// after the target, which belong to the command (`echo >out hi`).
    fn file_redirect<'t>(&mut self, node: Node<'t>, src: &[u8], depth: usize) -> Vec<Node<'t>> {
        let mut destinations = Vec::new();
        let mut cursor = node.walk();
        let mut more = cursor.goto_first_child();
        while more {
            if cursor.field_name() == Some("destination") {
                destinations.push(cursor.node());
            }
            more = cursor.goto_next_sibling();
        }
        let split = first_word_len(&destinations, src);
        let (target_nodes, extra) = destinations.split_at(split);
        for n in target_nodes {
            self.walk(*n, src, depth + 1);
        }
        let target = word_of(target_nodes, src);
        let operator = redirect_operator(node);
        let read_write = is_read_write_redirect_node(node, src);
        let writes = read_write
            || match operator {
                Some(">" | ">>" | "&>" | "&>>" | ">|") => true,
                // `>&2` duplicates a descriptor; `>& file` writes the file.
                Some(">&") => {
                    !target.text.is_empty() && !target.text.chars().all(|c| c.is_ascii_digit())
                }
                _ => false,
            };
        let reads = !read_write
            && match operator {
                Some("<") => true,
                Some("<&") => {
                    !target.text.is_empty()
                        && target.text != "-"
                        && !target.text.chars().all(|c| c.is_ascii_digit())
                }
                _ => false,
            };
        if reads {
            let end = target_nodes
                .last()
                .map_or(node.end_byte(), |n| n.end_byte());
            let source = slice(src, node.start_byte(), end).to_string();
            // Bash brace-expands the target too, and reads it when one word is left.
            let made = brace_words(target.clone());
            self.unexpanded_braces(&made, &source);
            for word in made {
                self.out.reads.push(Read {
                    source: source.clone(),
                    target: ShellWord {
                        text: word.text,
                        expansion: word.has_expansion,
                        pattern: word.has_pattern,
                        assignment: false,
                    },
                });
            }
        }
        if writes {
            let end = target_nodes
                .last()
                .map_or(node.end_byte(), |n| n.end_byte());
            let source = slice(src, node.start_byte(), end).to_string();
            if target.misparsed {
                self.unanalysable(
                    &source,
                    Reason::MisreadTarget {
                        target: target.text.clone(),
                    },
                );
            } else if target.has_expansion {
                self.unanalysable(
                    &source,
                    Reason::TargetExpansion {
                        target: target.text.clone(),
                    },
                );
            } else if target.has_pattern {
                self.unanalysable(
                    &source,
                    Reason::TargetPattern {
                        target: target.text.clone(),
                    },
                );
            } else {
                self.out.redirects.push(Redirect {
                    source,
                    target: target.text,
                });
            }
        }
        extra.to_vec()
    }

    /// A word whose braces make more words than the analysis follows
    /// cannot be judged word by word.
    fn unexpanded_braces(&mut self, words: &[Word], source: &str) {
        for w in words {
            let Some(too_many) = &w.unexpanded else {
                continue;
            };
            let snippet: String = w.text.chars().take(40).collect();
            self.unanalysable(
                source,
                Reason::Braces {
                    word: snippet,
                    too_many: *too_many,
                },
            );
            return;
        }
    }

    /// `X=1` or `X=1 Y=2` on their own: a simple command without a name.
    fn bare_assignments(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        let assignments: Vec<Node<'_>> = if kind(node) == Kind::VariableAssignment {
            vec![node]
        } else {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .filter(|c| kind(*c) == Kind::VariableAssignment)
                .collect()
        };
        let mut words = Vec::new();
        for a in &assignments {
            let (name, text, expansion) = self.assignment(*a, src, depth);
            self.program_variable(&name, text.as_str());
            words.push(ShellWord {
                text,
                expansion,
                pattern: false,
                assignment: true,
            });
        }
        let normalized = join_shell_words(&words);
        self.push_command(text(node, src), normalized, Vec::new(), false, words, None);
    }

    /// `export X=$(y) Z`, `local a`, `unset b`, …: a simple command of a builtin.
    fn declaration(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        let source = text(node, src);
        let mut parts: Vec<ShellWord> = Vec::new();
        let mut cursor = node.walk();
        // Where the last word ended: a child that starts right there (no
        // blank between, as `prt'x y'` parses: a name, then a string) is
        // the same word, as the shell reads it.
        let mut last_end = None;
        for child in node.children(&mut cursor) {
            if kind(child) == Kind::Comment {
                continue;
            }
            let joined = last_end == Some(child.start_byte());
            last_end = Some(child.end_byte());
            let before = parts.len();
            if kind(child) == Kind::VariableAssignment {
                let (name, text, expansion) = self.assignment(child, src, depth);
                // Named by the whole declaration, as a command's
                // `NAME=value` operands are.
                self.program_variable(&name, source);
                parts.push(ShellWord {
                    text,
                    expansion,
                    ..ShellWord::default()
                });
            } else if kind(child) == Kind::VariableName {
                // A name the builtin declares or unsets (`export NAME`): a
                // literal word, as the shortcut for plain lines reads it.
                parts.push(ShellWord {
                    text: text(child, src).to_string(),
                    ..ShellWord::default()
                });
            } else {
                self.walk(child, src, depth + 1);
                let mut word = Word::default();
                if child.is_named() {
                    word.push_node(child, src);
                } else {
                    word.text.push_str(text(child, src));
                }
                parts.push(ShellWord {
                    text: word.text,
                    expansion: word.has_expansion,
                    pattern: word.has_pattern,
                    assignment: false,
                });
            }
            if joined && before >= 1 && parts.len() == before + 1 {
                let Some(next) = parts.pop() else { continue };
                if let Some(word) = parts.last_mut() {
                    word.text.push_str(&next.text);
                    word.expansion |= next.expansion;
                    word.pattern |= next.pattern;
                }
            }
        }
        let normalized = join_shell_words(&parts);
        let at = (!parts.is_empty()).then_some(0);
        self.push_command(source, normalized, Vec::new(), false, parts, at);
    }

    /// Walks an assignment's value; returns its variable name, normalized text
    /// and whether the value holds an expansion.
    fn assignment(&mut self, node: Node<'_>, src: &[u8], depth: usize) -> (String, String, bool) {
        let name = node
            .child_by_field_name("name")
            .map(|n| text(n, src).to_string())
            .unwrap_or_default();
        let value = node.child_by_field_name("value");
        let name_end = node
            .child_by_field_name("name")
            .map_or(node.start_byte(), |n| n.end_byte());
        let mut out = slice(src, node.start_byte(), name_end).to_string();
        let mut expansion = false;
        match value {
            Some(value) => {
                out.push_str(slice(src, name_end, value.start_byte()));
                self.walk(value, src, depth + 1);
                let mut word = Word::default();
                word.push_node(value, src);
                out.push_str(&word.text);
                expansion = word.has_expansion;
            }
            None => out.push_str(slice(src, name_end, node.end_byte())),
        }
        (name, out, expansion)
    }

    /// A simple command with a name: collects its words (including the ones the
    /// grammar attached to redirections), then strips wrappers.
    fn command(
        &mut self,
        node: Node<'_>,
        extra: &[Node<'_>],
        stdin: Option<Stdin>,
        src: &[u8],
        depth: usize,
    ) {
        let mut word_nodes: Vec<Node<'_>> = Vec::new();
        let mut assignments = Vec::new();
        let mut stdin = stdin;
        // The cursor names each child's field as it goes; asking the node for the
        // field of child `i` walks its children again.
        let mut cursor = node.walk();
        let mut more = cursor.goto_first_child();
        while more {
            let child = cursor.node();
            let field = cursor.field_name();
            more = cursor.goto_next_sibling();
            match field {
                Some("name" | "argument") => word_nodes.push(child),
                Some("redirect") if kind(child) == Kind::FileRedirect => {
                    if redirect_operator(child) == Some("<") && descriptor_is_stdin(child, src) {
                        stdin = Some(Stdin::File);
                    }
                    word_nodes.extend(self.file_redirect(child, src, depth + 1));
                }
                Some("redirect") if kind(child) == Kind::HeredocRedirect => {
                    stdin = Some(Stdin::Heredoc);
                    self.walk(child, src, depth + 1);
                }
                Some("redirect") if kind(child) == Kind::HerestringRedirect => {
                    stdin = Some(Stdin::HereString);
                    self.walk(child, src, depth + 1);
                }
                _ if kind(child) == Kind::VariableAssignment => {
                    assignments.push(self.assignment(child, src, depth));
                }
                _ if child.is_named() => self.walk(child, src, depth + 1),
                _ => {}
            }
        }
        word_nodes.extend_from_slice(extra);
        word_nodes.sort_by_key(|n| n.start_byte());
        for n in &word_nodes {
            self.walk(*n, src, depth + 1);
        }
        let words = group_words(&word_nodes, src);
        if let Some(bad) = words.iter().find(|w| w.misparsed) {
            let snippet: String = bad.text.chars().take(40).collect();
            self.unanalysable(text(node, src), Reason::MisreadWord { word: snippet });
        }
        self.unexpanded_braces(&words, text(node, src));
        let all_braced = words.iter().any(|w| w.braced);

        let start = word_nodes
            .iter()
            .map(|n| n.start_byte())
            .chain([node.start_byte()])
            .min()
            .unwrap_or(0);
        let end = word_nodes
            .iter()
            .map(|n| n.end_byte())
            .chain([node.end_byte()])
            .max()
            .unwrap_or(0);
        let source = slice(src, start, end).to_string();
        let normalized = assignments
            .iter()
            .map(|(_, t, _)| t.as_str())
            .chain(words.iter().map(|w| w.text.as_str()))
            .collect::<Vec<_>>()
            .join(" ");
        let mut forms = Vec::new();
        let mut eligible = !assignments.iter().any(|(name, _, _)| hijacks(name));
        for (name, _, _) in &assignments {
            self.program_variable(name, &source);
        }
        if !assignments.is_empty() && !words.is_empty() {
            forms.push(form(&words, 0, eligible));
        }
        let (transparent, at) = self.unwrap(&words, stdin, &source, &mut eligible, &mut forms);
        if let Some(at) = at {
            self.program(&words, at, &source, eligible, &mut forms);
        }
        if words.is_empty() && assignments.is_empty() {
            // Only redirections (`> file`): nothing runs.
            return;
        }
        let offset = assignments.len();
        let mut all: Vec<ShellWord> = Vec::with_capacity(offset + words.len());
        for (_, text, expansion) in assignments {
            all.push(ShellWord {
                text,
                expansion,
                pattern: false,
                assignment: true,
            });
        }
        all.extend(words.into_iter().map(|w| ShellWord {
            text: w.text,
            expansion: w.has_expansion,
            pattern: w.has_pattern,
            assignment: false,
        }));
        let at = at.map(|a| a + offset);
        let braced = all_braced;
        self.push_command(&source, normalized, forms, transparent, all, at);
        if braced {
            // The source spells words the program never receives
            // (`uniq {a,b}` is `uniq a b`): only deny rules read it.
            if let Some(last) = self.out.commands.last_mut() {
                for f in &mut last.forms {
                    if f.kind == FormKind::Source {
                        f.kind = FormKind::DenyOnly;
                    }
                }
            }
        }
    }

    /// A simple command of a plain line, its words already split and unquoted.
    fn plain_command(&mut self, command: PlainCommand<'_>) {
        let words: Vec<Word> = command
            .words
            .into_iter()
            .map(|w| Word {
                text: w.into_owned(),
                ..Word::default()
            })
            .collect();
        let normalized = join_words(&words, 0);
        let mut forms = Vec::new();
        let mut eligible = true;
        let (transparent, at) =
            self.unwrap(&words, None, command.source, &mut eligible, &mut forms);
        if let Some(at) = at {
            self.program(&words, at, command.source, eligible, &mut forms);
        }
        let words = words
            .into_iter()
            .map(|w| ShellWord {
                text: w.text,
                ..ShellWord::default()
            })
            .collect();
        self.push_command(command.source, normalized, forms, transparent, words, at);
        // As in the parser's walk, after what a `bash -c` script writes.
        for (source, target) in command.writes {
            self.out.redirects.push(Redirect {
                source: source.to_string(),
                target: target.into_owned(),
            });
        }
    }

    /// Strips wrappers from `words`, adding a form per layer; recurses into
    /// `bash -c` scripts. Returns whether the command is a transparent shell
    /// call, and the index of the innermost command's name, if one was found.
    fn unwrap(
        &mut self,
        words: &[Word],
        stdin: Option<Stdin>,
        source: &str,
        eligible: &mut bool,
        forms: &mut Vec<Form>,
    ) -> (bool, Option<usize>) {
        let mark = self.placeholders.len();
        let result = self.unwrap_layers(words, stdin, source, eligible, forms);
        self.placeholders.truncate(mark);
        result
    }

    fn unwrap_layers(
        &mut self,
        words: &[Word],
        stdin: Option<Stdin>,
        source: &str,
        eligible: &mut bool,
        forms: &mut Vec<Form>,
    ) -> (bool, Option<usize>) {
        let mut at = 0;
        while let Some(name) = words.get(at) {
            if name.has_expansion {
                self.unanalysable(
                    source,
                    Reason::NameExpansion {
                        name: name.text.clone(),
                    },
                );
                return (false, None);
            }
            if name.has_pattern {
                self.unanalysable(
                    source,
                    Reason::NamePattern {
                        name: name.text.clone(),
                    },
                );
                return (false, None);
            }
            let base = basename(&name.text);
            if base != name.text && !base.is_empty() {
                let mut rest: Vec<&str> = vec![base];
                rest.extend(words[at + 1..].iter().map(|w| w.text.as_str()));
                forms.push(Form {
                    text: rest.join(" "),
                    kind: FormKind::DenyOnly,
                });
            }
            if let Some(wrapper) = wrapper_named(base) {
                match skip_wrapper(wrapper, words, at) {
                    Err(reason) => {
                        self.unanalysable(source, reason);
                        return (false, None);
                    }
                    Ok(unwrapped) => {
                        if let Some(reason) = unwrapped.ambiguous {
                            self.unanalysable(source, reason);
                        }
                        if wrapper.elevates || unwrapped.assigned.iter().any(|v| hijacks(v)) {
                            *eligible = false;
                        }
                        for v in &unwrapped.assigned {
                            self.program_variable(v, source);
                        }
                        if has_special(base, Special::ArgumentsFromInput) {
                            let end = unwrapped.command.unwrap_or(words.len());
                            if let Some(p) = input_placeholder(base, &words[at + 1..end]) {
                                self.placeholders.push(p);
                            }
                        }
                        let Some(next) = unwrapped.command else {
                            return (false, None);
                        };
                        at = next;
                        forms.push(form(words, at, *eligible));
                        continue;
                    }
                }
            }
            let entry = entry_named(base);
            let shell = entry.and_then(|e| e.shell);
            let runs_code = shell == Some(Shell::Bash) || interpreter_named(base).is_some();
            if let Some(w) = words[at + 1..]
                .iter()
                .find(|w| runs_code && reads_a_descriptor(&w.text))
            {
                self.unanalysable(
                    source,
                    Reason::ReadsDescriptor {
                        program: base.to_string(),
                        word: w.text.clone(),
                    },
                );
                return (false, Some(at));
            }
            if shell == Some(Shell::Bash) {
                let transparent = self.shell(words, at, base, stdin, source, *eligible);
                return (transparent, Some(at));
            }
            if let Some(Shell::Unread(reason)) = shell {
                self.unanalysable(source, Reason::Opaque(reason));
                return (false, Some(at));
            }
            if let Some(interp) = interpreter_named(base) {
                let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
                if reads_program_from_stdin(interp, &texts, at) {
                    let from = stdin.map_or("standard input", Stdin::describe);
                    self.unanalysable(
                        source,
                        Reason::ProgramFromInput {
                            program: base.to_string(),
                            from: from.to_string(),
                        },
                    );
                }
            }
            if let Some(reason) = entry.and_then(|e| e.opaque) {
                self.unanalysable(source, Reason::Opaque(reason));
            }
            return (false, Some(at));
        }
        (false, None)
    }

    fn shell(
        &mut self,
        words: &[Word],
        at: usize,
        name: &str,
        stdin: Option<Stdin>,
        source: &str,
        eligible: bool,
    ) -> bool {
        let init = entry_named(name)
            .and_then(|e| {
                e.special.iter().find_map(|s| match s {
                    Special::InitCommand(options) => Some(*options),
                    _ => None,
                })
            })
            .unwrap_or_default();
        if !init.is_empty() {
            // fish's `-C`, `--init-command` (any spelling its grammar reads).
            let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
            let parsed = parse_command(&texts, at, None);
            let given = parsed.args.iter().find_map(|a| match a {
                Arg::Opt { name, word, .. } if init.iter().any(|o| name.is(o)) => Some(*word),
                _ => None,
            });
            if let Some(w) = given {
                self.unanalysable(
                    source,
                    Reason::FishInitCommand {
                        option: words[w].text.clone(),
                    },
                );
                return false;
            }
        }
        if let Some(opt) = startup_option(words, at) {
            // The script is still read, for the deny rules.
            self.unanalysable(
                source,
                Reason::StartupFiles {
                    shell: name.to_string(),
                    option: opt.to_string(),
                },
            );
        }
        match shell_invocation(words, at) {
            Err(reason) => {
                self.unanalysable(source, reason);
                false
            }
            Ok(ShellInvocation::Script(scripts)) => {
                let mut transparent = eligible;
                for i in scripts {
                    transparent &= self.shell_script(&words[i], name, source, eligible);
                }
                transparent
            }
            Ok(ShellInvocation::Stdin) => {
                let from = stdin.map_or("standard input", Stdin::describe);
                self.unanalysable(
                    source,
                    Reason::CommandsFromInput {
                        shell: name.to_string(),
                        from: from.to_string(),
                    },
                );
                false
            }
            Ok(ShellInvocation::MissingScript | ShellInvocation::File) => false,
        }
    }

    /// The script a shell's `-c` runs (`bash -c SCRIPT`), parsed as a
    /// script of its own; whether the shell stays transparent.
    fn shell_script(&mut self, script: &Word, name: &str, source: &str, eligible: bool) -> bool {
        if let Some(p) = self
            .placeholders
            .iter()
            .find(|p| script.text.contains(p.as_str()))
        {
            let reason = Reason::ScriptPlaceholder {
                by: format!("{name} -c"),
                placeholder: p.clone(),
            };
            self.unanalysable(source, reason);
            return false;
        }
        if script.has_expansion {
            self.unanalysable(
                source,
                Reason::ScriptExpansion {
                    by: format!("{name} -c"),
                },
            );
            return false;
        }
        if self.nesting >= MAX_SCRIPT_NESTING {
            self.unanalysable(
                source,
                Reason::TooDeep {
                    what: Nesting::Scripts,
                    max: MAX_SCRIPT_NESTING,
                },
            );
            return false;
        }
        let (commands, unanalysable) = (self.out.commands.len(), self.out.unanalysable.len());
        self.nesting += 1;
        self.script(&script.text);
        self.nesting -= 1;
        if self.out.commands.len() == commands && self.out.unanalysable.len() == unanalysable {
            self.unanalysable(
                source,
                Reason::ScriptRunsNothing {
                    by: format!("{name} -c"),
                    script: Some(script.text.clone()),
                },
            );
            return false;
        }
        eligible
    }

    /// An assignment to a variable that picks a program (`GIT_PAGER`, …).
    fn program_variable(&mut self, name: &str, source: &str) {
        if picks_program(name) {
            self.unanalysable(
                source,
                Reason::PicksProgram {
                    variable: name.to_string(),
                },
            );
        } else if names_file(name) {
            self.unanalysable(
                source,
                Reason::NamesFile {
                    variable: name.to_string(),
                },
            );
        }
    }

    /// What the program `words[at]` runs through its options and
    /// subcommands (its entry's [`super::programs::Program`]): nested commands are
    /// analysed, hidden ones make the command unanalysable; global options
    /// are stripped and flags spelled one way, each as another form.
    fn program(
        &mut self,
        words: &[Word],
        at: usize,
        source: &str,
        eligible: bool,
        forms: &mut Vec<Form>,
    ) {
        let name = basename(&words[at].text).to_string();
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        if let Some(reason) = ambiguous_option(&texts, at) {
            self.unanalysable(source, reason);
        }
        let entry = entry_named(&name);
        let settings = entry.and_then(program_settings);
        if entry.is_some_and(|e| e.has(Special::AssignsVariables)) {
            for t in &texts[at + 1..] {
                if let Some((var, _)) = t.split_once('=') {
                    self.program_variable(var, source);
                }
            }
        }
        if entry.is_some_and(|e| e.has(Special::RunsLater)) {
            self.trap(words, at, &name, source);
        }
        // `python -m pytest …`, `uv run pytest …`: pytest's own options.
        let runner = entry_named(alias_of(&name)).and_then(|e| e.runner);
        if runner.is_some_and(|w| texts.get(at + 1) == Some(&w))
            && texts
                .get(at + 2)
                .is_some_and(|m| program_named(m).is_some())
        {
            self.program(words, at + 2, source, eligible, forms);
        }
        let mut sub_at = at + 1;
        if let Some(p) = program_named(&name) {
            let own = grammar_of(&name, None);
            let with_subcommands = !p.subcommands.is_empty() || has_subcommand_grammars(&name);
            if with_subcommands {
                // The program's own options before the subcommand.
                let parsed = parse(own.unwrap_or(&UNKNOWN), &texts, at + 1);
                let mut i = at + 1;
                for a in &parsed.args {
                    let Arg::Opt {
                        name: opt,
                        word,
                        value,
                        ..
                    } = a
                    else {
                        break;
                    };
                    if let Some((o, why)) = p.asking_globals.iter().find(|(o, _)| opt.is(o)) {
                        self.unanalysable(
                            source,
                            Reason::AskingOption {
                                program: name.to_string(),
                                option: o.to_string(),
                                why,
                            },
                        );
                    }
                    if let Some((_, _, keys, ends)) = settings.filter(|s| opt.is(s.0)) {
                        if let Some(v) = value {
                            let kv = v.text(&texts);
                            let hidden = words[v.word].has_expansion
                                || program_key(keys, ends, kv.split('=').next().unwrap_or(""));
                            if hidden {
                                self.unanalysable(
                                    source,
                                    Reason::SetsProgram {
                                        program: name.to_string(),
                                        setting: kv.to_string(),
                                    },
                                );
                            }
                        }
                    }
                    i = value.map_or(*word, |v| v.word.max(*word)) + 1;
                }
                sub_at = i;
                if sub_at > at + 1 && i < words.len() {
                    let mut rest: Vec<&str> = vec![name.as_str()];
                    rest.extend(&texts[i..]);
                    forms.push(Form {
                        text: rest.join(" "),
                        kind: if eligible {
                            FormKind::Unwrapped
                        } else {
                            FormKind::DenyOnly
                        },
                    });
                }
            }
            // Option values that make the program run another.
            // The option is also read where it is abbreviated (`--form=`):
            // git's parse-options takes any unique prefix of a long option.
            for (opt, text, why) in p.asking_values {
                let found = (at + 1..words.len()).find(|&j| {
                    let (option, attached) = match texts[j].split_once('=') {
                        Some((option, value)) => (option, Some(value)),
                        None => (texts[j], None),
                    };
                    if !abbreviates(option, opt) {
                        return false;
                    }
                    let next = || texts.get(j + 1).copied().unwrap_or("");
                    attached.unwrap_or_else(next).contains(text)
                        || words[j].has_expansion
                        || (attached.is_none() && words.get(j + 1).is_some_and(|w| w.has_expansion))
                });
                if found.is_some() {
                    self.unanalysable(
                        source,
                        Reason::AskingValue {
                            program: name.to_string(),
                            option: opt.to_string(),
                            value: text,
                            why,
                        },
                    );
                }
            }
            // Words that set any of the program's settings.
            for (prefix, why) in p.asking_prefixes {
                if texts[at + 1..].iter().any(|t| t.starts_with(prefix)) {
                    self.unanalysable(
                        source,
                        Reason::AskingPrefix {
                            program: name.to_string(),
                            prefix,
                            why,
                        },
                    );
                }
            }
            // Words of the program's language that load modules from a search path.
            for keyword in p.module_keywords {
                let found = words[at + 1..].iter().any(|w| {
                    w.text
                        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                        .any(|token| token == *keyword)
                });
                if found {
                    self.unanalysable(
                        source,
                        Reason::LoadsModules {
                            program: name.to_string(),
                            keyword,
                        },
                    );
                }
            }
            // Options wherever the program reads them: its own before a
            // subcommand, the subcommand's after it.
            let (own_end, sub_grammar) = if !with_subcommands {
                (words.len(), None)
            } else {
                (
                    sub_at,
                    texts
                        .get(sub_at)
                        .map(|s| (sub_at + 1, grammar_of(&name, Some(s)))),
                )
            };
            for opt in p.options {
                if opt.name.is_empty() {
                    self.unanalysable(
                        source,
                        Reason::RunsCommands {
                            program: name.to_string(),
                        },
                    );
                    continue;
                }
                let mut hits = given(own, &texts, at + 1, own_end, opt.name);
                if let Some((from, g)) = sub_grammar {
                    hits.extend(given(g, &texts, from, words.len(), opt.name));
                }
                widen(&mut hits, opt, &texts, at + 1);
                for (j, value) in hits {
                    match opt.runs {
                        Runs::Hidden => self.unanalysable(
                            source,
                            Reason::RunsHidden {
                                what: format!("{name} {}", opt.name),
                            },
                        ),
                        Runs::Writes => self.unanalysable(
                            source,
                            Reason::WritesUnjudged {
                                what: format!("{name} {}", opt.name),
                            },
                        ),
                        Runs::NamesFromInput => self.names_from_input(&name, opt.name, source),
                        Runs::CommandUntilTerminator => {
                            let end = (j + 1..words.len())
                                .find(|&k| matches!(texts[k], ";" | "+"))
                                .unwrap_or(words.len());
                            self.nested(&words[j + 1..end], Some("{}"), source);
                        }
                        Runs::CommandWords => self.nested(&words[j + 1..], None, source),
                        Runs::Script | Runs::ScriptWords => {
                            self.option_script(words, j, value, opt.name, source)
                        }
                    }
                }
            }
            // Subcommands.
            for (path, options) in p.subcommands {
                let matches = path
                    .iter()
                    .enumerate()
                    .all(|(k, s)| texts.get(sub_at + k) == Some(s));
                if !matches {
                    continue;
                }
                let after = sub_at + path.len();
                for opt in *options {
                    if opt.name.is_empty() {
                        // The words after the subcommand (after its options).
                        let first = (after..words.len())
                            .find(|&k| !texts[k].starts_with('-'))
                            .unwrap_or(words.len());
                        match opt.runs {
                            Runs::CommandWords => self.nested(&words[first..], None, source),
                            Runs::ScriptWords => {
                                let script: Vec<&str> = texts[first..].to_vec();
                                let expansion = words[first..].iter().any(|w| w.has_expansion);
                                self.nested_script(
                                    &script.join(" "),
                                    expansion,
                                    &format!("{name} {}", path.join(" ")),
                                    source,
                                );
                            }
                            _ => self.unanalysable(
                                source,
                                Reason::RunsHidden {
                                    what: format!("{name} {}", path.join(" ")),
                                },
                            ),
                        }
                        continue;
                    }
                    let g = grammar_of(&name, Some(path[0]));
                    let mut hits = given(g, &texts, after, words.len(), opt.name);
                    widen(&mut hits, opt, &texts, after);
                    for (j, value) in hits {
                        match opt.runs {
                            Runs::Script | Runs::ScriptWords => {
                                self.option_script(words, j, value, opt.name, source)
                            }
                            Runs::CommandWords => self.nested(&words[j + 1..], None, source),
                            Runs::CommandUntilTerminator => {
                                let end = (j + 1..words.len())
                                    .find(|&k| matches!(texts[k], ";" | "+"))
                                    .unwrap_or(words.len());
                                self.nested(&words[j + 1..end], Some("{}"), source);
                            }
                            Runs::Hidden => self.unanalysable(
                                source,
                                Reason::RunsHidden {
                                    what: format!("{name} {} {}", path.join(" "), opt.name),
                                },
                            ),
                            Runs::Writes => self.unanalysable(
                                source,
                                Reason::WritesUnjudged {
                                    what: format!("{name} {} {}", path.join(" "), opt.name),
                                },
                            ),
                            Runs::NamesFromInput => self.names_from_input(
                                &format!("{name} {}", path.join(" ")),
                                opt.name,
                                source,
                            ),
                        }
                    }
                }
            }
            if let Some((_, keys, ends)) = settings
                .filter(|s| texts.get(sub_at) == Some(&s.1))
                .map(|s| (s.1, s.2, s.3))
            {
                if let Some(key) = texts[sub_at + 1..]
                    .iter()
                    .find(|t| !t.starts_with('-') && program_key(keys, ends, t))
                {
                    self.unanalysable(
                        source,
                        Reason::GitConfigProgram {
                            key: key.to_string(),
                        },
                    );
                }
            }
            if let Some(given_by) = p.text_operand {
                self.program_text(words, at, &name, given_by, source);
            }
        }
        if entry.is_some_and(|e| e.has(Special::SedScripts)) {
            for (j, script) in sed_scripts(&texts, at) {
                if let Err(reason) = sed_script(script) {
                    self.unanalysable(source, Reason::SedScript(reason));
                } else if words[j].has_expansion {
                    self.unanalysable(source, Reason::SedScriptExpansion);
                }
            }
        }
        // Flags in one spelling, for deny rules (`rm -fr` is also `rm -f -r`).
        let mut stripped: Vec<&str> = vec![texts[at]];
        stripped.extend(&texts[sub_at.min(texts.len())..]);
        for text in spellings(&stripped) {
            if !forms.iter().any(|f| f.text == text) {
                forms.push(Form {
                    text,
                    kind: FormKind::Spelling,
                });
            }
        }
    }

    /// An option that makes a program read the names of its files from its
    /// input or a list file (`sort --files0-from=-`, `tar -T list`).
    fn names_from_input(&mut self, program: &str, option: &str, source: &str) {
        self.unanalysable(
            source,
            Reason::NamesFromInput {
                program: program.to_string(),
                option: option.to_string(),
            },
        );
    }

    /// `trap ACTION SIGNAL…` ([`Special::RunsLater`]): the action is a
    /// script that runs later.
    fn trap(&mut self, words: &[Word], at: usize, name: &str, source: &str) {
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        let parsed = parse_command(&texts, at, None);
        // `-p`, `-l` and `-P` print; they set nothing.
        if parsed.has_any(&["-p", "-l", "-P"]) {
            return;
        }
        // One operand is a signal whose trap is reset; `-` and `''` reset or ignore.
        let operands = parsed.operands();
        let (Some(&i), true) = (operands.first(), operands.len() > 1) else {
            return;
        };
        let action = &words[i];
        if matches!(action.text.as_str(), "-" | "") {
            return;
        }
        self.nested_script(&action.text, action.has_expansion, name, source);
    }

    /// The script an option gives (`--exec CMD`, `--exec=CMD`, `-x CMD`):
    /// its value as the grammar read it, or else the next word.
    fn option_script(
        &mut self,
        words: &[Word],
        j: usize,
        value: Option<Value>,
        opt: &str,
        source: &str,
    ) {
        let (script, expansion) = match value {
            Some(v) => match words.get(v.word) {
                Some(w) => (
                    w.text.get(v.offset..).unwrap_or("").to_string(),
                    w.has_expansion,
                ),
                None => return,
            },
            None => match words.get(j + 1) {
                Some(w) => (w.text.clone(), w.has_expansion),
                None => return,
            },
        };
        self.nested_script(&script, expansion, opt, source);
    }

    /// A shell script that a program runs (`git rebase --exec 'make'`).
    fn nested_script(&mut self, script: &str, expansion: bool, by: &str, source: &str) {
        if expansion {
            self.unanalysable(source, Reason::ScriptExpansion { by: by.to_string() });
            return;
        }
        if self.nesting >= MAX_SCRIPT_NESTING {
            self.unanalysable(
                source,
                Reason::TooDeep {
                    what: Nesting::Scripts,
                    max: MAX_SCRIPT_NESTING,
                },
            );
            return;
        }
        let before = (self.out.commands.len(), self.out.unanalysable.len());
        self.nesting += 1;
        self.script(script);
        self.nesting -= 1;
        if (self.out.commands.len(), self.out.unanalysable.len()) == before {
            self.unanalysable(
                source,
                Reason::ScriptRunsNothing {
                    by: by.to_string(),
                    script: None,
                },
            );
        }
    }

    /// A command given as words (`find -exec CMD {} ;`, `git bisect run CMD`),
    /// matched like any other simple command. Words holding `placeholder`
    /// stand for input and count as expansions.
    fn nested(&mut self, words: &[Word], placeholder: Option<&str>, source: &str) {
        if words.is_empty() {
            self.unanalysable(source, Reason::EmptyCommand);
            return;
        }
        if self.nesting >= MAX_SCRIPT_NESTING {
            self.unanalysable(
                source,
                Reason::TooDeep {
                    what: Nesting::Commands,
                    max: MAX_SCRIPT_NESTING,
                },
            );
            return;
        }
        if self.out.commands.len() >= MAX_COMMANDS {
            // Said once for the line.
            let said = Reason::TooManyCommands { max: MAX_COMMANDS };
            if !self.out.unanalysable.iter().any(|u| u.reason == said) {
                self.unanalysable(source, said);
            }
            return;
        }
        let words: Vec<Word> = words
            .iter()
            .map(|w| Word {
                has_expansion: w.has_expansion || placeholder.is_some_and(|p| w.text.contains(p)),
                ..w.clone()
            })
            .collect();
        let text = join_words(&words, 0);
        let mut forms = Vec::new();
        let mut eligible = true;
        self.nesting += 1;
        let mark = self.placeholders.len();
        if let Some(p) = placeholder {
            self.placeholders.push(p.to_string());
        }
        let (transparent, at) = self.unwrap(&words, None, &text, &mut eligible, &mut forms);
        if let Some(at) = at {
            self.program(&words, at, &text, eligible, &mut forms);
        }
        self.placeholders.truncate(mark);
        self.nesting -= 1;
        let shell_words = words
            .into_iter()
            .map(|w| ShellWord {
                text: w.text,
                expansion: w.has_expansion,
                pattern: w.has_pattern,
                assignment: false,
            })
            .collect();
        self.push_command(&text, text.clone(), forms, transparent, shell_words, at);
    }

    /// Program text given as the first operand (`awk 'BEGIN{system("…")}'`):
    /// unanalysable when it can run a command or write a file.
    fn program_text(
        &mut self,
        words: &[Word],
        at: usize,
        name: &str,
        given_by: &[&str],
        source: &str,
    ) {
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        let parsed = parse(grammar_of(name, None).unwrap_or(&UNKNOWN), &texts, at + 1);
        if parsed.has_any(given_by) {
            return;
        }
        let Some(i) = parsed.operands().first().copied() else {
            return;
        };
        let Some(text) = words.get(i) else { return };
        let t = text.text.as_str();
        if text.has_expansion {
            self.unanalysable(
                source,
                Reason::ProgramTextExpansion {
                    program: name.to_string(),
                    text: t.to_string(),
                },
            );
            return;
        }
        match awk_program(t) {
            Err(why) => self.unanalysable(
                source,
                Reason::ProgramText {
                    program: name.to_string(),
                    text: t.to_string(),
                    why,
                },
            ),
            Ok(effects) => {
                for effect in effects {
                    match effect {
                        AwkEffect::Reads(file) => self.out.reads.push(Read {
                            source: format!("{name} getline < \"{file}\""),
                            target: ShellWord {
                                text: file,
                                ..ShellWord::default()
                            },
                        }),
                        AwkEffect::Writes(file) => self.out.redirects.push(Redirect {
                            source: format!("{name} print > \"{file}\""),
                            target: file,
                        }),
                    }
                }
            }
        }
    }

    fn push_command(
        &mut self,
        source: &str,
        normalized: String,
        unwrapped: Vec<Form>,
        transparent: bool,
        words: Vec<ShellWord>,
        command_at: Option<usize>,
    ) {
        let mut forms: Vec<Form> = Vec::with_capacity(unwrapped.len() + 2);
        let base = [
            Form {
                text: source.to_string(),
                kind: FormKind::Source,
            },
            Form {
                text: normalized.clone(),
                kind: FormKind::Normalized,
            },
        ];
        for f in base.into_iter().chain(unwrapped) {
            match forms.iter_mut().find(|g| g.text == f.text) {
                Some(g) => {
                    if g.kind == FormKind::DenyOnly && f.kind != FormKind::DenyOnly {
                        g.kind = f.kind;
                    }
                }
                None => forms.push(f),
            }
        }
        self.out.commands.push(SimpleCommand {
            source: source.to_string(),
            normalized,
            forms,
            transparent,
            words,
            command_at,
        });
    }
}

/// The words of `texts[from..to]` that hold the option `spelled`, with its
/// value, as `grammar` reads them; a program without a grammar (and `find`,
/// whose expression has options of its own) has every word that is the
/// option, `OPTION=VALUE` or a cluster holding its letter.
fn given(
    grammar: Option<&Grammar>,
    texts: &[&str],
    from: usize,
    to: usize,
    spelled: &str,
) -> Vec<(usize, Option<Value>)> {
    let to = to.min(texts.len());
    match grammar.filter(|g| !has_special(g.program, Special::FindExpression)) {
        Some(g) if from <= to => {
            let parsed = parse(g, &texts[..to], from);
            parsed
                .given(spelled)
                .filter_map(|a| match a {
                    Arg::Opt { word, value, .. } => Some((*word, *value)),
                    _ => None,
                })
                .collect()
        }
        _ => (from..to)
            .filter(|&j| is_option(texts[j], spelled))
            .map(|j| (j, None))
            .collect(),
    }
}

/// An option that hides a program, writes what the gate does not judge or
/// takes its file names from its input
/// stops the analysis wherever a word could hold it: besides the words the
/// grammar reads as that option, every word that is the option,
/// `OPTION=VALUE` or a short cluster holding its letter (`perl -pie`, whose
/// `-i` takes the `e`; an option before git's subcommand). Reading wider only
/// asks more.
fn widen(hits: &mut Vec<(usize, Option<Value>)>, opt: &RunningOption, texts: &[&str], from: usize) {
    if !matches!(opt.runs, Runs::Hidden | Runs::NamesFromInput | Runs::Writes) {
        return;
    }
    for (j, t) in texts.iter().enumerate().skip(from) {
        if !hits.iter().any(|(k, _)| *k == j) && is_option(t, opt.name) {
            hits.push((j, None));
        }
    }
}

/// The [`Special::ProgramSettings`] of an entry: (option, subcommand,
/// keys, key ends).
#[allow(clippy::type_complexity)]
fn program_settings(
    entry: &Entry,
) -> Option<(
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
)> {
    entry.special.iter().find_map(|s| match s {
        Special::ProgramSettings {
            option,
            subcommand,
            keys,
            key_ends,
        } => Some((*option, *subcommand, *keys, *key_ends)),
        _ => None,
    })
}

/// Whether a word is a process substitution (`<(…)`) or names an open
/// descriptor (`/dev/fd/3`, `/proc/self/fd/0`, `/dev/stdin`): a script read
/// from one is only known when the command runs.
fn reads_a_descriptor(word: &str) -> bool {
    word.starts_with("<(")
        || word.starts_with("/dev/fd/")
        || word.starts_with("/proc/self/fd/")
        || word == "/dev/stdin"
}

/// The replacement text of a program that puts its input into the command
/// it runs ([`Special::ArgumentsFromInput`]: `xargs -I R`, `-iR`, `-i` or
/// `--replace[=R]`), as its grammar reads `options`, its options.
fn input_placeholder(program: &str, options: &[Word]) -> Option<String> {
    let texts: Vec<&str> = options.iter().map(|w| w.text.as_str()).collect();
    let parsed = parse(grammar_of(program, None)?, &texts, 0);
    parsed.args.iter().find_map(|a| match a {
        Arg::Opt { name, value, .. } if name.is("-I") => value.map(|v| v.text(&texts).to_string()),
        Arg::Opt { name, value, .. } if name.is("-i") || name.is("--replace") => {
            Some(value.map_or("{}", |v| v.text(&texts)).to_string())
        }
        _ => None,
    })
}

/// The texts of `words`, joined by single spaces.
fn join_shell_words(words: &[ShellWord]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words from `at` on, joined by single spaces.
fn join_words(words: &[Word], at: usize) -> String {
    let rest = words.get(at..).unwrap_or_default();
    let mut text = String::with_capacity(rest.iter().map(|w| w.text.len() + 1).sum());
    for (i, w) in rest.iter().enumerate() {
        if i > 0 {
            text.push(' ');
        }
        text.push_str(&w.text);
    }
    text
}

fn form(words: &[Word], at: usize, eligible: bool) -> Form {
    let text = join_words(words, at);
    let kind = if eligible {
        FormKind::Unwrapped
    } else {
        FormKind::DenyOnly
    };
    Form { text, kind }
}

/// The last path component of a command name (`/usr/bin/rm` → `rm`).
fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// Nodes whose text is checked as a whole, not child by child.
const ATOMIC: &[Kind] = &[
    Kind::String,
    Kind::RawString,
    Kind::AnsiCString,
    Kind::TranslatedString,
    Kind::HeredocBody,
    Kind::Comment,
    Kind::Word,
    Kind::Regex,
    Kind::ExtglobPattern,
];

/// Text that no node of the tree covers, other than blanks and line
/// continuations. tree-sitter-bash drops some tokens without an error (a lone
/// `-` starting a line, for one); a dropped token could be a command.
fn skipped_text(root: Node<'_>, src: &[u8]) -> Option<String> {
    let mut pos = 0;
    let mut cursor = root.walk();
    let gap = |from: usize, to: usize| -> Option<String> {
        let bytes = src.get(from..to)?;
        let mut rest = bytes;
        while let Some((&b, tail)) = rest.split_first() {
            rest = match b {
                b' ' | b'\t' | b'\n' | b'\r' => tail,
                b'\\' if tail.first() == Some(&b'\n') => &tail[1..],
                _ => {
                    let text = String::from_utf8_lossy(bytes).trim().to_string();
                    return Some(text.chars().take(40).collect());
                }
            };
        }
        None
    };
    loop {
        let node = cursor.node();
        let atomic = ATOMIC.contains(&kind(node)) || node.child_count() == 0;
        if atomic {
            if node.start_byte() > pos {
                if let Some(text) = gap(pos, node.start_byte()) {
                    return Some(text);
                }
            }
            pos = pos.max(node.end_byte());
        } else if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return gap(pos, src.len());
            }
        }
    }
}

/// The first anonymous token of a redirection: its operator.
fn redirect_operator(node: Node<'_>) -> Option<&'static str> {
    let mut cursor = node.walk();
    let op = node
        .children(&mut cursor)
        .find(|c| !c.is_named())
        .map(|c| c.kind());
    op
}

/// Whether a `<` redirection reads standard input (no descriptor, or `0`).
fn descriptor_is_stdin(node: Node<'_>, src: &[u8]) -> bool {
    node.child_by_field_name("descriptor")
        .is_none_or(|d| text(d, src) == "0")
}

/// tree-sitter-bash does not know `<>`: it parses `N<>file` as a redirection
/// holding an error node for one of the two characters. That error is
/// recognised and the redirection read as `<>`.
fn is_read_write_redirect(error: Node<'_>, src: &[u8]) -> bool {
    let Some(parent) = error.parent().filter(|p| kind(*p) == Kind::FileRedirect) else {
        return false;
    };
    if !matches!(text(error, src), "<" | ">") {
        return false;
    }
    let start = parent
        .child_by_field_name("descriptor")
        .map_or(parent.start_byte(), |d| d.end_byte());
    let end = parent
        .child_by_field_name("destination")
        .map_or(parent.end_byte(), |d| d.start_byte());
    slice(src, start, end).trim() == "<>"
}

fn is_read_write_redirect_node(node: Node<'_>, src: &[u8]) -> bool {
    let mut cursor = node.walk();
    let found = node
        .children(&mut cursor)
        .any(|c| c.is_error() && is_read_write_redirect(c, src));
    found
}

/// Nodes that touch (or are joined by a backslash-newline) form one word.
fn touching(prev_end: usize, next_start: usize, src: &[u8]) -> bool {
    prev_end == next_start
        || src
            .get(prev_end..next_start)
            .is_some_and(|gap| gap.len() % 2 == 0 && gap.chunks(2).all(|c| c == b"\\\n"))
}

/// How many of `nodes` make up the first word.
fn first_word_len(nodes: &[Node<'_>], src: &[u8]) -> usize {
    let mut len = usize::from(!nodes.is_empty());
    while len < nodes.len() && touching(nodes[len - 1].end_byte(), nodes[len].start_byte(), src) {
        len += 1;
    }
    len
}

fn word_of(nodes: &[Node<'_>], src: &[u8]) -> Word {
    let mut word = Word::default();
    word.push_nodes(nodes, src);
    word.note_split_expansions();
    word
}

/// Groups sorted word nodes into shell words, each brace-expanded as bash
/// does (`a{b,c}` is two words).
fn group_words(nodes: &[Node<'_>], src: &[u8]) -> Vec<Word> {
    let mut words = Vec::new();
    let mut rest = nodes;
    while !rest.is_empty() {
        let len = first_word_len(rest, src);
        words.extend(brace_words(word_of(&rest[..len], src)));
        rest = &rest[len..];
    }
    words
}

/// The words bash makes of `word` by brace expansion. A word that makes too
/// many is kept whole and marked [`Word::unexpanded`].
fn brace_words(word: Word) -> Vec<Word> {
    match braces::expand(&word.text, &word.quoted) {
        Ok(None) => vec![word],
        Ok(Some(made)) => made
            .into_iter()
            .map(|(text, quoted)| {
                let has_pattern = text
                    .bytes()
                    .zip(quoted.iter().copied().chain(std::iter::repeat(false)))
                    .any(|(b, q)| !q && matches!(b, b'*' | b'?' | b'[' | b'{'));
                Word {
                    text,
                    quoted,
                    has_pattern,
                    has_expansion: word.has_expansion,
                    misparsed: word.misparsed,
                    unexpanded: None,
                    braced: true,
                }
            })
            .collect(),
        Err(too_many) => vec![Word {
            unexpanded: Some(too_many),
            ..word
        }],
    }
}

/// Whether `word` is the long option `option` or a prefix of it that a
/// parser taking unique prefixes reads as it (`--form` for `--format`): at
/// least one letter after `--`. Wider than any one command's options make
/// unique, on purpose.
fn abbreviates(word: &str, option: &str) -> bool {
    word.len() > 2 && word.starts_with("--") && option.starts_with(word)
}
