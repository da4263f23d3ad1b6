"""The raw manifest (``raw/manifest.toml``): one ``Source`` per snapshot file."""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Any, Iterable, get_args

from pydantic import ValidationError

from pipeline.errors import ManifestError
from pipeline.parsers import PARSERS
from pipeline.precedence import PRECEDENCE_FILE, kind_ranks
from schemas.records import Source
from schemas.types import Edition, GameMode

MANIFEST_NAME = "manifest.toml"

_FIELD_OF_KEY = {"id": "source_id"}
#: Keys read by ``pipeline.fetch`` only (the tables of a folder source); not columns of sources.
_FETCH_ONLY_KEYS = {"files"}


def unknown_choice(key: str, value: Any, known: Iterable[Any], plural: str, hint: str = "") -> str | None:
    """The problem with ``value`` for a manifest key that takes one of ``known`` values, or None.

    The message names the known values (``plural``, then ``hint``) and, when one is close to
    ``value``, suggests it.

    >>> unknown_choice("format", "wahapedia-txt-10e", ["wahapedia-csv", "wahapedia-text-10e"], "formats")
    "unknown format 'wahapedia-txt-10e'; known formats: wahapedia-csv, wahapedia-text-10e; did you mean 'wahapedia-text-10e'?"
    >>> unknown_choice("edition", 9, [10, 11], "editions", " (omit it to detect it)")
    'unknown edition 9; known editions: 10, 11 (omit it to detect it)'
    >>> unknown_choice("edition", 10, [10, 11], "editions") is None
    True
    """
    known = list(known)
    if any(value == k and type(value) is type(k) for k in known):
        return None
    names = {str(k): k for k in known}
    close = difflib.get_close_matches(str(value), list(names), n=1, cutoff=0.6)
    suggestion = f"; did you mean {names[close[0]]!r}?" if close else ""
    return f"unknown {key} {value!r}; known {plural}: {', '.join(names)}{hint}{suggestion}"


def _choice_problem(entry: dict[str, Any]) -> str | None:
    """The first enumerated key of a manifest entry whose value is not a known one, as a message.

    ``format``: a key of ``pipeline.parsers.PARSERS``; ``kind``: a kind ranked in
    ``pipeline/precedence.toml`` (an unranked kind would drop out of the precedence); ``game_mode``
    and ``edition``: the values of ``schemas.types.GameMode`` and ``Edition``.
    """
    choices: dict[str, tuple[Iterable[Any], str, str]] = {
        "format": (sorted(PARSERS), "formats", ""),
        "kind": (sorted(kind_ranks()), "kinds",
                 f" (ranked in pipeline/{PRECEDENCE_FILE.name}; a new kind needs a rank there)"),
        "game_mode": (get_args(GameMode), "game modes", " (leave game_mode out for a source of every game mode)"),
        "edition": (get_args(Edition), "editions", " (leave edition out to have the build detect it)"),
    }
    for key, (known, plural, hint) in choices.items():
        if key in entry:
            problem = unknown_choice(key, entry[key], known, plural, hint)
            if problem:
                return problem
    return None


def read_manifest(raw_dir: Path) -> list[Source]:
    """Read ``<raw_dir>/manifest.toml`` into ``Source`` records, in file order.

    Raises ``ManifestError`` naming the file and the entry when the manifest is missing,
    is not valid TOML, or an entry has a missing or bad field: among them a ``format`` with no
    parser in ``pipeline.parsers.PARSERS``, a ``kind`` that ``pipeline/precedence.toml`` does not
    rank, a ``game_mode`` or ``edition`` that is not one of the known values (the message lists
    the known values and suggests a close one).
    """
    path = raw_dir / MANIFEST_NAME
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(
            f"{path}: no raw manifest; create it with one [[source]] entry per raw file"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{path}: not valid TOML ({exc})") from None
    sources: list[Source] = []
    seen: set[str] = set()
    for i, entry in enumerate(data.get("source", []), start=1):
        problem = _choice_problem(entry)
        if problem:
            raise ManifestError(f"{path}: [[source]] entry {i} ({entry.get('id', 'no id')}): {problem}")
        fields = {_FIELD_OF_KEY.get(k, k): v for k, v in entry.items() if k not in _FETCH_ONLY_KEYS}
        fields.setdefault("game_mode", None)
        fields.setdefault("version", None)
        fields.setdefault("version_date", None)
        fields.setdefault("edition", None)
        try:
            source = Source(**fields)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors()
            )
            raise ManifestError(
                f"{path}: [[source]] entry {i} ({entry.get('id', 'no id')}): {problems}"
            ) from None
        if source.source_id in seen:
            raise ManifestError(f"{path}: [[source]] entry {i}: duplicate id {source.source_id!r}")
        seen.add(source.source_id)
        sources.append(source)
    if not sources:
        raise ManifestError(f"{path}: no [[source]] entries")
    return sources


def read_folder_files(raw_dir: Path) -> dict[str, tuple[str, ...]]:
    """The table names of each folder source: ``{source_id: ("Datasheets.csv", ...)}``.

    Read from the ``files = [...]`` key of the ``[[source]]`` entries of ``<raw_dir>/manifest.toml``
    (a fetch-only key: it is not a column of ``sources``). Entries without it are left out.
    Raises ``ManifestError`` when the manifest is missing, not TOML, or ``files`` is not a list of
    plain file names.
    """
    path = raw_dir / "manifest.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"{path}: no raw manifest; create it with one [[source]] entry per raw file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{path}: not valid TOML ({exc})") from None
    folders: dict[str, tuple[str, ...]] = {}
    for i, entry in enumerate(data.get("source", []), start=1):
        if "files" not in entry:
            continue
        files = entry["files"]
        where = f"{path}: [[source]] entry {i} ({entry.get('id', 'no id')})"
        if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
            raise ManifestError(f"{where}: files must be a non-empty list of table file names")
        for name in files:
            if not _is_plain_name(name):
                raise ManifestError(f"{where}: files: {name!r} is not a plain file name (no folders, no '..')")
        folders[str(entry.get("id"))] = tuple(files)
    return folders


def _is_plain_name(name: str) -> bool:
    """A file name without folders.

    >>> [_is_plain_name(n) for n in ("Datasheets.csv", "a/b.csv", "..", "")]
    [True, False, False, False]
    """
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name
