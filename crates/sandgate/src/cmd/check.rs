//! `sandgate check`: one request in, one decision out.

use std::io::Read;
use std::process::ExitCode;

use clap::Args;
use sandgate_policy::{Decision, ToolCall};

use crate::setup::GlobalArgs;
use crate::EXIT_CANNOT_CHECK;

/// Decide one request.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The request as JSON, e.g. `{"tool": "file_read", "params": {"path": "~/.ssh/id_rsa"}}`;
    /// `-` or nothing reads it from stdin.
    pub request: Option<String>,
}

/// Read the request from the argument, or from stdin when it is `-` or absent.
pub fn read_request(arg: Option<String>) -> Result<ToolCall, ExitCode> {
    let text = match arg.as_deref() {
        Some("-") | None => {
            let mut buf = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut buf) {
                eprintln!("sandgate: cannot read the request from stdin: {e}");
                return Err(ExitCode::from(EXIT_CANNOT_CHECK));
            }
            buf
        }
        Some(text) => text.to_string(),
    };
    ToolCall::from_json(&text).map_err(|e| {
        eprintln!("sandgate: {e}");
        ExitCode::from(EXIT_CANNOT_CHECK)
    })
}

/// Run `check`.
pub fn run(global: &GlobalArgs, args: CheckArgs) -> ExitCode {
    let call = match read_request(args.request) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let loaded = match crate::load(global) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let decision = loaded.policy.evaluate(&call, &loaded.ctx);
    crate::audit::record("check", &call.tool, &decision);
    print_decision(&decision, global.json);
    ExitCode::SUCCESS
}

/// Print a decision as text or as the JSON of the `check` contract.
pub fn print_decision(decision: &Decision, json: bool) {
    if json {
        match serde_json::to_string(decision) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("sandgate: cannot render the decision: {e}"),
        }
        return;
    }
    println!("{}: {}", decision.verdict, decision.reason);
    if let Some(rule) = &decision.rule {
        println!(
            "  rule: {} `{}` ({})",
            rule.list_words(),
            rule.pattern,
            rule.origin
        );
    }
}
