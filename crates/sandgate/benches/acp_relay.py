"""What `sandgate acp` adds to each ACP message, side by side with the agent
started directly (Python 3 standard library only).

Usage: python3 acp_relay.py SANDGATE [MESSAGES] [RUNS] [armed]

The agent is a stand-in that answers every request at once with a small
result (no model, no tools), so that what is measured is the relay. The
editor side sends MESSAGES requests (default 1,000), one at a time, each a
`session/prompt`-shaped request of about 200 bytes, and times each round
trip (two messages: the request and its answer). Each run starts the agent
afresh, directly and through `sandgate acp -- python3 agent.py` (unarmed: the
relay alone), the sides alternating; RUNS runs per side (default 5). It
prints the median round trip of each side, and the median added per message
(half the difference of the round trips). With `armed`, the relayed side
runs armed (`SANDGATE_SANDBOX=1`): the agent confined as `sandgate run`
confines a program, its system calls under the run's supervisor.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

AGENT = r"""
import sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    i = line.find(b'"id":')
    j = line.find(b',', i)
    out.write(b'{"jsonrpc":"2.0","id":' + line[i + 5:j] + b',"result":{"stopReason":"end_turn"}}\n')
    out.flush()
"""


def session(command, messages, env, cwd):
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    times = []
    for i in range(messages):
        request = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "session/prompt",
                "params": {
                    "sessionId": "bench",
                    "prompt": [{"type": "text", "text": "x" * 120}],
                },
            }
        ).encode() + b"\n"
        start = time.perf_counter()
        proc.stdin.write(request)
        proc.stdin.flush()
        answer = proc.stdout.readline()
        times.append(time.perf_counter() - start)
        if not answer:
            raise SystemExit("the agent ended early: %r" % command)
    proc.stdin.close()
    proc.wait(timeout=30)
    return times


def main():
    # The agent runs in a temporary directory: the path must not be relative.
    sandgate = os.path.abspath(sys.argv[1])
    messages = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    armed = len(sys.argv) > 4 and sys.argv[4] == "armed"
    with tempfile.TemporaryDirectory() as tmp:
        agent = os.path.join(tmp, "agent.py")
        with open(agent, "w") as f:
            f.write(AGENT)
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        # The workspace is where sandgate starts: beside HOME, not above it
        # (`sandgate run` refuses a workspace that holds the home directory).
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": home,
            "SANDGATE_AUDIT": "off",
        }
        relayed_env = dict(env, SANDGATE_SANDBOX="1") if armed else env
        direct, relayed = [], []
        for _ in range(runs):
            direct.append(statistics.median(session(["python3", agent], messages, env, work)))
            relayed.append(
                statistics.median(
                    session([sandgate, "acp", "--", "python3", agent], messages, relayed_env, work)
                )
            )
    d = statistics.median(direct) * 1e6
    r = statistics.median(relayed) * 1e6
    print("round trip, agent started directly: %.1f us (median of %d runs of %d)" % (d, runs, messages))
    print("round trip, through sandgate acp%s: %.1f us" % (" (armed)" if armed else "", r))
    print("added per message:                  %.1f us" % ((r - d) / 2))


if __name__ == "__main__":
    main()
