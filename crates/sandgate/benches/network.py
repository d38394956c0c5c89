#!/usr/bin/env python3
"""`permissions.network` side by side: unconfined, `sandgate exec` (landlock,
the allow-list) and, when installed, srt with the same allow-list.

Usage: network.py SANDGATE_BINARY [--runs N] [--srt PATH]

srt is the version pinned in .ci/agents.txt, installed by .ci/install-agents
(it needs bubblewrap, socat and ripgrep), unless --srt names another; when
it is not installed, its rows are left out and the script says so.

Everything runs on loopback: an HTTP server that sends 100 MiB, and an HTTPS
server (a self-signed certificate made here with `openssl`, given to curl
with `--cacert`). Each measure alternates the sides run by run and prints
the median wall time of each side and the ratio:

- a 100 MiB download (`curl -o /dev/null`), timed whole and by curl's own
  `time_total` (the transfer itself, without the start of curl and sandgate);
  with, for the floor of any relay in user space, the same download through
  `bare_relay.py` (a bare splice relay in its own process, no checks);
- 1,000 sequential HTTPS requests in one curl, each on a new connection
  (the server closes every connection, so each request is a new tunnel,
  TLS handshake and decision), and the same over one kept-alive tunnel;
- `sandgate exec -- true` with the allow-list against without
  `permissions.network` (both `landlock`).

The transfers run under `sandgate exec` twice: through the proxy its
variables name, and with curl told to connect directly (`--noproxy '*'`),
where sandgate's supervisor connects for it and hands it the socket.

curl gets `--noproxy ''` on every side: srt sets `NO_PROXY` to the
loopback addresses, which would send curl past its proxy.

Everything it writes is under one fresh temporary directory, removed at the
end. Run it as a user who may make network namespaces (root, or anyone where
unprivileged user namespaces are on).
"""

import argparse
import http.server
import json
import os
import shutil
import socketserver
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time

MIB = 1024 * 1024
BIG = 100 * MIB
CHUNK = b"\0" * MIB


class Big(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(BIG))
        self.end_headers()
        for _ in range(BIG // MIB):
            self.wfile.write(CHUNK)

    def log_message(self, *args):
        pass


class Small(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        # The whole response in one write: written in two (headers, then
        # body), Nagle's algorithm holds the second until the client's
        # delayed ACK, about 40 ms a request on a kept-alive connection,
        # unconfined too.
        close = self.server.close_each
        head = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
        head += "Connection: close\r\n\r\n" if close else "\r\n"
        self.wfile.write(head.encode() + b"ok\n")
        self.close_connection = close

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def https_server(root, close_each):
    cert, key = os.path.join(root, "cert.pem"), os.path.join(root, "key.pem")
    if not os.path.exists(cert):
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
             "-keyout", key, "-out", cert, "-subj", "/CN=127.0.0.1",
             "-addext", "subjectAltName=IP:127.0.0.1"],
            check=True, capture_output=True)
    server = Server(("127.0.0.1", 0), Small)
    server.close_each = close_each
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    return serve(server), cert


def timed(argv, env, cwd):
    start = time.perf_counter()
    out = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    took = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(argv[:6])}…\n{out.stderr.decode()[-2000:]}")
    return took, out.stdout


def tree(root, name, network):
    home = os.path.join(root, name)
    os.makedirs(os.path.join(home, ".sandgate"))
    os.makedirs(os.path.join(home, "work"))
    policy = ("permissions:\n  commands:\n    shell: false\n    allow: ['^(curl|true)( |$)']\n"
              "  exec:\n    isolation:\n      mode: landlock\n")
    if network is not None:
        policy += "  network:\n    allow: [%s]\n" % ", ".join(f'"{e}"' for e in network)
    with open(os.path.join(home, ".sandgate", "permissions.yaml"), "w") as f:
        f.write(policy)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
           "SANDGATE_NO_UI": "1", "SANDGATE_AUDIT": "off",
           "SANDGATE_MANAGED_CONFIG": os.path.join(root, "no-managed.yaml")}
    return env, os.path.join(home, "work")


def side_by_side(title, sides, runs, transfer=False):
    """sides: [(name, argv, env, cwd)]; alternates them; prints medians.
    With `transfer`, curl prints its own `%{time_total}` (the transfer as
    the program sees it, after its start and sandgate's), reported too."""
    times = {name: [] for name, *_ in sides}
    inside = {name: [] for name, *_ in sides}
    for name, argv, env, cwd in sides:  # warm-up
        timed(argv, env, cwd)
    for _ in range(runs):
        for name, argv, env, cwd in sides:
            took, out = timed(argv, env, cwd)
            times[name].append(took)
            if transfer:
                inside[name].append(float(out.decode().strip().split()[-1]))
    print(f"\n{title} (medians of {runs} runs, sides alternating)")
    rows = [("whole command", times)] + ([("curl's own time_total", inside)] if transfer else [])
    for label, table in rows:
        if transfer:
            print(f" {label}:")
        base = statistics.median(table[sides[0][0]])
        for name, *_ in sides:
            m = statistics.median(table[name])
            print(f"  {name:<44} {m * 1000:10.1f} ms  {m / base:5.2f}x  "
                  f"(min {min(table[name]) * 1000:.1f}, max {max(table[name]) * 1000:.1f})")
    return {name: statistics.median(t) for name, t in times.items()}


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../.."))


def pinned_srt():
    """The srt binary pinned in .ci/agents.txt, if installed."""
    with open(os.path.join(REPO, ".ci/agents.txt"), encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            if len(fields) == 3 and not line.startswith("#") and fields[2] == "srt":
                base = os.environ.get("SANDGATE_AGENTS_DIR") or "/opt/sandgate-agents"
                short = fields[0].rsplit("/", 1)[-1]
                path = os.path.join(base, f"{short}-{fields[1]}", "node_modules/.bin/srt")
                return path if os.path.exists(path) else None
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sandgate")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--srt", default=None)
    args = ap.parse_args()
    if args.srt is None:
        args.srt = pinned_srt()
        if args.srt is None:
            print("srt is not installed (.ci/install-agents installs the pinned version): "
                  "its rows are left out")
    sandgate = os.path.abspath(args.sandgate)
    root = tempfile.mkdtemp(prefix="sandgate-netbench-")
    relay = None
    try:
        big = serve(Server(("127.0.0.1", 0), Big))
        # Ends when this script does: its standard input closes.
        relay = subprocess.Popen([sys.executable, os.path.join(HERE, "bare_relay.py"), str(big)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        relay_port = int(relay.stdout.readline())
        closing, cert = https_server(root, close_each=True)
        keep, _ = https_server(root, close_each=False)
        listed = [f"127.0.0.1:{big}", f"127.0.0.1:{closing}", f"127.0.0.1:{keep}"]
        net_env, work = tree(root, "with", listed)
        plain_env, plain_work = tree(root, "without", None)
        srt_env = None
        if args.srt:
            srt_env = dict(net_env)
            settings = os.path.join(root, "srt-settings.json")
            with open(settings, "w") as f:
                json.dump({"network": {"allowedDomains": ["127.0.0.1", "localhost"],
                                       "deniedDomains": [], "allowLocalBinding": False},
                           "filesystem": {"denyRead": [], "allowWrite": [work, "/tmp"],
                                          "denyWrite": []}}, f)

        def sides(curl_args):
            # srt sets NO_PROXY to loopback: `--noproxy ''` overrides it (the
            # same words on every side).
            curl_args = ["--noproxy", ""] + curl_args
            direct = ["--noproxy", "*"] + curl_args[2:]
            out = [("unconfined", ["curl"] + curl_args, net_env, work),
                   ("sandgate exec (landlock, allow-list)",
                    [sandgate, "exec", "--", "curl"] + curl_args, net_env, work),
                   ("sandgate exec, curl connecting directly",
                    [sandgate, "exec", "--", "curl"] + direct, net_env, work)]
            if args.srt:
                out.append(("srt (same hosts)", [args.srt, "-s", settings, "--", "curl"] + curl_args,
                            srt_env, work))
            return out

        download = ["-sS", "--fail", "-o", "/dev/null", "-w", "%{time_total}\\n",
                    f"http://127.0.0.1:{big}/big"]
        # The floor of any relay: the same download through a bare splice
        # relay in its own process (bare_relay.py), no proxy, no checks.
        floor = ["--noproxy", "*"] + download[:-1] + [f"http://127.0.0.1:{relay_port}/big"]
        side_by_side("100 MiB download from a listed loopback host",
                     sides(download) + [("a bare splice relay, for the floor", ["curl"] + floor,
                                         net_env, work)],
                     args.runs, transfer=True)

        urls = os.path.join(root, "urls.txt")
        with open(urls, "w") as f:
            for i in range(1000):
                f.write(f'url = "https://127.0.0.1:{closing}/{i}"\noutput = "/dev/null"\n')
        many = ["-sS", "--fail", "--cacert", cert, "-K", urls]
        side_by_side("1,000 sequential HTTPS requests, a new connection each", sides(many),
                     max(3, args.runs // 2))
        kept = os.path.join(root, "kept.txt")
        with open(kept, "w") as f:
            for i in range(1000):
                f.write(f'url = "https://127.0.0.1:{keep}/{i}"\noutput = "/dev/null"\n')
        many_kept = ["-sS", "--fail", "--cacert", cert, "-K", kept]
        side_by_side("1,000 sequential HTTPS requests over one kept-alive connection",
                     sides(many_kept), max(3, args.runs // 2))

        side_by_side("sandgate exec -- true (landlock)",
                     [("without permissions.network", [sandgate, "exec", "--", "true"],
                       plain_env, plain_work),
                      ("with the allow-list", [sandgate, "exec", "--", "true"], net_env, work)],
                     max(args.runs, 31))
    finally:
        if relay is not None:
            relay.stdin.close()
            relay.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
