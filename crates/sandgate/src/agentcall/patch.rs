//! Codex CLI's patches: the files an `apply_patch` patch names, in the
//! `apply_patch` tool's input and inside a shell command.

/// The files a Codex CLI patch touches: `*** Add File: P` and `*** Delete File: P`
/// write P, `*** Update File: P` edits it, `*** Move to: P` writes P.
///
/// The patch grammar is Codex CLI's own; no crate parses it, and sandgate only
/// needs the file headers, which Codex reads with surrounding whitespace
/// trimmed.
pub fn patch_files(text: &str) -> Vec<(&'static str, String)> {
    let mut files = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        for (prefix, t) in HEADERS {
            if let Some(path) = line.strip_prefix(prefix) {
                files.push((t, path.trim().to_string()));
            }
        }
    }
    files
}

/// The file headers of a patch, and the sandgate tool each one is.
const HEADERS: [(&str, &str); 4] = [
    ("*** Add File:", "file_write"),
    ("*** Delete File:", "file_write"),
    ("*** Update File:", "file_edit"),
    ("*** Move to:", "file_write"),
];

/// Every file header anywhere in `text`, also where a line does not start
/// with it (`apply_patch $'*** Add File: …`).
fn headers_anywhere(text: &str) -> Vec<(&'static str, String)> {
    let mut files = Vec::new();
    for line in text.lines() {
        for (prefix, t) in HEADERS {
            for (at, _) in line.match_indices(prefix) {
                // A `\n` escape ends the header in a `$'…'` word.
                let rest = &line[at + prefix.len()..];
                let path = rest.split("\\n").next().unwrap_or(rest);
                files.push((t, path.trim().to_string()));
            }
        }
    }
    files
}

/// A patch inside a shell command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellPatch {
    /// Each file header: the sandgate tool and the path as written.
    pub files: Vec<(&'static str, String)>,
    /// Where a `cd` in the command may move to, as written.
    pub cd_dirs: Vec<String>,
}

/// The files of a patch inside a shell command, and the directories a `cd`
/// in the command may move to, when the command could apply one.
///
/// Codex CLI runs `apply_patch <<'EOF' … EOF`, also after `cd DIR &&` and
/// under `bash -lc`, as its own patch tool instead of a shell command; the
/// other agents' shells run a program of that name, if there is one. So any
/// command that names `apply_patch` or `applypatch`, or holds `*** Begin
/// Patch`, is judged on every file header it holds (anywhere in a line, up
/// to a `\n` escape), as written and with `\n` escapes read as line breaks;
/// a header ending in a quote is judged without it too. Relative files are
/// judged from the command's directory and from each `cd` target (`$HOME`
/// read as `~`).
pub fn shell_patch_files(command: &str) -> Option<ShellPatch> {
    if !(command.contains("apply_patch")
        || command.contains("applypatch")
        || command.contains("*** Begin Patch"))
    {
        return None;
    }
    let mut files: Vec<(&'static str, String)> = Vec::new();
    for text in [command.to_string(), command.replace("\\n", "\n")] {
        for (t, path) in headers_anywhere(&text) {
            let unquoted = path.trim_matches(['\'', '"']).trim().to_string();
            for p in [path, unquoted] {
                if !p.is_empty() && !files.iter().any(|(ft, fp)| *ft == t && *fp == p) {
                    files.push((t, p));
                }
            }
        }
    }
    if files.is_empty() {
        return None;
    }
    let mut cd_dirs: Vec<String> = Vec::new();
    let words: Vec<&str> = command.split_whitespace().collect();
    for pair in words.windows(2) {
        let clean = |w: &str| {
            w.trim_matches(['\'', '"', '(', ')', ';', '&', '|'])
                .to_string()
        };
        if clean(pair[0]) != "cd" {
            continue;
        }
        let dir = clean(pair[1]);
        if dir.is_empty() || dir.starts_with('-') {
            continue;
        }
        let dir = ["${HOME}", "$HOME"]
            .iter()
            .find_map(|h| dir.strip_prefix(h).map(|rest| format!("~{rest}")))
            .unwrap_or(dir);
        if !cd_dirs.contains(&dir) {
            cd_dirs.push(dir);
        }
    }
    Some(ShellPatch { files, cd_dirs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_patch_names_its_files_and_the_directories_a_cd_moves_to() {
        let p = shell_patch_files(
            "cd \"$HOME\" && cd sub; apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a\n*** Move to: b\"\n*** End Patch\nEOF",
        )
        .unwrap();
        assert_eq!(
            p.files,
            [
                ("file_edit", "a".to_string()),
                ("file_write", "b\"".to_string()),
                ("file_write", "b".to_string())
            ]
        );
        assert_eq!(p.cd_dirs, ["~", "sub"]);
        let p = shell_patch_files("applypatch $'*** Add File: x\\n+y'").unwrap();
        assert_eq!(p.files, [("file_write", "x".to_string())]);
        assert_eq!(
            shell_patch_files("cd ${HOME}/.ssh && apply_patch '*** Delete File: k'")
                .unwrap()
                .cd_dirs,
            ["~/.ssh"]
        );
        for none in ["ls", "apply_patch --help", "echo '*** Add File: x'"] {
            assert_eq!(shell_patch_files(none), None, "{none}");
        }
    }
}
