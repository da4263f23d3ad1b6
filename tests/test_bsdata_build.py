"""The BattleScribe catalogues in a build with the Wahapedia export: one datasheet per unit given
by both, their disagreements in `conflicts`."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from pipeline.build import build
from pipeline.fetch import fetch_sources, read_folder_files
from pipeline.manifest import read_manifest
from tests.conftest import CORPUS, RAW

pytestmark = pytest.mark.skipif(not CORPUS.exists(), reason="the shared corpus is not beside the checkout")

WANTED = ("wahapedia-10e-export", "bsdata-10e-catalogues")


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    raw = tmp_path_factory.mktemp("bsdata") / "raw"
    shutil.copytree(RAW, raw)
    sources = [s for s in read_manifest(raw) if s.source_id in WANTED]
    fetch_sources(sources, raw, mirror=str(CORPUS), folder_files=read_folder_files(raw), delay_seconds=0)
    report = build(raw, raw / "db.duckdb")
    assert report.inconsistent == []
    return duckdb.connect(str(raw / "db.duckdb"), read_only=True)


def test_a_unit_from_both_sources_is_one_datasheet(con):
    rows = con.execute(
        "SELECT datasheet_id, source_id FROM datasheets WHERE name ILIKE 'Battle Sisters Squad' AND edition = 10 "
        "AND datasheet_id LIKE '10e/%'"
    ).fetchall()
    assert rows == [("10e/adepta-sororitas/battle-sisters-squad", "wahapedia-10e-export")]
    # the catalogue's copy was merged into it (a counted duplicate), not loaded beside it
    assert con.execute(
        "SELECT input_rows, loaded, duplicates, rejected FROM build_accounting WHERE stage = 'validate' "
        "AND source_id = 'bsdata-10e-catalogues' AND table_name = 'datasheets'"
    ).fetchone() == (465, 35, 430, 0)  # 430 of the 465 units of the 11 catalogues are Wahapedia datasheets too
    # its own id in each source is the one recorded disagreement on the datasheet row
    assert con.execute(
        "SELECT field, value_a, value_b FROM conflicts WHERE entity_key = '10e/adepta-sororitas/battle-sisters-squad'"
    ).fetchall() == [("external_id", "000000903", "f26d-450d-1c55-caeb")]


def test_characteristics_agree_so_no_conflict_and_genuine_ones_are_recorded(con):
    # Canoness: the same characteristics and invulnerable save in both sources
    assert con.execute(
        "SELECT count(*) FROM conflicts WHERE entity_key LIKE '10e/adepta-sororitas/canoness/%' "
        "AND table_name = 'model_profiles'"
    ).fetchone()[0] == 0
    # Repentia Squad: the two sources list the model lines in another order; matched by model name
    # (Repentia Superior), the characteristics agree; the other line is named in the plural by one
    assert con.execute(
        "SELECT field, value_a, value_b FROM conflicts WHERE entity_key LIKE '10e/adepta-sororitas/repentia-squad/%'"
    ).fetchall() == [("model_name", "SISTERS REPENTIA", "Sister Repentia")]
