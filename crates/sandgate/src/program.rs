//! Finding a program on `PATH` the way `execvp` does.
//!
//! `sandgate run` starts its program itself: every `exec` of a confined tree
//! is a round trip to the supervisor (exec tracking), and a `PATH` search in
//! the child tries `exec` in each directory until one works. Finding the file
//! here first leaves one `exec`.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// The file `execvp` would start for `name`: the first regular file with an
/// execute bit named `name` in a directory of `PATH`. `None` when `name` holds
/// a `/` (it is started as given), when `PATH` is unset (the C library's
/// default applies), or when a relative directory comes before the match (it
/// is relative to the child's working directory, not this one's): in each
/// case the search is left to `execvp`.
pub fn find(name: &OsStr) -> Option<PathBuf> {
    if name.is_empty() || name.as_encoded_bytes().contains(&b'/') {
        return None;
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        if !dir.is_absolute() {
            return None;
        }
        let candidate = dir.join(name);
        if std::fs::metadata(&candidate)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        {
            return Some(candidate);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_a_slash_or_an_empty_name_is_left_to_exec() {
        assert_eq!(find(OsStr::new("./x")), None);
        assert_eq!(find(OsStr::new("/bin/sh")), None);
        assert_eq!(find(OsStr::new("")), None);
    }
}
