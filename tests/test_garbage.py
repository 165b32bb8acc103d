"""The garbage collector's pause around a view call (`dashboard.garbage`): paused within,
running again after, however the calls nest, overlap in threads or fail, and never turned
on by a pause that found it off."""
from __future__ import annotations

import gc
import threading

import pytest

from parity.dashboard import frames, garbage, tables


@pytest.fixture(autouse=True)
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_within_and_running_after_even_on_error():
    with garbage.paused():
        assert not gc.isenabled()
        with garbage.paused():  # a composite view's nested calls
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError):
        with garbage.paused():
            raise KeyError("a view that fails")
    assert gc.isenabled()


def test_a_pause_leaves_a_collector_it_found_off_off():
    gc.disable()
    with garbage.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_calls_in_threads_share_one_pause_that_ends_with_the_last():
    first_in, second_in, first_may_go, first_out = (threading.Event() for _ in range(4))
    seen = {}

    def first():
        with garbage.paused():
            first_in.set()
            first_may_go.wait(5)
        seen["after first"] = gc.isenabled()
        first_out.set()

    t = threading.Thread(target=first)
    t.start()
    assert first_in.wait(5)
    with garbage.paused():
        second_in.set()
        first_may_go.set()
        assert first_out.wait(5)
        seen["second, first done"] = gc.isenabled()
    t.join(5)
    assert seen == {"after first": False, "second, first done": False}
    assert gc.isenabled()


def test_young_objects_are_collected_while_calls_overlap(monkeypatch):
    monkeypatch.setattr(garbage, "YOUNG_LIMIT", 100)
    collected = []
    gc.callbacks.append(lambda phase, info: collected.append(info["generation"])
                        if phase == "stop" else None)
    try:
        with garbage.paused():
            with garbage.paused():
                junk = [[] for _ in range(1_000)]  # young tracked objects
                assert gc.get_count()[0] > 100
            assert collected == [1]  # the inner call's end collects the young generations
            assert not gc.isenabled()
            del junk
    finally:
        gc.callbacks.pop()
    assert gc.isenabled()


def test_a_view_call_pauses_the_collector(tmp_path, monkeypatch):
    states = []
    read = tables.newest_run

    def spy(*args, **kw):
        states.append(gc.isenabled())
        return read(*args, **kw)

    monkeypatch.setattr(tables, "newest_run", spy)
    frames.coverage(f"sqlite:///{tmp_path / 'empty.db'}")
    assert states and not any(states)
    assert gc.isenabled()
