//! Questions of `sandgate run` that reach the person whole, on a screen and
//! a keyboard of their own, never shared with the program's full-screen UI.
//!
//! Each question is put, in this order of preference:
//!
//! 1. to an open `sandgate answer` window, when the person has one (it
//!    looked at the run within the last moments): they chose to answer
//!    there, so the program's terminal is left alone; the terminal's title
//!    says a question waits;
//! 2. inside tmux, to a `tmux display-popup` over the program's pane,
//!    running `sandgate question` (the popup has the keyboard while open);
//! 3. to the run's own terminal, with the program held: `sandgate question`
//!    in a process group of its own takes the terminal's foreground and
//!    turns on `TOSTOP`, so the program stops at its next write or read,
//!    saves the screen (the alternate screen), discards queued input and
//!    terminal replies, asks, and hands the terminal back in the program's
//!    own modes, with its screen as it left it (or empty, with the cursor
//!    at the top, when the program catches `SIGCONT`: such a program, Claude
//!    Code among them, draws everything again from the cursor when
//!    continued); the program is continued and sent `SIGWINCH` to redraw;
//! 4. when none of these can show it (no terminal in the foreground), it
//!    waits for `sandgate answer`, announced in the terminal's title.
//!
//! A desktop notification (`notify-send`) goes out with every question where
//! a desktop session exists. Whatever the route, every open question can be
//! answered from `sandgate answer`; the first answer counts, and the
//! question ends unanswered (DENY) at its deadline, kept by the run (see
//! [`hub`]). Which key answers is decided by [`keys`] on every route.

pub mod hub;
pub mod keys;
pub mod screen;
pub mod wire;
