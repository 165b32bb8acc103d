"""Strict text decoding and tolerant JSON / JSON Lines reading shared by the JSON parsers."""
from __future__ import annotations

import json
from typing import Any

from parity.collectors.formats.records import ParseError


def decode(data: bytes) -> str:
    """UTF-8 (with or without BOM); anything else is rejected, not guessed."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text (invalid byte at offset {exc.start})") from None


def loads(text: str) -> Any:
    """JSON that may carry `NaN`/`Infinity` literals (SGLang writes them); callers decide
    whether a non-finite number is acceptable where it stands."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") \
            from None
    except RecursionError:
        raise ParseError("malformed JSON: nested too deeply") from None


def load_document_or_lines(data: bytes) -> list[Any]:
    """A JSON document, or JSON Lines (one value per line; a line may itself be a list).
    Returns the list of top-level values."""
    text = decode(data)
    stripped = text.strip()
    if not stripped:
        raise ParseError("empty file")
    try:
        return [json.loads(stripped)]
    except json.JSONDecodeError:
        pass
    except RecursionError:
        raise ParseError("malformed JSON: nested too deeply") from None
    values = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        try:
            values.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ParseError(f"malformed JSON Lines: {exc.msg} at line {lineno}") from None
        except RecursionError:
            raise ParseError(f"malformed JSON Lines: nested too deeply at line {lineno}") from None
    return values


def flatten_records(values: list[Any]) -> list[Any]:
    """JSONEachRow files mix object lines and list lines: flatten one level."""
    out: list[Any] = []
    for v in values:
        out.extend(v if isinstance(v, list) else [v])
    return out
