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
