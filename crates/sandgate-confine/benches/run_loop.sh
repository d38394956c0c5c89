#!/usr/bin/env bash
# Overhead of `sandgate run` on the issue's loop (1,000 file creations by one
# `sh`), side by side with the same loop unconfined: runs alternate, and the
# median of each side is printed with the ratio.
#
#   cargo build --release -p sandgate
#   crates/sandgate-confine/benches/run_loop.sh [path/to/sandgate] [runs] [parent dir]
#
# The workspace is a fresh directory under the parent dir (default /dev/shm,
# a tmpfs). Two loops are measured: files in the workspace root (`f$i`) and
# in a subdirectory (`sub/f$i`). Three sides: unconfined, `sandgate run`, and
# `sandgate run` without the write-open fast path (`env -u LD_PRELOAD` in
# front of `sh`, so every write-open goes to the supervisor; the extra `env`
# exec costs about a millisecond).
set -euo pipefail

bin=${1:-target/release/sandgate}
runs=${2:-15}
parent=${3:-/dev/shm}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
ws=$(mktemp -d -p "$parent")
trap 'rm -rf "$ws"' EXIT
export SANDGATE_SANDBOX=1 SANDGATE_AUDIT=off SANDGATE_NO_UI=1
cd "$ws"
mkdir sub
"$bin" run --no-ui -- true # creates .sandgate/sandbox.json once

# Wall time of "$@" in microseconds.
clock() {
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null
  end=$(date +%s%N)
  echo $(((end - start) / 1000))
}

median() {
  sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

printf '%-22s %12s %12s %7s %14s %7s\n' "loop" "unconfined" "sandgate run" "ratio" "no fast path" "ratio"
ratio() { awk -v c="$1" -v p="$2" 'BEGIN { printf "%.2f", c / p }'; }
for target in 'f$i' 'sub/f$i'; do
  loop="for i in \$(seq 1000); do echo x > $target; done"
  plain=() confined=() slow=()
  for ((r = 0; r < runs; r++)); do
    plain+=("$(clock sh -c "$loop")")
    rm -f f* sub/f*
    confined+=("$(clock "$bin" run --no-ui -- sh -c "$loop")")
    rm -f f* sub/f*
    slow+=("$(clock "$bin" run --no-ui -- env -u LD_PRELOAD sh -c "$loop")")
    rm -f f* sub/f*
  done
  p=$(printf '%s\n' "${plain[@]}" | median)
  c=$(printf '%s\n' "${confined[@]}" | median)
  s=$(printf '%s\n' "${slow[@]}" | median)
  printf '%-22s %9d µs %9d µs %6s× %11d µs %6s×\n' "echo x > $target" "$p" "$c" \
    "$(ratio "$c" "$p")" "$s" "$(ratio "$s" "$p")"
done
