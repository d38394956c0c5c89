#!/usr/bin/env bash
# What exec isolation's supervisor costs a command that makes many names:
# 1,000 file creations by one `sh` (`echo x > f$i`), each an `open` with
# O_CREAT that the supervisor performs, side by side with the same loop
# unconfined and under `none`. Runs alternate; the median of each side is
# printed with its ratio to the unconfined loop.
#
#   cargo build --release -p sandgate
#   crates/sandgate-sandbox/benches/exec_names.sh [path/to/sandgate] [runs] [parent dir]
set -euo pipefail

bin=${1:-target/release/sandgate}
runs=${2:-11}
parent=${3:-/dev/shm}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
work=$(mktemp -d -p "$parent")
trap 'rm -rf "$work"' EXIT
export SANDGATE_NO_UI=1 SANDGATE_AUDIT=off SANDGATE_CACHE_DIR=$work/.cache
mkdir "$work/ws"
cd "$work/ws"

for mode in none landlock bwrap; do
  printf 'permissions:\n  commands:\n    shell: false\n    allow: ["."]\n  exec:\n    isolation:\n      mode: %s\n' \
    "$mode" >"$work/$mode.yaml"
done

loop='for i in $(seq 1000); do echo x > f$i; done'

clock() {
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null
  end=$(date +%s%N)
  rm -f f*
  echo $(((end - start) / 1000))
}

median() {
  sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# Each side really makes the files before it is timed.
for mode in none landlock bwrap; do
  command -v bwrap >/dev/null || [ "$mode" != bwrap ] || continue
  "$bin" --config "$work/$mode.yaml" exec -- "$loop"
  made=$(find . -maxdepth 1 -name 'f*' | wc -l)
  rm -f f*
  [ "$made" = 1000 ] || { echo "$mode made $made files, not 1000" >&2; exit 1; }
done

declare -A times
sides=(plain none landlock)
command -v bwrap >/dev/null && sides+=(bwrap)
for ((r = 0; r < runs; r++)); do
  times[plain]+="$(clock sh -c "$loop") "
  for mode in "${sides[@]:1}"; do
    times[$mode]+="$(clock "$bin" --config "$work/$mode.yaml" exec -- "$loop") "
  done
done
p=$(printf '%s\n' ${times[plain]} | median)
printf '%-26s %10s %7s\n' "echo x > f\$i, 1,000 times" "median" "ratio"
for side in "${sides[@]}"; do
  m=$(printf '%s\n' ${times[$side]} | median)
  printf '%-26s %7d µs %6s×\n' "$side" "$m" "$(awk -v c="$m" -v p="$p" 'BEGIN { printf "%.2f", c / p }')"
done
