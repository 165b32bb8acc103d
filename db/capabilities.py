"""Capability vocabulary: which distributed-inference features a lane exercised, recognised
in names (suite, job, test files) and in configs (benchmark arguments, server parameters,
InferenceX fields). The rules are data (`capabilities.toml`, or `PARITY_CAPABILITY_FILE`).

Pure: `from_names(texts)` and `from_config(config)` return sets of capability names; both the
collectors (tagging at ingest) and the dashboard (the capability matrix) use them."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from parity.db.settings import Settings

DEFAULT_FILE = Path(__file__).with_name("capabilities.toml")
FALSE = {"", "0", "false", "no", "none", "off", "null", "disabled"}


@dataclass(frozen=True)
class Capability:
    name: str
    label: str
    names: tuple[re.Pattern, ...]
    keys: frozenset[str]
    values: Mapping[str, Any]


@dataclass(frozen=True)
class Capabilities:
    items: tuple[Capability, ...]
    combinations: tuple[tuple[str, ...], ...]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.items]

    def label(self, name: str) -> str:
        return next((c.label for c in self.items if c.name == name), name)

    def from_names(self, texts: Iterable[str | None]) -> set[str]:
        """Capabilities named in suite, job or test-file names."""
        found = set()
        joined = [t for t in texts if t]
        for cap in self.items:
            if any(p.search(t) for p in cap.names for t in joined):
                found.add(cap.name)
        return found

    def from_config(self, config: Mapping[str, Any] | None) -> set[str]:
        """Capabilities a config's dimensions say it exercised."""
        if not config:
            return set()
        cfg = {str(k).lower(): v for k, v in config.items()}
        found = set()
        for cap in self.items:
            if any(_truthy(cfg.get(k)) for k in cap.keys if k in cfg):
                found.add(cap.name)
                continue
            for key, wanted in cap.values.items():
                if key in cfg and _matches(cfg[key], wanted):
                    found.add(cap.name)
                    break
        return found


def _truthy(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return v > 0
    if isinstance(v, str):
        return v.strip().lower() not in FALSE
    return bool(v)


def _matches(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool):
        try:
            return float(value) >= wanted
        except (TypeError, ValueError):
            return False
    options = {str(w).lower() for w in (wanted if isinstance(wanted, list) else [wanted])}
    return str(value).strip().lower() in options


def parse_capabilities(text: str) -> Capabilities:
    data = tomllib.loads(text)
    items = tuple(Capability(
        name=c["name"], label=c.get("label", c["name"]),
        names=tuple(re.compile(p, re.I) for p in c.get("names", [])),
        keys=frozenset(k.lower() for k in c.get("keys", [])),
        values={k.lower(): v for k, v in c.get("values", {}).items()})
        for c in data.get("capability", []))
    known = {c.name for c in items}
    combos = tuple(tuple(c) for c in data.get("combinations", {}).get("default", []))
    for combo in combos:
        unknown = set(combo) - known
        if unknown:
            raise ValueError(f"combination {combo} names unknown capabilities {sorted(unknown)}")
    return Capabilities(items, combos)


@lru_cache(maxsize=8)
def _load(path: str) -> Capabilities:
    return parse_capabilities(Path(path).read_text(encoding="utf-8"))


def capabilities(path: str | Path | None = None) -> Capabilities:
    """The vocabulary from `path`, `PARITY_CAPABILITY_FILE`, or the shipped default."""
    if path is None:
        path = Settings.from_env().capability_file or DEFAULT_FILE
    return _load(str(path))
