"""The exact engine at the limits of ``pipeline/limits.py``: the worst attacks it accepts.

Run with ``python benchmarks/bench_limits.py``. Prints, for each case, the wall time, the work
the engine estimated (``exact.chain_work``, against ``MAX_ENGINE_WORK``) or the error that
refused it; asserts nothing (STYLE.md 14). The cases are the heaviest ones the limits allow:
the most attacks of one weapon against the largest target, the most weapons, Devastating Wounds
(whose pending events multiply the chain), Lethal Hits with Devastating Wounds (a 2-D count),
the largest Damage, the most dice, and Devastating Wounds weapons of different Damage against
every shape of the largest target (the kill counts).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline import limits  # noqa: E402
from pipeline.engine import exact  # noqa: E402
from pipeline.engine.profiles import Context, Target, Weapon  # noqa: E402
from pipeline.errors import InputError  # noqa: E402
from pipeline.normalise.characteristics import dice  # noqa: E402

#: The largest target: one model with every wound the limit allows, and as many W1 models.
BIG = limits.MAX_TARGET_WOUNDS
ONE_BIG = Target(toughness=4, save=3, wounds=BIG, models=1, name=f"1 x W{BIG}")
MANY = Target(toughness=4, save=3, wounds=1, models=BIG, name=f"{BIG} x W1")
HALF = Target(toughness=4, save=3, wounds=2, models=BIG // 2, name=f"{BIG // 2} x W2")


def weapon(name: str, attacks: str = "1", damage: str = "1", models: int = 1, **abilities) -> Weapon:
    return Weapon(name=name, attacks=dice(attacks), skill=3, strength=4, armour_penetration=-1,
                  damage=dice(damage), models=models, **abilities)


MOST = limits.MAX_ATTACKS_PER_WEAPON

#: The shapes of the largest target for the Devastating Wounds grid: models x Wounds = 500.
GRID_TARGETS = ((500, 1), (250, 2), (50, 10), (20, 25), (5, 100), (2, 250), (1, 500))


def devastating_grid(models: int, wounds: int) -> list[tuple[str, list[Weapon], Target]]:
    """The heaviest Devastating Wounds cases against ``models`` x W``wounds`` (Feel No Pain 5+):
    two and four weapons of different Damage (1, 2; 1, 2, 3, D6) of the most attacks, and two (D3,
    D6) of the most attacks with Lethal Hits and Sustained Hits 1."""
    target = Target(toughness=4, save=3, wounds=wounds, models=models, feel_no_pain=5,
                    name=f"{models} x W{wounds} FNP5+")
    lethal = limits.MAX_ATTACKS_LETHAL_DEVASTATING
    return [
        (f"2 DW weapons of {MOST} attacks, Damage 1, 2, vs {target.name}",
         [weapon(f"dw{d}", damage=d, models=MOST, devastating_wounds=True) for d in ("1", "2")], target),
        (f"4 DW weapons of {MOST} attacks, Damage 1, 2, 3, D6, vs {target.name}",
         [weapon(f"dw{d}", damage=d, models=MOST, devastating_wounds=True) for d in ("1", "2", "3", "D6")], target),
        (f"2 DW weapons of {lethal} attacks, Damage D3, D6, Lethal Hits, Sustained Hits 1, vs {target.name}",
         [weapon(f"dw{d}", damage=d, models=lethal, devastating_wounds=True, lethal_hits=True,
                 sustained_hits=dice("1")) for d in ("D3", "D6")], target),
    ]


CASES: list[tuple[str, list[Weapon], Target]] = [
    (f"{MOST} attacks of one weapon vs {ONE_BIG.name}", [weapon("w", models=MOST)], ONE_BIG),
    (f"{MOST} attacks of one weapon vs {MANY.name}", [weapon("w", models=MOST)], MANY),
    (f"{MOST} attacks, D6 Damage, vs {ONE_BIG.name}", [weapon("w", damage="D6", models=MOST)], ONE_BIG),
    (f"{MOST} attacks, Damage 20 (the damage limit of one weapon), vs {ONE_BIG.name}",
     [weapon("w", damage=str(limits.MAX_DAMAGE_PER_WEAPON // MOST), models=MOST)], ONE_BIG),
    (f"200 attacks, Damage {limits.MAX_DAMAGE_PER_ATTACK}, vs {ONE_BIG.name}",
     [weapon("w", damage=str(limits.MAX_DAMAGE_PER_ATTACK), models=200)], ONE_BIG),
    (f"3 weapons of {MOST} attacks vs {ONE_BIG.name}", [weapon(f"w{i}", models=MOST) for i in range(3)], ONE_BIG),
    (f"4 weapons of {MOST} attacks vs {ONE_BIG.name}",
     [weapon(f"w{i}", models=MOST) for i in range(4)], ONE_BIG),
    (f"{limits.MAX_WEAPONS_PER_ATTACK} weapons of 10 attacks vs {ONE_BIG.name}",
     [weapon(f"w{i}", models=10) for i in range(limits.MAX_WEAPONS_PER_ATTACK)], ONE_BIG),
    (f"{limits.MAX_WEAPONS_PER_ATTACK} weapons of 10 attacks vs 10 x W2",
     [weapon(f"w{i}", models=10) for i in range(limits.MAX_WEAPONS_PER_ATTACK)],
     Target(toughness=4, save=3, wounds=2, models=10, name="MEQ")),
    (f"{MOST} attacks with Devastating Wounds vs {HALF.name}",
     [weapon("dw", models=MOST, devastating_wounds=True)], HALF),
    ("2 weapons of 100 attacks with Devastating Wounds vs 10 x W2",
     [weapon("a", models=100, devastating_wounds=True), weapon("b", models=100, devastating_wounds=True)],
     Target(toughness=4, save=3, wounds=2, models=10, name="MEQ")),
    (f"2 weapons of {MOST} attacks with Devastating Wounds vs {HALF.name} (one pending count: the same events)",
     [weapon(f"dw{i}", models=MOST, devastating_wounds=True) for i in range(2)], HALF),
    (f"2 weapons of {MOST} attacks with Devastating Wounds, Damage 1 and 2, vs {HALF.name} (two pending counts)",
     [weapon(f"dw{d}", damage=d, models=MOST, devastating_wounds=True) for d in "12"], HALF),
    (f"{limits.MAX_ATTACKS_LETHAL_DEVASTATING} attacks, Lethal Hits, Devastating Wounds vs 10 x W2",
     [weapon("ldw", models=limits.MAX_ATTACKS_LETHAL_DEVASTATING, lethal_hits=True, devastating_wounds=True)],
     Target(toughness=4, save=3, wounds=2, models=10, name="MEQ")),
    (f"{MOST // 2} attacks, Sustained Hits 1, Lethal Hits, Devastating Wounds vs {ONE_BIG.name}",
     [weapon("ldw", models=MOST // 2, sustained_hits=dice("1"), lethal_hits=True, devastating_wounds=True)], ONE_BIG),
    (f"{limits.MAX_DICE_COUNT}D{limits.MAX_DICE_SIDES} attacks x 2 models, {limits.MAX_DICE_COUNT // 4}D6 Damage, vs {ONE_BIG.name}",
     [weapon("dice", attacks=f"{limits.MAX_DICE_COUNT}D{limits.MAX_DICE_SIDES}",
             damage=f"{limits.MAX_DICE_COUNT // 4}D6", models=2)], ONE_BIG),
    # Devastating Wounds weapons of different Damage at the most attacks, against every shape of
    # the largest target (models x W = 500): the kill counts (``pipeline.engine.kill_counts``)
    *[case for models, wounds in GRID_TARGETS for case in devastating_grid(models, wounds)],
    # just over a limit: refused before any work
    ("1001 attacks (over the limit)", [weapon("w", models=MOST + 1)], ONE_BIG),
    ("D1000000 Damage (over the limit)", [weapon("w", damage="D1000000")], ONE_BIG),
]


def main() -> None:
    print(f"limits: {limits.MAX_ATTACKS_PER_WEAPON} attacks per weapon, {limits.MAX_TARGET_WOUNDS} target wounds, "
          f"{limits.MAX_WEAPONS_PER_ATTACK} weapons, engine work {limits.MAX_ENGINE_WORK:.2g}")
    print("   wall    CPU  case")
    worst = (0.0, 0.0)
    for label, weapons, target in CASES:
        start, cpu = time.perf_counter(), time.process_time()
        try:
            result = exact.resolve(weapons, target, Context())
            outcome = f"damage mean {result.damage.mean:.2f}"
        except InputError as exc:
            outcome = f"refused: {exc}"
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        if not outcome.startswith("refused"):
            worst = max(worst, (seconds, cpu))
        print(f"{seconds:6.2f} s {cpu:5.2f} s  {label}: {outcome}")
    print(f"slowest accepted case: {worst[0]:.2f} s wall, {worst[1]:.2f} s CPU")


if __name__ == "__main__":
    main()
