"""Extract: read the raw snapshots the manifest lists (the build's only file reading)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import RawFileError
from pipeline.limits import MAX_FILE_BYTES
from pipeline.manifest import path_problem
from pipeline.extractors import FOLDER_FILES
from schemas.records import DataFlag, Source, SourceFile


@dataclass(frozen=True)
class RawSnapshot:
    """One source's raw content: ``text`` for a single file, ``files`` for a folder of tables."""

    source: Source
    text: str | None = None
    files: dict[str, str] | None = None
    flags: tuple[DataFlag, ...] = ()  # notes about the snapshot itself (e.g. a detected edition)
    checksums: tuple[SourceFile, ...] = ()  # every file read, with its sha256 and size


def _read_text(path: Path, source: Source, checksums: list[SourceFile] | None = None, name: str = "") -> str:
    """The text of one raw file; its sha256 and size are appended to ``checksums`` (as ``name``)."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise RawFileError(
                f"{path}: {size} bytes: at most {MAX_FILE_BYTES} bytes in one raw file (source "
                f"{source.source_id!r}); this is no snapshot of the source: fetch it again"
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise RawFileError(
            f"{path}: raw file of source {source.source_id!r} not found; "
            "restore it, run `wh40k fetch`, or remove its entry from the raw manifest"
        ) from None
    except OSError as exc:
        raise RawFileError(f"{path}: cannot read raw file of source {source.source_id!r} ({exc.strerror})") from None
    if checksums is not None:
        checksums.append(SourceFile(source_id=source.source_id, locator="whole file", file=name or path.name,
                                    sha256=hashlib.sha256(data).hexdigest(), bytes=len(data)))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RawFileError(
            f"{path}: not UTF-8 at byte {exc.start} (source {source.source_id!r}); "
            "re-save the snapshot as UTF-8"
        ) from None


def _check_inside(raw_dir: Path, source: Source, file: str) -> None:
    problem = path_problem(raw_dir, file)
    if problem:
        raise RawFileError(f"raw manifest entry {source.source_id!r}: {problem}")


def _sha256_of(path: Path) -> str:
    if path.is_dir():
        digest = hashlib.sha256()
        children = (p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        for child in sorted(c for c in children if not c.name.endswith(".tmp")):
            digest.update(child.name.encode())
            digest.update(hashlib.sha256(child.read_bytes()).digest())
        return digest.hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def is_present(
    raw_dir: Path, source: Source, members: tuple[str, ...] = (), shared: frozenset[str] = frozenset()
) -> bool:
    """True when the source's file (or folder) is in ``raw_dir``.

    ``members``: for a folder source, the file names its manifest entry lists (``files``); then
    at least one of them must be there, not counting ``shared`` ones, which are other sources'
    files too (the game system's ``.gst`` beside the BattleScribe catalogues, fetched on its own).
    When only some are there, ``read_snapshot`` names the missing ones.
    """
    path = raw_dir / source.file
    own = [m for m in members if m not in shared]
    return path.exists() and (not own or any((path / m).is_file() for m in own))


def read_snapshot(raw_dir: Path, source: Source, members: tuple[str, ...] = ()) -> RawSnapshot:
    """Read one source's file (or folder) under ``raw_dir``.

    From a folder, the files whose names end as ``pipeline.extractors.FOLDER_FILES`` lists for the
    source's format: a ``.csv`` table under its table name (``Datasheets``), another file under its
    file name (``Tyranids.cat``).

    ``members`` are the file names the manifest lists for a folder source (``files``): a missing
    one is an error, never a table silently left out.

    Raises ``RawFileError`` naming the file when it is missing, unreadable, not UTF-8, or its
    content does not match the manifest's ``sha256``, and naming the manifest entry when the file,
    or a file of the folder, leads outside ``raw_dir`` (``pipeline.manifest.path_problem``: the
    check ``read_manifest`` makes of the entry, made again of every file read).
    """
    path = raw_dir / source.file
    _check_inside(raw_dir, source, source.file)
    missing = [m for m in members if not (path / m).is_file()]
    if missing:
        raise RawFileError(
            f"{path}: {', '.join(missing)} of source {source.source_id!r} "
            f"{'is' if len(missing) == 1 else 'are'} missing (listed in the raw manifest's files); "
            f"`wh40k fetch --only {source.source_id}` brings {'it' if len(missing) == 1 else 'them'} back"
        )
    if path.is_dir():
        for child in path.iterdir():  # every file read below, as a table or for the checksum
            if not child.name.startswith("."):
                _check_inside(raw_dir, source, f"{Path(source.file).as_posix()}/{child.name}")
        endings = FOLDER_FILES.get(source.format, (".csv",))
        tables = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in endings)
        if not tables:
            raise RawFileError(
                f"{path}: no {' or '.join(endings)} files in the folder of source {source.source_id!r}"
            )
        checksums: list[SourceFile] = []
        files = {(p.stem if p.suffix.lower() == ".csv" else p.name): _read_text(p, source, checksums, p.name)
                 for p in tables}
        snapshot = RawSnapshot(source, files=files, checksums=tuple(checksums))
    else:
        checksums = []
        text = _read_text(path, source, checksums, path.name)
        snapshot = RawSnapshot(source, text=text, checksums=tuple(checksums))
    if source.sha256 and (actual := _sha256_of(path)) != source.sha256:
        raise RawFileError(
            f"{path}: content does not match the sha256 in the raw manifest for source "
            f"{source.source_id!r} (it is {actual}); if the new snapshot is intended, put that "
            "sha256 there"
        )
    return snapshot
