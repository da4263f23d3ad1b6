"""A small database holding datasheets of both editions, built once per test run.

Its raw folder is the golden inputs (``tests/golden/inputs``: a 10th-edition export cut, saved
pages, BattleScribe catalogues of both editions) plus the made-up 11th-edition export
``tests/data/wahapedia_csv_export_11e`` with its manifest entry
(``tests/data/wahapedia_csv_export_11e.toml``). Every file is made up for the tests.
"""

from __future__ import annotations

import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from pipeline.build import build
from pipeline.manifest import MANIFEST_NAME

TESTS = Path(__file__).resolve().parent
GOLDEN_INPUTS = TESTS / "golden" / "inputs"
EXPORT_11E = TESTS / "data" / "wahapedia_csv_export_11e"


def editions_raw(dest: Path) -> Path:
    """Write the raw folder of both editions into ``dest`` (created); return it."""
    shutil.copytree(GOLDEN_INPUTS, dest)
    shutil.copytree(EXPORT_11E, dest / EXPORT_11E.name)
    entry = EXPORT_11E.with_suffix(".toml").read_text(encoding="utf-8")
    with (dest / MANIFEST_NAME).open("a", encoding="utf-8") as manifest:
        manifest.write("\n" + entry)
    return dest


@lru_cache(maxsize=1)
def editions_db() -> Path:
    """The database of both editions (built on first use into a temporary folder that the test
    run's end removes: ``tests/conftest.py`` removes the parent of ``RAW``)."""
    from tests.conftest import RAW

    folder = Path(tempfile.mkdtemp(prefix="editions-", dir=RAW.parent))
    db = folder / "editions.duckdb"
    build(editions_raw(folder / "raw"), db)
    return db
