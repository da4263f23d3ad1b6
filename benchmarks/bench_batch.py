"""Benchmark of the batch engine (``pipeline.engine.batch.resolve_batch``) against the exact
engine called pair by pair, in the same run.

Run with ``python benchmarks/bench_batch.py [DB] [PAIRS]`` (``make bench``; default
``db/wh40k.duckdb``, built from the seeds when missing, and a loop of 300 pairs). Prints figures,
asserts nothing: for each edition, every weapon profile of the database (ranged and melee, one
model each) against every datasheet target and the standard profiles, as ``wh40k matchups`` reads
them:

- the batch: distinct pairs, wall and CPU seconds per phase, distinct pairs a second;
- the loop: ``exact.resolve`` on PAIRS distinct pairs drawn with a fixed seed, pairs a second;
- the ratio of the two rates, and the largest difference of the four figures on those pairs.

The full data (``wh40k matchups`` on a build with the fetched sources) prints its own figures:
``wh40k matchups --format json`` gives the pairs a second and the seconds of each phase.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.database import open_database  # noqa: E402
from pipeline.engine import batch, exact  # noqa: E402
from pipeline.engine.profiles import Context  # noqa: E402
from pipeline.matchups import edition_inputs  # noqa: E402


def main(db: Path, loop_pairs: int) -> None:
    if not db.exists():
        from pipeline.build import build

        build(ROOT / "raw", db)
    con = open_database(db)
    try:
        inputs = {edition: edition_inputs(con, edition) for edition in (10, 11)}
    finally:
        con.close()
    for edition, (weapons, targets) in inputs.items():
        if not weapons:
            print(f"edition {edition}: no weapon profiles in this database")
            continue
        context = Context(edition=edition)
        start, cpu = time.perf_counter(), time.process_time()
        result = batch.resolve_batch(weapons, targets, context)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        rate = result.distinct_pairs / wall
        phases = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in result.seconds.items())
        print(f"edition {edition}: {len(weapons)} profiles x {len(targets)} targets, {result.distinct_pairs} distinct "
              f"pairs ({result.devastating_pairs} Devastating Wounds, {result.refused_pairs} refused): "
              f"{wall:.2f} s wall, {cpu:.2f} s CPU ({phases}); {rate:,.0f} distinct pairs/s")
        rng = np.random.default_rng(14)
        picks = [(int(rng.integers(len(weapons))), int(rng.integers(len(targets)))) for _ in range(loop_pairs)]
        start = time.perf_counter()
        worst = 0.0
        done = 0
        for i, j in picks:
            try:
                r = exact.resolve([weapons[i]], targets[j], context)
            except exact.EngineInputError:
                continue
            done += 1
            expected = (r.damage.mean, r.models_destroyed.mean, 1.0 - float(r.models_destroyed.pmf[0]),
                        r.target_destroyed)
            worst = max(worst, max(abs(a - b) for a, b in zip(expected, result.figures(i, j).values())))
        loop = time.perf_counter() - start
        loop_rate = done / loop if loop else float("nan")
        print(f"  exact.resolve in a loop: {done} pairs in {loop:.2f} s, {loop_rate:,.0f} pairs/s; "
              f"batch / loop = {rate / loop_rate:.1f}x; largest difference of the figures {worst:.2g}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "db" / "wh40k.duckdb",
         int(sys.argv[2]) if len(sys.argv) > 2 else 300)
