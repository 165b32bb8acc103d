"""`parity collect runners`: a snapshot of a repository's or organisation's self-hosted
runners (name, labels, online/offline, busy, the hardware their labels imply), so the
dashboard can show fleet health per vendor pool over time.

GitHub-hosted larger runners, which the organisation list also returns, are left out: a
runner counts only when it carries the `self-hosted` label."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

from sqlalchemy import Engine

from parity.collectors.github import Client
from parity.collectors.writer import Writer
from parity.db import store
from parity.db.hardware import vocabulary
from parity.db.migrate import upgrade


@dataclass
class FleetReport:
    scope: str
    seen_at: str
    runners: int = 0
    online: int = 0
    busy: int = 0
    offline: int = 0
    hosted_skipped: int = 0
    by_hardware: dict[str, int] = field(default_factory=dict)
    cost: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def collect_runners(engine: Engine, client: Client, *, repo: str | None = None,
                    org: str | None = None, seen_at: datetime | None = None) -> FleetReport:
    """Store one snapshot of every self-hosted runner of `repo` (OWNER/NAME) or `org`."""
    if bool(repo) == bool(org):
        raise ValueError("give exactly one of repo and org")
    upgrade(engine)
    scope = repo if repo else f"org:{org}"
    path = f"/repos/{repo}/actions/runners" if repo else f"/orgs/{org}/actions/runners"
    seen = (seen_at or datetime.now(timezone.utc)).replace(tzinfo=None, microsecond=0)
    report = FleetReport(scope=scope, seen_at=seen.isoformat())
    runners = client.all(path, "runners")
    writer = Writer(vocabulary())
    rows = []
    with engine.begin() as conn:
        for r in runners:
            labels = [str(lbl.get("name", "")) for lbl in r.get("labels") or [] if isinstance(lbl, dict)]
            if "self-hosted" not in {x.lower() for x in labels}:
                report.hosted_skipped += 1
                continue
            hw_pk = writer.hardware_pk(conn, labels, str(r.get("name") or ""))
            hw = writer.vocab.identify_any([*labels, r.get("name")])
            key = hw.sku or hw.arch or "unmapped"
            report.by_hardware[key] = report.by_hardware.get(key, 0) + 1
            status = str(r.get("status") or "offline")
            busy = bool(r.get("busy")) and status == "online"
            report.runners += 1
            report.offline += status != "online"
            report.busy += busy
            report.online += status == "online" and not busy
            rows.append(dict(scope=scope, runner_id=str(r.get("id")), name=str(r.get("name") or "")[:200],
                             labels=json.dumps(labels), os=str(r.get("os") or "")[:32],
                             status=status[:16], busy=busy, hardware_id=hw_pk, seen_at=seen))
        store.add_runner_snapshots(conn, rows)
    report.cost = client.cost.as_dict()
    return report
