"""CI text made safe to post as Markdown (`db.untrusted`)."""
from __future__ import annotations

from parity.db.untrusted import ZWSP, literal, plain


def test_literal_is_one_capped_code_span():
    assert literal("a `b` | c\n@x") == "`a ˋbˋ \\| c @x`"
    assert literal("x" * 500, cap=10) == "`" + "x" * 9 + "…`"
    assert literal("") == ""


def test_plain_defuses_what_github_would_render():
    out = plain("<b>hi</b> @team #12 [a](javascript:x) ![i](https://e.x/p.png) | a@b.c")
    assert "<" not in out and "&lt;b&gt;" in out
    assert f"@{ZWSP}team" in out and f"#{ZWSP}12" in out
    assert "\\[a\\]" in out and f"javascript{ZWSP}:" in out and "\\!\\[i\\]" in out
    assert f"https{ZWSP}:" in out and "\\|" in out
    assert "a@b.c" in out  # an address is not a mention
