#!/usr/bin/env bash
# `sandgate audit summary|tail|suggest` over a 10 MiB audit log, and over the
# most the log holds (audit.jsonl.1 and audit.jsonl, 10 MiB each), side by
# side with hyperfine. The records are written the way sandgate writes them:
# hook, check, exec and MCP surfaces, allow/ask/deny, outcomes, cwd and
# session. Needs: hyperfine, python3 and a release build
# (`cargo build --release -p sandgate`).
#
#   bash crates/sandgate/benches/audit_summary.sh [RUNS]
#   (SANDGATE_BIN=/path/to/sandgate picks another binary)
set -euo pipefail
cd "$(dirname "$0")/../../.."
runs="${1:-30}"
bin="${SANDGATE_BIN:-$PWD/target/release/sandgate}"
[ -x "$bin" ] || { echo "build first: cargo build --release -p sandgate" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home/.sandgate" "$work/home/project"
cat > "$work/home/.sandgate/permissions.yaml" <<'YAML'
permissions:
  paths:
    allow: ["~/project/**"]
  commands:
    deny: ["^git push", "^npm publish", "^rm -rf"]
    allow: ["^git( |$)", "^ls( |$)", "^cat "]
YAML

mkdir -p "$work/one" "$work/two"
python3 - "$work/one/audit.jsonl" "$work/two/audit.jsonl.1" "$work/two/audit.jsonl" "$work/home" <<'PY'
import json, random, shutil, sys
one, older, newer, home = sys.argv[1:5]
random.seed(19)
progs = ["npm run", "cargo", "make", "docker compose", "kubectl get", "python3 -m", "go", "pnpm", "yarn", "pytest"]
subs = ["test", "build", "lint", "check", "fmt", "up", "pods", "pip", "vet", "run"]
commands = [f"{p} {s}{'' if i < 10 else f' --target t{i}'}" for i, (p, s) in
            enumerate((random.choice(progs), random.choice(subs)) for _ in range(300))]
paths = [f"{home}/project/src/mod{i % 40}/file{i}.rs" for i in range(400)] + \
        [f"/etc/conf{i}.d/app.conf" for i in range(100)]
surfaces = ["hook claude"] * 6 + ["hook codex", "hook gemini", "check", "mcp", "exec"]
outcomes = {
    "allow": [("allowed", "policy")],
    "deny": [("denied", "policy")],
    "ask": [("asked in the agent", "agent"), ("deferred to the agent's own permissions", "agent"),
            ("denied: Codex CLI hooks cannot ask", "nobody: the agent cannot ask"), ("denied by hooks.gemini.ask", "setting")],
}
def write(path, n):
  target = 10 * 1024 * 1024
  size = 0
  count = 0
  with open(path, "w") as f:
    while True:
        verdict = random.choices(["allow", "ask", "deny"], [6, 3, 1])[0]
        if random.random() < 0.6:
            tool = "exec_run"
            # A few commands are asked most (Zipf-like).
            subject = commands[min(int(random.paretovariate(1.2)) - 1, len(commands) - 1)] \
                if verdict == "ask" else random.choice(commands)
        else:
            tool = random.choice(["file_read", "file_write", "file_edit", "file_grep"])
            subject = random.choice(paths)
        became, answered_by = random.choice(outcomes[verdict])
        rule = None if verdict == "ask" else "^git( |$)"
        rec = {
            "time": f"2026-12-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z",
            "surface": random.choice(surfaces), "tool": tool, "subject": subject, "verdict": verdict,
            "rule": rule, "list": None if rule is None else verdict,
            "origin": None if rule is None else f"{home}/.sandgate/permissions.yaml:6",
            "reason": f"no allow rule matched the simple command `{subject}`" if verdict == "ask"
                      else f"the simple command `{subject}` matches the {verdict} rule `^git( |$)`",
            "became": became, "answered_by": answered_by,
            "outcome": "allow" if became.startswith("allowed") else "deny" if became.startswith("denied") else "ask",
            "cwd": f"{home}/project", "session": f"3f1c2d7e-0b7a-4c55-9d1e-{n // 500:012d}",
        }
        line = json.dumps(rec, separators=(",", ":")) + "\n"
        if size + len(line) > target:
            break
        f.write(line)
        size += len(line)
        n += 1
        count += 1
  print(f"{count} records, {size} bytes in {path}", file=sys.stderr)
  return n

n = write(older, 0)
write(newer, n)
shutil.copy(older, one)
PY

export HOME="$work/home" SANDGATE_AUDIT=off \
  SANDGATE_CACHE_DIR="$work/cache" SANDGATE_MANAGED_CONFIG="$work/none.yaml"
cd "$work/home/project"
one="env SANDGATE_AUDIT_LOG=$work/one/audit.jsonl $bin"
two="env SANDGATE_AUDIT_LOG=$work/two/audit.jsonl $bin"
$two audit summary
hyperfine -N --warmup 3 --runs "$runs" \
  -n "summary, 10 MiB" "$one audit summary" \
  -n "summary, 2 x 10 MiB" "$two audit summary" \
  -n "summary --json, 2 x 10 MiB" "$two --json audit summary" \
  -n "tail -n 10, 2 x 10 MiB" "$two audit tail -n 10" \
  -n "suggest, 2 x 10 MiB" "$two audit suggest"

# What writing a record costs a decision (the lock file, the append, the
# size check), against the same decision with the log off.
check='{"tool": "exec_run", "params": {"command": "git status"}}'
mkdir -p "$work/write"
"$bin" check "$check" >/dev/null
hyperfine -N --warmup 10 --runs "$((runs * 10))" \
  -n "check, audit off" "env SANDGATE_AUDIT=off $bin check '$check'" \
  -n "check, audit on" "env SANDGATE_AUDIT=on SANDGATE_AUDIT_LOG=$work/write/audit.jsonl $bin check '$check'"
