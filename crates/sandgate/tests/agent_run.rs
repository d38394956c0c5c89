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
            continue;
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

/// The agent with sandgate's hook installed, confined: `python3 w.py`, which
/// the gate lets run and cannot see writing, writes outside; `echo … >`,
/// whose write the gate foresees, would too. With no one to ask (headless),
/// the run refuses the unforeseen write without a question and the model's
/// next request carries the reason (the post-tool hook); the foreseen one is
/// put to the run before the call, and refused there with the reason.
#[test]
fn a_refusal_reaches_the_model_with_the_reason() {
    for agent in AGENTS {
        let Some(t) = Tree::new_outside_temp(agent) else {
            continue;
        };
        t.install_hook(&[]);
        t.write_policy(
            r#"permissions:
  paths:
    allow: ["{work}/**", "{outside}/**"]
  commands:
    allow: ["^python3 w\\.py$", "^echo "]
"#,
        );
        let unforeseen = t.outside.join("unforeseen.txt");
        let foreseen = t.outside.join("foreseen.txt");
        std::fs::write(
            t.work.join("w.py"),
            format!("open('{}', 'w').write('x')\n", unforeseen.display()),
        )
        .unwrap();
        let python = "python3 w.py".to_string();
        let echo = format!("echo x > {}", foreseen.display());
        let mut opts = RunOpts::mode(Mode::Bypass).confined();
        if agent == Agent::Codex {
            opts = opts.arg("--dangerously-bypass-hook-trust");
        }
        let run = t.run(
            &Script::new(vec![Step::shell(agent, &python), Step::shell(agent, &echo)]),
            &opts,
        );
        assert!(run.status.success(), "{agent:?}: {}", run.describe());
        assert!(!unforeseen.exists(), "{agent:?}: {}", run.describe());
        assert!(!foreseen.exists(), "{agent:?}: {}", run.describe());
        let sent = run.sent_text();
        let unforeseen_told = format!(
            "sandgate run refused the create/write of `{}`",
            unforeseen.display()
        );
        assert!(
            run.model_saw(&unforeseen_told),
            "{agent:?}: the model is told of the refusal: {}",
            run.describe()
        );
        assert!(
            sent.contains("did not foresee") && sent.contains("can allow it"),
            "{agent:?}: {}",
            run.describe()
        );
        assert!(
            run.model_saw(&format!("about writing `{}`", foreseen.display())),
            "{agent:?}: the foreseen write is refused before the call: {}",
            run.describe()
        );
        // The hook's own records reach the audit log through the run.
        let hooked: Vec<Value> = t
            .audit()
            .into_iter()
            .filter(|r| r["surface"] == format!("hook {}", agent.name()))
            .collect();
        assert!(
            hooked.iter().any(|r| r["from_inside_run"] == true),
            "{agent:?}: {:#?}",
            t.audit()
        );
    }
}
