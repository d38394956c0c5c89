#!/usr/bin/env bash
# The time `sandgate hook AGENT` adds to one tool call inside the real Claude
# Code, Codex CLI and Gemini CLI, against a hook that only prints "allow" and
# against no hook, side by side (see agent_hook_latency.py). Needs python3, the
# agents (.ci/install-agents) and a release build (`cargo build --release -p sandgate`).
#
#   bash crates/sandgate/benches/agent_hook_latency.sh [CALLS] [ROUNDS]
#   (SANDGATE_BIN=/path/to/sandgate picks another binary; AGENTS=claude,codex picks agents)
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin="${SANDGATE_BIN:-$PWD/target/release/sandgate}"
[ -x "$bin" ] || { echo "build first: cargo build --release -p sandgate" >&2; exit 2; }
export SANDGATE_BIN="$bin"
exec python3 crates/sandgate/benches/agent_hook_latency.py "$@"
