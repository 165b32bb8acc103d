"""Shared fixtures: real SQLite and real PostgreSQL stores, and the real samples in ../shared."""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from parity.db.engine import make_engine

from tests.samples import SHARED, shared

REAL = SHARED / "fixtures" / "real"


@pytest.fixture
def real() -> Path:
    return shared(REAL, "real samples live beside the checkout")


@pytest.fixture
def sqlite_engine(tmp_path):
    engine = make_engine(tmp_path / "parity.db")
    yield engine
    engine.dispose()


def _pg_base_url() -> str | None:
    url = os.environ.get("PARITY_TEST_PG_URL")
    if not url:
        if os.environ.get("PARITY_REQUIRE_PG"):
            pytest.fail("PARITY_REQUIRE_PG is set but PARITY_TEST_PG_URL is not")
        pytest.skip("PostgreSQL tests need PARITY_TEST_PG_URL (CI sets it)")
    return url


@pytest.fixture
def pg_engine():
    """A scratch database on the PostgreSQL server, dropped afterwards."""
    base = make_url(_pg_base_url())
    name = f"parity_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # pragma: no cover - depends on the machine
        admin.dispose()
        if os.environ.get("PARITY_REQUIRE_PG"):
            raise
        pytest.skip(f"PostgreSQL at PARITY_TEST_PG_URL is not usable: {exc}")
    engine = make_engine(base.set(database=name).render_as_string(hide_password=False))
    yield engine
    engine.dispose()
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request):
    """Every store test runs on both backends."""
    return request.getfixturevalue("sqlite_engine" if request.param == "sqlite" else "pg_engine")


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory) -> Path:
    """A 30-night demo store with about 150,000 results (a few hundred real-looking tests
    per lane), built once per test session."""
    from datetime import date

    from parity.collectors import demo

    path = tmp_path_factory.mktemp("demo") / "demo.db"
    engine = make_engine(path)
    demo.build(engine, days=30, end=date(2026, 11, 28), sizes=demo.plan(30, 150_000))
    engine.dispose()
    return path


CHROMIUM = os.environ.get("PARITY_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium driven by Playwright (no browser download: its own binary)."""
    why = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = "playwright is not installed (pip install -e '.[test]')"
    if why is None and not Path(CHROMIUM).exists():
        why = f"no chromium at {CHROMIUM} (apt-get install chromium, or set PARITY_CHROMIUM)"
    if why:
        if os.environ.get("PARITY_REQUIRE_BROWSER"):
            pytest.fail(f"PARITY_REQUIRE_BROWSER is set but {why}")
        pytest.skip(why)
    from benchmarks.app import BROWSER_ARGS  # the load benchmark's: no omnibox popup per page

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        yield b
        b.close()
