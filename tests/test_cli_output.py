"""What the command line prints: whole identifiers in narrow output, one-line notes and errors,
data cells shown literally, every --format honoured, empty filters, SQL and edition errors."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pipeline.build import BuildReport, build
from pipeline.cli.build import _summary
from schemas.records import Accounting
from tests.conftest import RAW


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("db") / "wh40k.duckdb"
    build(RAW, path)
    return path


def wh40k(*args: str, columns: int = 80) -> subprocess.CompletedProcess:
    """Run the CLI as a pipe would (stdout and stderr not a terminal), ``columns`` wide."""
    env = {**os.environ, "COLUMNS": str(columns)}
    env.pop("LINES", None)
    return subprocess.run([sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True,
                          cwd=RAW.parent, env=env)


# --- 1. build summary: identifiers are never cut short ------------------------------------------

def _accounting_rows(text: str) -> set[tuple]:
    """(source, stage, table, input, loaded, duplicates, rejected) read back from the summary,
    in either layout: the wide table, or a `source ID` heading followed by that source's rows."""
    rows, source = set(), None
    for line in text.splitlines():
        if line.startswith("source "):
            source = line.split()[1]
        elif line.startswith("│") and source is None:
            cells = [c.strip() for c in line.strip().strip("│").split("│")]
            if len(cells) == 7 and cells[3].isdigit():
                rows.add((cells[0], cells[1], cells[2], *map(int, cells[3:])))
        elif source is not None:
            parts = line.split()
            if len(parts) == 6 and parts[0] in ("parse", "validate") and all(p.isdigit() for p in parts[2:]):
                rows.add((source, parts[0], parts[1], *map(int, parts[2:])))
    return rows


@pytest.mark.parametrize("columns", [80, 200])
def test_build_summary_keeps_every_source_and_table_name_whole(tmp_path, columns):
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    out = wh40k("build", "--raw", str(raw), "--db", str(tmp_path / "x.duckdb"), columns=columns)
    assert out.returncode == 0, out.stderr
    assert "…" not in out.stderr
    con = duckdb.connect(str(tmp_path / "x.duckdb"), read_only=True)
    stored = set(con.execute(
        "SELECT source_id, stage, table_name, input_rows, loaded, duplicates, rejected FROM build_accounting"
    ).fetchall())
    assert _accounting_rows(out.stderr) == stored
    built = {}
    for line in out.stderr.splitlines():
        if line.startswith("│") and line.count("│") == 3:
            name, n = (c.strip() for c in line.strip().strip("│").split("│"))
            built[name] = int(n)
    tables = [t for (t,) in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'").fetchall()]
    assert built == {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    if columns <= 80:
        table_lines = [line for line in out.stderr.splitlines() if line.startswith((" ", "│", "┃", "─"))]
        assert max(len(line.rstrip()) for line in table_lines) <= columns


def test_build_summary_in_40_columns_folds_cells_but_keeps_source_ids_whole(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    out = wh40k("build", "--raw", str(raw), "--db", str(tmp_path / "x.duckdb"), columns=40)
    assert out.returncode == 0, out.stderr
    assert "…" not in out.stderr
    assert [line for line in out.stderr.splitlines() if line.startswith("source ")] == [
        "source wahapedia-10e-cp-sanctuary-guardians", "source wahapedia-11e-rules-astra-militarum",
        "source bsdata-10e-rule-descriptions"]


def test_build_summary_of_long_names_in_80_columns(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    source = "wahapedia-10e-export-of-every-datasheet-with-a-long-name"
    report = BuildReport(tmp_path / "x.duckdb", {"datasheet_detachment_abilities": 13254}, [
        Accounting(source_id=source, stage="parse", table_name="Datasheets_detachment_abilities",
                   input_rows=13254, loaded=13250, duplicates=3, rejected=1),
        Accounting(source_id=source, stage="validate", table_name="datasheet_detachment_abilities",
                   input_rows=13250, loaded=13250, duplicates=0, rejected=0),
    ])
    _summary(report)
    err = capsys.readouterr().err
    assert "…" not in err
    assert _accounting_rows(err) == {
        (source, "parse", "Datasheets_detachment_abilities", 13254, 13250, 3, 1),
        (source, "validate", "datasheet_detachment_abilities", 13250, 13250, 0, 0),
    }
    assert "│ datasheet_detachment_abilities │ 13254 │" in err
    # the totals line is one line, as long as it needs
    assert ("13254 rows in 1 tables; 3 duplicates collapsed; 1 rejected (see table rejects); "
            "0 boilerplate lines dropped") in err.splitlines()


# --- 2. notes and errors are one line each --------------------------------------------------------

def test_notes_are_not_wrapped_at_the_terminal_width(db):
    out = wh40k("unit", "--db", str(db), "Canoness Adalya", columns=40)
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 2 and all(line.startswith("missing in wahapedia-10e-cp-sanctuary-guardians: ")
                                   for line in lines)
    assert lines[0].endswith("(M, T, Sv, invulnerable save, W, Ld, OC))")


def test_usage_errors_print_one_error_line_and_exit_2(db):
    out = wh40k("units", "--db", str(db), "--format", "xml", columns=40)
    assert out.returncode == 2
    lines = out.stderr.splitlines()
    assert lines[0].startswith("Usage: wh40k units")
    assert lines[-1] == ("Error: Invalid value for '--format' / '-f': Value error, "
                         "'xml' is not one of 'table', 'json', 'csv'.")
    assert "╭" not in out.stderr
    out = wh40k("nosuchcommand", columns=40)
    assert out.returncode == 2 and out.stderr.splitlines()[-1] == "Error: No such command 'nosuchcommand'."
    out = wh40k("unit", columns=40)
    assert out.returncode == 2 and out.stderr.splitlines()[-1] == "Error: Missing argument 'name'."


def test_help_and_no_arguments_still_show_the_help():
    out = wh40k("units", "--help")
    assert out.returncode == 0 and "List units" in out.stdout
    out = wh40k()
    assert out.returncode == 2 and "Commands" in out.stdout


# --- 4. data cells are shown as they are ------------------------------------------------------------

def test_table_cells_are_not_markup_or_emoji(db):
    out = wh40k("sql", "--db", str(db), "SELECT ':x:' AS a, '[bold]x[/bold]' AS b, '[red]' AS \"[c]\"")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [c.strip() for c in lines[1].strip("┃").split("┃")] == ["a", "b", "[c]"]
    assert [c.strip() for c in lines[3].strip("│").split("│")] == [":x:", "[bold]x[/bold]", "[red]"]
    assert "❌" not in out.stdout
