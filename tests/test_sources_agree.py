"""How the sources agree: the merge's counts (``source_agreement``) and ``wh40k sources-agree``."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json

import pytest

from pipeline.build import validate
from pipeline.cli import run
from pipeline.database import open_database
from pipeline.extractors import ParseResult
from pipeline.sources_agree import agreement_by_pair, disagreements
from schemas.records import ModelProfile
from tests.editions_db import editions_db
from tests.test_merge import profile, sheet, source


@pytest.fixture(scope="module")
def db():
    return editions_db()


def cli(capsys, *args: str) -> tuple[int, str, str]:
    status = run(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_the_merge_counts_agreeing_and_disagreeing_fields():
    sources = [source("official", "codex", dt.date(2025, 1, 1)), source("wahapedia", "export", dt.date(2025, 11, 14)),
               source("pages", "datasheet-page", dt.date(2025, 11, 14))]
    no_leadership = profile("pages", 9, 14, 6).model_copy(update={"leadership": None})
    results = {
        "official": ParseResult(records=[sheet("official"), profile("official", 9, 14, 6)]),
        "wahapedia": ParseResult(records=[sheet("wahapedia"), profile("wahapedia", 10, 12, 6)]),
        "pages": ParseResult(records=[sheet("pages"), no_leadership]),
    }
    valid = validate(sources, results)
    got = {(a.source_id_a, a.source_id_b, a.table_name, a.field): (a.rows, a.compared, a.agreed, a.disagreed,
                                                                  a.only_a, a.only_b)
           for a in valid.agreement}
    # each later source is compared with the row kept (the codex's); the pages lack Leadership
    assert got[("official", "wahapedia", "model_profiles", "toughness")] == (1, 1, 0, 1, 0, 0)
    assert got[("official", "wahapedia", "model_profiles", "wounds")] == (1, 1, 0, 1, 0, 0)
    assert got[("official", "wahapedia", "model_profiles", "objective_control")] == (1, 1, 1, 0, 0, 0)
    assert got[("official", "pages", "model_profiles", "toughness")] == (1, 1, 1, 0, 0, 0)
    assert got[("official", "pages", "model_profiles", "leadership")] == (1, 0, 0, 0, 1, 0)
    assert got[("official", "pages", "model_profiles", "invulnerable_save")] == (1, 0, 0, 0, 0, 0)
    assert got[("official", "wahapedia", "datasheets", "starting_strength")] == (1, 1, 1, 0, 0, 0)
    # the key and the fields the datasheets were matched on are not counted
    assert not [k for k in got if k[3] in ("datasheet_id", "line", "name", "edition", "faction_id")]
    assert {a.edition for a in valid.agreement} == {10}
    # every disagreement is a conflicts row
    assert sum(a.disagreed for a in valid.agreement) == len(valid.conflicts) == 2
    assert [r for r in valid.records if isinstance(r, ModelProfile)][0].source_id == "official"


def test_the_database_counts_match_its_conflicts(db):
    with open_database(db) as con:
        mismatched = con.execute("""
            SELECT a.source_id_a, a.source_id_b, a.table_name, a.field, a.disagreed, count(c.field) AS conflicts
            FROM source_agreement a LEFT JOIN conflicts c
              ON c.source_id_a = a.source_id_a AND c.source_id_b = a.source_id_b
             AND c.table_name = a.table_name AND c.field = a.field
            GROUP BY ALL HAVING a.disagreed <> count(c.field)""").fetchall()
        total = con.execute("SELECT sum(disagreed), (SELECT count(*) FROM conflicts) FROM source_agreement").fetchone()
        checks = con.execute("SELECT count(*) FROM source_agreement "
                             "WHERE rows < compared + only_a + only_b OR compared <> agreed + disagreed").fetchone()
    assert mismatched == []
    assert total == (6, 6)
    assert checks == (0,)


def test_agreement_per_pair_of_the_small_database(db):
    with open_database(db) as con:
        pairs = {(p["edition"], p["source_id_a"], p["source_id_b"]): p for p in agreement_by_pair(con)}
        tenth = {k: v for k, v in pairs.items() if k[0] == 10}
        p = pairs[(10, "wahapedia_csv_export_10e", "bsdata_cat_set_10e")]
        # the export and the catalogue give Battle Sisters Squad and Canoness; they disagree on a
        # model name, a Bolt pistol's BS, an ability's wording and a weapon's abilities
        assert (p["datasheets"], p["disagreed"]) == (2, 4)
        assert p["agreed"] + p["disagreed"] == p["fields_compared"]
        q = pairs[(11, "wahapedia_csv_export_11e", "bsdata_cat_json_11e")]
        # the Canoness: W 5 against 4, and the wording of its invulnerable save's note
        assert (q["datasheets"], q["disagreed"]) == (1, 2)
        assert len(tenth) == 2 and set(agreement_by_pair(con, 11).columns) == set(p)
        assert [(r["source_id_a"], r["source_id_b"]) for r in agreement_by_pair(con, 11)] == [
            ("wahapedia_csv_export_11e", "bsdata_cat_json_11e")]


def test_sources_agree_json(db, capsys):
    status, out, err = cli(capsys, "sources-agree", "--edition", "11", "--db", str(db), "--format", "json")
    assert status == 0, err
    data = json.loads(out)
    (pair,) = data["pairs"]
    assert (pair["source_id_a"], pair["source_id_b"], pair["datasheets"], pair["disagreed"]) == (
        "wahapedia_csv_export_11e", "bsdata_cat_json_11e", 1, 2)  # W, and the invulnerable save note
    wounds = next(f for f in data["fields"] if (f["table_name"], f["field"]) == ("model_profiles", "wounds"))
    assert (wounds["compared"], wounds["agreed"], wounds["disagreed"], wounds["agreed_percent"]) == (1, 0, 1, 0.0)
    # the most disagreeing first: the two fields of one disagreement each, by name
    assert [f["field"] for f in data["fields"][:2]] == ["invulnerable_save_note", "wounds"]
    assert pair["agreed_percent"] == round(100 * pair["agreed"] / pair["fields_compared"], 2)


def test_sources_agree_lists_the_disagreements_of_a_field(db, capsys):
    status, out, err = cli(capsys, "sources-agree", "--list", "weapon_profiles.skill", "--db", str(db),
                           "--format", "csv")
    assert status == 0, err
    (row,) = csv.DictReader(io.StringIO(out))
    assert (row["edition"], row["entity_key"], row["value_a"], row["source_id_a"], row["value_b"], row["source_id_b"]) == (
        "10", "10e/adepta-sororitas/canoness|Bolt pistol|ranged|", "2", "wahapedia_csv_export_10e", "3",
        "bsdata_cat_set_10e")
    with open_database(db) as con:
        assert [r["entity_key"] for r in disagreements(con, "wounds")] == ["11e/adepta-sororitas/canoness|1"]
        assert disagreements(con, "wounds", 10) == []


def test_sources_agree_table_and_csv(db, capsys):
    status, out, err = cli(capsys, "sources-agree", "--db", str(db))
    assert status == 0, err
    assert "Per pair of sources" in out and "Per field" in out
    status, out, err = cli(capsys, "sources-agree", "--db", str(db), "--format", "csv", "--edition", "10")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["edition"] for r in rows} == {"10"}
    skill = next(r for r in rows if r["field"] == "skill")
    assert (skill["rows"], skill["compared"], skill["agreed"], skill["disagreed"]) == ("6", "5", "4", "1")


@pytest.mark.parametrize(("args", "error"), [
    (("--list", "skil"), "Error: no field 'skil' was compared between sources; did you mean: weapon_profiles.skill?; "
                         "list the fields with `wh40k sources-agree` (as table.field, e.g. weapon_profiles.skill)\n"),
    (("--edition", "12"), "Error: --edition 12: no such edition; the known editions are 10, 11\n"),
])
def test_sources_agree_errors_are_one_line(db, capsys, args, error):
    assert cli(capsys, "sources-agree", *args, "--db", str(db)) == (1, "", error)
