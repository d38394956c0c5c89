#!/usr/bin/env bash
# Where the time of `sandgate exec -- true` goes, step by step: the median
# microseconds from each timestamp to the next, over many runs, for a build
# with exec_phases.patch applied (in a scratch worktree, never shipped):
#
#   git worktree add /tmp/phases HEAD
#   (cd /tmp/phases && git apply crates/sandgate-sandbox/benches/exec_phases.patch \
#      && cargo build --release -p sandgate)
#   crates/sandgate-sandbox/benches/exec_phases.sh /tmp/phases/target/release/sandgate [runs]
#
# Steps: main → loaded (arguments, policy from the cache) → decided (the
# verdict and its audit record) → planned (the isolation plan) → prepared
# (Landlock ruleset, mounts and filters built) → child (fork) → mounted →
# landlocked → filtered (seccomp) → handed (listener sent) → spawned (the
# parent sees the exec) → attached (supervisor threads started).
set -euo pipefail

bin=${1:?usage: exec_phases.sh path/to/instrumented/sandgate [runs]}
runs=${2:-200}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SANDGATE_NO_UI=1 SANDGATE_AUDIT_LOG=$work/audit.jsonl SANDGATE_CACHE_DIR=$work/cache
cd "$work"
for mode in none landlock; do
  printf 'permissions:\n  commands:\n    allow: ["^true$"]\n  exec:\n    isolation:\n      mode: %s\n' \
    "$mode" >"$mode.yaml"
  "$bin" --config "$mode.yaml" exec -- true 2>/dev/null
  : >"$mode.log"
  for ((i = 0; i < runs; i++)); do
    "$bin" --config "$mode.yaml" exec -- true 2>>"$mode.log"
  done
  echo "== $mode (median µs since the previous step, $runs runs)"
  # One "order label µs" line per step and run, then the median per label.
  awk '$1 == "TP" {
         if ($2 == "main") prev = $3
         if (!($2 in order)) order[$2] = ++n
         print order[$2], $2, $3 - prev; prev = $3
       }' "$mode.log" | sort -k1,1n -k3,3n | awk '
       { v[$1, ++count[$1]] = $3; name[$1] = $2; if ($1 > last) last = $1 }
       END {
         for (i = 1; i <= last; i++)
           printf "%-12s %7d\n", name[i], v[i, int((count[i] + 1) / 2)]
       }'
done
