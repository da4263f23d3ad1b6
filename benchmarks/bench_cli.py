"""Benchmark of the command line's start: whole processes, from start to exit.

Run with ``python benchmarks/bench_cli.py [DB] [RUNS]`` (``make bench``; default ``db/wh40k.duckdb``,
built from the seeds when missing, and 20 runs). Prints figures, asserts nothing:

- reference: a bare ``python -c pass`` of the same interpreter, in the same run;
- ``wh40k --help``;
- ``wh40k attack "Battle Sisters Squad" --target MEQ --format json`` (issue 14: under 0.15 s), and
  the same with ``--explain`` (the rule wordings looked up);

each as the median and the minimum wall time over RUNS runs and the median CPU time (user + system
of the process), the CPU time as a multiple of the reference's: a machine busy with other work
stretches the wall time much more than the CPU time. Then the largest imports of the attack
(``python -X importtime``: the self time of each module summed per top-level package), one run.
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


def main() -> None:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "db" / "wh40k.duckdb"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    if not db.exists():
        subprocess.run([str(SCRIPT), "build", "--raw", "raw", "--db", str(db)], check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    attack = ["attack", "Battle Sisters Squad", "--target", "MEQ", "--format", "json", "--db", str(db)]
    cases = {
        "python -c pass (reference)": [sys.executable, "-c", "pass"],
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
    print("Imports of `wh40k attack ... --format json` by top-level package (python -X importtime, self time "
          "summed, one run)")
    for name, micros in import_breakdown(["-m", "pipeline.cli", *attack]):
        print(f"  {name:<42}{micros / 1000:>8.1f} ms")
    print(json.dumps({name: {k: round(v, 4) for k, v in f.items()} for name, f in figures.items()}))


if __name__ == "__main__":
    main()
