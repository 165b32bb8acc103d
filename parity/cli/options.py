"""What several command groups share: the store named by --db and date arguments."""
from __future__ import annotations

import argparse
import re

from parity.db.engine import make_engine


def engine(args):
    """The engine for --db (default: $PARITY_DB_URL, else ./parity.db)."""
    return make_engine(args.db)


def date_arg(text: str):
    """argparse type: a date or ISO date-time, as the collectors parse them."""
    from parity.collectors.writer import parse_time

    value = parse_time(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"not a date or ISO date-time: {text!r}")
    return value


_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def repo_arg(text: str) -> str:
    """argparse type: a GitHub repository as OWNER/NAME, refused before any request."""
    from parity.collectors.config import REPO

    if not REPO.match(text):
        raise argparse.ArgumentTypeError(f"not OWNER/NAME: {text!r} (e.g. vllm-project/vllm)")
    return text


def slug_arg(text: str) -> str:
    """argparse type: an organisation or pipeline slug (letters, digits, - _ .)."""
    if not _SLUG.match(text):
        raise argparse.ArgumentTypeError(f"not a slug: {text!r} (e.g. vllm, amd-ci)")
    return text
