#!/usr/bin/env bash
# What the exec speed targets are measured against: the least any wrapper
# around `sh -c true` can cost here, side by side with `true`.
#
#   cargo build --release -p sandgate
#   crates/sandgate-sandbox/benches/exec_floor.sh [path/to/sandgate] [runs]
#
# Prints the mean wall time per run in microseconds (best of 3 rounds):
# - `true` and `sh -c true`;
# - a static C program that only forks, execs `sh -c true` and waits: the
#   floor of any wrapper that starts the command as a child (sandgate's
#   supervisor must stay beside the command, so it forks);
# - `sandgate --version`: sandgate's own start and exit, doing nothing;
# - `bwrap` with only a user namespace and `/` bound read-only, and with
#   the options the issue asks of the bwrap preset, without sandgate.
# Needs cc (with a static libc) and, for the bwrap lines, bwrap.
set -euo pipefail

bin=${1:-target/release/sandgate}
runs=${2:-300}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

printf '%s\n' \
  '#include <sys/wait.h>' \
  '#include <unistd.h>' \
  'int main(int argc, char **argv) {' \
  '  (void)argc;' \
  '  pid_t pid = fork();' \
  '  if (pid == 0) { execv(argv[1], argv + 1); _exit(127); }' \
  '  int status;' \
  '  waitpid(pid, &status, 0);' \
  '  return WEXITSTATUS(status);' \
  '}' >wrap.c
cc -O2 -static -o wrap wrap.c

# Mean microseconds per run of "$@", best of 3 rounds of $runs runs.
measure() {
  local best=
  for _ in 1 2 3; do
    local start end us
    start=$(date +%s%N)
    for ((i = 0; i < runs; i++)); do "$@" >/dev/null; done
    end=$(date +%s%N)
    us=$(((end - start) / runs / 1000))
    if [ -z "$best" ] || [ "$us" -lt "$best" ]; then best=$us; fi
  done
  echo "$best"
}

row() {
  local label=$1
  shift
  printf '%-52s %8s\n' "$label" "$(measure "$@")"
}

printf '%-52s %8s\n' "command" "µs/run"
row "true" /bin/true
row "sh -c true" /bin/sh -c true
row "static fork + exec of sh -c true, then wait" ./wrap /bin/sh -c true
row "sandgate --version" "$bin" --version
if command -v bwrap >/dev/null; then
  row "bwrap --unshare-user --ro-bind / / sh -c true" \
    bwrap --unshare-user --ro-bind / / /bin/sh -c true
  row "bwrap with the preset's options, sh -c true" \
    bwrap --unshare-user --disable-userns --unshare-pid --die-with-parent \
    --new-session --cap-drop ALL --ro-bind / / --dev /dev --proc /proc \
    --bind "$work" "$work" --unshare-net --chdir "$work" /bin/sh -c true
fi
