"""Hardware vocabulary: map runner labels, runner names, pools and device strings to
(vendor, SKU, architecture, GPU count), and fold vendor tokens out of names.

The mapping is data (`hardware.toml`, or `PARITY_HARDWARE_FILE`), not code, so that users
extend it. An unknown name is returned raw and unmapped; nothing is guessed.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from parity.db.settings import Settings

DEFAULT_FILE = Path(__file__).with_name("hardware.toml")


@dataclass(frozen=True)
class HardwareId:
    vendor: str  # amd | nvidia | unknown
    sku: str = ""
    arch: str = ""
    gpu_count: int = 0
    raw_name: str = ""  # set only when unmapped
    mapped: bool = True

    @property
    def label(self) -> str:
        """A short display name: the SKU, else the architecture, else the raw name."""
        return self.sku or self.arch or self.raw_name or "unknown"


UNKNOWN = HardwareId(vendor="unknown", mapped=False)


@dataclass(frozen=True)
class _Rule:
    sku: str
    vendor: str
    arch: str
    family: str
    patterns: tuple[re.Pattern, ...]


@dataclass(frozen=True)
class Vocabulary:
    rules: tuple[_Rule, ...]
    count_patterns: tuple[re.Pattern, ...]
    fold_pattern: re.Pattern
    pairs: dict = field(default_factory=dict)
    nvidia_order: tuple[str, ...] = ()
    generic: frozenset[str] = frozenset()
    # matches (in lower-cased text) a literal that every fold token starts with
    fold_prefilter: re.Pattern | None = None

    def identify(self, name: str | None) -> HardwareId:
        """The hardware one name denotes, or an unmapped id carrying the raw name."""
        if not name or not name.strip():
            return UNKNOWN
        text = name.strip().lower()
        for rule in self.rules:
            if any(p.search(text) for p in rule.patterns):
                return HardwareId(rule.vendor, rule.sku, rule.arch, self.gpu_count(text))
        return HardwareId("unknown", gpu_count=self.gpu_count(text), raw_name=name.strip()[:200],
                          mapped=False)

    def identify_any(self, names: Iterable[str | None]) -> HardwareId:
        """The first mapped name wins (callers pass labels first, then the runner name).
        When none maps, the first non-empty name is kept raw. A GPU count missing from the
        winning name is taken from another name that states one."""
        names = [n for n in names if n and n.strip() and n.strip().lower() not in self.generic]
        found = UNKNOWN
        for n in names:
            hw = self.identify(n)
            if hw.mapped:
                found = hw
                break
            if found is UNKNOWN:
                found = hw
        if found.gpu_count == 0:
            for n in names:
                count = self.gpu_count(n.lower())
                if count:
                    return HardwareId(found.vendor, found.sku, found.arch, count, found.raw_name,
                                      found.mapped)
        return found

    def gpu_count(self, text: str) -> int:
        for p in self.count_patterns:
            m = p.search(text)
            if m:
                n = int(m.group(1))
                if 0 < n <= 1024:
                    return n
        return 0

    def fold(self, text: str) -> str:
        """Replace vendor and hardware tokens by `{gpu}` so both vendors' names meet."""
        if self.fold_prefilter is not None and not self.fold_prefilter.search(text.lower()):
            return text  # no token can match: skip the slow case-insensitive regex
        return self.fold_pattern.sub("{gpu}", text)

    def reference_for(self, amd_sku: str, nvidia_present: Iterable[str] = ()) -> str | None:
        """The NVIDIA SKU an AMD SKU is compared with by default."""
        ref = self.pairs.get(amd_sku)
        if ref == "newest":
            present = set(nvidia_present)
            newest = [s for s in self.nvidia_order if s in present]
            return newest[-1] if newest else None
        return ref


def parse_vocabulary(text: str) -> Vocabulary:
    data = tomllib.loads(text)
    rules = tuple(
        _Rule(
            sku=r.get("sku", ""),
            vendor=r["vendor"],
            arch=r.get("arch", ""),
            family=r.get("family", ""),
            patterns=tuple(re.compile(p, re.I) for p in r["patterns"]),
        )
        for r in data.get("sku", [])
    )
    counts = tuple(re.compile(p, re.I) for p in data.get("count", {}).get("patterns", []))
    tokens = data.get("parity", {}).get("fold", [])
    fold = re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(tokens) + r")(?![A-Za-z0-9])", re.I) \
        if tokens else re.compile(r"(?!x)x")
    literals = tuple(re.match(r"[a-z0-9_]*", t.lower()).group(0) for t in tokens)
    return Vocabulary(
        fold_prefilter=None if "" in literals else re.compile("|".join(sorted(set(literals)))),
        rules=rules,
        count_patterns=counts,
        fold_pattern=fold,
        pairs=dict(data.get("pairs", {})),
        nvidia_order=tuple(data.get("nvidia_generations", {}).get("order", [])),
        generic=frozenset(x.lower() for x in data.get("generic", {}).get("labels", [])),
    )


@lru_cache(maxsize=8)
def _load(path: str) -> Vocabulary:
    return parse_vocabulary(Path(path).read_text(encoding="utf-8"))


def vocabulary(path: str | Path | None = None) -> Vocabulary:
    """The vocabulary from `path`, `PARITY_HARDWARE_FILE`, or the shipped default."""
    if path is None:
        path = Settings.from_env().hardware_file or DEFAULT_FILE
    return _load(str(path))
