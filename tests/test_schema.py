"""The SQL tables are derived from the records: check that they agree, column by column."""

import datetime as dt

import duckdb
import pytest

from pipeline.load import load_database
from schemas.records import ALL_RECORDS, Source, WeaponProfile
from schemas.tables import TABLES, row_of
from pipeline.normalise.characteristics import dice


def test_every_record_has_a_table_with_its_key():
    assert set(TABLES) == {r.__table__ for r in ALL_RECORDS}
    for record in ALL_RECORDS:
        table = TABLES[record.__table__]
        assert {c.name for c in table.primary_key.columns} == set(record.__key__), record.__name__
        assert set(record.__key__) <= set(record.model_fields), record.__name__


def test_dice_fields_are_flattened_and_nullability_follows_the_annotation():
    cols = {c.name: c for c in TABLES["weapon_profiles"].columns}
    assert {"attacks_text", "attacks_dice_count", "attacks_dice_sides", "attacks_modifier"} <= set(cols)
    assert cols["skill"].nullable and not cols["armour_penetration"].nullable
    assert list(cols)[-2:] == ["source_id", "locator"]


def test_records_round_trip_through_duckdb(tmp_path):
    source = Source(
        source_id="s", title="t", file="f.txt", format="x", publisher="p", edition=10,
        kind="index", game_mode=None, version=None, version_date=dt.date(2024, 6, 1), origin="o",
    )
    weapon = WeaponProfile(
        source_id="s", locator="line 1", datasheet_id="d", weapon_name="Boltgun", profile_name="",
        is_melee=False, range_inches=24, attacks=dice("D3+1"), skill=3, strength=4,
        armour_penetration=0, damage=dice("1"), abilities_text="rapid fire 1",
    )
    db = tmp_path / "x.duckdb"
    counts = load_database([source, weapon], db)
    assert counts["sources"] == 1 and counts["weapon_profiles"] == 1
    con = duckdb.connect(str(db), read_only=True)
    row = con.execute("SELECT * FROM weapon_profiles").fetchall()[0]
    names = [d[0] for d in con.description]
    assert dict(zip(names, row)) == row_of(weapon)
    assert dict(zip(names, row))["attacks_dice_sides"] == 3
    assert con.execute("SELECT version_date FROM sources").fetchone()[0] == dt.date(2024, 6, 1)


def test_records_are_strict_and_frozen():
    with pytest.raises(Exception):
        Source(source_id="s", title="t", file="f", format="x", publisher="p", edition=12,
               kind="k", game_mode=None, version=None, version_date=None, origin="o")
    with pytest.raises(Exception):
        Source(source_id="s", title="t", file="f", format="x", publisher="p", edition=10,
               kind="k", game_mode=None, version=None, version_date=None, origin="o", colour="red")
