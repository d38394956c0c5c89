//! `sandgate answer`: shows the open questions of the running `sandgate run`
//! sessions of this account, each whole, and answers them; and the hidden
//! `sandgate question`, the window a run opens for one question (a tmux
//! popup, or its own terminal while the program is held).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use nix::sys::signal::{SigSet, Signal};
use nix::unistd::{getpgrp, tcgetpgrp, tcsetpgrp, Pid};
use sandgate_policy::ask::Answer;

use crate::ask::screen::{self, Ended, Header, Source, Tty};
use crate::ask::wire::{self, Open, Request};
use crate::prompt::printable;
use crate::setup::GlobalArgs;
use crate::{EXIT_CANNOT_CHECK, EXIT_FAILED, EXIT_OK};

/// How often `sandgate answer` looks for new questions.
const LOOK: Duration = Duration::from_millis(300);

/// Arguments of `sandgate answer`.
#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// Print the open questions and end (with `--json`, as JSON); answer nothing.
    #[arg(long)]
    pub list: bool,
}

/// Arguments of the hidden `sandgate question`.
#[derive(Debug, Args)]
pub struct QuestionArgs {
    /// The run's questions socket.
    #[arg(long, value_name = "PATH")]
    pub socket: PathBuf,
    /// The question.
    #[arg(long)]
    pub id: u64,
    /// Take the terminal's foreground from this process group while asking.
    #[arg(long, value_name = "PGRP")]
    pub foreground: Option<i32>,
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// One run's open questions, with the run's socket, pid and program.
struct RunQuestions {
    socket: PathBuf,
    pid: u32,
    program: String,
    questions: Vec<Open>,
}

fn look(home: &Path, watching: bool) -> Vec<RunQuestions> {
    wire::sockets(home)
        .into_iter()
        .filter_map(|socket| {
            let reply = wire::call(&socket, &Request::List { watching }).ok()?;
            Some(RunQuestions {
                socket,
                pid: reply.pid,
                program: reply.program,
                questions: reply.questions,
            })
        })
        .collect()
}

/// Runs `sandgate answer`.
pub fn run(global: &GlobalArgs, args: AnswerArgs) -> ExitCode {
    let Some(home) = home() else {
        eprintln!("sandgate: HOME is not set: the runs' sockets cannot be found");
        return ExitCode::from(EXIT_CANNOT_CHECK);
    };
    if args.list {
        return list(&home, global.json);
    }
    let mut tty = match OpenOptions::new().write(true).open("/dev/tty") {
        Ok(tty) => tty,
        Err(e) => {
            eprintln!("sandgate: answering needs a terminal (/dev/tty: {e}); use `sandgate answer --list` to see the questions");
            return ExitCode::from(EXIT_CANNOT_CHECK);
        }
    };
    let mut waiting_said = false;
    // The terminal, read here between questions too (input processing off,
    // kept from one question's end to the next's start): Ctrl-C leaves
    // whatever the disposition of SIGINT (a shell may start this with it
    // ignored), also pressed as a question closes, and keys typed meanwhile
    // never answer the next question.
    let mut held: Option<Tty> = None;
    loop {
        let runs = look(&home, true);
        let next = runs
            .iter()
            .find_map(|run| run.questions.first().map(|q| (run, q.id)));
        let Some((run, id)) = next else {
            if held.is_none() {
                held = Tty::waiting().ok();
            }
            if !waiting_said {
                let what = match runs.len() {
                    0 => "no sandgate run is open yet".to_string(),
                    1 => format!(
                        "watching sandgate run {} ({})",
                        runs[0].pid, runs[0].program
                    ),
                    n => format!("watching {n} sandgate runs"),
                };
                let _ = writeln!(
                    tty,
                    "sandgate answer: {what}; questions appear here (Ctrl-C leaves)"
                );
                waiting_said = true;
            }
            match held.as_mut().map(|t| t.interrupted_within(LOOK)) {
                Some(Ok(true)) => return ExitCode::from(EXIT_OK),
                Some(Ok(false)) => {}
                Some(Err(_)) | None => std::thread::sleep(LOOK),
            }
            continue;
        };
        waiting_said = false;
        // Restored (and what was typed meanwhile dropped) before the
        // question opens.
        drop(held.take());
        let header = Header {
            title: format!("run {} ({})", run.pid, run.program),
            can_leave: true,
        };
        let mut source = SocketSource::new(&run.socket, id, true);
        let mut question = match Tty::open(false) {
            Ok(question) => question,
            Err(e) => {
                eprintln!("sandgate: the terminal failed: {e}");
                return ExitCode::from(EXIT_FAILED);
            }
        };
        let ended = screen::ask(&mut question, &header, &mut source);
        let leaving = question.interrupted().unwrap_or(false);
        match ended {
            Ok(Ended::Answered(answer)) => {
                let subject = source
                    .last
                    .as_ref()
                    .map(|q| format!("{} {}", q.tool, printable(&q.subject)))
                    .unwrap_or_default();
                let _ = writeln!(tty, "sandgate answer: {} — {subject}", answer.label());
            }
            Ok(Ended::Closed) => {
                let _ = writeln!(tty, "sandgate answer: the question closed before an answer here (answered elsewhere, or timed out)");
            }
            Ok(Ended::Left) => return ExitCode::from(EXIT_OK),
            Err(e) => {
                eprintln!("sandgate: the terminal failed: {e}");
                return ExitCode::from(EXIT_FAILED);
            }
        }
        if leaving {
            return ExitCode::from(EXIT_OK);
        }
        held = Some(question);
    }
}

fn list(home: &Path, json: bool) -> ExitCode {
    let runs = look(home, false);
    if json {
        let value: Vec<_> = runs
            .iter()
            .map(|r| serde_json::json!({"pid": r.pid, "program": r.program, "questions": r.questions}))
            .collect();
        println!("{}", serde_json::Value::Array(value));
        return ExitCode::from(EXIT_OK);
    }
    if runs.is_empty() {
        println!("no sandgate run is open");
    }
    for run in runs {
        println!(
            "run {} ({}): {} open",
            run.pid,
            run.program,
            run.questions.len()
        );
        for q in run.questions {
            println!(
                "  #{} {} {}: {}  ({} s left)\n     why: {}",
                q.id,
                q.tool,
                q.kind,
                printable(&q.subject),
                q.left_ms / 1000,
                printable(&q.reason)
            );
        }
    }
    ExitCode::from(EXIT_OK)
}

/// A question of a run, read and answered over its socket.
struct SocketSource {
    socket: PathBuf,
    id: u64,
    /// Whether this is a `sandgate answer` window (which the run then
    /// prefers), not a window the run opened itself.
    watching: bool,
    last: Option<Open>,
}

impl SocketSource {
    fn new(socket: &Path, id: u64, watching: bool) -> SocketSource {
        SocketSource {
            socket: socket.to_path_buf(),
            id,
            watching,
            last: None,
        }
    }
}

impl Source for SocketSource {
    fn refresh(&mut self) -> Option<Open> {
        let request = Request::List {
            watching: self.watching,
        };
        let reply = wire::call(&self.socket, &request).ok()?;
        let open = reply.questions.into_iter().find(|q| q.id == self.id)?;
        self.last = Some(open.clone());
        Some(open)
    }

    fn answer(&mut self, answer: Answer) -> Result<(), String> {
        wire::call(
            &self.socket,
            &Request::Answer {
                id: self.id,
                answer: answer.as_str().to_string(),
            },
        )
        .map(|_| ())
    }
}

/// Runs the hidden `sandgate question`.
pub fn question(args: QuestionArgs) -> ExitCode {
    // A background process group touching the terminal would be stopped.
    let mut held = SigSet::empty();
    held.add(Signal::SIGTTOU);
    held.add(Signal::SIGTTIN);
    let _ = held.thread_block();
    let mut source = SocketSource::new(&args.socket, args.id, false);
    let program_group = args.foreground.map(Pid::from_raw);
    let control = OpenOptions::new().read(true).write(true).open("/dev/tty");
    if let (Some(_), Ok(control)) = (program_group, &control) {
        if tcsetpgrp(control, getpgrp()).is_err() {
            return ExitCode::from(EXIT_FAILED);
        }
    }
    let program = wire::call(&args.socket, &Request::List { watching: false })
        .map(|r| r.program)
        .unwrap_or_default();
    let header = Header {
        title: format!("run {} ({program})", run_of(&args.socket)),
        can_leave: false,
    };
    let ended = Tty::open(program_group.is_some())
        .and_then(|mut tty| screen::ask(&mut tty, &header, &mut source));
    if let (Some(group), Ok(control)) = (program_group, &control) {
        if tcgetpgrp(control) == Ok(getpgrp()) {
            let _ = tcsetpgrp(control, group);
        }
    }
    match ended {
        Ok(Ended::Answered(_) | Ended::Closed | Ended::Left) => ExitCode::from(EXIT_OK),
        Err(_) => ExitCode::from(EXIT_FAILED),
    }
}

fn run_of(socket: &Path) -> String {
    socket
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}
