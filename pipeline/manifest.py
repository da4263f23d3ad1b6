"""The raw manifest (``raw/manifest.toml``): one ``Source`` per snapshot file."""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Iterable, get_args

from pydantic import ValidationError

from pipeline.errors import ManifestError
from pipeline.extractors import EXTRACTORS
from pipeline.precedence import PRECEDENCE_FILE, kind_ranks
from schemas.records import Source
from schemas.types import Edition, GameMode

MANIFEST_NAME = "manifest.toml"

_FIELD_OF_KEY = {"id": "source_id"}
#: Keys read by ``pipeline.fetch`` only (``FetchSettings``); not columns of sources.
_FETCH_ONLY_KEYS = {"files", "allow_redirect_hosts", "max_bytes"}

#: A host name or an IP address as a redirect may name it (no scheme, port or path).
_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*)$")


@dataclass(frozen=True)
class FetchSettings:
    """The fetch-only keys of one ``[[source]]`` entry.

    ``files``: a folder source's table file names; ``allow_redirect_hosts``: other hosts a
    download may be redirected to (lower-case); ``max_bytes``: the most bytes the source's files
    may have together, None for the fetch's default.
    """

    files: tuple[str, ...] = ()
    allow_redirect_hosts: tuple[str, ...] = ()
    max_bytes: int | None = None


def path_problem(raw_dir: Path, file: str) -> str | None:
    """Why the manifest path ``file`` does not lead to a place inside ``raw_dir``, or None when it does.

    The one check of a raw path, shared by the build (``read_manifest``, ``pipeline.extract``) and
    by ``pipeline.fetch``. Refused: an empty path, an absolute one (``/etc/passwd``, ``C:\\x``), one
    with ``..``, and one that a symbolic link (the file itself or a folder on the way) takes
    outside ``raw_dir``. A path that does not exist yet is checked as far as it exists.

    >>> path_problem(Path("raw"), "wahapedia-10e/") is None
    True
    >>> path_problem(Path("raw"), "../../etc/passwd")
    "file '../../etc/passwd' is not a path inside the raw folder raw (it climbs out with '..'); give a path relative to raw, without '..'"
    >>> path_problem(Path("raw"), "/etc/passwd")
    "file '/etc/passwd' is not a path inside the raw folder raw (an absolute path); give a path relative to raw, without '..'"
    """
    posix = PurePosixPath(file.replace("\\", "/"))
    reason = (
        "it is empty" if not file.strip() or str(posix) == "."
        else "an absolute path" if posix.is_absolute() or PureWindowsPath(file).anchor
        else "it climbs out with '..'" if ".." in posix.parts
        else None
    )
    if reason:
        return (f"file {file!r} is not a path inside the raw folder {raw_dir} ({reason}); "
                f"give a path relative to {raw_dir}, without '..'")
    root = raw_dir.resolve()
    resolved = (root / posix).resolve()
    if not resolved.is_relative_to(root):
        return (f"file {file!r} leads through a symbolic link to {resolved}, outside the raw folder "
                f"{raw_dir}; put the file itself into the raw folder instead of a link")
    return None


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

    ``format``: a key of ``pipeline.extractors.EXTRACTORS``; ``kind``: a kind ranked in
    ``pipeline/precedence.toml`` (an unranked kind would drop out of the precedence); ``game_mode``
    and ``edition``: the values of ``schemas.types.GameMode`` and ``Edition``.
    """
    choices: dict[str, tuple[Iterable[Any], str, str]] = {
        "format": (sorted(EXTRACTORS), "formats", ""),
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
    parser in ``pipeline.extractors.EXTRACTORS``, a ``kind`` that ``pipeline/precedence.toml`` does not
    rank, a ``game_mode`` or ``edition`` that is not one of the known values (the message lists
    the known values and suggests a close one), a ``file`` outside ``raw_dir`` (``path_problem``),
    or a bad fetch-only key (``read_fetch_settings``).
    """
    path = raw_dir / MANIFEST_NAME
    data = _load_toml(path)
    sources: list[Source] = []
    seen: set[str] = set()
    for i, entry in enumerate(data.get("source", []), start=1):
        problem = _choice_problem(entry) or _fetch_settings_problem(entry)
        if problem is None and isinstance(entry.get("file"), str):
            problem = path_problem(raw_dir, entry["file"])
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


def read_fetch_settings(raw_dir: Path) -> dict[str, FetchSettings]:
    """The fetch-only keys of each ``[[source]]`` entry that has one: ``{source_id: FetchSettings}``.

    ``files = ["Datasheets.csv", ...]``: the tables of a folder source (plain file names);
    ``allow_redirect_hosts = ["objects.example.org", ...]``: hosts other than the url's that a
    download may be redirected to; ``max_bytes = 500_000_000``: the size cap of the source's files
    together. Raises ``ManifestError`` naming the entry when the manifest is missing, not TOML, or
    one of these keys has a bad value.
    """
    path = raw_dir / MANIFEST_NAME
    data = _load_toml(path)
    settings: dict[str, FetchSettings] = {}
    for i, entry in enumerate(data.get("source", []), start=1):
        if not _FETCH_ONLY_KEYS & set(entry):
            continue
        problem = _fetch_settings_problem(entry)
        if problem:
            raise ManifestError(f"{path}: [[source]] entry {i} ({entry.get('id', 'no id')}): {problem}")
        settings[str(entry.get("id"))] = FetchSettings(
            files=tuple(entry.get("files", ())),
            allow_redirect_hosts=tuple(h.lower() for h in entry.get("allow_redirect_hosts", ())),
            max_bytes=entry.get("max_bytes"),
        )
    return settings


def read_folder_files(raw_dir: Path) -> dict[str, tuple[str, ...]]:
    """The table names of each folder source: ``{source_id: ("Datasheets.csv", ...)}``.

    Read from the ``files = [...]`` key of the ``[[source]]`` entries of ``<raw_dir>/manifest.toml``
    (a fetch-only key: it is not a column of ``sources``). Entries without it are left out.
    Raises ``ManifestError`` as ``read_fetch_settings`` does.
    """
    return {sid: s.files for sid, s in read_fetch_settings(raw_dir).items() if s.files}


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"{path}: no raw manifest; create it with one [[source]] entry per raw file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{path}: not valid TOML ({exc})") from None


def _fetch_settings_problem(entry: dict[str, Any]) -> str | None:
    """The problem with an entry's fetch-only keys (``files``, ``allow_redirect_hosts``, ``max_bytes``), or None.

    >>> _fetch_settings_problem({"files": ["a.csv"], "allow_redirect_hosts": ["cdn.example.org"], "max_bytes": 10})
    >>> print(_fetch_settings_problem({"allow_redirect_hosts": ["https://cdn.example.org/"]}))
    allow_redirect_hosts: 'https://cdn.example.org/' is not a host name; write the host alone, e.g. "objects.githubusercontent.com"
    >>> _fetch_settings_problem({"max_bytes": "1GB"})
    'max_bytes must be a whole number of bytes above 0, e.g. max_bytes = 500_000_000'
    """
    if "files" in entry:
        files = entry["files"]
        if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
            return "files must be a non-empty list of table file names"
        for name in files:
            if not _is_plain_name(name):
                return f"files: {name!r} is not a plain file name (no folders, no '..')"
    if "allow_redirect_hosts" in entry:
        hosts = entry["allow_redirect_hosts"]
        if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
            return 'allow_redirect_hosts must be a list of host names, e.g. ["objects.githubusercontent.com"]'
        for host in hosts:
            if not _HOST.match(host):
                return (f"allow_redirect_hosts: {host!r} is not a host name; write the host alone, "
                        'e.g. "objects.githubusercontent.com"')
    if "max_bytes" in entry:
        cap = entry["max_bytes"]
        if not isinstance(cap, int) or isinstance(cap, bool) or cap <= 0:
            return "max_bytes must be a whole number of bytes above 0, e.g. max_bytes = 500_000_000"
    return None


def _is_plain_name(name: str) -> bool:
    """A file name without folders.

    >>> [_is_plain_name(n) for n in ("Datasheets.csv", "a/b.csv", "..", "")]
    [True, False, False, False]
    """
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name
