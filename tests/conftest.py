"""Shared test helpers: the seed snapshots, seed sources, golden files."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from pipeline.manifest import MANIFEST_NAME, read_manifest
from schemas.records import Record, Source

ROOT = Path(__file__).resolve().parent.parent
#: The project's working raw folder: the committed seed snapshots plus whatever `wh40k fetch`
#: has brought in. Tests do not read it directly (see ``RAW``).
PROJECT_RAW = ROOT / "raw"
GOLDEN = Path(__file__).resolve().parent / "golden"
#: The corpus of real public data sits beside the checkout (never committed). The tests that read
#: it skip when it is absent; ``WH40K_CORPUS=DIR`` points them elsewhere (a folder that does not
#: exist runs the suite as a clone without the corpus does).
CORPUS = Path(os.environ.get("WH40K_CORPUS") or ROOT.parent / "shared" / "corpus")

#: Set UPDATE_GOLDEN=1 to rewrite golden files; review the diff before committing.
UPDATE_GOLDEN = os.environ.get("UPDATE_GOLDEN") == "1"


def copy_seed_snapshots(raw_dir: Path, dest: Path) -> Path:
    """Copy ``raw_dir/manifest.toml`` and the files of its seed sources into ``dest``; return ``dest``.

    Seed sources are the manifest entries not marked ``fetch_only`` (the snapshots kept in git).
    Fetched files and folders in ``raw_dir`` are left behind, so a build of ``dest`` skips the
    ``fetch_only`` sources whatever ``wh40k fetch`` has put into ``raw_dir``. Raises
    ``ManifestError`` for a bad manifest and ``FileNotFoundError`` for a missing seed file.
    """
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(raw_dir / MANIFEST_NAME, dest / MANIFEST_NAME)
    for source in read_manifest(raw_dir):
        if not source.fetch_only:
            (dest / source.file).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(raw_dir / source.file, dest / source.file)
    return dest


#: A raw folder holding only the manifest and the committed seed snapshots (a temporary copy of
#: ``PROJECT_RAW``, made once per test run and removed at its end): what the tests mean by "the
#: seeds". A module constant rather than a fixture because test modules import it by name.
RAW = copy_seed_snapshots(PROJECT_RAW, Path(tempfile.mkdtemp(prefix="wh40k-tests-")) / "raw")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the temporary seed folder when the test run ends."""
    shutil.rmtree(RAW.parent, ignore_errors=True)


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
