"""Write ``chain_reference.json``: the exact engine's results on a seeded grid of attacks.

Run from the repository root: ``.venv/bin/python tests/engine/data/make_chain_reference.py``.
The committed file was written by the engine as it was before the allocation chain was made
linear (the dense joint counts of Devastating Wounds, commit ``a5286ef``), so that
``tests/engine/test_chain_reference.py`` checks the new chain against the old one to 1e-12.
Cases the old engine refused are not in the file. Running the script again rewrites the file
with the current engine's values (review ``git diff`` before committing).

Each case is a JSON object: ``weapons`` (``Weapon`` fields, dice as text), ``target``
(``Target`` fields), ``context`` (``Context`` fields), and the results ``models_destroyed``
(the pmf over 0..models), ``damage_mean`` and ``target_destroyed``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from pipeline.engine.exact import resolve  # noqa: E402
from pipeline.engine.profiles import Context, Target, Weapon  # noqa: E402
from pipeline.errors import InputError  # noqa: E402
from pipeline.normalise.characteristics import dice  # noqa: E402

OUT = Path(__file__).resolve().parent / "chain_reference.json"
DICE_FIELDS = ("attacks", "damage", "sustained_hits", "melta", "rapid_fire")

TARGETS = [
    dict(toughness=4, save=3, wounds=1, models=10),
    dict(toughness=4, save=3, wounds=2, models=10, feel_no_pain=5),
    dict(toughness=5, save=4, wounds=3, models=5, feel_no_pain_mortal=5),
    dict(toughness=10, save=2, wounds=12, models=1, invulnerable_save=4),
    dict(toughness=6, save=3, wounds=5, models=3, feel_no_pain=6, feel_no_pain_mortal=4),
    dict(toughness=3, save=5, wounds=1, models=20),
    dict(toughness=4, save=None, wounds=4, models=2),
]


def weapon_from(spec: dict) -> Weapon:
    """A ``Weapon`` from a case's JSON fields (dice as text)."""
    return Weapon(**{k: dice(v) if k in DICE_FIELDS and v is not None else v for k, v in spec.items()})


def random_weapon(rng: np.random.Generator, name: str, devastating: bool) -> dict:
    pick = lambda options: options[int(rng.integers(len(options)))]  # noqa: E731
    spec = dict(
        name=name,
        attacks=pick(["1", "2", "3", "D3", "D6", "2D6", "D6+1"]),
        skill=pick([2, 3, 4, 5]),
        strength=pick([3, 4, 5, 6, 8, 10]),
        armour_penetration=-int(rng.integers(0, 4)),
        damage=pick(["1", "2", "3", "D3", "D6", "D6+2", "D3+1"]),
        models=pick([1, 2, 3, 5, 10]),
        devastating_wounds=devastating,
    )
    if rng.random() < 0.4:
        spec["sustained_hits"] = pick(["1", "2", "D3"])
    if rng.random() < 0.35:
        spec["lethal_hits"] = True
    if rng.random() < 0.15:
        spec["twin_linked"] = True
    return spec


def random_context(rng: np.random.Generator) -> dict:
    context = dict(edition=int(rng.choice([10, 11])))
    if rng.random() < 0.3:
        context["critical_wound_on"] = int(rng.integers(4, 6))
    if rng.random() < 0.2:
        context["critical_hit_on"] = 5
    if rng.random() < 0.15:
        context["damage_reduction"] = "one"
    return context


def cases(count: int = 160, seed: int = 14) -> list[dict]:
    """``count`` seeded cases: one to four weapons, at least one with Devastating Wounds in most."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n_weapons = int(rng.choice([1, 1, 1, 2, 2, 3, 4]))
        n_dev = int(rng.integers(0 if i % 8 == 0 else 1, min(n_weapons, 3) + 1))
        flags = [j < n_dev for j in range(n_weapons)]
        rng.shuffle(flags)
        weapons = [random_weapon(rng, f"w{j}", bool(flag)) for j, flag in enumerate(flags)]
        out.append(dict(weapons=weapons, target=TARGETS[i % len(TARGETS)], context=random_context(rng)))
    return out + FIXED


def _fixed(name: str, models: int, attacks: str = "2", damage: str = "1", **abilities) -> dict:
    return dict(name=name, attacks=attacks, skill=3, strength=4, armour_penetration=-1, damage=damage,
                models=models, devastating_wounds=True, **abilities)


#: Larger cases the old engine accepted: the bench's reference case, two and three weapons with
#: Devastating Wounds, Sustained Hits and Lethal Hits with many attacks.
FIXED = [
    dict(weapons=[dict(name="bolt rifle", attacks="2", skill=3, strength=4, armour_penetration=0, damage="1",
                       models=20, sustained_hits="1", lethal_hits=True),
                  dict(name="heavy bolter", attacks="1", skill=3, strength=5, armour_penetration=-1, damage="2",
                       models=20, devastating_wounds=True)],
         target=dict(toughness=4, save=3, wounds=2, models=10, feel_no_pain=5), context=dict(edition=10)),
    dict(weapons=[_fixed("a", 20), _fixed("b", 20, damage="2")],
         target=dict(toughness=4, save=3, wounds=2, models=10), context=dict(edition=10)),
    dict(weapons=[_fixed("a", 10), _fixed("b", 10, damage="D3"), _fixed("c", 5, damage="2")],
         target=dict(toughness=4, save=3, wounds=2, models=5), context=dict(edition=10)),
    dict(weapons=[_fixed("a", 100, attacks="1"), _fixed("b", 100, attacks="1")],
         target=dict(toughness=4, save=3, wounds=2, models=10), context=dict(edition=10)),
    dict(weapons=[_fixed("a", 40, attacks="D6", damage="D6", sustained_hits="1")],
         target=dict(toughness=4, save=3, wounds=3, models=10, feel_no_pain=6), context=dict(edition=10)),
    dict(weapons=[_fixed("a", 30, attacks="2", damage="2", sustained_hits="D3", lethal_hits=True)],
         target=dict(toughness=4, save=3, wounds=2, models=10), context=dict(edition=11)),
    dict(weapons=[_fixed("a", 20, attacks="3", damage="D3", lethal_hits=True), _fixed("b", 20, damage="3")],
         target=dict(toughness=5, save=3, wounds=3, models=6, feel_no_pain_mortal=5), context=dict(edition=11)),
]


def main() -> None:
    recorded, refused = [], 0
    for case in cases():
        try:
            result = resolve([weapon_from(w) for w in case["weapons"]], Target(**case["target"]),
                             Context(**case["context"]))
        except InputError:
            refused += 1
            print("refused:", case)
            continue
        recorded.append({**case, "models_destroyed": result.models_destroyed.pmf.tolist(),
                         "damage_mean": result.damage.mean, "target_destroyed": result.target_destroyed})
    OUT.write_text(json.dumps(recorded, indent=1) + "\n")
    print(f"{len(recorded)} cases written to {OUT.relative_to(ROOT)} ({refused} refused by the engine, left out)")


if __name__ == "__main__":
    main()
