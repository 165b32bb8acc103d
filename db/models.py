"""The normalised model every collector writes into.

Natural keys are unique constraints so that every ingest is an upsert and re-running it
changes nothing. Text columns that take part in a natural key default to '' rather than
NULL, because NULLs never collide in a unique constraint. Times are naive UTC.
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


# 64-bit ids: BIGINT on PostgreSQL, INTEGER (the rowid itself) on SQLite.
ID = BigInteger().with_variant(Integer, "sqlite")


class Hardware(Base):
    """A GPU platform: vendor, SKU, architecture and GPU count. Unmapped names keep
    their raw text in `raw_name` with `mapped` false; mapped rows have raw_name ''."""

    __tablename__ = "hardware"
    __table_args__ = (UniqueConstraint("vendor", "sku", "arch", "gpu_count", "raw_name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    vendor: Mapped[str] = mapped_column(String(16))  # amd | nvidia | unknown
    sku: Mapped[str] = mapped_column(String(32), default="")
    arch: Mapped[str] = mapped_column(String(32), default="")
    gpu_count: Mapped[int] = mapped_column(Integer, default=0)
    raw_name: Mapped[str] = mapped_column(String(200), default="")
    mapped: Mapped[bool] = mapped_column(Boolean, default=True)


class Framework(Base):
    """What was tested: vllm, sglang, pytorch or other, with versions when known."""

    __tablename__ = "framework"
    __table_args__ = (
        UniqueConstraint("name", "version", "image", "rocm_version", "cuda_version"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(32))
    version: Mapped[str] = mapped_column(String(100), default="")
    image: Mapped[str] = mapped_column(String(300), default="")
    rocm_version: Mapped[str] = mapped_column(String(32), default="")
    cuda_version: Mapped[str] = mapped_column(String(32), default="")


class CiRun(Base):
    """One attempt of one CI run (GitHub Actions run, Buildkite build, or a local ingest)."""

    __tablename__ = "ci_run"
    __table_args__ = (UniqueConstraint("ci_system", "repository", "run_id", "attempt"),
                      Index("ix_ci_run_created", "created_at"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ci_system: Mapped[str] = mapped_column(String(32))  # github | buildkite | local | demo
    repository: Mapped[str] = mapped_column(String(200), default="")
    workflow: Mapped[str] = mapped_column(String(300), default="")
    run_id: Mapped[str] = mapped_column(String(64))
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    head_sha: Mapped[str] = mapped_column(String(64), default="")
    branch: Mapped[str] = mapped_column(String(200), default="")
    event: Mapped[str] = mapped_column(String(64), default="")
    conclusion: Mapped[str] = mapped_column(String(32), default="")
    url: Mapped[str] = mapped_column(String(500), default="")
    created_at: Mapped[datetime | None] = mapped_column(DateTime)
    started_at: Mapped[datetime | None] = mapped_column(DateTime)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime)
    # why the run is not the project's own CI (a fork's pull request, a pull_request_target
    # or workflow_run chain, a branch the source does not follow); '' when it is
    untrusted: Mapped[str] = mapped_column(String(64), default="")


class CiJob(Base):
    """One job of a run, with the runner that executed it and the hardware that implies.
    Queue time is `started_at - created_at`."""

    __tablename__ = "ci_job"
    __table_args__ = (
        UniqueConstraint("run_pk", "job_id"),
        Index("ix_ci_job_hw_fw", "hardware_id", "framework_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_pk: Mapped[int] = mapped_column(ForeignKey("ci_run.id", ondelete="CASCADE"))
    job_id: Mapped[str] = mapped_column(String(100))
    name: Mapped[str] = mapped_column(String(500), default="")
    suite: Mapped[str] = mapped_column(String(200), default="")
    runner_labels: Mapped[str] = mapped_column(Text, default="[]")  # JSON list
    runner_name: Mapped[str] = mapped_column(String(200), default="")
    runner_group: Mapped[str] = mapped_column(String(200), default="")
    hardware_id: Mapped[int | None] = mapped_column(ForeignKey("hardware.id"))
    framework_id: Mapped[int | None] = mapped_column(ForeignKey("framework.id"))
    conclusion: Mapped[str] = mapped_column(String(32), default="")
    url: Mapped[str] = mapped_column(String(500), default="")
    created_at: Mapped[datetime | None] = mapped_column(DateTime)
    started_at: Mapped[datetime | None] = mapped_column(DateTime)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime)
    # when retention dropped this job's plain passed rows (`db.retention`): its vector is
    # then the record of them, and a rebuild keeps it instead of deriving it again
    raw_pruned_at: Mapped[datetime | None] = mapped_column(DateTime)
    # how the job ended where the CI says more than a conclusion (Buildkite): the process
    # exit status, why the agent stopped it (agent_stop, cancel, ...: an infrastructure kill
    # rather than a test failure), whether its failure was allowed (soft fail), and the job
    # that retried it (set on every attempt but the final one)
    exit_status: Mapped[int | None] = mapped_column(Integer)
    signal_reason: Mapped[str] = mapped_column(String(32), default="")
    soft_failed: Mapped[bool] = mapped_column(Boolean, default=False)
    retried_in: Mapped[str] = mapped_column(String(100), default="")


class Artifact(Base):
    """One result file as ingested: where it came from, its digest, and how it was read.
    (job, sha256) is unique, so the same bytes are never ingested twice for a job."""

    __tablename__ = "artifact"
    __table_args__ = (UniqueConstraint("job_pk", "sha256"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_pk: Mapped[int] = mapped_column(ForeignKey("ci_job.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(300), default="")  # CI artifact name
    path: Mapped[str] = mapped_column(Text)  # file path (inside the archive when zipped)
    sha256: Mapped[str] = mapped_column(String(64))
    size_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    format: Mapped[str] = mapped_column(String(32))
    parser_version: Mapped[str] = mapped_column(String(16))
    records: Mapped[int] = mapped_column(Integer, default=0)
    ingested_at: Mapped[datetime] = mapped_column(DateTime)


# tests named with a vendor word: their parity id is not their own id
ALIAS = "parity_id <> id"
# the rows a history view looks for (a partial index of test_result and its readers)
NOTABLE = "outcome IN ('failed', 'error') OR rerun_count > 0"


class TestCase(Base):
    """A test's identity, interned once. `id` is a 63-bit hash of `test_key` and `parity_id`
    one of `parity_key`, so bulk ingest needs no lookup round trip and the cross-vendor join
    runs on an integer index. (On SQLite `id` is the rowid.)"""

    __tablename__ = "test_case"
    __table_args__ = (Index("ix_test_case_parity_id", "parity_id"),
                      # the few tests whose parity key differs from their key (vendor names),
                      # with their parity id: the index alone answers their read (0017)
                      Index("ix_test_case_alias", "id", "parity_id", sqlite_where=text(ALIAS),
                            postgresql_where=text(ALIAS)))

    id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=False)
    test_key: Mapped[str] = mapped_column(Text)
    parity_id: Mapped[int] = mapped_column(BigInteger)
    parity_key: Mapped[str] = mapped_column(Text)
    file: Mapped[str] = mapped_column(Text, default="")
    classname: Mapped[str] = mapped_column(Text, default="")
    name: Mapped[str] = mapped_column(Text, default="")
    params: Mapped[str | None] = mapped_column(Text)
    group_name: Mapped[str] = mapped_column(Text, default="")  # file, else classname



# `skip_category` values that say a test cannot run on one vendor's stack: the parity views
# count such a skip on AMD against AMD (collectors classify, dashboard counts)
VENDOR_GATED = frozenset({"vendor_amd", "vendor_nvidia"})


class TestResult(Base):
    """One execution of one test in one job (after de-duplication of the report).

    Keyed (job, test, artifact, run day): an artifact holds each test once and is ingested
    once; the run's day, a function of the job, makes the key carry the time column that
    PostgreSQL partitions the table by (one partition a month).
    On SQLite the table is clustered on that key (WITHOUT ROWID), so a job's results sit
    together, the views' reads by job need no second index, and a bulk insert in key order
    appends to a single B-tree.

    `ix_test_result_notable` is a partial index of the few rows the history views look for
    (failed, errored or rerun), in job order so that ingest appends to it: finding the
    failures of a window reads those rows, not every result of the window."""

    __tablename__ = "test_result"
    __table_args__ = (Index("ix_test_result_notable", "job_pk", "test_pk",
                            sqlite_where=text(NOTABLE), postgresql_where=text(NOTABLE)),
                      {"sqlite_with_rowid": False, "postgresql_partition_by": "RANGE (run_day)"})

    job_pk: Mapped[int] = mapped_column(ForeignKey("ci_job.id", ondelete="CASCADE"),
                                        primary_key=True)
    test_pk: Mapped[int] = mapped_column(ID, ForeignKey("test_case.id"), primary_key=True)
    artifact_pk: Mapped[int] = mapped_column(ForeignKey("artifact.id", ondelete="CASCADE"),
                                             primary_key=True)
    # the run's UTC day, YYYYMMDD (0: no time): the time column in the key, by which
    # PostgreSQL partitions the table by month (`db.partitions`)
    run_day: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    outcome: Mapped[str] = mapped_column(String(16))  # passed failed error skipped xfailed xpassed
    phase: Mapped[str | None] = mapped_column(String(16))
    duration_s: Mapped[float | None] = mapped_column(Float)
    rerun_count: Mapped[int] = mapped_column(Integer, default=0)
    message: Mapped[str | None] = mapped_column(Text)
    skip_category: Mapped[str | None] = mapped_column(String(32))


class TestSet(Base):
    """A distinct set of test ids (int64 little-endian, sorted), stored once however many
    jobs ran exactly those tests: a lane's shards run the same tests night after night, and
    the ids were most of the bytes a history view read (`job_outcome` points here).
    `digest` is a hash of the ids' bytes, which finds a set again at ingest."""

    __tablename__ = "test_set"
    __table_args__ = (UniqueConstraint("digest"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    digest: Mapped[bytes] = mapped_column(LargeBinary)  # blake2b-128 of test_ids
    tests: Mapped[int] = mapped_column(Integer, default=0)
    test_ids: Mapped[bytes] = mapped_column(LargeBinary)


class JobOutcome(Base):
    """Each job's tests as one row of parallel arrays (`db.vectors`): its set of test ids
    (`test_set`), each one's worst outcome, its skip category and whether it was rerun.
    Written with the job's results, in the same transaction, so it is never out of step
    with them; `parity db rebuild-state` derives it again from the raw rows. The
    latest-run views read these few rows instead of every result of the runs they
    compare."""

    __tablename__ = "job_outcome"
    __table_args__ = (Index("ix_job_outcome_set", "set_pk"),)

    job_pk: Mapped[int] = mapped_column(ForeignKey("ci_job.id", ondelete="CASCADE"),
                                        primary_key=True)
    tests: Mapped[int] = mapped_column(Integer, default=0)
    set_pk: Mapped[int] = mapped_column(ForeignKey("test_set.id"))
    outcomes: Mapped[bytes] = mapped_column(LargeBinary)  # uint8 codes, db.vectors.OUTCOMES
    skips: Mapped[bytes] = mapped_column(LargeBinary)  # uint8 codes, db.vectors.SKIPS
    reruns: Mapped[bytes] = mapped_column(LargeBinary)  # uint8, 1 where a row was rerun


class JobBenchmark(Base):
    """Each job's benchmark rows as one row of parallel arrays, in the rows' id order: their
    ids, series (0: none), artifacts and record numbers (int64 little-endian) and values
    (float64, NaN where none). Written with the rows, in the same transaction; `parity db
    rebuild-state` derives it again from them. A view's window of benchmark values is read
    from a few hundred of these instead of tens of thousands of rows, whose per-value
    objects were most of that read (`dashboard.tables`)."""

    __tablename__ = "job_benchmark"

    job_pk: Mapped[int] = mapped_column(ForeignKey("ci_job.id", ondelete="CASCADE"),
                                        primary_key=True)
    rows: Mapped[int] = mapped_column(Integer, default=0)
    ids: Mapped[bytes] = mapped_column(LargeBinary)
    series: Mapped[bytes] = mapped_column(LargeBinary)
    artifacts: Mapped[bytes] = mapped_column(LargeBinary)
    records: Mapped[bytes] = mapped_column(LargeBinary)
    values: Mapped[bytes] = mapped_column(LargeBinary)


class StreakCutoff(Base):
    """The one time up to which `lane_streak` holds the failure streaks (the trusted runs
    created before it), kept `db.streaks.DAYS` days behind the newest trusted run. A view
    follows a streak run by run from this time on and takes what came before from
    `lane_streak`. No row: the streaks are not derived yet (`db.streaks.complete`)."""

    __tablename__ = "streak_cutoff"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)  # always 1
    cutoff: Mapped[datetime] = mapped_column(DateTime)


class LaneStreak(Base):
    """Each lane's tests that were failing at the cutoff (`streak_cutoff`), as one row of
    parallel arrays (little-endian int64), in parity id order: their parity ids, in how
    many of the lane's runs before the cutoff each had been failing since it last passed
    (`tails`), and when the first of those runs was created (`since`, microseconds since
    1970). A lane is what the views call one: a framework's name, a hardware's label
    (`db.streaks.LANE`) and a suite; a test not in its arrays was not failing there. One
    row a lane, read whole: a view reads a dozen rows, not thousands. Kept by `db.streaks`
    in the transaction that writes what it counts; `parity db rebuild-state` derives it
    again from the per-job outcome vectors."""

    __tablename__ = "lane_streak"

    framework: Mapped[str] = mapped_column(String(100), primary_key=True)
    hardware: Mapped[str] = mapped_column(String(200), primary_key=True)
    suite: Mapped[str] = mapped_column(String(200), primary_key=True)
    tests: Mapped[int] = mapped_column(Integer)
    ids: Mapped[bytes] = mapped_column(LargeBinary)
    tails: Mapped[bytes] = mapped_column(LargeBinary)
    since: Mapped[bytes] = mapped_column(LargeBinary)


class _Counts:
    """Test counts by outcome, the rerun-passed (`flaky`) and vendor-gated skips, and the
    summed duration: a job's per group (`TestSummary`) and over all groups (`JobSummary`)."""

    total: Mapped[int] = mapped_column(Integer, default=0)
    passed: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[int] = mapped_column(Integer, default=0)
    skipped: Mapped[int] = mapped_column(Integer, default=0)
    xfailed: Mapped[int] = mapped_column(Integer, default=0)
    xpassed: Mapped[int] = mapped_column(Integer, default=0)
    flaky: Mapped[int] = mapped_column(Integer, default=0)
    vendor_skipped: Mapped[int] = mapped_column(Integer, default=0)
    duration_s: Mapped[float] = mapped_column(Float, default=0.0)


class TestSummary(_Counts, Base):
    """Counts per (job, test group), written at ingest so that views never scan raw results.
    Groups named `log:…` come from pytest console totals rather than from test rows."""

    __tablename__ = "test_summary"

    job_pk: Mapped[int] = mapped_column(
        ForeignKey("ci_job.id", ondelete="CASCADE"), primary_key=True
    )
    group_name: Mapped[str] = mapped_column(Text, primary_key=True)


class JobSummary(_Counts, Base):
    """A job's counts over all its test groups (the sum of its `test_summary` rows), kept in
    the same transaction: every view reads the jobs of its window with their counts, and
    summing a hundred groups per job on each read cost more than the rest of the read."""

    __tablename__ = "job_summary"

    job_pk: Mapped[int] = mapped_column(
        ForeignKey("ci_job.id", ondelete="CASCADE"), primary_key=True
    )


# the columns a benchmark row is matched and labelled on, which its series holds once
SERIES_DIMENSIONS = ("benchmark", "model", "metric", "statistic", "unit", "direction",
                     "config_key", "precision", "tp", "ep", "dp", "pp", "isl", "osl",
                     "concurrency", "request_rate", "batch_size")


class _SeriesDimensions:
    """The `SERIES_DIMENSIONS` columns: a benchmark row's and its series' (`direction` is
    higher, lower or none)."""

    benchmark: Mapped[str] = mapped_column(String(200))
    model: Mapped[str] = mapped_column(String(300), default="")
    metric: Mapped[str] = mapped_column(String(200))
    statistic: Mapped[str] = mapped_column(String(16), default="")
    unit: Mapped[str] = mapped_column(String(16), default="")
    direction: Mapped[str] = mapped_column(String(8), default="none")
    config_key: Mapped[str] = mapped_column(String(16), default="")
    precision: Mapped[str] = mapped_column(String(32), default="")
    tp: Mapped[int | None] = mapped_column(Integer)
    ep: Mapped[int | None] = mapped_column(Integer)
    dp: Mapped[int | None] = mapped_column(Integer)
    pp: Mapped[int | None] = mapped_column(Integer)
    isl: Mapped[int | None] = mapped_column(Integer)
    osl: Mapped[int | None] = mapped_column(Integer)
    concurrency: Mapped[int | None] = mapped_column(Integer)
    request_rate: Mapped[float | None] = mapped_column(Float)
    batch_size: Mapped[int | None] = mapped_column(Integer)


class BenchmarkSeries(_SeriesDimensions, Base):
    """One distinct combination of a benchmark row's dimensions (`SERIES_DIMENSIONS`), by
    `key`, a hash of their values (`db.store.series_key`). Every row names its series
    (`benchmark_metric.series_pk`), so a read of a window's tens of thousands of rows
    carries numbers only and the few dozen series' texts once."""

    __tablename__ = "benchmark_series"
    # the rows' series found by their matching texts (0014 fills the rows stored before it)
    __table_args__ = (Index("ix_benchmark_series_dims", "benchmark", "model", "metric",
                            "config_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(40), unique=True)


class BenchmarkMetric(_SeriesDimensions, Base):
    """One performance metric value with the configuration it was measured at.
    `config` holds every dimension as JSON; the common ones are columns for matching, and
    `series_pk` names the row's series (the same columns, stored once)."""

    __tablename__ = "benchmark_metric"
    __table_args__ = (
        UniqueConstraint("artifact_pk", "record_no", "metric"),
        # the window's rows are read for their numbers by job: answered by the index alone
        Index("ix_benchmark_job_values", "job_pk", "series_pk", "artifact_pk", "record_no",
              "value"),
        Index("ix_benchmark_series", "benchmark", "model", "metric", "config_key"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_pk: Mapped[int] = mapped_column(ForeignKey("ci_job.id", ondelete="CASCADE"))
    artifact_pk: Mapped[int] = mapped_column(ForeignKey("artifact.id", ondelete="CASCADE"))
    record_no: Mapped[int] = mapped_column(Integer, default=0)
    value: Mapped[float | None] = mapped_column(Float)
    samples: Mapped[str | None] = mapped_column(Text)  # JSON list when several repetitions
    status: Mapped[str | None] = mapped_column(String(64))  # non-numeric results
    config: Mapped[str] = mapped_column(Text, default="{}")
    series_pk: Mapped[int | None] = mapped_column(Integer)  # benchmark_series.id


class AccuracyMetric(Base):
    """One accuracy score (lm-eval task metric, GSM8K gate, …) with its error bar and gate."""

    __tablename__ = "accuracy_metric"
    __table_args__ = (
        UniqueConstraint("artifact_pk", "record_no", "task", "metric", "filter"),
        Index("ix_accuracy_job", "job_pk"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_pk: Mapped[int] = mapped_column(ForeignKey("ci_job.id", ondelete="CASCADE"))
    artifact_pk: Mapped[int] = mapped_column(ForeignKey("artifact.id", ondelete="CASCADE"))
    record_no: Mapped[int] = mapped_column(Integer, default=0)
    model: Mapped[str] = mapped_column(String(300), default="")
    task: Mapped[str] = mapped_column(String(200))
    metric: Mapped[str] = mapped_column(String(100))
    filter: Mapped[str] = mapped_column(String(100), default="none")
    value: Mapped[float | None] = mapped_column(Float)
    stderr: Mapped[float | None] = mapped_column(Float)
    n: Mapped[int | None] = mapped_column(Integer)
    higher_is_better: Mapped[bool] = mapped_column(Boolean, default=True)
    is_group: Mapped[bool] = mapped_column(Boolean, default=False)
    parent_group: Mapped[str] = mapped_column(String(200), default="")
    threshold: Mapped[float | None] = mapped_column(Float)
    gate_passed: Mapped[bool | None] = mapped_column(Boolean)
    config: Mapped[str] = mapped_column(Text, default="{}")
    config_key: Mapped[str] = mapped_column(String(16), default="")
    precision: Mapped[str] = mapped_column(String(32), default="")
    tp: Mapped[int | None] = mapped_column(Integer)
    ep: Mapped[int | None] = mapped_column(Integer)
    dp: Mapped[int | None] = mapped_column(Integer)
    concurrency: Mapped[int | None] = mapped_column(Integer)


class IngestError(Base):
    """A rejected input: which file, why, when. Re-rejecting the same file updates the row."""

    __tablename__ = "ingest_error"
    __table_args__ = (UniqueConstraint("path", "sha256"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    path: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64), default="")
    reason: Mapped[str] = mapped_column(Text)
    format: Mapped[str] = mapped_column(String(32), default="")
    at: Mapped[datetime] = mapped_column(DateTime)


class RunnerSnapshot(Base):
    """A self-hosted runner as seen by one collection of its scope (every runner of a
    collection shares its `seen_at`): the fleet view counts the runners of each scope's
    latest collection. `scope` is `owner/name` for a repository's runners or `org:NAME` for
    an organisation's."""

    __tablename__ = "runner_snapshot"
    __table_args__ = (
        UniqueConstraint("scope", "runner_id", "seen_at"),
        Index("ix_runner_snapshot_seen", "seen_at"),
        Index("ix_runner_snapshot_scope_seen", "scope", "seen_at"),  # a scope's latest
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    scope: Mapped[str] = mapped_column(String(200))
    runner_id: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(200), default="")
    labels: Mapped[str] = mapped_column(Text, default="[]")  # JSON list
    os: Mapped[str] = mapped_column(String(32), default="")
    status: Mapped[str] = mapped_column(String(16), default="")  # online | offline
    busy: Mapped[bool] = mapped_column(Boolean, default=False)
    hardware_id: Mapped[int | None] = mapped_column(ForeignKey("hardware.id"))
    seen_at: Mapped[datetime] = mapped_column(DateTime)


class CiArtifact(Base):
    """A CI system's artifact archive (a GitHub Actions artifact) and what became of it:
    `ingested`, `expired` (410 Gone), `too_large`, `rejected` (unreadable) or `empty` (no
    result files). The result files inside are `artifact` rows; `mapped_by` says how the
    archive was tied to a job: `manifest`, `job-id`, `label` or `run`."""

    __tablename__ = "ci_artifact"
    __table_args__ = (UniqueConstraint("run_pk", "artifact_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_pk: Mapped[int] = mapped_column(ForeignKey("ci_run.id", ondelete="CASCADE"))
    job_pk: Mapped[int | None] = mapped_column(ForeignKey("ci_job.id", ondelete="SET NULL"))
    artifact_id: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(300), default="")
    size_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    digest: Mapped[str] = mapped_column(String(100), default="")  # as GitHub reports it
    sha256: Mapped[str] = mapped_column(String(64), default="")  # of the bytes downloaded
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(Text, default="")
    mapped_by: Mapped[str] = mapped_column(String(16), default="")
    files: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime | None] = mapped_column(DateTime)


class SyncedRun(Base):
    """A CI run attempt whose jobs, artifacts and logs are all stored. It is written in the
    same transaction as the run's rows, so its presence means the run is complete and a
    restarted sync skips it."""

    __tablename__ = "synced_run"
    __table_args__ = (UniqueConstraint("ci_system", "repository", "run_id", "attempt"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ci_system: Mapped[str] = mapped_column(String(32))
    repository: Mapped[str] = mapped_column(String(200))
    run_id: Mapped[str] = mapped_column(String(64))
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    jobs: Mapped[int] = mapped_column(Integer, default=0)
    artifacts: Mapped[int] = mapped_column(Integer, default=0)
    synced_at: Mapped[datetime] = mapped_column(DateTime)


class SyncCheckpoint(Base):
    """How far a sync scope (API, repository, workflow, branch, event) has been collected:
    every completed run created in [covered_from, tail_start) is stored; runs from
    `tail_start` on are re-listed (conditionally) on every sync."""

    __tablename__ = "sync_checkpoint"

    scope: Mapped[str] = mapped_column(String(500), primary_key=True)
    covered_from: Mapped[datetime] = mapped_column(DateTime)
    tail_start: Mapped[datetime] = mapped_column(DateTime)
    updated_at: Mapped[datetime] = mapped_column(DateTime)


class HttpValidator(Base):
    """The ETag last seen for a list page URL, so that asking again costs nothing when
    nothing changed, and the page's `next` link, which a bodiless 304 does not repeat.
    Stored only once everything the page listed is stored."""

    __tablename__ = "http_validator"

    url: Mapped[str] = mapped_column(String(1000), primary_key=True)
    etag: Mapped[str] = mapped_column(String(200))
    next_url: Mapped[str] = mapped_column(String(1000), default="")  # the page's Link rel=next
    updated_at: Mapped[datetime] = mapped_column(DateTime)


class JobCapability(Base):
    """A distributed-inference capability a job exercised, as its names (suite, job, test
    files) or its manifest say. Capabilities in result configs are read from the stored
    config of each benchmark and accuracy row (`db.capabilities.from_config`)."""

    __tablename__ = "job_capability"

    job_pk: Mapped[int] = mapped_column(ForeignKey("ci_job.id", ondelete="CASCADE"),
                                        primary_key=True)
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    source: Mapped[str] = mapped_column(String(16), default="name")  # name | manifest


class SourceSync(Base):
    """The last sync of each source of `parity.toml` (or of a `parity collect` command):
    when it was tried, when it last succeeded, and what it said. The app marks a source
    that has not synced successfully for a day as stale."""

    __tablename__ = "source_sync"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))  # github | buildkite | ...
    target: Mapped[str] = mapped_column(String(500), default="")  # repository or org/pipelines
    last_attempt_at: Mapped[datetime] = mapped_column(DateTime)
    last_success_at: Mapped[datetime | None] = mapped_column(DateTime)
    status: Mapped[str] = mapped_column(String(16))  # ok | failed | stopped
    message: Mapped[str] = mapped_column(Text, default="")


# the rules whose subject is a test (or a file of tests): they resolve after explicit passes
# of their tests, not after quiet rounds, and tests of one file may share one alert
TEST_ALERT_RULES = ("amd_only_failure", "both_vendors_failing")


class Alert(Base):
    """One alert, by fingerprint (a stable hash of its rule and subject): first and last
    seen firing, its state (open, resolved, acknowledged), its evidence, how many rounds in
    a row it has not fired, and the GitHub issue it lives in (`previous_issue`: the issue of
    an earlier occurrence a person closed)."""

    __tablename__ = "alert"
    __table_args__ = (Index("ix_alert_state", "state"),)

    fingerprint: Mapped[str] = mapped_column(String(40), primary_key=True)
    rule: Mapped[str] = mapped_column(String(64))
    priority: Mapped[str] = mapped_column(String(4))
    framework: Mapped[str] = mapped_column(String(32), default="")
    hardware: Mapped[str] = mapped_column(String(200), default="")
    subject: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16))
    first_seen: Mapped[datetime] = mapped_column(DateTime)
    last_seen: Mapped[datetime] = mapped_column(DateTime)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime)
    quiet_rounds: Mapped[int] = mapped_column(Integer, default=0)
    evidence: Mapped[str] = mapped_column(Text, default="{}")
    evidence_hash: Mapped[str] = mapped_column(String(64), default="")
    url: Mapped[str] = mapped_column(String(500), default="")
    issue_repo: Mapped[str] = mapped_column(String(200), default="")
    issue_number: Mapped[int | None] = mapped_column(Integer)
    previous_issue: Mapped[int | None] = mapped_column(Integer)
