"""Shared test helpers: the project's raw folder, seed sources, golden files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pipeline.manifest import read_manifest
from schemas.records import Record, Source

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "raw"
GOLDEN = Path(__file__).resolve().parent / "golden"
#: The corpus of real public data sits beside the checkout (never committed).
CORPUS = ROOT.parent / "shared" / "corpus"

#: Set UPDATE_GOLDEN=1 to rewrite golden files; review the diff before committing.
UPDATE_GOLDEN = os.environ.get("UPDATE_GOLDEN") == "1"


def seed_source(source_id: str) -> tuple[str, Source]:
    """The text and manifest ``Source`` of a raw snapshot, by source id."""
    for source in read_manifest(RAW):
        if source.source_id == source_id:
            return (RAW / source.file).read_text(encoding="utf-8"), source
    raise KeyError(source_id)


def records_as_json(records: list[Record]) -> list[dict]:
    """Records as JSON-ready dicts, tagged with their table, in a stable order."""
    rows = [{"table": r.__table__, **r.model_dump(mode="json")} for r in records]
    return sorted(rows, key=lambda r: (r["table"], json.dumps(r, sort_keys=True)))


def assert_golden(name: str, data: object) -> None:
    """Compare ``data`` with ``tests/golden/<name>.json`` (rewritten when UPDATE_GOLDEN=1)."""
    path = GOLDEN / f"{name}.json"
    text = json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if UPDATE_GOLDEN or not path.exists():
        if not UPDATE_GOLDEN:
            pytest.fail(f"{path} does not exist: run with UPDATE_GOLDEN=1 to create it, then review it")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{path} differs: rerun with UPDATE_GOLDEN=1 and review the diff"
