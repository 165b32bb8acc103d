"""Generated histories name their tests as the real suites do: real node ids (when the
folder of real ids is present) or synthesised ones of the same shapes, expanded with
parameter sets, and the demo plan hits the number of results it is asked for."""
from __future__ import annotations

import os
from datetime import date

import pytest

from parity.collectors import demo, testids
from parity.collectors.formats import records


def test_node_ids_split_as_pytest_writes_them():
    t = testids.parse_node_id("tests/v1/test_a.py::TestX::Inner::test_b[/abs::path-1]")
    assert t == testids.TestId("tests/v1/test_a.py", "tests.v1.test_a.TestX.Inner", "test_b",
                               "/abs::path-1")
    assert testids.parse_node_id("test/x.py::test_y") == testids.TestId(
        "test/x.py", "test.x", "test_y", None)


@pytest.fixture
def no_real_ids(monkeypatch, tmp_path):
    monkeypatch.setenv("PARITY_TEST_IDS_DIR", str(tmp_path / "absent"))
    for f in (testids._real_ids, testids.base_ids, testids.skip_reasons):
        f.cache_clear()
    yield
    for f in (testids._real_ids, testids.base_ids, testids.skip_reasons):
        f.cache_clear()


def test_synthesised_ids_without_the_real_folder(no_real_ids):
    assert testids.folder() is None
    tests = testids.suite_tests("vllm", "kernels", 1000)
    keys = {records.TestRecord(t.classname, t.name, t.params, "passed").test_key for t in tests}
    assert len(keys) == 1000  # expansion never repeats a test
    assert all(t.file.startswith("tests/kernels/test_") and t.file.endswith(".py") for t in tests)
    assert testids.skip_reasons("vllm") == testids.FALLBACK_REASONS


def test_expansion_adds_parameter_sets_in_rounds(no_real_ids):
    base = testids.base_ids("sglang", "srt-unit")
    tests = testids.suite_tests("sglang", "srt-unit", len(base) * 2 + 3)
    assert tests[:len(base)] == list(base)
    assert tests[len(base)].params == testids.PARAMS[0]
    assert tests[2 * len(base)].params == testids.PARAMS[1]


REAL = testids.folder()


@pytest.mark.skipif(REAL is None and not os.environ.get("PARITY_REQUIRE_SHARED"),
                    reason="no ../shared/data/test-ids (real test ids) beside the checkout")
def test_real_ids_and_reasons_when_present():
    assert REAL is not None, "PARITY_REQUIRE_SHARED is set but the real test ids are missing"
    lines = (REAL / "vllm-test-ids.txt").read_text(encoding="utf-8").splitlines()
    real = {testids.parse_node_id(n) for n in lines if n.startswith("tests/distributed/")}
    tests = testids.base_ids("vllm", "distributed")
    assert len(tests) > 100 and set(tests) == real
    reasons = testids.skip_reasons("vllm")
    assert all(demo_reason in (REAL / "vllm-skip-reasons.txt").read_text(encoding="utf-8")
               for demo_reason in reasons["vendor"] + reasons["hardware"])


def test_plan_scales_to_the_requested_results(engine):
    sizes = demo.plan(3, results=30_000)
    expected = 3 * demo.results_per_night(sizes)
    assert abs(expected - 30_000) / 30_000 < 0.15
    s = demo.build(engine, days=3, end=date(2026, 11, 27), sizes=sizes)
    assert s.test_results == expected


def test_year_profile_is_real_size():
    sizes = demo.plan(365, profile="year")
    assert 365 * demo.results_per_night(sizes) >= 50_000_000
    vllm_lane = sum(n for (fw, _), n in sizes.items() if fw == "vllm")
    assert 30_000 <= vllm_lane <= 75_000
