"""What several command groups share: the store named by --db and date arguments."""
from __future__ import annotations

import argparse

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
