"""Monte Carlo simulator of 10th-edition attacks: an independent check of the exact engine.

The simulator rolls every die of every attack, vectorised with numpy across trials, and counts
what happened in each trial. It shares no code with ``pipeline.engine.exact``: it reads only the
engine inputs (``pipeline.engine.profiles``) and returns the same ``AttackResult``, with empirical
distributions, so that the two can be compared (``tests/engine/test_properties.py``).

Rules implemented (Warhammer 40,000 10th edition, Core Rules "Making Attacks" and "Weapon
Abilities", current wording as in ``cases/README.md``):

- Attacks: the Attacks characteristic (a dice expression) is rolled once per model
  (``Weapon.models`` models fire the weapon); RAPID FIRE X adds X per model at half range; BLAST
  adds ``blast`` per model for every five models in the target unit (rounding down).
- Hit roll: BS/WS as a roll target; modifiers are the context's ``hit_modifier``, +1 for HEAVY
  when stationary and -1 for a ranged attack against a target with Stealth, capped at +1/-1 net.
  An unmodified 1 fails and an unmodified 6 succeeds. An unmodified roll of
  ``critical_hit_on``+ is a Critical Hit, which always succeeds. Fire Overwatch: a hit only on an
  unmodified 6, whatever the modifiers, so every hit is a Critical Hit. TORRENT (or no skill):
  every attack hits, there is no hit roll and so no Critical Hit.
- Re-rolls happen before modifiers and at most once: ``ones`` re-rolls unmodified 1s,
  ``failed`` re-rolls every roll that fails after modifiers. ``all`` is treated as ``failed``:
  re-rolling a successful roll is never required, and T02 of ``cases/README.md`` ("re-roll all"
  hits at BS3+ gives P(hit) = 32/36, crits 8/36) is exactly re-roll failed. A re-rolled 6 is
  critical. TWIN-LINKED is re-roll failed wound rolls (the more generous of it and the context's
  wound re-roll applies).
- SUSTAINED HITS X: each Critical Hit scores X extra hits (X rolled per Critical Hit when it is a
  dice expression); extra hits are normal hits, never critical. LETHAL HITS: a Critical Hit
  wounds automatically, with no wound roll; that is not a Critical Wound.
- Wound roll: the Strength vs Toughness table; modifiers ``wound_modifier`` and +1 for LANCE when
  the bearer charged, capped at +1/-1 net. Unmodified 1 fails, 6 succeeds; an unmodified
  ``critical_wound_on``+ is a Critical Wound, and with ANTI-KEYWORD X+ against a target that has
  the keyword an unmodified X+ is one too (the lowest applicable threshold counts).
- DEVASTATING WOUNDS: a Critical Wound (from a wound roll) allows no save and inflicts mortal
  wounds equal to the Damage of the attack (after the damage modifiers below); each such attack is
  allocated onto one model after all other attacks of the unit (all weapons), excess is lost.
- Saves: the armour save worsened by AP, with the Benefit of Cover (+1, ranged attacks only, not
  with IGNORES COVER, not for Sv 3+ or better against AP 0; never the invulnerable save); the
  better of that and the invulnerable save is rolled; an unmodified 1 always fails.
- Damage per event, on the rolled value: + MELTA X at half range; halved rounding up (``half``);
  then -1 (``one``) and ``damage_modifier`` together; at least 1. Then Feel No Pain per damage
  point: ``feel_no_pain`` against all damage, the better of it and ``feel_no_pain_mortal``
  against mortal wounds.
- Allocation: one event (an unsaved attack or a devastating attack) at a time onto one model; a
  wounded model takes the next event; damage beyond the model's remaining wounds is lost.
  Weapons are resolved in the order given, the wound state carried from weapon to weapon.

Counted per trial: ``attacks``; ``hits`` (including Sustained Hits' extra hits and Lethal Hits'
Critical Hits); ``wounds`` (successful wound rolls plus Lethal Hits' automatic wounds);
``unsaved`` (attacks that failed their save, devastating attacks excluded); ``mortal_wounds``
(the mortal wounds of devastating attacks, after damage modifiers and before Feel No Pain);
``damage`` (all damage points after modifiers and Feel No Pain, before excess is lost);
``models_destroyed``; and the attacker's failed HAZARDOUS tests (one D6 per model that fired a
Hazardous weapon, failing on a 1), whose mean is ``AttackResult.hazardous_mortal_wounds``.

Not modelled: 11th-edition rules (``Context.edition == 11`` raises ``InputError``); PRECISION and
PSYCHIC (no effect on the outcome against Bodyguard models).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pipeline.engine.profiles import Context, Reroll, Target, Weapon
from pipeline.engine.result import STAGES, AttackResult, Distribution
from pipeline.errors import InputError
from schemas.types import DiceExpr

#: Upper bound on the cells (trials x events) of one chunk's allocation matrix.
_MAX_CELLS = 4_000_000
_MAX_CHUNK = 50_000
_RNG_DTYPE = np.int16


@dataclass(frozen=True)
class TrialCounts:
    """What happened in each trial: integer arrays of shape ``(trials,)``, one per stage of
    ``AttackResult`` (``FIELDS``), plus the attacker's failed Hazardous tests."""

    attacks: np.ndarray
    hits: np.ndarray
    wounds: np.ndarray
    unsaved: np.ndarray
    mortal_wounds: np.ndarray
    damage: np.ndarray
    models_destroyed: np.ndarray
    hazardous_tests_failed: np.ndarray

    FIELDS = STAGES


def simulate(
    weapons: Sequence[Weapon],
    target: Target,
    context: Context | None = None,
    *,
    trials: int = 100_000,
    seed: int = 0,
) -> AttackResult:
    """Simulate ``trials`` attack sequences and return an ``AttackResult`` of empirical pmfs.

    ``weapons`` are fired in order at ``target`` under ``context`` (the default ``Context()``).
    Each distribution's ``pmf`` is a float64 array indexed by count (frequency / trials);
    ``target_destroyed`` is the fraction of trials in which every model was destroyed. The same
    ``seed`` and ``trials`` give the same result. Rules: see the module docstring (10th edition).

    The standard error of a mean is ``sd / sqrt(trials)``; with 100,000 trials that is about
    0.3% of the standard deviation.

    Raises ``InputError`` for ``trials < 1``, a target without models or wounds, a weapon fired
    by no model, or a 11th-edition context.
    """
    context = context or Context()
    counts = simulate_trials(weapons, target, context, trials=trials, seed=seed)
    dists = {
        name: Distribution(np.bincount(getattr(counts, name)).astype(np.float64) / trials)
        for name in TrialCounts.FIELDS
    }
    destroyed = float(np.mean(counts.models_destroyed == target.models))
    notes = (
        f"Monte Carlo simulation, 10th edition: {trials:,} trials, seed {seed}",
        "re-roll 'all' is re-roll failed rolls; Devastating Wounds allocated after all other attacks",
    )
    return AttackResult(
        **dists,
        target_destroyed=destroyed,
        hazardous_mortal_wounds=float(counts.hazardous_tests_failed.mean()),
        notes=notes,
    )


def simulate_trials(
    weapons: Sequence[Weapon],
    target: Target,
    context: Context | None = None,
    *,
    trials: int = 100_000,
    seed: int = 0,
) -> TrialCounts:
    """Simulate ``trials`` attack sequences; the per-trial counts (see ``TrialCounts``).

    Trials are run in chunks (at most ``_MAX_CELLS`` cells in the allocation matrix) from one
    ``numpy.random.Generator`` seeded with ``seed``, so results depend only on the inputs,
    ``trials`` and ``seed``. Raises ``InputError`` as ``simulate`` does.
    """
    context = context or Context()
    if context.edition != 10:
        raise InputError(
            f"the Monte Carlo simulator implements the 10th edition only (got edition "
            f"{context.edition}); use the exact engine for 11th-edition attacks"
        )
    if trials < 1:
        raise InputError(f"trials must be at least 1 (got {trials})")
    if target.models < 1 or target.wounds < 1 or any(w.models < 1 for w in weapons):
        raise InputError(
            f"the target needs at least 1 model of at least 1 wound, and each weapon at least 1 "
            f"model firing it (got {target.models} x W{target.wounds}, weapon models "
            f"{[w.models for w in weapons]})"
        )
    rng = np.random.default_rng(seed)
    chunk = int(np.clip(_MAX_CELLS // max(1, _max_events(weapons, target, context)), 1, _MAX_CHUNK))
    parts: list[TrialCounts] = []
    done = 0
    while done < trials:
        n = min(chunk, trials - done)
        parts.append(_simulate_chunk(rng, weapons, target, context, n))
        done += n
    names = TrialCounts.FIELDS + ("hazardous_tests_failed",)
    return TrialCounts(**{name: np.concatenate([getattr(p, name) for p in parts]) for name in names})


def wound_roll_target(strength: int, toughness: int) -> int:
    """The wound roll needed, from the Strength vs Toughness table (10th and 11th edition).

    >>> [wound_roll_target(s, 4) for s in (8, 5, 4, 3, 2)]
    [2, 3, 4, 5, 6]
    """
    if strength >= 2 * toughness:
        return 2
    if strength > toughness:
        return 3
    if strength == toughness:
        return 4
    if 2 * strength <= toughness:
        return 6
    return 5


def save_roll_target(weapon: Weapon, target: Target, context: Context) -> int:
    """The unmodified save roll needed (7 means no save can succeed), 10th edition.

    The armour save is worsened by AP and improved by 1 by the Benefit of Cover (ranged attacks
    without IGNORES COVER, except Sv 3+ or better against AP 0); the invulnerable save ignores
    both; the better of the two is taken. An unmodified 1 always fails, so the result is >= 2.

    >>> from schemas.types import DiceExpr
    >>> one = DiceExpr(text="1", dice_count=0, dice_sides=0, modifier=1)
    >>> w = Weapon(name="w", attacks=one, skill=3, strength=4, armour_penetration=-1, damage=one)
    >>> save_roll_target(w, Target(toughness=4, save=3, wounds=2), Context(cover=True))
    3
    >>> save_roll_target(w, Target(toughness=4, save=3, wounds=2, invulnerable_save=4), Context())
    4
    """
    needed = 7
    if target.save is not None:
        armour = target.save - weapon.armour_penetration
        in_cover = context.cover and not weapon.is_melee and not weapon.ignores_cover
        if in_cover and not (target.save <= 3 and weapon.armour_penetration == 0):
            armour -= 1
        needed = min(needed, armour)
    if target.invulnerable_save is not None:
        needed = min(needed, target.invulnerable_save)
    return max(2, needed)


def _capped(modifier: int) -> int:
    return max(-1, min(1, modifier))


def _roll(rng: np.random.Generator, expr: DiceExpr, n: int) -> np.ndarray:
    """``n`` independent rolls of a dice expression, as int64."""
    out = np.full(n, expr.modifier, dtype=np.int64)
    for _ in range(expr.dice_count):
        out += rng.integers(1, expr.dice_sides + 1, size=n, dtype=_RNG_DTYPE)
    return out


def _d6(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(1, 7, size=n, dtype=_RNG_DTYPE)


def _outcome(rolls: np.ndarray, needed: int, modifier: int, critical_on: int):
    """(success, critical) of unmodified ``rolls`` for a hit or wound roll."""
    critical = rolls >= max(2, critical_on)
    success = critical | ((rolls != 1) & ((rolls == 6) | (rolls + modifier >= needed)))
    return success, critical


def _roll_test(rng, n: int, reroll: Reroll | None, judge) -> np.ndarray:
    """``n`` unmodified D6 rolls after the re-roll (at most one per die, before modifiers)."""
    rolls = _d6(rng, n)
    if reroll == "ones":
        again = rolls == 1
    elif reroll in ("failed", "all"):
        again = ~judge(rolls)[0]
    else:
        return rolls
    rolls[again] = _d6(rng, int(again.sum()))
    return rolls


_REROLL_RANK = {None: 0, "ones": 1, "failed": 2, "all": 2}


def _more_generous(a: Reroll | None, b: Reroll | None) -> Reroll | None:
    return a if _REROLL_RANK[a] >= _REROLL_RANK[b] else b


def _per_trial(trial: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    counts = np.bincount(trial, weights=weights, minlength=n)
    return counts.astype(np.int64) if weights is not None else counts


def _damage(rng, weapon: Weapon, context: Context, n: int) -> np.ndarray:
    """Damage of ``n`` events after Melta, halving, -1 and the context modifier (at least 1)."""
    dmg = _roll(rng, weapon.damage, n)
    if weapon.melta is not None and context.half_range:
        dmg += _roll(rng, weapon.melta, n)
    if context.damage_reduction == "half":
        dmg = (dmg + 1) // 2
    dmg += context.damage_modifier - (1 if context.damage_reduction == "one" else 0)
    return np.maximum(dmg, 1)


def _feel_no_pain(rng, damage: np.ndarray, roll_target: int | None) -> np.ndarray:
    """Damage left after a Feel No Pain roll of ``roll_target``+ for each point."""
    if roll_target is None:
        return damage
    p_ignore = (7 - max(2, min(7, roll_target))) / 6
    return damage - rng.binomial(damage, p_ignore)


@dataclass
class _Fired:
    """One weapon's per-trial counts and its damage events (trial index, damage after FNP)."""

    attacks: np.ndarray
    hits: np.ndarray
    wounds: np.ndarray
    unsaved: np.ndarray
    mortal_wounds: np.ndarray
    damage: np.ndarray
    normal_events: tuple[np.ndarray, np.ndarray]
    devastating_events: tuple[np.ndarray, np.ndarray]
    hazardous_tests_failed: np.ndarray


def _attacks_per_model_bound(weapon: Weapon, target: Target, context: Context) -> int:
    most = weapon.attacks.maximum
    if weapon.rapid_fire is not None and context.half_range:
        most += weapon.rapid_fire.maximum
    if weapon.blast:
        most += weapon.blast * (target.models // 5)
    return max(0, most)


def _max_events(weapons: Sequence[Weapon], target: Target, context: Context) -> int:
    """An upper bound on the damage events of one trial (sizes the chunks)."""
    total = 0
    for w in weapons:
        per_attack = 1 + (w.sustained_hits.maximum if w.sustained_hits is not None else 0)
        total += w.models * _attacks_per_model_bound(w, target, context) * per_attack
    return total


def _hit_roll(rng, weapon: Weapon, target: Target, context: Context, attack_trial: np.ndarray):
    """(normal hits, Critical Hits) as trial indices, one entry per hit, before Sustained Hits."""
    if weapon.torrent or weapon.skill is None:
        return attack_trial, attack_trial[:0]
    if context.overwatch:
        def judge(rolls):
            six = rolls == 6
            return six, six
    else:
        modifier = context.hit_modifier + (1 if weapon.heavy and context.stationary else 0)
        if target.stealth and not weapon.is_melee:
            modifier -= 1
        modifier = _capped(modifier)

        def judge(rolls):
            return _outcome(rolls, weapon.skill, modifier, context.critical_hit_on)

    rolls = _roll_test(rng, attack_trial.size, context.reroll_hits, judge)
    success, critical = judge(rolls)
    return attack_trial[success & ~critical], attack_trial[critical]


def _critical_wound_on(weapon: Weapon, target: Target, context: Context) -> int:
    """The unmodified wound roll that is a Critical Wound, with ANTI-KEYWORD X+ applied."""
    applicable = [a.threshold for a in weapon.anti if a.keyword.upper() in target.keywords]
    return min([context.critical_wound_on, *applicable])


def _fire(rng, weapon: Weapon, target: Target, context: Context, n: int) -> _Fired:
    """Resolve one weapon's attacks in ``n`` trials up to damage after Feel No Pain."""
    # Attacks: rolled per model, plus Rapid Fire and Blast per model.
    per_model = _roll(rng, weapon.attacks, n * weapon.models)
    if weapon.rapid_fire is not None and context.half_range:
        per_model += _roll(rng, weapon.rapid_fire, n * weapon.models)
    if weapon.blast:
        per_model += weapon.blast * (target.models // 5)
    attacks = np.maximum(per_model, 0).reshape(n, weapon.models).sum(axis=1)
    attack_trial = np.repeat(np.arange(n, dtype=np.int32), attacks)
    empty = attack_trial[:0]

    normal_hit, critical_hit = _hit_roll(rng, weapon, target, context, attack_trial)
    extra_hit = empty
    if weapon.sustained_hits is not None and critical_hit.size:
        extra = np.maximum(_roll(rng, weapon.sustained_hits, critical_hit.size), 0)
        extra_hit = np.repeat(critical_hit, extra)
    hits = _per_trial(normal_hit, n) + _per_trial(critical_hit, n) + _per_trial(extra_hit, n)

    # Wound roll (Lethal Hits' Critical Hits skip it).
    if weapon.lethal_hits:
        rolled, automatic = np.concatenate([normal_hit, extra_hit]), critical_hit
    else:
        rolled, automatic = np.concatenate([normal_hit, extra_hit, critical_hit]), empty
    critical_wound_on = _critical_wound_on(weapon, target, context)
    wound_modifier = _capped(context.wound_modifier + (1 if weapon.lance and context.charged else 0))
    needed = wound_roll_target(weapon.strength, target.toughness)

    def judge_wound(rolls):
        return _outcome(rolls, needed, wound_modifier, critical_wound_on)

    reroll = _more_generous(context.reroll_wounds, "failed" if weapon.twin_linked else None)
    rolls = _roll_test(rng, rolled.size, reroll, judge_wound)
    success, critical = judge_wound(rolls)
    wounded = rolled[success]
    wounds = _per_trial(wounded, n) + _per_trial(automatic, n)
    if weapon.devastating_wounds:
        devastating = rolled[critical]
        to_save = np.concatenate([rolled[success & ~critical], automatic])
    else:
        devastating = empty
        to_save = np.concatenate([wounded, automatic])

    # Saving throw: one roll against the better of armour (after AP and cover) and invulnerable.
    save_on = save_roll_target(weapon, target, context)
    unsaved_trial = to_save[_d6(rng, to_save.size) < save_on]

    # Damage and Feel No Pain.
    normal_damage = _feel_no_pain(rng, _damage(rng, weapon, context, unsaved_trial.size), target.feel_no_pain)
    mortal = _damage(rng, weapon, context, devastating.size)
    fnp_mortal = [x for x in (target.feel_no_pain, target.feel_no_pain_mortal) if x is not None]
    mortal_damage = _feel_no_pain(rng, mortal, min(fnp_mortal) if fnp_mortal else None)

    # Hazardous (10th edition): one test per model that fired the weapon, failed on a 1.
    hazardous = np.zeros(n, dtype=np.int64)
    if weapon.hazardous:
        hazardous = (_d6(rng, n * weapon.models).reshape(n, weapon.models) == 1).sum(axis=1)
    return _Fired(
        attacks=attacks.astype(np.int64),
        hits=hits,
        wounds=wounds,
        unsaved=_per_trial(unsaved_trial, n),
        mortal_wounds=_per_trial(devastating, n, mortal),
        damage=_per_trial(unsaved_trial, n, normal_damage) + _per_trial(devastating, n, mortal_damage),
        normal_events=(unsaved_trial, normal_damage),
        devastating_events=(devastating, mortal_damage),
        hazardous_tests_failed=hazardous,
    )


def _allocate(events: list[tuple[np.ndarray, np.ndarray]], n: int, target: Target) -> np.ndarray:
    """Models destroyed per trial when ``events`` (in order) are allocated one at a time.

    Each event's damage goes onto the wounded model if there is one, else onto a fresh model;
    a model whose remaining wounds reach 0 is destroyed and the excess damage is lost.
    """
    placed = np.zeros(n, dtype=np.int64)
    batches = []
    for trial, damage in events:
        keep = damage > 0
        trial, damage = trial[keep], damage[keep]
        order = np.argsort(trial, kind="stable")
        trial, damage = trial[order], damage[order]
        count = np.bincount(trial, minlength=n)
        first = np.cumsum(count) - count
        column = np.arange(trial.size) - first[trial] + placed[trial]
        batches.append((trial, column, damage))
        placed += count
    width = int(placed.max(initial=0))
    matrix = np.zeros((n, width), dtype=np.int32)
    for trial, column, damage in batches:
        matrix[trial, column] = damage
    # Rows with the most events first, so that step k only touches the rows still going.
    by_length = np.argsort(-placed, kind="stable")
    matrix, lengths = matrix[by_length], placed[by_length]
    remaining = np.full(n, target.wounds, dtype=np.int64)
    destroyed = np.zeros(n, dtype=np.int64)
    for k in range(width):
        rows = int(np.searchsorted(-lengths, -k, side="left"))  # rows with more than k events
        d = matrix[:rows, k]
        cur = remaining[:rows]
        live = destroyed[:rows] < target.models
        kill = live & (d >= cur)
        remaining[:rows] = np.where(kill, target.wounds, np.where(live, cur - d, cur))
        destroyed[:rows] += kill
    out = np.empty(n, dtype=np.int64)
    out[by_length] = destroyed
    return out


def _simulate_chunk(rng, weapons: Sequence[Weapon], target: Target, context: Context, n: int) -> TrialCounts:
    fired = [_fire(rng, w, target, context, n) for w in weapons]
    zero = np.zeros(n, dtype=np.int64)

    def total(name: str) -> np.ndarray:
        return sum((getattr(f, name) for f in fired), zero)

    # Devastating attacks are allocated after all the unit's other attacks.
    events = [f.normal_events for f in fired] + [f.devastating_events for f in fired]
    return TrialCounts(
        attacks=total("attacks"),
        hits=total("hits"),
        wounds=total("wounds"),
        unsaved=total("unsaved"),
        mortal_wounds=total("mortal_wounds"),
        damage=total("damage"),
        models_destroyed=_allocate(events, n, target),
        hazardous_tests_failed=total("hazardous_tests_failed"),
    )
