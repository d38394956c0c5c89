#!/usr/bin/env python3
"""A bare TCP relay on loopback, for the floor of `network.py`'s download
through a proxy: what any relay in user space costs on this machine, with
no checks at all.

Usage: bare_relay.py TARGET_PORT

It listens on 127.0.0.1 (a port of the kernel's choice, printed on its own
line once it listens), connects every accepted connection to
127.0.0.1:TARGET_PORT, and moves each direction's bytes with `splice(2)`
through a 1 MiB pipe, as sandgate's proxy does with a bulk transfer. It
ends when its standard input closes (when the benchmark that started it
ends, however it ends).
"""

import fcntl
import os
import socket
import sys
import threading

PIPE = 1024 * 1024


def pump(src, dst):
    read_end, write_end = os.pipe()
    try:
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE)
        while True:
            n = os.splice(src.fileno(), write_end, PIPE)
            if n == 0:
                break
            while n:
                n -= os.splice(read_end, dst.fileno(), n)
    except OSError:
        pass
    finally:
        os.close(read_end)
        os.close(write_end)
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def serve(listener, target):
    while True:
        client, _ = listener.accept()
        upstream = socket.create_connection(("127.0.0.1", target))
        for src, dst in ((client, upstream), (upstream, client)):
            threading.Thread(target=pump, args=(src, dst), daemon=True).start()


def main():
    target = int(sys.argv[1])
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    threading.Thread(target=serve, args=(listener, target), daemon=True).start()
    sys.stdin.buffer.read()


if __name__ == "__main__":
    main()
