"""The server's listening socket: Nagle's algorithm off, so that the responses of a kept-alive
connection are sent when written instead of after the browser's delayed acknowledgement.

Streamlit binds its socket without naming the protocol (number 0), and asyncio sets
TCP_NODELAY only on sockets whose protocol number is IPPROTO_TCP, so the app's connections
never had it: every response after a connection's first (headers, then body: two writes)
waited about 40 ms for the acknowledgement of the first write. A new visitor's browser
fetches 61 script files over six connections; they took 0.54-0.60 s to arrive, and
0.24-0.38 s with the option set. The option is set on the listening socket, which the
connections it accepts inherit (Linux, the BSDs, macOS)."""
from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

FOLDERS = (Path("/proc/self/fd"), Path("/dev/fd"))  # this process's open files


def no_delay() -> int:
    """Set TCP_NODELAY on every listening TCP socket of this process; how many there were
    (0 where the process's open files cannot be listed)."""
    folder = next((f for f in FOLDERS if f.is_dir()), None)
    done = 0
    for name in os.listdir(folder) if folder else ():
        try:
            if not stat.S_ISSOCK(os.fstat(int(name)).st_mode):
                continue
            copy = os.dup(int(name))
        except (OSError, ValueError):  # closed since it was listed (the listing's own)
            continue
        try:
            sock = socket.socket(fileno=copy)
        except OSError:
            os.close(copy)
            continue
        with sock:  # closes the copy only
            if (sock.family in (socket.AF_INET, socket.AF_INET6)
                    and sock.type == socket.SOCK_STREAM
                    and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                done += 1
    return done
