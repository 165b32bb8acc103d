"""Per-job outcome vectors: each job's tests as three parallel arrays, the roll-up that lets
the latest-run views compare two runs' tests with NumPy instead of reading every result.

A vector holds the job's test ids (`test_case.id`, sorted, int64), each test's worst
outcome in the job (a code: its index in `OUTCOMES`, the order of worst first), the skip
category of the row that outcome came from (its index in `SKIPS`), and whether any of its
rows was rerun (1 or 0). The writer merges every
report of a job into its vector in the same transaction as the results; `rebuild` derives
all vectors from the raw rows, and the two agree.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# worst first: a test that errored in one shard and passed in another errored
OUTCOMES = ("error", "failed", "passed", "xpassed", "xfailed", "skipped")
OTHER = len(OUTCOMES)  # an outcome outside the vocabulary ranks last
FAILING = max(OUTCOMES.index("error"), OUTCOMES.index("failed"))  # codes up to it failed
SKIPS = (None, "vendor_amd", "vendor_nvidia", "hardware", "disabled", "dependency",
         "platform", "other")


class _Codes(dict):
    """Name -> code, and any other name `other`'s code: looked up by `map` in C (a report's
    200,000 outcomes in 4 ms, where a generator of `dict.get` took 15)."""

    def __init__(self, names: tuple, other: int):
        super().__init__((n, i) for i, n in enumerate(names))
        self.other = other

    def __missing__(self, name) -> int:
        return self.other


_OUTCOME_CODE = _Codes(OUTCOMES, OTHER)
_SKIP_CODE = _Codes(SKIPS, SKIPS.index("other"))


# the code arrays of a vector, in the order a stored vector holds them
CODES = ("outcomes", "skips", "reruns")


@dataclass(frozen=True)
class Vector:
    """One job's tests: ids sorted and unique, with their outcome and skip codes. A vector
    read with only some of its codes (`db.state.read`) has None for the others."""

    ids: np.ndarray  # int64
    outcomes: np.ndarray  # uint8
    skips: np.ndarray  # uint8
    reruns: np.ndarray  # uint8, 1 where a row of the test was rerun

    def __len__(self) -> int:
        return len(self.ids)

    def to_bytes(self) -> tuple[bytes, bytes, bytes, bytes]:
        return (self.ids.astype("<i8").tobytes(), self.outcomes.tobytes(),
                self.skips.tobytes(), self.reruns.tobytes())

    @classmethod
    def from_bytes(cls, ids: bytes, outcomes: bytes, skips: bytes, reruns: bytes) -> "Vector":
        return cls.from_codes(ids_from_bytes(ids), outcomes, skips, reruns)

    @classmethod
    def from_codes(cls, ids: np.ndarray, outcomes: bytes | None, skips: bytes | None,
                   reruns: bytes | None) -> "Vector":
        """A vector of decoded ids (which several jobs' vectors may share) and its codes'
        stored bytes, read-only views of them (None: not read)."""
        return cls(ids, *(None if b is None else np.frombuffer(b, dtype=np.uint8)
                          for b in (outcomes, skips, reruns)))


def ids_from_bytes(ids: bytes) -> np.ndarray:
    """Stored test ids as an int64 array: a read-only view of the bytes (a copy of every id
    cost a history view a tenth of its read, 1,000 jobs of 14,000 tests)."""
    return np.frombuffer(ids, dtype="<i8").astype(np.int64, copy=False)


EMPTY = Vector(np.empty(0, np.int64), np.empty(0, np.uint8), np.empty(0, np.uint8),
               np.empty(0, np.uint8))


def names(codes: np.ndarray, vocabulary: tuple) -> np.ndarray:
    """Codes back to names (`OUTCOMES` or `SKIPS`); a code past the vocabulary is "other"."""
    table = np.array(list(vocabulary) + ["other"], dtype=object)
    return table[np.minimum(np.asarray(codes, dtype=np.int64), len(vocabulary))]


def codes(outcomes, skip_categories, rerun_counts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Outcome names, skip categories (None where not skipped) and rerun counts as codes."""
    out = np.fromiter(map(_OUTCOME_CODE.__getitem__, outcomes), np.uint8)
    skip = np.fromiter(map(_SKIP_CODE.__getitem__, skip_categories), np.uint8)
    rerun = np.fromiter(((r or 0) > 0 for r in rerun_counts), np.uint8)
    return out, skip, rerun


def reduce(ids, outcomes, skips, reruns) -> Vector:
    """One entry per id: the worst outcome (and that row's skip code) wins, and the test
    counts as rerun when any of its rows was."""
    ids = np.asarray(ids, dtype=np.int64)
    outcomes = np.asarray(outcomes, dtype=np.uint8)
    skips = np.asarray(skips, dtype=np.uint8)
    reruns = np.asarray(reruns, dtype=np.uint8)
    if len(ids) == 0:
        return EMPTY
    # by id alone, stably: the input is mostly sorted runs (jobs' vectors one after the
    # other, or one vector with a few ids remapped), which a stable sort merges in a pass;
    # a sort on the codes too cost twice as much (two 75,000-test jobs: 5.2 -> 2.9 ms)
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    first = np.ones(len(ids), dtype=bool)
    first[1:] = ids[1:] != ids[:-1]
    starts = np.flatnonzero(first)
    if len(starts) == len(ids):
        return Vector(ids, outcomes[order], skips[order], reruns[order])
    # each id's worst (outcome, skip) pair: the smallest of the two codes as one number
    worst = np.minimum.reduceat((outcomes.astype(np.uint16) << 8 | skips)[order], starts)
    return Vector(ids[first], (worst >> 8).astype(np.uint8), (worst & 0xFF).astype(np.uint8),
                  np.maximum.reduceat(reruns[order], starts).astype(np.uint8))


def merge(*vectors: Vector) -> Vector:
    """The vector of several reports (or jobs) together."""
    vectors = [v for v in vectors if len(v)]
    if not vectors:
        return EMPTY
    if len(vectors) == 1:
        return vectors[0]
    return reduce(*(np.concatenate([getattr(v, f) for v in vectors])
                    for f in ("ids", "outcomes", "skips", "reruns")))


def distinct(ids) -> np.ndarray:
    """The sorted distinct values of `ids` (int64), as `np.unique` gives them, by a stable
    sort: NumPy 2's `np.unique` hashes, which for ids that are sorted or nearly (a lane's
    tests, two vectors one after the other) costs far more than one pass (150,000 ids:
    23 ms against 0.2 ms sorted, 8 ms in random order)."""
    out = np.sort(np.asarray(ids, np.int64).ravel(), kind="stable")
    if len(out) < 2:
        return out
    return out[np.concatenate([[True], out[1:] != out[:-1]])]


def union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sorted distinct ids of `a` and `b`, as `np.union1d` gives them. Two vectors' ids
    are each sorted, and a stable sort of the two runs one after the other merges them in
    one pass (two lanes of 75,000 tests: 17 -> 0.7 ms)."""
    return distinct(np.concatenate([np.asarray(a, np.int64).ravel(),
                                    np.asarray(b, np.int64).ravel()]))


def find(sorted_ids: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of `ids` sits in `sorted_ids` and whether it is there: (positions, found);
    a position is meaningful only where found."""
    if not len(sorted_ids):
        return np.zeros(len(ids), np.int64), np.zeros(len(ids), bool)
    pos = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
    return pos, sorted_ids[pos] == ids


class Aliases:
    """Test id -> parity id for the few tests whose parity key differs from their key, as
    sorted arrays for vectorised lookups."""

    def __init__(self, pairs: dict[int, int] | list[tuple[int, int]]):
        """From a mapping or from (test id, parity id) rows as a store's cursor gives them,
        each test id once, sorted as arrays without a dict between (PyTorch-size lanes hold
        tens of thousands of aliases: 28,762 in 31 -> 17 ms)."""
        items = np.array(list(pairs.items()) if isinstance(pairs, dict) else pairs,
                         np.int64).reshape(-1, 2)
        order = np.argsort(items[:, 0], kind="stable")
        self.keys, self.values = items[order, 0], items[order, 1]

    def parity_ids(self, ids: np.ndarray) -> np.ndarray:
        """The parity id of each test id: its alias's where it has one, else itself (the
        input array when nothing maps)."""
        if not len(self.keys) or not len(ids):
            return ids
        pos, hit = find(self.keys, ids)
        if not hit.any():
            return ids
        out = ids.copy()
        out[hit] = self.values[pos[hit]]
        return out


def remap(vector: Vector, aliases: Aliases | None) -> Vector:
    """The vector keyed by parity id: a test id that names a vendor spelling maps to its
    parity id; the others are their own parity id."""
    if aliases is None or not len(vector) or not len(aliases.keys):
        return vector
    # each alias looked up in the vector's sorted ids, not each id among the aliases, and
    # the tests it keeps in their sorted order ahead of the remapped few: the reduction's
    # stable sort merges the two instead of sorting ids remapped in place (a PyTorch lane's
    # vector of 250,000 tests with 28,762 aliases: 5.1 -> 2.8 ms)
    pos, hit = find(vector.ids, aliases.keys)
    if not hit.any():
        return vector
    mapped = np.zeros(len(vector), bool)
    mapped[pos[hit]] = True
    take = np.concatenate([np.flatnonzero(~mapped), pos[hit]])
    ids = np.concatenate([vector.ids[~mapped], aliases.values[hit]])
    return reduce(ids, *(getattr(vector, f)[take] for f in CODES))
