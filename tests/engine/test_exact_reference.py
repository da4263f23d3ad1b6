"""The exact engine against a brute-force enumeration in exact fractions, on small inputs.

The reference below enumerates every die of every attack (hit roll and its re-roll, Sustained
Hits dice, wound roll and its re-roll, saving throw, Damage and Melta dice, one Feel No Pain
roll per point) with ``Fraction`` probabilities, allocates each event as it comes (devastating
events held back to the end), and merges identical states. It shares no code with
``pipeline.engine.exact`` and uses none of its shortcuts (compound distributions, multinomial
splits, matrix powers), so agreement on every stage's whole pmf (to 1e-12) checks them.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest

from pipeline.engine.exact import resolve
from pipeline.engine.profiles import Anti, Context, Target, Weapon
from pipeline.normalise.characteristics import dice

STAGES = ("attacks", "hits", "wounds", "unsaved", "mortal_wounds", "damage", "models_destroyed")
SIXTH = Fraction(1, 6)


def _dist(expr) -> dict[int, Fraction]:
    return {max(v, 0): p for v, p in expr.distribution().items()} if expr is not None else {0: Fraction(1)}


def _d6_test(needed, modifier, critical_on, only_sixes, reroll) -> dict[str, Fraction]:
    def judge(face):
        if only_sixes:
            return "crit" if face == 6 else "fail"
        if face == 1:
            return "fail"
        if face >= critical_on:
            return "crit"
        return "success" if face == 6 or face + modifier >= needed else "fail"

    out: dict[str, Fraction] = defaultdict(Fraction)
    for face in range(1, 7):
        result = judge(face)
        if (reroll == "ones" and face == 1) or (reroll in ("failed", "all") and result == "fail"):
            for again in range(1, 7):
                out[judge(again)] += SIXTH * SIXTH
        else:
            out[result] += SIXTH
    return dict(out)


def _damage(weapon, context, fnp) -> dict[tuple[int, int], Fraction]:
    """{(damage before FNP, after FNP): p} of one event."""
    out: dict[tuple[int, int], Fraction] = defaultdict(Fraction)
    melta = _dist(weapon.melta) if context.half_range else {0: Fraction(1)}
    for d, pd in _dist(weapon.damage).items():
        for m, pm in melta.items():
            value = d + m
            if context.damage_reduction == "half":
                value = -(-value // 2)
            value += context.damage_modifier - (1 if context.damage_reduction == "one" else 0)
            value = max(value, 1)
            kept = {0: Fraction(1)}
            for _ in range(value):  # one Feel No Pain roll per point
                ignore = Fraction(7 - fnp, 6) if fnp else Fraction(0)
                nxt: dict[int, Fraction] = defaultdict(Fraction)
                for k, pk in kept.items():
                    nxt[k] += pk * ignore
                    nxt[k + 1] += pk * (1 - ignore)
                kept = nxt
            for k, pk in kept.items():
                out[(value, k)] += pd * pm * pk
    return dict(out)


def _seq_product(a: dict, b: dict) -> dict:
    """Outcomes (hits, wounds, unsaved, mw, damage, normal events, devastating events) of a then b."""
    out: dict = defaultdict(Fraction)
    for ka, pa in a.items():
        for kb, pb in b.items():
            key = tuple(x + y for x, y in zip(ka[:5], kb[:5])) + (ka[5] + kb[5], ka[6] + kb[6])
            out[key] += pa * pb
    return dict(out)


NOTHING = {(0, 0, 0, 0, 0, (), ()): Fraction(1)}


def _attack_outcomes(weapon: Weapon, target: Target, context: Context) -> dict:
    """One attack: {(hits, wounds, unsaved, mw, damage, normal event damages, devastating event damages): p}."""
    crit_wound_on = min([context.critical_wound_on] + [a.threshold for a in weapon.anti if a.keyword in target.keywords])
    wound_mod = max(-1, min(1, context.wound_modifier + (1 if weapon.lance and context.charged else 0)))
    s, t = weapon.strength, target.toughness
    needed = 2 if s >= 2 * t else 3 if s > t else 4 if s == t else 6 if 2 * s <= t else 5
    reroll_w = context.reroll_wounds
    if weapon.twin_linked and reroll_w in (None, "ones"):
        reroll_w = "failed"
    wound = _d6_test(needed, wound_mod, crit_wound_on, False, reroll_w)
    armour = None
    if target.save is not None:
        armour = target.save - weapon.armour_penetration
        if context.cover and not weapon.is_melee and not weapon.ignores_cover and not (target.save <= 3 and weapon.armour_penetration == 0):
            armour -= 1
    saves = [x for x in (armour, target.invulnerable_save) if x is not None]
    save_on = max(2, min(saves)) if saves else 7
    p_fail_save = Fraction(min(save_on, 7) - 1, 6)
    normal_dmg = _damage(weapon, context, target.feel_no_pain)
    fnps = [x for x in (target.feel_no_pain, target.feel_no_pain_mortal) if x]
    mortal_dmg = _damage(weapon, context, min(fnps) if fnps else None)

    def saving_throw() -> dict:
        out: dict = defaultdict(Fraction)
        out[(0, 1, 0, 0, 0, (), ())] += 1 - p_fail_save
        for (_, after), p in normal_dmg.items():
            out[(0, 1, 1, 0, after, (after,), ())] += p_fail_save * p
        return dict(out)

    def rolled_hit() -> dict:
        out: dict = defaultdict(Fraction)
        out[(1, 0, 0, 0, 0, (), ())] += wound.get("fail", 0)
        ok = wound.get("success", 0) + (0 if weapon.devastating_wounds else wound.get("crit", 0))
        for k, p in saving_throw().items():
            out[(1,) + k[1:]] += ok * p
        if weapon.devastating_wounds:
            for (before, after), p in mortal_dmg.items():
                out[(1, 1, 0, before, after, (), (after,))] += wound.get("crit", 0) * p
        return dict(out)

    if weapon.torrent or weapon.skill is None:
        return rolled_hit()
    hit_mod = context.hit_modifier + (1 if weapon.heavy and context.stationary else 0) - (1 if target.stealth and not weapon.is_melee else 0)
    hit = _d6_test(weapon.skill, max(-1, min(1, hit_mod)), context.critical_hit_on, context.overwatch, context.reroll_hits)
    out: dict = defaultdict(Fraction)
    out[(0, 0, 0, 0, 0, (), ())] += hit.get("fail", 0)
    for k, p in rolled_hit().items():
        out[k] += hit.get("success", 0) * p
    if hit.get("crit", 0):
        own = {(1,) + k[1:]: p for k, p in saving_throw().items()} if weapon.lethal_hits else rolled_hit()
        extra: dict = defaultdict(Fraction)
        for x, px in _dist(weapon.sustained_hits).items():
            seq = NOTHING
            for _ in range(x if weapon.sustained_hits is not None else 0):
                seq = _seq_product(seq, rolled_hit())
            for k, p in seq.items():
                extra[k] += px * p
        for k, p in _seq_product(own, dict(extra)).items():
            out[k] += hit["crit"] * p
    return dict(out)


def _allocate(state, damages, target):
    destroyed, on_model = state
    for d in damages:
        if destroyed == target.models or d == 0:
            continue
        if on_model + d >= target.wounds:
            destroyed, on_model = destroyed + 1, 0
        else:
            on_model += d
    return destroyed, on_model


def reference(weapons, target, context) -> dict[str, dict[int, Fraction]]:
    """Exact pmf of each stage by enumeration."""
    # state: (attacks, hits, wounds, unsaved, mw, damage, (destroyed, on model), pending devastating)
    states: dict = {(0, 0, 0, 0, 0, 0, (0, 0), ()): Fraction(1)}
    for w in weapons:
        per_model = defaultdict(Fraction)
        for a, pa in _dist(w.attacks).items():
            for r, pr in (_dist(w.rapid_fire) if context.half_range else {0: Fraction(1)}).items():
                per_model[a + r + (w.blast or 0) * (target.models // 5)] += pa * pr
        count = {0: Fraction(1)}
        for _ in range(w.models):
            nxt = defaultdict(Fraction)
            for n, pn in count.items():
                for a, pa in per_model.items():
                    nxt[n + a] += pn * pa
            count = nxt
        attack = _attack_outcomes(w, target, context)
        new: dict = defaultdict(Fraction)
        for n, pn in count.items():
            cur = {k[:1] + k[1:]: p for k, p in states.items()}
            cur = {(k[0] + n,) + k[1:]: p for k, p in cur.items()}
            for _ in range(n):
                step: dict = defaultdict(Fraction)
                for (att, h, wo, u, mw, dmg, alloc, pending), p in cur.items():
                    for (dh, dw, du, dmw, dd, normal, dev), q in attack.items():
                        key = (att, h + dh, wo + dw, u + du, mw + dmw, dmg + dd, _allocate(alloc, normal, target), pending + dev)
                        step[key] += p * q
                cur = step
            for k, p in cur.items():
                new[k] += pn * p
        states = dict(new)
    out = {name: defaultdict(Fraction) for name in STAGES}
    for (att, h, wo, u, mw, dmg, alloc, pending), p in states.items():
        destroyed = _allocate(alloc, pending, target)[0]
        for name, value in zip(STAGES, (att, h, wo, u, mw, dmg, destroyed)):
            out[name][value] += p
    return {k: dict(v) for k, v in out.items()}


def assert_matches_reference(weapons, target, context=Context()):
    exact = resolve(weapons, target, context)
    ref = reference(weapons, target, context)
    assert sum(ref["damage"].values()) == 1
    for name in STAGES:
        pmf = exact.stage(name).pmf
        size = max(pmf.size, max(ref[name]) + 1)
        want = np.array([float(ref[name].get(k, 0)) for k in range(size)])
        got = np.pad(pmf, (0, size - pmf.size))
        assert np.allclose(got, want, rtol=0, atol=1e-12), (name, got.tolist(), want.tolist())
    assert abs(exact.target_destroyed - float(ref["models_destroyed"].get(target.models, 0))) < 1e-12


def w(attacks="1", skill=3, strength=4, ap=0, damage="1", **kw) -> Weapon:
    return Weapon(name=kw.pop("name", "w"), attacks=dice(attacks), skill=skill, strength=strength,
                  armour_penetration=ap, damage=dice(damage), **kw)


CASES = {
    "lethal + devastating + sustained, D3, FNP": (
        [w("2", ap=-1, damage="D3", sustained_hits=dice("1"), lethal_hits=True, devastating_wounds=True)],
        Target(toughness=4, save=3, wounds=2, models=3, feel_no_pain=6),
        Context(),
    ),
    "sustained D3 + devastating + anti, then torrent melta, re-rolls": (
        [w("1", damage="2", sustained_hits=dice("D3"), devastating_wounds=True, anti=(Anti("INFANTRY", 4),)),
         w("D3", skill=None, torrent=True, strength=5, ap=-1, damage="D3", melta=dice("1"), twin_linked=True)],
        Target(toughness=4, save=4, wounds=3, models=2, invulnerable_save=5, feel_no_pain_mortal=5,
               keywords=frozenset({"INFANTRY"})),
        Context(reroll_hits="ones", critical_hit_on=5, half_range=True),
    ),
    "two devastating weapons around a normal one": (
        [w("1", damage="2", devastating_wounds=True, strength=8),
         w("2", damage="1"),
         w("1", damage="1", devastating_wounds=True, anti=(Anti("VEHICLE", 5),))],
        Target(toughness=4, save=5, wounds=2, models=2, keywords=frozenset({"VEHICLE"})),
        Context(reroll_wounds="failed"),
    ),
    "overwatch, sustained 2, lethal, devastating, halved damage": (
        [w("2", damage="D6", sustained_hits=dice("2"), lethal_hits=True, devastating_wounds=True, strength=3)],
        Target(toughness=4, save=6, wounds=1, models=3),
        Context(overwatch=True, reroll_wounds="ones", damage_reduction="half"),
    ),
    "cover, stealth, heavy, lance, -1 damage, blast, rapid fire": (
        [w("1", skill=4, ap=0, damage="D3", heavy=True, blast=1, rapid_fire=dice("1")),
         w("1", skill=3, strength=6, ap=-2, damage="2", lance=True, is_melee=True)],
        Target(toughness=5, save=4, wounds=3, models=5, stealth=True, feel_no_pain=5),
        Context(cover=True, stationary=True, charged=True, half_range=True, damage_reduction="one", hit_modifier=1),
    ),
    "many attacks against one multi-wound model": (
        [w("3", skill=2, strength=10, ap=-3, damage="D3+1")],
        Target(toughness=5, save=3, wounds=5, models=1),
        Context(reroll_hits="failed"),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_exact_engine_matches_brute_force_enumeration(name):
    weapons, target, context = CASES[name]
    assert_matches_reference(weapons, target, context)
