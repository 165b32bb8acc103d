"""Dependencies point one way (DEVELOPERS.md): db imports nothing of ours; collectors and
runners import db; dashboard imports db only and never streamlit outside its app pages;
parity wires everything."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OURS = {"db", "collectors", "runners", "dashboard", "parity"}
ALLOWED = {
    "db": set(),
    "collectors": {"db"},
    "runners": {"db"},
    "dashboard": {"db"},
    "parity": OURS,
}
GITHUB_CLIENTS = {"github", "requests", "urllib3", "httpx"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _modules():
    for package in ALLOWED:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield package, path


def test_packages_import_only_downstream():
    bad = []
    for package, path in _modules():
        for name in _imports(path) & OURS - {package}:
            if name not in ALLOWED[package]:
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "imports against the dependency direction:\n" + "\n".join(bad)


def test_streamlit_only_in_app_pages():
    bad = [str(p.relative_to(ROOT)) for _, p in _modules()
           if "streamlit" in _imports(p) and "app" not in p.relative_to(ROOT).parts]
    assert not bad, f"streamlit imported outside dashboard/app: {bad}"


def test_dashboard_never_talks_to_github():
    bad = [str(p.relative_to(ROOT)) for package, p in _modules()
           if package == "dashboard" and _imports(p) & GITHUB_CLIENTS]
    assert not bad, f"dashboard modules import an HTTP/GitHub client: {bad}"


def test_one_module_per_package_talks_to_github():
    for package in ("collectors", "runners"):
        users = [p.name for pkg, p in _modules() if pkg == package and _imports(p) & GITHUB_CLIENTS]
        assert len(users) <= 1, f"{package}: several modules talk to GitHub: {users}"


def test_no_utils_modules():
    assert not [p for _, p in _modules() if p.stem in ("utils", "helpers", "misc")]
