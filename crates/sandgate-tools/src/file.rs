//! The single-file tools: `file_read`, `file_write`, `file_edit`, `file_head_tail`.
//!
//! Each receives the canonical path the gate judged, so a symlink swapped in
//! after the check is not what gets read or written by name.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;

use crate::error::ToolError;
use crate::output::ToolOutput;

/// The most text `file_read` returns in one call.
pub const MAX_READ_BYTES: u64 = 256 * 1024;
/// Lines `file_read` returns when no `limit` is given.
pub const DEFAULT_READ_LINES: u64 = 2000;
/// The largest file `file_edit` rewrites.
pub const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;
/// How much of a file's start is inspected to tell binary from text.
const SNIFF_BYTES: usize = 8192;

/// Whether the first bytes of a file look binary (a NUL byte, as git and grep decide).
pub fn looks_binary(head: &[u8]) -> bool {
    head.contains(&0)
}

fn open_regular(path: &Path) -> Result<(File, u64), ToolError> {
    let file = File::open(path).map_err(|e| ToolError::io("read", path, &e))?;
    let meta = file
        .metadata()
        .map_err(|e| ToolError::io("read", path, &e))?;
    if meta.is_dir() {
        return Err(ToolError::failed(format!(
            "`{}` is a directory; use `file_list` to see what it holds",
            path.display()
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::failed(format!(
            "`{}` is not a regular file",
            path.display()
        )));
    }
    Ok((file, meta.len()))
}

fn refuse_binary(path: &Path, file: &mut File, size: u64) -> Result<(), ToolError> {
    let mut head = vec![0u8; SNIFF_BYTES];
    let mut filled = 0;
    while filled < head.len() {
        match file.read(&mut head[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) => return Err(ToolError::io("read", path, &e)),
        }
    }
    if looks_binary(&head[..filled]) {
        return Err(ToolError::failed(format!(
            "`{}` is a binary file ({size} bytes); the file tools return text only",
            path.display()
        )));
    }
    Ok(())
}

/// Human-readable byte count.
pub fn human_bytes(n: u64) -> String {
    if n >= 1024 * 1024 {
        format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0))
    } else if n >= 1024 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{n} bytes")
    }
}

/// `file_read`: lines `offset..offset+limit` (1-based) of a text file.
pub fn read(path: &Path, offset: Option<u64>, limit: Option<u64>) -> Result<ToolOutput, ToolError> {
    let (mut file, size) = open_regular(path)?;
    refuse_binary(path, &mut file, size)?;
    if offset.is_none() && limit.is_none() && size > MAX_READ_BYTES {
        return Err(ToolError::failed(format!(
            "`{}` is {}, more than the {} `file_read` returns at once; read it in parts with \
             `offset` (first line, 1-based) and `limit` (number of lines), or use `file_head_tail` \
             or `file_grep`",
            path.display(),
            human_bytes(size),
            human_bytes(MAX_READ_BYTES)
        )));
    }
    let first = offset.unwrap_or(1).max(1);
    let limit = limit.unwrap_or(DEFAULT_READ_LINES);
    let file = File::open(path).map_err(|e| ToolError::io("read", path, &e))?;
    let mut reader = BufReader::new(file);
    let mut text = String::new();
    let mut line_no = 0u64;
    let mut returned = 0u64;
    let mut buf = Vec::new();
    let mut more = false;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| ToolError::io("read", path, &e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if line_no < first {
            continue;
        }
        if returned == limit {
            more = true;
            break;
        }
        text.push_str(&String::from_utf8_lossy(&buf));
        returned += 1;
        if text.len() as u64 > MAX_READ_BYTES {
            return Err(ToolError::failed(format!(
                "lines {first}–{} of `{}` are more than the {} `file_read` returns at once; \
                 ask for fewer lines with a smaller `limit`",
                line_no,
                path.display(),
                human_bytes(MAX_READ_BYTES)
            )));
        }
    }
    if first > line_no + 1 || (first > line_no && line_no > 0 && returned == 0) {
        return Err(ToolError::invalid(format!(
            "`offset` {first} is past the end of `{}`, which has {line_no} lines",
            path.display()
        )));
    }
    let last = first + returned.saturating_sub(1);
    if more {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[sandgate: showed lines {first}–{last}; the file continues, read on with offset={}]",
            last + 1
        ));
    }
    Ok(ToolOutput::new(
        text,
        json!({"path": path, "first_line": first, "lines": returned, "more": more, "bytes": size}),
    ))
}

/// Write `content` to `path` atomically: a temporary file in the same directory,
/// flushed to disk, then renamed over the target. Parent directories are created;
/// an existing file keeps its permission bits.
pub fn atomic_write(path: &Path, content: &[u8]) -> Result<(), ToolError> {
    let dir = path.parent().ok_or_else(|| {
        ToolError::failed(format!("`{}` has no parent directory", path.display()))
    })?;
    fs::create_dir_all(dir).map_err(|e| ToolError::io("create the directory", dir, &e))?;
    let existing = fs::metadata(path).ok();
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(ToolError::failed(format!(
            "`{}` is a directory",
            path.display()
        )));
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".sandgate-write-")
        .tempfile_in(dir)
        .map_err(|e| ToolError::io("create a temporary file in", dir, &e))?;
    tmp.write_all(content)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| ToolError::io("write", tmp.path(), &e))?;
    let mode = existing.map(|m| m.permissions().mode()).unwrap_or(0o644);
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(mode))
        .map_err(|e| ToolError::io("set the permissions of", tmp.path(), &e))?;
    tmp.persist(path)
        .map_err(|e| ToolError::io("replace", path, &e.error))?;
    Ok(())
}

/// `file_write`: create or replace a file with `content`.
pub fn write(path: &Path, content: &str) -> Result<ToolOutput, ToolError> {
    let existed = path.exists();
    atomic_write(path, content.as_bytes())?;
    let verb = if existed { "replaced" } else { "created" };
    Ok(ToolOutput::new(
        format!("{verb} `{}` ({} bytes)", path.display(), content.len()),
        json!({"path": path, "bytes": content.len(), "created": !existed}),
    ))
}

/// `file_edit`: replace `old` by `new`, once (it must be unique) or everywhere.
pub fn edit(path: &Path, old: &str, new: &str, replace_all: bool) -> Result<ToolOutput, ToolError> {
    if old.is_empty() {
        return Err(ToolError::invalid(
            "`old_string` is empty; to create or overwrite a file use `file_write`",
        ));
    }
    if old == new {
        return Err(ToolError::invalid(
            "`old_string` and `new_string` are the same; nothing to change",
        ));
    }
    let (mut file, size) = open_regular(path)?;
    if size > MAX_EDIT_BYTES {
        return Err(ToolError::failed(format!(
            "`{}` is {}, more than the {} `file_edit` rewrites",
            path.display(),
            human_bytes(size),
            human_bytes(MAX_EDIT_BYTES)
        )));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.read_to_end(&mut bytes)
        .map_err(|e| ToolError::io("read", path, &e))?;
    if looks_binary(&bytes[..bytes.len().min(SNIFF_BYTES)]) {
        return Err(ToolError::failed(format!(
            "`{}` is a binary file; `file_edit` edits text only",
            path.display()
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        ToolError::failed(format!(
            "`{}` is not valid UTF-8; `file_edit` edits UTF-8 text only",
            path.display()
        ))
    })?;
    let count = text.matches(old).count();
    if count == 0 {
        return Err(ToolError::failed(format!(
            "`old_string` was not found in `{}`; read the file again and copy the text exactly, \
             including whitespace and indentation",
            path.display()
        )));
    }
    if count > 1 && !replace_all {
        return Err(ToolError::failed(format!(
            "`old_string` occurs {count} times in `{}`; include more surrounding lines to make it \
             unique, or set `replace_all` to true",
            path.display()
        )));
    }
    let edited = if replace_all {
        text.replace(old, new)
    } else {
        text.replacen(old, new, 1)
    };
    atomic_write(path, edited.as_bytes())?;
    Ok(ToolOutput::new(
        format!(
            "replaced {count} occurrence{} in `{}`",
            if count == 1 { "" } else { "s" },
            path.display()
        ),
        json!({"path": path, "replacements": count}),
    ))
}

/// `file_head_tail`: the first `head` and the last `tail` lines.
pub fn head_tail(path: &Path, head: u64, tail: u64) -> Result<ToolOutput, ToolError> {
    let (mut file, size) = open_regular(path)?;
    refuse_binary(path, &mut file, size)?;
    let file = File::open(path).map_err(|e| ToolError::io("read", path, &e))?;
    let mut reader = BufReader::new(file);
    let mut first: Vec<String> = Vec::new();
    let mut last: VecDeque<String> = VecDeque::new();
    let mut total = 0u64;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| ToolError::io("read", path, &e))?;
        if n == 0 {
            break;
        }
        total += 1;
        let line = String::from_utf8_lossy(&buf).into_owned();
        if total <= head {
            first.push(line);
        } else if tail > 0 {
            if last.len() as u64 == tail {
                last.pop_front();
            }
            last.push_back(line);
        }
    }
    let mut text: String = first.concat();
    let shown_tail_from = total - last.len() as u64 + 1;
    let gap = shown_tail_from.saturating_sub(head + 1);
    if !last.is_empty() {
        if gap > 0 {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("[sandgate: {gap} lines omitted]\n"));
        }
        text.extend(last);
    }
    Ok(ToolOutput::new(
        text,
        json!({"path": path, "total_lines": total, "head": head.min(total), "tail_from": shown_tail_from, "omitted": gap}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp_file(text: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.txt");
        fs::write(&p, text).unwrap();
        (dir, p)
    }

    #[test]
    fn reads_windows_of_lines() {
        let (_d, p) = tmp_file(b"a\nb\nc\nd\n");
        assert_eq!(read(&p, None, None).unwrap().text, "a\nb\nc\nd\n");
        let part = read(&p, Some(2), Some(2)).unwrap().text;
        assert_eq!(
            part,
            "b\nc\n[sandgate: showed lines 2–3; the file continues, read on with offset=4]"
        );
        assert_eq!(read(&p, Some(4), Some(9)).unwrap().text, "d\n");
        let e = read(&p, Some(9), None).unwrap_err().to_string();
        assert!(e.contains("past the end"), "{e}");
    }

    #[test]
    fn refuses_binary_and_large_files() {
        let (_d, p) = tmp_file(b"ELF\0\x01\x02");
        let e = read(&p, None, None).unwrap_err().to_string();
        assert!(e.contains("is a binary file (6 bytes)"), "{e}");
        let big = "x".repeat(80).repeat(4000) + "\n";
        let (_d2, p2) = tmp_file(big.as_bytes());
        let e = read(&p2, None, None).unwrap_err().to_string();
        assert!(e.contains("`offset`") && e.contains("`limit`"), "{e}");
    }

    #[test]
    fn writes_atomically_and_keeps_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new/sub/file.txt");
        write(&p, "hello").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "hello");
        fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        let out = write(&p, "again").unwrap();
        assert!(out.text.starts_with("replaced"));
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let leftovers: Vec<_> = fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
    }

    #[test]
    fn edits_unique_or_all() {
        let (_d, p) = tmp_file(b"one two one\n");
        let e = edit(&p, "one", "1", false).unwrap_err().to_string();
        assert!(e.contains("occurs 2 times"), "{e}");
        let e = edit(&p, "three", "3", false).unwrap_err().to_string();
        assert!(e.contains("was not found"), "{e}");
        edit(&p, "two", "2", false).unwrap();
        edit(&p, "one", "1", true).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "1 2 1\n");
    }

    #[test]
    fn head_and_tail() {
        let text: String = (1..=10).map(|i| format!("{i}\n")).collect();
        let (_d, p) = tmp_file(text.as_bytes());
        let out = head_tail(&p, 2, 2).unwrap().text;
        assert_eq!(out, "1\n2\n[sandgate: 6 lines omitted]\n9\n10\n");
        assert_eq!(head_tail(&p, 6, 6).unwrap().text, text);
        assert_eq!(
            head_tail(&p, 0, 1).unwrap().text,
            "[sandgate: 9 lines omitted]\n10\n"
        );
    }
}
