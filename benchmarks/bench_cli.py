"""Benchmark of the command line's start: whole processes, from start to exit.

Run with ``python benchmarks/bench_cli.py [DB] [RUNS]`` (``make bench``; default ``db/wh40k.duckdb``,
built from the seeds when missing, and 20 runs). Prints figures, asserts nothing:

- reference: a bare ``python -c pass`` of the same interpreter, in the same run;
- the imports alone: numpy, duckdb, both (the floor of the chosen stack), typer, pydantic, all
  four, and every module the attack uses;
- ``wh40k --help`` (answered from ``pipeline.commands`` without typer: about the reference);
- ``wh40k attack "Battle Sisters Squad" --target MEQ --format json`` (issue 14: under 0.15 s), and
  the same with ``--explain`` (the rule wordings looked up);

each as the median and the minimum wall time over RUNS runs and the median CPU time (user + system
of the process), the CPU time as a multiple of the reference's: a machine busy with other work
stretches the wall time much more than the CPU time. Then the largest imports of the attack
(``python -X importtime``: the self time of each module summed per top-level package), one run, and
the attack run twice in one process once its imports are done (CPU time).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).with_name("wh40k")


def measure(argv: list[str], runs: int) -> dict[str, float]:
    """Median and minimum wall seconds and median CPU seconds (user + system) of ``argv`` over
    ``runs`` runs, each a new process (stdout and stderr discarded); one warm-up run first."""
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd=ROOT)
    walls, cpus = [], []
    for _ in range(runs):
        before, start = os.times(), time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd=ROOT)
        walls.append(time.perf_counter() - start)
        after = os.times()
        cpus.append(after.children_user - before.children_user + after.children_system - before.children_system)
    return {"wall_median_s": statistics.median(walls), "wall_min_s": min(walls), "cpu_median_s": statistics.median(cpus)}


def import_breakdown(argv: list[str], top: int = 12) -> list[tuple[str, int]]:
    """(top-level package, import microseconds) for what ``argv`` imports, largest first: the
    self time of each module from ``python -X importtime`` (``argv`` without the interpreter),
    summed per top-level package (``numpy.linalg`` counts to ``numpy``)."""
    out = subprocess.run([sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, cwd=ROOT)
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
from pipeline import cli
import pipeline.cli.attack, pipeline.engine.service, pipeline.engine.exact, pipeline.query
times = []
for _ in range(2):
    start = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        cli.run(json.loads(sys.argv[1]))
    times.append(time.process_time() - start)
print(json.dumps(times))
"""


def in_process(args: list[str]) -> tuple[float, float]:
    """CPU seconds of the command ``args`` run twice in one process after its imports: (the
    first call, which opens the database, the second): what is left once the libraries are loaded."""
    out = subprocess.run([sys.executable, "-c", _IN_PROCESS, json.dumps(args)], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    first, again = json.loads(out.stdout.strip().splitlines()[-1])
    return first, again


def main() -> None:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "db" / "wh40k.duckdb"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    if not db.exists():
        subprocess.run([str(SCRIPT), "build", "--raw", "raw", "--db", str(db)], check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    attack = ["attack", "Battle Sisters Squad", "--target", "MEQ", "--format", "json", "--db", str(db)]
    imports = lambda modules: [sys.executable, "-c", f"import {modules}"]  # noqa: E731
    cases = {
        "python -c pass (reference)": [sys.executable, "-c", "pass"],
        "import numpy": imports("numpy"),
        "import duckdb": imports("duckdb"),
        "import duckdb, numpy (the stack's floor)": imports("duckdb, numpy"),
        "import typer": imports("typer"),
        "import pydantic": imports("pydantic"),
        "import duckdb, numpy, typer, pydantic": imports("duckdb, numpy, typer, pydantic"),
        "import pipeline.cli.attack (and the engine)": imports("pipeline.cli.attack, pipeline.engine.service, "
                                                               "pipeline.engine.exact, pipeline.query"),
        "wh40k --help": [str(SCRIPT), "--help"],
        "wh40k attack ... --format json": [str(SCRIPT), *attack],
        "wh40k attack ... --format json --explain": [str(SCRIPT), *attack, "--explain"],
    }
    figures = {name: measure(argv, runs) for name, argv in cases.items()}
    reference = figures["python -c pass (reference)"]["cpu_median_s"]
    print(f"Command-line start, whole processes, {runs} runs each (load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores)")
    print(f"  {'':<42}{'wall median':>12}{'wall min':>10}{'CPU median':>12}{'CPU / ref':>10}")
    for name, f in figures.items():
        ratio = f["cpu_median_s"] / reference if reference else float("nan")
        print(f"  {name:<42}{f['wall_median_s']:>10.3f} s{f['wall_min_s']:>8.3f} s{f['cpu_median_s']:>10.3f} s"
              f"{ratio:>9.1f}x")
    first, again = in_process(attack)
    print(f"  {'attack in the process, its imports done':<42}{'':>22}{first:>10.3f} s  first call (the database opened)")
    print(f"  {'':<42}{'':>22}{again:>10.3f} s  a second call")
    if sys.flags.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("  note: PYTHONDONTWRITEBYTECODE is set: every process compiles this project's modules again "
              "(unset it for a user's figures)")
    print("Imports of `wh40k attack ... --format json` by top-level package (python -X importtime, self time "
          "summed, one run)")
    for name, micros in import_breakdown(["-m", "pipeline.cli", *attack]):
        print(f"  {name:<42}{micros / 1000:>8.1f} ms")
    print(json.dumps({name: {k: round(v, 4) for k, v in f.items()} for name, f in figures.items()}))


if __name__ == "__main__":
    main()
