"""The SQL tables are derived from the records: check that they agree, column by column."""

import datetime as dt
import os
import signal

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


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_load_is_held_until_between_two_statements(tmp_path, monkeypatch, signum):
    # A signal that lands inside DuckDB comes back wrapped in whatever DuckDB was doing (CI once
    # saw "counting the rows of the object registered as '_batch' failed: KeyboardInterrupt");
    # held back, it reaches its own handler after the statement, and no file is left.
    import pipeline.load as load

    received = []

    def on_sigterm(number, _frame):  # as the build's handler: noted, then an interrupt
        received.append(number)
        raise KeyboardInterrupt

    previous_sigterm = signal.signal(signal.SIGTERM, on_sigterm)

    source = Source(
        source_id="s", title="t", file="f.txt", format="x", publisher="p", edition=10,
        kind="index", game_mode=None, version=None, version_date=None, origin="o",
    )
    db = tmp_path / "x.duckdb"
    load_database([source], db)
    previous = db.read_bytes()
    finished = []
    real = load.column_values

    def interrupted_column_values(record_type, rows):
        os.kill(os.getpid(), signum)  # in the middle of the first table
        values = real(record_type, rows)
        finished.append(record_type.__table__)
        return values

    monkeypatch.setattr(load, "column_values", interrupted_column_values)
    try:
        with pytest.raises(KeyboardInterrupt):
            load_database([source], db)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert signal.getsignal(signal.SIGTERM) is on_sigterm
    finally:
        signal.signal(signal.SIGTERM, previous_sigterm)
    assert finished == ["sources"]  # the table's statement ran to its end, then the signal
    assert received == ([signal.SIGTERM] if signum == signal.SIGTERM else [])
    assert db.read_bytes() == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.duckdb"]


def test_records_are_strict_and_frozen():
    with pytest.raises(Exception):
        Source(source_id="s", title="t", file="f", format="x", publisher="p", edition=12,
               kind="k", game_mode=None, version=None, version_date=None, origin="o")
    with pytest.raises(Exception):
        Source(source_id="s", title="t", file="f", format="x", publisher="p", edition=10,
               kind="k", game_mode=None, version=None, version_date=None, origin="o", colour="red")


def test_a_dice_field_is_validated_as_the_other_fields():
    # DiceExpr is a dataclass (no pydantic for the engine); in a record pydantic validates it
    from pydantic import ValidationError

    from schemas.dice import DiceExpr

    fields = dict(source_id="s", locator="line 1", datasheet_id="d", weapon_name="Boltgun", profile_name="",
                  is_melee=False, range_inches=24, skill=3, strength=4, armour_penetration=0, damage=dice("1"),
                  abilities_text="")
    given = WeaponProfile(**fields, attacks={"text": "D3+1", "dice_count": "1", "dice_sides": 3, "modifier": 1})
    assert given.attacks == dice("D3+1") == DiceExpr(text="D3+1", dice_count=1, dice_sides=3, modifier=1)
    assert given.model_dump()["attacks"] == {"text": "D3+1", "dice_count": 1, "dice_sides": 3, "modifier": 1}
    for bad in ({"text": "D3", "dice_count": 1, "dice_sides": 3, "modifier": 0, "colour": "red"},
                {"text": "D1", "dice_count": 1, "dice_sides": 1, "modifier": 0},
                {"text": "-D3", "dice_count": -1, "dice_sides": 3, "modifier": 0}):
        with pytest.raises(ValidationError):
            WeaponProfile(**fields, attacks=bad)
    with pytest.raises(ValueError, match="dice_count '1' is not int"):
        DiceExpr(text="1", dice_count="1", dice_sides=0)
    with pytest.raises(AttributeError):
        dice("D6").modifier = 1  # frozen


def test_the_build_states_the_schema_version_of_the_declarations(tmp_path):
    from importlib.metadata import version

    from schemas.catalog import schema_version

    db = tmp_path / "x.duckdb"
    counts = load_database([], db)
    assert counts["schema_info"] == 1
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT schema_version, project_version FROM schema_info").fetchall() == [
        (schema_version(), version("wh40k-rules-db"))]
    assert len(schema_version()) == 16 and int(schema_version(), 16) >= 0


def test_the_schema_version_changes_with_any_table_column_or_view():
    import hashlib

    from schemas.catalog import ColumnSpec, catalog_text, declared_tables, schema_version, view_statements

    tables, views = declared_tables(), view_statements()
    digest = lambda t, v: hashlib.sha256(catalog_text(t, v).encode()).hexdigest()[:16]  # noqa: E731
    assert digest(tables, views) == schema_version()
    datasheets = tables["datasheets"]
    changed = {
        "a column renamed": {**tables, "datasheets": (datasheets[0]._replace(name="renamed"), *datasheets[1:])},
        "a type changed": {**tables, "datasheets": (datasheets[0]._replace(sql_type="INTEGER"), *datasheets[1:])},
        "nullability changed": {**tables, "datasheets": tuple(c._replace(nullable=not c.nullable) for c in datasheets)},
        "a column added": {**tables, "datasheets": (*datasheets, ColumnSpec("extra", "VARCHAR", True))},
        "a column dropped": {**tables, "datasheets": datasheets[:-1]},
        "columns reordered": {**tables, "datasheets": tuple(reversed(datasheets))},
        "a table dropped": {k: v for k, v in tables.items() if k != "rule_parts"},
        "a table added": {**tables, "notes": (ColumnSpec("a", "INTEGER", True),)},
    }
    versions = {name: digest(t, views) for name, t in changed.items()}
    versions["a view changed"] = digest(tables, [views[0] + " WHERE true", *views[1:]])
    assert schema_version() not in versions.values()
    assert len(set(versions.values())) == len(versions)


def test_declared_columns_are_the_columns_duckdb_reports(tmp_path):
    from schemas.catalog import declared_tables

    db = tmp_path / "x.duckdb"
    load_database([], db)
    con = duckdb.connect(str(db), read_only=True)
    keys = {t: set(k) for t, k in con.execute(
        "SELECT table_name, constraint_column_names FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'"
    ).fetchall()}
    found: dict[str, list] = {}
    for table, column, sql_type, nullable in con.execute(
            "SELECT c.table_name, c.column_name, c.data_type, c.is_nullable FROM duckdb_columns() c "
            "JOIN duckdb_tables() USING (database_name, schema_name, table_name) ORDER BY table_name, column_index"
    ).fetchall():
        found.setdefault(table, []).append((column, sql_type, nullable, column in keys.get(table, ())))
    assert found == {t: [tuple(c) for c in cols] for t, cols in declared_tables().items()}


def test_duckdb_ddl_without_sqlalchemy_gives_the_catalog_of_sqlalchemys_ddl():
    """The DuckDB build writes its DDL from the column specs (no SQLAlchemy import): DuckDB's
    catalog of it is the one of the SQLAlchemy tables compiled by duckdb_engine."""
    from duckdb_engine import Dialect

    from pipeline.load import create_table_statements
    from schemas.catalog import duckdb_create_statements

    catalogs = []
    for statements in (create_table_statements(Dialect()), duckdb_create_statements()):
        con = duckdb.connect()
        for statement in statements:
            con.execute(statement)
        catalogs.append((
            con.execute("SELECT table_name, sql FROM duckdb_tables() ORDER BY table_name").fetchall(),
            con.execute("SELECT table_name, column_index, column_name, data_type, is_nullable "
                        "FROM duckdb_columns() ORDER BY table_name, column_index").fetchall(),
            con.execute("SELECT table_name, constraint_type, constraint_column_names FROM duckdb_constraints() "
                        "ORDER BY ALL").fetchall(),
        ))
        con.close()
    assert len(catalogs[0][0]) == len(TABLES)
    assert catalogs[1] == catalogs[0]
