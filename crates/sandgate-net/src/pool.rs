//! Threads kept for the next connection: a connection's work (accepting
//! the next one while it is served, the second direction of a joined
//! connection) goes to a thread that finished earlier work, where one is
//! idle, instead of a new thread (its stack mapped, started, unmapped) for
//! every connection. A thread idle for [`KEEP`] ends.

use std::collections::VecDeque;
use std::io;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How long an idle thread waits for work before it ends.
const KEEP: Duration = Duration::from_secs(30);
/// The stack of each thread (a connection's work needs little).
const STACK: usize = 256 * 1024;

/// A piece of work.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

struct State {
    /// Work handed to an idle thread, not yet taken.
    jobs: VecDeque<Job>,
    /// Idle threads no job was handed to yet. The threads waiting are
    /// always `idle + jobs.len()`.
    idle: usize,
}

static STATE: Mutex<State> = Mutex::new(State {
    jobs: VecDeque::new(),
    idle: 0,
});
static READY: Condvar = Condvar::new();

/// Run `job` on an idle thread, or on a new one when none is idle.
pub(crate) fn run(job: Job) -> io::Result<()> {
    {
        let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
        if state.idle > 0 {
            state.idle -= 1;
            state.jobs.push_back(job);
            drop(state);
            READY.notify_one();
            return Ok(());
        }
    }
    std::thread::Builder::new()
        .name("sandgate-proxy".into())
        .stack_size(STACK)
        .spawn(move || work(job))
        .map(|_| ())
}

fn work(first: Job) {
    let mut job = first;
    loop {
        job();
        let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
        state.idle += 1;
        job = loop {
            if let Some(next) = state.jobs.pop_front() {
                break next;
            }
            let (woken, waited) = READY
                .wait_timeout(state, KEEP)
                .unwrap_or_else(|e| e.into_inner());
            state = woken;
            if waited.timed_out() && state.jobs.is_empty() {
                // Still counted idle (no job was handed to this thread).
                state.idle -= 1;
                return;
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Waits (at most a minute) until a thread is idle.
    fn until_idle() {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while STATE.lock().unwrap().idle == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "no thread became idle"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn every_job_runs_and_idle_threads_take_the_next() {
        let (done, finished) = mpsc::channel();
        let mut seen = std::collections::HashSet::new();
        for round in 0..3 {
            for i in 0..8 {
                let done = done.clone();
                run(Box::new(move || {
                    let _ = done.send((round, i, std::thread::current().id()));
                }))
                .unwrap();
            }
            let mut got: Vec<_> = (0..8)
                .map(|_| finished.recv_timeout(Duration::from_secs(60)).unwrap())
                .collect();
            seen.extend(got.iter().map(|(_, _, id)| *id));
            got.sort_by_key(|(r, i, _)| (*r, *i));
            assert_eq!(
                got.iter().map(|(r, i, _)| (*r, *i)).collect::<Vec<_>>(),
                (0..8).map(|i| (round, i)).collect::<Vec<_>>()
            );
        }
        // With a thread idle, a job goes to it: no new thread.
        for i in 0..20 {
            until_idle();
            let done = done.clone();
            run(Box::new(move || {
                let _ = done.send((9, i, std::thread::current().id()));
            }))
            .unwrap();
            let (_, _, id) = finished.recv_timeout(Duration::from_secs(60)).unwrap();
            assert!(seen.contains(&id), "job {i} started a new thread");
        }
    }
}
