"""`parity serve`: the read-only dashboard."""
from __future__ import annotations

import os
from pathlib import Path

from parity.cli.options import engine


def cmd_serve(args) -> int:
    from parity.dashboard import serve
    from parity.db.migrate import HEAD, current_revision, upgrade

    store = engine(args)
    missing = store.url.get_backend_name() == "sqlite" and not (
        store.url.database and Path(store.url.database).exists())
    if not missing and current_revision(store) not in (None, HEAD):
        print("upgrading the store to the current schema ...", flush=True)
        upgrade(store)  # the app only reads: an older store is migrated before it starts
    store.dispose()
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
