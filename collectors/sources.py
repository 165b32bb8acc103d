"""Input sources: files, directory trees and zip archives, each yielded as a `Blob` that can
be opened, hashed and sized without trusting what the archive claims.

Archive members are never extracted by name: they are streamed into a spooled temporary
file under a size limit, so path traversal cannot write anywhere and a zip bomb stops at
the limit. Members whose names try to escape (absolute, `..`, drive letters) are refused."""
from __future__ import annotations

import hashlib
import io
import os
import stat
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Callable, Iterator

from parity.collectors.settings import Settings

CHUNK = 1024 * 1024


class Rejected(Exception):
    """An input that cannot be read safely; the message is the one-line reason."""


@dataclass
class Blob:
    name: str  # what the user sees: a path, or archive.zip!member/path
    opener: Callable[[], BinaryIO]
    size: int
    mtime: datetime | None
    explicit: bool  # named on the command line (unrecognised is an error, not a skip)
    sha256: str = ""
    archive_name: str = ""
    _cleanup: list = field(default_factory=list)

    def close(self) -> None:
        for f in self._cleanup:
            f.close()
        self._cleanup.clear()


def _file_blob(path: Path, explicit: bool) -> Blob:
    st = path.stat()
    return Blob(name=str(path), opener=lambda: open(path, "rb"), size=st.st_size,
                mtime=datetime.fromtimestamp(st.st_mtime, timezone.utc).replace(tzinfo=None),
                explicit=explicit)


def file_sha256(stream: BinaryIO, already_read: bytes = b"") -> str:
    """SHA-256 of `already_read` followed by the rest of `stream`."""
    h = hashlib.sha256(already_read)
    for chunk in iter(lambda: stream.read(CHUNK), b""):
        h.update(chunk)
    return h.hexdigest()


def is_zip(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def expand(paths: list[str | Path], settings: Settings,
           on_reject: Callable[[str, str], None]) -> Iterator[Blob]:
    """Every readable input under `paths`, in a stable order. Whole inputs that cannot be
    read (missing, unreadable, a broken archive) go to `on_reject(name, reason)`."""
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            on_reject(str(path), "no such file or directory")
            continue
        if path.is_dir():
            for sub in sorted(p for p in path.rglob("*")):
                if sub.is_symlink() or not sub.is_file():
                    continue
                yield from _expand_file(sub, settings, on_reject, explicit=False)
        else:
            yield from _expand_file(path, settings, on_reject, explicit=True)


def _expand_file(path: Path, settings: Settings, on_reject, explicit: bool) -> Iterator[Blob]:
    if is_zip(path):
        yield from _zip_members(path, settings, on_reject)
    else:
        yield _file_blob(path, explicit)


def _unsafe_member(name: str) -> str | None:
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return "absolute path in archive"
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        return "path traversal ('..') in archive member name"
    return None


def _zip_members(path: Path, settings: Settings, on_reject) -> Iterator[Blob]:
    try:
        zf = zipfile.ZipFile(path)
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        on_reject(str(path), f"unreadable zip archive: {exc}")
        return
    with zf:
        if len(infos) > settings.max_archive_members:
            on_reject(str(path), f"archive has {len(infos)} members, more than the limit of "
                                 f"{settings.max_archive_members}")
            return
        total = 0
        for info in infos:
            if info.is_dir():
                continue
            name = f"{path}!{info.filename}"
            problem = _unsafe_member(info.filename)
            mode = info.external_attr >> 16
            if problem is None and stat.S_ISLNK(mode):
                problem = "symbolic link in archive"
            if problem is None and info.flag_bits & 0x1:
                problem = "encrypted archive member"
            if problem is None and info.file_size > settings.max_file_bytes:
                problem = f"member declares {info.file_size} bytes, over the limit"
            if problem is None and info.compress_size and \
                    info.file_size / info.compress_size > settings.max_compression_ratio:
                problem = (f"compression ratio {info.file_size // info.compress_size}:1 "
                           f"looks like a zip bomb")
            total += info.file_size
            if problem is None and total > settings.max_archive_bytes:
                problem = "archive expands past the total size limit"
            if problem:
                on_reject(name, problem)
                continue
            try:
                spool, sha, size = _spool(zf, info, settings)
            except Rejected as exc:
                on_reject(name, str(exc))
                continue
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError) as exc:
                on_reject(name, f"corrupt archive member: {exc}")
                continue
            mtime = _member_time(info)
            blob = Blob(name=name, opener=_reopen(spool), size=size, mtime=mtime,
                        explicit=False, sha256=sha, archive_name=path.name)
            blob._cleanup.append(spool)
            yield blob
            blob.close()


def _member_time(info: zipfile.ZipInfo) -> datetime | None:
    """A member's DOS timestamp, or None where the archive zeroed it (month and day 0)."""
    try:
        return datetime(*info.date_time)
    except ValueError:
        return None


def _spool(zf: zipfile.ZipFile, info: zipfile.ZipInfo, settings: Settings):
    """Copy a member into a spooled temp file, hashing it and stopping at the real limit
    (a member may lie about its size). Defence in depth: CPython's zipfile already stops
    reading at the declared size, so a member that lies fails its CRC check instead
    (`tests/test_hostile.py` pins that); this limit holds should a reader not do so."""
    limit = min(settings.max_file_bytes, max(info.compress_size, 1) * settings.max_compression_ratio
                + 1024)
    spool = tempfile.SpooledTemporaryFile(max_size=settings.spool_bytes)
    h = hashlib.sha256()
    size = 0
    with zf.open(info) as src:
        for chunk in iter(lambda: src.read(CHUNK), b""):
            size += len(chunk)
            if size > limit:
                spool.close()
                raise Rejected("member expands past its size limit (zip bomb?)")
            h.update(chunk)
            spool.write(chunk)
    return spool, h.hexdigest(), size


def _reopen(spool) -> Callable[[], BinaryIO]:
    def opener() -> BinaryIO:
        spool.seek(0)
        return _NoClose(spool)
    return opener


class _NoClose(io.RawIOBase):
    """A view of the spool that callers may close without closing the spool."""

    def __init__(self, inner):
        self._inner = inner

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        data = self._inner.read(len(b))
        b[: len(data)] = data
        return len(data)

    def read(self, n: int = -1) -> bytes:
        return self._inner.read(n)

    def seek(self, pos: int, whence: int = os.SEEK_SET) -> int:
        return self._inner.seek(pos, whence)

    def tell(self) -> int:
        return self._inner.tell()
