"""A scripted stand-in for an ACP agent, for the protocol's edge cases in the
`sandgate acp` tests (the issue's cases run against the real agents).

Usage: python3 fake_agent.py RECORD [ignore-eof]

Every line it receives on stdin is appended to RECORD as it came. A
notification `{"method": "test/emit", "params": {"line": TEXT}}` makes it
write TEXT as one line on stdout (with `"pad": N`, each `PAD` in it
replaced by N x's): the test speaks as the agent through the relay itself.
A notification `{"method": "test/run", "params": {"argv": [...], "out":
PATH}}` makes it run the program (as the agent's own process, confined
with it) in a thread, and write its output and exit code to PATH when it
ends. At the end of its input it exits with code 7, or with `ignore-eof`
goes on until it is signalled.
"""

import json
import os
import subprocess
import sys
import threading
import time


def run(argv, out):
    """Runs `argv`, its output and exit code written to `out` at its end."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=60)
        text = done.stdout + done.stderr + ("\nexit %d\n" % done.returncode).encode()
    except Exception as e:  # the failure is the result
        text = repr(e).encode()
    with open(out + ".part", "wb") as f:
        f.write(text)
    # Whole, or not there yet.
    os.rename(out + ".part", out)


def main():
    record = open(sys.argv[1], "ab", buffering=0)
    ignore_eof = len(sys.argv) > 2 and sys.argv[2] == "ignore-eof"
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            break
        record.write(line if line.endswith(b"\n") else line + b"\n")
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("method") == "test/emit":
            params = message["params"]
            text = params["line"].replace("PAD", "x" * params.get("pad", 3))
            sys.stdout.buffer.write(text.encode() + b"\n")
            sys.stdout.buffer.flush()
        if isinstance(message, dict) and message.get("method") == "test/run":
            params = message["params"]
            threading.Thread(target=run, args=(params["argv"], params["out"]), daemon=True).start()
    if ignore_eof:
        while True:
            time.sleep(1)
    sys.exit(7)


if __name__ == "__main__":
    main()
