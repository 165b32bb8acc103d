"""Hostile and broken inputs: each is rejected with one line naming the file and the reason,
recorded in ingest_error, memory stays bounded, and a good file in the same batch lands."""
from __future__ import annotations

import resource
import zipfile

import pytest
from sqlalchemy import select

from parity.collectors.ingest import IngestOptions, Ingester, ingest
from parity.collectors.settings import Settings
from parity.db.inventory import inventory
from parity.db.models import IngestError

GOOD = (b'<testsuites><testsuite name="pytest"><testcase classname="tests.test_ok" name="test_a"/>'
        b'<testcase classname="tests.test_ok" name="test_b"><failure message="no"/></testcase>'
        b'</testsuite></testsuites>')
XXE = (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
       b'<testsuite name="x"><testcase classname="c" name="&x;"/></testsuite>')
LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
          + b"".join(b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
                     for i in range(1, 10))
          + b']><testsuite><testcase classname="c" name="&lol9;"/></testsuite>')
HIDDEN_DTD = b"<!--" + b"x" * 70_000 + b'--><!DOCTYPE r [<!ENTITY e "e">]><testsuite/>'


def _errors(engine):
    with engine.connect() as conn:
        rows = conn.execute(select(IngestError.path, IngestError.reason))
        return {path.rsplit("/", 1)[-1]: reason for path, reason in rows}


@pytest.mark.parametrize("name,content,reason", [
    ("xxe.xml", XXE, "DTD"),
    ("laughs.xml", LAUGHS, "DTD"),
    ("hidden.xml", HIDDEN_DTD, "no XML root element"),
    ("truncated.xml", GOOD[:-30], "malformed XML"),
    ("latin1.json", '{"results": {"t": {"acc,none": 0.5}}, "versions": {"t": "é"}}'.encode("latin-1"),
     "not UTF-8"),
    ("types.json", b'{"tests": [{"nodeid": 5}], "summary": {}}', "nodeid"),
    ("empty.xml", b"", "empty file"),
    ("garbage.bin.xml", b"<\x00\x01\x02\xff\xfe", "malformed XML"),
])
def test_bad_file_rejected_and_good_file_lands(engine, tmp_path, name, content, reason):
    bad = tmp_path / name
    bad.write_bytes(content)
    good = tmp_path / "good.xml"
    good.write_bytes(GOOD)
    lines = []
    report = ingest(engine, [bad, good], echo=lines.append)
    assert [f.name for f in report.rejected] == [str(bad)]
    assert reason in report.rejected[0].reason
    rejected_lines = [ln for ln in lines if ln.startswith("REJECTED")]
    assert rejected_lines == [f"REJECTED {bad}: {report.rejected[0].reason}"]
    assert "\n" not in rejected_lines[0]
    assert reason in _errors(engine)[name]
    assert inventory(engine)["test_results"] == 2
    # rejecting it again records it once, not twice
    ingest(engine, [bad])
    assert inventory(engine)["ingest_errors"] == 1


def test_a_non_finite_metric_is_stored_missing_and_the_file_kept(engine, tmp_path):
    nan = tmp_path / "nan.json"
    nan.write_bytes(b'{"request_throughput": NaN, "output_throughput": 1, "completed": 1}')
    lines = []
    report = ingest(engine, [nan], echo=lines.append)
    assert report.rejected == [] and report.count("ingested") == 1
    assert [ln for ln in lines if ln.startswith("WARNING")] == [
        f"WARNING   {nan}: record 1 metric 'request_throughput': nan is not a finite number; "
        f"stored as missing"]
    assert inventory(engine)["benchmark_rows"] >= 2


def _zip(path, members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_zip_traversal_and_absolute_members_are_refused(sqlite_engine, tmp_path):
    archive = _zip(tmp_path / "a.zip", {"../../evil.xml": GOOD, "/abs.xml": GOOD,
                                         "ok/report.xml": GOOD})
    report = ingest(sqlite_engine, [archive])
    reasons = {f.name.split("!")[1]: f.reason for f in report.rejected}
    assert "traversal" in reasons["../../evil.xml"] and "absolute" in reasons["/abs.xml"]
    assert report.count("ingested") == 1
    # members are never extracted to disk: the refusals are recorded, nothing else is kept
    with sqlite_engine.connect() as conn:
        refused = {p.split("!")[1] for p, in conn.execute(select(IngestError.path))}
    assert refused == {"../../evil.xml", "/abs.xml"}


def test_zip_bomb_is_refused_with_bounded_memory(sqlite_engine, tmp_path):
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("huge.xml", "w", force_zip64=True) as f:
            chunk = b"\0" * (1 << 20)
            for _ in range(1024):  # 1 GiB of zeros compresses to about 1 MB
                f.write(chunk)
        zf.writestr("good.xml", GOOD)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = ingest(sqlite_engine, [bomb])
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert any("zip bomb" in f.reason for f in report.rejected)
    assert report.count("ingested") == 1
    assert grown_mib < 200


def test_member_lying_about_its_size_stops_at_the_limit(sqlite_engine, tmp_path):
    archive = _zip(tmp_path / "big.zip", {"r.xml": GOOD + b" " * 400_000})
    settings = Settings(max_compression_ratio=10_000, max_file_bytes=100_000)
    ing = Ingester(sqlite_engine, settings=settings)
    report = ing.run([archive], IngestOptions())
    assert report.rejected and "over the limit" in report.rejected[0].reason


def _reasons(engine, archive, settings):
    report = Ingester(engine, settings=settings).run([archive], IngestOptions())
    return [f.reason for f in report.rejected], report.count("ingested")


def test_each_zip_member_limit_refuses_on_its_own(sqlite_engine, tmp_path):
    """Each check is pinned by its own message, so that removing one is noticed even though
    a later check would still stop the member."""
    import os

    noise = os.urandom(200_000)  # does not compress: only the size check can refuse it
    big = tmp_path / "big.zip"
    with zipfile.ZipFile(big, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("r.xml", GOOD + noise)
        zf.writestr("ok.xml", GOOD.replace(b'"test_a"', b'"test_big"'))
    reasons, ok = _reasons(sqlite_engine, big, Settings(max_file_bytes=100_000))
    assert reasons == [f"member declares {len(GOOD) + 200_000} bytes, over the limit"]
    assert ok == 1
    zeros = tmp_path / "zeros.zip"  # 2 MB of zeros: well under the size limit, ratio ~1000:1
    with zipfile.ZipFile(zeros, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("z.xml", GOOD + b" " * 2_000_000)
        zf.writestr("ok.xml", GOOD.replace(b'"test_a"', b'"test_zeros"'))
    reasons, ok = _reasons(sqlite_engine, zeros, Settings(max_file_bytes=10_000_000))
    assert len(reasons) == 1 and reasons[0].endswith(":1 looks like a zip bomb"), reasons
    assert ok == 1
    total = tmp_path / "total.zip"  # each member fine, together past the archive limit
    with zipfile.ZipFile(total, "w", zipfile.ZIP_STORED) as zf:
        for i in range(3):
            zf.writestr(f"r{i}.xml", GOOD.replace(b'"test_a"', f'"test_{i}"'.encode())
                        + b" " * 40_000)
    reasons, ok = _reasons(sqlite_engine, total, Settings(max_archive_bytes=100_000))
    assert reasons == ["archive expands past the total size limit"] and ok == 2


def _lie_about_size(archive, declared: int) -> None:
    """Rewrite the uncompressed size of the archive's only member in its local header and
    in the central directory."""
    data = bytearray(archive.read_bytes())
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    data[local + 22:local + 26] = declared.to_bytes(4, "little")
    data[central + 24:central + 28] = declared.to_bytes(4, "little")
    archive.write_bytes(bytes(data))


def test_a_member_that_lies_about_its_size_is_refused(sqlite_engine, tmp_path):
    """A header that declares 1 KB for a member that inflates to 50 MB passes the header
    checks; reading stops at the declared size (zipfile's own bound, below our streaming
    limit) and the member is refused as corrupt, with memory bounded."""
    liar = tmp_path / "liar.zip"
    with zipfile.ZipFile(liar, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("huge.xml", GOOD + b" " * 50_000_000)
    _lie_about_size(liar, 1_000)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reasons, ok = _reasons(sqlite_engine, liar, Settings())
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert ok == 0 and len(reasons) == 1
    assert reasons[0].startswith("corrupt archive member") and "CRC" in reasons[0]
    assert grown_mib < 40


def test_absurd_size_is_refused_before_parsing(sqlite_engine, tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b"[" + b"1," * 600_000 + b"1]")
    ing = Ingester(sqlite_engine, settings=Settings(max_json_bytes=1_000_000))
    report = ing.run([big], IngestOptions())
    assert "limit" in report.rejected[0].reason


def test_corrupt_zip_and_missing_path(sqlite_engine, tmp_path):
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04" + b"\0" * 100)
    report = ingest(sqlite_engine, [broken, tmp_path / "nope.xml"])
    assert {f.reason.split(":")[0] for f in report.rejected} == {
        "unreadable zip archive", "no such file or directory"}


def test_deeply_nested_json(sqlite_engine, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    report = ingest(sqlite_engine, [deep])
    assert "nested too deeply" in report.rejected[0].reason
