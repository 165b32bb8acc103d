"""`make mutate`'s own parts that decide what counts: which mutants sit in annotations,
which statement a continuation line belongs to (coverage reports first lines), and how a
survivor is matched to its explanation."""
from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("mutation_run", ROOT / "tests/mutation/run.py")
run = importlib.util.module_from_spec(spec)
sys.modules["mutation_run"] = run  # dataclasses look their module up
spec.loader.exec_module(run)


def test_annotations_and_statement_starts(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(textwrap.dedent('''\
        def f(a: int | None, b=1) -> str | None:
            x: list[int] = [a,
                            b * 2]
            if (a and
                    b):
                return "y"
            return None
        '''))
    spans = run.annotation_lines(src)
    assert spans == {(1, 9, 1, 19), (1, 29, 1, 39), (2, 7, 2, 16)}
    assert run._inside((1, 15), (1, 9, 1, 19)) and not run._inside((1, 21), (1, 9, 1, 19))
    assert run.multiplications(src) == {(3, 20, 3, 25)}
    starts = run.statement_starts(src)
    assert starts[3] == 2 and starts[5] == 4 and starts[6] == 6 and starts[1] == 1


def test_survivors_match_their_explanation():
    known = run.explanations()
    assert ("db/engine.py", "ReplaceTrueWithFalse",
            "return sqlite3.connect(uri, uri=True, check_same_thread=False)") in known
    text, ok = run.report([run.Outcome("m.py", [], killed=9, survived=[dict(
        module="m.py", operator="AddNot", line=3, col=0, source="if x:", diff="")])], 90.0, 60)
    assert not ok and "| `m.py` | 10 | 9 | 1 | 0 | 90.0 | 0 | 1 |" in text
    assert "- `m.py` `AddNot` ``if x:`` (line 3)" in text
    text, ok = run.report([run.Outcome("m.py", [], killed=10)], 90.0, 60)
    assert ok and "All: 10 of 10 mutants killed (100.0 %)." in text
