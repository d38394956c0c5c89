//! An MCP client's `tools/call` message, as the server's dispatcher reads
//! it: whatever the tool name and arguments, the gate's preview (what it
//! would decide, with nobody asked and nothing run) never panics, and an
//! error is in words. The JSON-RPC framing itself is the MCP SDK's (rmcp);
//! a message that is not a `tools/call` is read as the arguments of the tool
//! its first byte picks.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use sandgate_policy::ask::NoHuman;
use sandgate_tools::Dispatcher;
use serde_json::Value;

fn dispatcher() -> &'static Dispatcher {
    static D: OnceLock<Dispatcher> = OnceLock::new();
    D.get_or_init(|| {
        let t = sandgate_fuzz::tree();
        Dispatcher::new(
            t.policy.clone(),
            t.ctx.clone(),
            Arc::new(NoHuman {
                reason: "fuzzing".into(),
            }),
            Box::new(|_, _, _| {}),
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(message) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    let d = dispatcher();
    let names: Vec<String> = sandgate_tools::specs()
        .into_iter()
        .map(|s| s.name.to_string())
        .collect();
    let (name, arguments) = match (&message["method"], &message["params"]["name"]) {
        (Value::String(m), Value::String(n)) if m == "tools/call" => {
            (n.clone(), message["params"]["arguments"].clone())
        }
        _ => (names[usize::from(pick) % names.len()].clone(), message),
    };
    match d.preview(&name, &arguments) {
        Ok(_) => {}
        Err(e) => assert!(!e.to_string().is_empty(), "{name}: {arguments}"),
    }
});
