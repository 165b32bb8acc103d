"""`parity sync`: every source of `parity.toml`, once or on a schedule.

Each source syncs with its own checkpoint (the GitHub and Buildkite syncs keep theirs in the
store); one that fails is reported and recorded (`source_sync`) and the others go on. A
round logs one line per source. Rounds never overlap: a lock file held for the length of a
round (`fcntl.flock`, released by the kernel if the process dies) makes a second `parity
sync` skip its round rather than wait. A stop request (SIGTERM) ends the round after the
run or build in hand, whose transaction is complete either way."""
from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

from sqlalchemy import Engine

from parity.collectors import config as configs
from parity.collectors.settings import Secret, Settings, read_file_secret
from parity.db import store

OK, FAILED, STOPPED = "ok", "failed", "stopped"


@dataclass
class SourceOutcome:
    name: str
    kind: str
    target: str
    status: str  # ok | failed | stopped
    line: str  # what happened, in one line
    report: dict = field(default_factory=dict)


class Busy(Exception):
    """Another `parity sync` holds the lock of this store."""


def lock_path(engine: Engine, env: dict | None = None) -> Path:
    """`PARITY_SYNC_LOCK`, else beside a SQLite store, else one per server store in the
    temporary directory."""
    env = os.environ if env is None else env
    if env.get("PARITY_SYNC_LOCK"):
        return Path(env["PARITY_SYNC_LOCK"])
    url = engine.url
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return Path(f"{url.database}.sync.lock")
    key = hashlib.sha1(url.render_as_string(hide_password=True).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"parity-sync-{key}.lock"


@contextmanager
def round_lock(path: Path) -> Iterator[None]:
    """Hold the sync lock for one round, or raise `Busy` at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Busy(f"another parity sync holds {path}") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _token(source: configs.Source, fallback: Secret | None) -> Secret | None:
    return read_file_secret(source.token_file) if source.token_file else fallback


def sync_source(engine: Engine, source: configs.Source, settings: Settings, *,
                stop: threading.Event | None = None,
                echo: Callable[[str], None] | None = None,
                since: datetime | None = None) -> SourceOutcome:
    """Sync one source; never raises for what the source or its API did."""
    from parity.collectors.buildkite import BuildkiteError

    from parity.collectors.github import GitHubError

    try:
        if source.kind == "github":
            status, line, report = _github(engine, source, settings, stop, echo, since)
        elif source.kind == "buildkite":
            status, line, report = _buildkite(engine, source, settings, stop, echo, since)
        else:
            status, line, report = _feed(engine, source, settings, echo, since)
    except (GitHubError, BuildkiteError, OSError, configs.ConfigError) as exc:
        status, line, report = FAILED, _one_line(str(exc)), {}
    except Exception as exc:  # one broken source must not stop the others
        status, line, report = FAILED, _one_line(f"{type(exc).__name__}: {exc}"), {}
    outcome = SourceOutcome(source.name, source.kind, source.target, status, line, report)
    try:
        with engine.begin() as conn:
            store.record_source_sync(conn, source.name, source.kind, source.target, status, line)
    except Exception as exc:  # the store itself failed: say so, keep the outcome
        outcome.line += f" (its state could not be recorded: {type(exc).__name__})"
    return outcome


def _github(engine, source, settings, stop, echo, since):
    from parity.collectors.github import Client
    from parity.collectors.sync import GitHubSync, SyncOptions

    client = Client(settings, api_url=source.api_url, token=_token(source, settings.token))
    sync = GitHubSync(engine, client, settings, echo=echo)
    sync.stop = stop
    report = sync.run(SyncOptions(repo=source.repo, workflows=source.workflows,
                                  branch=source.branch, event=source.event, since=since,
                                  framework=source.framework, suites=source.suites))
    c = report.cost
    line = (f"{report.runs_synced} runs synced, {report.runs_already} already stored, "
            f"{report.runs_in_progress} in progress, {report.runs_failed} failed; "
            f"{report.records} records; {c['requests']} requests")
    status = STOPPED if report.stopped else (FAILED if report.runs_failed else OK)
    if report.errors:
        line += f"; first error: {report.errors[0]}"
    if report.stopped:
        line += f"; {report.stopped}"
    return status, _one_line(client.redact(line)), report.as_dict()


def _buildkite(engine, source, settings, stop, echo, since):
    from parity.collectors.buildkite import BuildkiteError, Client
    from parity.collectors.buildkite_sync import BuildkiteOptions, BuildkiteSync

    token = _token(source, settings.buildkite_token)
    if token is None:
        raise BuildkiteError("no Buildkite API token: set BUILDKITE_API_TOKEN or the source's "
                             "token_file")
    client = Client(settings, token, api_url=source.api_url)
    sync = BuildkiteSync(engine, client, settings, echo=echo)
    sync.stop = stop
    report = sync.run(BuildkiteOptions(org=source.org, pipelines=source.pipelines,
                                       branch=source.branch, framework=source.framework,
                                       since=since, suites=source.suites))
    c = report.cost
    line = (f"{report.builds_synced} builds synced, {report.builds_already} already stored, "
            f"{report.builds_open} still running, {report.builds_failed} failed; "
            f"{report.records} records; {c['requests']} requests")
    failed = report.builds_failed or report.failed_pipelines
    status = STOPPED if report.stopped else (FAILED if failed else OK)
    if report.errors:
        line += f"; first error: {report.errors[0]}"
    if report.stopped:
        line += f"; {report.stopped}"
    return status, _one_line(client.redact(line)), report.as_dict()


def _feed(engine, source, settings, echo, since):
    from parity.collectors.feeds import FeedOptions, FeedSync
    from parity.collectors.github import Client

    client = Client(settings, api_url=source.api_url, token=_token(source, settings.token))
    report = FeedSync(engine, client, settings, echo=echo).run(FeedOptions(
        kind=source.kind, repo=source.repo, releases=source.releases, path=source.path,
        since=since))
    c = report.cost
    line = (f"{report.files_read} files read, {report.files_known} already read; "
            f"{report.records} records; {c['requests']} requests ({c['not_modified']} "
            f"answered 304)")
    status = STOPPED if report.stopped else (FAILED if report.errors else OK)
    if report.errors:
        line += f"; first error: {report.errors[0]}"
    if report.rejected:
        line += f"; {len(report.rejected)} files or lines rejected, first: {report.rejected[0]}"
    if report.stopped:
        line += f"; {report.stopped}"
    return status, _one_line(client.redact(line)), report.as_dict()


def _one_line(text: str) -> str:
    return " ".join(text.split())[:1000]


def sync_round(engine: Engine, config: configs.Config, settings: Settings, *,
               names: tuple[str, ...] = (), stop: threading.Event | None = None,
               log: Callable[[str], None] = print,
               echo: Callable[[str], None] | None = None,
               since: datetime | None = None) -> list[SourceOutcome]:
    """One round over the sources (all, or those `names`), logging a line per source."""
    chosen = [config.source(n) for n in names] if names else list(config.sources)
    outcomes = []
    for source in chosen:
        if stop is not None and stop.is_set():
            break
        out = sync_source(engine, source, settings, stop=stop, echo=echo, since=since)
        outcomes.append(out)
        log(f"{_now()} {out.name} ({out.kind} {out.target}): {out.status}: {out.line}")
    return outcomes


def every(engine: Engine, config_path: str, settings: Settings, interval_s: float,
          stop: threading.Event, *, names: tuple[str, ...] = (),
          log: Callable[[str], None] = print,
          after_round: Callable[[configs.Config], None] | None = None) -> int:
    """Rounds every `interval_s` seconds until `stop` is set; the sources file is read
    again each round, so an edit applies without a restart. Returns 0."""
    lock = lock_path(engine)
    while not stop.is_set():
        started = time.monotonic()
        try:
            config = configs.load(config_path)
            with round_lock(lock):
                sync_round(engine, config, settings, names=names, stop=stop, log=log)
                if after_round is not None and not stop.is_set():
                    after_round(config)
        except Busy as exc:
            log(f"{_now()} skipping this round: {exc}")
        except configs.ConfigError as exc:
            log(f"{_now()} skipping this round: {exc}")
        _pause(stop, max(0.0, interval_s - (time.monotonic() - started)))
    log(f"{_now()} stopped")
    return 0


def _pause(stop: threading.Event, seconds: float) -> None:
    """Sleep until the next round or a stop request. Short sleeps rather than `stop.wait`:
    a signal handler that sets the event while the main thread waits on it can deadlock."""
    end = time.monotonic() + seconds
    while not stop.is_set() and time.monotonic() < end:
        time.sleep(min(0.5, max(0.0, end - time.monotonic())))


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_interval(text: str) -> float:
    """`30m`, `1h`, `90s` or plain seconds, as seconds (at least one minute)."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    t = text.strip().lower()
    try:
        value = float(t[:-1]) * units[t[-1]] if t and t[-1] in units else float(t)
    except (ValueError, KeyError):
        raise ValueError(f"not an interval: {text!r} (use e.g. 30m, 1h, 900)") from None
    if value < 60:
        raise ValueError(f"an interval under a minute ({text!r}) would spend the rate limits")
    return value
