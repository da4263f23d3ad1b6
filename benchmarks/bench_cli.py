"""Benchmark of the command line's start: whole processes, from start to exit.

Run with ``python benchmarks/bench_cli.py [DB] [RUNS]`` (``make bench``; default ``db/wh40k.duckdb``,
built from the seeds when missing, and 20 runs). Prints figures, asserts nothing:

- reference: a bare ``python -c pass`` of the same interpreter, in the same run;
- the imports alone: numpy (the one library a plain attack loads: its floor), duckdb, both,
  typer, pydantic, all four, and every module the attack uses;
- ``wh40k --help`` (answered from ``pipeline.commands`` without typer: about the reference);
- ``wh40k attack "Battle Sisters Squad" --target MEQ --format json`` (issue 14: under 0.15 s), and
  the same with ``--explain`` (the rule wordings looked up), and the attack's excess over its
  floor, ``import numpy`` (its median minus the floor's, wall and CPU): these read the attack's
  SQLite replica (``pipeline.replica``), written by the warm-up run;
- apart, the first attack on the database, which reads DuckDB and then writes the replica
  (its replica removed before each of ``FIRST_RUNS`` runs);

each (``OPENBLAS_NUM_THREADS=1`` unless set otherwise, as the command line sets it) as the
median and the minimum wall time over RUNS runs (going round the cases: each round
runs every case once) and the median CPU time (user + system of the process), the CPU time as
a multiple of the reference's: a machine busy with other work stretches the wall time much more
than the CPU time. Every case runs twice: as the environment
gives it (``PYTHONDONTWRITEBYTECODE`` set: the project's modules are compiled in every process),
and with bytecode written, as a user's machine has it (``PYTHONDONTWRITEBYTECODE`` removed,
``PYTHONPYCACHEPREFIX`` a scratch folder, filled by the warm-up run). Then the largest imports of
the attack (``python -X importtime``: the self time of each module summed per top-level package),
one run, and in one process once its imports are done: the database opened (its schema checked),
then the attack run twice (CPU time).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).with_name("wh40k")

#: Runs of the first attack (each writes the replica anew: about 2 s).
FIRST_RUNS = 3


def measure(cases: dict[str, list[str]], runs: int, env: dict[str, str] | None = None) -> dict[str, dict[str, float]]:
    """Per case: median and minimum wall seconds and median CPU seconds (user + system) of its
    argv over ``runs`` runs, each a new process (stdout and stderr discarded) in ``env`` (None:
    this process's); one warm-up run of each first. The runs go round the cases (each round runs
    every case once), so that a change in the machine's load falls on every case alike."""
    def once(argv: list[str]) -> tuple[float, float]:
        before, start = os.times(), time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd=ROOT,
                       env=env)
        wall = time.perf_counter() - start
        after = os.times()
        return wall, after.children_user - before.children_user + after.children_system - before.children_system

    for argv in cases.values():
        once(argv)
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, argv in cases.items():
            wall, cpu = once(argv)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return {name: {"wall_median_s": statistics.median(walls[name]), "wall_min_s": min(walls[name]),
                   "cpu_median_s": statistics.median(cpus[name])} for name in cases}


def first_attacks(argv: list[str], db: Path, runs: int, env: dict[str, str] | None = None) -> dict[str, float]:
    """Median and minimum wall seconds and median CPU seconds of ``argv`` (an attack on ``db``)
    run as the first attack on the database: its replica (``pipeline.replica.replica_path``)
    removed before each of ``runs`` runs, so that each reads DuckDB and writes the replica."""
    sys.path.insert(0, str(ROOT))
    from pipeline.replica import replica_path

    walls, cpus = [], []
    for _ in range(runs):
        replica_path(db).unlink(missing_ok=True)
        before, start = os.times(), time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd=ROOT, env=env)
        walls.append(time.perf_counter() - start)
        after = os.times()
        cpus.append(after.children_user - before.children_user + after.children_system - before.children_system)
    if not replica_path(db).is_file():
        raise SystemExit(f"the first attack wrote no replica of {db}")
    return {"wall_median_s": statistics.median(walls), "wall_min_s": min(walls), "cpu_median_s": statistics.median(cpus)}


def import_breakdown(argv: list[str], env: dict[str, str] | None = None, top: int = 12) -> list[tuple[str, int]]:
    """(top-level package, import microseconds) for what ``argv`` imports, largest first: the
    self time of each module from ``python -X importtime`` (``argv`` without the interpreter),
    summed per top-level package (``numpy.linalg`` counts to ``numpy``)."""
    out = subprocess.run([sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, cwd=ROOT,
                         env=env)
    totals: dict[str, int] = {}
    for line in out.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue
        package = parts[2].strip().split(".")[0]
        totals[package] = totals.get(package, 0) + int(parts[0])
    return sorted(totals.items(), key=lambda item: -item[1])[:top]


_IN_PROCESS = """
import contextlib, io, json, sys, time
from pipeline.cli.attack_command import run_plain
from pipeline import query
import pipeline.engine.service, pipeline.engine.exact
args = json.loads(sys.argv[1])
start = time.process_time()
query.open_database(args[args.index("--db") + 1]).close()
times = [time.process_time() - start]
for _ in range(2):
    start = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        assert run_plain(args[1:]) == 0
    times.append(time.process_time() - start)
print(json.dumps(times))
"""


def in_process(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """CPU seconds in one process after the imports of the command ``args`` (``attack ...``): the
    database opened (its schema checked, once per process), then the command run twice (the
    first reads the database's blocks, the second finds them read): what is left once the
    libraries are loaded."""
    out = subprocess.run([sys.executable, "-c", _IN_PROCESS, json.dumps(args)], capture_output=True, text=True,
                         cwd=ROOT, check=True, env=env)
    opened, first, again = json.loads(out.stdout.strip().splitlines()[-1])
    return opened, first, again


#: The console script's entry point, run by the interpreter (for ``-X importtime``).
_CONSOLE = "import sys; sys.argv[0] = 'wh40k'; from pipeline.wh40k import console; console()"


def _report(title: str, figures: dict[str, dict[str, float]], runs: int) -> None:
    reference = figures["python -c pass (reference)"]["cpu_median_s"]
    print(f"{title}, whole processes, {runs} runs each (load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores)")
    print(f"  {'':<42}{'wall median':>12}{'wall min':>10}{'CPU median':>12}{'CPU / ref':>10}")
    for name, f in figures.items():
        ratio = f["cpu_median_s"] / reference if reference else float("nan")
        print(f"  {name:<42}{f['wall_median_s']:>10.3f} s{f['wall_min_s']:>8.3f} s{f['cpu_median_s']:>10.3f} s"
              f"{ratio:>9.1f}x")
    floor, attack = figures[FLOOR], figures[ATTACK]
    print(f"  {'attack - import numpy':<42}{attack['wall_median_s'] - floor['wall_median_s']:>10.3f} s"
          f"{attack['wall_min_s'] - floor['wall_min_s']:>8.3f} s"
          f"{attack['cpu_median_s'] - floor['cpu_median_s']:>10.3f} s")


FLOOR = "import numpy"
ATTACK = "wh40k attack ... --format json"
FIRST = "the first attack (no replica yet)"


def main() -> None:
    # OpenBLAS with one thread in every case, as the command line sets it for itself (and ``make
    # bench`` for all): an ``import numpy`` with OpenBLAS's threads costs some 50 ms more CPU
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "db" / "wh40k.duckdb"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    if not db.exists():
        subprocess.run([str(SCRIPT), "build", "--raw", "raw", "--db", str(db)], check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    attack = ["attack", "Battle Sisters Squad", "--target", "MEQ", "--format", "json", "--db", str(db)]
    imports = lambda modules: [sys.executable, "-c", f"import {modules}"]  # noqa: E731
    cases = {
        "python -c pass (reference)": [sys.executable, "-c", "pass"],
        FLOOR: imports("numpy"),
        "import duckdb": imports("duckdb"),
        "import duckdb, numpy": imports("duckdb, numpy"),
        "import typer": imports("typer"),
        "import pydantic": imports("pydantic"),
        "import duckdb, numpy, typer, pydantic": imports("duckdb, numpy, typer, pydantic"),
        "import duckdb, numpy, pydantic": imports("duckdb, numpy, pydantic"),
        "import the attack's modules": imports("pipeline.cli.attack_command, pipeline.engine.service, "
                                               "pipeline.engine.exact, pipeline.query"),
        "wh40k --help": [str(SCRIPT), "--help"],
        ATTACK: [str(SCRIPT), *attack],
        "wh40k attack ... --format json --explain": [str(SCRIPT), *attack, "--explain"],
        # pipeline.cli.group.main is typer's command line (``python -m pipeline.cli`` and the ``wh40k``
        # script take the plain path for a plain attack)
        "the same through typer (pipeline.cli.group.main)": [
            sys.executable, "-c", "import sys; sys.argv[0] = 'wh40k'; from pipeline.cli.group import main; main()",
            *attack],
    }
    with tempfile.TemporaryDirectory(prefix="bench-cli-pycache-") as pycache:
        compiled = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        compiled["PYTHONPYCACHEPREFIX"] = pycache
        environments: dict[str, dict[str, str] | None] = {}
        if sys.flags.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE"):
            environments["as this environment runs them (PYTHONDONTWRITEBYTECODE set: every process compiles "
                         "this project's modules)"] = None
        environments["with bytecode written (as on a user's machine)"] = compiled
        results = {}
        for label, env in environments.items():
            figures = measure(cases, runs, env)
            results[label] = figures
            _report(f"Command-line start, {label}", figures, runs)
            first = first_attacks([str(SCRIPT), *attack], db, FIRST_RUNS, env)
            figures[FIRST] = first
            print(f"  {FIRST:<42}{first['wall_median_s']:>10.3f} s{first['wall_min_s']:>8.3f} s"
                  f"{first['cpu_median_s']:>10.3f} s  ({FIRST_RUNS} runs: reads DuckDB, writes the replica)")
            opened, first, again = in_process(attack, env)
            print(f"  {'in one process, its imports done:':<42}{'':>22}{opened:>10.3f} s  the database opened "
                  "(schema checked)")
            print(f"  {'':<42}{'':>22}{first:>10.3f} s  a first attack")
            print(f"  {'':<42}{'':>22}{again:>10.3f} s  a second attack")
        print("Imports of `wh40k attack ... --format json` by top-level package (python -X importtime, self time "
              "summed, one run, bytecode written)")
        for name, micros in import_breakdown(["-c", _CONSOLE, *attack], compiled):
            print(f"  {name:<42}{micros / 1000:>8.1f} ms")
    print(json.dumps({label: {name: {k: round(v, 4) for k, v in f.items()} for name, f in figures.items()}
                      for label, figures in results.items()}))


if __name__ == "__main__":
    main()
