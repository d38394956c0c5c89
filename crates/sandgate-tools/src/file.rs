//! The single-file tools: `file_read`, `file_write`, `file_edit`, `file_head_tail`.
//!
//! Each receives the canonical path the gate judged ([`Target`]) and opens
//! exactly that, from a held directory descriptor without following any
//! symlink ([`sandgate_sandbox::beneath`]): a directory swapped for a symlink
//! after the check makes the call fail, and a read checks that the file it
//! opened is the one that was judged. A write makes its temporary file in the
//! judged directory only, through the held descriptor, unnamed where the file
//! system allows it (`O_TMPFILE`), so that an error or a kill leaves nothing
//! behind.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use sandgate_sandbox::beneath;
use serde_json::json;

use crate::error::ToolError;
use crate::judged::{changed, walk_error, Target};
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

fn open_regular(target: &Target) -> Result<(File, u64), ToolError> {
    let path = &target.path;
    let (file, st) = target.open_read("read")?;
    if st.is_dir() {
        return Err(ToolError::failed(format!(
            "`{}` is a directory; use `file_list` to see what it holds",
            path.display()
        )));
    }
    if !st.is_file() {
        return Err(ToolError::failed(format!(
            "`{}` is not a regular file",
            path.display()
        )));
    }
    Ok((file, st.size))
}

fn rewind(path: &Path, file: &mut File) -> Result<(), ToolError> {
    file.seek(SeekFrom::Start(0))
        .map(|_| ())
        .map_err(|e| ToolError::io("read", path, &e))
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
pub fn read(
    target: &Target,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<ToolOutput, ToolError> {
    let path = target.path.as_path();
    let (mut file, size) = open_regular(target)?;
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
    rewind(path, &mut file)?;
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

/// A temporary file in a held directory: unnamed (`O_TMPFILE`) where the file
/// system allows it, else named `.sandgate-write-*` and removed again on
/// every way out but [`Temp::replace`].
struct Temp<'d> {
    dir: &'d OwnedFd,
    file: File,
    name: Option<String>,
}

fn temp_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        ".sandgate-write-{}-{:x}{:x}",
        std::process::id(),
        nanos,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

impl<'d> Temp<'d> {
    fn create(dir: &'d OwnedFd) -> std::io::Result<Temp<'d>> {
        if let Some(fd) = beneath::tmpfile_in(dir.as_fd(), 0o600)? {
            return Ok(Temp {
                dir,
                file: File::from(fd),
                name: None,
            });
        }
        loop {
            let name = temp_name();
            let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
            match beneath::open_beneath(dir.as_fd(), Path::new(&name), flags, 0o600) {
                Ok(fd) => {
                    return Ok(Temp {
                        dir,
                        file: File::from(fd),
                        name: Some(name),
                    })
                }
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Gives the file its final name `name`, replacing what is there.
    fn replace(mut self, name: &OsStr) -> std::io::Result<()> {
        let tmp = match self.name.take() {
            Some(tmp) => tmp,
            None => loop {
                let tmp = temp_name();
                match beneath::link_anonymous(self.file.as_fd(), self.dir.as_fd(), OsStr::new(&tmp))
                {
                    Ok(()) => break tmp,
                    Err(e) if e.raw_os_error() == Some(libc::EEXIST) => continue,
                    Err(e) => return Err(e),
                }
            },
        };
        let renamed = beneath::rename_at(
            self.dir.as_fd(),
            OsStr::new(&tmp),
            self.dir.as_fd(),
            name,
            0,
        );
        if renamed.is_err() {
            let _ = beneath::remove_at(self.dir.as_fd(), OsStr::new(&tmp), false);
        }
        renamed
    }
}

impl Drop for Temp<'_> {
    fn drop(&mut self) {
        if let Some(name) = self.name.take() {
            let _ = beneath::remove_at(self.dir.as_fd(), OsStr::new(&name), false);
        }
    }
}

/// Write `content` to `path` (canonical, as judged) atomically: a temporary
/// file in the same directory, flushed to disk, then renamed over the target.
/// Parent directories are created; an existing file keeps its permission
/// bits. No symlink is followed on the way: one there means the path changed
/// since it was judged, and nothing is written. Returns whether the file
/// existed.
pub fn replace_judged(path: &Path, content: &[u8]) -> Result<bool, ToolError> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(ToolError::failed(format!(
            "`{}` has no parent directory",
            path.display()
        )));
    };
    let dir = beneath::create_dirs(parent, 0o777)
        .map_err(|e| walk_error("create the directory", parent, &e))?;
    let existing =
        beneath::stat_at(dir.as_fd(), name).map_err(|e| ToolError::io("read", path, &e))?;
    match existing {
        Some(st) if st.is_dir() => {
            return Err(ToolError::failed(format!(
                "`{}` is a directory",
                path.display()
            )))
        }
        // The judged path has no symlink, not even at its end.
        Some(st) if st.is_symlink() => return Err(changed(path)),
        _ => {}
    }
    let mode = existing.map(|st| st.permissions()).unwrap_or(0o644);
    let mut tmp =
        Temp::create(&dir).map_err(|e| ToolError::io("create a temporary file in", parent, &e))?;
    tmp.file
        .write_all(content)
        .and_then(|_| tmp.file.sync_all())
        .map_err(|e| ToolError::io("write", path, &e))?;
    beneath::chmod(tmp.file.as_fd(), mode)
        .map_err(|e| ToolError::io("set the permissions of", path, &e))?;
    tmp.replace(name)
        .map_err(|e| walk_error("replace", path, &e))?;
    Ok(existing.is_some())
}

/// `file_write`: create or replace a file with `content`.
pub fn write(target: &Target, content: &str) -> Result<ToolOutput, ToolError> {
    let path = target.path.as_path();
    let existed = replace_judged(path, content.as_bytes())?;
    let verb = if existed { "replaced" } else { "created" };
    Ok(ToolOutput::new(
        format!("{verb} `{}` ({} bytes)", path.display(), content.len()),
        json!({"path": path, "bytes": content.len(), "created": !existed}),
    ))
}

/// `file_edit`: replace `old` by `new`, once (it must be unique) or everywhere.
pub fn edit(
    target: &Target,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<ToolOutput, ToolError> {
    let path = target.path.as_path();
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
    let (mut file, size) = open_regular(target)?;
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
    replace_judged(path, edited.as_bytes())?;
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
pub fn head_tail(target: &Target, head: u64, tail: u64) -> Result<ToolOutput, ToolError> {
    let path = target.path.as_path();
    let (mut file, size) = open_regular(target)?;
    refuse_binary(path, &mut file, size)?;
    rewind(path, &mut file)?;
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
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    fn t(p: &Path) -> Target {
        Target::pin(fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()))
    }

    fn tmp_file(text: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.txt");
        fs::write(&p, text).unwrap();
        (dir, p)
    }

    #[test]
    fn reads_windows_of_lines() {
        let (_d, p) = tmp_file(b"a\nb\nc\nd\n");
        assert_eq!(read(&t(&p), None, None).unwrap().text, "a\nb\nc\nd\n");
        let part = read(&t(&p), Some(2), Some(2)).unwrap().text;
        assert_eq!(
            part,
            "b\nc\n[sandgate: showed lines 2–3; the file continues, read on with offset=4]"
        );
        assert_eq!(read(&t(&p), Some(4), Some(9)).unwrap().text, "d\n");
        let e = read(&t(&p), Some(9), None).unwrap_err().to_string();
        assert!(e.contains("past the end"), "{e}");
    }

    #[test]
    fn refuses_binary_and_large_files() {
        let (_d, p) = tmp_file(b"ELF\0\x01\x02");
        let e = read(&t(&p), None, None).unwrap_err().to_string();
        assert!(e.contains("is a binary file (6 bytes)"), "{e}");
        let big = "x".repeat(80).repeat(4000) + "\n";
        let (_d2, p2) = tmp_file(big.as_bytes());
        let e = read(&t(&p2), None, None).unwrap_err().to_string();
        assert!(e.contains("`offset`") && e.contains("`limit`"), "{e}");
    }

    #[test]
    fn writes_atomically_and_keeps_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new/sub/file.txt");
        write(&t(&p), "hello").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "hello");
        fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        let out = write(&t(&p), "again").unwrap();
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
        let e = edit(&t(&p), "one", "1", false).unwrap_err().to_string();
        assert!(e.contains("occurs 2 times"), "{e}");
        let e = edit(&t(&p), "three", "3", false).unwrap_err().to_string();
        assert!(e.contains("was not found"), "{e}");
        edit(&t(&p), "two", "2", false).unwrap();
        edit(&t(&p), "one", "1", true).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "1 2 1\n");
    }

    #[test]
    fn head_and_tail() {
        let text: String = (1..=10).map(|i| format!("{i}\n")).collect();
        let (_d, p) = tmp_file(text.as_bytes());
        let out = head_tail(&t(&p), 2, 2).unwrap().text;
        assert_eq!(out, "1\n2\n[sandgate: 6 lines omitted]\n9\n10\n");
        assert_eq!(head_tail(&t(&p), 6, 6).unwrap().text, text);
        assert_eq!(
            head_tail(&t(&p), 0, 1).unwrap().text,
            "[sandgate: 9 lines omitted]\n10\n"
        );
    }
}

/// The tools open exactly the path the gate judged ([`crate::judged`]).
#[cfg(test)]
mod judged_tests {
    use crate::file;
    use crate::judged::{Root, Target};
    use std::fs;
    use std::os::unix::fs::symlink;
    use std::path::{Path, PathBuf};

    /// `base/d/f` (benign), `base/floor/f` (the secret), and `base/s`, a
    /// symlink to `base/floor` that a "swap" renames over `d`.
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir_all(base.join("d")).unwrap();
        fs::create_dir_all(base.join("floor")).unwrap();
        fs::write(base.join("d/f"), "benign\n").unwrap();
        fs::write(base.join("floor/f"), "secret\n").unwrap();
        symlink(base.join("floor"), base.join("s")).unwrap();
        (tmp, base)
    }

    fn swap(base: &Path) {
        fs::rename(base.join("d"), base.join("kept")).unwrap();
        fs::rename(base.join("s"), base.join("d")).unwrap();
    }

    #[test]
    fn a_symlink_swapped_in_after_the_pin_fails_every_tool() {
        let (_t, base) = tree();
        let file_target = Target::pin(base.join("d/f"));
        let dir_target = Target::pin(base.join("d"));
        assert!(file_target.pinned.is_some());
        swap(&base);
        // By name, the path now reaches the secret.
        assert_eq!(fs::read_to_string(base.join("d/f")).unwrap(), "secret\n");
        let e = file::read(&file_target, None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("changed between the check and the open"), "{e}");
        let e = file::head_tail(&file_target, 1, 1).unwrap_err().to_string();
        assert!(e.contains("changed between"), "{e}");
        let e = file::edit(&file_target, "secret", "x", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("changed between"), "{e}");
        let e = file::write(&Target::pin(base.join("kept/new")), "x")
            .map(|_| ())
            .and_then(|_| file::write(&file_target, "planted"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("changed between"), "{e}");
        let e = Root::open(&dir_target).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("changed between"), "{e}");
        assert_eq!(
            fs::read_to_string(base.join("floor/f")).unwrap(),
            "secret\n"
        );
        let names: Vec<_> = fs::read_dir(base.join("floor")).unwrap().collect();
        assert_eq!(names.len(), 1, "nothing was written in the floor");
    }

    #[test]
    fn a_file_replaced_after_the_pin_is_not_read() {
        let (_t, base) = tree();
        let target = Target::pin(base.join("d/f"));
        // Another file renamed over the judged one: no symlink anywhere.
        fs::write(base.join("d/other"), "replaced\n").unwrap();
        fs::rename(base.join("d/other"), base.join("d/f")).unwrap();
        let e = file::read(&target, None, None).unwrap_err().to_string();
        assert!(e.contains("changed between"), "{e}");
        // A fresh pin reads it.
        let again = Target::pin(base.join("d/f"));
        assert_eq!(file::read(&again, None, None).unwrap().text, "replaced\n");
    }

    #[test]
    fn a_missing_file_pinned_is_not_read_when_it_appears() {
        let (_t, base) = tree();
        let target = Target::pin(base.join("d/late"));
        assert!(target.pinned.is_none());
        fs::write(base.join("d/late"), "late\n").unwrap();
        let e = file::read(&target, None, None).unwrap_err().to_string();
        assert!(e.contains("changed between"), "{e}");
    }
}
