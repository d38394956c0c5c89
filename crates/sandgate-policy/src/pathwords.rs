//! Paths inside commands: the words of a simple command that name a path
//! once the shell has expanded them, judged against the floor and the path
//! deny rules (docs/shell.md, "Paths inside commands").
//!
//! Every word is a candidate, with no table of which program opens which
//! operand: a program can read any of its words as a path, and a word that
//! names no file costs one `lstat`. Besides the whole word, the value of
//! `--opt=VALUE`, of `-oVALUE` and of `NAME=VALUE` (`dd of=…`) is a candidate.
//! A candidate is expanded as bash would (`~`, `~user`, `~+`, `$HOME`,
//! `${HOME}`, `$PWD`), resolved canonically against every directory the
//! command may run in (the call's working directory and each `cd`/`pushd`
//! target of the line), and denied when it lands in the floor, on a hard link
//! to a floor file, or in a path deny rule. A pattern (`~/.ss*/id_*`,
//! `~/.{ssh,aws}`) is denied when it could match a floor directory or a file
//! in one, and its matches on the disk are judged like words. A word whose
//! value is not known before the command runs (`$X/id_rsa`) could name
//! anything: it is asked about, never allowed by a prefix rule.
//!
//! The glob matching and brace expansion are written here, small and
//! bounded, because they must follow bash (leading dots, `[!…]`, braces that
//! make words) rather than a path-glob dialect.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::canon::{self, Tilde};
use crate::decision::{Access, Part, PartKind, RuleRef, Verdict};
use crate::disk::{Disk, Entry, Kind};
use crate::gate::Gate;
use crate::request::Context;
use crate::shell::reads::{file_url_path, Move};
use crate::shell::registry::Special;
use crate::shell::{self, Analysis, ShellWord, SimpleCommand};

mod lines;

/// At most this many working directories are tracked for one line.
const MAX_DIRS: usize = 16;
/// A brace expression may make at most this many words.
const MAX_BRACE_WORDS: usize = 64;
/// A pattern's expansion on the disk reads at most this many directory entries…
const MAX_GLOB_SCANNED: usize = 4096;
/// …and keeps at most this many matches.
const MAX_GLOB_MATCHES: usize = 1024;

/// Where the commands of one line may run, and what the shell will expand.
#[derive(Clone)]
pub(crate) struct Places {
    /// Every directory a command of the line may run in: the call's working
    /// directory first, then each `cd`/`pushd` target (canonical).
    pub dirs: Vec<PathBuf>,
    /// Why a relative path cannot be placed (`popd`, `cd -`, `cd "$X"`).
    pub unknown: Option<String>,
    /// `$HOME` and `~`, unless the line assigns `HOME`.
    pub home: Option<PathBuf>,
    /// Why patterns may match more than bash's defaults let them (`shopt -s
    /// dotglob`, `GLOBIGNORE=…`, `bash -O nocaseglob`): dot-files, any case.
    pub wide: Option<String>,
    /// Every symlink the line makes (`ln -s`, `cp -s`), as lexical absolute
    /// paths: a path through one lands where the gate cannot see.
    pub links: Vec<PathBuf>,
    /// The command being judged makes the links itself: its words name them.
    pub skip_links: bool,
    /// The directories of `CDPATH` (the environment's and the line's), or
    /// why they cannot be known.
    pub cdpath: Result<Vec<String>, String>,
}

impl Places {
    /// The directories of `analysis` run from `ctx`.
    pub(crate) fn of(analysis: &Analysis, ctx: &Context) -> Places {
        let reassigns_home = analysis.commands.iter().any(|c| {
            c.words
                .iter()
                .any(|w| w.text == "HOME" || w.text.starts_with("HOME="))
        });
        let mut places = Places {
            dirs: vec![ctx.cwd.clone()],
            unknown: None,
            home: (!reassigns_home).then(|| ctx.home.clone()),
            wide: ctx.wide_globs.clone(),
            links: Vec::new(),
            skip_links: false,
            cdpath: Ok(Vec::new()),
        };
        places.cdpath = places.cdpath_of(analysis, ctx);
        for c in &analysis.commands {
            places.widen(c);
        }
        for c in &analysis.commands {
            places.follow(c);
        }
        for c in &analysis.commands {
            places.symlinks(c);
        }
        if !places.links.is_empty() {
            // A link can be copied or moved on (`cp -P`, `mv`, `rsync -l`).
            for c in &analysis.commands {
                places.copies_of_links(c);
            }
        }
        places
    }

    /// Adds the directory `c` moves to, if it is a `cd`, `pushd` or `popd`
    /// (read by the shell analysis, [`shell::reads::directory_change`]).
    fn follow(&mut self, c: &SimpleCommand) {
        let Some(at) = c.command_at else { return };
        let texts: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
        let Some(change) = shell::reads::directory_change(&texts, at) else {
            return;
        };
        // Past the bound the line is already unknown (see below): more
        // directories would only cost time, growing with every `cd`.
        if self.dirs.len() > MAX_DIRS {
            return;
        }
        // `None`: it stays; `Some(None)`: where it goes is not known.
        let mut target = match change.to {
            Move::Stays => None,
            Move::Home => Some(self.home.clone().map(|h| h.to_string_lossy().into_owned())),
            Move::To(i) => Some(match self.expand(&c.words[i]) {
                Expansion::Known(t) => Some(t),
                _ => None,
            }),
            Move::Unknown => Some(None),
        };
        // zsh reads `cd OLD NEW` and `pushd OLD NEW` (`pushd -n DIR` among
        // them) as the working directory with OLD replaced by NEW, in the
        // directory's name as `$PWD` holds it: a name through any symbolic
        // links the shell was started in or went through, which the line
        // does not show. So where it goes is not known.
        if change.zsh_old.is_some() {
            target = Some(None);
        }
        let Some(target) = target else { return };
        let Some(target) = target else {
            self.unknown
                .get_or_insert_with(|| format!("`{}` changes the directory", c.normalized));
            return;
        };
        // `cd NAME` (not `./NAME`, `../NAME` or `/…`) tries each `CDPATH` directory first.
        let mut targets = vec![target.clone()];
        let first = target.split('/').next().unwrap_or("");
        if !target.starts_with('/') && first != "." && first != ".." {
            match &self.cdpath {
                Ok(entries) => targets.extend(
                    entries
                        .iter()
                        .filter(|e| !e.is_empty())
                        .map(|e| format!("{e}/{target}")),
                ),
                Err(why) => {
                    self.unknown.get_or_insert_with(|| {
                        format!(
                            "`{}` may move below a `CDPATH` directory: {why}",
                            c.normalized
                        )
                    });
                    return;
                }
            }
        }
        let mut added = Vec::new();
        for target in &targets {
            for dir in &self.dirs {
                if let Ok(r) = canon::canonicalize_in(dir, target) {
                    if !self.dirs.contains(&r.path) && !added.contains(&r.path) {
                        added.push(r.path);
                    }
                }
            }
        }
        self.dirs.extend(added);
        if self.dirs.len() > MAX_DIRS {
            self.unknown.get_or_insert_with(|| {
                format!("the line changes the directory more than {MAX_DIRS} ways")
            });
        }
    }

    /// The word as the shell will expand it, as far as it can be known here.
    pub(crate) fn expand(&self, word: &ShellWord) -> Expansion {
        let mut text = if word.expansion {
            match self.substitute(&word.text) {
                Some(t) => t,
                None => return Expansion::Unknown,
            }
        } else {
            word.text.clone()
        };
        match canon::tilde(&text) {
            Tilde::None => {}
            Tilde::Home(rest) => match &self.home {
                Some(home) => text = format!("{}{rest}", home.to_string_lossy()),
                None => return Expansion::Unknown,
            },
            Tilde::Cwd(rest) => match self.single_dir() {
                Some(dir) => text = format!("{}{rest}", dir.to_string_lossy()),
                None => return Expansion::Unknown,
            },
            Tilde::User(name, rest) => {
                // An unknown user leaves the word as it is, as bash does.
                if let Some(dir) = canon::user_home(name) {
                    text = format!("{}{rest}", dir.to_string_lossy());
                }
            }
            Tilde::Shell(_) => return Expansion::Unknown,
        }
        if word.pattern {
            Expansion::Pattern(text)
        } else {
            Expansion::Known(text)
        }
    }

    /// The only directory the line runs in, if it never changes it.
    fn single_dir(&self) -> Option<&Path> {
        (self.dirs.len() == 1 && self.unknown.is_none()).then(|| self.dirs[0].as_path())
    }

    /// `text` with `$HOME`, `${HOME}`, `$PWD` and `${PWD}` replaced, and
    /// numeric expansions (`$?`, `$#`, `$$`, `$!`, `$((…))`) taken as a
    /// number; `None` while any other expansion is left.
    fn substitute(&self, text: &str) -> Option<String> {
        // `{}` in an expansion word is a placeholder a program fills in
        // (`find -exec … {}`, `xargs -I{}`).
        if text.contains("{}") {
            return None;
        }
        let mut out = String::with_capacity(text.len() + 32);
        let mut rest = text;
        while let Some(i) = rest.find(['$', '`']) {
            out.push_str(&rest[..i]);
            let after = &rest[i..];
            if after.starts_with('`') {
                return None;
            }
            let (value, len): (String, usize) = if let Some(r) = after.strip_prefix("$((") {
                let end = r.find("))")?;
                ("0".into(), 3 + end + 2)
            } else if after.len() > 1 && b"?#$!".contains(&after.as_bytes()[1]) {
                ("0".into(), 2)
            } else {
                let (name, len) = if let Some(r) = after.strip_prefix("${") {
                    let end = r.find('}')?;
                    (&r[..end], 2 + end + 1)
                } else {
                    let r = &after[1..];
                    let end = r
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(r.len());
                    (&r[..end], 1 + end)
                };
                let value = match name {
                    "HOME" => self.home.as_ref()?.to_string_lossy().into_owned(),
                    "PWD" => self.single_dir()?.to_string_lossy().into_owned(),
                    _ => return None,
                };
                (value, len)
            };
            out.push_str(&value);
            rest = &after[len..];
        }
        out.push_str(rest);
        Some(out)
    }
}

/// A word after the expansions the gate can do.
pub(crate) enum Expansion {
    /// The text the command will see.
    Known(String),
    /// A pattern the shell will expand against the disk (expanded text).
    Pattern(String),
    /// The value is only known when the command runs.
    Unknown,
}

/// The last path component of a command name.
fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

impl Gate<'_> {
    /// The verdict of the floor and the path deny rules on a canonical path
    /// a command names (`meta`: what is there, if it exists). `None` when
    /// neither protects it.
    pub(crate) fn protected(
        &self,
        canonical: &Path,
        meta: Option<&Entry>,
        access: Access,
    ) -> Option<(Option<RuleRef>, String)> {
        let subject = canonical.to_string_lossy();
        if let Some(rule) = self.rules.floor().first_match(canonical) {
            let reason = format!(
                "`{subject}` is protected by the built-in floor `{}`; no rule can allow it",
                rule.pattern
            );
            return Some((Some(rule.clone()), reason));
        }
        if let Some(meta) = meta {
            match self.rules.floor_inodes().lookup(meta) {
                Ok(None) => {}
                Ok(Some(file)) => {
                    let reason = format!(
                        "`{subject}` is a hard link to the floor file `{}`; no rule can allow it",
                        file.display()
                    );
                    return Some((self.rules.floor().first_match(file).cloned(), reason));
                }
                Err(crate::floor::Undecided) => {
                    let reason = format!(
                        "`{subject}` has several hard links and the floor directories hold too \
                         many files to rule out that it is one of theirs"
                    );
                    return Some((None, reason));
                }
            }
        }
        if let Some(rule) = self.rules.path_deny().first_match_for(canonical, access) {
            let store = crate::credentials::store_of_rule(&rule.pattern)
                .map(|s| format!(": a credential store: {}", s.why))
                .unwrap_or_default();
            let reason = format!(
                "`{subject}` matches the {} rule `{}` ({}){store}",
                rule.list_words(),
                rule.pattern,
                rule.origin
            );
            return Some((Some(rule.clone()), reason));
        }
        if let Some((rule, file)) = meta.and_then(|m| self.linked_deny_file(m, access)) {
            let store = crate::credentials::store_of_rule(&rule.pattern)
                .map(|s| format!(": a credential store: {}", s.why))
                .unwrap_or_default();
            let reason = format!(
                "`{subject}` is a hard link to `{}`, which matches the {} rule `{}` ({}){store}",
                file.display(),
                rule.list_words(),
                rule.pattern,
                rule.origin
            );
            return Some((Some(rule.clone()), reason));
        }
        None
    }

    /// The deny rule for `access` that names one file exactly (`~/.netrc`)
    /// of which `meta` is another name (a hard link), with that file.
    fn linked_deny_file(&self, meta: &Entry, access: Access) -> Option<(&RuleRef, PathBuf)> {
        if meta.kind != Kind::File || meta.nlink < 2 {
            return None;
        }
        let rules = self.rules.path_deny().rules();
        let globs = self.rules.path_deny().compiled_globs();
        rules.iter().zip(globs).find_map(|(rule, glob)| {
            if !rule.applies_to(access) || glob.is_empty() || has_meta(glob) || glob.contains('\\')
            {
                return None;
            }
            let named = self.rules.disk().entry(Path::new(glob))?;
            (named.kind == Kind::File && named.dev == meta.dev && named.ino == meta.ino)
                .then(|| (rule, PathBuf::from(glob)))
        })
    }

    /// The parts for the path words of every simple command of `analysis`:
    /// only the words that decide something (DENY or ASK) are listed.
    pub(crate) fn judge_path_words(&self, analysis: &Analysis, places: &Places) -> Vec<Part> {
        let mut parts = Vec::new();
        for c in &analysis.commands {
            self.judge_command_words(c, places, &mut parts);
        }
        for p in &analysis.patterns {
            if let Expansion::Pattern(text) = places.expand(p) {
                self.judge_listing(p, &text, places, &mut parts);
            }
        }
        for r in &analysis.reads {
            match places.expand(&r.target) {
                Expansion::Unknown => parts.push(Part {
                    kind: PartKind::Path,
                    source: r.source.clone(),
                    text: r.target.text.clone(),
                    verdict: Verdict::Ask,
                    rule: None,
                    reason: format!(
                        "the input redirection `{}` holds an expansion whose value is only known \
                         when the command runs, so it could name a protected path",
                        r.source
                    ),
                }),
                Expansion::Known(text) => {
                    self.judge_known(&r.target, &text, Candidate::Whole, places, &mut parts)
                }
                Expansion::Pattern(text) => {
                    self.judge_pattern(&r.target, &text, places, &mut parts)
                }
            }
        }
        parts
    }

    fn judge_command_words(&self, c: &SimpleCommand, places: &Places, parts: &mut Vec<Part>) {
        let first_name = c.words.iter().position(|w| !w.assignment);
        let program = c.command_at.map_or("", |i| basename(&c.words[i].text));
        // `ln -s A B` names the link it makes: the link is not yet there to pass through.
        let maker;
        let places = if places.makes_links(c) {
            maker = Places {
                skip_links: true,
                ..places.clone()
            };
            &maker
        } else {
            places
        };
        // A directory option (`git -C DIR`, `make -C DIR`, `tar -C DIR`)
        // moves where the command's relative words land.
        let moved;
        let places = match self.directory_option(c, places) {
            Some(p) => {
                moved = p;
                &moved
            }
            None => places,
        };
        if let Some(at) = c.command_at {
            self.judge_writes(c, at, places, parts);
            self.judge_trees(c, at, places, parts);
            self.judge_file_values(c, at, places, parts);
            // A wrapper that adds words read from its input to the command
            // (`xargs`).
            let fed = c.words[first_name.unwrap_or(0)..at]
                .iter()
                .map(|w| basename(&w.text))
                .zip(&c.words[first_name.unwrap_or(0)..at])
                .find(|(name, w)| !w.assignment && has_special(name, Special::ArgumentsFromInput))
                .map(|(name, _)| name);
            // A wrapper's own output file (`time -o FILE`, `--outp=FILE`),
            // read through the wrapper's grammar.
            for k in first_name.unwrap_or(0)..at {
                let name = basename(&c.words[k].text);
                let options = entry_named(name).map_or(&[][..], |e| e.outputs);
                if options.is_empty() {
                    continue;
                }
                let texts: Vec<&str> = c.words[..at].iter().map(|w| w.text.as_str()).collect();
                let parsed = parse(grammar_of(name, None).unwrap_or(&UNKNOWN), &texts, k + 1);
                for o in options {
                    for v in parsed.values(o) {
                        let out = ShellWord {
                            text: v.text(&texts).to_string(),
                            ..c.words[v.word].clone()
                        };
                        self.judge_write(c, &out, false, places, parts);
                    }
                }
            }
            // A wrapper's file of its own in the working directory
            // (`nohup.out`, written when the output is a terminal).
            let own_file = c.words[first_name.unwrap_or(0)..at].iter().find_map(|w| {
                let e = entry_named(basename(&w.text)).filter(|_| !w.assignment)?;
                e.special.iter().find_map(|s| match s {
                    Special::WritesFile(file) => Some(*file),
                    _ => None,
                })
            });
            if let Some(file) = own_file {
                let out = ShellWord {
                    text: file.into(),
                    ..ShellWord::default()
                };
                self.judge_write(c, &out, false, places, parts);
            }
            if let Some(feeder) = fed.filter(|_| !text_only(program)) {
                parts.push(Part {
                    kind: PartKind::Path,
                    source: c.source.clone(),
                    text: c.normalized.clone(),
                    verdict: Verdict::Ask,
                    rule: None,
                    reason: format!(
                        "`{feeder}` adds words read from its input to `{}`, and any of them could name a protected path",
                        c.normalized
                    ),
                });
            }
        }
        // A program that only prints or compares its words opens none of
        // them; but the shell lists a directory for each of its patterns.
        let prints = text_only(program) && c.command_at == first_name;
        let mut unknown_reported = false;
        let messages = c.command_at.map_or_else(Vec::new, |at| {
            let texts: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
            text_values(&texts, at)
        });
        for (i, word) in c.words.iter().enumerate() {
            if prints && !word.pattern {
                continue;
            }
            // A command name without a `/` is looked up in `PATH`, not here.
            let is_name = Some(i) == first_name || Some(i) == c.command_at;
            if is_name && !word.text.contains('/') {
                continue;
            }
            // A message option's value is no path (`git commit -m "$(…)"`,
            // `git commit --mess="$(…)"`).
            let text_value = messages.contains(&i)
                || i.checked_sub(1)
                    .is_some_and(|p| text_option(program, &c.words[p].text))
                || word
                    .text
                    .split_once('=')
                    .is_some_and(|(o, _)| o.starts_with("--") && text_option(program, o))
                || (word.text.len() > 2
                    && !word.text.starts_with("--")
                    && word.text.is_char_boundary(2)
                    && text_option(program, &word.text[..2]));
            if text_value {
                continue;
            }
            for cand in candidates(word) {
                let shown = ShellWord {
                    text: cand.text.to_string(),
                    ..word.clone()
                };
                match places.expand(&shown) {
                    Expansion::Pattern(text) if prints => {
                        self.judge_listing(word, &text, places, parts);
                    }
                    _ if prints => {}
                    Expansion::Unknown => {
                        if word.assignment || unknown_reported || i < c.command_at.unwrap_or(0) {
                            continue;
                        }
                        unknown_reported = true;
                        parts.push(Part {
                            kind: PartKind::Path,
                            source: word.text.clone(),
                            text: word.text.clone(),
                            verdict: Verdict::Ask,
                            rule: None,
                            reason: format!(
                                "the word `{}` of `{}` holds an expansion whose value is only known \
                                 when the command runs, so it could name a protected path",
                                word.text, c.normalized
                            ),
                        });
                    }
                    Expansion::Known(text) => {
                        self.judge_known(word, &text, cand.kind, places, parts);
                    }
                    Expansion::Pattern(text) => {
                        self.judge_pattern(word, &text, places, parts);
                    }
                }
            }
        }
    }

    /// A word whose text is known: judged where it resolves, from every
    /// directory the command may run in.
    fn judge_known(
        &self,
        word: &ShellWord,
        text: &str,
        kind: Candidate,
        places: &Places,
        parts: &mut Vec<Part>,
    ) {
        if text.is_empty() || text == "-" || shell::is_harmless_target(text) {
            return;
        }
        // `file:///…` is a local path to curl, git and browsers alike.
        if let Some(path) = file_url_path(text) {
            if path.contains(['{', '[']) {
                self.judge_pattern(word, &path, places, parts);
            } else {
                self.judge_known(word, &path, Candidate::Whole, places, parts);
            }
            return;
        }
        if let Some(link) = places.through_link(text) {
            parts.push(Part {
                kind: PartKind::Path,
                source: word.text.clone(),
                text: text.to_string(),
                verdict: Verdict::Ask,
                rule: None,
                reason: format!(
                    "the path `{text}` goes through `{}`, a symlink the line makes, so where it lands is not known",
                    link.display()
                ),
            });
            return;
        }
        if !text.starts_with('/') {
            if let Some(why) = &places.unknown {
                if kind != Candidate::Cluster {
                    parts.push(Part {
                        kind: PartKind::Path,
                        source: word.text.clone(),
                        text: text.to_string(),
                        verdict: Verdict::Ask,
                        rule: None,
                        reason: format!(
                            "the path `{text}` is relative and {why}, so where it lands is not known"
                        ),
                    });
                }
                return;
            }
        }
        let bases: &[PathBuf] = if text.starts_with('/') {
            &places.dirs[..1]
        } else {
            &places.dirs
        };
        for base in bases {
            match canon::canonicalize_in(base, text) {
                Ok(r) => {
                    if let Some((rule, why)) = self.protected(
                        &r.path,
                        r.meta.as_ref().map(Entry::of).as_ref(),
                        Access::Read,
                    ) {
                        parts.push(path_part(word, &r.path, Verdict::Deny, rule, why));
                        return;
                    }
                }
                Err(e) => {
                    parts.push(Part {
                        kind: PartKind::Path,
                        source: word.text.clone(),
                        text: text.to_string(),
                        verdict: Verdict::Deny,
                        rule: None,
                        reason: format!("the path `{text}` in the command cannot be checked: {e}"),
                    });
                    return;
                }
            }
        }
    }

    /// A pattern: denied when it could match into the floor; its matches on
    /// the disk are judged like words.
    fn judge_pattern(&self, word: &ShellWord, text: &str, places: &Places, parts: &mut Vec<Part>) {
        let Some(alternatives) = brace_expand(text) else {
            parts.push(Part {
                kind: PartKind::Path,
                source: word.text.clone(),
                text: text.to_string(),
                verdict: Verdict::Ask,
                rule: None,
                reason: format!(
                    "the pattern `{text}` makes more than {MAX_BRACE_WORDS} words to check"
                ),
            });
            return;
        };
        for alt in &alternatives {
            let relative = !alt.starts_with('/');
            if relative && places.unknown.is_some() {
                let why = places.unknown.as_deref().unwrap_or_default();
                parts.push(Part {
                    kind: PartKind::Path,
                    source: word.text.clone(),
                    text: alt.clone(),
                    verdict: Verdict::Ask,
                    rule: None,
                    reason: format!(
                        "the pattern `{alt}` is relative and {why}, so where it lands is not known"
                    ),
                });
                return;
            }
            let bases: &[PathBuf] = if relative {
                &places.dirs
            } else {
                &places.dirs[..1]
            };
            for base in bases {
                let absolute = if relative {
                    format!("{}/{alt}", base.to_string_lossy())
                } else {
                    alt.clone()
                };
                let comps = lexical_components(&absolute);
                let wide = places.wide.is_some();
                if let Some(dir) = self
                    .rules
                    .floor_dirs()
                    .iter()
                    .find(|d| pattern_reaches(&comps, d, wide))
                {
                    let rule = self.rules.floor().first_match(dir).cloned();
                    let reason = format!(
                        "the pattern `{}` could match the floor directory `{}` or a file in it{}; no rule can allow it",
                        word.text,
                        dir.display(),
                        places.widened()
                    );
                    parts.push(path_part(word, dir, Verdict::Deny, rule, reason));
                    return;
                }
                if let Some(link) = places.pattern_through_link(&comps) {
                    parts.push(Part {
                        kind: PartKind::Path,
                        source: word.text.clone(),
                        text: alt.clone(),
                        verdict: Verdict::Ask,
                        rule: None,
                        reason: format!(
                            "the pattern `{alt}` could go through `{}`, a symlink the line makes, so where it lands is not known",
                            link.display()
                        ),
                    });
                    return;
                }
                if !has_meta(alt) {
                    // Only braces: each word is an ordinary path.
                    self.judge_known(word, alt, Candidate::Whole, places, parts);
                    continue;
                }
                match glob_disk(self.rules.disk(), &comps, wide) {
                    Some(matches) => {
                        for m in matches {
                            let text = m.to_string_lossy();
                            let before = parts.len();
                            self.judge_known(word, &text, Candidate::Whole, places, parts);
                            if parts.len() > before {
                                return;
                            }
                        }
                    }
                    None => {
                        parts.push(Part {
                            kind: PartKind::Path,
                            source: word.text.clone(),
                            text: alt.clone(),
                            verdict: Verdict::Ask,
                            rule: None,
                            reason: format!(
                                "the pattern `{alt}` matches more files than the gate checks"
                            ),
                        });
                        return;
                    }
                }
            }
        }
    }
}

use crate::shell::options::{grammar_of, parse, Arg, UNKNOWN};
use crate::shell::programs::{
    program_named, sed_script, sed_scripts, text_only, text_option, text_values, written, SedEffect,
};
use crate::shell::registry::{entry_named, has_special};

impl Gate<'_> {
    /// The places of `c` when a directory option moves it: relative words
    /// land below that directory as well.
    fn directory_option(&self, c: &SimpleCommand, places: &Places) -> Option<Places> {
        let at = c.command_at?;
        // The program's own options, and those of each wrapper before it.
        let mut spans: Vec<(&str, &[&str], std::ops::Range<usize>)> = Vec::new();
        for (i, w) in c.words.iter().enumerate().take(at + 1) {
            let name = basename(&w.text);
            let options = entry_named(name).map_or(&[][..], |e| e.directory_options);
            if !options.is_empty() {
                let end = if i == at { c.words.len() } else { at };
                spans.push((name, options, i + 1..end));
            }
        }
        if spans.is_empty() {
            return None;
        }
        let mut dirs = Vec::new();
        let mut unknown = None;
        let texts: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
        for (program, options, span) in spans {
            // The program's own options, as its grammar reads them; for a
            // program with subcommands (`git -C`), those before the subcommand.
            let grammar = grammar_of(program, None).unwrap_or(&UNKNOWN);
            let parsed = parse(grammar, &texts[..span.end], span.start);
            let has_subcommands = program_named(program).is_some_and(|p| !p.subcommands.is_empty());
            let before_sub = parsed
                .args
                .iter()
                .find_map(|a| match a {
                    Arg::Operand(i) if has_subcommands => Some(*i),
                    _ => None,
                })
                .unwrap_or(span.end);
            let values: Vec<_> = options
                .iter()
                .flat_map(|o| parsed.values(o))
                .filter(|v| v.word < before_sub)
                .collect();
            for v in values {
                let w = &c.words[v.word];
                let value = ShellWord {
                    text: w.text.get(v.offset..).unwrap_or("").to_string(),
                    ..w.clone()
                };
                match places.expand(&value) {
                    Expansion::Known(t) => {
                        for base in &places.dirs {
                            if let Ok(r) = canon::canonicalize_in(base, &t) {
                                dirs.push(r.path);
                            }
                        }
                    }
                    _ => {
                        unknown = Some(format!(
                            "`{} {}` works in a directory not known here",
                            program, value.text
                        ))
                    }
                }
            }
        }
        if dirs.is_empty() && unknown.is_none() {
            return None;
        }
        let mut all = places.dirs.clone();
        all.extend(dirs);
        Some(Places {
            dirs: all,
            unknown: unknown.or_else(|| places.unknown.clone()),
            ..places.clone()
        })
    }

    /// The files `c` writes through its operands and options, and what its
    /// sed scripts write and read.
    fn judge_writes(&self, c: &SimpleCommand, at: usize, places: &Places, parts: &mut Vec<Part>) {
        let texts: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
        for w in written(&texts, at) {
            let Some(word) = c.words.get(w.word) else {
                continue;
            };
            let text = word.text.get(w.offset..).unwrap_or("");
            let shown = ShellWord {
                text: if text.is_empty() && w.word == at {
                    ".".into()
                } else {
                    text.to_string()
                },
                ..word.clone()
            };
            self.judge_write(c, &shown, w.recursive, places, parts);
        }
        if has_special(basename(texts[at]), Special::SedScripts) {
            for (j, script) in sed_scripts(&texts, at) {
                let w = &c.words[j];
                let Ok(effects) = sed_script(script) else {
                    continue;
                };
                for e in effects {
                    match e {
                        SedEffect::Writes(f) => {
                            let shown = ShellWord {
                                text: f,
                                ..w.clone()
                            };
                            self.judge_write(c, &shown, false, places, parts);
                        }
                        SedEffect::Reads(f) => {
                            let shown = ShellWord {
                                text: f,
                                ..w.clone()
                            };
                            if let Expansion::Known(t) = places.expand(&shown) {
                                self.judge_known(&shown, &t, Candidate::Whole, places, parts);
                            }
                        }
                    }
                }
            }
        }
    }

    /// One written path: the floor, a directory holding it (for a recursive
    /// write), a deny rule → DENY; no allow rule → ASK.
    fn judge_write(
        &self,
        c: &SimpleCommand,
        word: &ShellWord,
        recursive: bool,
        places: &Places,
        parts: &mut Vec<Part>,
    ) {
        let texts = match places.expand(word) {
            Expansion::Unknown => {
                parts.push(write_part(
                    c,
                    word,
                    None,
                    Verdict::Ask,
                    None,
                    format!(
                        "`{}` writes `{}`, whose value is only known when the command runs",
                        c.normalized, word.text
                    ),
                ));
                return;
            }
            Expansion::Known(t) => vec![t],
            Expansion::Pattern(t) => {
                let Some(alternatives) = brace_expand(&t) else {
                    return;
                };
                let mut out = Vec::new();
                for alt in alternatives {
                    if !has_meta(&alt) {
                        out.push(alt);
                        continue;
                    }
                    let bases: Vec<String> = if alt.starts_with('/') {
                        vec![String::new()]
                    } else {
                        places
                            .dirs
                            .iter()
                            .map(|d| d.to_string_lossy().into_owned())
                            .collect()
                    };
                    for base in bases {
                        let absolute = if base.is_empty() {
                            alt.clone()
                        } else {
                            format!("{base}/{alt}")
                        };
                        match glob_disk(
                            self.rules.disk(),
                            &lexical_components(&absolute),
                            places.wide.is_some(),
                        ) {
                            Some(m) if !m.is_empty() => {
                                out.extend(m.into_iter().map(|p| p.to_string_lossy().into_owned()))
                            }
                            Some(_) => out.push(absolute),
                            None => {
                                parts.push(write_part(c, word, None, Verdict::Ask, None, format!(
                                    "the pattern `{alt}` that `{}` writes matches more files than the gate checks",
                                    c.normalized
                                )));
                                return;
                            }
                        }
                    }
                }
                out
            }
        };
        for text in texts {
            // A written `-` is a file of that name (`find -fls -`, `git diff
            // --output -`): the writers take standard output only by path.
            if shell::is_harmless_target(&text) {
                continue;
            }
            if let Some(link) = places.through_link(&text) {
                parts.push(write_part(c, word, None, Verdict::Ask, None, format!(
                    "`{}` writes `{text}`, which goes through `{}`, a symlink the line makes, so where it lands is not known",
                    c.normalized,
                    link.display()
                )));
                return;
            }
            if !text.starts_with('/') {
                if let Some(why) = &places.unknown {
                    parts.push(write_part(c, word, None, Verdict::Ask, None, format!(
                        "`{}` writes the relative path `{text}` and {why}, so where it lands is not known",
                        c.normalized
                    )));
                    return;
                }
            }
            let bases: &[PathBuf] = if text.starts_with('/') {
                &places.dirs[..1]
            } else {
                &places.dirs
            };
            for base in bases {
                let r = match canon::canonicalize_in(base, &text) {
                    Ok(r) => r,
                    Err(e) => {
                        parts.push(write_part(
                            c,
                            word,
                            None,
                            Verdict::Deny,
                            None,
                            format!(
                                "`{}` writes `{text}`, which cannot be checked: {e}",
                                c.normalized
                            ),
                        ));
                        return;
                    }
                };
                if let Some((rule, why)) = self.protected(
                    &r.path,
                    r.meta.as_ref().map(Entry::of).as_ref(),
                    Access::Write,
                ) {
                    parts.push(write_part(
                        c,
                        word,
                        Some(&r.path),
                        Verdict::Deny,
                        rule,
                        format!("`{}` writes a path: {why}", c.normalized),
                    ));
                    return;
                }
                if recursive {
                    if let Some(dir) = self
                        .rules
                        .floor_dirs()
                        .iter()
                        .find(|d| d.starts_with(&r.path))
                    {
                        let rule = self.rules.floor().first_match(dir).cloned();
                        parts.push(write_part(c, word, Some(&r.path), Verdict::Deny, rule, format!(
                            "`{}` writes everything below `{}`, which holds the floor directory `{}`; no rule can allow it",
                            c.normalized,
                            r.path.display(),
                            dir.display()
                        )));
                        return;
                    }
                }
                if self
                    .rules
                    .path_allow()
                    .first_match_for(&r.path, Access::Write)
                    .is_none()
                {
                    parts.push(write_part(
                        c,
                        word,
                        Some(&r.path),
                        Verdict::Ask,
                        None,
                        format!(
                            "`{}` writes `{}`, and no path allow rule for writing matched it",
                            c.normalized,
                            r.path.display()
                        ),
                    ));
                    return;
                }
            }
        }
    }
}

fn write_part(
    c: &SimpleCommand,
    word: &ShellWord,
    canonical: Option<&Path>,
    verdict: Verdict,
    rule: Option<RuleRef>,
    reason: String,
) -> Part {
    Part {
        kind: PartKind::Write,
        source: c.source.clone(),
        text: canonical.map_or(word.text.clone(), |p| p.to_string_lossy().into_owned()),
        verdict,
        rule,
        reason,
    }
}

fn path_part(
    word: &ShellWord,
    canonical: &Path,
    verdict: Verdict,
    rule: Option<RuleRef>,
    why: String,
) -> Part {
    Part {
        kind: PartKind::Path,
        source: word.text.clone(),
        text: canonical.to_string_lossy().into_owned(),
        verdict,
        rule,
        reason: format!("the word `{}` names a path: {why}", word.text),
    }
}

/// Which part of a word a candidate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Candidate {
    /// The whole word.
    Whole,
    /// The value of `--opt=VALUE` or `NAME=VALUE`.
    OptionValue,
    /// What follows the letter of `-oVALUE` (or the letters of `-la`).
    Cluster,
}

struct Cand<'a> {
    text: &'a str,
    kind: Candidate,
}

/// The texts of a word that may name a path.
fn candidates(word: &ShellWord) -> impl Iterator<Item = Cand<'_>> {
    let t = word.text.as_str();
    let whole = (!word.assignment).then_some(Cand {
        text: t,
        kind: Candidate::Whole,
    });
    let value = t
        .split_once('=')
        .filter(|(head, _)| !head.is_empty() && !head.contains('/'))
        .map(|(_, v)| Cand {
            text: v,
            kind: Candidate::OptionValue,
        });
    let cluster = (t.len() > 2
        && t.starts_with('-')
        && !t.starts_with("--")
        && t.is_char_boundary(2)
        && !word.assignment)
        .then(|| Cand {
            text: &t[2..],
            kind: Candidate::Cluster,
        })
        .filter(|_| value.is_none());
    whole.into_iter().chain(value).chain(cluster)
}

/// Whether `s` holds a glob character (`*`, `?`, `[`).
fn has_meta(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Brace expansion of a command word: [`brace_expand_within`]
/// [`MAX_BRACE_WORDS`] words.
fn brace_expand(s: &str) -> Option<Vec<String>> {
    brace_expand_within(s, MAX_BRACE_WORDS)
}

/// Brace expansion as bash does it (`a{b,c}d` → `abd acd`, nested, in
/// order); a `{` without a top-level comma stays literal. `None` beyond
/// `max` words. Shared by the shell analysis and the agent hooks' patterns.
pub fn brace_expand_within(s: &str, max: usize) -> Option<Vec<String>> {
    let bytes = s.as_bytes();
    for (open, &b) in bytes.iter().enumerate() {
        if b != b'{' {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        for (j, &c) in bytes.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(j);
                        break;
                    }
                }
                b',' if depth == 1 => commas.push(j),
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        if commas.is_empty() {
            continue;
        }
        let (pre, post) = (&s[..open], &s[close + 1..]);
        let mut bounds = vec![open];
        bounds.extend(&commas);
        bounds.push(close);
        let mut out = Vec::new();
        for w in bounds.windows(2) {
            let middle = &s[w[0] + 1..w[1]];
            for tail in brace_expand_within(&format!("{middle}{post}"), max)? {
                out.push(format!("{pre}{tail}"));
                if out.len() > max {
                    return None;
                }
            }
        }
        return Some(out);
    }
    Some(vec![s.to_string()])
}

/// The components of an absolute pattern after collapsing `.`, `..` and
/// repeated slashes.
fn lexical_components(absolute: &str) -> Vec<String> {
    let mut parts = Vec::new();
    crate::canon::push_normal(&mut parts, absolute.as_bytes());
    parts
        .into_iter()
        .map(|part| String::from_utf8_lossy(part).into_owned())
        .collect()
}

/// Whether the pattern `comps` could name `dir` or a path below it
/// (`wide`: with dot-files and any case matched, see [`glob_match`]).
fn pattern_reaches(comps: &[String], dir: &Path, wide: bool) -> bool {
    let dir_comps: Vec<&str> = dir
        .to_str()
        .unwrap_or("")
        .split('/')
        .filter(|c| !c.is_empty())
        .collect();
    comps.len() >= dir_comps.len()
        && dir_comps
            .iter()
            .zip(comps)
            .all(|(name, pat)| glob_match(pat.as_bytes(), name.as_bytes(), wide))
}

/// Expands an absolute pattern against `disk`, as bash's globbing does
/// (`wide`: as with `dotglob` and `nocaseglob`); `None` when it reads or
/// matches too much. A pattern that matches nothing stays as written, as
/// bash leaves it.
fn glob_disk(disk: &dyn Disk, comps: &[String], wide: bool) -> Option<Vec<PathBuf>> {
    let mut current = vec![PathBuf::from("/")];
    let mut scanned = 0usize;
    for comp in comps {
        let mut next = Vec::new();
        if !has_meta(comp) {
            for c in &current {
                next.push(c.join(comp));
            }
        } else {
            for c in &current {
                let mut too_much = false;
                disk.list(c, &mut |name| {
                    scanned += 1;
                    if scanned > MAX_GLOB_SCANNED {
                        too_much = true;
                        return ControlFlow::Break(());
                    }
                    if glob_match(comp.as_bytes(), name.as_encoded_bytes(), wide) {
                        next.push(c.join(name));
                        if next.len() > MAX_GLOB_MATCHES {
                            too_much = true;
                            return ControlFlow::Break(());
                        }
                    }
                    ControlFlow::Continue(())
                });
                if too_much {
                    return None;
                }
            }
        }
        current = next;
        if current.is_empty() {
            break;
        }
    }
    Some(current)
}

/// Whether one path component `name` matches the bash pattern `pat`
/// (`*`, `?`, `[…]`, `[!…]`, `[^…]`). A leading `.` must be matched by a
/// literal `.`, and `.`/`..` by nothing but themselves. `wide`: after a
/// setting that widens patterns (`dotglob`, `nocaseglob`, `extglob`), a
/// leading `.` needs no literal `.`, case is ignored, and an extended
/// pattern (`@(…)`, `!(…)`) matches anything.
pub(crate) fn glob_match(pat: &[u8], name: &[u8], wide: bool) -> bool {
    if matches!(name, b"." | b"..") {
        return pat == name;
    }
    if !wide {
        if name.first() == Some(&b'.') && pat.first() != Some(&b'.') {
            return false;
        }
        return component_matches(pat, name);
    }
    if pat
        .windows(2)
        .any(|w| matches!(w[0], b'?' | b'*' | b'+' | b'@' | b'!') && w[1] == b'(')
    {
        return true;
    }
    component_matches(&pat.to_ascii_lowercase(), &name.to_ascii_lowercase())
}

/// One path component against one shell pattern component, byte for byte:
/// `*`, `?`, `[…]`, `[!…]`, `[^…]` and `\c` for a literal `c`. A leading dot
/// gets no special treatment here (callers that follow the shell's rule check
/// it first, see `glob_match`). Shared by the shell analysis and the agent
/// hooks' search patterns.
pub fn component_matches(pat: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pat.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
                continue;
            }
            Some(b'?') => {
                p += 1;
                n += 1;
                continue;
            }
            Some(b'[') => {
                if let Some((matched, len)) = class_match(&pat[p..], name[n]) {
                    if matched {
                        p += len;
                        n += 1;
                        continue;
                    }
                } else if name[n] == b'[' {
                    p += 1;
                    n += 1;
                    continue;
                }
            }
            Some(b'\\') if pat.get(p + 1) == Some(&name[n]) => {
                p += 2;
                n += 1;
                continue;
            }
            Some(&c) if c == name[n] => {
                p += 1;
                n += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, sn)) => {
                p = sp + 1;
                n = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    pat[p..].iter().all(|&c| c == b'*')
}

/// Matches `c` against the class at the start of `pat` (`[…]`); returns
/// whether it matched and the class's length, or `None` if `pat` holds no
/// complete class (the `[` is then literal).
fn class_match(pat: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(pat.get(1), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let &b = pat.get(i)?;
        if b == b']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if pat.get(i + 1) == Some(&b'-') && pat.get(i + 2).is_some_and(|&e| e != b']') {
            let e = pat[i + 2];
            if b <= c && c <= e {
                matched = true;
            }
            i += 3;
        } else {
            if b == c {
                matched = true;
            }
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_patterns() {
        let m = |p: &str, n: &str| glob_match(p.as_bytes(), n.as_bytes(), false);
        assert!(m(".ss*", ".ssh"));
        assert!(!m("*", ".ssh"));
        assert!(m(".*", ".ssh"));
        assert!(m("id_*", "id_rsa"));
        assert!(!m("[.]ssh", "ssh"));
        assert!(m(".[s]sh", ".ssh"));
        assert!(m(".[!x]sh", ".ssh"));
        assert!(!m(".[!s]sh", ".ssh"));
        assert!(m(".s?h", ".ssh"));
        assert!(m("*.rs", "main.rs"));
        assert!(!m("*.rs", "main.rsx"));
        assert!(m("a[", "a["));
        assert!(m(".[a-z]sh", ".ssh"));
    }

    #[test]
    fn braces() {
        assert_eq!(
            brace_expand("~/.{ssh,aws}/x").unwrap(),
            ["~/.ssh/x", "~/.aws/x"]
        );
        assert_eq!(
            brace_expand("a{b,c{d,e}}f").unwrap(),
            ["abf", "acdf", "acef"]
        );
        assert_eq!(brace_expand("a{b}c").unwrap(), ["a{b}c"]);
        assert!(brace_expand("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}").is_none());
    }

    #[test]
    fn reaching() {
        let dir = Path::new("/home/me/.ssh");
        let r = |p: &str| pattern_reaches(&lexical_components(p), dir, false);
        assert!(r("/home/me/.ss*/id_*"));
        assert!(r("/home/*/.ssh"));
        assert!(r("/home/me/.*"));
        assert!(!r("/home/me/*"));
        assert!(!r("/home/me/src/*.rs"));
        assert!(r("/home/me/x/../.s[s]h/k"));
    }
}
