//! `sandgate policy …`: show the effective policy, explain a decision.

use std::process::ExitCode;

use clap::Subcommand;
use sandgate_policy::selftest::TestSubject;
use sandgate_policy::{Access, Policy, RuleRef, ToolCall, ToolKind};
use serde_json::json;

use crate::setup::GlobalArgs;

/// The `policy` subcommands.
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// The effective merged policy, each rule with its origin.
    Show,
    /// Every rule that matched a request, and which one won.
    Explain {
        /// The request as JSON; `-` or nothing reads stdin.
        #[arg(conflicts_with = "domain")]
        request: Option<String>,
        /// Explain a connection to `HOST[:PORT]` (`github.com:22`,
        /// `[::1]:8080`; no port: 80 and 443) by `permissions.network`.
        #[arg(long, value_name = "HOST[:PORT]")]
        domain: Option<String>,
    },
    /// Add an allow rule to the central policy file (`--read`/`--write`: a
    /// path rule about that access only).
    Allow(crate::cmd::policy_edit::EditArgs),
    /// Add a deny rule to the central policy file (or the local one with `--local`).
    Deny(crate::cmd::policy_edit::EditArgs),
    /// Remove one exact rule from the list that holds it (the central file, or
    /// the local one with `--local`).
    Remove(crate::cmd::policy_edit::RemoveArgs),
    /// Warn about rules that are too broad, unanchored, shadowed, covered,
    /// duplicated or can never match (exit 1 if any).
    Lint,
    /// Print the JSON Schema of a policy file (for an editor's YAML language server).
    Schema,
    /// Run the policy files' self-tests (`tests:`) and show each result (exit 1 if any fails).
    Test,
}

/// Run a `policy` subcommand.
pub fn run(global: &GlobalArgs, command: PolicyCommand) -> ExitCode {
    match command {
        PolicyCommand::Show => show(global),
        PolicyCommand::Explain {
            domain: Some(domain),
            ..
        } => explain_domain(global, &domain),
        PolicyCommand::Explain { request, .. } => explain(global, request),
        PolicyCommand::Allow(args) => {
            crate::cmd::policy_edit::add(global, sandgate_policy::persist::Effect::Allow, args)
        }
        PolicyCommand::Deny(args) => {
            crate::cmd::policy_edit::add(global, sandgate_policy::persist::Effect::Deny, args)
        }
        PolicyCommand::Remove(args) => crate::cmd::policy_edit::remove(global, args),
        PolicyCommand::Lint => crate::cmd::policy_edit::run_lint(global),
        PolicyCommand::Test => test(global),
        PolicyCommand::Schema => {
            print!("{}", sandgate_policy::validate::SCHEMA);
            ExitCode::SUCCESS
        }
    }
}

/// `sandgate policy test`: every self-test with its result; exit 0 when all
/// pass (or there are none), 1 when any fails, 2 when the policy cannot be read.
fn test(global: &GlobalArgs) -> ExitCode {
    let ctx = match crate::setup::context(global) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let sources = crate::setup::sources(global, &ctx);
    let policy = match Policy::load_untested(&sources, &ctx) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("sandgate: {e}");
            return ExitCode::from(crate::EXIT_CANNOT_CHECK);
        }
    };
    let outcomes = sandgate_policy::selftest::run(&policy, &ctx);
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    if global.json {
        let tests: Vec<serde_json::Value> = outcomes
            .iter()
            .map(|o| {
                let (command, path) = match &o.test.subject {
                    TestSubject::Command(c) => (Some(c.as_str()), None),
                    TestSubject::Path(p) => (None, Some(p.as_str())),
                };
                json!({
                    "origin": o.test.origin,
                    "tool": o.test.tool,
                    "command": command,
                    "path": path,
                    "expect": o.test.expect,
                    "verdict": o.decision.verdict,
                    "passed": o.passed(),
                    "reason": o.decision.reason,
                    "rule": o.decision.rule.as_ref().map(rule_json),
                })
            })
            .collect();
        let out = json!({
            "tests": tests,
            "passed": outcomes.len() - failed,
            "failed": failed,
        });
        println!("{out}");
    } else if outcomes.is_empty() {
        println!("no tests: add a `tests:` list to a policy file, e.g.");
        println!("  tests:");
        println!("    - {{command: \"git push -f origin main\", expect: deny}}");
    } else {
        for o in &outcomes {
            let mark = if o.passed() { "pass" } else { "FAIL" };
            println!(
                "{mark}  {:<5} {}  ({})",
                o.test.expect.as_str(),
                o.test.describe(),
                o.test.origin
            );
            if !o.passed() {
                println!("      got {}: {}", o.decision.verdict, o.decision.reason);
            }
        }
        println!(
            "{} test{}: {} passed, {failed} failed",
            outcomes.len(),
            if outcomes.len() == 1 { "" } else { "s" },
            outcomes.len() - failed
        );
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::EXIT_FAILED)
    }
}

fn rule_json(rule: &RuleRef) -> serde_json::Value {
    let mut v = json!({"pattern": rule.pattern, "list": rule.list, "origin": rule.origin});
    if let Some(access) = rule.access {
        v["access"] = json!(access);
    }
    v
}

/// The path rules of `rules` that belong to the list of `access` (`None`: both).
fn of_access(rules: &[RuleRef], access: Option<Access>) -> Vec<&RuleRef> {
    rules.iter().filter(|r| r.access == access).collect()
}

/// The `paths` block of `policy show --json`: `deny`/`allow` for both, then
/// `read` and `write`, as in a policy file.
fn paths_json(deny: &[RuleRef], allow: &[RuleRef]) -> serde_json::Value {
    let lists = |access| {
        json!({
            "deny": of_access(deny, access).into_iter().map(rule_json).collect::<Vec<_>>(),
            "allow": of_access(allow, access).into_iter().map(rule_json).collect::<Vec<_>>(),
        })
    };
    let mut out = lists(None);
    out["read"] = lists(Some(Access::Read));
    out["write"] = lists(Some(Access::Write));
    out
}

fn show(global: &GlobalArgs) -> ExitCode {
    let loaded = match crate::load(global) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let policy = &loaded.policy;
    let s = policy.settings();
    let (path_deny, path_allow) = policy.path_rules();
    let (command_deny, command_allow) = policy.command_rules();
    let sources = policy.sources();
    let files: Vec<serde_json::Value> = sources
        .tiers()
        .map(|(tier, path)| json!({"tier": tier, "path": path, "exists": path.exists()}))
        .collect();
    if global.json {
        let isolation = s.isolation.as_ref().map(|(iso, tier)| {
            json!({"mode": iso.mode.unwrap_or_default(), "tier": tier,
                   "template": iso.template, "workdir": iso.workdir,
                   "allow_tmp": iso.allow_tmp, "network": iso.network, "best_effort": iso.best_effort})
        });
        let out = json!({
            "files": files,
            "sandbox": s.sandbox,
            "sandbox_reason": s.sandbox_reason,
            "shell": s.shell,
            "prompt_timeout_secs": s.prompt_timeout.as_secs(),
            "isolation": isolation,
            "gemini_ask": s.gemini_ask,
            "claude_ask": s.claude_ask,
            "audit": crate::audit::describe(s),
            "floor": policy.floor_rules().iter().map(rule_json).collect::<Vec<_>>(),
            "paths": paths_json(path_deny, path_allow),
            "commands": {"deny": command_deny.iter().map(rule_json).collect::<Vec<_>>(),
                         "allow": command_allow.iter().map(rule_json).collect::<Vec<_>>()},
            "network": policy.network().map(|n| {
                let (deny, allow) = n.rules();
                json!({"deny": deny.into_iter().map(rule_json).collect::<Vec<_>>(),
                       "allow": allow.into_iter().map(rule_json).collect::<Vec<_>>()})
            }),
            "tests": policy.tests().len(),
            "ignored": policy.ignored_rules().iter()
                .map(|i| json!({"rule": rule_json(&i.rule), "why": i.why})).collect::<Vec<_>>(),
        });
        println!("{out:#}");
        return ExitCode::SUCCESS;
    }
    println!("policy files:");
    for (tier, path) in sources.tiers() {
        let state = if path.exists() { "" } else { " (missing)" };
        println!("  {:<8} {}{state}", tier.as_str(), path.display());
    }
    println!(
        "sandbox: {} ({})",
        if s.sandbox { "on" } else { "off" },
        s.sandbox_reason
    );
    println!(
        "commands analysed as: {}",
        if s.shell { "shell" } else { "raw string" }
    );
    println!("prompt timeout: {}s", s.prompt_timeout.as_secs());
    let audit = crate::audit::describe(s);
    match audit["log"].as_str() {
        Some(log) => println!(
            "audit log: {log}, rotated at {} bytes ({})",
            audit["max_bytes"],
            audit["max_bytes_from"].as_str().unwrap_or("")
        ),
        None => println!("audit log: off"),
    }
    match &s.isolation {
        Some((iso, tier)) => println!(
            "exec isolation: {:?} (from the {} file)",
            iso.mode.unwrap_or_default(),
            tier.as_str()
        ),
        None => println!("exec isolation: none"),
    }
    let section = |title: &str, rules: &[&RuleRef], always: bool| {
        if rules.is_empty() && !always {
            return;
        }
        println!("{title}:");
        if rules.is_empty() {
            println!("  (none)");
        }
        for r in rules {
            println!("  {:<40} {}", r.pattern, r.origin);
        }
    };
    let floor: Vec<&RuleRef> = policy.floor_rules().iter().collect();
    section("floor (built in, cannot be overridden)", &floor, true);
    section("path deny (paths.deny)", &of_access(path_deny, None), true);
    section(
        "path allow (paths.allow)",
        &of_access(path_allow, None),
        true,
    );
    for access in [Access::Read, Access::Write] {
        for (list, rules) in [("deny", path_deny), ("allow", path_allow)] {
            let title = format!("path {access} {list} (paths.{access}.{list})");
            section(&title, &of_access(rules, Some(access)), false);
        }
    }
    let command_deny: Vec<&RuleRef> = command_deny.iter().collect();
    let command_allow: Vec<&RuleRef> = command_allow.iter().collect();
    section("command deny", &command_deny, true);
    section("command allow", &command_allow, true);
    match policy.network() {
        Some(n) => {
            let (deny, allow) = n.rules();
            section("network deny (network.deny)", &deny, true);
            section("network allow (network.allow)", &allow, true);
        }
        None => println!("network: not filtered by host (no `permissions.network`)"),
    }
    println!(
        "self-tests: {} (`sandgate policy test` shows each result)",
        policy.tests().len()
    );
    if !policy.ignored_rules().is_empty() {
        println!("ignored:");
        for i in policy.ignored_rules() {
            let list = if i.rule.access.is_some() {
                format!(" [{}]", i.rule.path_key())
            } else {
                String::new()
            };
            println!(
                "  {:<40} {}{list} ({})",
                i.rule.pattern, i.rule.origin, i.why
            );
        }
    }
    ExitCode::SUCCESS
}

fn explain(global: &GlobalArgs, request: Option<String>) -> ExitCode {
    let call = match crate::cmd::check::read_request(request) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let loaded = match crate::load(global) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let decision = loaded.policy.evaluate(&call, &loaded.ctx);
    let matched = matched_rules(&loaded.policy, &call, &loaded.ctx);
    let parts = shell_parts(&loaded.policy, &call, &loaded.ctx);
    if global.json {
        let out = json!({
            "decision": decision,
            "matched": matched.iter().map(rule_json).collect::<Vec<_>>(),
            "parts": parts,
        });
        println!("{out:#}");
        return ExitCode::SUCCESS;
    }
    println!("subject: {}", decision.subject);
    println!("rules that matched:");
    if matched.is_empty() {
        println!("  (none)");
    }
    for r in &matched {
        let won = decision.rule.as_ref() == Some(r);
        println!(
            "  {} {:<11} {:<40} {}",
            if won { "→" } else { " " },
            r.list_words(),
            r.pattern,
            r.origin
        );
    }
    if let Some(access) = access_of(&call) {
        println!("access: {access}; rules about the other access do not decide it");
    }
    print_parts(&parts);
    println!("decision: {}: {}", decision.verdict, decision.reason);
    ExitCode::SUCCESS
}

/// `sandgate policy explain --domain HOST[:PORT]`: the network entries that
/// match a connection and the decision, for each port asked about.
fn explain_domain(global: &GlobalArgs, text: &str) -> ExitCode {
    let (target, port) = match sandgate_policy::network::parse_host_port(text) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("sandgate: cannot explain `{text}`: {e}");
            return ExitCode::from(crate::EXIT_CANNOT_CHECK);
        }
    };
    let loaded = match crate::load(global) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let policy = &loaded.policy;
    let ports = match port {
        Some(p) => vec![p],
        None => sandgate_policy::network::DEFAULT_PORTS.to_vec(),
    };
    let not_filtered = if !policy.settings().sandbox {
        Some(format!(
            "the sandbox is off ({}): the network is not filtered",
            policy.settings().sandbox_reason
        ))
    } else if policy.network().is_none() {
        Some(
            "no policy file has `permissions.network`: the network is not filtered by host \
             (`exec.isolation.network` alone decides whether isolated commands have one)"
                .to_string(),
        )
    } else {
        None
    };
    let mut results = Vec::new();
    for port in ports {
        let (decision, matched) = match policy.network() {
            Some(n) => (Some(n.decide(&target, port)), n.matches(&target, port)),
            None => (None, Vec::new()),
        };
        results.push((port, decision, matched));
    }
    if global.json {
        let out: Vec<serde_json::Value> = results
            .iter()
            .map(|(port, decision, matched)| {
                json!({
                    "host": target.to_string(), "port": port,
                    "decision": decision,
                    "matched": matched.iter().map(|r| rule_json(r)).collect::<Vec<_>>(),
                })
            })
            .collect();
        println!(
            "{:#}",
            json!({"filtered": not_filtered.is_none(), "why_not": not_filtered, "connections": out})
        );
        return ExitCode::SUCCESS;
    }
    if let Some(why) = &not_filtered {
        println!("{why}");
        return ExitCode::SUCCESS;
    }
    for (port, decision, matched) in &results {
        println!(
            "connection: {}",
            sandgate_policy::network::host_port(&target, *port)
        );
        println!("entries that matched:");
        if matched.is_empty() {
            println!("  (none)");
        }
        if let Some(decision) = decision {
            for r in matched {
                let won = decision.rule.as_ref() == Some(*r);
                println!(
                    "  {} {:<11} {:<40} {}",
                    if won { "→" } else { " " },
                    r.list_words(),
                    r.pattern,
                    r.origin
                );
            }
            println!("decision: {}: {}", decision.verdict, decision.reason);
        }
    }
    if let sandgate_policy::network::Target::Name(_) = target {
        println!(
            "a name is then resolved: every address it resolves to that is loopback, \
             link-local or private must be listed too"
        );
    }
    ExitCode::SUCCESS
}

/// The parts of a shell-analysed command and the verdict of each; empty when
/// the command gate is not reached or runs in raw mode.
fn shell_parts(
    policy: &Policy,
    call: &ToolCall,
    ctx: &sandgate_policy::Context,
) -> Vec<sandgate_policy::Part> {
    let command = call.str_param("command").unwrap_or("");
    let reached = policy.settings().sandbox
        && sandgate_policy::request::tool_kind(&call.tool) == ToolKind::Exec
        && !command.trim().is_empty();
    if !reached {
        return Vec::new();
    }
    policy.explain_command(command, ctx).parts
}

fn print_parts(parts: &[sandgate_policy::Part]) {
    if parts.is_empty() {
        return;
    }
    println!("parts of the command (shell analysis):");
    for p in parts {
        let kind = match p.kind {
            sandgate_policy::PartKind::Line => "line",
            sandgate_policy::PartKind::Command => "command",
            sandgate_policy::PartKind::Redirect => "redirect",
            sandgate_policy::PartKind::Unanalysable => "unanalysable",
            sandgate_policy::PartKind::Path => "path",
            sandgate_policy::PartKind::Write => "write",
        };
        let shown = match p.kind {
            sandgate_policy::PartKind::Redirect => &p.source,
            _ => &p.text,
        };
        println!(
            "  {:<5} {:<12} {}",
            p.verdict.as_str(),
            kind,
            shown.escape_debug()
        );
        println!("        {}", p.reason);
    }
}

/// Whether a file tool call reads or writes its path.
fn access_of(call: &ToolCall) -> Option<Access> {
    sandgate_policy::request::gated_tool(&call.tool).and_then(|t| t.access)
}

/// Every rule matching the request's subject, in evaluation order.
fn matched_rules(policy: &Policy, call: &ToolCall, ctx: &sandgate_policy::Context) -> Vec<RuleRef> {
    match sandgate_policy::request::tool_kind(&call.tool) {
        ToolKind::File => {
            let path = call.str_param("path").unwrap_or("");
            let access = access_of(call).unwrap_or(Access::Write);
            match policy.canonical_path(path, ctx) {
                Ok(p) => policy
                    .path_matches(&p)
                    .into_iter()
                    .filter(|r| r.applies_to(access))
                    .cloned()
                    .collect(),
                Err(_) => Vec::new(),
            }
        }
        ToolKind::Exec => {
            let command = call.str_param("command").unwrap_or("");
            policy
                .command_matches(command)
                .into_iter()
                .cloned()
                .collect()
        }
        ToolKind::OutOfScope => Vec::new(),
    }
}
