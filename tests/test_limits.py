"""The limits of ``pipeline/limits.py`` and the hostile inputs that once hung or gave a traceback.

Each test is one finding of "Safe with hostile input": the value that caused it, and the exact
error (or reject) it gives now, which names the limit and the value given.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from pipeline import limits, query
from pipeline.build import build
from pipeline.engine import exact
from pipeline.engine.inputs import STANDARD_PROFILES, parse_target
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.engine.service import AttackRequest, attack
from pipeline.errors import InputError, NormaliseError
from pipeline.normalise.characteristics import characteristic_int, dice
from pipeline.extractors import get_extractor
from pipeline.extractors.psv import read_table
from schemas.records import Source
from schemas.types import DiceExpr
from tests.conftest import ROOT, RAW
from tests.test_build_and_cli import wh40k
from tests.test_parser_wahapedia_html import _RIGHT, _snippet
from tests.test_parser_wahapedia_html import _source as html_source

MEQ = STANDARD_PROFILES["MEQ"]
EXAMPLE = "'T4 Sv3+ W2 x10 inv4+ fnp5+ INFANTRY'"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("limits-db") / "wh40k.duckdb"
    build(RAW, path)
    return path


def boltgun(**fields) -> Weapon:
    values = dict(name="Boltgun", attacks=dice("2"), skill=3, strength=4, armour_penetration=0, damage=dice("1"))
    values.update(fields)
    return Weapon(**values)


def source(fmt: str) -> Source:
    return Source(source_id="hostile", title="hostile input", file="hostile.txt", format=fmt, publisher="test",
                  edition=10, kind="export", game_mode=None, version=None, version_date=None, origin="made up")


def rejects(fmt: str, text: str) -> list[str]:
    return [r.reason for r in get_extractor(fmt)(text, source(fmt)).rejects]


# ---- attack: models, dice, attacks, the target, the work -------------------------------------


@pytest.mark.parametrize("models", ["1000000000000000000000", "1000000"])
def test_models_over_the_limit_is_an_error_naming_it(db, models):
    out = wh40k("attack", "Battle Sisters Squad", "--weapon", "boltgun", "--models", models, "--target", "MEQ",
                "--db", str(db))
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr == f"Error: --models {models}: at most 1000 models fire one weapon; give a smaller --models\n"


def test_a_count_of_weapons_over_the_limit_is_an_error(db):
    with pytest.raises(InputError) as err:
        attack(AttackRequest(attacker="Battle Sisters Squad", target="MEQ", weapons=("1001 boltguns",)), db)
    assert str(err.value) == "--weapon '1001 boltguns': at most 1000 of one weapon are fired; give a smaller number"


def test_target_models_over_the_limit_is_an_error(db):
    with pytest.raises(InputError) as err:
        attack(AttackRequest(attacker="Battle Sisters Squad", target="MEQ", target_models=1_000_000), db)
    assert str(err.value) == ("--target-models 1000000: at most 500 wounds in the target unit (models x Wounds); "
                              "give fewer --target-models")


@pytest.mark.parametrize("field", ["damage", "attacks"])
def test_a_d1000000_is_refused_before_any_work(field):
    with pytest.raises(InputError) as err:
        exact.resolve([boltgun(**{field: dice("D1000000")})], MEQ)
    assert str(err.value) == f"weapon 'Boltgun': {field.title()} D1000000: at most 20 sides on a die (D3, D6)"


def test_attacks_damage_and_hits_of_one_weapon_have_limits():
    cases = [
        (boltgun(attacks=dice("1000000")),
         "weapon 'Boltgun': 1 models x up to 1000000 attacks = 1000000 attacks: at most 1000 attacks of one weapon; "
         "give fewer models"),
        (boltgun(models=1001), "weapon 'Boltgun': 1001 models: at most 1000 models fire one weapon; give fewer models"),
        (boltgun(damage=dice("101")), "weapon 'Boltgun': Damage 101 (up to 101): at most 100 Damage per attack"),
        (boltgun(models=500, sustained_hits=dice("1")),
         "weapon 'Boltgun': 1000 attacks with Sustained Hits 1 score up to 2000 hits: at most 1000 hits of one "
         "weapon; give fewer models"),
        (boltgun(models=500, damage=dice("21")),
         "weapon 'Boltgun': 1000 hits of up to 21 Damage = 21000 damage: at most 20000 damage of one weapon; "
         "give fewer models"),
        (boltgun(attacks=dice("11D6")), "weapon 'Boltgun': Attacks 11D6: at most 10 dice in one dice expression"),
    ]
    for weapon, message in cases:
        with pytest.raises(InputError) as err:
            exact.resolve([weapon], MEQ)
        assert str(err.value) == message


def test_the_engine_work_of_one_attack_has_a_limit():
    big = Target(toughness=4, save=3, wounds=500, models=1, name="1 x W500")
    weapons = [boltgun(name=f"w{i}", attacks=dice("1"), models=1000) for i in range(4)]
    assert exact.resolve(weapons, big).damage.mean == pytest.approx(4 * 1000 * 2 / 3 * 1 / 2 * 1 / 3, abs=1e-9)
    # Devastating Wounds weapons of different Damage against 500 wounds: two resolve against every
    # shape (the kill counts, or the last weapon's count expanded: tests/engine/test_last_expanded.py);
    # three against 5 x W100 are too much work for every method (pending counts: a product of
    # three; kill counts: a tensor of W^3 x models cells; the last expanded: a product of two)
    devastating = [boltgun(name=f"d{d}", attacks=dice("1"), damage=dice(d), models=1000, devastating_wounds=True)
                   for d in "123"]
    assert exact.resolve(devastating[:2], Target(toughness=4, save=3, wounds=2, models=250)).models_destroyed.pmf.size == 251
    with pytest.raises(InputError) as err:
        exact.resolve(devastating, Target(toughness=4, save=3, wounds=100, models=5, name="5 x W100"))
    assert str(err.value) == (
        "this attack needs about 3.5e+10 steps of the exact engine: at most 6e+09 in one attack (3 weapon profiles "
        "against 5 x W100); resolve fewer weapons or models at once, a smaller target, or simulate it (pipeline.engine.simulate.simulate)")


def test_more_weapons_than_the_limit_is_an_error():
    with pytest.raises(InputError) as err:
        exact.resolve([boltgun()] * (limits.MAX_WEAPONS_PER_ATTACK + 1), MEQ)
    assert str(err.value) == "101 weapons: at most 100 weapon profiles in one attack; resolve them in several attacks"


def test_a_die_of_0_sides():
    with pytest.raises(ValueError, match=r"dice expression 'D0': 1 dice of 0 sides; a die has at least 2 sides"):
        DiceExpr(text="D0", dice_count=1, dice_sides=0, modifier=0)
    # a record's dice field (pydantic validates the dataclass): the same check, as a ValidationError
    with pytest.raises(ValidationError, match=r"dice expression 'D0': 1 dice of 0 sides; a die has at least 2 sides"):
        TypeAdapter(DiceExpr).validate_python({"text": "D0", "dice_count": 1, "dice_sides": 0, "modifier": 0})
    with pytest.raises(NormaliseError, match=r"not a dice expression: 'D0'"):
        dice("D0")
    unvalidated = DiceExpr.model_construct(text="D0", dice_count=1, dice_sides=0, modifier=0)
    with pytest.raises(InputError) as err:
        exact.resolve([boltgun(damage=unvalidated)], MEQ)
    assert str(err.value) == "weapon 'Boltgun': Damage D0: dice of 0 sides; a die has at least 2 sides (D3, D6)"


# ---- names and numbers typed by a user -------------------------------------------------------


def test_a_unit_name_of_100000_characters_is_refused_at_once(db):
    name = "a" * 100_000
    with pytest.raises(InputError) as err:
        attack(AttackRequest(attacker=name, target="MEQ"), db)
    assert str(err.value) == "a unit name of 100000 characters: at most 200 characters; shorten it"
    out = wh40k("unit", name, "--db", str(db))
    assert (out.returncode, out.stderr) == (1, "Error: a unit name of 100000 characters: at most 200 characters; "
                                               "shorten it\n")
    out = wh40k("rule", name, "--db", str(db))
    assert out.stderr == "Error: a rule name of 100000 characters: at most 200 characters; shorten it\n"


def test_close_names_are_not_searched_for_a_name_over_the_limit():
    assert query._close("Battle Sisters Squad" + "x" * 200, ["Battle Sisters Squad"]) == []
    assert query._close("Battle Sisters Squa", ["Battle Sisters Squad"]) == ["Battle Sisters Squad"]


def test_numbers_past_the_int_string_limit():
    with pytest.raises(InputError) as err:
        parse_target("T" + "9" * 19 + " Sv3+ W1")
    assert str(err.value) == (f"target token 'T{'9' * 19}': a number of 19 digits: at most 18 digits; "
                              f"write e.g. {EXAMPLE}")
    with pytest.raises(InputError, match="a target profile of 5009 characters: at most 200 characters"):
        parse_target("T" + "9" * 5000 + " Sv3+ W1")
    with pytest.raises(NormaliseError, match="not a T characteristic"):
        characteristic_int("9" * 5000, "T")
    assert rejects("bsdata-gst-json", '{"gameSystem": {"revision": ' + "9" * 5000 + "}}") == [
        "not readable JSON: a number of 5000 digits: at most 18 digits"]


# ---- source files ----------------------------------------------------------------------------

TOO_DEEP = "nested deeper than 256 levels (the limit on the nesting depth of a file)"


def test_json_nested_1000_deep_is_a_reject():
    deep = '{"gameSystem": ' + '{"a": ' * 1000 + "1" + "}" * 1001
    assert rejects("bsdata-gst-json", deep) == [f"not readable JSON: {TOO_DEEP}"]
    assert rejects("bsdata-cat-json", "[" * 1000 + "]" * 1000) == [f"not a readable catalogue: {TOO_DEEP}"]
    # 256 levels are read
    assert rejects("bsdata-cat-json", '{"catalogue": ' + "[" * 255 + "]" * 255 + "}") == [
        "no catalogue or gameSystem element at the top"]


def test_xml_nested_1000_deep_is_a_reject():
    ns = 'xmlns="http://www.battlescribe.net/schema/catalogueSchema"'
    deep = f"<catalogue {ns}>" + "<a>" * 1000 + "</a>" * 1000 + "</catalogue>"
    assert rejects("bsdata-cat-xml", deep) == [
        f"not a readable catalogue: {TOO_DEEP}, line 1, column 838 (<string>, line 1)"]
    (reason,) = rejects("bsdata-gst-xml", "<gameSystem>" + "<a>" * 1000 + "</a>" * 1000 + "</gameSystem>")
    assert reason.startswith(f"not well-formed XML: {TOO_DEEP}")


def test_a_weapon_table_cell_inside_another_cell_is_a_reject():
    page = _snippet("", _RIGHT).replace(
        '<td class="wTable_WEAPON"><div class="dsHeader">RANGED WEAPONS</div></td>',
        '<td><table><tr><td class="wTable_WEAPON"><div class="dsHeader">RANGED WEAPONS</div></td></tr></table></td>')
    result = get_extractor("wahapedia-html")(page, html_source("snippet.html"))
    assert "the weapon table's title cell is inside another cell, not a cell of its row" in [
        r.reason for r in result.rejects]


@settings(deadline=timedelta(seconds=5), max_examples=4, derandomize=True, database=None)
@given(newlines=st.sampled_from([200_000, 150_000]), end=st.sampled_from(["\n", "\r\n"]))
def test_a_200_kb_field_of_newlines_is_read_in_linear_time(newlines, end):
    table = read_table(f"id|legend|{end}7|" + "\n" * newlines + f"|{end}8|x|{end}")
    assert [(r.line, r.values) for r in table.rows] == [(2, {"id": "7", "legend": "\n" * newlines}),
                                                          (newlines + 3, {"id": "8", "legend": "x"})]
    unclosed = read_table("id|legend|\n7|" + "\n" * newlines)
    assert (unclosed.rows, [(b.line, b.reason) for b in unclosed.bad_rows]) == (
        [], [(2, "wrong column count: 1 fields, the header has 2")])


# ---- Ctrl-C ----------------------------------------------------------------------------------


@pytest.mark.parametrize("after, delay", [("read manifest", 0.0), ("parsed", 0.0), ("loading", 0.0),
                                          ("loading", 0.05)])
def test_ctrl_c_during_a_build_prints_one_line(db, tmp_path, after, delay):
    previous = db.read_bytes()
    db = tmp_path / "wh40k.duckdb"
    db.write_bytes(previous)
    build_process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "build", "--raw", str(RAW), "--db", str(db)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    while not lines or not lines[-1].startswith(after):
        lines.append(build_process.stderr.readline())
        assert lines[-1], f"the build ended before {after!r}: {lines}"
    time.sleep(delay)
    build_process.send_signal(signal.SIGINT)
    _, rest = build_process.communicate(timeout=60)
    err = "".join(lines) + rest
    assert "Traceback" not in err
    if build_process.returncode == 0:  # the build was done before the signal came
        return
    assert build_process.returncode == 130
    assert err.splitlines()[-1] == f"Interrupted: {db} was not changed"
    assert db.read_bytes() == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wh40k.duckdb"]


def test_a_raw_file_over_the_size_limit_is_refused(tmp_path):
    from pipeline.errors import RawFileError
    from pipeline.extract import read_snapshot

    (tmp_path / "big.txt").write_bytes(b"x")
    with (tmp_path / "big.txt").open("r+b") as f:
        f.truncate(limits.MAX_FILE_BYTES + 1)  # a sparse file: no 64 MiB written
    big = source("battlescribe-rule-descriptions").model_copy(update={"file": "big.txt", "source_id": "big"})
    with pytest.raises(RawFileError) as err:
        read_snapshot(tmp_path, big)
    assert str(err.value) == (f"{tmp_path / 'big.txt'}: 67108865 bytes: at most 67108864 bytes in one raw file "
                              "(source 'big'); this is no snapshot of the source: fetch it again")


def test_lethal_hits_with_devastating_wounds_have_an_attack_limit():
    with pytest.raises(InputError) as err:
        exact.resolve([boltgun(attacks=dice("1"), models=501, lethal_hits=True, devastating_wounds=True)], MEQ)
    assert str(err.value) == ("weapon 'Boltgun': 501 attacks with Lethal Hits and Devastating Wounds: at most 500 "
                              "attacks of a weapon with both; give fewer models")


def test_a_sql_query_past_the_time_limit_is_stopped_with_one_line(db, monkeypatch):
    # A crafted query (a cross join of two huge ranges) must not hang: it is interrupted at the limit.
    from pipeline.database import open_database
    from pipeline.errors import DatabaseError

    monkeypatch.setattr(query, "MAX_SQL_SECONDS", 1)
    con = open_database(db)
    started = time.monotonic()
    with pytest.raises(DatabaseError, match=r"the query ran past 1 s \(the limit of one sql call\) and was stopped"):
        query.run_sql(con, "SELECT count(*) FROM range(100000000) a, range(100000000) b")
    assert time.monotonic() - started < 30
    assert query.run_sql(con, "SELECT 1 AS x") == [{"x": 1}]  # the connection is usable afterwards


def test_a_sql_query_giving_too_many_rows_is_an_error(db, monkeypatch):
    from pipeline.database import open_database
    from pipeline.errors import DatabaseError

    monkeypatch.setattr(query, "MAX_SQL_ROWS", 10)
    con = open_database(db)
    assert len(query.run_sql(con, "SELECT * FROM range(10)")) == 10
    with pytest.raises(DatabaseError, match=r"more than 10 rows \(the limit of one sql call\); narrow it or add a LIMIT"):
        query.run_sql(con, "SELECT * FROM range(11)")
