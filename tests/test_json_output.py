"""`--format json` is valid JSON for every value type: each DuckDB type through `sql`, and the
attack's output, read back with a strict parser (NaN and Infinity are not JSON)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pipeline.build import build
from pipeline.cli import run
from pipeline.cli.attack import outcome_as_dict
from pipeline.cli.output import to_json
from tests.conftest import RAW


def strict_json(text: str):
    """``json.loads`` that refuses NaN, Infinity and -Infinity (Python's json accepts them)."""
    def refuse(name: str):
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def test_the_strict_parser_refuses_nan_and_infinity():
    for text in ("[NaN]", '{"a": Infinity}', "[-Infinity]"):
        with pytest.raises(ValueError, match="not JSON"):
            strict_json(text)


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("db") / "wh40k.duckdb"
    build(RAW, path)
    return path


def wh40k_json(capsys, *args: str):
    status = run(list(args))
    out = capsys.readouterr()
    assert status == 0 and "Error" not in out.err, out.err
    return strict_json(out.out)


#: (SQL expression, the JSON value it gives): one of every DuckDB type the Python client
#: returns as something JSON does not have (and the JSON types, to show they stay as they are).
TYPES = [
    ("1.10::DECIMAL(5,2)", "1.10"),
    ("123456789012345678901234567890.123::DECIMAL(38,3)", "123456789012345678901234567890.123"),
    ("'\\xAA\\x00ab\\x5C'::BLOB", "\\xAA\\x00ab\\x5C"),
    ("INTERVAL '1 year 2 months 3 days 04:05:06.5'", "P423DT4H5M6.5S"),
    ("INTERVAL '-1 day'", "-P1D"),
    ("INTERVAL '0 seconds'", "PT0S"),
    ("TIME '12:34:56.789'", "12:34:56.789000"),
    ("TIMETZ '12:34:56+02'", "12:34:56+02:00"),
    ("'4a3f6c2e-8b1d-4e5f-9a7b-0c1d2e3f4a5b'::UUID", "4a3f6c2e-8b1d-4e5f-9a7b-0c1d2e3f4a5b"),
    ("DATE '2024-01-02'", "2024-01-02"),
    ("TIMESTAMP '2024-01-02 03:04:05.123456'", "2024-01-02T03:04:05.123456"),
    ("TIMESTAMP_NS '2024-01-02 03:04:05.123456789'", "2024-01-02T03:04:05.123456"),
    ("TIMESTAMPTZ '2024-01-02 03:04:05+00'", "2024-01-02T03:04:05+00:00"),
    ("'nan'::DOUBLE", None),
    ("'inf'::DOUBLE", None),
    ("'-inf'::FLOAT", None),
    ("1.5::FLOAT", 1.5),
    ("-0.0::DOUBLE", -0.0),
    ("170141183460469231731687303715884105727::HUGEINT", 170141183460469231731687303715884105727),
    ("340282366920938463463374607431768211455::UHUGEINT", 340282366920938463463374607431768211455),
    ("'101'::BIT", "101"),
    ("[1.5, 'nan'::DOUBLE, 'inf'::DOUBLE]", [1.5, None, None]),
    ("{'a': 'inf'::DOUBLE, 'b': DATE '2024-01-01', 'c': 2.50::DECIMAL(4,2)}", {"a": None, "b": "2024-01-01", "c": "2.50"}),
    ("MAP {1: 'x', 2: 'y'}", {"1": "x", "2": "y"}),
    ("MAP {DATE '2024-01-01': INTERVAL '1 hour'}", {"2024-01-01": "PT1H"}),
    ("[1, 2, 3]::INTEGER[3]", [1, 2, 3]),
    ("union_value(num := 2)", 2),
    ("{'x': [TIME '01:02:03', NULL]}", {"x": ["01:02:03", None]}),
    ("'{\"k\": 1}'::JSON", '{"k": 1}'),
    ("NULL::INTEGER", None),
    ("true", True),
    ("'text'", "text"),
]


def test_sql_json_is_valid_for_every_duckdb_type(db, capsys):
    select = "SELECT " + ", ".join(f"{expr} AS c{i}" for i, (expr, _) in enumerate(TYPES))
    rows = wh40k_json(capsys, "sql", "--db", str(db), "--format", "json", select)
    assert rows == [{f"c{i}": value for i, (_, value) in enumerate(TYPES)}]
    assert math.copysign(1, rows[0][f"c{[e for e, _ in TYPES].index('-0.0::DOUBLE')}"]) == -1


def test_every_duckdb_type_prints_in_csv_too(db, capsys):
    import csv
    import io

    select = "SELECT " + ", ".join(f"{expr} AS c{i}" for i, (expr, _) in enumerate(TYPES))
    status = run(["sql", "--db", str(db), "--format", "csv", select])
    out = capsys.readouterr()
    assert (status, out.err) == (0, "")
    row = next(csv.DictReader(io.StringIO(out.out)))
    assert (row["c0"], row["c2"], row["c3"], row["c13"], row["c29"]) == (
        "1.10", "\\xAA\\x00ab\\x5C", "P423DT4H5M6.5S", "nan", "")


def test_a_table_shows_intervals_blobs_and_decimals_as_text(db, capsys):
    status = run(["sql", "--db", str(db), "SELECT INTERVAL '1 hour' AS i, '\\x01'::BLOB AS b, 1.10::DECIMAL(4,2) AS d"])
    out = capsys.readouterr()
    assert (status, out.err) == (0, "")
    assert "│ PT1H │ \\x01 │ 1.10 │" in out.out


def test_a_uuid_from_duckdb_is_text_in_json(db, capsys):
    rows = wh40k_json(capsys, "sql", "--db", str(db), "--format", "json", "SELECT uuid() AS u, gen_random_uuid() AS v")
    assert all(isinstance(v, str) and len(v) == 36 and v.count("-") == 4 for v in rows[0].values())


@pytest.mark.parametrize("args", [
    ["attack", "Battle Sisters Squad", "--target", "MEQ"],
    ["attack", "Celestian Sacresants", "--phase", "fight", "--target", "T4 Sv3+ W2 x10 inv4+ fnp5+ INFANTRY",
     "--edition", "11"],
    ["attack", "Canoness Adalya", "--weapon", "condemnor boltgun", "--target", "TEQ", "--reroll-hits", "all"],
])
def test_attack_json_is_valid_json(db, capsys, args):
    data = wh40k_json(capsys, *args, "--db", str(db), "--format", "json")
    assert math.isclose(sum(data["models_destroyed"]["pmf"]), 1.0, rel_tol=1e-9)
    assert 0 <= data["target_destroyed"] <= 1


def test_attack_json_gives_null_for_a_value_that_is_not_a_number(db):
    """An outcome with NaN and an infinity in it (as a 0/0 of a pmf would give) is still JSON."""
    from pipeline.engine.service import AttackRequest, attack

    outcome = attack(AttackRequest(attacker="Battle Sisters Squad", target="MEQ"), db)
    data = outcome_as_dict(outcome)
    data["hits"]["mean"] = float("nan")
    data["damage"]["pmf"][0] = float("inf")
    parsed = strict_json(to_json(data))
    assert parsed["hits"]["mean"] is None and parsed["damage"]["pmf"][0] is None
    assert parsed["wounds"] == strict_json(json.dumps(data["wounds"]))
