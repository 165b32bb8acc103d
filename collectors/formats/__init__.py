"""Pure parsers: bytes in, normalised records out. No I/O beyond the stream they are given."""
from parity.collectors.formats.records import (
    AccuracyRecord,
    BenchmarkRecord,
    NotRecognised,
    ParseError,
    ParseResult,
    SessionTotals,
    TestRecord,
)

__all__ = [
    "AccuracyRecord",
    "BenchmarkRecord",
    "NotRecognised",
    "ParseError",
    "ParseResult",
    "SessionTotals",
    "TestRecord",
]
