"""A check-then-use race against the file tools: a directory and a symlink
swapped back and forth with renameat2(RENAME_EXCHANGE) while someone opens
paths through the directory.

Usage: race.py PLAN_JSON

    {"work": "/tmp/…/home/work",        # holds "d" (a directory) and "s" (a symlink)
     "seconds": 6,
     "mode": "naive" | "mcp",
     "secret": "SECRET-…",              # naive mode: what a leak looks like
     "floor": "/tmp/…/home/.ssh",       # naive mode: what the check refuses
     "command": [...], "env": {...},    # mcp mode: the server
     "calls": [{"tool": ..., "args": {...}}, ...]}  # mcp mode: one round

naive: the check-then-open-by-name that the file tools must not do (resolve
the path, refuse it if it is under the floor, then open it by name), looped
until it returns the secret or time runs out. Prints {"leaked": bool,
"attempts": n}.

mcp: the rounds of calls, repeated through a real MCP client until time runs
out. Prints {"rounds": n, "results": {tool: {text: count}}, "errors": {...}}.

Either way the swapping stops before the answer is printed, with "d" a
directory again.
"""

import asyncio
import ctypes
import json
import multiprocessing
import os
import sys
import time

AT_FDCWD = -100
RENAME_EXCHANGE = 2


def swapper(work, stop):
    libc = ctypes.CDLL(None, use_errno=True)
    a = os.path.join(work, "d").encode()
    b = os.path.join(work, "s").encode()
    while not stop.is_set():
        if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
            raise OSError(ctypes.get_errno(), "renameat2")


def restore(work):
    d = os.path.join(work, "d")
    if os.path.islink(d):
        libc = ctypes.CDLL(None, use_errno=True)
        s = os.path.join(work, "s")
        if libc.renameat2(AT_FDCWD, d.encode(), AT_FDCWD, s.encode(), RENAME_EXCHANGE) != 0:
            raise OSError(ctypes.get_errno(), "renameat2")
    assert os.path.isdir(d) and not os.path.islink(d)


def naive(plan):
    path = os.path.join(plan["work"], "d", "id_rsa")
    floor = plan["floor"].rstrip("/") + "/"
    deadline = time.monotonic() + plan["seconds"]
    attempts = 0
    while time.monotonic() < deadline:
        attempts += 1
        try:
            judged = os.path.realpath(path)
        except OSError:
            # The swap happened under realpath's feet: a failed check.
            continue
        if judged.startswith(floor):
            continue
        try:
            with open(path) as f:
                if plan["secret"] in f.read():
                    return {"leaked": True, "attempts": attempts}
        except OSError:
            pass
    return {"leaked": False, "attempts": attempts}


async def through_mcp(plan):
    from mcp import Client, StdioServerParameters

    server = StdioServerParameters(
        command=plan["command"][0],
        args=plan["command"][1:],
        env=plan["env"],
        cwd=plan["work"],
    )
    results = {}
    rounds = 0
    async with Client(server, mode="legacy") as client:
        deadline = time.monotonic() + plan["seconds"]
        while time.monotonic() < deadline:
            rounds += 1
            for call in plan["calls"]:
                result = await client.call_tool(call["tool"], call["args"])
                text = "".join(c.text for c in result.content if getattr(c, "type", None) == "text")
                key = ("error: " if result.is_error else "ok: ") + text
                per_tool = results.setdefault(call["tool"], {})
                per_tool[key] = per_tool.get(key, 0) + 1
    return {"rounds": rounds, "results": results}


def main(plan):
    stop = multiprocessing.Event()
    proc = multiprocessing.Process(target=swapper, args=(plan["work"], stop))
    proc.start()
    try:
        if plan["mode"] == "naive":
            out = naive(plan)
        else:
            out = asyncio.run(through_mcp(plan))
    finally:
        stop.set()
        proc.join()
        restore(plan["work"])
    out["swapper_exit"] = proc.exitcode
    print(json.dumps(out))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
