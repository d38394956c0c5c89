#!/usr/bin/env bash
# Whole-process cost of `sandgate exec -- true` under each isolation mode,
# side by side with a plain `sh -c true` and with the floor any wrapper
# pays here: a static C program (built with cc, when it can link
# statically) that only forks, execs `sh -c true` and waits, and `sandgate
# --version` (sandgate's own start and exit, nothing else).
#
#   cargo build --release -p sandgate
#   crates/sandgate-sandbox/benches/exec_true.sh [path/to/sandgate] [runs]
#
# Prints the mean wall time per run in microseconds (best of 3 rounds).
# With bwrap installed, `bwrap` alone is measured too: the argv `sandgate
# exec --dry-run` shows for the bwrap mode, run directly (without the two
# seccomp filters, whose descriptors exist only once sandgate prepares the
# command): what bubblewrap's own start costs, which sandgate cannot cut.
# With Anthropic's sandbox-runtime on PATH (`srt`, npm
# @anthropic-ai/sandbox-runtime) or named by $SRT, `srt -c true` is measured
# too, configured alike (writes in the work dir only, ~/.ssh unreadable, no
# network), with a tenth of the runs: it starts a Node.js process each time.
set -euo pipefail

bin=${1:-target/release/sandgate}
runs=${2:-300}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The real home (its size matters to Landlock), with the audit log and the
# policy cache kept out of it.
export SANDGATE_NO_UI=1 SANDGATE_AUDIT_LOG=$work/audit.jsonl SANDGATE_CACHE_DIR=$work/cache
cd "$work"

config() {
  cat > "$work/$1.yaml" <<YAML
permissions:
  commands:
    allow: ["^true$"]
  exec:
    isolation:
      mode: $1
YAML
}

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

printf '%-34s %8s\n' "command" "µs/run"
printf '%-34s %8s\n' "true" "$(measure /bin/true)"
printf '%-34s %8s\n' "sh -c true" "$(measure /bin/sh -c true)"
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
  '}' >"$work/wrap.c"
if cc -O2 -static -o "$work/wrap" "$work/wrap.c" 2>/dev/null; then
  printf '%-34s %8s\n' "fork + exec sh -c true (static C)" "$(measure "$work/wrap" /bin/sh -c true)"
else
  printf '%-34s %8s\n' "fork + exec sh -c true (static C)" "skipped: no static cc"
fi
printf '%-34s %8s\n' "sandgate --version" "$(measure "$bin" --version)"
for mode in none landlock bwrap; do
  config "$mode"
  if [ "$mode" = bwrap ] && ! command -v bwrap >/dev/null; then
    printf '%-34s %8s\n' "sandgate exec -- true ($mode)" "skipped: no bwrap"
    continue
  fi
  printf '%-34s %8s\n' "sandgate exec -- true ($mode)" \
    "$(measure "$bin" --config "$work/$mode.yaml" exec -- true)"
done

if command -v bwrap >/dev/null; then
  bwrap_argv=()
  skip=0
  while IFS= read -r arg; do
    if [ "$skip" = 1 ]; then
      skip=0
    elif [ "$arg" = --add-seccomp-fd ]; then
      skip=1
    else
      bwrap_argv+=("$arg")
    fi
  done < <("$bin" --config "$work/bwrap.yaml" exec --dry-run -- true | sed -n '/^argv:$/,$s/^  //p')
  printf '%-34s %8s\n' "bwrap alone (same options)" "$(measure "${bwrap_argv[@]}")"
  printf '%-34s %8s\n' "bwrap, user namespace and / only" \
    "$(measure bwrap --unshare-user --ro-bind / / /bin/sh -c true)"
fi

srt=${SRT:-$(command -v srt || true)}
if [ -n "$srt" ]; then
  printf '{"filesystem":{"denyRead":["~/.ssh"],"allowWrite":["."],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}' >"$work/srt.json"
  runs=$(((runs + 9) / 10))
  printf '%-34s %8s\n' "srt -c true" "$(measure "$srt" -s "$work/srt.json" -c true)"
else
  printf '%-34s %8s\n' "srt -c true" "skipped: srt is not installed"
fi
