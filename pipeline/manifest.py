"""The raw manifest (``raw/manifest.toml``): one ``Source`` per snapshot file."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import ValidationError

from pipeline.errors import ManifestError
from schemas.records import Source

MANIFEST_NAME = "manifest.toml"

_FIELD_OF_KEY = {"id": "source_id"}
#: Keys read by ``pipeline.fetch`` only (the tables of a folder source); not columns of sources.
_FETCH_ONLY_KEYS = {"files"}


def read_manifest(raw_dir: Path) -> list[Source]:
    """Read ``<raw_dir>/manifest.toml`` into ``Source`` records, in file order.

    Raises ``ManifestError`` naming the file and the entry when the manifest is missing,
    is not valid TOML, or an entry has a missing or bad field.
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
