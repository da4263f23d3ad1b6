"""Benchmark of the attack engine: exact engine vs Monte Carlo simulator, and profiles per second.

Run with ``python benchmarks/bench_engine.py`` (``make bench``). Prints figures, asserts nothing
(STYLE.md 14): the simulator is the reference measured in the same process.

(a) the exact engine on the reference case: a 20-model unit firing two weapons, A2 BS3+ S4 AP0 D1
    [SUSTAINED HITS 1, LETHAL HITS] and A1 BS3+ S5 AP-1 D2 [DEVASTATING WOUNDS], at 10 models of
    T4 Sv3+ W2 with Feel No Pain 5+ (median of many runs);
(b) the simulator on the same case at 100,000 trials, and the ratio (a)/(b);
(c) ``bench_profiles_per_second``: expected damage of weapon profiles against MEQ with the exact
    engine, on 500 generated profiles.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.engine.exact import resolve  # noqa: E402
from pipeline.engine.profiles import Anti, Context, Target, Weapon  # noqa: E402
from pipeline.engine.simulate import simulate  # noqa: E402
from pipeline.normalise.characteristics import dice  # noqa: E402

#: Space Marine equivalent: T4 Sv3+ W2, a unit of 10.
MEQ = Target(toughness=4, save=3, wounds=2, models=10, keywords=frozenset({"INFANTRY"}), name="MEQ")

REFERENCE_WEAPONS = [
    Weapon(name="bolt rifle (SH1, LH)", attacks=dice("2"), skill=3, strength=4, armour_penetration=0,
           damage=dice("1"), models=20, sustained_hits=dice("1"), lethal_hits=True),
    Weapon(name="heavy bolter (DW)", attacks=dice("1"), skill=3, strength=5, armour_penetration=-1,
           damage=dice("2"), models=20, devastating_wounds=True),
]
REFERENCE_TARGET = Target(toughness=4, save=3, wounds=2, models=10, feel_no_pain=5, name="10x W2 FNP5+")


def median_seconds(run: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``repeats`` calls of ``run`` (after one warm-up call), in seconds."""
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_profiles_per_second(weapons: Sequence[Weapon], target: Target = MEQ) -> tuple[float, list[float]]:
    """Expected damage of each weapon profile against ``target`` (MEQ by default), exact engine.

    Returns (profiles per second, the expected damage of each profile in order).
    """
    start = time.perf_counter()
    expected = [resolve([w], target, Context()).damage.mean for w in weapons]
    elapsed = time.perf_counter() - start
    return len(weapons) / elapsed, expected


def generated_profiles(count: int = 500, seed: int = 0) -> list[Weapon]:
    """``count`` varied weapon profiles (dice A and D, BS, S, AP, common abilities), seeded."""
    rng = np.random.default_rng(seed)
    pick = lambda options: options[int(rng.integers(len(options)))]  # noqa: E731
    profiles = []
    for i in range(count):
        torrent = rng.random() < 0.08
        profiles.append(Weapon(
            name=f"profile {i}",
            attacks=dice(pick(["1", "2", "3", "4", "6", "D3", "D6", "D6+1", "2D6"])),
            skill=None if torrent else int(rng.integers(2, 6)),
            strength=int(pick([3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16])),
            armour_penetration=-int(rng.integers(0, 5)),
            damage=dice(pick(["1", "1", "2", "3", "D3", "D6", "D6+1", "D6+2"])),
            is_melee=rng.random() < 0.3,
            models=int(pick([1, 1, 2, 3, 5, 10])),
            torrent=torrent,
            sustained_hits=dice(pick(["1", "2", "D3"])) if rng.random() < 0.2 else None,
            lethal_hits=bool(rng.random() < 0.2),
            devastating_wounds=bool(rng.random() < 0.15),
            anti=(Anti("INFANTRY", int(pick([2, 3, 4]))),) if rng.random() < 0.1 else (),
            twin_linked=bool(rng.random() < 0.1),
            melta=dice("2") if rng.random() < 0.05 else None,
            blast=1 if rng.random() < 0.1 else None,
        ))
    return profiles


def database_profiles(db: Path) -> list[Weapon] | None:
    """Every ranged weapon profile of the built database, or None when it is not built."""
    if not db.exists():
        return None
    from pipeline.engine.from_db import all_weapon_profiles
    from pipeline.query import open_database

    return all_weapon_profiles(open_database(db))


def main() -> None:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("db/wh40k.duckdb")
    context = Context()
    start = time.perf_counter()
    resolve(REFERENCE_WEAPONS, REFERENCE_TARGET, context)  # first call of the process: no cache warm
    exact_cold_s = time.perf_counter() - start
    exact_s = median_seconds(lambda: resolve(REFERENCE_WEAPONS, REFERENCE_TARGET, context), repeats=51)
    sim_s = median_seconds(
        lambda: simulate(REFERENCE_WEAPONS, REFERENCE_TARGET, context, trials=100_000), repeats=5
    )
    exact = resolve(REFERENCE_WEAPONS, REFERENCE_TARGET, context)
    sim = simulate(REFERENCE_WEAPONS, REFERENCE_TARGET, context, trials=100_000)
    rate, _ = bench_profiles_per_second(generated_profiles(500))
    db_weapons = database_profiles(db)
    db_rate = bench_profiles_per_second(db_weapons)[0] if db_weapons else None

    rows = [
        ("(a) exact engine, reference case", f"{exact_s * 1e3:.2f} ms", "median of 51"),
        ("    first call in the process", f"{exact_cold_s * 1e3:.2f} ms", "cold caches"),
        ("(b) simulator, 100,000 trials", f"{sim_s * 1e3:.1f} ms", "median of 5"),
        ("(a)/(b) time ratio", f"{exact_s / sim_s:.4f}", "< 1: exact is faster"),
        ("(c) exact E[damage] vs MEQ", f"{rate:,.0f} profiles/s", "500 generated profiles"),
    ]
    if db_rate is not None:
        rows.append(("(c) every ranged profile of the database", f"{db_rate:,.0f} profiles/s",
                     f"{len(db_weapons)} profiles in {db}"))
    else:
        rows.append(("(c) every ranged profile of the database", "-", f"{db} not built: make build-db"))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>20}  note")
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>20}  {note}")
    print()
    for stage in ("damage", "models_destroyed"):
        e, s = getattr(exact, stage).mean, getattr(sim, stage).mean
        print(f"reference case E[{stage}]: exact {e:.4f}, simulated {s:.4f}")


if __name__ == "__main__":
    main()
