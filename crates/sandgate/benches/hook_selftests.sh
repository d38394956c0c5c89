#!/usr/bin/env bash
# Whole-process benchmark: what a policy's self-tests add to one hook call
# (`sandgate hook claude`, a `Bash` call of `git status`), with the
# compiled-policy cache warm. Side by side in one hyperfine run:
#
#   1. the `readonly` preset of `sandgate init` with its `tests:` list removed;
#   2. the same preset with its 20 tests (the cache keeps that they passed);
#   3. the same, with the kept pass removed before every call, so each call
#      runs the 20 tests (what every call would pay if the pass were not kept);
#   4. `sandgate --version` (process start alone).
#
# Every side runs as `sh -c 'env … < payload'` with hyperfine's `-N` (no
# shell of its own to calibrate and subtract), so all pay the same `sh` and
# `env` execs. Needs hyperfine and a release build (`cargo build --release -p
# sandgate`).
#
#   bash crates/sandgate/benches/hook_selftests.sh [RUNS]
#   (SANDGATE_BIN=/path/to/sandgate picks another binary)
set -euo pipefail
cd "$(dirname "$0")/../../.."
runs="${1:-200}"
bin="${SANDGATE_BIN:-$PWD/target/release/sandgate}"
[ -x "$bin" ] || { echo "build first: cargo build --release -p sandgate" >&2; exit 2; }
command -v hyperfine > /dev/null || { echo "install hyperfine" >&2; exit 2; }
work="$(mktemp -d)"
results="$(mktemp -d)"
trap 'rm -rf "$work" "$results"' EXIT
mkdir -p "$work/home/.sandgate" "$work/project"
export HOME="$work/home" SANDGATE_AUDIT=off SANDGATE_MANAGED_CONFIG="$work/none.yaml"

with_tests="$work/home/.sandgate/with-tests.yaml"
without_tests="$work/home/.sandgate/without-tests.yaml"
"$bin" init --preset readonly --print > "$with_tests"
# The same file up to its `tests:` key.
sed '/^tests:/,$d' "$with_tests" > "$without_tests"
count="$(grep -c '^  - {' "$with_tests")"
[ "$count" = 20 ] || { echo "expected 20 tests in the preset, found $count" >&2; exit 2; }

cat > "$work/bash.json" <<JSON
{"session_id":"s","transcript_path":"/tmp/t.jsonl","cwd":"$work/project","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status"},"tool_use_id":"t1"}
JSON

# One cache directory per side, so that removing side 3's kept pass touches
# nothing of the others.
hook() { # NAME CONFIG
  echo "env SANDGATE_CONFIG=$2 SANDGATE_CACHE_DIR=$work/cache-$1 $bin hook claude < $work/bash.json"
}
# The same as one argument of `sh -c`, for hyperfine -N.
sh_c() { echo "sh -c '$1'"; }
for side in without with rerun; do
  config="$with_tests"
  [ "$side" = without ] && config="$without_tests"
  # Warm each cache (the path resolution is kept once its directories are a second old).
  sh -c "$(hook "$side" "$config")" > /dev/null
done
sleep 1.2
for side in without with rerun; do
  config="$with_tests"
  [ "$side" = without ] && config="$without_tests"
  out="$(sh -c "$(hook "$side" "$config")")"
  case "$out" in *'"allow"'*) ;; *) echo "the hook did not allow git status: $out" >&2; exit 2 ;; esac
done
ls "$work/cache-with"/tests-*.cache > /dev/null

hyperfine -N --warmup 20 --runs "$runs" --export-markdown "$results/r.md" --export-json "$results/r.json" \
  --prepare true --prepare true --prepare "$(sh_c "rm -f $work/cache-rerun/tests-*.cache")" --prepare true \
  -n "preset without tests, cache warm" "$(sh_c "$(hook without "$without_tests")")" \
  -n "preset with 20 tests, cache warm (pass kept)" "$(sh_c "$(hook with "$with_tests")")" \
  -n "preset with 20 tests, tests run every call" "$(sh_c "$(hook rerun "$with_tests")")" \
  -n "sandgate --version (through sh and env)" "$(sh_c "env $bin --version")"
# Instructions of one whole call per side (callgrind; independent of the
# machine's load), when valgrind is installed.
if command -v valgrind > /dev/null; then
  echo
  echo "| side | instructions of one call (callgrind) |"
  echo "| --- | --- |"
  for side in without with rerun; do
    config="$with_tests"
    [ "$side" = without ] && config="$without_tests"
    [ "$side" = rerun ] && rm -f "$work/cache-rerun"/tests-*.cache
    ir="$(SANDGATE_CONFIG="$config" SANDGATE_CACHE_DIR="$work/cache-$side" \
      valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" hook claude < "$work/bash.json" 2>&1 >/dev/null \
      | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p')"
    echo "| $side | $ir |"
  done
fi
cat "$results/r.md"
python3 - "$results/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
base = r[0]["median"]
print()
print("| side | median | mean ± σ | added to the call without tests |")
print("| --- | --- | --- | --- |")
for x in r:
    print(f"| {x['command']} | {x['median'] * 1000:.2f} ms | {x['mean'] * 1000:.2f} ± {x['stddev'] * 1000:.2f} ms | {(x['median'] - base) * 1000:+.2f} ms |")
PY
