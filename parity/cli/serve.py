"""`parity serve`: the read-only dashboard."""
from __future__ import annotations

import os


def cmd_serve(args) -> int:
    from parity.dashboard import serve

    print(f"Parity at http://{args.address}:{args.port} (read-only; Ctrl-C stops it)", flush=True)
    cmd = serve.command(args.port, args.address)
    os.execve(cmd[0], cmd, serve.environment(args.db))  # Streamlit takes over this process


def add(sub) -> None:
    """Register this group's subcommands on the top-level subparsers."""
    sv = sub.add_parser("serve", help="the read-only web dashboard (Streamlit)")
    sv.add_argument("--port", type=int, default=8501)
    sv.add_argument("--address", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1; 0.0.0.0 for everyone)")
    sv.set_defaults(func=cmd_serve)
