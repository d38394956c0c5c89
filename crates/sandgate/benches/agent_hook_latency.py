#!/usr/bin/env python3
"""The time sandgate's hook adds to one tool call, measured inside the real agents.

For each agent (Claude Code, Codex CLI, Gemini CLI; the versions of
.ci/agents.txt, installed by .ci/install-agents) and each hook variant, one
headless run makes CALLS shell tool calls (`touch allowed-N.txt`, which the policy
allows) against the scripted model server of the real-agent tests
(crates/sandgate/tests/agents_common/model_server.py). The server records when
it finished sending each tool call and when the agent's next request, carrying
the tool's result, arrived: that gap is one tool call as the agent performs it
(hook, tool, bookkeeping). The variants, run side by side in alternating
rounds:

- none: no hook;
- allow: a hook that reads its input and prints "allow" in the agent's format
  (a two-line POSIX sh script);
- sandgate: `sandgate hook AGENT`, installed by `sandgate hook install AGENT`.

"sandgate - allow" is what sandgate adds over the cheapest possible hook;
"sandgate - none" is the whole cost of the gate. Every run uses a fresh
throwaway HOME, CODEX_HOME and project under a temporary directory.

    bash crates/sandgate/benches/agent_hook_latency.sh [CALLS] [ROUNDS]
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SERVER = os.path.join(REPO, "crates/sandgate/tests/agents_common/model_server.py")

ALLOW = {
    "claude": '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}',
    "codex": '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}',
    "gemini": '{"decision":"allow"}',
}
POLICY = 'permissions:\n  paths:\n    allow: ["{work}/**"]\n  commands:\n    allow: ["^touch allowed-[0-9]+\\\\.txt$"]\n'


def pins():
    out = {}
    with open(os.path.join(REPO, ".ci/agents.txt"), encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            if len(fields) == 3 and not line.startswith("#"):
                out[fields[2]] = (fields[0], fields[1])
    return out


def agent_bin(name):
    package, version = pins()[name]
    base = os.environ.get("SANDGATE_AGENTS_DIR") or "/opt/sandgate-agents"
    return os.path.join(base, "%s-%s" % (package.rsplit("/", 1)[-1], version), "node_modules/.bin", name)


def shell_step(agent, i):
    # A different file each call: Gemini CLI stops a run that repeats one call.
    cmd = "touch allowed-%d.txt" % i
    if agent == "claude":
        return {"name": "Bash", "args": {"command": cmd, "description": "touch a file"}}
    if agent == "codex":
        return {"name": "exec_command", "args": {"cmd": cmd}}
    return {"name": "run_shell_command", "args": {"command": cmd}}


def one_run(agent, variant, calls, sandgate):
    root = os.path.realpath(tempfile.mkdtemp(prefix="sandgate-bench-%s-" % agent))
    try:
        home, work = os.path.join(root, "home"), os.path.join(root, "work")
        for d in (home, work, os.path.join(root, "tmp"), os.path.join(home, ".sandgate")):
            os.makedirs(d, exist_ok=True)
        assert root.startswith(tempfile.gettempdir()) and home.startswith(root)
        with open(os.path.join(home, ".sandgate/permissions.yaml"), "w") as f:
            f.write(POLICY.replace("{work}", work))
        script, record = os.path.join(root, "script.json"), os.path.join(root, "record.jsonl")
        with open(script, "w") as f:
            json.dump({"steps": [shell_step(agent, i) for i in range(calls)], "final": "done"}, f)
        server = subprocess.Popen(
            [sys.executable, SERVER, script, record], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL
        )
        try:
            port = int(server.stdout.readline().split()[1])
            env = {
                "PATH": os.environ["PATH"],
                "HOME": home,
                "USER": "root",
                "LANG": "C.UTF-8",
                "TMPDIR": os.path.join(root, "tmp"),
                "CODEX_HOME": os.path.join(home, ".codex"),
                "SANDGATE_MANAGED_CONFIG": os.path.join(root, "no-managed.yaml"),
            }
            args = configure(agent, root, home, port, env)
            if variant != "none":
                out = subprocess.run(
                    [sandgate, "hook", "install", agent], env=env, cwd=work, capture_output=True, text=True
                )
                if out.returncode != 0:
                    raise SystemExit("sandgate hook install %s failed: %s" % (agent, out.stderr))
            if variant == "allow":
                hook = os.path.join(root, "allow-hook.sh")
                with open(hook, "w") as f:
                    f.write("#!/bin/sh\ncat >/dev/null\necho '%s'\n" % ALLOW[agent])
                os.chmod(hook, 0o755)
                settings = {
                    "claude": os.path.join(home, ".claude/settings.json"),
                    "codex": os.path.join(home, ".codex/hooks.json"),
                    "gemini": os.path.join(home, ".gemini/settings.json"),
                }[agent]
                with open(settings) as f:
                    text = f.read()
                command = "%s hook %s" % (sandgate, agent)
                if command not in text:
                    raise SystemExit("no `%s` in %s" % (command, settings))
                with open(settings, "w") as f:
                    f.write(text.replace(command, hook))
            start = time.time()
            done = subprocess.run(args, env=env, cwd=work, stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
            wall = time.time() - start
            if done.returncode != 0:
                raise SystemExit("%s (%s) failed: %s" % (agent, variant, done.stderr.decode()[-2000:]))
        finally:
            server.kill()
            server.wait()
        with open(record) as f:
            main = [e for e in map(json.loads, f) if e.get("main")]
        main.sort(key=lambda e: e["step"])
        gaps = [(b["start"] - a["end"]) * 1000 for a, b in zip(main, main[1:])]
        if len(gaps) != calls:
            raise SystemExit("%s (%s): %d tool results, expected %d" % (agent, variant, len(gaps), calls))
        return gaps, wall
    finally:
        shutil.rmtree(root, ignore_errors=True)


def configure(agent, root, home, port, env):
    bin_ = agent_bin(agent)
    prompt = "Do the task."
    if agent == "claude":
        env.update(
            ANTHROPIC_BASE_URL="http://127.0.0.1:%d" % port,
            ANTHROPIC_API_KEY="sk-test",
            DISABLE_TELEMETRY="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            IS_SANDBOX="1",
        )
        return [bin_, "-p", prompt, "--output-format", "stream-json", "--verbose",
                "--no-session-persistence", "--permission-mode", "bypassPermissions"]
    if agent == "codex":
        os.makedirs(os.path.join(home, ".codex"), exist_ok=True)
        with open(os.path.join(home, ".codex/config.toml"), "w") as f:
            f.write(
                'model = "some-model"\nmodel_provider = "fake"\n[model_providers.fake]\nname = "fake"\n'
                'base_url = "http://127.0.0.1:%d/v1"\nwire_api = "responses"\nenv_key = "FAKE_KEY"\n' % port
            )
        env["FAKE_KEY"] = "sk-test"
        return [bin_, "exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-approvals-and-sandbox",
                "--dangerously-bypass-hook-trust", prompt]
    os.makedirs(os.path.join(home, ".gemini"), exist_ok=True)
    with open(os.path.join(home, ".gemini/settings.json"), "w") as f:
        f.write('{"security": {"auth": {"selectedType": "gemini-api-key"}}}\n')
    env.update(GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:%d" % port, GEMINI_API_KEY="test-key")
    return [bin_, "-p", prompt, "--output-format", "json", "--skip-trust", "--yolo"]


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    sandgate = os.environ.get("SANDGATE_BIN") or os.path.join(REPO, "target/release/sandgate")
    agents = (os.environ.get("AGENTS") or "claude,codex,gemini").split(",")
    variants = ["none", "allow", "sandgate"]
    print("%d tool calls per run, %d rounds; sandgate: %s" % (calls, rounds, sandgate))
    for agent in agents:
        gaps = {v: [] for v in variants}
        for _ in range(rounds):
            for v in variants:
                g, _wall = one_run(agent, v, calls, sandgate)
                gaps[v].extend(g)
        med = {v: statistics.median(gaps[v]) for v in variants}
        print("\n%s %s (%d calls per variant)" % (agent, pins()[agent][1], len(gaps["none"])))
        print("  %-9s %9s %9s %9s" % ("hook", "median", "p10", "p90"))
        for v in variants:
            q = statistics.quantiles(gaps[v], n=10)
            print("  %-9s %7.1fms %7.1fms %7.1fms" % (v, med[v], q[0], q[-1]))
        print("  sandgate - allow: %+.1f ms per tool call; sandgate - none: %+.1f ms"
              % (med["sandgate"] - med["allow"], med["sandgate"] - med["none"]))


if __name__ == "__main__":
    main()
