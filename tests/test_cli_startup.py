"""The command line loads only what the command run uses (issue 14, item 3).

``pipeline.cli.COMMANDS`` is the one registration of each command (name, module, one-line help):
the tests check it against the commands the modules define, and which modules a process of
``wh40k --help`` and ``wh40k attack ... --format json`` has imported by its end (no timing here:
``benchmarks/bench_cli.py`` prints the times).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import cli
from pipeline.build import build
from schemas.catalog import declared_tables, derived_tables
from tests.conftest import RAW

ROOT = Path(__file__).resolve().parent.parent

#: Runs ``pipeline.wh40k.main`` (the console script) on argv, then prints the imported modules.
_PROBE = """
import atexit, json, sys
sys.argv = ["wh40k", *json.loads(sys.argv[1])]
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
from pipeline.wh40k import main
main()
"""


def imported(*args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run the console script's ``main`` on ``args`` in a new process: (process, modules imported)."""
    out = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], capture_output=True, text=True, cwd=ROOT)
    modules = set(json.loads(out.stderr.strip().splitlines()[-1]))
    return out, modules


def tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("db") / "wh40k.duckdb"
    build(RAW, path)
    return path


def test_the_table_of_commands_is_the_commands_the_modules_define():
    cli.register_commands()
    defined = {cli._name(c): c.callback.__module__ for c in cli.app.registered_commands}
    defined |= {g.name: g.typer_instance.registered_commands[0].callback.__module__
                for g in cli.app.registered_groups}
    assert defined == {name: module for name, (module, _) in cli.COMMANDS.items()}
    for name, (_, summary) in cli.COMMANDS.items():
        command = cli.load_command(name)
        assert command.name == name
        # the one-line help is the start of the command's own help
        assert " ".join((command.help or "").split()).startswith(summary), name


def test_help_imports_no_command_and_lists_every_one():
    out, modules = imported("--help")
    assert out.returncode == 0, out.stderr
    for name, (_, summary) in cli.COMMANDS.items():
        assert name in out.stdout
    assert " ".join(out.stdout.split()).count("Exact distributions of hits, wounds, damage and models destroyed") == 1
    assert not {m for m in modules if m.startswith("pipeline.cli.")}
    assert not tops(modules) & {"duckdb", "numpy", "pydantic", "bs4", "rich", "httpx", "sqlalchemy", "schemas"}


def test_help_loads_no_command_line_library():
    out, modules = imported("--help")
    assert out.returncode == 0, out.stderr
    assert not tops(modules) & {"typer", "click", "threadpoolctl"}
    assert "pipeline.cli" not in modules


@pytest.mark.parametrize("columns", ["80", "100", "200"])
def test_the_help_of_the_table_is_the_help_click_renders(columns):
    env = {**os.environ, "COLUMNS": columns}
    fast = subprocess.run([sys.executable, "-m", "pipeline.cli", "--help"], capture_output=True, text=True, cwd=ROOT,
                          env=env)
    code = "import sys; from pipeline.cli import run; sys.exit(run(['--help']))"
    click = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert (click.returncode, click.stderr) == (0, "")
    assert fast.stdout == click.stdout
    assert click.stdout.startswith("Usage: wh40k [OPTIONS] COMMAND [ARGS]...\n")


def test_a_narrow_terminal_gets_the_help_of_click():
    env = {**os.environ, "COLUMNS": "60"}
    out, modules = imported("--help")
    narrow = subprocess.run([sys.executable, "-c", _PROBE, '["--help"]'], capture_output=True, text=True, cwd=ROOT,
                            env=env)
    assert narrow.returncode == 0
    assert "Commands:" in narrow.stdout and narrow.stdout != out.stdout  # wrapped at 58 columns by click
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 58


def test_attack_json_imports_only_what_it_uses(db):
    out, modules = imported("attack", "Battle Sisters Squad", "--target", "MEQ", "--format", "json", "--db", str(db))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["attacker"] == "Battle Sisters Squad"
    commands = {m for m in modules if m.startswith("pipeline.cli.")}
    assert commands == {"pipeline.cli.attack", "pipeline.cli.output"}
    # no parser, no fetch, no rule wordings without --explain, no rich for JSON (the records are
    # imported by pipeline.effects, which reads the effects table's rows as schemas.records.Effect;
    # the schema check itself does not need them: schemas.catalog.declared_tables is kept)
    assert not tops(modules) & {"bs4", "lxml", "rich", "httpx", "sqlalchemy"}
    assert not modules & {"pipeline.rules", "pipeline.fetch", "pipeline.extract", "pipeline.build"}


def test_a_wording_is_looked_up_only_with_explain(db):
    out, modules = imported("attack", "Battle Sisters Squad", "--target", "MEQ", "--format", "json",
                            "--edition", "11", "--explain", "--db", str(db))
    assert out.returncode == 0, out.stderr
    assert "pipeline.rules" in modules
    explained = json.loads(out.stdout)["explain"]
    out, _ = imported("attack", "Battle Sisters Squad", "--target", "MEQ", "--format", "json", "--edition", "11",
                      "--db", str(db))
    plain = json.loads(out.stdout)["explain"]
    # the same steps; the wordings only with --explain
    assert [(e["rule_key"], e["summary"]) for e in plain] == [(e["rule_key"], e["summary"]) for e in explained]
    assert {e["note"] for e in plain} == {"the wording is looked up with --explain"}
    assert all(e["source_id"] is None for e in plain) and any(e["source_id"] for e in explained)


def test_the_kept_catalog_is_the_one_the_records_give(tmp_path):
    assert declared_tables() == derived_tables()
    assert list(declared_tables()) == list(derived_tables())  # the load order too
