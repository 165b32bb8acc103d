"""What a store holds, in numbers: the data behind `parity status`."""
from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, func, select

from parity.db.migrate import current_revision
from parity.db.models import (
    AccuracyMetric,
    Artifact,
    BenchmarkMetric,
    CiJob,
    CiRun,
    Hardware,
    IngestError,
    TestCase,
    TestResult,
)


def inventory(engine: Engine) -> dict[str, Any]:
    """Counts of every kind of row, the hardware seen and the last ingest time."""
    if current_revision(engine) is None:
        return {"schema": None, "empty": True}
    counts = {}
    with engine.connect() as conn:
        for label, model in (("runs", CiRun), ("jobs", CiJob), ("artifacts", Artifact),
                             ("tests", TestCase), ("test_results", TestResult),
                             ("benchmark_rows", BenchmarkMetric),
                             ("accuracy_rows", AccuracyMetric), ("ingest_errors", IngestError)):
            counts[label] = conn.execute(select(func.count()).select_from(model)).scalar_one()
        hardware = [
            {"vendor": r.vendor, "sku": r.sku, "arch": r.arch, "gpu_count": r.gpu_count,
             "raw_name": r.raw_name, "mapped": bool(r.mapped), "jobs": r.jobs}
            for r in conn.execute(
                select(Hardware.vendor, Hardware.sku, Hardware.arch, Hardware.gpu_count,
                       Hardware.raw_name, Hardware.mapped, func.count(CiJob.id).label("jobs"))
                .join(CiJob, CiJob.hardware_id == Hardware.id, isouter=True)
                .group_by(Hardware.id).order_by(Hardware.vendor, Hardware.sku, Hardware.arch))
        ]
        last = conn.execute(select(func.max(Artifact.ingested_at))).scalar()
        errors = [
            {"path": r.path, "reason": r.reason, "at": r.at.isoformat(timespec="seconds")}
            for r in conn.execute(select(IngestError.path, IngestError.reason, IngestError.at)
                                  .order_by(IngestError.at.desc()).limit(10))
        ]
    return {"schema": current_revision(engine), "empty": counts["jobs"] == 0, **counts,
            "hardware": hardware, "last_ingest": last.isoformat(timespec="seconds") if last else None,
            "recent_errors": errors}
