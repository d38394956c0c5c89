//! One question on a terminal of its own (a tmux popup, a `sandgate answer`
//! window, or the program's terminal while the program is held): shown whole
//! on the alternate screen, with a countdown that follows the run's clock,
//! and answered only by a key the [`Gate`] lets through.
//!
//! The terminal is read through its own non-blocking file description: a
//! read never waits, so a byte another reader took cannot stop the
//! countdown. Input processing is switched off while the question is up
//! (no echo, no line editing, no signals from keys); output processing is
//! left as it was. Input already queued when the question opens is
//! discarded, and so is input left over when it closes.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::termios::{
    self, FlushArg, InputFlags, LocalFlags, SetArg, SpecialCharacterIndices, Termios,
};
use sandgate_policy::ask::Answer;

use super::keys::{Decoder, Gate, Step, Token};
use super::wire::Open;
use crate::prompt::printable;

/// How often the screen looks at the clock and at the run.
const TICK: Duration = Duration::from_millis(100);
/// How often the run is asked whether the question is still open.
const SYNC: Duration = Duration::from_millis(400);

/// Where the question's state comes from and where the answer goes.
pub trait Source {
    /// The question as it stands, or `None` once it is closed (answered
    /// elsewhere, timed out, or the run ended).
    fn refresh(&mut self) -> Option<Open>;
    /// Gives the answer; `Err` says why it was not taken.
    fn answer(&mut self, answer: Answer) -> Result<(), String>;
}

/// How a question screen ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Answered here.
    Answered(Answer),
    /// Closed elsewhere (or the run is gone).
    Closed,
    /// The person left (Ctrl-C, where leaving is allowed).
    Left,
}

/// What the screen shows above the question.
pub struct Header {
    /// E.g. `sandgate run 4242: claude`.
    pub title: String,
    /// Whether Ctrl-C leaves the screen without answering.
    pub can_leave: bool,
}

/// The terminal, set up for one question; restored on drop.
pub struct Tty {
    read: File,
    write: File,
    saved: Option<Termios>,
}

impl Tty {
    /// Opens `/dev/tty` and switches input processing off; `hold_program`
    /// also turns on `TOSTOP`, so that a background program writing to the
    /// terminal stops until the question is over.
    pub fn open(hold_program: bool) -> io::Result<Tty> {
        let tty = Tty::quiet(hold_program)?;
        // Typed-ahead input and terminal replies queued before the question.
        let _ = termios::tcflush(&tty.read, FlushArg::TCIFLUSH);
        Ok(tty)
    }

    /// [`Tty::open`] for waiting between questions: what was typed before
    /// is kept, so that [`Tty::interrupted_within`] sees a Ctrl-C pressed
    /// as the last question closed.
    pub fn waiting() -> io::Result<Tty> {
        Tty::quiet(false)
    }

    fn quiet(hold_program: bool) -> io::Result<Tty> {
        let read = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open("/dev/tty")?;
        let write = OpenOptions::new().write(true).open("/dev/tty")?;
        let saved = termios::tcgetattr(&read).ok();
        if let Some(saved) = &saved {
            let mut quiet = saved.clone();
            quiet.local_flags.remove(
                LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ISIG | LocalFlags::IEXTEN,
            );
            quiet
                .input_flags
                .remove(InputFlags::IXON | InputFlags::ICRNL | InputFlags::INLCR);
            if hold_program {
                quiet.local_flags.insert(LocalFlags::TOSTOP);
            }
            quiet.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
            quiet.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
            termios::tcsetattr(&read, SetArg::TCSANOW, &quiet).map_err(io::Error::from)?;
        }
        Ok(Tty { read, write, saved })
    }

    /// Whether what was typed and not read yet holds a Ctrl-C (the rest
    /// is dropped): the person pressed it as a question closed, and means
    /// to leave. Input processing is off here, so Ctrl-C is a key, not a
    /// signal (which a program started with SIGINT ignored never gets).
    pub fn interrupted(&mut self) -> io::Result<bool> {
        Ok(self.drain()?.contains(&0x03))
    }

    /// [`Tty::interrupted`], after waiting up to `timeout` for a key.
    pub fn interrupted_within(&mut self, timeout: Duration) -> io::Result<bool> {
        self.wait(timeout);
        self.interrupted()
    }

    /// Everything that can be read now, without waiting.
    fn drain(&mut self) -> io::Result<Vec<u8>> {
        let mut all = Vec::new();
        let mut buf = [0u8; 512];
        loop {
            match self.read.read(&mut buf) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => all.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(all),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Waits up to `timeout` for input.
    fn wait(&self, timeout: Duration) {
        let ms = u16::try_from(timeout.as_millis()).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(self.read.as_fd(), PollFlags::POLLIN)];
        let _ = poll(&mut fds, PollTimeout::from(ms));
    }
}

impl Drop for Tty {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            let _ = termios::tcsetattr(&self.read, SetArg::TCSANOW, saved);
        }
        // Keys pressed for the question do not reach the program.
        let _ = termios::tcflush(&self.read, FlushArg::TCIFLUSH);
    }
}

/// Shows `source`'s question on `tty` until it is answered or closed.
pub fn ask(tty: &mut Tty, header: &Header, source: &mut dyn Source) -> io::Result<Ended> {
    let Some(mut open) = source.refresh() else {
        return Ok(Ended::Closed);
    };
    write!(tty.write, "\x1b[?1049h\x1b[?25l")?;
    let result = ask_on_screen(tty, header, source, &mut open);
    let _ = write!(tty.write, "\x1b[2J\x1b[?25h\x1b[?1049l");
    let _ = tty.write.flush();
    result
}

fn ask_on_screen(
    tty: &mut Tty,
    header: &Header,
    source: &mut dyn Source,
    open: &mut Open,
) -> io::Result<Ended> {
    let mut deadline = Instant::now() + Duration::from_millis(open.left_ms);
    let mut size = crossterm::terminal::size().unwrap_or((80, 24));
    draw(&mut tty.write, header, open, size.0)?;
    let mut gate = Gate::new(Instant::now());
    let mut decoder = Decoder::default();
    let mut status = Status::Menu;
    let mut shown: Option<(u64, Status)> = None;
    let mut synced = Instant::now();
    let mut last_error = None;
    loop {
        let now = Instant::now();
        if now.duration_since(synced) >= SYNC {
            synced = now;
            match source.refresh() {
                Some(fresh) => {
                    deadline = now + Duration::from_millis(fresh.left_ms);
                    *open = fresh;
                }
                None => return Ok(Ended::Closed),
            }
        }
        let current = crossterm::terminal::size().unwrap_or(size);
        if current != size {
            size = current;
            draw(&mut tty.write, header, open, size.0)?;
            shown = None;
        }
        let left = deadline.saturating_duration_since(now);
        let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
        if shown != Some((secs, status)) {
            draw_status(&mut tty.write, secs, status, last_error.as_deref())?;
            shown = Some((secs, status));
        }
        let bytes = tty.drain()?;
        let at = Instant::now();
        for token in decoder.feed(&bytes) {
            if token == Token::Key(0x03) && header.can_leave {
                return Ok(Ended::Left);
            }
            gate.input(token, at);
        }
        match gate.tick(at) {
            Some(Step::Answer(answer)) => match source.answer(answer) {
                Ok(()) => return Ok(Ended::Answered(answer)),
                Err(e) => {
                    last_error = Some(e);
                    status = Status::Menu;
                    shown = None;
                }
            },
            Some(Step::Confirm(answer)) => status = Status::Confirm(answer),
            Some(Step::Back) => status = Status::Menu,
            None => {}
        }
        let wake = gate
            .next_tick()
            .map_or(TICK, |t| t.saturating_duration_since(Instant::now()))
            .min(TICK);
        tty.wait(wake);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Menu,
    Confirm(Answer),
}

/// `text` cut into lines of at most `width` characters, at spaces where it
/// has them, else anywhere (a long path).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(10);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let needed = line.chars().count() + usize::from(!line.is_empty()) + word.chars().count();
        if !line.is_empty() && needed > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        while line.chars().count() > width {
            let head: String = line.chars().take(width).collect();
            line = line.chars().skip(width).collect();
            lines.push(head);
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The whole question, from the top of the screen.
fn draw(out: &mut impl Write, header: &Header, open: &Open, cols: u16) -> io::Result<()> {
    let width = usize::from(cols).saturating_sub(4);
    let mut text = String::from("\x1b[2J\x1b[H");
    text.push_str(&format!(
        "\x1b[1;33m sandgate: permission required\x1b[0m  {}\r\n\r\n",
        printable(&header.title)
    ));
    let field = |name: &str, value: &str, text: &mut String| {
        let lines = wrap(&printable(value), width.saturating_sub(2));
        text.push_str(&format!(" {name}:\r\n"));
        for line in lines {
            text.push_str(&format!("   {line}\r\n"));
        }
    };
    field(
        &format!("{} {}", open.tool, open.kind),
        &open.subject,
        &mut text,
    );
    field("why", &open.reason, &mut text);
    text.push_str("\r\n");
    let menu = Answer::ALL
        .iter()
        .enumerate()
        .map(|(i, a)| format!("[{}] {}", i + 1, a.label()))
        .collect::<Vec<_>>();
    // Two per line when the window is narrow.
    if width >= 66 {
        text.push_str(&format!(" {}\r\n", menu.join("   ")));
    } else {
        text.push_str(&format!(
            " {}   {}\r\n {}   {}\r\n",
            menu[0], menu[1], menu[2], menu[3]
        ));
    }
    text.push_str("\r\n");
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// The countdown and what a key does now, on the line below the menu.
fn draw_status(
    out: &mut impl Write,
    secs: u64,
    status: Status,
    error: Option<&str>,
) -> io::Result<()> {
    let line = match status {
        Status::Menu => format!("denied in {secs} s unless answered; press one key, on its own"),
        Status::Confirm(answer) => {
            let key = Answer::ALL.iter().position(|a| *a == answer).unwrap_or(0) + 1;
            format!("\x1b[1m{}?\x1b[0m press {key} again to confirm, any other key to go back ({secs} s)", answer.label())
        }
    };
    let error = error
        .map(|e| format!("\r\n\x1b[K ({})", printable(e)))
        .unwrap_or_default();
    // Save the cursor after the menu once, then rewrite the line in place.
    write!(out, "\x1b7\x1b[K {line}{error}\x1b8")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_wraps_at_spaces_and_long_words_anywhere() {
        assert_eq!(wrap("a bb ccc", 10), ["a bb ccc"]);
        assert_eq!(
            wrap("one two three four five", 10),
            ["one two", "three four", "five"]
        );
        assert_eq!(
            wrap("/a/very/long/path/name", 10),
            ["/a/very/lo", "ng/path/na", "me"]
        );
        assert_eq!(wrap("", 10), [""]);
    }
}
