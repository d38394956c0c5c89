#!/usr/bin/env python3
"""Two sandgate builds side by side on the network paths, run by run.

    python3 crates/sandgate/benches/network_ab.py OLD NEW [--runs N] [--requests M] [--starts S]

`network.py` measures one build at a time; on a shared two-core machine the
unconfined side alone moves by more than the differences between two builds
from one run to the next. This interleaves them instead: every round runs
the unconfined side, then OLD, then NEW, on the same servers (those of
`network.py`), and prints the medians (and minimums) of:

- M sequential HTTPS requests, each on a new connection, through the proxy
  (default 300);
- the 100 MiB download through the proxy, timed whole and by curl's own
  `time_total`;
- `sandgate exec -- true` (`landlock`) without `permissions.network` and
  with the allow-list, for each build (`--starts` rounds, default 41, and
  at least N).

Everything is on loopback; the policies are `network.py`'s.
"""

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("network", os.path.join(HERE, "network.py"))
network = importlib.util.module_from_spec(spec)
spec.loader.exec_module(network)


def timed(argv, env, cwd):
    start = time.perf_counter()
    out = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                         capture_output=True, timeout=600)
    took = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"failed ({out.returncode}): {' '.join(argv[:6])}…\n"
                         f"{out.stderr.decode()[-2000:]}")
    return took * 1000, out.stdout


def report(title, table, order):
    print(f"\n{title}")
    base = statistics.median(table[order[0]])
    for name in order:
        m = statistics.median(table[name])
        print(f"  {name:<12} {m:9.1f} ms  {m / base:5.2f}x  (min {min(table[name]):.1f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--starts", type=int, default=41,
                    help="rounds of `exec -- true` (at least --runs)")
    args = ap.parse_args()
    builds = [("old", os.path.abspath(args.old)), ("new", os.path.abspath(args.new))]
    root = tempfile.mkdtemp(prefix="sandgate-netab-")
    try:
        big = network.serve(network.Server(("127.0.0.1", 0), network.Big))
        closing, cert = network.https_server(root, close_each=True)
        env, work = network.tree(root, "with", [f"127.0.0.1:{big}", f"127.0.0.1:{closing}"])
        plain_env, plain_work = network.tree(root, "without", None)
        urls = os.path.join(root, "urls.txt")
        with open(urls, "w") as f:
            for i in range(args.requests):
                f.write(f'url = "https://127.0.0.1:{closing}/{i}"\noutput = "/dev/null"\n')
        sides = [("unconfined", [])] + [(name, [path, "exec", "--"]) for name, path in builds]
        order = [name for name, _ in sides]
        https, whole, inside = ({n: [] for n in order} for _ in range(3))
        download = ["curl", "-sS", "--fail", "--noproxy", "", "-o", "/dev/null",
                    "-w", "%{time_total}", f"http://127.0.0.1:{big}/big"]
        many = ["curl", "-sS", "--fail", "--noproxy", "", "--cacert", cert, "-K", urls]
        for name, pre in sides:  # warm-up
            timed(pre + download, env, work)
        for _ in range(args.runs):
            for name, pre in sides:
                took, out = timed(pre + download, env, work)
                whole[name].append(took)
                inside[name].append(float(out) * 1000)
                https[name].append(timed(pre + many, env, work)[0])
        report(f"{args.requests} HTTPS requests, a new connection each, through the proxy "
               f"(medians of {args.runs} rounds)", https, order)
        report("100 MiB download through the proxy, whole command", whole, order)
        report("100 MiB download through the proxy, curl's own time_total", inside, order)
        starts = {}
        rounds = max(args.runs, args.starts)
        for _ in range(rounds):
            for name, path in builds:
                for label, e, w in [("without", plain_env, plain_work), ("with", env, work)]:
                    starts.setdefault((name, label), []).append(
                        timed([path, "exec", "--", "true"], e, w)[0])
        print(f"\nsandgate exec -- true (landlock), medians of {rounds} rounds")
        for name, _ in builds:
            wo, wi = starts[(name, "without")], starts[(name, "with")]
            print(f"  {name:<4} without permissions.network {statistics.median(wo):6.2f} ms "
                  f"(min {min(wo):.2f}); with the allow-list {statistics.median(wi):6.2f} ms "
                  f"(min {min(wi):.2f}); difference "
                  f"{statistics.median(wi) - statistics.median(wo):+.2f} ms "
                  f"({min(wi) - min(wo):+.2f})")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
