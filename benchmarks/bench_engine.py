"""Benchmark of the attack engine: exact engine vs Monte Carlo simulator, and profiles per second.

Run with ``python benchmarks/bench_engine.py`` (``make bench``). Prints figures, asserts nothing
(STYLE.md 14): the simulator is the reference measured in the same process.

(a) the exact engine on the reference case: a 20-model unit firing two weapons, A2 BS3+ S4 AP0 D1
    [SUSTAINED HITS 1, LETHAL HITS] and A1 BS3+ S5 AP-1 D2 [DEVASTATING WOUNDS], at 10 models of
    T4 Sv3+ W2 with Feel No Pain 5+ (median of many runs): asked again, as a service or a
    table of matchups asks it (the engine keeps each weapon's plan per target and context),
    with no kept plan (the one-shot call: each call makes its plans; the small tables kept by
    value, pmfs, binomials, transition matrices and their powers, stay) and with every cache of the engine
    emptied before each call;
(b) the simulator on the same case at 100,000 trials, and the ratios (a)/(b);
(c) ``bench_profiles_per_second``: expected damage of weapon profiles against MEQ with the exact
    engine, on 500 generated profiles;
(d) the peer: W40kDiviner's exact engine (GPL, never copied here: imported from a checkout
    outside the repository named by ``W40K_PEER``, e.g. ``git clone
    https://github.com/aturchi/W40kDiviner /tmp/peer; W40K_PEER=/tmp/peer make bench``) on the
    reference case, its time, the ratios to (a) and both E[models destroyed]; the one-shot ratio
    (the peer's CPU time over (a)'s with no kept plan: the peer keeps nothing between calls) is
    printed by name, the median of rounds timing both in turn (``one_shot_rounds``);
(e) the sweep: the exact engine at 10 to 400 attacks on each path (plain, Sustained Hits 1,
    Devastating Wounds, both, Lethal Hits with Devastating Wounds; Damage 1 and D6+2) against
    the reference target, with the exponent of a least-squares fit of log time on log attacks
    per path (1 is linear growth), two Devastating Wounds weapons of Damage 1 and 2 (half the
    attacks each, no plan kept) against the reference target and 250 x W2, and the 400-attack D6 case with Sustained Hits 1 and
    Devastating Wounds with its peak memory (tracemalloc); then 2, 3 and 4 Devastating Wounds
    weapons of 1,000 attacks each against 20 x W25, and 2 against 5 x W100 and 2 x W250 (the last
    weapon's count expanded), each with its time and peak memory; then 3 and 6 Devastating Wounds
    weapons of 400 attacks each against every target of the database.

``python benchmarks/bench_engine.py DB --every-target N`` prints only the last row, for N such
weapons of 400 attacks each (their Damage cycles through ``EVERY_TARGET_DAMAGE``).
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.engine import exact  # noqa: E402
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


def median_seconds(run: Callable[[], object], repeats: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Median time of ``repeats`` calls of ``run`` (after one warm-up call), in seconds: wall time,
    or the CPU time of this thread with ``clock=time.thread_time`` (steadier on a busy machine)."""
    run()
    times = []
    for _ in range(repeats):
        start = clock()
        run()
        times.append(clock() - start)
    return statistics.median(times)


def clear_engine_caches(everything: bool = False) -> None:
    """Empty the engine's kept plans (``exact._plan_kept``, and the chain's figures and state
    kept with them), or with ``everything`` every cache of ``pipeline.engine.exact`` (also the pmfs,
    binomials, transition matrices and their powers kept by value; not the edition rules, read once per
    process)."""
    exact._plan_kept.cache_clear()
    exact._chain_method.cache_clear()
    exact._chain_kept.cache_clear()
    if everything:
        for value in _engine_caches():
            value.cache_clear()


_CACHES: list = []


def _engine_caches() -> list:
    """Every cache (``lru_cache``) of ``pipeline.engine.exact``, listed once (so that emptying
    them, timed with the call of "nothing kept", costs next to nothing)."""
    if not _CACHES:
        _CACHES.extend(value for value in vars(exact).values() if callable(value) and hasattr(value, "cache_clear")
                       and getattr(value, "__module__", None) == exact.__name__)
    return _CACHES


def uncached(run: Callable[[], object], everything: bool = False) -> Callable[[], object]:
    """``run`` with the engine's caches emptied first (``clear_engine_caches``; the emptying is
    timed with it: a few microseconds)."""
    def cold() -> object:
        clear_engine_caches(everything)
        return run()
    return cold


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


#: The distinct (Wounds, models) of every model profile of the database at its unit's largest size
#: (the maxima of its composition lines summed, at least its Starting Strength).
DATABASE_TARGETS_SQL = """
SELECT DISTINCT m.wounds, greatest(coalesce(c.largest, 1), coalesce(d.starting_strength, 1)) AS models
FROM model_profiles m JOIN datasheets d USING (datasheet_id)
LEFT JOIN (SELECT datasheet_id, sum(max_models) AS largest FROM unit_composition GROUP BY 1) c USING (datasheet_id)
WHERE m.wounds > 0 ORDER BY 1, 2
"""

#: The Damage of each Devastating Wounds weapon in the rows against every target of the database
#: (the first 6 in ``make bench``; more weapons cycle through them all).
EVERY_TARGET_DAMAGE = ("1", "2", "3", "D6", "D3", "D6+2", "D3+1", "4", "5", "6", "D6+1", "2D3", "3D3", "2D6", "7")


def database_targets(db: Path) -> list[Target] | None:
    """A T4 Sv3+ target of each distinct (Wounds, models) of the database (``DATABASE_TARGETS_SQL``),
    or None when it is not built."""
    if not db.exists():
        return None
    from pipeline.query import open_database

    rows = open_database(db).execute(DATABASE_TARGETS_SQL).fetchall()
    return [Target(toughness=4, save=3, wounds=w, models=m, name=f"{m} x W{w}") for w, m in rows]


def every_target(targets: Sequence[Target], attacks: int, damages: Sequence[str],
                 context: Context) -> tuple[int, float, str]:
    """(attacks refused, slowest seconds, the slowest target's name) of ``len(damages)``
    Devastating Wounds weapons of ``attacks`` attacks each (``several_devastating``) against each
    of ``targets``; a refusal is the engine's ``InputError``."""
    from pipeline.errors import InputError

    refused, slowest, name = 0, 0.0, "-"
    weapons = several_devastating(attacks * len(damages), damages)
    for target in targets:
        start = time.perf_counter()
        try:
            resolve(weapons, target, context)
        except InputError:
            refused += 1
            continue
        seconds = time.perf_counter() - start
        if seconds > slowest:
            slowest, name = seconds, target.name
    return refused, slowest, name


def peer_models_destroyed(peer: Path) -> Callable[[], float]:
    """A function that resolves the reference case with the peer's engine (W40kDiviner, a
    checkout at ``peer``: its ``src/`` on ``sys.path``) and returns E[models destroyed]."""
    sys.path.insert(0, str(peer / "src"))
    import attack_math  # noqa: PLC0415  (the peer's modules)
    import kill_chain  # noqa: PLC0415
    from unit_model import Weapon as PeerWeapon  # noqa: PLC0415

    ref = {"T": REFERENCE_TARGET.toughness, "Sv": REFERENCE_TARGET.save, "W": REFERENCE_TARGET.wounds,
           "invuln": None, "fnp": REFERENCE_TARGET.feel_no_pain, "models": REFERENCE_TARGET.models, "keywords": []}

    def run() -> float:
        allocs = []
        for w in (PeerWeapon("bolt rifle", "Ranged", "2", 3, 4, 0, "1", count=20,
                             keywords=["SUSTAINED HITS 1", "LETHAL HITS"]),
                  PeerWeapon("heavy bolter", "Ranged", "1", 3, 5, -1, "2", count=20,
                             keywords=["DEVASTATING WOUNDS"])):
            mech = attack_math.WeaponMechanics()
            attack_math.parse_weapon_keywords(w.keywords, mech)
            allocs.append(attack_math.analyze_weapon(w, ref, {}, mech, alloc=True)["alloc"])
        kills = kill_chain.kills_pmf(allocs, ref["W"], ref["models"])
        return sum(k * p for k, p in enumerate(kills))

    return run


def one_shot_rounds(ours: Callable[[], object], peer: Callable[[], object], rounds: int = 7) -> list[float]:
    """The peer's CPU time over ours, per round: each round times ``ours`` (median of 25) and then
    ``peer`` (median of 9) in the same second, so that a change of the machine's speed between
    rounds (a shared virtual machine's) moves both. Returns the ``rounds`` ratios."""
    ratios = []
    for _ in range(rounds):
        mine = median_seconds(ours, repeats=25, clock=time.thread_time)
        theirs = median_seconds(peer, repeats=9, clock=time.thread_time)
        ratios.append(theirs / mine)
    return ratios


SWEEP_ATTACKS = (10, 20, 50, 100, 200, 400)
SWEEP_PATHS = {
    "plain": {},
    "Sustained Hits 1": {"sustained_hits": dice("1")},
    "Devastating Wounds": {"devastating_wounds": True},
    "Sustained Hits 1 + Devastating Wounds": {"sustained_hits": dice("1"), "devastating_wounds": True},
    "Lethal Hits + Devastating Wounds": {"lethal_hits": True, "devastating_wounds": True},
}


def sweep_weapon(attacks: int, damage: str, abilities: dict) -> Weapon:
    """``attacks`` models of A1 BS3+ S4 AP-1 with ``damage`` and ``abilities``."""
    return Weapon(name="sweep", attacks=dice("1"), skill=3, strength=4, armour_penetration=-1, damage=dice(damage),
                  models=attacks, **abilities)


def fitted_exponent(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Slope of the least-squares line of log(ys) on log(xs).

    >>> round(fitted_exponent([10, 100], [1.0, 10.0]), 6)
    1.0
    """
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


#: A unit of many models for the sweep of two Devastating Wounds weapons of different Damage.
MANY = Target(toughness=4, save=3, wounds=2, models=250, name="250 x W2")

#: A unit of many models of many Wounds for the sweeps and the 1,000-attack rows of several
#: Devastating Wounds weapons of different Damage (the kill counts' largest tensor, W^3 x models).
TOUGH = Target(toughness=4, save=3, wounds=25, models=20, name="20 x W25")

#: Units of a few models of many Wounds for the rows of two Devastating Wounds weapons of
#: different Damage that the last weapon's count expanded resolves (the kill counts' tensor and
#: the main chain's two pending counts are 2.4e10 steps and more there).
FEW_MANY_WOUNDS = (Target(toughness=4, save=3, wounds=100, models=5, name="5 x W100"),
                   Target(toughness=4, save=3, wounds=250, models=2, name="2 x W250"))

#: The Damage of each Devastating Wounds weapon in the rows of 2, 3 and 4 such weapons.
SEVERAL_DAMAGE = {2: ("1", "2"), 3: ("1", "2", "3"), 4: ("1", "2", "3", "D6")}


def several_devastating(attacks: int, damages: Sequence[str] = ("1", "2")) -> list[Weapon]:
    """Devastating Wounds weapons of ``attacks // len(damages)`` models each, one per Damage of
    ``damages`` (their pending counts differ: the chain takes the kill counts,
    ``pipeline.engine.kill_counts``)."""
    return [dataclasses.replace(sweep_weapon(attacks // len(damages), damage, {"devastating_wounds": True}),
                                name=f"D{damage}") for damage in damages]


def two_devastating(attacks: int) -> list[Weapon]:
    """Two Devastating Wounds weapons of ``attacks // 2`` models each, Damage 1 and 2."""
    return several_devastating(attacks, ("1", "2"))


def sweep(context: Context) -> list[tuple[str, list[float], float]]:
    """(path and Damage, median CPU seconds of the thread per attack count of ``SWEEP_ATTACKS``,
    fitted exponent), each call with no kept plan (``uncached``); CPU time, so that the exponent
    does not follow the machine's load."""
    rows = []
    for damage in ("1", "D6+2"):
        for path, abilities in SWEEP_PATHS.items():
            times = [median_seconds(uncached(lambda n=n: resolve([sweep_weapon(n, damage, abilities)], REFERENCE_TARGET,
                                                                 context)), repeats=5, clock=time.thread_time)
                     for n in SWEEP_ATTACKS]
            rows.append((f"{path}, D{damage}" if damage[0].isdigit() else f"{path}, {damage}", times,
                         fitted_exponent(SWEEP_ATTACKS, times)))
    for target in (REFERENCE_TARGET, MANY):
        times = [median_seconds(uncached(lambda n=n: resolve(two_devastating(n), target, context)), repeats=5,
                                clock=time.thread_time) for n in SWEEP_ATTACKS]
        rows.append((f"two DW weapons, D1 + D2, vs {target.name}", times, fitted_exponent(SWEEP_ATTACKS, times)))
    for count, damages in SEVERAL_DAMAGE.items():
        times = [median_seconds(uncached(lambda n=n: resolve(several_devastating(n, damages), TOUGH, context)),
                                repeats=3, clock=time.thread_time) for n in SWEEP_ATTACKS]
        rows.append((f"{count} DW weapons, Damage {' + '.join(damages)}, vs {TOUGH.name}", times,
                     fitted_exponent(SWEEP_ATTACKS, times)))
    return rows


def timed_with_peak(run: Callable[[], object]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds of the thread, peak MiB traced by tracemalloc) of one ``run``
    with every engine cache emptied first."""
    clear_engine_caches()
    tracemalloc.start()
    start, cpu = time.perf_counter(), time.thread_time()
    run()
    seconds, cpu = time.perf_counter() - start, time.thread_time() - cpu
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, cpu, peak / 2**20


def every_target_row(targets: Sequence[Target], count: int, context: Context) -> None:
    """Prints the row of ``count`` Devastating Wounds weapons of 400 attacks each against every
    one of ``targets`` (``every_target``), their Damage cycling through ``EVERY_TARGET_DAMAGE``."""
    damages = [EVERY_TARGET_DAMAGE[i % len(EVERY_TARGET_DAMAGE)] for i in range(count)]
    start = time.perf_counter()
    refused, slowest, name = every_target(targets, 400, damages, context)
    shown = ", ".join(damages) if count <= 6 else f"{len(set(damages))} distinct values"
    print(f"{count} DW weapons of 400 attacks, Damage {shown}, vs each of the {len(targets)} "
          f"targets of the database (each Wounds at its unit's largest size): {refused} refused, "
          f"slowest {slowest:.2f} s ({name}); all {time.perf_counter() - start:.0f} s")


def main() -> None:
    args = sys.argv[1:]
    every = None
    if "--every-target" in args:
        at = args.index("--every-target")
        every = int(args[at + 1])
        del args[at:at + 2]
    db = Path(args[0]) if args else Path("db/wh40k.duckdb")
    context = Context()
    if every is not None:
        targets = database_targets(db)
        if not targets:
            sys.exit(f"{db} not built: make build-db")
        every_target_row(targets, every, context)
        return
    start = time.perf_counter()
    resolve(REFERENCE_WEAPONS, REFERENCE_TARGET, context)  # first call of the process: no cache warm
    exact_cold_s = time.perf_counter() - start
    exact_s = median_seconds(lambda: resolve(REFERENCE_WEAPONS, REFERENCE_TARGET, context), repeats=51)
    exact_cpu_s = median_seconds(lambda: resolve(REFERENCE_WEAPONS, REFERENCE_TARGET, context), repeats=51,
                                 clock=time.thread_time)
    reference = lambda: resolve(REFERENCE_WEAPONS, REFERENCE_TARGET, context)  # noqa: E731
    exact_unplanned_cpu_s = median_seconds(uncached(reference), repeats=51, clock=time.thread_time)
    exact_uncached_cpu_s = median_seconds(uncached(reference, everything=True), repeats=51, clock=time.thread_time)
    sim_s = median_seconds(
        lambda: simulate(REFERENCE_WEAPONS, REFERENCE_TARGET, context, trials=100_000), repeats=5
    )
    sim_cpu_s = median_seconds(lambda: simulate(REFERENCE_WEAPONS, REFERENCE_TARGET, context, trials=100_000),
                               repeats=5, clock=time.thread_time)
    exact = resolve(REFERENCE_WEAPONS, REFERENCE_TARGET, context)
    sim = simulate(REFERENCE_WEAPONS, REFERENCE_TARGET, context, trials=100_000)
    rate, _ = bench_profiles_per_second(generated_profiles(500))
    db_weapons = database_profiles(db)
    db_rate = bench_profiles_per_second(db_weapons)[0] if db_weapons else None

    rows = [
        ("(a) exact engine, reference case", f"{exact_s * 1e3:.2f} ms", "median of 51"),
        ("    CPU time of the thread", f"{exact_cpu_s * 1e3:.2f} ms", "median of 51"),
        ("    CPU time, no kept plan", f"{exact_unplanned_cpu_s * 1e3:.2f} ms",
         "median of 51: the plans made again"),
        ("    CPU time, every engine cache emptied first", f"{exact_uncached_cpu_s * 1e3:.2f} ms",
         "median of 51: nothing kept"),
        ("    first call in the process", f"{exact_cold_s * 1e3:.2f} ms", "cold caches"),
        ("(b) simulator, 100,000 trials", f"{sim_s * 1e3:.1f} ms", "median of 5"),
        ("(a)/(b) time ratio", f"{exact_s / sim_s:.4f}", "< 1: exact is faster"),
        ("(a)/(b) CPU time ratio, no kept plan", f"{exact_unplanned_cpu_s / sim_cpu_s:.4f}",
         "the one-shot call against the simulator's CPU time"),
        ("(c) exact E[damage] vs MEQ", f"{rate:,.0f} profiles/s", "500 generated profiles"),
    ]
    if db_rate is not None:
        rows.append(("(c) every ranged profile of the database", f"{db_rate:,.0f} profiles/s",
                     f"{len(db_weapons)} profiles in {db}"))
    else:
        rows.append(("(c) every ranged profile of the database", "-", f"{db} not built: make build-db"))
    peer_dir = os.environ.get("W40K_PEER")
    peer_mean = None
    if peer_dir and (Path(peer_dir) / "src" / "kill_chain.py").exists():
        peer_run = peer_models_destroyed(Path(peer_dir))
        peer_s = median_seconds(peer_run, repeats=21)
        peer_cpu_s = median_seconds(peer_run, repeats=21, clock=time.thread_time)
        peer_mean = peer_run()
        rows.append(("(d) W40kDiviner exact engine, reference case", f"{peer_s * 1e3:.2f} ms", "median of 21"))
        rows.append(("    CPU time of the thread", f"{peer_cpu_s * 1e3:.2f} ms", "median of 21"))
        rounds = one_shot_rounds(uncached(reference), peer_run)
        one_shot = statistics.median(rounds)
        rows.append(("(d)/(a) ONE-SHOT RATIO: CPU time, no kept plan", f"{one_shot:.1f}",
                     f"the figure of issue 14 (target >= 10): median of {len(rounds)} rounds, each timing both "
                     f"engines in turn (range {min(rounds):.1f}-{max(rounds):.1f}); each call makes its plans, "
                     "as the peer does"))
        rows.append(("(d)/(a) CPU time ratio, nothing kept", f"{peer_cpu_s / exact_uncached_cpu_s:.1f}",
                     "each call from scratch (also the pmfs and transition matrices kept by value)"))
        rows.append(("(d)/(a) CPU time ratio, plans kept", f"{peer_cpu_s / exact_cpu_s:.1f}",
                     "the same call again (a service's repeat): not the one-shot figure"))
        rows.append(("(d)/(a) time ratio, plans kept", f"{peer_s / exact_s:.1f}", "wall time, the same call again"))
    else:
        rows.append(("(d) W40kDiviner exact engine", "-", "set W40K_PEER to a checkout of "
                     "github.com/aturchi/W40kDiviner (outside this repository)"))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>20}  note")
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>20}  {note}")
    print()
    for stage in ("damage", "models_destroyed"):
        e, s = getattr(exact, stage).mean, getattr(sim, stage).mean
        print(f"reference case E[{stage}]: exact {e:.4f}, simulated {s:.4f}")
    if peer_mean is not None:
        e = exact.models_destroyed.mean
        print(f"reference case E[models_destroyed]: exact {e:.12f}, W40kDiviner {peer_mean:.12f}, "
              f"difference {abs(e - peer_mean):.1e}")
        print(f"one-shot ratio (W40kDiviner CPU / this engine's CPU with no kept plan): {one_shot:.1f}, the median of "
              f"{len(rounds)} rounds of both in turn (range {min(rounds):.1f}-{max(rounds):.1f}; on their own above: "
              f"{peer_cpu_s * 1e3:.2f} ms / {exact_unplanned_cpu_s * 1e3:.2f} ms; load average "
              f"{os.getloadavg()[0]:.2f})")
    print()
    print(f"sweep against {REFERENCE_TARGET.name} (or the target named): median CPU ms of 5 (3 for 20 x W25) at "
          + ", ".join(str(n) for n in SWEEP_ATTACKS) + " attacks; fitted exponent of time in attacks")
    for label, times, exponent in sweep(context):
        print(f"  {label:<44} " + " ".join(f"{t * 1e3:7.2f}" for t in times) + f"   N^{exponent:.2f}")
    big = [sweep_weapon(400, "D6", {"sustained_hits": dice("1"), "devastating_wounds": True})]
    big_s, big_cpu, big_peak = timed_with_peak(lambda: resolve(big, REFERENCE_TARGET, context))
    print(f"400 attacks, Damage D6, Sustained Hits 1, Devastating Wounds vs {REFERENCE_TARGET.name}: "
          f"{big_s * 1e3:.1f} ms ({big_cpu * 1e3:.1f} ms CPU), peak {big_peak:.1f} MiB (tracemalloc)")
    for count, damages in SEVERAL_DAMAGE.items():
        weapons = several_devastating(1000 * count, damages)
        seconds, cpu, peak = timed_with_peak(lambda: resolve(weapons, TOUGH, context))
        print(f"{count} DW weapons of 1,000 attacks, Damage {', '.join(damages)}, vs {TOUGH.name}: "
              f"{seconds:.2f} s ({cpu:.2f} s CPU), peak {peak:.1f} MiB (tracemalloc)")
    for few in FEW_MANY_WOUNDS:  # the last weapon's count expanded (pipeline.engine.last_expanded)
        weapons = several_devastating(2000, ("1", "2"))
        seconds, cpu, peak = timed_with_peak(lambda: resolve(weapons, few, context))
        print(f"2 DW weapons of 1,000 attacks, Damage 1, 2, vs {few.name}: "
              f"{seconds:.2f} s ({cpu:.2f} s CPU), peak {peak:.1f} MiB (tracemalloc)")
    targets = database_targets(db)
    if targets:
        for count in (3, 6):
            every_target_row(targets, count, context)
    else:
        print(f"DW weapons against every target of the database: - ({db} not built: make build-db)")


if __name__ == "__main__":
    main()
