"""Monte Carlo check of the unit engine: attacks allocated model by model, die by die.

``simulate_unit(weapons, unit, context)`` rolls the attacks with the simulator's own hit and
wound rolls (``pipeline.engine.simulate``, against the unit as the wound roll sees it, with no
save), then, trial by trial, allocates each wound to a model as the edition says and rolls its
save and Feel No Pain against that model: 10th edition one attack at a time; 11th edition the
save rolls of one weapon together, resolved from the lowest result to the highest (05.04).
Bodyguard models before CHARACTER models, a wounded model first, the order of
``units.allocation_order``; a [PRECISION] weapon given ``True`` in ``precision`` sends its
wounds to the CHARACTER models while one is left. Devastating Wounds' mortal wounds come after
every weapon's other attacks, one model each. It shares no allocation code with
``pipeline.engine.units``. The wound roll uses the Toughness the unit has when the attacks
start (``units``' 10th-edition rule; the 11th edition's change of T mid-attack is not simulated).
A model line's own damage reduction (``ModelLine.damage_reduction``) is applied to the Damage of
each attack allocated to its models, before its Feel No Pain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pipeline.engine import simulate
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.engine.units import AllocationPolicy, UnitTarget, allocation_order


@dataclass(frozen=True)
class UnitTrials:
    """Per trial: ``lines`` (trials x lines) models destroyed of each line, ``characters``
    (trials x CHARACTER models of the C part) 1 when destroyed, ``damage`` points (after Feel
    No Pain, before excess is lost) and ``unsaved`` attacks."""

    lines: np.ndarray
    characters: np.ndarray
    damage: np.ndarray
    unsaved: np.ndarray


def simulate_unit(weapons: Sequence[Weapon], unit: UnitTarget, context: Context | None = None, *,
                  trials: int = 20_000, seed: int = 0, policy: AllocationPolicy = "listed",
                  precision: Sequence[bool] | None = None) -> UnitTrials:
    """Simulate ``trials`` attacks of ``weapons`` on ``unit`` (module docstring). The same inputs
    and ``seed`` give the same trials. Raises ``InputError`` as ``simulate.simulate`` does."""
    context = context or Context()
    rng = np.random.default_rng(seed)
    b_order, c_order = allocation_order(unit, context.edition, policy)
    lines = unit.lines
    body = [i for i, ln in enumerate(lines) if ln.role == "bodyguard"] if unit.attached else range(len(lines))
    toughness = max(lines[i].toughness for i in body)
    first = lines[(b_order or c_order)[0]]
    bare = Target(toughness=toughness, save=None, wounds=1, models=unit.models, keywords=unit.keywords,
                  stealth=unit.stealth, name=unit.name)
    with_save = Target(toughness=toughness, save=first.save, wounds=first.wounds, models=unit.models,
                       invulnerable_save=first.invulnerable_save, feel_no_pain=first.feel_no_pain,
                       feel_no_pain_mortal=first.feel_no_pain_mortal, keywords=unit.keywords,
                       stealth=unit.stealth, name=unit.name)
    weapons = [w.against(unit.keywords)[0] for w in weapons]
    chosen = simulate.attacker_choices(weapons, with_save, context, trials=trials, seed=seed)
    fired = [simulate._fire(rng, w, bare, context, c, trials) for w, c in zip(weapons, chosen)]
    precise = list(precision) if precision is not None else [False] * len(weapons)
    needed = [[_save_needed(w, ln, unit, context) for ln in lines] for w in weapons]
    normal = [_by_trial(f.normal_events, trials) for f in fired]
    mortal = [_by_trial(f.devastating_events, trials) for f in fired]
    out_lines = np.zeros((trials, len(lines)), dtype=np.int64)
    out_chars = np.zeros((trials, len(c_order)), dtype=np.int64)
    damage = np.zeros(trials, dtype=np.int64)
    unsaved = np.zeros(trials, dtype=np.int64)
    for t in range(trials):
        state = _State([(i, lines[i].wounds) for i in b_order], [(i, lines[i].wounds) for i in c_order])
        for k, w in enumerate(weapons):
            dmgs = normal[k].get(t, [])
            rolls = list(rng.integers(1, 7, size=len(dmgs)))
            if context.edition == 11:
                rolls.sort()
            for roll, dmg in zip(rolls, dmgs):
                line = state.current(precise[k] and w.precision)
                if line is None:
                    line = state.last
                need = needed[k][line]
                if roll == 1 or need is None or roll < need:
                    unsaved[t] += 1
                    lost = _fnp(rng, _reduced(dmg, lines[line], context), _fnp_of(lines[line], w, False))
                    damage[t] += lost
                    state.inflict(lost, precise[k] and w.precision)
        for k, w in enumerate(weapons):
            for dmg in mortal[k].get(t, []):
                line = state.current(precise[k] and w.precision)
                if line is None:
                    line = state.last
                lost = _fnp(rng, _reduced(dmg, lines[line], context), _fnp_of(lines[line], w, True))
                damage[t] += lost
                state.inflict(lost, precise[k] and w.precision)
        for i, _ in state.dead_b + state.dead_c:
            out_lines[t, i] += 1
        out_chars[t, : len(state.dead_c)] = 1
    return UnitTrials(out_lines, out_chars, damage, unsaved)


class _State:
    """Models left in each part (line, wounds left), the current one first."""

    def __init__(self, b: list[tuple[int, int]], c: list[tuple[int, int]]):
        self.b, self.c = [list(m) for m in b], [list(m) for m in c]
        self.dead_b: list[tuple[int, int]] = []
        self.dead_c: list[tuple[int, int]] = []
        self.last = (c or b)[-1][0]

    def _part(self, precise: bool):
        if precise and self.c:
            return self.c, self.dead_c
        if self.b:
            return self.b, self.dead_b
        return self.c, self.dead_c

    def current(self, precise: bool) -> int | None:
        part, _ = self._part(precise)
        return part[0][0] if part else None

    def inflict(self, points: int, precise: bool) -> None:
        part, dead = self._part(precise)
        if not part or points <= 0:
            return
        part[0][1] -= points
        if part[0][1] <= 0:
            dead.append(tuple(part.pop(0)))


def _by_trial(events: tuple[np.ndarray, np.ndarray], trials: int) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for t, d in zip(events[0].tolist(), events[1].tolist()):
        out.setdefault(t, []).append(d)
    return out


def _save_needed(weapon: Weapon, line, unit: UnitTarget, context: Context) -> int | None:
    t = Target(toughness=line.toughness, save=line.save, wounds=line.wounds, models=unit.models,
               invulnerable_save=line.invulnerable_save, keywords=unit.keywords)
    needed = simulate.save_roll_target(weapon, t, context)
    return None if needed >= 7 else needed


def _fnp_of(line, weapon: Weapon, mortal: bool) -> int | None:
    values = [line.feel_no_pain]
    if weapon.psychic:
        values.append(line.feel_no_pain_psychic)
    if mortal:
        values.append(line.feel_no_pain_mortal)
    values = [v for v in values if v is not None]
    return min(values) if values else None


def _reduced(points: int, line, context: Context) -> int:
    """A Damage rolled under ``context`` with the line's own reduction on top (at least 1).

    >>> from pipeline.engine.units import ModelLine
    >>> _reduced(3, ModelLine("x", 1, 4, 3, 3, damage_reduction="one"), Context()), \\
    ...     _reduced(3, ModelLine("x", 1, 4, 3, 3, damage_reduction="half"), Context())
    (2, 2)
    """
    own = line.damage_reduction
    if own is None or context.damage_reduction == "half" or own == context.damage_reduction:
        return points
    if own == "half":
        return max(1, -(-points // 2))
    return max(1, points - 1)


def _fnp(rng: np.random.Generator, points: int, roll_target: int | None) -> int:
    if roll_target is None or points <= 0:
        return points
    return points - int((rng.integers(1, 7, size=points) >= roll_target).sum())
