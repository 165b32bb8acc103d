"""Runs a shipped, parameterised notebook (the weekly report) with nbclient: the cell tagged
`parameters` keeps its defaults and a cell tagged `injected-parameters` is added after it
with the caller's values, as papermill does, so the executed notebook shows both."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

WEEKLY = Path(__file__).with_name("weekly_report.ipynb")


def inject(nb: nbformat.NotebookNode, params: dict[str, Any]) -> nbformat.NotebookNode:
    """`nb` with a cell setting `params` after its `parameters` cell (or first)."""
    source = "\n".join(f"{k} = {v!r}" for k, v in params.items())
    cell = nbformat.v4.new_code_cell(source, id="injected-parameters")
    cell.metadata["tags"] = ["injected-parameters"]
    at = next((i + 1 for i, c in enumerate(nb.cells)
               if "parameters" in c.get("metadata", {}).get("tags", [])), 0)
    nb.cells = [c for c in nb.cells if "injected-parameters" not in
                c.get("metadata", {}).get("tags", [])]
    nb.cells.insert(at, cell)
    return nb


def run(path: Path, params: dict[str, Any], cwd: Path, timeout: int = 600,
        save_to: Path | None = None) -> nbformat.NotebookNode:
    """Execute the notebook at `path` with `params` in `cwd`; save it when asked."""
    nb = inject(nbformat.read(path, as_version=4), params)
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(cwd)}}).execute()
    if save_to is not None:
        nbformat.write(nb, save_to)
    return nb


def weekly(out: Path, *, db_url: str | None = None, week: str | None = None,
           since: str | None = None, until: str | None = None,
           framework: list[str] | None = None, formats: str = "html,md,csv,json") -> Path:
    """Run the weekly report notebook into `out`; returns the executed notebook's path."""
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    params = {"db_url": db_url, "week": week, "since": since, "until": until,
              "framework": framework, "out": ".", "formats": formats}  # run inside `out`
    target = out / "report.ipynb"
    run(WEEKLY, params, out, save_to=target)
    return target
