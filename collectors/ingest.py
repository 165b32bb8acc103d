"""`parity ingest`: files, directories and zip archives into the store.

Each file is detected, parsed and written in its own transaction. A file that cannot be
read safely or parsed is rejected with one line naming it and the reason, recorded in
`ingest_error`, and the rest of the batch goes on. Ingesting the same bytes again for the
same job changes nothing."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from sqlalchemy import Engine

from parity.collectors.formats.detect import FORMATS, HEAD_BYTES, NotRecognised, detect, run_parser
from parity.collectors.formats.records import ParseError, ParseResult
from parity.collectors.settings import Settings
from parity.collectors.sources import Blob, expand, file_sha256
from parity.collectors.writer import (FRAMEWORKS, ArtifactInfo, Provenance, Writer, parse_time,
                               paused_gc)
from parity.db import manifest as manifests
from parity.db import store
from parity.db.hardware import vocabulary
from parity.db.migrate import upgrade


@dataclass(frozen=True)
class IngestOptions:
    """What the command line says about the files (anything unsaid is read from them)."""

    framework: str | None = None
    hardware: str | None = None
    repo: str = ""
    run_id: str | None = None
    commit: str = ""
    branch: str = ""
    job: str | None = None
    suite: str = ""
    format: str | None = None
    capabilities: tuple[str, ...] = ()


@dataclass
class FileOutcome:
    name: str
    status: str  # ingested | unchanged | rejected | skipped
    format: str = ""
    records: int = 0
    reason: str = ""


@dataclass
class IngestReport:
    files: list[FileOutcome] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def rejected(self) -> list[FileOutcome]:
        return [f for f in self.files if f.status == "rejected"]

    @property
    def records(self) -> int:
        return sum(f.records for f in self.files)


_FRAMEWORK_HINTS = (("sglang", "sglang"), ("vllm", "vllm"), ("inductor", "pytorch"),
                    ("pytorch", "pytorch"), ("torch", "pytorch"))


def infer_framework(result: ParseResult, name: str) -> str:
    """The framework when not given: PyTorch formats are PyTorch's; serving results name
    their backend; otherwise a framework token in the file path; else 'other'."""
    if result.format in ("pytorch-v3", "inductor-csv"):
        return "pytorch"
    for rec in result.benchmarks[:1] + result.accuracy[:1]:
        fw = str(rec.config.get("framework") or rec.config.get("backend") or "").lower()
        for token, framework in _FRAMEWORK_HINTS:
            if token in fw:
                return framework
    return framework_in_name(name) or "other"


def framework_in_name(name: str) -> str | None:
    """The framework a path or repository name names as a word (`vllm-project/vllm`)."""
    lowered = name.lower()
    for token, framework in _FRAMEWORK_HINTS:
        if re.search(rf"(?<![a-z]){token}(?![a-z])", lowered):
            return framework
    return None


class Ingester:
    def __init__(self, engine: Engine, settings: Settings | None = None,
                 echo: Callable[[str], None] | None = None):
        self.engine = engine
        self.settings = settings or Settings.from_env()
        self.writer = Writer(vocabulary())
        self.echo = echo or (lambda line: None)
        upgrade(engine)

    def run(self, paths: list[str | Path], options: IngestOptions) -> IngestReport:
        report = IngestReport()

        def reject(name: str, reason: str, sha: str = "", fmt: str = "") -> None:
            reason = " ".join(reason.split())[:1000]  # always one line
            report.files.append(FileOutcome(name, "rejected", fmt, reason=reason))
            self.echo(f"REJECTED {name}: {reason}")
            with self.engine.begin() as conn:
                store.record_ingest_error(conn, name, reason, sha, fmt)

        for path in paths:
            try:
                opts = with_manifest(options, manifests.find(path))
            except manifests.ManifestError as exc:
                reject(f"{path}/{manifests.NAME}", str(exc))
                opts = options
            for blob in expand([path], self.settings, reject):
                try:
                    if Path(blob.name.split("!")[-1]).name == manifests.NAME:
                        continue
                    outcome = self.ingest_blob(blob, opts)
                except FileRejected as exc:
                    reject(blob.name, exc.reason, blob.sha256, exc.format)
                    continue
                finally:
                    blob.close()
                report.files.append(outcome)
        return report

    def parse(self, blob: Blob, format: str | None = None):
        """Detect and parse one blob: (result, format), or the reason it was skipped (a
        file of no known format that nobody named). Raises `FileRejected`."""
        limit = self.settings.max_file_bytes
        if blob.size > limit:
            raise FileRejected(f"file is {blob.size} bytes, over the {limit}-byte limit")
        if blob.size == 0:
            raise FileRejected("empty file")
        with blob.opener() as f:  # one read gives the detection head and the digest
            head = f.read(HEAD_BYTES)
            if not blob.sha256:
                blob.sha256 = file_sha256(f, head)
        fmt_name = format
        try:
            if fmt_name is None:
                fmt_name = detect(head, blob.name, lambda: self._read_all(blob))
            fmt = FORMATS.get(fmt_name)
            if fmt is None:
                raise FileRejected(f"unknown format '{fmt_name}' (known: {', '.join(FORMATS)})")
            if not fmt.streaming and blob.size > self.settings.max_json_bytes:
                raise FileRejected(f"{fmt.name} file is {blob.size} bytes, over the "
                                   f"{self.settings.max_json_bytes}-byte limit for whole-file "
                                   f"formats", fmt.name)
            with blob.opener() as f:
                result = run_parser(fmt, f, blob.name)
        except NotRecognised as exc:
            if blob.explicit or format:
                raise FileRejected(str(exc)) from None
            return str(exc)
        except ParseError as exc:
            raise FileRejected(str(exc), fmt_name or "") from None
        except MemoryError:
            raise FileRejected("out of memory while parsing", fmt_name or "") from None
        except RecursionError:
            raise FileRejected("structure nested too deeply", fmt_name or "") from None
        return result, fmt

    @paused_gc()
    def ingest_blob(self, blob: Blob, options: IngestOptions) -> FileOutcome:
        """Detect, parse and store one blob in one transaction (raises `FileRejected`)."""
        parsed = self.parse(blob, options.format)
        if isinstance(parsed, str):
            return FileOutcome(blob.name, "skipped", reason=parsed)
        result, fmt = parsed
        prov = self._provenance(blob, result, options)
        art = ArtifactInfo(path=blob.name, sha256=blob.sha256, size_bytes=blob.size,
                           format=fmt.name, parser_version=fmt.version, name=blob.archive_name)
        problems = [str(p) for p in result.meta.get("problems") or []]
        try:
            with store.bulk_transaction(self.engine) as conn:
                status, written = self.writer.write(conn, result, prov, art)
                for problem in problems:  # lines left out of a file that was otherwise read
                    line = problem.split(":", 1)[0][5:] if problem.startswith("line ") else ""
                    store.record_ingest_error(conn, f"{blob.name}:{line}" if line else blob.name,
                                              problem[:1000], blob.sha256, fmt.name)
        except Exception:
            self.writer.forget_cache()
            raise
        self.echo(f"{status.upper():9} {blob.name} ({fmt.name}, {result.record_count} records)")
        for problem in problems[:20]:
            self.echo(f"SKIPPED   {blob.name}: {problem}")
        if len(problems) > 20:
            self.echo(f"SKIPPED   {blob.name}: ... and {len(problems) - 20} more lines")
        warnings = [str(w) for w in result.meta.get("warnings") or []]
        for warning in warnings[:20]:  # read, but worth a look (e.g. a test reported twice)
            self.echo(f"WARNING   {blob.name}: {warning}")
        if len(warnings) > 20:
            self.echo(f"WARNING   {blob.name}: ... and {len(warnings) - 20} more")
        return FileOutcome(blob.name, status, fmt.name, written,
                           reason="; ".join(problems[:3]))

    def _read_all(self, blob: Blob) -> bytes:
        if blob.size > self.settings.max_json_bytes:
            raise FileRejected(f"file is {blob.size} bytes, over the {self.settings.max_json_bytes}"
                          f"-byte limit for whole-file formats")
        with blob.opener() as f:
            return f.read()

    def _provenance(self, blob: Blob, result: ParseResult, options: IngestOptions) -> Provenance:
        framework = (options.framework or infer_framework(result, blob.name)).lower()
        if framework not in FRAMEWORKS:
            framework = "other"
        when = parse_time(result.meta.get("timestamp")) or blob.mtime
        commit = options.commit or str(result.meta.get("properties", {}).get("git_sha", ""))[:64]
        hardware = [options.hardware] if options.hardware else []
        if not hardware and result.meta.get("hostname"):
            # a host name is a weak hint, used only when the vocabulary recognises it
            host = str(result.meta["hostname"])
            if self.writer.vocab.identify(host).mapped:
                hardware = [host]
        if options.run_id:
            run_id = str(options.run_id)
            job_id = options.job or f"{options.hardware or 'unknown'}/{framework}" + (
                f"/{options.suite}" if options.suite else "")
            ci_system = "github" if options.repo else "local"
        else:
            run_id = job_id = f"file:{blob.sha256[:16]}"
            ci_system = "local"
        return Provenance(
            run_id=run_id, job_id=job_id, ci_system=ci_system, repository=options.repo,
            head_sha=commit, branch=options.branch, run_created_at=when,
            run_completed_at=when, job_name=options.job or "", suite=options.suite,
            framework=framework, hardware=hardware, capabilities=list(options.capabilities))


def with_manifest(options: IngestOptions, m: "manifests.Manifest | None") -> IngestOptions:
    """The command line's options, with the blanks filled from a `parity-manifest.json`."""
    if m is None:
        return options
    fill = {"framework": m.framework or None, "hardware": m.hardware or None,
            "repo": m.repository, "run_id": m.run_id or None, "commit": m.commit,
            "job": m.job_id or None, "suite": m.suite, "capabilities": m.capabilities}
    return replace(options, **{k: v for k, v in fill.items() if v and not getattr(options, k)})


class FileRejected(Exception):
    def __init__(self, reason: str, format: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.format = format


def ingest(engine: Engine, paths: list[str | Path], options: IngestOptions | None = None,
           echo: Callable[[str], None] | None = None) -> IngestReport:
    """Ingest every file under `paths`; see the module docstring for the rules."""
    return Ingester(engine, echo=echo).run(paths, options or IngestOptions())
