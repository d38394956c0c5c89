//! What one line does to the paths of its other commands, and the reads a
//! command makes beyond its words: `CDPATH`, settings that widen patterns,
//! symlinks the line makes, trees read whole (`grep -r ~`), files named in
//! option values of their own form (`curl -d @FILE`) and the directories
//! the shell lists for a printing program's patterns (`echo ~/.ssh/*`).

use std::path::{Path, PathBuf};

use super::{
    basename, brace_expand, glob_disk, has_meta, lexical_components, path_part, pattern_reaches,
    Candidate, Expansion, Places,
};
use crate::decision::{Part, PartKind, RuleRef, Verdict};
use crate::gate::Gate;
use crate::request::Context;
use crate::shell::reads::{
    file_values, glob_widening, recursive_reads, symlinks_made, Reach, GLOB_VARIABLES,
};
use crate::shell::registry::{has_special, Special};
use crate::shell::{Analysis, ShellWord, SimpleCommand};

/// The lexical absolute path of `text` from `base` (no symlink resolved).
fn lexical(base: &Path, text: &str) -> PathBuf {
    let joined = if text.starts_with('/') {
        text.to_string()
    } else {
        format!("{}/{text}", base.to_string_lossy())
    };
    let mut path = PathBuf::from("/");
    path.extend(lexical_components(&joined));
    path
}

impl Places {
    /// The `CDPATH` directories a relative `cd` of the line may land below:
    /// the environment's and every value the line assigns. `Err` when the
    /// line changes it in a way the gate cannot read (`CDPATH+=…`, `read
    /// CDPATH`, a value only known at run time).
    pub(super) fn cdpath_of(
        &self,
        analysis: &Analysis,
        ctx: &Context,
    ) -> Result<Vec<String>, String> {
        let mut entries = Vec::new();
        let mut add = |value: &str, expansion: bool| -> Result<(), String> {
            for entry in value.split(':') {
                let word = ShellWord {
                    text: entry.to_string(),
                    expansion,
                    ..ShellWord::default()
                };
                match self.expand(&word) {
                    Expansion::Known(t) | Expansion::Pattern(t) => entries.push(t),
                    Expansion::Unknown => {
                        return Err(format!(
                            "its entry `{entry}` is only known when the command runs"
                        ))
                    }
                }
            }
            Ok(())
        };
        if let Some(value) = &ctx.cdpath {
            add(value, false)?;
        }
        for c in &analysis.commands {
            for w in &c.words {
                if let Some(value) = w.text.strip_prefix("CDPATH=") {
                    add(value, w.expansion)?;
                } else if w.text.contains("CDPATH") {
                    return Err(format!("`{}` changes or reads `CDPATH`", c.normalized));
                }
            }
        }
        Ok(entries)
    }

    /// Notes a command that widens what later patterns match.
    pub(super) fn widen(&mut self, c: &SimpleCommand) {
        if self.wide.is_some() {
            return;
        }
        if let Some(w) = c.words.iter().find(|w| {
            GLOB_VARIABLES.iter().any(|v| {
                w.text == *v
                    || w.text
                        .strip_prefix(v)
                        .is_some_and(|r| r.starts_with('=') || r.starts_with("+="))
            })
        }) {
            self.wide = Some(format!("`{}` changes what patterns match", w.text));
            return;
        }
        let Some(at) = c.command_at else { return };
        let texts: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
        let expansion: Vec<bool> = c.words.iter().map(|w| w.expansion).collect();
        self.wide = glob_widening(&texts, &expansion, at);
    }

    /// ` (patterns match …)` naming what widened patterns, or nothing.
    pub(super) fn widened(&self) -> String {
        self.wide.as_ref().map_or(String::new(), |why| {
            format!(" (patterns match dot-files and any case: {why})")
        })
    }

    /// Notes the symlinks `c` makes (`ln -s A B`, `cp -s A B`).
    pub(super) fn symlinks(&mut self, c: &SimpleCommand) {
        let Some(at) = c.command_at else { return };
        let texts: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
        let Some((links, targets)) = symlinks_made(&texts, at) else {
            return;
        };
        // A link made in a directory is named after its target.
        let target_names: Vec<String> = targets
            .iter()
            .map(|&t| match self.expand(&c.words[t]) {
                Expansion::Known(text) | Expansion::Pattern(text) => {
                    basename(text.trim_end_matches('/')).to_string()
                }
                Expansion::Unknown => basename(&c.words[t].text).to_string(),
            })
            .collect();
        let mut names: Vec<(String, Option<String>)> = Vec::new();
        for &l in &links {
            match self.expand(&c.words[l]) {
                Expansion::Known(t) => {
                    names.push((t.clone(), None));
                    // A destination that is a directory gets the link inside it.
                    for name in &target_names {
                        names.push((t.clone(), Some(name.clone())));
                    }
                }
                _ => {
                    self.unknown.get_or_insert_with(|| {
                        format!(
                            "`{}` makes a symlink whose name is only known when the command runs",
                            c.normalized
                        )
                    });
                    return;
                }
            }
        }
        if links.is_empty() {
            for name in target_names {
                names.push((".".into(), Some(name)));
            }
        }
        for (dir, inside) in names {
            let text = match inside {
                Some(name) => format!("{dir}/{name}"),
                None => dir,
            };
            let bases: &[PathBuf] = if text.starts_with('/') {
                &self.dirs[..1]
            } else {
                &self.dirs
            };
            for base in bases {
                let link = lexical(base, &text);
                if !self.links.contains(&link) {
                    self.links.push(link);
                }
            }
        }
    }

    /// In a line that makes a symlink, every path a command writes may be
    /// a copy of it (`cp -P`, `mv`, `rsync -l`), and is taken as a link too.
    pub(super) fn copies_of_links(&mut self, c: &SimpleCommand) {
        let Some(at) = c.command_at else { return };
        let texts: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
        let mut written: Vec<usize> = crate::shell::programs::written(&texts, at)
            .iter()
            .filter(|w| w.offset == 0)
            .map(|w| w.word)
            .collect();
        if has_special(basename(texts[at]), Special::CopiesLinks) && texts.len() > at + 2 {
            written.push(texts.len() - 1);
        }
        for i in written {
            let Expansion::Known(text) = self.expand(&c.words[i]) else {
                continue;
            };
            let bases: Vec<PathBuf> = if text.starts_with('/') {
                self.dirs[..1].to_vec()
            } else {
                self.dirs.clone()
            };
            for base in bases {
                let link = lexical(&base, &text);
                if !self.links.contains(&link) {
                    self.links.push(link);
                }
            }
        }
    }

    /// Whether `c` makes one of the line's symlinks.
    pub(super) fn makes_links(&self, c: &SimpleCommand) -> bool {
        !self.links.is_empty()
            && c.command_at.is_some_and(|at| {
                let texts: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
                symlinks_made(&texts, at).is_some()
            })
    }

    /// The symlink made by the line that the expanded path `text` goes
    /// through, from any directory the line runs in.
    pub(crate) fn through_link(&self, text: &str) -> Option<&Path> {
        if self.skip_links || self.links.is_empty() {
            return None;
        }
        let bases: &[PathBuf] = if text.starts_with('/') {
            &self.dirs[..1]
        } else {
            &self.dirs
        };
        bases.iter().find_map(|base| {
            let path = lexical(base, text);
            self.links
                .iter()
                .find(|l| path.starts_with(l))
                .map(PathBuf::as_path)
        })
    }

    /// The symlink made by the line that the absolute pattern `comps` could go through.
    pub(super) fn pattern_through_link(&self, comps: &[String]) -> Option<&Path> {
        if self.skip_links {
            return None;
        }
        let wide = self.wide.is_some();
        self.links
            .iter()
            .find(|l| pattern_reaches(comps, l, wide))
            .map(PathBuf::as_path)
    }
}

impl<'a> Gate<'a> {
    /// A program that reads whole trees (`grep -r`, `tar c`, `cp -r`,
    /// `find`): a tree that holds a floor directory is a read of the floor
    /// (DENY), or an ASK when the program may skip dot-files or reads only
    /// names.
    pub(super) fn judge_trees(
        &self,
        c: &SimpleCommand,
        at: usize,
        places: &Places,
        parts: &mut Vec<Part>,
    ) {
        let texts: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
        let Some((entry, roots, hidden)) = recursive_reads(&texts, at) else {
            return;
        };
        let (verdict, what) = match (entry.reach, hidden) {
            (Reach::Contents, true) => (Verdict::Deny, "reads every file below"),
            (Reach::Contents, false) => (
                Verdict::Ask,
                "reads the files below (skipping dot-files unless an option or a configuration file the gate cannot see says otherwise)",
            ),
            (Reach::Names, true) => (Verdict::Ask, "lists the names of every file below"),
            (Reach::Names, false) => return,
        };
        let here = ShellWord {
            text: ".".into(),
            ..ShellWord::default()
        };
        let wide = places.wide.is_some();
        for root in roots {
            let word = root.map_or(&here, |i| &c.words[i]);
            let alternatives = match places.expand(word) {
                Expansion::Unknown => {
                    parts.push(tree_part(
                        c,
                        word,
                        Verdict::Ask,
                        None,
                        format!(
                            "`{}` {what} `{}`, whose value is only known when the command runs, so it could hold a protected path",
                            c.normalized, word.text
                        ),
                    ));
                    return;
                }
                Expansion::Known(t) => vec![t],
                Expansion::Pattern(t) => brace_expand(&t).unwrap_or_else(|| vec![t]),
            };
            for text in alternatives {
                if !text.starts_with('/') {
                    if let Some(why) = &places.unknown {
                        parts.push(tree_part(
                            c,
                            word,
                            Verdict::Ask,
                            None,
                            format!(
                                "`{}` {what} `{text}`, which is relative, and {why}, so where it lands is not known",
                                c.normalized
                            ),
                        ));
                        return;
                    }
                }
                if let Some(link) = places.through_link(&text) {
                    parts.push(tree_part(
                        c,
                        word,
                        Verdict::Ask,
                        None,
                        format!(
                            "`{}` {what} `{text}`, which goes through `{}`, a symlink the line makes",
                            c.normalized,
                            link.display()
                        ),
                    ));
                    return;
                }
                let bases: &[PathBuf] = if text.starts_with('/') {
                    &places.dirs[..1]
                } else {
                    &places.dirs
                };
                for base in bases {
                    let tree = if has_meta(&text) {
                        // A pattern naming a directory above the floor: compare it component by component.
                        let comps = lexical_components(&lexical(base, &text).to_string_lossy());
                        self.rules
                            .floor_dirs()
                            .iter()
                            .find(|d| {
                                let n = d.components().count().saturating_sub(1);
                                comps.len() <= n && {
                                    let mut prefix = PathBuf::from("/");
                                    prefix.extend(d.components().skip(1).take(comps.len()));
                                    pattern_reaches(&comps, &prefix, wide)
                                }
                            })
                            .map(|d| (lexical(base, &text), d))
                    } else {
                        match crate::canon::canonicalize_in(base, &text) {
                            Ok(r) => self
                                .rules
                                .floor_dirs()
                                .iter()
                                .find(|d| d.starts_with(&r.path))
                                .map(|d| (r.path, d)),
                            Err(_) => None,
                        }
                    };
                    if tree.is_none() && !has_meta(&text) {
                        if let Ok(r) = crate::canon::canonicalize_in(base, &text) {
                            if let Some(part) =
                                self.deny_rule_below(c, word, &r.path, (verdict, what), entry.reach)
                            {
                                parts.push(part);
                                return;
                            }
                        }
                    }
                    if let Some((path, dir)) = tree {
                        let rule = (verdict == Verdict::Deny)
                            .then(|| self.rules.floor().first_match(dir).cloned())
                            .flatten();
                        let tail = if verdict == Verdict::Deny {
                            "; no rule can allow it"
                        } else {
                            ""
                        };
                        parts.push(tree_part(
                            c,
                            word,
                            verdict,
                            rule,
                            format!(
                                "`{}` {what} `{}`, which holds the floor directory `{}`{tail}",
                                c.normalized,
                                path.display(),
                                dir.display()
                            ),
                        ));
                        return;
                    }
                }
            }
        }
    }

    /// The first read deny rule that names, exactly (`~/.netrc`,
    /// `~/.config/gh/hosts.yml`) or as a directory (`~/.kube/**`), a path
    /// that exists strictly below `root`, with that path: a read of every
    /// file below `root` reads it. Rules with other patterns (`**/*.pem`)
    /// are not looked for. `root` is canonical.
    pub(crate) fn read_deny_below(&self, root: &Path) -> Option<(&'a RuleRef, PathBuf)> {
        let rules = self.rules.path_deny().rules();
        let globs = self.rules.path_deny().compiled_globs();
        for (rule, glob) in rules.iter().zip(globs) {
            if !rule.applies_to(crate::decision::Access::Read) {
                continue;
            }
            let named = ["/**/*", "/**", "/"]
                .iter()
                .find_map(|s| glob.strip_suffix(s))
                .unwrap_or(glob);
            if named.is_empty() || has_meta(named) || named.contains('\\') {
                continue;
            }
            let path = Path::new(named);
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            if rel.as_os_str().is_empty() || self.rules.disk().entry(path).is_none() {
                continue;
            }
            return Some((rule, path.to_path_buf()));
        }
        None
    }

    /// A tree read of `root` that holds a path a read deny rule names
    /// ([`Gate::read_deny_below`]): `grep -r KEY ~/.config` reads
    /// `~/.config/gh/hosts.yml`. A DENY by that rule, unless the program
    /// skips dot-files and the way there holds one (then `floor`, the
    /// verdict the floor would get), or reads only names.
    fn deny_rule_below(
        &self,
        c: &SimpleCommand,
        word: &ShellWord,
        root: &Path,
        floor: (Verdict, &str),
        reach: Reach,
    ) -> Option<Part> {
        let (rule, path) = self.read_deny_below(root)?;
        let dotted = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .components()
            .any(|p| p.as_os_str().as_encoded_bytes().starts_with(b"."));
        let (verdict, what) = match reach {
            Reach::Contents if !dotted => (Verdict::Deny, "reads every file below"),
            _ => floor,
        };
        let store = crate::credentials::store_of_rule(&rule.pattern)
            .map(|s| format!(": a credential store: {}", s.why))
            .unwrap_or_default();
        Some(tree_part(
            c,
            word,
            verdict,
            (verdict == Verdict::Deny).then(|| rule.clone()),
            format!(
                "`{}` {what} `{}`, which holds `{}`, denied by the {} rule `{}` ({}){store}",
                c.normalized,
                root.display(),
                path.display(),
                rule.list_words(),
                rule.pattern,
                rule.origin
            ),
        ))
    }

    /// Files named by option values in a form of their own (`curl -d @FILE`,
    /// `curl -F f=<FILE`), judged like words.
    pub(super) fn judge_file_values(
        &self,
        c: &SimpleCommand,
        at: usize,
        places: &Places,
        parts: &mut Vec<Part>,
    ) {
        let texts: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
        for (i, file) in file_values(&texts, at) {
            // curl expands `{a,b}` and `[1-3]` in an upload's name itself.
            let shown = ShellWord {
                pattern: c.words[i].pattern || file.contains(['{', '[']),
                text: file,
                ..c.words[i].clone()
            };
            match places.expand(&shown) {
                Expansion::Unknown => parts.push(Part {
                    kind: PartKind::Path,
                    source: c.words[i].text.clone(),
                    text: shown.text.clone(),
                    verdict: Verdict::Ask,
                    rule: None,
                    reason: format!(
                        "`{}` reads the file `{}`, whose name is only known when the command runs",
                        c.normalized, shown.text
                    ),
                }),
                Expansion::Known(t) => {
                    self.judge_known(&shown, &t, Candidate::Whole, places, parts)
                }
                Expansion::Pattern(t) => self.judge_pattern(&shown, &t, places, parts),
            }
        }
    }

    /// A pattern of a program that only prints its words (`echo ~/.ssh/*`):
    /// the shell lists the directories it goes through, so a pattern that
    /// reaches inside a floor directory, or whose matches lie in one, is a
    /// listing of the floor.
    pub(super) fn judge_listing(
        &self,
        word: &ShellWord,
        text: &str,
        places: &Places,
        parts: &mut Vec<Part>,
    ) {
        let Some(alternatives) = brace_expand(text) else {
            return;
        };
        let wide = places.wide.is_some();
        for alt in alternatives.iter().filter(|a| has_meta(a)) {
            let relative = !alt.starts_with('/');
            if relative && places.unknown.is_some() {
                continue;
            }
            let bases: &[PathBuf] = if relative {
                &places.dirs
            } else {
                &places.dirs[..1]
            };
            for base in bases {
                let comps = lexical_components(&lexical(base, alt).to_string_lossy());
                let inside = self.rules.floor_dirs().iter().find(|d| {
                    comps.len() > d.components().count().saturating_sub(1)
                        && pattern_reaches(&comps, d, wide)
                });
                if let Some(dir) = inside {
                    let rule = self.rules.floor().first_match(dir).cloned();
                    let reason = format!(
                        "the pattern `{}` lists the floor directory `{}`{}; no rule can allow it",
                        word.text,
                        dir.display(),
                        places.widened()
                    );
                    parts.push(path_part(word, dir, Verdict::Deny, rule, reason));
                    return;
                }
                let Some(matches) = glob_disk(self.rules.disk(), &comps, wide) else {
                    continue;
                };
                let mut seen: Vec<PathBuf> = Vec::new();
                for m in matches {
                    let Some(parent) = m.parent() else { continue };
                    if seen.iter().any(|p| p == parent) {
                        continue;
                    }
                    seen.push(parent.to_path_buf());
                    let before = parts.len();
                    self.judge_known(
                        word,
                        &parent.to_string_lossy(),
                        Candidate::Whole,
                        places,
                        parts,
                    );
                    if parts.len() > before {
                        return;
                    }
                }
            }
        }
    }
}

fn tree_part(
    c: &SimpleCommand,
    word: &ShellWord,
    verdict: Verdict,
    rule: Option<crate::decision::RuleRef>,
    reason: String,
) -> Part {
    Part {
        kind: PartKind::Path,
        source: c.source.clone(),
        text: word.text.clone(),
        verdict,
        rule,
        reason,
    }
}
