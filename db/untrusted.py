"""Text that came from CI runs (test names, failure messages, job names, configs, runner
labels), made safe to post as Markdown where anyone's pull request can put it: GitHub issue
bodies and comments, the weekly report's Markdown, chat digests.

`literal` puts the text in a code span, where GitHub renders no HTML, link, image,
@mention or #reference; `plain` neutralises those in running text. Both make the text one
line and cap its length. In `db` because both the report (`dashboard`) and the posters
(`collectors`) use it; it is pure text handling."""
from __future__ import annotations

import re

ZWSP = "\u200b"  # zero-width space: breaks a mention or reference without changing the text
_MENTION = re.compile(r"(?<![\w.])@(?=[A-Za-z0-9])")
_REFERENCE = re.compile(r"#(?=\d)")
_SCHEMES = re.compile(r"(?i)\b(javascript|data|vbscript|file|https?|ftp|www)(:|\.)")


def _one_line(text: str, cap: int) -> str:
    t = " ".join(str(text).split())
    return t if len(t) <= cap else t[: max(1, cap - 1)] + "…"


def literal(text: object, cap: int = 120, table: bool = True) -> str:
    """`text` as a code span (backticks inside replaced, pipes escaped for a table cell)."""
    t = _one_line(text, cap).replace("`", "ˋ")
    if table:
        t = t.replace("|", "\\|")
    return f"`{t}`" if t else ""


def plain(text: object, cap: int = 200, table: bool = True) -> str:
    """`text` for running Markdown: HTML escaped, Markdown link and image syntax escaped,
    @mentions and #references broken, URL schemes defused, one line, capped."""
    t = _one_line(text, cap)
    t = t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    t = t.replace("[", "\\[").replace("]", "\\]").replace("!", "\\!")
    t = _MENTION.sub("@" + ZWSP, t)
    t = _REFERENCE.sub("#" + ZWSP, t)
    t = _SCHEMES.sub(lambda m: m.group(1) + ZWSP + m.group(2), t)
    if table:
        t = t.replace("|", "\\|")
    return t
