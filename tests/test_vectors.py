"""Per-job outcome vectors, pure: codes, the worst-outcome reduction, merging reports,
the byte round trip the store keeps, and vendor-spelling aliases."""
from __future__ import annotations

import numpy as np

from parity.db import vectors as vec


def _v(ids, outcomes, skips=None, reruns=None) -> vec.Vector:
    n = len(ids)
    return vec.reduce(ids, *vec.codes(outcomes, skips or [None] * n, reruns or [0] * n))


def test_codes_follow_the_vocabularies():
    out, skip, rerun = vec.codes(["error", "failed", "passed", "xpassed", "xfailed", "skipped",
                                  "weird"],
                                 [None, "vendor_amd", "dependency", "platform", "other",
                                  "hardware", "made-up"],
                                 [0, 1, None, 3, 0, 0, -1])
    assert list(out) == [0, 1, 2, 3, 4, 5, vec.OTHER] and vec.OTHER == 6
    assert list(skip) == [0, 1, 5, 6, 7, 3, 7]  # an unknown category is "other"
    assert list(rerun) == [0, 1, 0, 1, 0, 0, 0]
    assert out.dtype == np.uint8 and skip.dtype == np.uint8 and rerun.dtype == np.uint8
    assert list(vec.names(np.array([0, 2, 5, 6, 9]), vec.OUTCOMES)) == [
        "error", "passed", "skipped", "other", "other"]
    assert list(vec.names([0, 1, 8], vec.SKIPS)) == [None, "vendor_amd", "other"]


def test_reduce_keeps_the_worst_outcome_its_skip_and_any_rerun():
    v = _v([7, 3, 7, 3, 9, 9, 9], ["passed", "skipped", "error", "failed", "skipped", "skipped",
                                   "xfailed"],
           [None, "hardware", None, None, "vendor_amd", "disabled", None], [1, 0, 0, 0, 0, 2, 0])
    assert list(v.ids) == [3, 7, 9] and v.ids.dtype == np.int64
    assert list(vec.names(v.outcomes, vec.OUTCOMES)) == ["failed", "error", "xfailed"]
    assert list(v.reruns) == [0, 1, 1]
    assert len(v) == 3
    # two skips of one test: the lower skip code (the vocabulary's order) is kept
    s = _v([1, 1], ["skipped", "skipped"], ["disabled", "vendor_amd"])
    assert list(vec.names(s.skips, vec.SKIPS)) == ["vendor_amd"]
    assert vec.reduce([], [], [], []) is vec.EMPTY and len(vec.EMPTY) == 0


def test_reduce_matches_a_row_by_row_reduction_on_shuffled_and_sorted_runs():
    """Many reports of overlapping tests, in sorted runs (jobs one after the other) and
    shuffled: each id keeps its smallest (outcome, skip) pair and any rerun, as a plain
    loop over the rows finds them."""
    rng = np.random.default_rng(7)
    pool = rng.integers(-2**62, 2**62, 400)
    runs = [np.sort(rng.choice(pool, 300, replace=False)) for _ in range(3)]
    ids = np.concatenate(runs)
    outcomes = rng.integers(0, len(vec.OUTCOMES) + 1, len(ids)).astype(np.uint8)
    skips = rng.integers(0, len(vec.SKIPS), len(ids)).astype(np.uint8)
    reruns = (rng.random(len(ids)) < 0.2).astype(np.uint8)
    for order in (np.arange(len(ids)), rng.permutation(len(ids))):
        got = vec.reduce(ids[order], outcomes[order], skips[order], reruns[order])
        want: dict[int, tuple] = {}
        for i, o, k, r in zip(ids.tolist(), outcomes.tolist(), skips.tolist(), reruns.tolist()):
            w = want.get(i, (255, 255, 0))
            want[i] = (*min((o, k), w[:2]), max(r, w[2]))
        assert got.ids.tolist() == sorted(want)
        assert [tuple(t) for t in zip(got.outcomes.tolist(), got.skips.tolist(),
                                      got.reruns.tolist())] == [want[i] for i in sorted(want)]
        assert got.outcomes.dtype == got.skips.dtype == got.reruns.dtype == np.uint8


def test_merge_is_the_reduction_of_all_reports():
    a = _v([1, 2, 3], ["passed", "passed", "skipped"])
    b = _v([2, 4], ["failed", "passed"], reruns=[1, 0])
    m = vec.merge(a, vec.EMPTY, b)
    assert list(m.ids) == [1, 2, 3, 4]
    assert list(vec.names(m.outcomes, vec.OUTCOMES)) == ["passed", "failed", "skipped", "passed"]
    assert list(m.reruns) == [0, 1, 0, 0]
    assert vec.merge(a) is a and vec.merge(vec.EMPTY, a) is a
    assert vec.merge() is vec.EMPTY and vec.merge(vec.EMPTY) is vec.EMPTY


def test_bytes_round_trip():
    v = _v([5, 2**40, 1], ["passed", "error", "skipped"], [None, None, "hardware"], [0, 1, 0])
    raw = v.to_bytes()
    assert len(raw[0]) == 24 and len(raw[1]) == 3
    back = vec.Vector.from_bytes(*raw)
    for f in ("ids", "outcomes", "skips", "reruns"):
        assert np.array_equal(getattr(back, f), getattr(v, f))
    assert back.ids.dtype == np.int64 and back.ids[-1] == 2**40


def test_aliases_map_vendor_spellings_to_their_parity_id():
    aliases = vec.Aliases({20: 2, 30: 3})
    ids = np.array([1, 2, 20, 30, 31], np.int64)
    assert list(aliases.parity_ids(ids)) == [1, 2, 2, 3, 31]
    unchanged = np.array([1, 5, 40], np.int64)
    assert aliases.parity_ids(unchanged) is unchanged
    assert vec.Aliases({}).parity_ids(unchanged) is unchanged
    empty = np.empty(0, np.int64)
    assert aliases.parity_ids(empty) is empty
    # past the last key: no false hit
    assert list(aliases.parity_ids(np.array([35], np.int64))) == [35]
    # the remapped vector folds both spellings into one test, worst outcome first
    v = _v([2, 20, 7], ["passed", "failed", "passed"])
    r = vec.remap(v, aliases)
    assert list(r.ids) == [2, 7]
    assert list(vec.names(r.outcomes, vec.OUTCOMES)) == ["failed", "passed"]
    plain = _v([1, 7], ["passed", "passed"])
    assert vec.remap(plain, aliases) is plain and vec.remap(v, None) is v
    assert vec.remap(vec.EMPTY, aliases) is vec.EMPTY


def test_remap_is_the_reduction_of_the_ids_mapped_in_place():
    """`remap` looks each alias up in the vector's ids and puts the remapped tests after the
    others; the vector is the one a reduction of the ids mapped in place gives, whichever
    tests have aliases, whatever their codes."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        ids = np.unique(rng.integers(0, 400, rng.integers(0, 120)))
        n = len(ids)
        v = vec.Vector(ids, rng.integers(0, 7, n).astype(np.uint8),
                       rng.integers(0, 8, n).astype(np.uint8),
                       rng.integers(0, 2, n).astype(np.uint8))
        keys = np.unique(rng.integers(0, 400, rng.integers(0, 60)))
        aliases = vec.Aliases(dict(zip(keys.tolist(), rng.integers(0, 400, len(keys)).tolist())))
        want = vec.reduce(aliases.parity_ids(v.ids), v.outcomes, v.skips, v.reruns)
        got = vec.remap(v, aliases)
        for f in ("ids", "outcomes", "skips", "reruns"):
            assert getattr(got, f).tolist() == getattr(want, f).tolist(), f


def test_aliases_from_a_stores_rows_are_the_aliases_of_their_mapping():
    """`Aliases` takes the (test id, parity id) rows as a cursor gives them, in any order,
    and holds the arrays the mapping would, sorted by test id."""
    rows = [(30, 3), (20, 2), (7_000_000_000_000, -5)]
    got, want = vec.Aliases(rows), vec.Aliases(dict(rows))
    assert got.keys.tolist() == [20, 30, 7_000_000_000_000]
    assert got.keys.dtype == want.keys.dtype == np.int64
    assert list(got.keys) == list(want.keys) and list(got.values) == list(want.values)
    ids = np.array([1, 20, 30, 7_000_000_000_000], np.int64)
    assert list(got.parity_ids(ids)) == [1, 2, 3, -5]
    empty = vec.Aliases([])
    assert len(empty.keys) == 0 and empty.parity_ids(ids) is ids


def test_vectors_are_immutable_and_empty_is_empty():
    import dataclasses

    import pytest

    v = _v([1], ["passed"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.ids = np.array([2], np.int64)
    assert vec.EMPTY.to_bytes() == (b"", b"", b"", b"")
    assert [len(getattr(vec.EMPTY, f)) for f in ("ids", "outcomes", "skips", "reruns")] == [0] * 4


def test_union_and_distinct_are_numpys_on_sorted_unsorted_and_empty_ids():
    """`union` gives what `np.union1d` gives and `distinct` what `np.unique` gives,
    whatever the inputs' order or overlap."""
    rng = np.random.default_rng(7)
    cases = [(np.empty(0, np.int64), np.empty(0, np.int64)),
             (np.array([5], np.int64), np.empty(0, np.int64)),
             (np.empty(0, np.int64), np.array([3, 3, 1], np.int64))]
    for _ in range(20):
        a = rng.integers(-50, 50, rng.integers(0, 80))
        b = rng.integers(-50, 50, rng.integers(0, 80))
        cases += [(a, b), (np.unique(a), np.unique(b)),
                  (np.unique(rng.integers(-2**62, 2**62, 500)), np.unique(b))]
    for a, b in cases:
        got = vec.union(a, b)
        assert got.dtype == np.int64 and np.array_equal(got, np.union1d(a, b).astype(np.int64))
        got = vec.distinct(a)
        assert got.dtype == np.int64 and np.array_equal(got, np.unique(a).astype(np.int64))
