"""Hostile input from the QA report: each is one ``Error:`` line and exit status 1, never a
traceback or a hang (items 1, 2, 3, 5, 9, 13); limits are tested at monkeypatched small values."""

from __future__ import annotations

import json
import os

import pytest

from pipeline import query
from pipeline.build import build
from pipeline.cli import run
from pipeline.errors import DatabaseError
from tests.conftest import RAW


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "wh40k.duckdb"
    build(RAW, path)
    return path


def wh40k(capsys, *args: str) -> tuple[int, str, str]:
    status = run(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


def assert_one_line_error(status: int, out: str, err: str, start: str) -> None:
    assert (status, out) == (1, ""), (status, out, err)
    assert err.startswith(start) and err.count("\n") == 1 and "Traceback" not in err, err


@pytest.mark.parametrize("args", [
    ["sql", "SELECT \udcff\udcfe"],
    ["rule", "Cap\udcfftain"],
    ["units", "--name", "Cap\udcfftain"],
    ["weapons", "--ability", "Cap\udcfftain"],
])
def test_an_argument_that_is_not_utf8_is_one_error_line(capsys, args):
    status, out, err = wh40k(capsys, *args)
    assert_one_line_error(status, out, err, f"Error: argument {len(args)} is not valid UTF-8 text")


@pytest.mark.parametrize("command", [["list", "show"], ["detect-edition"]])
def test_a_device_or_fifo_is_refused_before_it_is_read(capsys, tmp_path, command):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo)):
        status, out, err = wh40k(capsys, *command, path)
        assert_one_line_error(status, out, err, f"Error: {path}: not a regular file (a device, a FIFO or a socket)")


def test_detect_edition_reads_at_most_its_limit(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("pipeline.limits.MAX_RULES_TEXT_BYTES", 10)
    path = tmp_path / "rules.txt"
    path.write_text("x" * 11, encoding="utf-8")
    status, out, err = wh40k(capsys, "detect-edition", str(path))
    assert_one_line_error(status, out, err, f"Error: {path}: more than 10 bytes: at most 10 bytes in one rules text")


def test_a_list_over_the_units_limit_is_one_error_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("pipeline.lists.MAX_LIST_UNITS", 3)
    path = tmp_path / "army.txt"
    units = "\n".join(f"Captain{i} (80 points)\n  • 1x Bolt pistol\n" for i in range(4))
    path.write_text(f"Mine (2000 Points)\n\nSpace Marines\n\nCHARACTERS\n\n{units}", encoding="utf-8")
    status, out, err = wh40k(capsys, "list", "show", str(path))
    assert_one_line_error(status, out, err, f"Error: {path}, line ")
    assert "more than 3 units: at most 3 units in one army list" in err


@pytest.mark.parametrize("line, what", [
    ("Captain (9999999999999999999999999999999 points)\n  • 1x Bolt pistol\n",
     "'Captain': points 9999999999999999999999999999999: at most 100,000"),
    ("Intercessor Squad (80 points)\n  • 99999999999999999999x Intercessor\n",
     "'Intercessor Squad': count of 'Intercessor' 99999999999999999999: at most 100,000"),
])
def test_absurd_numbers_in_a_list_are_one_error_line(capsys, tmp_path, line, what):
    path = tmp_path / "army.txt"
    path.write_text(f"Mine (2000 Points)\n\nSpace Marines\n\nCHARACTERS\n\n{line}", encoding="utf-8")
    status, out, err = wh40k(capsys, "list", "show", str(path))
    assert_one_line_error(status, out, err, f"Error: {path}, line ")
    assert what in err


@pytest.mark.parametrize("args", [["units", "--name", "_"], ["units", "--name", "%"], ["weapons", "--name", "%"],
                                  ["weapons", "--name", "_"]])
def test_name_filters_match_percent_and_underscore_literally(db, capsys, args):
    status, out, err = wh40k(capsys, *args, "--db", str(db), "--format", "json")
    assert (status, json.loads(out)) == (0, [])


def test_a_literal_percent_in_a_filter_still_matches_a_name_that_has_it(db):
    con = query.open_database(db)
    assert query.like_literal("50%_\\") == "50\\%\\_\\\\"
    assert [r[0] for r in con.execute("SELECT 'a%b' LIKE '%' || ? || '%' ESCAPE '\\'",
                                      [query.like_literal("%")]).fetchall()] == [True]
    assert [r[0] for r in con.execute("SELECT 'ab' LIKE '%' || ? || '%' ESCAPE '\\'",
                                      [query.like_literal("%")]).fetchall()] == [False]


def test_repeated_column_names_are_renamed_and_said(db, capsys):
    status, out, err = wh40k(capsys, "sql", "--db", str(db), "--format", "json", "SELECT 1 AS a, 2 AS a, 3 AS a")
    assert status == 0 and json.loads(out) == [{"a": 1, "a_2": 2, "a_3": 3}]
    assert err == "columns of the same name renamed: 'a' as 'a_2', 'a' as 'a_3' (give each column its own name with AS)\n"


def test_the_output_of_sql_is_cut_at_its_byte_limit_and_says_so(db, capsys, monkeypatch):
    monkeypatch.setattr(query, "MAX_SQL_OUTPUT_BYTES", 100)
    status, out, err = wh40k(capsys, "sql", "--db", str(db), "--format", "csv", "SELECT repeat('x', 30) FROM range(10)")
    assert status == 0 and out.count("x" * 30) == 3
    assert err == ("output cut: the first 3 of 10 rows shown, at most 100 bytes in one sql call's output; "
                   "narrow the query or add a LIMIT\n")
    status, out, err = wh40k(capsys, "sql", "--db", str(db), "SELECT repeat('x', 101)")
    assert_one_line_error(status, out, err, "Error: the first row of the query has more than 100 bytes")


def test_sql_refuses_the_database_file_as_data(db, capsys):
    for reader in ("read_blob", "read_text"):
        status, out, err = wh40k(capsys, "sql", "--db", str(db), f"SELECT * FROM {reader}('{db}')")
        assert_one_line_error(status, out, err, f"Error: statement 1 (SELECT) is refused: {reader} reads files")


def test_out_of_memory_names_the_limit_not_a_setting(db):
    con = query.open_database(db)
    with pytest.raises(DatabaseError) as caught:
        query.run_sql(con, "SELECT max(t) FROM (SELECT repeat('x', 2000) || i AS t FROM range(2000000) r(i) ORDER BY t)")
    assert str(caught.value).startswith("SQL failed: Out of Memory Error: ")
    assert str(caught.value).endswith("; the query needs more than the 1.0 GiB one sql call may use: narrow it or "
                                      "add a LIMIT")
    assert "SET " not in str(caught.value)


def test_one_huge_value_fails_at_the_address_space_limit_and_the_limit_is_restored(db):
    # DuckDB's memory_limit does not count one value: repeat('x', 2e9) took 16 s and 4 GB
    import resource

    before = resource.getrlimit(resource.RLIMIT_AS)
    con = query.open_database(db)
    for huge in ("SELECT length(repeat('x', 2000000000))",
                 "SELECT max(length(repeat('x', 100000000 + i))) FROM range(40) t(i)"):  # 40 values of 100 MB
        with pytest.raises(DatabaseError) as caught:
            query.run_sql(con, huge)
        assert str(caught.value).startswith("SQL failed: Out of Memory Error: Failed to allocate ")
        assert resource.getrlimit(resource.RLIMIT_AS) == before
    assert query.run_sql(con, "SELECT length(repeat('x', 100000000)) AS n") == [{"n": 100_000_000}]
    assert resource.getrlimit(resource.RLIMIT_AS) == before


def test_the_address_space_limit_of_threads_at_once_is_the_first_ones_and_the_last_restores_it():
    import resource
    import threading

    before = resource.getrlimit(resource.RLIMIT_AS)
    inside, leave = threading.Barrier(2), threading.Event()
    seen = []

    def hold():
        with query.address_space_limit(1 << 30):
            seen.append(resource.getrlimit(resource.RLIMIT_AS))
            inside.wait()
            leave.wait()

    other = threading.Thread(target=hold)
    other.start()
    with query.address_space_limit(1 << 30):
        inside.wait()
        seen.append(resource.getrlimit(resource.RLIMIT_AS))
    assert resource.getrlimit(resource.RLIMIT_AS) == seen[0] != before  # the other block still runs
    leave.set()
    other.join()
    assert seen[0] == seen[1] and seen[0][0] != resource.RLIM_INFINITY
    assert resource.getrlimit(resource.RLIMIT_AS) == before


def test_the_time_limit_holds_while_the_output_is_rendered(db, capsys, monkeypatch):
    import pipeline.cli.output as output

    def render(*_args, **_kwargs):
        os.kill(os.getpid(), __import__("signal").SIGALRM)  # the limit's alarm, as if the time ran out

    monkeypatch.setattr(output, "render_rows", render)
    monkeypatch.setattr("pipeline.cli.data.render_rows", render)
    status, out, err = wh40k(capsys, "sql", "--db", str(db), "SELECT 1")
    assert_one_line_error(status, out, err, "Error: the query ran past 60 s (the limit of one sql call, its output")


@pytest.mark.parametrize("args, line", [
    (["attack", "Intercessor Squad", "--target", "MEQ", "--phase", "bogus"],
     "Error: --phase: 'bogus' is not one of 'shooting', 'fight'; see `wh40k attack --help`\n"),
    (["attack", "Intercessor Squad", "--target", "MEQ", "--models", "abc"],
     "Error: --models: not a whole number; see `wh40k attack --help`\n"),
    (["attack", "Intercessor Squad", "--target", "MEQ", "--moved=-1"],
     "Error: --moved: give a number of 0 or more; see `wh40k attack --help`\n"),
    (["attack", "Intercessor Squad", "--target", "MEQ", "--moved", "nan"],  # nan is under no minimum either
     "Error: --moved: give a number of 0 or more; see `wh40k attack --help`\n"),
    (["sql", "-- only comment"],
     "Error: '-- only comment' is not an option; for text that starts with '-', give the options first, then -- "
     "and the text (wh40k sql --db FILE -- \"-- ...\")\n"),
])
def test_usage_errors_are_one_line_without_pydantic_wording(capsys, args, line):
    status, out, err = wh40k(capsys, *args)
    assert (status, out, err) == (2, "", line)


def test_a_statement_of_comments_alone_says_no_statement(db, capsys):
    status, out, err = wh40k(capsys, "sql", "--db", str(db), "--", "-- only comment")
    assert_one_line_error(status, out, err, "Error: no SQL statement given; example: ")


@pytest.mark.parametrize("profile, says", [
    ("A2 BS3 S4 AP1 D1", "token 'AP1': Armour Penetration '1' is positive, and AP is 0 or negative: write AP-1"),
    ("A2 BS3 S4 AP 1 D1", "'AP' without its value (a space between them?)"),
])
def test_a_misread_ap_says_what_is_wrong(db, capsys, profile, says):
    status, out, err = wh40k(capsys, "attack", "--weapon-profile", profile, "--target", "MEQ", "--db", str(db))
    assert_one_line_error(status, out, err, f"Error: weapon profile {profile!r}: {says}")


def test_effects_help_has_an_example(capsys):
    status, out, _ = wh40k(capsys, "effects", "--help")
    assert status == 0 and 'Example: wh40k effects coverage --edition 10 --faction "Adepta Sororitas"' in out
