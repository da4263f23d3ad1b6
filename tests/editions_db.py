"""A small database holding datasheets of both editions, built once per test run.

Its raw folder is the golden inputs listed in ``SOURCES`` (``tests/golden/inputs``: a 10th-edition
export cut, saved pages, BattleScribe catalogues of both editions) plus the made-up 11th-edition
export ``tests/data/wahapedia_csv_export_11e`` with its manifest entry
(``tests/data/wahapedia_csv_export_11e.toml``). Every file is made up for the tests. The list is
fixed, so that a golden input added later does not change the database these tests count.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from pipeline.build import build
from pipeline.manifest import MANIFEST_NAME

TESTS = Path(__file__).resolve().parent
GOLDEN_INPUTS = TESTS / "golden" / "inputs"
EXPORT_11E = TESTS / "data" / "wahapedia_csv_export_11e"
#: The golden inputs (their manifest ids) the database is built from.
SOURCES = frozenset({
    "wahapedia_csv_export_10e", "wahapedia_html_spinegaunts", "wahapedia_html_veteran_guardsmen",
    "wahapedia_html_captain_in_phobos_armour", "bsdata_gst_xml_10e", "bsdata_cat_set_10e",
    "bsdata_gst_json_11e", "bsdata_cat_json_11e", "bsdata_cat_set_json_11e",
})


def _listed(manifest: str) -> str:
    """The golden inputs' manifest with the ``[[source]]`` entries of ``SOURCES`` only."""
    head, *entries = manifest.split("\n[[source]]\n")
    kept = [e for e in entries if re.search(r'^id = "([^"]+)"', e, re.MULTILINE).group(1) in SOURCES]
    assert len(kept) == len(SOURCES), "a source of SOURCES is not in the golden inputs' manifest"
    return "\n[[source]]\n".join([head, *kept])


def editions_raw(dest: Path) -> Path:
    """Write the raw folder of both editions into ``dest`` (created); return it."""
    shutil.copytree(GOLDEN_INPUTS, dest)
    shutil.copytree(EXPORT_11E, dest / EXPORT_11E.name)
    entry = EXPORT_11E.with_suffix(".toml").read_text(encoding="utf-8")
    manifest = _listed((GOLDEN_INPUTS / MANIFEST_NAME).read_text(encoding="utf-8"))
    (dest / MANIFEST_NAME).write_text(manifest.rstrip("\n") + "\n\n" + entry, encoding="utf-8")
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
