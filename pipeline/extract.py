"""Extract: read the raw snapshots the manifest lists (the build's only file reading)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import RawFileError
from schemas.records import DataFlag, Source


@dataclass(frozen=True)
class RawSnapshot:
    """One source's raw content: ``text`` for a single file, ``files`` for a folder of tables."""

    source: Source
    text: str | None = None
    files: dict[str, str] | None = None
    flags: tuple[DataFlag, ...] = ()  # notes about the snapshot itself (e.g. a detected edition)


def _read_text(path: Path, source: Source) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise RawFileError(
            f"{path}: raw file of source {source.source_id!r} not found; "
            "restore it, run `wh40k fetch`, or remove its entry from the raw manifest"
        ) from None
    except OSError as exc:
        raise RawFileError(f"{path}: cannot read raw file of source {source.source_id!r} ({exc.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RawFileError(
            f"{path}: not UTF-8 at byte {exc.start} (source {source.source_id!r}); "
            "re-save the snapshot as UTF-8"
        ) from None


def _sha256_of(path: Path) -> str:
    if path.is_dir():
        digest = hashlib.sha256()
        children = (p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        for child in sorted(c for c in children if not c.name.endswith(".tmp")):
            digest.update(child.name.encode())
            digest.update(hashlib.sha256(child.read_bytes()).digest())
        return digest.hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def is_present(raw_dir: Path, source: Source) -> bool:
    """True when the source's file (or folder) is in ``raw_dir``."""
    return (raw_dir / source.file).exists()


def read_snapshot(raw_dir: Path, source: Source) -> RawSnapshot:
    """Read one source's file (or folder of ``.csv`` tables) under ``raw_dir``.

    Raises ``RawFileError`` naming the file when it is missing, unreadable, not UTF-8, or its
    content does not match the manifest's ``sha256``.
    """
    path = raw_dir / source.file
    if path.is_dir():
        tables = sorted(p for p in path.iterdir() if p.suffix.lower() == ".csv")
        if not tables:
            raise RawFileError(f"{path}: no .csv tables in the folder of source {source.source_id!r}")
        snapshot = RawSnapshot(source, files={p.stem: _read_text(p, source) for p in tables})
    else:
        snapshot = RawSnapshot(source, text=_read_text(path, source))
    if source.sha256 and _sha256_of(path) != source.sha256:
        raise RawFileError(
            f"{path}: content does not match the sha256 in the raw manifest for source "
            f"{source.source_id!r}; if the new snapshot is intended, update its sha256 there"
        )
    return snapshot
