//! Brace expansion of a command word, as bash does it before every other
//! expansion: `{a,b}` lists, nested lists, `{x..y}` and `{x..y..step}`
//! sequences of numbers (zero-padded when an end is written with a leading
//! zero) and of letters. Only unquoted braces, commas and dots are syntax,
//! so the expansion works on a word whose every byte says whether it was
//! quoted (or came from a `$…` expansion, whose text bash does not
//! brace-expand). The words made are then judged as the words the program
//! receives: `cat {~/.ssh/id_rsa,}` is `cat ~/.ssh/id_rsa`, and `~` and
//! `$HOME` at the start of a made word expand there.
//!
//! Written here because it must follow bash's rules on quoting and on
//! which braces expand; the crates for brace patterns implement other
//! dialects and know no quoting.

/// Why a word's braces were not expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TooMany {
    /// The word would make more words than the limit.
    Words(usize),
    /// The word holds more brace characters than are looked at.
    Braces(usize),
}

/// A word may make at most this many words.
pub(crate) const MAX_WORDS: usize = 256;
/// A word with more unquoted `{` than this is not expanded (the search is
/// quadratic in them).
const MAX_OPEN_BRACES: usize = 64;

/// A text and, per byte, whether it is quoted (no syntax).
pub(crate) type Masked = (String, Vec<bool>);

/// The words `text` makes, or `Ok(None)` when it holds no brace expression.
/// `quoted[i]` says whether byte `i` of `text` is quoted; missing entries
/// count as unquoted.
pub(crate) fn expand(text: &str, quoted: &[bool]) -> Result<Option<Vec<Masked>>, TooMany> {
    let opens = text
        .bytes()
        .enumerate()
        .filter(|&(i, b)| b == b'{' && !is_quoted(quoted, i))
        .count();
    if opens == 0 {
        return Ok(None);
    }
    if opens > MAX_OPEN_BRACES {
        return Err(TooMany::Braces(MAX_OPEN_BRACES));
    }
    let q: Vec<bool> = (0..text.len()).map(|i| is_quoted(quoted, i)).collect();
    let mut out = Vec::new();
    if !expand_into(text, &q, &mut out)? {
        return Ok(None);
    }
    // Bash drops the words left empty and unquoted (`{a,}` makes `a`).
    out.retain(|(t, q)| !t.is_empty() || !q.is_empty() && q.iter().any(|&b| b));
    Ok(Some(out))
}

fn is_quoted(quoted: &[bool], i: usize) -> bool {
    quoted.get(i).copied().unwrap_or(false)
}

/// Appends the words of `text` to `out`; `false` when it holds no brace
/// expression (then nothing is appended).
fn expand_into(text: &str, q: &[bool], out: &mut Vec<Masked>) -> Result<bool, TooMany> {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(open) = (from..b.len())
        .find(|&i| b[i] == b'{' && !q[i] && !(i > 0 && b[i - 1] == b'$' && !q[i - 1]))
    {
        from = open + 1;
        let Some((close, commas)) = closing(b, q, open) else {
            continue;
        };
        let (pre, pre_q) = (&text[..open], &q[..open]);
        let (post, post_q) = (&text[close + 1..], &q[close + 1..]);
        let alternatives: Vec<Masked> = if commas.is_empty() {
            match sequence(&text[open + 1..close], &q[open + 1..close])? {
                Some(items) => items,
                None => continue,
            }
        } else {
            let mut alts = Vec::new();
            let mut start = open + 1;
            for end in commas.into_iter().chain([close]) {
                let mut made = Vec::new();
                if !expand_into(&text[start..end], &q[start..end], &mut made)? {
                    made.push((text[start..end].to_string(), q[start..end].to_vec()));
                }
                alts.extend(made);
                start = end + 1;
            }
            alts
        };
        let mut tails = Vec::new();
        if !expand_into(post, post_q, &mut tails)? {
            tails.push((post.to_string(), post_q.to_vec()));
        }
        let total = alternatives.len().saturating_mul(tails.len());
        if out.len().saturating_add(total) > MAX_WORDS {
            return Err(TooMany::Words(MAX_WORDS));
        }
        for (a, aq) in &alternatives {
            for (t, tq) in &tails {
                let mut word = String::with_capacity(pre.len() + a.len() + t.len());
                word.push_str(pre);
                word.push_str(a);
                word.push_str(t);
                let mut mask = Vec::with_capacity(word.len());
                mask.extend_from_slice(pre_q);
                mask.extend_from_slice(aq);
                mask.extend_from_slice(tq);
                out.push((word, mask));
            }
        }
        return Ok(true);
    }
    Ok(false)
}

/// The `}` that closes the `{` at `open`, and the unquoted commas at its
/// own depth.
fn closing(b: &[u8], q: &[bool], open: usize) -> Option<(usize, Vec<usize>)> {
    let mut depth = 0usize;
    let mut commas = Vec::new();
    let mut i = open;
    while i < b.len() {
        if !q[i] {
            match b[i] {
                // `${…}` inside a list is one piece, as in bash.
                b'$' if b.get(i + 1) == Some(&b'{') && !q[i + 1] => {
                    let mut inner = 0usize;
                    let mut j = i + 1;
                    while j < b.len() {
                        if !q[j] && b[j] == b'{' {
                            inner += 1;
                        } else if !q[j] && b[j] == b'}' {
                            inner -= 1;
                            if inner == 0 {
                                break;
                            }
                        }
                        j += 1;
                    }
                    i = j;
                }
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((i, commas));
                    }
                }
                b',' if depth == 1 => commas.push(i),
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// The words of a sequence expression's body (`1..3`, `a..e`, `01..10..2`),
/// or `None` when it is not one.
fn sequence(body: &str, q: &[bool]) -> Result<Option<Vec<Masked>>, TooMany> {
    if q.iter().any(|&b| b) {
        return Ok(None);
    }
    let Some(words) = sequence_words(body) else {
        return Ok(None);
    };
    if words.len() > MAX_WORDS {
        return Err(TooMany::Words(MAX_WORDS));
    }
    Ok(Some(
        words
            .into_iter()
            .map(|w| {
                let mask = vec![false; w.len()];
                (w, mask)
            })
            .collect(),
    ))
}

/// The words of a sequence body, or `None` when it is not one; more than
/// [`MAX_WORDS`] are cut at one more.
fn sequence_words(body: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = body.split("..").collect();
    let (lhs, rhs, step) = match parts.as_slice() {
        [l, r] => (*l, *r, None),
        [l, r, s] => (*l, *r, Some(*s)),
        _ => return None,
    };
    let step = match step {
        Some(s) => integer(s)?.unsigned_abs().max(1),
        None => 1,
    };
    let words: Vec<String> = if let (Some(a), Some(z)) = (integer(lhs), integer(rhs)) {
        let padded = |s: &str| {
            let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
            digits.len() > 1 && digits.starts_with('0')
        };
        let width = if padded(lhs) || padded(rhs) {
            lhs.len().max(rhs.len())
        } else {
            0
        };
        let count = a.abs_diff(z) / step + 1;
        if count > MAX_WORDS as u64 {
            return Some(vec![String::new(); MAX_WORDS + 1]);
        }
        (0..count)
            .map(|k| {
                let v = if a <= z {
                    i128::from(a) + i128::from(k * step)
                } else {
                    i128::from(a) - i128::from(k * step)
                };
                if width > 0 {
                    if v < 0 {
                        format!("-{:0>w$}", -v, w = width - 1)
                    } else {
                        format!("{v:0>width$}")
                    }
                } else {
                    v.to_string()
                }
            })
            .collect()
    } else {
        let letter = |s: &str| {
            let mut c = s.chars();
            match (c.next(), c.next()) {
                (Some(ch), None) if ch.is_ascii_alphabetic() => Some(ch as u8),
                _ => None,
            }
        };
        let (a, z) = (letter(lhs)?, letter(rhs)?);
        let step = usize::try_from(step).unwrap_or(usize::MAX);
        let range: Vec<u8> = if a <= z {
            (a..=z).step_by(step).collect()
        } else {
            (z..=a).rev().step_by(step).collect()
        };
        range
            .into_iter()
            .map(|c| char::from(c).to_string())
            .collect()
    };
    Some(words)
}

/// An integer as bash's sequence expressions take it (`-3`, `+4`, `007`).
fn integer(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        match expand(text, &[]).unwrap() {
            Some(w) => w.into_iter().map(|(t, _)| t).collect(),
            None => vec![text.to_string()],
        }
    }

    #[test]
    fn lists_and_nesting_follow_bash() {
        assert_eq!(words("{~/.ssh/id_rsa,}"), ["~/.ssh/id_rsa"]);
        assert_eq!(words("{,}"), Vec::<String>::new());
        assert_eq!(words("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
        assert_eq!(words("{a,b}{1,2}"), ["a1", "a2", "b1", "b2"]);
        assert_eq!(words("{a}{b,c}"), ["{a}b", "{a}c"]);
        assert_eq!(words("{a{b,c}}"), ["{ab}", "{ac}"]);
        assert_eq!(words("{a,b}{"), ["a{", "b{"]);
        assert_eq!(words("{x,$HOME/.ssh}"), ["x", "$HOME/.ssh"]);
        assert_eq!(words("${HOME}{/a,}"), ["${HOME}/a", "${HOME}"]);
        assert_eq!(words("{${X},y}"), ["${X}", "y"]);
        assert_eq!(words("{x}"), ["{x}"]);
        assert_eq!(words("{}"), ["{}"]);
        assert_eq!(words("{a,b"), ["{a,b"]);
    }

    #[test]
    fn sequences_follow_bash() {
        assert_eq!(words("~/.ss{h..h}"), ["~/.ssh"]);
        assert_eq!(words("{a..c}"), ["a", "b", "c"]);
        assert_eq!(words("{c..a}"), ["c", "b", "a"]);
        assert_eq!(words("{1..3..2}"), ["1", "3"]);
        assert_eq!(words("{3..1}"), ["3", "2", "1"]);
        assert_eq!(words("{-1..1}"), ["-1", "0", "1"]);
        assert_eq!(words("{08..10}"), ["08", "09", "10"]);
        assert_eq!(words("{g..i..2}"), ["g", "i"]);
        assert_eq!(words("{1..a}"), ["{1..a}"]);
        assert_eq!(words("{ab..c}"), ["{ab..c}"]);
        assert_eq!(words("{1..2..3..4}"), ["{1..2..3..4}"]);
    }

    #[test]
    fn quoted_braces_are_text() {
        // `"{a,b}"`: every byte quoted.
        let q = vec![true; 5];
        assert_eq!(expand("{a,b}", &q).unwrap(), None);
        // `{a","b}`: the comma is quoted, so nothing is a list.
        let q = [false, false, true, false, false];
        assert_eq!(expand("{a,b}", &q).unwrap(), None);
        // `{a,'~'/x}`: the made word keeps its quoted bytes.
        let made = expand("{a,~/x}", &[false, false, false, true, false, false, false])
            .unwrap()
            .unwrap();
        assert_eq!(made[1], ("~/x".to_string(), vec![true, false, false]));
    }

    #[test]
    fn limits_hold() {
        assert_eq!(
            expand(&"{a,b}".repeat(9), &[]),
            Err(TooMany::Words(MAX_WORDS))
        );
        assert_eq!(expand("{1..100000}", &[]), Err(TooMany::Words(MAX_WORDS)));
        assert_eq!(
            expand(&"{".repeat(1 << 16), &[]),
            Err(TooMany::Braces(MAX_OPEN_BRACES))
        );
        assert!(expand(&format!("{}a,b{}", "{".repeat(60), "}".repeat(60)), &[]).is_ok());
    }
}
