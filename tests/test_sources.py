"""Input sources, edge by edge: every archive limit holds at its exact value and refuses one
past it, unsafe member names and kinds are refused by name, a member that lies about its
size stops at the real limit, and a spooled member reads like a file. Real files and zips in
a temporary folder; the rest of the batch always goes on."""
from __future__ import annotations

import hashlib
import io
import os
import zipfile
from dataclasses import replace
from datetime import datetime, timezone

import pytest

from parity.collectors import sources
from parity.collectors.settings import Settings

BASE = Settings()


def _zip(path, members: dict[str, bytes], **info) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            zi = zipfile.ZipInfo(name, date_time=info.get("date_time", (2026, 11, 1, 2, 3, 4)))
            zi.compress_type = zipfile.ZIP_DEFLATED
            if "mode" in info:
                zi.external_attr = info["mode"] << 16
            z.writestr(zi, data)


def _expand(paths, settings=BASE):
    rejected, blobs = [], []
    for b in sources.expand(paths, settings, lambda name, why: rejected.append((name, why))):
        with b.opener() as f:
            blobs.append((b.name, f.read(), b.size, b.sha256, b.explicit, b.mtime,
                          b.archive_name))
    return blobs, rejected


def test_files_and_trees_in_a_stable_order(tmp_path):
    (tmp_path / "d" / "b").mkdir(parents=True)
    (tmp_path / "d" / "b" / "2.xml").write_text("two")
    (tmp_path / "d" / "1.xml").write_text("one")
    (tmp_path / "d" / "link.xml").symlink_to(tmp_path / "d" / "1.xml")
    single = tmp_path / "single.json"
    single.write_text("{}")
    blobs, rejected = _expand([tmp_path / "missing.xml", tmp_path / "d", single])
    assert [(os.path.relpath(n, tmp_path), data, size, explicit)
            for n, data, size, _, explicit, _, _ in blobs] == [
        ("d/1.xml", b"one", 3, False), ("d/b/2.xml", b"two", 3, False),
        ("single.json", b"{}", 2, True)]
    assert blobs[2][5] == datetime.fromtimestamp(single.stat().st_mtime, timezone.utc).replace(tzinfo=None)
    assert rejected == [(str(tmp_path / "missing.xml"), "no such file or directory")]
    assert not sources.is_zip(tmp_path / "missing.xml")
    assert not sources.is_zip(single) and not sources.is_zip(tmp_path / "d")


def test_zip_members_are_spooled_hashed_and_dated(tmp_path):
    z = tmp_path / "a.zip"
    _zip(z, {"r/one.xml": b"<a/>", "r/two.xml": b"<b/>" * 100})
    blobs, rejected = _expand([z])
    assert rejected == []
    assert [(n.split("!")[1], size, sha, arch) for n, _, size, sha, _, _, arch in blobs] == [
        ("r/one.xml", 4, hashlib.sha256(b"<a/>").hexdigest(), "a.zip"),
        ("r/two.xml", 400, hashlib.sha256(b"<b/>" * 100).hexdigest(), "a.zip")]
    assert blobs[0][5] == datetime(2026, 11, 1, 2, 3, 4)
    assert all(n.startswith(f"{z}!") for n, *_ in blobs)
    assert [explicit for *_, explicit, _, _ in blobs] == [False, False]  # members are found
    old = tmp_path / "old.zip"
    _zip(old, {"x.xml": b"x"}, date_time=(1980, 1, 1, 0, 0, 0))
    assert _expand([old])[0][0][5] == datetime(1980, 1, 1)
    # a zeroed DOS timestamp (month and day 0) is no date, not a crash of the batch
    data = bytearray(old.read_bytes())
    for sig, offset in ((b"PK\x03\x04", 10), (b"PK\x01\x02", 12)):
        at = data.index(sig) + offset
        data[at:at + 4] = b"\0\0\0\0"
    old.write_bytes(bytes(data))
    (blob,), rejected = _expand([old])
    assert blob[1] == b"x" and blob[5] is None and rejected == []


def test_member_count_limit_is_exact(tmp_path):
    z = tmp_path / "n.zip"
    _zip(z, {f"m{i}.xml": b"x" for i in range(3)})
    assert len(_expand([z], replace(BASE, max_archive_members=3))[0]) == 3
    blobs, rejected = _expand([z], replace(BASE, max_archive_members=2))
    assert blobs == [] and rejected == [(str(z), "archive has 3 members, more than the limit of 2")]


def test_declared_size_limit_is_exact(tmp_path):
    z = tmp_path / "s.zip"
    _zip(z, {"a.xml": b"a" * 100, "b.xml": b"b" * 101})
    blobs, rejected = _expand([z], replace(BASE, max_file_bytes=100))
    assert [n.split("!")[1] for n, *_ in blobs] == ["a.xml"]
    assert rejected == [(f"{z}!b.xml", "member declares 101 bytes, over the limit")]


def test_compression_ratio_limit_is_exact(tmp_path):
    z = tmp_path / "r.zip"
    _zip(z, {"big.xml": b"\0" * 100_000})
    info = zipfile.ZipFile(z).infolist()[0]
    ratio = info.file_size / info.compress_size
    assert len(_expand([z], replace(BASE, max_compression_ratio=int(ratio) + 1))[0]) == 1
    blobs, rejected = _expand([z], replace(BASE, max_compression_ratio=int(ratio) - 1))
    assert blobs == [] and rejected == [
        (f"{z}!big.xml", f"compression ratio {info.file_size // info.compress_size}:1 looks "
                         f"like a zip bomb")]


def test_a_ratio_equal_to_the_limit_passes(tmp_path):
    z = tmp_path / "stored.zip"
    with zipfile.ZipFile(z, "w", compression=zipfile.ZIP_STORED) as f:
        f.writestr("s.xml", b"s" * 1000)  # stored: exactly 1:1
    assert len(_expand([z], replace(BASE, max_compression_ratio=1))[0]) == 1


def test_total_size_limit_is_exact_and_counts_earlier_members(tmp_path):
    z = tmp_path / "t.zip"
    _zip(z, {"a.xml": b"a" * 60, "b.xml": b"b" * 40, "c.xml": b"c"})
    blobs, rejected = _expand([z], replace(BASE, max_archive_bytes=100))
    assert [n.split("!")[1] for n, *_ in blobs] == ["a.xml", "b.xml"]
    assert rejected == [(f"{z}!c.xml", "archive expands past the total size limit")]


@pytest.mark.parametrize("name, reason", [
    ("/etc/passwd", "absolute path in archive"),
    ("\\windows\\x.xml", "absolute path in archive"),
    ("C:/x.xml", "absolute path in archive"),
    ("C:", "absolute path in archive"),
    ("a/../../x.xml", "path traversal ('..') in archive member name"),
    ("a\\..\\x.xml", "path traversal ('..') in archive member name"),
])
def test_unsafe_member_names(name, reason):
    assert sources._unsafe_member(name) == reason


def test_safe_member_names():
    for name in ("a/b.xml", "x", "a..b/c.xml", "C", "..x/y"):
        assert sources._unsafe_member(name) is None


def test_links_encrypted_and_directories(tmp_path):
    z = tmp_path / "k.zip"
    _zip(z, {"link.xml": b"/etc/passwd"}, mode=0o120777)
    assert _expand([z])[1] == [(f"{z}!link.xml", "symbolic link in archive")]
    plain = tmp_path / "p.zip"
    _zip(plain, {"dir/": b"", "f.xml": b"f"}, mode=0o100644)
    assert [n.split("!")[1] for n, *_ in _expand([plain])[0]] == ["f.xml"]
    enc = tmp_path / "e.zip"
    _zip(enc, {"s.xml": b"secret"})
    data = bytearray(enc.read_bytes())
    # set the encrypted flag (bit 0) in the local and central headers
    for sig, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.index(sig) + offset
        data[at] |= 0x1
    enc.write_bytes(bytes(data))
    assert _expand([enc])[1] == [(f"{enc}!s.xml", "encrypted archive member")]


def test_a_corrupt_member_is_rejected_and_the_next_one_read(tmp_path):
    z = tmp_path / "c.zip"
    _zip(z, {"bad.xml": b"<a>" + b"q" * 5000 + b"</a>", "good.xml": b"<b/>"})
    data = bytearray(z.read_bytes())
    body = data.index(b"bad.xml") + len(b"bad.xml") + 20  # inside the deflated data
    data[body:body + 8] = b"\xff" * 8
    z.write_bytes(bytes(data))
    blobs, rejected = _expand([z])
    assert [n.split("!")[1] for n, *_ in blobs] == ["good.xml"]
    assert rejected[0][0] == f"{z}!bad.xml" and rejected[0][1].startswith("corrupt archive member")


def test_a_broken_archive_is_rejected_whole(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04" + b"\0" * 50)
    blobs, rejected = _expand([bad, tmp_path / "bad.zip"])
    assert blobs == [] and len(rejected) == 2
    assert rejected[0][0] == str(bad) and rejected[0][1].startswith("unreadable zip archive: ")


class _Lying:
    """A zip reader that does not stop at the declared size (CPython's does)."""

    def __init__(self, data: bytes):
        self.data = data

    def open(self, info):
        return io.BytesIO(self.data)


def test_the_real_size_limit_holds_when_a_reader_does_not():
    info = zipfile.ZipInfo("m.xml")
    info.compress_size = 10
    settings = replace(BASE, max_compression_ratio=2, max_file_bytes=10_000)
    limit = 10 * 2 + 1024
    spool, sha, size = sources._spool(_Lying(b"y" * limit), info, settings)
    assert (size, sha) == (limit, hashlib.sha256(b"y" * limit).hexdigest())
    spool.close()
    with pytest.raises(sources.Rejected, match="member expands past its size limit"):
        sources._spool(_Lying(b"y" * (limit + 1)), info, settings)
    # the file limit when it is the smaller one
    small = replace(BASE, max_compression_ratio=100, max_file_bytes=50)
    with pytest.raises(sources.Rejected):
        sources._spool(_Lying(b"y" * 51), info, small)
    sources._spool(_Lying(b"y" * 50), info, small)[0].close()
    # a member with a zero compressed size still gets a limit above zero
    info.compress_size = 0
    sources._spool(_Lying(b"y" * 1026), info, settings)[0].close()
    with pytest.raises(sources.Rejected):
        sources._spool(_Lying(b"y" * 1027), info, settings)


def test_a_spooled_member_reads_like_a_file_and_survives_close(tmp_path):
    z = tmp_path / "v.zip"
    _zip(z, {"x.txt": b"0123456789"})
    for blob in sources.expand([z], BASE, lambda *a: None):
        view = blob.opener()
        assert view.readable() and view.seekable()
        assert view.read(4) == b"0123" and view.tell() == 4
        assert view.seek(2) == 2 and view.read() == b"23456789"
        buf = bytearray(3)
        view.seek(0)
        assert view.readinto(buf) == 3 and bytes(buf) == b"012"
        view.close()
        again = blob.opener()  # a second open starts at the beginning
        assert io.BufferedReader(again).read() == b"0123456789"
        (spool,) = blob._cleanup
        assert not spool.closed
    assert blob._cleanup == [] and spool.closed  # closed once the next member was asked for


def test_file_sha256_includes_what_was_already_read():
    data = b"a" * (sources.CHUNK + 10)
    stream = io.BytesIO(data)
    head = stream.read(5)
    assert sources.file_sha256(stream, head) == hashlib.sha256(data).hexdigest()
