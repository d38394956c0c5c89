#!/usr/bin/env bash
# Overhead of `sandgate run` on the issue's loop (1,000 file creations by one
# `sh`), side by side with the same loop unconfined: runs alternate, and the
# median of each side is printed with the ratio.
#
#   cargo build --release -p sandgate
#   crates/sandgate-sandbox/benches/run_loop.sh [path/to/sandgate] [runs] [parent dir]
#
# The workspace is a fresh directory under the parent dir (default /dev/shm,
# a tmpfs). Two loops are measured: files in the workspace root (`f$i`) and
# in a subdirectory (`sub/f$i`).
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

printf '%-36s %12s %12s %7s\n' "loop" "unconfined" "sandgate run" "ratio"
for target in 'f$i' 'sub/f$i'; do
  loop="for i in \$(seq 1000); do echo x > $target; done"
  plain=() confined=()
  for ((r = 0; r < runs; r++)); do
    plain+=("$(clock sh -c "$loop")")
    rm -f f* sub/f*
    confined+=("$(clock "$bin" run --no-ui -- sh -c "$loop")")
    rm -f f* sub/f*
  done
  p=$(printf '%s\n' "${plain[@]}" | median)
  c=$(printf '%s\n' "${confined[@]}" | median)
  printf '%-36s %9d µs %9d µs %6s×\n' "echo x > $target" "$p" "$c" \
    "$(awk -v c="$c" -v p="$p" 'BEGIN { printf "%.2f", c / p }')"
done
