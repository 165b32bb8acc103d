"""Dependencies point one way (DEVELOPERS.md): parity.db imports nothing of ours;
parity.collectors and parity.runners import parity.db; parity.dashboard imports parity.db only
and never streamlit outside its app pages; the parity command (parity.cli) wires everything.
Everything is imported under the one `parity` namespace."""
from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# subpackage of `parity` -> the folder it lives in
FOLDERS = {"parity.db": "db", "parity.collectors": "collectors", "parity.runners": "runners",
           "parity.dashboard": "dashboard", "parity.cli": "parity"}
OURS = set(FOLDERS)
ALLOWED = {
    "parity.db": set(),
    "parity.collectors": {"parity.db"},
    "parity.runners": {"parity.db"},
    "parity.dashboard": {"parity.db"},
    "parity.cli": OURS,
}
GITHUB_CLIENTS = {"github", "requests", "urllib3", "httpx"}
BARE = {"db", "collectors", "runners", "dashboard"}  # names other projects own on the index


def _modules_named(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            if node.module == "parity":
                names |= {f"parity.{a.name}" for a in node.names}
    return names


def _imports(path: Path) -> set[str]:
    """Top-level names, with `parity.X` counted as the subpackage `parity.X`."""
    out = set()
    for name in _modules_named(path):
        bits = name.split(".")
        out.add(".".join(bits[:2]) if bits[0] == "parity" and len(bits) > 1 else bits[0])
    return out


def _modules():
    for package, folder in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield package, path


def test_packages_import_only_downstream():
    bad = []
    for package, path in _modules():
        for name in _imports(path) & OURS - {package}:
            if name not in ALLOWED[package]:
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "imports against the dependency direction:\n" + "\n".join(bad)


def test_nothing_imports_a_bare_top_level_name():
    """`import db` would pick up whichever `db` is on sys.path: ours live under `parity`."""
    sources = [p for d in ("db", "collectors", "runners", "dashboard", "parity", "tests",
                           "benchmarks") for p in (ROOT / d).rglob("*.py")]
    bad = [f"{p.relative_to(ROOT)}: {name}" for p in sources
           for name in _imports(p) & BARE]
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        bad += [f"{nb.name}: {name}" for name in _imports_in(code) & BARE]
    assert sources and not bad, "bare imports of our subpackages:\n" + "\n".join(bad)


def _imports_in(code: str) -> set[str]:
    tmp = ast.parse(code)
    return {a.name.split(".")[0] for n in ast.walk(tmp) if isinstance(n, ast.Import)
            for a in n.names} | {n.module.split(".")[0] for n in ast.walk(tmp)
                                 if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}


def test_streamlit_only_in_app_pages():
    bad = [str(p.relative_to(ROOT)) for _, p in _modules()
           if "streamlit" in _imports(p) and "app" not in p.relative_to(ROOT).parts]
    assert not bad, f"streamlit imported outside dashboard/app: {bad}"


def test_dashboard_never_talks_to_github():
    bad = [str(p.relative_to(ROOT)) for package, p in _modules()
           if package == "parity.dashboard" and _imports(p) & GITHUB_CLIENTS]
    assert not bad, f"dashboard modules import an HTTP/GitHub client: {bad}"


# the one module per package that may hold an HTTP client, for each CI host it talks to
TALKERS = {"parity.collectors": {"github.py": "github", "buildkite.py": "buildkite",
                                  "webhooks.py": "chat"},
           "parity.runners": {"github.py": "github"}}


def test_one_module_per_package_talks_to_each_ci_host():
    """GitHub through `github.py`, Buildkite through `buildkite.py`; no other module of a
    package imports an HTTP client, and neither client module names the other's host."""
    for package, talkers in TALKERS.items():
        users = {p.name for pkg, p in _modules() if pkg == package and _imports(p) & GITHUB_CLIENTS}
        assert users <= set(talkers), f"{package}: modules that talk HTTP: {sorted(users)}"
    folder = ROOT / "collectors"
    assert "github.com" not in (folder / "buildkite.py").read_text(encoding="utf-8")
    assert "buildkite.com" not in (folder / "github.py").read_text(encoding="utf-8")


def test_no_utils_modules():
    assert not [p for _, p in _modules() if p.stem in ("utils", "helpers", "misc")]


def test_the_rules_see_the_imports():
    """The checks above are not vacuous: they see a known edge and a known violation."""
    assert "parity.db" in _imports(ROOT / "collectors" / "writer.py")
    assert "parity.dashboard" in _imports(ROOT / "parity" / "cli" / "report.py")
    assert _imports_in("import db.models as m\nfrom dashboard import frames") == {"db", "dashboard"}


def test_every_setting_is_listed_in_env_example():
    """Settings come from `PARITY_*` variables, and `.env.example` lists them all."""
    import re

    listed = set(re.findall(r"^(PARITY_[A-Z0-9_]+)=", (ROOT / ".env.example").read_text(),
                            re.M))
    used = {name for _, p in _modules()
            for name in re.findall(r"[\"'](PARITY_[A-Z0-9_]+)[\"']", p.read_text(encoding="utf-8"))}
    assert used and not used - listed, f"not in .env.example: {sorted(used - listed)}"
