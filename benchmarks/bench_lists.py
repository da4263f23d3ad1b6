"""Benchmark of ``wh40k matchup``: two 2,000-point army lists of the corpus against each other.

Run with ``python benchmarks/bench_lists.py DB [CORPUS]``: DB a database holding the corpus's
11th-edition Game Datacards datasheets (``wh40k fetch --mirror ../shared/corpus`` then
``make build-db``, or the list tests' database), CORPUS the corpus folder (default
``../shared/corpus`` beside the checkout). Prints figures, asserts nothing: per pair of lists
(World Eaters against T'au and back, both phases) the time to read and match both lists, the wall
and CPU time of ``pipeline.lists.matchup.matchup``, the pairs, the distinct attacks resolved and
by which engine; and, as a reference in the same process, the same matchup with ``reuse=False``: no cache
of distinct attacks, no batch engine (every pair resolved on its own).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the command line sets it

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAIRS = (("11e/Test-WE-GWAPP-English", "11e/Test-TAU-GWAPP-English"),
         ("11e/Test-TAU-GWAPP-English", "11e/Test-WE-GWAPP-English"))


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def main(db: str, corpus: Path) -> None:
    from pipeline.lists import read_list
    from pipeline.lists import matchup as module
    from pipeline.lists.match import match_list
    from pipeline.query import open_database

    con = open_database(db)
    for mine_name, theirs_name in PAIRS:
        (mine, theirs), wall, cpu = _timed(lambda: [match_list(con, read_list(corpus / "lists" / n), 11)
                                                    for n in (mine_name, theirs_name)])
        print(f"{mine_name} against {theirs_name}: read and matched in {wall:.2f} s wall / {cpu:.2f} s CPU")
        result, wall, cpu = _timed(lambda: module.matchup(con, mine, theirs, edition=11))
        counts = ", ".join(f"{k} {v}" for k, v in result.counts.items())
        print(f"  matchup: {wall:.2f} s wall / {cpu:.2f} s CPU; {counts}")
        methods: dict[str, int] = {}
        for row in result.rows:
            methods[row["method"]] = methods.get(row["method"], 0) + 1
        print("  rows by method: " + ", ".join(f"{k} {v}" for k, v in sorted(methods.items())))
        reference, ref_wall, ref_cpu = _timed(lambda: module.matchup(con, mine, theirs, edition=11, reuse=False))
        print(f"  reference (no cache, no batch engine): {ref_wall:.2f} s wall / {ref_cpu:.2f} s CPU; "
              f"x{ref_cpu / cpu:.1f} the CPU time")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python benchmarks/bench_lists.py DB [CORPUS]")
    main(sys.argv[1], Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT.parent / "shared" / "corpus")
