//! The real agents (Claude Code, Codex CLI, Gemini CLI) under `sandgate
//! run` with `permissions.network` listing only their scripted model server
//! on 127.0.0.1: they work (their model requests go through the run's
//! proxy: each sends them through `HTTPS_PROXY`/`HTTP_PROXY`, a loopback
//! base URL too, as no `NO_PROXY` is set), and a tool call that `curl`s an
//! unlisted test-named host on loopback is refused with a 403 naming the
//! command that would allow it. The test names resolve through an
//! `/etc/hosts` of the test's own, in a mount namespace the test makes.
//!
//! The same call runs first unconfined, where it reaches the server. Where
//! the run can ask (a terminal, no `--no-ui`), the unlisted host is asked
//! on the run's terminal and, allowed once, reached.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agents_common;
mod network_common;
#[path = "../../../tests/support/pty.rs"]
mod pty;

use std::sync::atomic::Ordering;

use agents_common::{ci, wait, Agent, Mode, RunOpts, Script, Step, Tree};
use network_common::{can_name_hosts, has, hosts_file, http_server, missing, named_argv, Who};
use serde_json::Value;

const AGENTS: [Agent; 3] = [Agent::Claude, Agent::Codex, Agent::Gemini];

#[test]
fn agents_reach_their_listed_model_and_a_curl_to_an_unlisted_host_is_refused() {
    if !can_name_hosts() {
        return;
    }
    if !has("curl") {
        missing("`curl` is needed");
        return;
    }
    let (web, served) = http_server();
    let url = format!("http://{}:{web}/from-the-agent", network_common::UNLISTED);
    for agent in AGENTS {
        let Some(t) = Tree::new_outside_temp(agent) else {
            continue;
        };
        let model = t.model_port();
        t.write_policy(&format!(
            "permissions:\n  network:\n    allow: [\"127.0.0.1:{model}\"]\n"
        ));
        let hosts = hosts_file(&t.root);
        let wrap = named_argv(Who::Root, &hosts, &[]);
        let script = Script::new(vec![Step::shell(
            agent,
            &format!("curl -sS -i --max-time 20 {url}"),
        )]);

        // Unconfined, the call reaches the server.
        let before = served.load(Ordering::SeqCst);
        let run = t.run(&script, &RunOpts::mode(Mode::Bypass).wrapped(wrap.clone()));
        assert!(run.status.success(), "{agent:?}: {}", run.describe());
        assert!(
            run.model_saw("served /from-the-agent"),
            "{agent:?} unconfined: {}",
            run.describe()
        );
        assert_eq!(served.load(Ordering::SeqCst), before + 1, "{agent:?}");

        // Confined, the agent still talks to its model (listed), and the
        // call is refused with the reason and the command that would allow it.
        let before = served.load(Ordering::SeqCst);
        let run = t.run(
            &script,
            &RunOpts::mode(Mode::Bypass).confined().wrapped(wrap),
        );
        assert!(run.status.success(), "{agent:?}: {}", run.describe());
        assert!(
            !run.main_requests().is_empty(),
            "{agent:?}: no model request: {}",
            run.describe()
        );
        assert!(
            run.model_saw(&format!(
                "sandgate policy allow domain {}:{web}",
                network_common::UNLISTED
            )),
            "{agent:?}: the model is told of the refusal: {}",
            run.describe()
        );
        assert!(run.model_saw("403"), "{agent:?}: {}", run.describe());
        assert!(!run.model_saw("served /from-the-agent"), "{agent:?}");
        assert_eq!(served.load(Ordering::SeqCst), before, "{agent:?}");
        // Each decision is in the audit log as the run's: the model server
        // allowed, the unlisted host refused (nobody to ask: headless).
        let records: Vec<Value> = t
            .audit()
            .into_iter()
            .filter(|r| r["tool"] == "network" && r["surface"] == "run")
            .collect();
        assert!(
            records
                .iter()
                .any(|r| r["subject"] == format!("127.0.0.1:{model}") && r["verdict"] == "allow"),
            "{agent:?}: {records:#?}"
        );
        assert!(
            records.iter().any(|r| {
                r["subject"] == format!("{}:{web}", network_common::UNLISTED)
                    && r["verdict"] == "deny"
                    && r["reason"]
                        .as_str()
                        .is_some_and(|s| s.contains("nobody can answer"))
            }),
            "{agent:?}: {records:#?}"
        );
    }
}

const MENU: &str = "[4] deny always";

/// Not headless: `sandgate run` (without `--no-ui`) in a real terminal, the
/// agent in it. The unlisted host its tool call `curl`s is asked on the
/// run's question route, shown with the host, and answered by a deliberate
/// key: "allow once" lets the request through, and the model reads the
/// server's answer.
#[test]
fn agents_curl_to_an_unlisted_host_is_asked_where_the_run_can_ask() {
    use expectrl::process::unix::WaitStatus;
    use expectrl::session::OsSession as Session;
    use expectrl::{Eof, Expect};
    if !can_name_hosts() {
        return;
    }
    if !has("curl") {
        missing("`curl` is needed");
        return;
    }
    let (web, served) = http_server();
    let subject = format!("{}:{web}", network_common::UNLISTED);
    let url = format!("http://{subject}/asked-by-the-agent");
    for agent in AGENTS {
        let Some(t) = Tree::new_outside_temp(agent) else {
            continue;
        };
        let model = t.model_port();
        // The test name resolves to loopback: a name allowed when asked
        // reaches it only with the address listed (no DNS rebinding). The
        // hosts the agents contact on their own are denied, so that they
        // are not asked about (each would wait for its deadline).
        t.write_policy(&format!(
            "permissions:\n  network:\n    allow: [\"127.0.0.1:{model}\", \"127.0.0.1:{web}\"]\n    \
             deny: [\"github.com\", \"api.github.com\", \"chatgpt.com\", \"*.chatgpt.com\", \
             \"play.googleapis.com\"]\n"
        ));
        let hosts = hosts_file(&t.root);
        let wrap = named_argv(Who::Root, &hosts, &[]);
        let script = Script::new(vec![Step::shell(
            agent,
            &format!("curl -sS --max-time 100 {url}"),
        )]);
        let opts = RunOpts::mode(Mode::Bypass)
            .confined()
            .asking()
            .wrapped(wrap);
        let mut cmd = t.command(&script, &opts);
        cmd.env("TERM", "xterm");
        let before = served.load(Ordering::SeqCst);
        let mut s = Session::spawn(cmd).expect("spawn in a pty");
        s.set_expect_timeout(Some(std::time::Duration::from_secs(150)));
        s.get_process_mut().set_window_size(200, 50).unwrap();
        s.expect(format!("   {subject}\r"))
            .unwrap_or_else(|e| panic!("{agent:?}: the host is not asked about: {e}"));
        s.expect(MENU).expect("the menu is shown");
        std::thread::sleep(std::time::Duration::from_millis(900));
        s.send("1").unwrap();
        let rest = s.expect(Eof).expect("the agent ends");
        let text = String::from_utf8_lossy(rest.as_bytes()).into_owned();
        match pty::wait_within(&mut s, wait::DEADLINE).expect("wait") {
            WaitStatus::Exited(_, 0) => {}
            other => panic!("{agent:?}: unexpected end: {other:?}: {text}"),
        }
        assert_eq!(
            served.load(Ordering::SeqCst),
            before + 1,
            "{agent:?}: {text}"
        );
        assert!(
            t.recorded().contains("served /asked-by-the-agent"),
            "{agent:?}: the model reads the answer: {text}"
        );
    }
}
