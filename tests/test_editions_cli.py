"""Editions on the command line (one default: the latest edition in the database) and
``wh40k unit-diff``, over a small database holding datasheets of both editions
(``tests/editions_db.py``) and over the seeds (10th-edition datasheets only)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from pipeline.build import build
from pipeline.cli import run
from pipeline.database import open_database
from pipeline.engine.service import AttackRequest, attack
from pipeline.errors import InputError, NotFoundError
from pipeline.query import latest_edition
from pipeline.unit_diff import unit_diff
from tests.conftest import RAW
from tests.editions_db import editions_db
from tests.test_build_and_cli import wh40k


@pytest.fixture(scope="module")
def db():
    return editions_db()


@pytest.fixture(scope="module")
def seeds_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("seeds") / "wh40k.duckdb"
    build(RAW, path)
    return path


def cli(capsys, *args: str) -> tuple[int, str, str]:
    status = run(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


def cli_json(capsys, *args: str):
    status, out, err = cli(capsys, *args, "--format", "json")
    assert status == 0, err
    return json.loads(out)


# --- the default edition ---------------------------------------------------------------------

def test_the_latest_edition_is_that_of_the_datasheets(db, seeds_db):
    with open_database(db) as con:
        assert latest_edition(con) == 11
    with open_database(seeds_db) as con:  # 11th-edition rules, 10th-edition datasheets only
        assert latest_edition(con) == 10


def test_units_lists_the_latest_edition_by_default(db, capsys):
    rows = cli_json(capsys, "units", "--db", str(db))
    # with the units of the 11th-edition BattleScribe set of the inputs (bsdata_cat_set_json_11e)
    assert [(r["name"], r["edition"]) for r in rows] == [
        ("Battle Sisters Squad", 11), ("Canoness", 11), ("Penitent Walker", 11), ("Sister Squad", 11),
        ("Test Canoness", 11), ("Test Thurga", 11)]
    tenth = cli_json(capsys, "units", "--db", str(db), "--edition", "10")
    assert sorted(r["name"] for r in tenth) == [
        "Battle Sisters Squad", "Canoness", "Captain in Phobos Armour", "Exorcist", "Ministorum Priest",
        "Spinegaunts", "Veteran Guardsmen"]


def test_units_that_only_another_edition_has_are_named_in_the_note(db, capsys):
    status, out, err = cli(capsys, "units", "--db", str(db), "--name", "exorcist", "--format", "json")
    assert (status, json.loads(out)) == (0, [])
    assert "no unit of edition 11 matches; edition 10 has 1 matching unit (--edition 10)" in err


def test_an_edition_the_database_lacks_is_a_one_line_error(db, capsys):
    status, out, err = cli(capsys, "units", "--db", str(db), "--edition", "9")
    assert (status, out) == (1, "")
    assert err == "Error: --edition 9: no such edition; the known editions are 10, 11\n"


def test_weapons_of_one_edition(db, capsys):
    eleventh = cli_json(capsys, "weapons", "--db", str(db), "--name", "heavy flamer")
    assert [(r["datasheet"], r["S"]) for r in eleventh] == [("Sister Squad", 5), ("Battle Sisters Squad", 7)]
    tenth = cli_json(capsys, "weapons", "--db", str(db), "--name", "heavy flamer", "--edition", "10")
    assert [(r["datasheet"], r["S"]) for r in tenth] == [("Battle Sisters Squad", 6)]
    status, out, err = cli(capsys, "weapons", "--db", str(db), "--name", "condemnor", "--format", "json")
    assert (status, json.loads(out)) == (0, [])
    assert "edition 10 has 2 matching weapons (--edition 10)" in err


def test_unit_takes_the_latest_edition_and_says_when_it_shows_another(db, capsys):
    sheet = cli_json(capsys, "unit", "Battle Sisters Squad", "--db", str(db))["datasheet"]
    assert (sheet["datasheet_id"], sheet["edition"]) == ("11e/adepta-sororitas/battle-sisters-squad", 11)
    status, out, err = cli(capsys, "unit", "Exorcist", "--db", str(db), "--format", "json")
    assert status == 0 and json.loads(out)["datasheet"]["edition"] == 10
    assert ("Exorcist: no datasheet of edition 11 (the latest in the database); showing edition 10's "
            "(10e/adepta-sororitas/exorcist)") in err
    # an edition asked for is kept to
    status, out, err = cli(capsys, "unit", "Exorcist", "--edition", "11", "--db", str(db))
    assert status == 1
    assert err.startswith("Error: no unit named 'Exorcist' in edition 11; it is in: edition 10 (matched)")


def test_rule_defaults_to_the_latest_edition_of_the_datasheets(seeds_db, capsys):
    # the seeds hold 10th-edition datasheets only: Leader is worded for matched play in the 10th
    # edition (BattleScribe's rule descriptions), Lethal Hits only for Combat Patrol games there
    leader = cli_json(capsys, "rule", "Leader", "--db", str(seeds_db))
    assert (leader["edition"], leader["source_id"]) == (10, "bsdata-10e-rule-descriptions")
    status, out, err = cli(capsys, "rule", "Lethal Hits", "--db", str(seeds_db), "--format", "json")
    assert status == 0 and json.loads(out)["edition"] == 11
    assert err == ("LETHAL HITS: no wording for matched games in edition 10 (the latest in the database); "
                   "the edition 11 wording\n")
    patrol = cli_json(capsys, "rule", "Lethal Hits", "--mode", "combat-patrol", "--db", str(seeds_db))
    assert patrol["edition"] == 10


def test_attack_takes_the_datasheets_of_its_edition(db):
    eleventh = attack(AttackRequest(attacker="Battle Sisters Squad", target="Canoness",
                                    weapons=("ministorum heavy flamer",)), db)
    (flamer,) = eleventh.weapons
    assert flamer.strength == 7  # the 11th-edition profile (S6 in the 10th)
    assert (eleventh.target.toughness, eleventh.target.wounds) == (3, 5)  # the 11th-edition Canoness: W5
    assert not [n for n in eleventh.notes if "its datasheet is from" in n]
    tenth = attack(AttackRequest(attacker="Battle Sisters Squad", target="Canoness",
                                 weapons=("ministorum heavy flamer",), edition=10), db)
    assert (tenth.weapons[0].strength, tenth.target.wounds) == (6, 4)


def test_attack_notes_a_unit_that_only_another_edition_has(db):
    out = attack(AttackRequest(attacker="Exorcist", target="Exorcist", weapons=("exorcist missile launcher",),
                               edition=11), db)
    assert out.target.toughness == 10
    assert [n for n in out.notes if "its datasheet is from" in n] == [
        "attacker 'Exorcist': its datasheet is from the 10th edition (10e/adepta-sororitas/exorcist); "
        "its profiles are used under the 11th edition's rules",
        "target 'Exorcist': its datasheet is from the 10th edition (10e/adepta-sororitas/exorcist); "
        "its profiles are used under the 11th edition's rules",
    ]


def test_attack_on_the_command_line_defaults_to_the_latest_edition(db):
    result = wh40k("attack", "Battle Sisters Squad", "--weapon", "ministorum heavy flamer", "--target", "MEQ",
                   "--db", str(db), "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [(w["name"], w["strength"]) for w in data["weapons"]] == [("Ministorum heavy flamer", 7)]
    assert {e["edition"] for e in data["explain"]} == {11}


# --- unit-diff -------------------------------------------------------------------------------

def test_unit_diff_of_battle_sisters(db):
    with open_database(db) as con:
        diff = unit_diff(con, "Battle Sisters Squad", 10, 11)
    assert (diff.old["datasheet_id"], diff.new["datasheet_id"]) == (
        "10e/adepta-sororitas/battle-sisters-squad", "11e/adepta-sororitas/battle-sisters-squad")
    changes = {(c.part, c.item, c.change, c.field): (c.old, c.new) for c in diff.changes}
    assert changes[("characteristics", "Battle Sisters Squad", "changed", "T")] == ("3", "4")
    assert changes[("characteristics", "Battle Sisters Squad", "changed", "Ld")] == ("7+", "6+")
    assert not [k for k in changes if k[0] == "characteristics" and k[3] not in ("T", "Ld")]
    assert changes[("weapons", "Ministorum heavy flamer (ranged)", "changed", "S")] == ("6", "7")
    assert changes[("weapons", "Boltgun (ranged)", "changed", "abilities")] == ("rapid fire 1", "assault, rapid fire 1")
    assert changes[("weapons", "Ministorum flamer (ranged)", "added", None)] == (
        None, '12" A D6 BS N/A S 4 AP 0 D 1 [ignores cover, torrent]')
    assert changes[("weapons", "Condemnor boltgun (ranged)", "removed", None)] == (
        '24" A 1 BS 3+ S 4 AP 0 D 1 [ANTI-PSYKER 2+, DEVASTATING WOUNDS, PRECISION, RAPID FIRE 1]', None)
    # the 10th-edition sheet merges BattleScribe's catalogue: its plasma pistol and chainsword
    removed = sorted(k[1] for k in changes if k[0] == "weapons" and k[2] == "removed")
    assert removed == ["Chainsword (melee)", "Condemnor boltgun (ranged)", "Plasma pistol - standard (ranged)",
                       "Plasma pistol - supercharge (ranged)"]
    assert not [k for k in changes if k[1] in ("Bolt pistol (ranged)", "Close combat weapon (melee)")]
    reworded = next(c for c in diff.changes if c.item == "Defenders of the Faith (datasheet)")
    assert (reworded.change, reworded.field) == ("changed", "text")
    assert reworded.marked.startswith("At the end of your Command phase, {+each+} objective [-markers-] {+marker+}")
    assert changes[("abilities", "Sanctified Vigil (datasheet)", "added", None)][1].startswith(
        "Each time an attack targets this unit")
    assert ("abilities", "Simulacrum Imperialis (wargear)", "removed", None) in changes
    assert ("abilities", "Acts of Faith (faction)", "changed", "text") not in changes
    assert sorted((k[1], k[2]) for k in changes if k[0] == "keywords") == [
        ("GRENADES", "removed"), ("SANCTIFIED", "added")]
    assert changes[("points", "10 models", "changed", "points")] == ("105", "110")


def test_unit_diff_json_and_csv(db, capsys):
    data = cli_json(capsys, "unit-diff", "Canoness", "--from", "10", "--to", "11", "--db", str(db))
    assert (data["from"]["edition"], data["to"]["edition"]) == (10, 11)
    by_field = {(c["item"], c["field"]): (c["old"], c["new"]) for c in data["changes"] if c["change"] == "changed"}
    assert by_field[("Canoness", "W")] == ("4", "5")
    assert by_field[("Canoness", "InSv")] == ("4+", "4+ (ranged attacks)")
    assert by_field[("1 model", "points")] == ("50", "55")
    status, out, err = cli(capsys, "unit-diff", "Canoness", "--db", str(db), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert status == 0 and len(rows) == len(data["changes"])
    assert list(rows[0]) == ["part", "item", "change", "field", "old", "new", "marked"]


def test_unit_diff_table_names_both_datasheets(db, capsys):
    status, out, err = cli(capsys, "unit-diff", "11e/adepta-sororitas/canoness", "--db", str(db))
    assert status == 0, err
    assert out.splitlines()[0] == ("Canoness: edition 10 (10e/adepta-sororitas/canoness, wahapedia_csv_export_10e) "
                                   "-> edition 11 (11e/adepta-sororitas/canoness, wahapedia_csv_export_11e)")
    assert "Characteristics" in out and "Points" in out


@pytest.mark.parametrize(("args", "error"), [
    (("Exorcist",), "Error: no unit named 'Exorcist' in edition 11; it is in: edition 10 (matched); change or "
                    "drop --edition / --mode; unit-diff compares a unit's datasheets of two editions\n"),
    (("Exorcst",), "Error: no unit named 'Exorcst'; did you mean: Exorcist?\n"),
    (("Canoness", "--from", "11"), "Error: --from 11 and --to 11 are the same edition; compare two editions, "
                                   "e.g. --from 10 --to 11\n"),
    (("Canoness", "--to", "12"), "Error: --to 12: no such edition; the known editions are 10, 11\n"),
])
def test_unit_diff_errors_are_one_line(db, capsys, args, error):
    status, out, err = cli(capsys, "unit-diff", *args, "--db", str(db))
    assert (status, out, err) == (1, "", error)


def test_unit_diff_help_has_an_example():
    result = wh40k("unit-diff", "--help")
    assert result.returncode == 0
    assert 'wh40k unit-diff "Battle Sisters Squad" --from 10 --to 11' in result.stdout


def test_unit_diff_raises_the_project_errors(db):
    with open_database(db) as con:
        with pytest.raises(InputError, match="same edition"):
            unit_diff(con, "Canoness", 10, 10)
        with pytest.raises(NotFoundError, match="in edition 11"):
            unit_diff(con, "Spinegaunts", 10, 11)
