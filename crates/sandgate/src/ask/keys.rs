//! Which input answers a question: the bytes a terminal sends, split into
//! keys and noise, and the rules that make a key an answer.
//!
//! A terminal's input carries more than keys: replies to queries a
//! full-screen program sent (cursor-position reports `ESC[12;40R`, device
//! attributes `ESC[?64;1c`, colour reports in `ESC]…BEL`), focus events
//! (`ESC[I`, `ESC[O`), bracketed pastes (`ESC[200~…ESC[201~`), and text
//! typed for the program. None of that may answer a question, so:
//!
//! - every escape sequence, and everything inside a bracketed paste, is
//!   noise; only a plain `1`–`4` can answer;
//! - a key counts only when it stands alone: no input for [`QUIET`] before it
//!   (counted from the moment the question was shown, so nothing typed
//!   before the question appeared can answer it) and none for [`SETTLE`]
//!   after it (a digit inside a typed sentence or a paste is part of a burst);
//! - "always" needs the same key again, alone, as a confirmation.
//!
//! Written by hand: the terminal crates decode keys for applications that own
//! the terminal, and turn unknown sequences into keys (a lone `ESC`, `[`…);
//! here anything unknown has to be noise.

use std::time::{Duration, Instant};

use sandgate_policy::ask::Answer;

/// Input must have been quiet this long before a key that answers.
pub const QUIET: Duration = Duration::from_millis(600);
/// And stay quiet this long after it.
pub const SETTLE: Duration = Duration::from_millis(300);

/// One unit of input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    /// A plain key: a printable ASCII character or a control byte.
    Key(u8),
    /// Anything else: escape sequences, pasted text, non-ASCII text.
    Noise,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    /// After `ESC`.
    Escape,
    /// Inside `ESC [` …, with the parameter bytes so far (to spot `200~`).
    Csi,
    /// After `ESC O`: one more byte.
    Ss3,
    /// Inside a string (`ESC ]`, `ESC P`, `ESC _`, `ESC ^`) until BEL or ST.
    Str,
    /// Inside a string, after an `ESC` (ST is `ESC \`).
    StrEscape,
    /// Inside a bracketed paste, until `ESC[201~`.
    Paste,
}

/// Splits terminal input into [`Token`]s; keeps state across reads.
#[derive(Debug, Clone)]
pub struct Decoder {
    state: State,
    params: Vec<u8>,
    /// The tail of a paste, to find its end marker.
    tail: Vec<u8>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            state: State::Ground,
            params: Vec::new(),
            tail: Vec::new(),
        }
    }
}

const ESC: u8 = 0x1b;
const PASTE_END: &[u8] = b"\x1b[201~";

impl Decoder {
    /// The tokens in `bytes`. A sequence split across reads is one token,
    /// reported when it starts.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Token> {
        let mut out = Vec::new();
        for &b in bytes {
            match self.state {
                State::Ground => match b {
                    ESC => {
                        self.state = State::Escape;
                        out.push(Token::Noise);
                    }
                    0x00..=0x7f => out.push(Token::Key(b)),
                    // UTF-8 lead bytes are text; continuation bytes belong to it.
                    0xc0..=0xff => out.push(Token::Noise),
                    _ => {}
                },
                State::Escape => {
                    self.state = match b {
                        b'[' => {
                            self.params.clear();
                            State::Csi
                        }
                        b'O' => State::Ss3,
                        b']' | b'P' | b'_' | b'^' | b'X' => State::Str,
                        ESC => State::Escape,
                        _ => State::Ground,
                    }
                }
                State::Csi => {
                    if (0x40..=0x7e).contains(&b) {
                        self.state = if b == b'~' && self.params == b"200" {
                            self.tail.clear();
                            State::Paste
                        } else {
                            State::Ground
                        };
                    } else if self.params.len() < 64 {
                        self.params.push(b);
                    }
                }
                State::Ss3 => self.state = State::Ground,
                State::Str => match b {
                    0x07 => self.state = State::Ground,
                    ESC => self.state = State::StrEscape,
                    _ => {}
                },
                State::StrEscape => {
                    self.state = if b == b'\\' {
                        State::Ground
                    } else {
                        State::Str
                    }
                }
                State::Paste => {
                    self.tail.push(b);
                    if self.tail.len() > PASTE_END.len() {
                        self.tail.remove(0);
                    }
                    if self.tail == PASTE_END {
                        self.state = State::Ground;
                    }
                }
            }
        }
        out
    }
}

/// What the person's input amounts to so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The question is answered.
    Answer(Answer),
    /// An "always" answer was chosen; the same key again confirms it.
    Confirm(Answer),
    /// The confirmation was not given: back to the four answers.
    Back,
}

/// The rules that make a key an answer; see the module documentation.
#[derive(Debug, Clone)]
pub struct Gate {
    quiet: Duration,
    settle: Duration,
    /// When the last input (of any kind) arrived, or the question was shown.
    last_input: Instant,
    /// A key that came after a quiet spell, waiting to stand alone.
    candidate: Option<(u8, Instant)>,
    /// The "always" answer waiting for its confirmation.
    confirming: Option<Answer>,
}

impl Gate {
    /// A gate for a question shown at `shown`.
    pub fn new(shown: Instant) -> Gate {
        Gate::with_timing(shown, QUIET, SETTLE)
    }

    /// The same with other timings (tests).
    pub fn with_timing(shown: Instant, quiet: Duration, settle: Duration) -> Gate {
        Gate {
            quiet,
            settle,
            last_input: shown,
            candidate: None,
            confirming: None,
        }
    }

    /// Notes one token that arrived at `now`.
    pub fn input(&mut self, token: Token, now: Instant) {
        // Anything right after a candidate makes it part of a burst.
        let alone_before = now.saturating_duration_since(self.last_input) >= self.quiet;
        self.candidate = match token {
            Token::Key(k) if alone_before && self.candidate.is_none() => Some((k, now)),
            _ => None,
        };
        self.last_input = now;
    }

    /// The step taken by `now`, once a candidate key has stood alone long enough.
    pub fn tick(&mut self, now: Instant) -> Option<Step> {
        let (key, at) = self.candidate?;
        if now.saturating_duration_since(at) < self.settle {
            return None;
        }
        self.candidate = None;
        let chosen = match key {
            b'1' => Some(Answer::AllowOnce),
            b'2' => Some(Answer::AllowAlways),
            b'3' => Some(Answer::DenyOnce),
            b'4' => Some(Answer::DenyAlways),
            _ => None,
        };
        match (self.confirming.take(), chosen) {
            (Some(waiting), Some(again)) if waiting == again => Some(Step::Answer(again)),
            (Some(_), _) => Some(Step::Back),
            (None, Some(answer)) if answer.persists().is_some() => {
                self.confirming = Some(answer);
                Some(Step::Confirm(answer))
            }
            (None, Some(answer)) => Some(Step::Answer(answer)),
            (None, None) => None,
        }
    }

    /// When [`Gate::tick`] may next have something to say.
    pub fn next_tick(&self) -> Option<Instant> {
        self.candidate.map(|(_, at)| at + self.settle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(bytes: &[u8]) -> Vec<Token> {
        Decoder::default().feed(bytes)
    }

    #[test]
    fn terminal_replies_are_noise() {
        let table: [&[u8]; 9] = [
            b"\x1b[12;40R",                      // cursor-position report
            b"\x1b[?64;1;2;6;22c",               // device attributes
            b"\x1b[>1;10;0c",                    // secondary device attributes
            b"\x1b[I",                           // focus in
            b"\x1b[O",                           // focus out
            b"\x1b]11;rgb:0000/0000/0000\x07",   // colour report, BEL
            b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\", // colour report, ST
            b"\x1bP>|xterm(1)\x1b\\",            // XTVERSION
            b"\x1b[200~1\r2 3\x1b[201~",         // bracketed paste with digits
        ];
        for bytes in table {
            let tokens = keys(bytes);
            assert!(
                tokens.iter().all(|t| *t == Token::Noise),
                "{:?} → {tokens:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn keys_around_sequences_stay_keys() {
        assert_eq!(
            keys(b"a\x1b[12;40R1\x1bOA2"),
            vec![
                Token::Key(b'a'),
                Token::Noise,
                Token::Key(b'1'),
                Token::Noise,
                Token::Key(b'2')
            ]
        );
        // A sequence split across reads.
        let mut d = Decoder::default();
        assert_eq!(d.feed(b"\x1b[12;"), vec![Token::Noise]);
        assert_eq!(d.feed(b"40R3"), vec![Token::Key(b'3')]);
        // A paste split across reads, its end marker too.
        let mut d = Decoder::default();
        assert_eq!(d.feed(b"\x1b[200~12"), vec![Token::Noise]);
        assert_eq!(d.feed(b"34\x1b[20"), vec![]);
        assert_eq!(d.feed(b"1~1"), vec![Token::Key(b'1')]);
        assert_eq!(keys("é1".as_bytes()), vec![Token::Noise, Token::Key(b'1')]);
    }

    const MS: fn(u64) -> Duration = Duration::from_millis;

    /// Feeds `(ms after the question was shown, bytes)` and ticks every 10 ms
    /// up to `end` ms; returns the steps taken.
    fn play(script: &[(u64, &[u8])], end: u64) -> Vec<Step> {
        let t0 = Instant::now();
        let mut gate = Gate::new(t0);
        let mut decoder = Decoder::default();
        let mut steps = Vec::new();
        let mut script = script.iter().peekable();
        for ms in (0..=end).step_by(10) {
            let now = t0 + MS(ms);
            while let Some((at, bytes)) = script.peek() {
                if *at > ms {
                    break;
                }
                for token in decoder.feed(bytes) {
                    gate.input(token, now);
                }
                script.next();
            }
            if let Some(step) = gate.tick(now) {
                steps.push(step);
            }
        }
        steps
    }

    #[test]
    fn only_a_key_alone_after_a_quiet_spell_answers() {
        use Answer::*;
        type Script<'a> = Vec<(u64, &'a [u8])>;
        let cases: Vec<(&str, Script, Vec<Step>)> = vec![
            (
                "a deliberate key",
                vec![(1000, b"1")],
                vec![Step::Answer(AllowOnce)],
            ),
            ("typed ahead, too soon", vec![(100, b"1")], vec![]),
            ("in a burst", vec![(1000, b"13")], vec![]),
            (
                "a digit in a typed sentence",
                vec![
                    (1000, b"t"),
                    (1100, b"o"),
                    (1200, b" "),
                    (1300, b"3"),
                    (1400, b" "),
                ],
                vec![],
            ),
            (
                "a digit after a word, followed by nothing",
                vec![(1000, b"x"), (1200, b"1")],
                vec![],
            ),
            ("a terminal reply", vec![(1000, b"\x1b[12;40R")], vec![]),
            (
                "a reply right before a key",
                vec![(1000, b"\x1b[12;40R"), (1100, b"1")],
                vec![],
            ),
            (
                "a reply right after a key",
                vec![(1000, b"1"), (1100, b"\x1b[I")],
                vec![],
            ),
            (
                "a pasted digit",
                vec![(1000, b"\x1b[200~1\x1b[201~")],
                vec![],
            ),
            ("Esc", vec![(1000, b"\x1b")], vec![]),
            ("Enter", vec![(1000, b"\r")], vec![]),
            (
                "always needs the same key again",
                vec![(1000, b"2"), (2000, b"2")],
                vec![Step::Confirm(AllowAlways), Step::Answer(AllowAlways)],
            ),
            (
                "always, not confirmed",
                vec![(1000, b"4"), (2000, b"1"), (3000, b"3")],
                vec![
                    Step::Confirm(DenyAlways),
                    Step::Back,
                    Step::Answer(DenyOnce),
                ],
            ),
            (
                "always, confirmed in a burst",
                vec![(1000, b"2"), (1400, b"22")],
                vec![Step::Confirm(AllowAlways)],
            ),
            (
                "a key after the noise has settled",
                vec![(700, b"\x1b[?64c"), (1400, b"3")],
                vec![Step::Answer(DenyOnce)],
            ),
        ];
        for (what, script, want) in cases {
            assert_eq!(play(&script, 4000), want, "{what}");
        }
    }
}
