#!/usr/bin/env bash
# Whole-process benchmark: `sandgate hook claude` with a 1,000-rule policy
# (500 path + 500 command rules) against a `jq` one-liner hook doing a trivial
# match, side by side with hyperfine. Needs: hyperfine (>= 1.16 measures
# without a shell in between), jq, python3, and a
# release build (`cargo build --release -p sandgate`).
#
#   bash crates/sandgate/benches/hook_vs_jq.sh [RUNS]
#   (SANDGATE_BIN=/path/to/sandgate picks another binary)
set -euo pipefail
cd "$(dirname "$0")/../../.."
runs="${1:-300}"
bin="${SANDGATE_BIN:-$PWD/target/release/sandgate}"
[ -x "$bin" ] || { echo "build first: cargo build --release -p sandgate" >&2; exit 2; }
work="$(mktemp -d)"
# Results go elsewhere: a new file in a directory the rules' resolution read
# would make the kept resolution stale (see README, the compiled-policy cache).
results="$(mktemp -d)"
trap 'rm -rf "$work" "$results"' EXIT
mkdir -p "$work/home/.sandgate" "$work/project"

# 250 rules in each of paths.deny, paths.allow, commands.deny, commands.allow.
python3 crates/sandgate/benches/thousand_rules.py "$work/home/.sandgate/permissions.yaml"

cat > "$work/bash.json" <<JSON
{"session_id":"s","transcript_path":"/tmp/t.jsonl","cwd":"$work/project","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status"},"tool_use_id":"t1"}
JSON
cat > "$work/read.json" <<JSON
{"session_id":"s","transcript_path":"/tmp/t.jsonl","cwd":"$work/project","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"src/mod2/lib.rs"},"tool_use_id":"t2"}
JSON
jq_filter='if .tool_name == "Bash" and (.tool_input.command | test("^git status")) then {hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow"}} else empty end'

export HOME="$work/home" SANDGATE_AUDIT=off SANDGATE_MANAGED_CONFIG="$work/none.yaml" SANDGATE_CACHE_DIR="$work/cache"
# Warm the cache (what every call after the first finds). The path rules'
# resolution is kept only once the directories it read are a second old.
"$bin" hook claude < "$work/bash.json" > /dev/null
sleep 1.2
"$bin" hook claude < "$work/bash.json" > /dev/null

# Without a shell between hyperfine and the program where hyperfine can feed
# stdin itself (`--input`, hyperfine >= 1.16); else through `sh -c`, which
# hyperfine calibrates and subtracts, less precisely.
if hyperfine --help | grep -q -- '--input'; then
  direct=1
else
  direct=0
  echo "note: this hyperfine has no --input; measuring through a shell" >&2
fi
# measure OUT PAYLOAD NAME COMMAND [NAME COMMAND]...: one hyperfine run, every
# command reading PAYLOAD on stdin.
measure() {
  local out="$1" payload="$2" args=()
  shift 2
  while (($#)); do
    if ((direct)); then
      args+=(-n "$1" "$2")
    else
      args+=(-n "$1" "$2 < $payload")
    fi
    shift 2
  done
  if ((direct)); then
    # hyperfine's warm-up runs do not get `--input`: warm up by hand.
    for ((i = 0; i < 20; i++)); do
      "$bin" hook claude < "$payload" > /dev/null
      jq -c "$jq_filter" < "$payload" > /dev/null
    done
    hyperfine -N --input "$payload" --warmup 0 --runs "$runs" --export-markdown "$out.md" --export-json "$out.json" "${args[@]}"
  else
    hyperfine --warmup 20 --runs "$runs" --export-markdown "$out.md" --export-json "$out.json" "${args[@]}"
  fi
}

# The comparison the issue asks for, side by side: each run has the jq hook.
measure "$results/result-bash" "$work/bash.json" \
  "sandgate hook claude (Bash, 1,000 rules, cached)" "$bin hook claude" \
  "jq one-liner hook" "jq -c '$jq_filter'" \
  "sandgate --version (process start alone)" "$bin --version"
measure "$results/result-read" "$work/read.json" \
  "sandgate hook claude (Read, 1,000 rules, cached)" "$bin hook claude" \
  "jq one-liner hook" "jq -c '$jq_filter'"
# Settings that change the work: each through `env`, so all pay its exec.
measure "$results/result-variants" "$work/read.json" \
  "Read, cached (through env)" "env SANDGATE_AUDIT=off $bin hook claude" \
  "Read, cached, audit log on (through env)" "env SANDGATE_AUDIT=on SANDGATE_AUDIT_LOG=$work/audit.jsonl $bin hook claude" \
  "Read, SANDGATE_CACHE=off (through env)" "env SANDGATE_CACHE=off $bin hook claude"
cat "$results/result-bash.md" "$results/result-read.md" "$results/result-variants.md"
# Medians, and each hook's ratio to the jq hook of the same run.
python3 - "$results/result-bash.json" "$results/result-read.json" "$results/result-variants.json" <<'PY'
import json, sys
print("| command | median | ratio to jq (same run) |")
print("| --- | --- | --- |")
for path in sys.argv[1:3]:
    results = json.load(open(path))["results"]
    jq = next(r["median"] for r in results if r["command"].startswith("jq"))
    for r in results:
        print(f"| {r['command']} | {r['median'] * 1000:.2f} ms | {r['median'] / jq:.3f} |")
print()
print("| variant | median |")
print("| --- | --- |")
for r in json.load(open(sys.argv[3]))["results"]:
    print(f"| {r['command']} | {r['median'] * 1000:.2f} ms |")
PY
