"""How `parity serve` starts the app: the Streamlit command line and an environment that
carries no secret. (The app itself is `dashboard/app/`.)"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Mapping

APP = Path(__file__).resolve().parent / "app" / "server.py"
SECRET = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_KEY|PRIVATE_KEY|WEBHOOK",
                    re.I)


def command(port: int, address: str) -> list[str]:
    """`streamlit run` for the app: headless, no file watcher, no usage statistics, a viewer
    toolbar (no settings or developer menu) and no error details shown to visitors."""
    return [sys.executable, "-m", "streamlit", "run", str(APP),
            "--server.port", str(port), "--server.address", address,
            "--server.headless", "true", "--server.fileWatcherType", "none",
            "--server.runOnSave", "false", "--browser.gatherUsageStats", "false",
            "--client.toolbarMode", "viewer", "--client.showErrorDetails", "none",
            "--global.developmentMode", "false"]


def environment(db: str | None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The app's environment: no token, secret or password variable reaches it."""
    env = os.environ if env is None else env
    out = {k: v for k, v in env.items() if not SECRET.search(k)}
    if db:
        out["PARITY_DB_URL"] = db
    return out
