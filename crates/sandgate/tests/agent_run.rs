//! The real agents confined by `sandgate run`, headless, against a scripted
//! model on 127.0.0.1, with their home outside every tree the run allows (so
//! what they write there is judged as in a real home). How to run one case:
//! see `agents_common/mod.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agents_common;

use agents_common::{Agent, Mode, RunOpts, Script, Step, Tree};
use serde_json::Value;

const AGENTS: [Agent; 3] = [Agent::Claude, Agent::Codex, Agent::Gemini];

/// The audit records of the run's supervisor that a terminal would have
/// asked about (headless, each is refused as "no terminal to ask").
fn would_ask(t: &Tree) -> Vec<Value> {
    t.audit()
        .into_iter()
        .filter(|r| r["surface"] == "run")
        .filter(|r| {
            r["reason"]
                .as_str()
                .is_some_and(|s| s.contains("no terminal to ask"))
        })
        .collect()
}

/// Starting, saving its state and answering, each agent writes nothing the
/// run would ask about: its state files' lock and temporary siblings are
/// allowed with them, and sandgate prints nothing about its own files, the
/// kernel's pressure files or desktop paths.
#[test]
fn start_up_asks_nothing() {
    for agent in AGENTS {
        let Some(t) = Tree::new_outside_temp(agent) else {
            return;
        };
        // Claude Code saves `~/.claude.json` on start; seed it as a person's.
        if agent == Agent::Claude {
            std::fs::write(
                t.home.join(".claude.json"),
                r#"{"hasCompletedOnboarding": true}"#,
            )
            .unwrap();
        }
        let run = t.run(
            &Script::new(vec![Step::shell(agent, "touch allowed.txt")]),
            &RunOpts::mode(Mode::Bypass).confined(),
        );
        assert!(run.status.success(), "{agent:?}: {}", run.describe());
        assert!(
            t.work.join("allowed.txt").exists(),
            "{agent:?}: {}",
            run.describe()
        );
        let asked = would_ask(&t);
        assert!(asked.is_empty(), "{agent:?} would be asked: {asked:#?}");
        for line in run.stderr.lines().filter(|l| l.starts_with("sandgate:")) {
            for quiet in [
                ".claude.json",
                "pressure",
                "applications",
                ".sandgate/",
                "sandgate/.",
            ] {
                assert!(!line.contains(quiet), "{agent:?} printed: {line}");
            }
        }
    }
}
