"""The command line loads only what the command run uses (issue 14, item 3).

``pipeline.cli.COMMANDS`` is the one registration of each command (name, module, one-line help):
the tests check it against the commands the modules define, and which modules a process of
``wh40k --help`` and ``wh40k attack ... --format json`` has imported by its end (no timing here:
``benchmarks/bench_cli.py`` prints the times).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline import cli
from pipeline.build import build
from pipeline.commands import INTERRUPTED
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
    # the command and its table of parameters, without typer (pipeline.cli.group) or click
    assert commands == {"pipeline.cli.attack_command", "pipeline.cli.options", "pipeline.cli.failures",
                        "pipeline.cli.output"}
    assert not tops(modules) & {"typer", "click", "shellingham"}
    # OpenBLAS started with one thread (pipeline.cli sets OPENBLAS_NUM_THREADS): nothing to limit
    assert "threadpoolctl" not in modules
    # no parser, no fetch, no rule wordings without --explain, no rich for JSON; no pydantic: the
    # engine's dice are schemas.dice.DiceExpr (a dataclass), the schema check reads the kept catalog
    # (schemas.catalog.declared_tables), and a standard target reads no effects (schemas.records)
    assert not tops(modules) & {"bs4", "lxml", "rich", "httpx", "sqlalchemy", "pydantic", "pydantic_core"}
    assert not modules & {"schemas.records", "schemas.types"}
    # the unit engine (allocation model by model) is imported for a unit target only (resolve_unit:
    # tests/lists, tests/engine/test_attack_full_data.py)
    assert "pipeline.engine.units" not in modules
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


def _typer_values(argv: list[str]) -> dict | None:
    """The values typer's command ``attack`` gives for ``argv`` (None for a usage error)."""
    command = cli.load_command("attack")
    try:
        with command.make_context("attack", list(argv)) as ctx:
            return dict(ctx.params)
    except cli.ClickException:
        return None


@pytest.mark.parametrize("argv", [
    ["Battle Sisters Squad", "--target", "MEQ", "--format", "json"],
    ["--target=T4 Sv3+ W2 x10", "Boyz", "-t", "GEQ", "-f", "table", "--db", "x.duckdb"],
    ["Servitors", "-w", "2 heavy bolters", "--weapon", "boltgun", "--weapon-profile", "A2 BS3+ S4 AP-1 D1",
     "--models", "5", "--target-models", "10", "--phase", "fight", "--half-range", "--stationary", "--charged",
     "--cover", "--overwatch", "--damaged", "--indirect", "--spotted", "--close-quarters"],
    ["x", "-t", "MEQ", "--reroll-hits", "ones", "--reroll-wounds", "all", "--reroll-one-hit", "--reroll-one-wound",
     "--reroll-one-damage", "--twin-linked", "non-critical", "--moved", "2.5", "--set-up-this-turn",
     "--hit-mod", "-1", "--wound-mod", "1", "--crit-hits-on", "5", "--fnp", "6", "--damage-reduction", "half",
     "--damage-reduction", "1", "--edition", "10"],
    ["x", "-t", "MEQ", "--leader", "Canoness", "--target-leader", "Captain", "--allocation", "Boss Nob,Boy",
     "--objective", "models", "--explain", "--with", "Take Aim!", "--with=Fire Overwatch", "--detachment", "D",
     "--without", "Stealth", "--plot", "a.svg"],
    ["--list", "mine.txt", "Khorne Berzerkers#2", "--target-list", "theirs.txt", "Crisis Battlesuits"],
    ["x", "-t", "MEQ", "--moved", "0", "--edition", "11", "--hit-mod", "0", "--models", "1"],
    ["x", "--target", "-1 is a name"],  # an option's value may begin with '-'
])
def test_the_plain_parse_gives_the_values_typer_gives(argv):
    from pipeline.cli.attack_command import ATTACK_PARAMS
    from pipeline.cli.options import parse

    expected = _typer_values(argv)
    assert expected is not None
    assert parse(ATTACK_PARAMS, argv) == expected


@pytest.mark.parametrize("argv", [
    ["--help"], ["x", "-h"], ["x", "y"], ["x", "--", "-t"], ["x", "--target"], ["x", "--nope"], ["x", "-tMEQ"],
    ["x", "--models", "0"], ["x", "--models", "many"], ["x", "--models", "1_0"], ["x", "--crit-hits-on", "7"],
    ["x", "--edition", "9"], ["x", "--fnp", "1"], ["x", "--phase", "Fight"], ["x", "--moved", "-1"],
    ["x", "--moved", "1e3"], ["x", "--cover=yes"], ["x", "--list", "only-one"], ["x", "--plot", ""],
    ["x", "--hit-mod", "+1"], ["x", "--models", " 3"],
])
def test_what_the_plain_parse_does_not_read_is_left_to_typer(argv):
    # the command line then parses it itself: its help, its usage error, or the value it reads
    from pipeline.cli.attack_command import ATTACK_PARAMS
    from pipeline.cli.options import parse

    assert parse(ATTACK_PARAMS, argv) is None


def test_a_plain_attack_gives_what_the_command_line_gives(db):
    args = ["attack", "Battle Sisters Squad", "--target", "MEQ", "--format", "json", "--db", str(db)]
    plain, _ = imported(*args)
    code = "import sys; from pipeline.cli import run; sys.exit(run(sys.argv[1:]))"
    typed = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT)
    assert (plain.returncode, plain.stdout) == (typed.returncode, typed.stdout) == (0, typed.stdout)
    missing = str(db.with_name("missing.duckdb"))
    for bad in (["--target", "NOPE", "--db", str(db)], ["--models", "0", "--target", "MEQ", "--db", str(db)],
                ["--target", "MEQ", "--db", missing],  # the database is opened in a thread: its error is the same
                ["--target", "MEQ", "--models", "2000", "--db", missing]):  # the limits are checked first
        plain, _ = imported("attack", "Battle Sisters Squad", *bad)
        typed = subprocess.run([sys.executable, "-c", "import sys; from pipeline.cli import run; "
                                "sys.exit(run(sys.argv[1:]))", "attack", "Battle Sisters Squad", *bad],
                               capture_output=True, text=True, cwd=ROOT)
        assert plain.returncode == typed.returncode != 0
        assert plain.stderr.splitlines()[0] == typed.stderr.splitlines()[0]


def test_the_group_names_of_the_package_are_the_groups():
    # pipeline.cli gives these names from pipeline.cli.group, and loads it for no other name
    code = ("import sys, pipeline.cli as c; assert not hasattr(c, 'nosuch'); assert 'typer' not in sys.modules; "
            "import pipeline.cli.group as g; "
            "print(sorted(n for n in c.GROUP_NAMES if getattr(c, n) is not getattr(g, n)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert (out.returncode, out.stdout.strip()) == (0, "[]"), out.stderr


def test_a_plain_attack_whose_reader_has_gone_ends_silently_with_status_1(db):
    # as click does for typer's path: a closed pipe (``| head``) is no traceback
    args = [sys.executable, "-m", "pipeline.cli", "attack", "Battle Sisters Squad", "--target", "MEQ",
            "--format", "json", "--db", str(db)]
    read, write = os.pipe()
    os.close(read)  # nobody reads: the first write fails with EPIPE
    try:
        done = subprocess.run(args, stdout=write, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (1, "")


def test_ctrl_c_in_a_plain_attack_is_one_line_and_status_130(db):
    # a slow attack (four Devastating Wounds weapons against 5 x W100), interrupted once it runs
    weapons = [a for d in ("1", "2", "3", "6") for a in ("--weapon-profile", f"A4 BS3+ S12 AP-2 D{d} [DEVASTATING WOUNDS]")]
    args = [sys.executable, "-m", "pipeline.cli", "attack", *weapons, "--models", "25", "--target", "T10 Sv3+ W100 x5",
            "--db", str(db)]
    run = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(1.5)  # while it loads (the Ctrl-C is held) or while it runs (seconds): the same line
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130
    assert err.strip().splitlines() == [INTERRUPTED]


def test_a_plain_attack_runs_without_the_cyclic_collector_and_typer_with_it(db):
    # pipeline.wh40k._attack: no collections over the ~30,000 objects loaded by a short process;
    # a command line it leaves to typer (its help) gets the collector back
    probe = _PROBE.replace("atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))",
                           "import gc; atexit.register(lambda: print(json.dumps(gc.isenabled()), file=sys.stderr))")
    def collector(*args: str) -> bool:
        out = subprocess.run([sys.executable, "-c", probe, json.dumps(args)], capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stderr.strip().splitlines()[-1])

    assert collector("attack", "Battle Sisters Squad", "--target", "MEQ", "--format", "json", "--db", str(db)) is False
    assert collector("attack", "--help") is True


_EXIT_PROBE = """
import atexit, json, sys, weakref
sys.argv = ["wh40k", *json.loads(sys.argv[1])]
class Kept:
    pass
kept = Kept()
weakref.finalize(kept, print, "finalized", file=sys.stderr)
atexit.register(print, "exit function ran", file=sys.stderr)
atexit.register(print, "printed at exit")
from pipeline.wh40k import console
console()
"""


@pytest.mark.parametrize("args, status", [
    (["attack", "Battle Sisters Squad", "--target", "MEQ", "--format", "json"], 0),
    (["attack", "No Such Unit", "--target", "MEQ"], 1),
])
def test_the_attack_ends_without_teardown_but_with_its_exit_functions(db, args, status):
    # pipeline.wh40k.console (the console script): os._exit once the exit functions have run
    out = subprocess.run([sys.executable, "-c", _EXIT_PROBE, json.dumps([*args, "--db", str(db)])],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == status, out.stderr
    assert out.stderr.splitlines()[-2:] == ["exit function ran", "finalized"]
    if status == 0:
        answer, printed = out.stdout.rsplit("\n", 2)[:2]
        assert json.loads(answer)["attacker"] == "Battle Sisters Squad" and printed == "printed at exit"
    else:
        assert out.stderr.startswith("Error: no unit named 'No Such Unit'") and out.stdout == "printed at exit\n"


_TEARDOWN_PROBE = _EXIT_PROBE.replace("kept = Kept()", """kept = Kept()
import gc, os
atexit.register(lambda: print("collector", gc.isenabled(), file=sys.stderr))
real_exit = os._exit
def noted_exit(status):  # the end without teardown (pipeline.wh40k._exit), noted
    os.write(2, b"os._exit\\n")
    real_exit(status)
os._exit = noted_exit""")


def test_a_build_ends_without_teardown_or_collections_but_with_its_exit_functions(tmp_path):
    # pipeline.wh40k.end_without_teardown: the build's objects are neither freed one by one nor
    # traversed by a last collection; a command that did not ask (its help) ends as usual
    def run(*args: str) -> list[str]:
        out = subprocess.run([sys.executable, "-c", _TEARDOWN_PROBE, json.dumps(args)], capture_output=True,
                             text=True, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        return out.stderr.splitlines()

    db = tmp_path / "wh40k.duckdb"
    ended = run("build", "-q", "--raw", str(RAW), "--db", str(db))
    assert set(ended[-4:-1]) == {"collector False", "exit function ran", "finalized"} and db.exists()
    assert ended[-1] == "os._exit"
    helped = run("build", "--help")
    assert set(helped[-3:]) == {"collector True", "exit function ran", "finalized"} and "os._exit" not in helped


def test_outside_the_console_script_a_command_ends_as_usual():
    import gc

    from pipeline import wh40k

    assert gc.isenabled()
    kept, again = wh40k.end_without_teardown(), wh40k.end_without_teardown()
    assert kept == [] and kept is not again and gc.isenabled() and not wh40k._END_WITHOUT_TEARDOWN
