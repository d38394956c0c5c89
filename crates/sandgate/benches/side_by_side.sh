#!/usr/bin/env bash
# Two builds of sandgate side by side on the figures a refactor must keep:
# the hook (`sandgate hook claude`, a `Bash` call, 1,000-rule policy, cache
# warm), `sandgate check` of a command, `sandgate exec -- true` under
# Landlock isolation, `sandgate run -- true`, and `sandgate run` of 1,000
# file creations by one `sh` in a workspace subdirectory. The two binaries
# alternate call by call (and which goes first, pair by pair), so load
# changes hit both alike; each figure is the median wall time of RUNS calls,
# with the ratio NEW / OLD. With --cpu, the figure is the CPU time instead
# (`perf stat`'s task-clock of the process and everything it starts), which
# a loaded machine disturbs far less than the wall time.
#
#   git worktree add /tmp/old OLD_COMMIT && (cd /tmp/old && cargo build --release -p sandgate)
#   cargo build --release -p sandgate
#   crates/sandgate/benches/side_by_side.sh [--cpu] /tmp/old/target/release/sandgate target/release/sandgate [RUNS]
#
# ROWS="run run-loop" measures only those rows.
set -euo pipefail

cpu=false
if [ "${1:-}" = --cpu ]; then
  cpu=true
  shift
fi
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
old=$(abs "${1:?usage: side_by_side.sh [--cpu] OLD_BIN NEW_BIN [RUNS]}")
new=$(abs "${2:?usage: side_by_side.sh [--cpu] OLD_BIN NEW_BIN [RUNS]}")
runs=${3:-101}
work=$(mktemp -d -p "${TMPDIR:-/tmp}")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home/.sandgate" "$work/project/sub" "$work/cache-old" "$work/cache-new"

# The hook benchmark's 1,000-rule policy, with `^true$` allowed and Landlock
# isolation for the `exec` row.
python3 "$(dirname "$0")/thousand_rules.py" "$work/home/.sandgate/permissions.yaml" --exec

cat > "$work/bash.json" <<JSON
{"session_id":"s","transcript_path":"/tmp/t.jsonl","cwd":"$work/project","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status"},"tool_use_id":"t1"}
JSON
check='{"tool": "exec_run", "params": {"command": "git status"}}'
loop='for i in $(seq 1000); do echo x > sub/f$i; done'

export HOME="$work/home" SANDGATE_AUDIT=off SANDGATE_MANAGED_CONFIG="$work/none.yaml" \
  SANDGATE_NO_UI=1 SANDGATE_SANDBOX=1
cd "$work/project"

# The row's command for binary $1 with its own cache directory $2, run
# under the command words that follow, if any (`perf stat …`).
row() {
  local bin=$1 cache=$2 name=$3
  shift 3
  case $name in
    hook) SANDGATE_CACHE_DIR=$cache "$@" "$bin" hook claude < "$work/bash.json" ;;
    check) SANDGATE_CACHE_DIR=$cache "$@" "$bin" check "$check" ;;
    exec) SANDGATE_CACHE_DIR=$cache "$@" "$bin" exec -- true ;;
    run) SANDGATE_CACHE_DIR=$cache "$@" "$bin" run --no-ui -- true ;;
    run-loop) SANDGATE_CACHE_DIR=$cache "$@" "$bin" run --no-ui -- sh -c "$loop"; rm -f sub/f* ;;
  esac
}

# Wall time (with --cpu: CPU time) of one row in microseconds.
clock() {
  if $cpu; then
    row "$@" perf stat -x, -e task-clock -o "$work/perf.out" -- > /dev/null
    awk -F, '/task-clock/ { printf "%d\n", $1 * 1000 }' "$work/perf.out"
    return
  fi
  local start end
  start=$(date +%s%N)
  row "$@" > /dev/null
  end=$(date +%s%N)
  echo $(((end - start) / 1000))
}

median() {
  sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# Warm both caches (the kept path resolution needs its directories a second old).
for name in hook check exec run; do
  row "$old" "$work/cache-old" "$name" > /dev/null
  row "$new" "$work/cache-new" "$name" > /dev/null
done
sleep 1.2
for name in hook check; do
  row "$old" "$work/cache-old" "$name" > /dev/null
  row "$new" "$work/cache-new" "$name" > /dev/null
done

if $cpu && ! command -v perf > /dev/null; then
  echo "side_by_side.sh: --cpu needs perf (Debian: linux-perf)" >&2
  exit 1
fi
printf '%-10s %12s %12s %7s\n' "row" "old µs" "new µs" "new/old"
for name in ${ROWS:-hook check exec run run-loop}; do
  n=$runs
  [ "$name" = run-loop ] && n=$(((runs + 4) / 5))
  a=() b=()
  for ((r = 0; r < n; r++)); do
    if ((r % 2)); then
      b+=("$(clock "$new" "$work/cache-new" "$name")")
      a+=("$(clock "$old" "$work/cache-old" "$name")")
    else
      a+=("$(clock "$old" "$work/cache-old" "$name")")
      b+=("$(clock "$new" "$work/cache-new" "$name")")
    fi
  done
  ma=$(printf '%s\n' "${a[@]}" | median)
  mb=$(printf '%s\n' "${b[@]}" | median)
  printf '%-10s %12s %12s %7s\n' "$name" "$ma" "$mb" "$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.3f", b / a }')"
done
