"""``wh40k matchups`` on a database built from the committed seeds: the tables it fills, their
agreement with ``wh40k attack``'s exact engine, the summary, and the errors."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from pipeline.build import build
from pipeline.database import open_database
from pipeline.engine import exact, from_db
from pipeline.engine.inputs import STANDARD_PROFILES
from pipeline.engine.profiles import Context
from tests.conftest import RAW
from tests.test_build_and_cli import wh40k


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> tuple[Path, dict]:
    path = tmp_path_factory.mktemp("matchups") / "wh40k.duckdb"
    build(RAW, path)
    run = wh40k("matchups", "--db", str(path), "--format", "json")
    assert run.returncode == 0, run.stderr
    return path, {"summary": json.loads(run.stdout), "stderr": run.stderr}


def _count(path: Path, sql: str) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def test_the_summary_counts_what_the_tables_hold(filled):
    path, out = filled
    summary = out["summary"]
    by_edition = {row["edition"]: row for row in summary["editions"]}
    assert set(by_edition) == {10, 11}
    ten = by_edition[10]
    assert ten["weapon_profiles"] == _count(path, "SELECT count(*) FROM matchup_weapons WHERE edition = 10") > 0
    assert ten["targets"] == _count(path, "SELECT count(*) FROM matchup_targets WHERE edition = 10")
    assert ten["distinct_pairs"] == _count(path, "SELECT count(*) FROM matchups WHERE edition = 10")
    assert ten["distinct_pairs"] == ten["batched_pairs"] + ten["refused_pairs"]
    assert summary["rows_written"]["matchups"] == _count(path, "SELECT count(*) FROM matchups")
    assert "edition 10: resolved" in out["stderr"]  # progress on stderr


def test_every_weapon_meets_every_target_through_the_lookup_tables(filled):
    path, _ = filled
    pairs = _count(path, "SELECT count(*) FROM matchup_weapons w JOIN matchup_targets t USING (edition) "
                         "JOIN matchups m ON m.edition = w.edition AND m.weapon_key = w.weapon_key "
                         "AND m.target_key = t.target_key")
    assert pairs == _count(path, "SELECT sum(n) FROM (SELECT count(*) * (SELECT count(*) FROM matchup_targets t "
                                 "WHERE t.edition = w.edition) AS n FROM matchup_weapons w GROUP BY edition)")


def test_a_stored_figure_is_the_exact_engine_s_against_a_standard_profile(filled):
    path, _ = filled
    con = open_database(path)  # the read-only sandbox still accepts the database
    try:
        row = con.execute(
            "SELECT w.datasheet_id, w.weapon_name, w.models, m.expected_damage, m.expected_models_destroyed, "
            "m.p_any_destroyed, m.p_unit_destroyed FROM matchups m JOIN matchup_weapons w USING (edition, weapon_key) "
            "JOIN matchup_targets t USING (edition, target_key) WHERE w.edition = 10 AND t.target_id = 'MEQ' "
            "AND NOT w.is_melee ORDER BY w.datasheet_id, w.weapon_name LIMIT 1").fetchone()
        weapon = next(w for w in from_db.all_weapon_profiles(con) if w.name == f"{row[0]}: {row[1]}")
    finally:
        con.close()
    r = exact.resolve([dataclasses.replace(weapon, models=row[2])], STANDARD_PROFILES["MEQ"], Context(edition=10))
    expected = (r.damage.mean, r.models_destroyed.mean, 1 - float(r.models_destroyed.pmf[0]), r.target_destroyed)
    # the figures are DOUBLE: the engine's own to rounding
    assert row[3:] == pytest.approx(expected, rel=0, abs=1e-9)


def test_running_again_replaces_the_rows(filled, tmp_path):
    path, out = filled
    copy = tmp_path / "again.duckdb"
    shutil.copy(path, copy)
    run = wh40k("matchups", "--db", str(copy), "--edition", "10", "--format", "json")
    assert run.returncode == 0, run.stderr
    assert _count(copy, "SELECT count(*) FROM matchups") == _count(path, "SELECT count(*) FROM matchups")


def test_an_unknown_edition_is_one_error_line():
    run = wh40k("matchups", "--edition", "9", "--db", "nowhere.duckdb")
    assert run.returncode == 1
    assert run.stderr.strip() == ("Error: --edition 9: the editions are 10 and 11; give one of them or leave it "
                                  "out for both")


def test_a_missing_database_is_one_error_line(tmp_path):
    run = wh40k("matchups", "--db", str(tmp_path / "none.duckdb"))
    assert run.returncode == 1
    assert run.stderr.startswith("Error: ") and "no database" in run.stderr and "Traceback" not in run.stderr


def test_help_shows_an_example():
    run = wh40k("matchups", "--help")
    assert run.returncode == 0 and "Example: wh40k matchups" in run.stdout



def test_one_worker_fills_the_same_rows_as_two(filled, tmp_path):
    path, _ = filled
    copy = tmp_path / "one.duckdb"
    shutil.copy(path, copy)
    run = wh40k("matchups", "--db", str(copy), "--workers", "1", "--format", "json")
    assert run.returncode == 0, run.stderr
    query = "SELECT * FROM matchups ORDER BY edition, weapon_key, target_key"
    con_a, con_b = duckdb.connect(str(path), read_only=True), duckdb.connect(str(copy), read_only=True)
    try:
        assert con_a.execute(query).fetchall() == con_b.execute(query).fetchall()
    finally:
        con_a.close()
        con_b.close()


def test_no_worker_is_one_error_line():
    run = wh40k("matchups", "--workers", "0", "--db", "nowhere.duckdb")
    assert run.returncode == 1
    assert run.stderr.strip() == "Error: --workers 0: give 1 or more processes (1 computes the editions one after the other)"
