"""Monte Carlo simulator of attacks (10th and 11th edition): an independent check of the exact engine.

The simulator rolls every die of every attack, vectorised with numpy across trials, and counts
what happened in each trial. It shares no code with ``pipeline.engine.exact``: it reads only the
engine inputs (``pipeline.engine.profiles``) and returns the same ``AttackResult``, with empirical
distributions, so that the two can be compared (``tests/engine/test_properties.py``).

Rules implemented (Warhammer 40,000 10th edition, Core Rules "Making Attacks" and "Weapon
Abilities", current wording as in ``cases/README.md``):

- Attacks: the Attacks characteristic (a dice expression) is rolled once per model
  (``Weapon.models`` models fire the weapon); RAPID FIRE X adds X per model at half range; BLAST
  adds 1 per model for every five models in the target unit (rounding down), whatever
  ``Weapon.blast`` says (the 10th edition has no [BLAST X]).
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
- HAZARDOUS: one test (D6) per model that fired a Hazardous weapon, failed on a 1; each failure
  is 3 mortal wounds on the attacking unit (current wording: on a model equipped with the weapon;
  the original wording's "one model destroyed unless CHARACTER, MONSTER or VEHICLE" is not used,
  so ``AttackResult.hazardous_models_destroyed`` stays 0).

11th edition (``Context(edition=11)``; the core rules page in ``raw/``, sections named) differs
as follows; everything else is as above:

- 13.08 Benefit of Cover: a ranged attack without [IGNORES COVER] (24.18) against a target with
  the benefit of cover has its BS characteristic worsened by 1 (3+ becomes 4+). That is a change
  of the characteristic, outside the +/-1 cap of hit roll modifiers; the save is not changed, and
  there is no Sv 3+ / AP 0 exception. An unmodified 6 is still a Critical Hit and hits.
- 24.33 STEALTH: the target has the benefit of cover against ranged attacks (no -1 to hit; not
  cumulative with ``Context.cover``: BS is worsened by 1 at most).
- [PSYCHIC]: "you can ignore any or all modifiers to that attack's BS or WS characteristic and
  any or all modifiers to the hit roll" (BSData 11th-edition game system; the page in ``raw/``
  lacks the section): the attacker ignores each modifier that hurts it and keeps each one that
  helps, so the BS worsening of cover is ignored, a negative ``hit_modifier`` (one net modifier
  from other rules) is ignored and HEAVY's +1 is kept.
- 15.09 SNAP SHOOTING (``Context.overwatch``): a hit only on an unmodified 6, and no hit re-rolls.
- 24.23 LETHAL HITS: optional, per weapon (``Context.lethal_hits_choice``): True auto-wounds on a
  Critical Hit, False rolls to wound (so the Critical Hit can become a Critical Wound for
  DEVASTATING WOUNDS or ANTI). None: each Lethal Hits weapon is simulated alone with both options
  (same seed) and the option with the higher mean damage is kept; auto-wounding is kept unless
  rolling to wound does more by over 3 standard errors, so that a tie auto-wounds. The total
  damage, counted before excess is lost, is the sum of the weapons' damage, so this is the best of
  the 2^k combinations. The option is reported in ``AttackResult.choices`` (``attacker_choices``).
- 24.10 DEVASTATING WOUNDS: a Critical Wound ends the attack; mortal wounds equal to D, inflicted
  after the normal damage of the unit's attacks, at most one model per Critical Wound (the rest
  lost): the same allocation as in the 10th edition.
- Saves: the better of the armour save (after AP) and the InSv.
- 24.05 [BLAST X]: X attack dice per model for every five target models (``Weapon.blast``).
- ANTI: any two Anti abilities are duplicates, so one is used: the applicable one that gives the
  higher mean damage, chosen like the Lethal Hits option (usually the lowest threshold, as in the
  10th edition; a higher one can win with DEVASTATING WOUNDS against a Feel No Pain that works
  only against mortal wounds). Reported in ``AttackResult.choices`` when the thresholds differ.
- 24.15 HAZARDOUS / 06.03 hazard rolls: one hazard roll per Hazardous weapon selected (one per
  model firing it), failing on a 1-2; each failure is 1 mortal wound on the attacking unit, or 3
  if it is MONSTER or VEHICLE.

Counted per trial: ``attacks``; ``hits`` (including Sustained Hits' extra hits and Lethal Hits'
Critical Hits); ``wounds`` (successful wound rolls plus Lethal Hits' automatic wounds);
``unsaved`` (attacks that failed their save, devastating attacks excluded); ``mortal_wounds``
(the mortal wounds of devastating attacks, after damage modifiers and before Feel No Pain);
``damage`` (all damage points after modifiers and Feel No Pain, before excess is lost);
``models_destroyed``; and the attacker's failed Hazardous tests / hazard rolls, whose mean times
``hazard_mortal_wounds_per_failure`` is ``AttackResult.hazardous_mortal_wounds``.

Rules' effects (both editions; ``pipeline.engine.exact`` states the same rules): HEAVY's
conditions (``declarations.heavy_applies``); TWIN-LINKED re-rolling every wound roll that is not a
Critical Wound (``twin_linked_reroll`` ``non-critical``; ``best``: simulated both ways, like the
Lethal Hits option); mortal wounds on a Critical Hit / Wound (``Weapon.mortal_wounds_on_critical_*``)
and after the attack (``Context.mortal_wounds_after``), one damage point each after Feel No Pain,
allocated after the unit's normal damage with the devastating events; the re-roll of one Hit,
Wound or Damage roll (the first failed roll, or the first Damage roll below the mean of its dice,
of the weapon ``declarations.reroll_one_weapon`` picks, in each trial); every Damage roll below
the mean (or of 1) re-rolled (``Context.reroll_damage``); a negative wound roll modifier ignored
(``ignore_wound_modifiers``).

Not modelled: PRECISION (no effect on the outcome against Bodyguard models); PSYCHIC in the 10th
edition (a tag only).

Where the rules live: every edition difference above is read from the one declaration that the
exact engine reads too (``pipeline/engine/edition_rules.toml`` through
``pipeline.engine.declarations.rules_for``), including the 11th edition's characteristic limits
(BS/WS 2+..6+, AP never positive, A and S at least 1), [CLEAVE X], indirect fire (10.07; the 10th
edition's Indirect Fire), close-quarters shooting of a MONSTER/VEHICLE (10.06) and Damaged (24.39,
-1 to hit). The sampling code here is the simulator's own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pipeline.engine import declarations
from pipeline.engine.declarations import (EditionRules, capped, damage_reroll_below, heavy_applies, limit,
                                           reroll_one_weapon, rules_for)
from pipeline.engine.profiles import Anti, Context, Reroll, Target, Weapon
from pipeline.engine.result import STAGES, AttackResult, Distribution
from pipeline.errors import InputError
from schemas.dice import DiceExpr

#: Upper bound on the cells (trials x events) of one chunk's allocation matrix.
_MAX_CELLS = 4_000_000
_MAX_CHUNK = 50_000
_RNG_DTYPE = np.int16
#: A candidate option replaces the attacker's default only when it does more mean damage by more
#: than this many standard errors (see ``attacker_choices``).
_CHOICE_STANDARD_ERRORS = 3


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



#: The two options of 11th-edition LETHAL HITS, as reported in ``AttackResult.choices``.
LETHAL_HITS_OPTIONS = {
    True: "auto-wound on critical hits",
    False: "roll to wound (keeps Critical Wounds for DEVASTATING WOUNDS / ANTI)",
}


def simulate(
    weapons: Sequence[Weapon],
    target: Target,
    context: Context | None = None,
    *,
    trials: int = 100_000,
    seed: int = 0,
    choices: Sequence[AttackerChoice] | None = None,
) -> AttackResult:
    """Simulate ``trials`` attack sequences and return an ``AttackResult`` of empirical pmfs.

    ``weapons`` are fired in order at ``target`` under ``context`` (the default ``Context()``).
    Each distribution's ``pmf`` is a float64 array indexed by count (frequency / trials);
    ``target_destroyed`` is the fraction of trials in which every model was destroyed. The same
    ``seed`` and ``trials`` give the same result. Rules: see the module docstring (10th and 11th
    edition). In the 11th edition ``choices`` holds the Lethal Hits option of each Lethal Hits
    weapon (``LETHAL_HITS_OPTIONS``) and, where two or more Anti abilities with different
    thresholds apply, the one used (``"Anti: <weapon>": "Anti-INFANTRY 2+"``); a TORRENT weapon
    scores no Critical Hit, so it has no Lethal Hits entry. Both are chosen by
    ``attacker_choices``, unless ``choices`` gives them (one ``AttackerChoice`` per weapon).

    The standard error of a mean is ``sd / sqrt(trials)``; with 100,000 trials that is about
    0.3% of the standard deviation.

    Raises ``InputError`` for ``trials < 1``, a target without models or wounds, a weapon fired
    by no model, an edition other than 10 and 11, or ``choices`` not one per weapon.
    """
    context = context or Context()
    _check_inputs(weapons, target, context, trials)
    rules = rules_for(context.edition)
    weapons = _prepared(weapons, target, rules)
    chosen = _choices(weapons, target, context, trials, seed, choices)
    counts = _run(weapons, target, context, chosen, trials, seed)
    report: dict[str, str] = {}
    for w, choice in zip(weapons, chosen):
        if rules.lethal_hits.optional and w.lethal_hits and not w.torrent and w.skill is not None:
            report[f"Lethal Hits: {w.name}"] = LETHAL_HITS_OPTIONS[choice.auto_wound]  # it can score Critical Hits
        if w.twin_linked and context.twin_linked_reroll == "best" and choice.twin_linked_reroll:
            report[f"Twin-linked: {w.name}"] = f"re-roll {choice.twin_linked_reroll} wound rolls"
        if rules.anti.duplicates and len({a.threshold for a in applicable_anti(w, target)}) > 1 and choice.anti is not None:
            report[f"Anti: {w.name}"] = f"Anti-{choice.anti.keyword} {choice.anti.threshold}+"
    dists = {
        name: Distribution(np.bincount(getattr(counts, name)).astype(np.float64) / trials)
        for name in TrialCounts.FIELDS
    }
    destroyed = float(np.mean(counts.models_destroyed == target.models))
    failed = float(counts.hazardous_tests_failed.mean())
    notes = (
        f"Monte Carlo simulation, {rules.ordinal} edition: {trials:,} trials, seed {seed}",
        "re-roll 'all' is re-roll failed rolls; Devastating Wounds allocated after all other attacks",
        f"attacker's failed {rules.hazardous.name}s: {failed:.4f} expected",
    )
    return AttackResult(
        **dists,
        target_destroyed=destroyed,
        hazardous_mortal_wounds=failed * hazard_mortal_wounds_per_failure(context),
        notes=notes,
        choices=report,
    )


def hazard_mortal_wounds_per_failure(context: Context) -> int:
    """Mortal wounds the attacking unit suffers per failed Hazardous test (10th edition, current
    wording: 3, on a model equipped with the weapon) or hazard roll (11th edition, 06.03: 1, or 3
    when the unit is MONSTER/VEHICLE, read from ``context.attacker_keywords``).

    >>> [hazard_mortal_wounds_per_failure(Context(edition=e)) for e in (10, 11)]
    [3, 1]
    >>> hazard_mortal_wounds_per_failure(Context(edition=11, attacker_keywords=frozenset({"VEHICLE"})))
    3
    """
    rule = rules_for(context.edition).hazardous
    beasts = {k.upper() for k in context.attacker_keywords} & {"MONSTER", "VEHICLE"}
    return rule.mortal_wounds_monster_vehicle if beasts else rule.mortal_wounds


def simulate_trials(
    weapons: Sequence[Weapon],
    target: Target,
    context: Context | None = None,
    *,
    trials: int = 100_000,
    seed: int = 0,
    choices: Sequence[AttackerChoice] | None = None,
) -> TrialCounts:
    """Simulate ``trials`` attack sequences; the per-trial counts (see ``TrialCounts``).

    Trials are run in chunks (at most ``_MAX_CELLS`` cells in the allocation matrix) from one
    ``numpy.random.Generator`` seeded with ``seed``, so results depend only on the inputs,
    ``trials`` and ``seed``. The attacker's 11th-edition options (Lethal Hits, Anti) are given or
    taken as in ``simulate``. Raises ``InputError`` as ``simulate`` does.
    """
    context = context or Context()
    _check_inputs(weapons, target, context, trials)
    weapons = _prepared(weapons, target, rules_for(context.edition))
    chosen = _choices(weapons, target, context, trials, seed, choices)
    return _run(weapons, target, context, chosen, trials, seed)


def _prepared(weapons: Sequence[Weapon], target: Target, rules: EditionRules) -> list[Weapon]:
    """The weapons as they attack this target: keyword-restricted abilities kept or taken off,
    and the characteristics held within the edition's limits after all modifiers (11th
    edition, 02.02.01: BS/WS 2+..6+, AP never positive, S at least 1)."""
    out = []
    for w in weapons:
        w = w.against(target.keywords)[0]
        changes = {"armour_penetration": limit("AP", w.armour_penetration, rules),
                   "strength": limit("S", w.strength, rules)}
        if w.skill is not None:
            changes["skill"] = limit("WS" if w.is_melee else "BS", w.skill, rules)
        out.append(dataclasses.replace(w, **changes))
    return out


def _choices(weapons, target, context, trials, seed, choices) -> tuple[AttackerChoice, ...]:
    _check_inputs(weapons, target, context, trials)
    if choices is None:
        return attacker_choices(weapons, target, context, trials=trials, seed=seed)
    if len(choices) != len(weapons):
        raise InputError(
            f"choices needs one AttackerChoice per weapon (got {len(choices)} for {len(weapons)} weapons)"
        )
    return tuple(choices)


@dataclass(frozen=True)
class AttackerChoice:
    """The attacker's options for one weapon.

    ``auto_wound``: its Critical Hits wound automatically (LETHAL HITS taken; False for a weapon
    without Lethal Hits). ``anti``: 11th edition, the one ANTI ability used (None when none
    applies; in the 10th edition every applicable one is used and this is None).
    """

    auto_wound: bool
    anti: Anti | None = None
    #: a [TWIN-LINKED] weapon's wound re-roll (``failed`` or ``non-critical``); None: the
    #: context's ``twin_linked_reroll`` (``best`` counts as ``failed`` unless chosen)
    twin_linked_reroll: str | None = None


def attacker_choices(
    weapons: Sequence[Weapon],
    target: Target,
    context: Context,
    *,
    trials: int = 100_000,
    seed: int = 0,
) -> tuple[AttackerChoice, ...]:
    """The attacker's options for each weapon, taken for the higher mean damage.

    10th edition: every Lethal Hits weapon auto-wounds and every applicable Anti ability counts.
    11th edition: LETHAL HITS (24.23) is optional: the context's ``lethal_hits_choice`` when it
    is True or False, else both options are candidates; and any two Anti abilities are
    duplicates, so when several apply with different thresholds each is a candidate (the lowest
    threshold usually wins, but a higher one can be better against a Feel No Pain that works
    only against mortal wounds, with DEVASTATING WOUNDS). With two or more candidates, the weapon
    is simulated alone under each (``trials`` trials, the same ``seed``: common random numbers)
    and the one with the higher mean damage is taken. The candidates are tried in the order
    auto-wound first, then lower thresholds first, and a later one replaces the best so far only
    when its mean damage is higher by more than ``_CHOICE_STANDARD_ERRORS`` standard errors of
    the difference, so that options of equal expected damage (ties) keep the earlier one
    whatever the sampling noise. Damage is counted before excess is lost, so a unit's damage is
    the sum of its weapons' and the weapon-by-weapon choice is the best of all the combinations.
    Raises ``InputError`` as ``simulate`` does.
    """
    _check_inputs(weapons, target, context, trials)
    rules = rules_for(context.edition)
    fishing = context.twin_linked_reroll == "best" and any(w.twin_linked for w in weapons)
    if not rules.lethal_hits.optional and not rules.anti.duplicates and not fishing:
        return tuple(AttackerChoice(auto_wound=w.lethal_hits) for w in weapons)
    chosen = []
    for w in weapons:
        can_choose = w.lethal_hits and not w.torrent and w.skill is not None  # has Critical Hits
        if not rules.lethal_hits.optional:
            lethal = [w.lethal_hits]
        elif context.lethal_hits_choice is not None:
            lethal = [w.lethal_hits and context.lethal_hits_choice]
        else:
            lethal = [True, False] if can_choose else [w.lethal_hits]
        by_threshold: dict[int, Anti] = {}
        for a in sorted(applicable_anti(w, target), key=lambda a: a.threshold):
            by_threshold.setdefault(a.threshold, a)
        antis = (list(by_threshold.values()) or [None]) if rules.anti.duplicates else [None]
        twins = ([rules.twin_linked.reroll, rules.twin_linked.fishing]
                 if w.twin_linked and context.twin_linked_reroll == "best" else [None])
        candidates = [AttackerChoice(auto, anti, twin) for twin in twins for auto in lethal for anti in antis]
        if len(candidates) == 1:
            chosen.append(candidates[0])
            continue
        best, best_damage = candidates[0], _run([w], target, context, candidates[:1], trials, seed).damage
        for candidate in candidates[1:]:
            damage = _run([w], target, context, (candidate,), trials, seed).damage
            se = np.sqrt((damage.var() + best_damage.var()) / trials)
            if damage.mean() - best_damage.mean() > _CHOICE_STANDARD_ERRORS * se:
                best, best_damage = candidate, damage
        chosen.append(best)
    return tuple(chosen)


def _check_inputs(weapons: Sequence[Weapon], target: Target, context: Context, trials: int) -> None:
    if context.edition not in (10, 11):
        raise InputError(
            f"the Monte Carlo simulator knows the 10th and 11th editions (got edition "
            f"{context.edition}); use Context(edition=10) or Context(edition=11)"
        )
    if trials < 1:
        raise InputError(f"trials must be at least 1 (got {trials})")
    if target.models < 1 or target.wounds < 1 or any(w.models < 1 for w in weapons):
        raise InputError(
            f"the target needs at least 1 model of at least 1 wound, and each weapon at least 1 "
            f"model firing it (got {target.models} x W{target.wounds}, weapon models "
            f"{[w.models for w in weapons]})"
        )


def _run(
    weapons: Sequence[Weapon],
    target: Target,
    context: Context,
    chosen: tuple[AttackerChoice, ...],
    trials: int,
    seed: int,
) -> TrialCounts:
    """The chunked simulation, with the attacker's option for each weapon given (``chosen``)."""
    rng = np.random.default_rng(seed)
    chunk = int(np.clip(_MAX_CELLS // max(1, _max_events(weapons, target, context)), 1, _MAX_CHUNK))
    parts: list[TrialCounts] = []
    done = 0
    while done < trials:
        n = min(chunk, trials - done)
        parts.append(_simulate_chunk(rng, weapons, target, context, chosen, n))
        done += n
    names = TrialCounts.FIELDS + ("hazardous_tests_failed",)
    return TrialCounts(**{name: np.concatenate([getattr(p, name) for p in parts]) for name in names})


def wound_roll_target(strength: int, toughness: int) -> int:
    """The wound roll needed, from the Strength vs Toughness table (10th and 11th edition).

    >>> [wound_roll_target(s, 4) for s in (8, 5, 4, 3, 2)]
    [2, 3, 4, 5, 6]
    """
    return declarations.wound_roll_target(strength, toughness)


def has_benefit_of_cover(weapon: Weapon, target: Target, context: Context) -> bool:
    """Whether the target has the Benefit of Cover against an attack of ``weapon``.

    Only ranged attacks without IGNORES COVER; ``context.cover`` in both editions, and in the 11th
    edition also a target with Stealth (24.33; one benefit, never two).

    >>> from schemas.dice import DiceExpr
    >>> one = DiceExpr(text="1", dice_count=0, dice_sides=0, modifier=1)
    >>> w = Weapon(name="w", attacks=one, skill=3, strength=4, armour_penetration=0, damage=one)
    >>> stealthy = Target(toughness=4, save=3, wounds=2, stealth=True)
    >>> has_benefit_of_cover(w, stealthy, Context()), has_benefit_of_cover(w, stealthy, Context(edition=11))
    (False, True)
    """
    if weapon.is_melee or weapon.ignores_cover:
        return False
    rules = rules_for(context.edition)
    stealth = target.stealth and rules.stealth.effect == "benefit-of-cover"
    indirect = rules.indirect_fire.cover and fires_indirectly(weapon, context)
    return context.cover or stealth or indirect


def fires_indirectly(weapon: Weapon, context: Context) -> bool:
    """An [INDIRECT FIRE] ranged weapon fired with ``context.indirect``."""
    return context.indirect and weapon.indirect_fire and not weapon.is_melee


def hit_roll_target(weapon: Weapon, target: Target, context: Context) -> tuple[int, int]:
    """(the BS/WS roll target after changes to the characteristic, the net hit roll modifier).

    For a weapon with a hit roll (``skill`` not None) outside Fire Overwatch / snap shooting.
    The modifier is ``hit_modifier`` plus HEAVY (+1 when stationary), capped at +1/-1.
    10th edition: Stealth is -1 to hit for ranged attacks, inside the cap; the characteristic is
    unchanged. 11th edition: the Benefit of Cover (13.08, which Stealth gives) worsens the
    characteristic by 1, outside the cap; a [PSYCHIC] attack ignores every modifier that hurts
    it (the worsening, a negative ``hit_modifier``) and keeps those that help (a positive
    ``hit_modifier``, HEAVY). Raises ``ValueError`` for a weapon without a hit roll (a caller's
    bug: TORRENT attacks are resolved without one).

    >>> from schemas.dice import DiceExpr
    >>> one = DiceExpr(text="1", dice_count=0, dice_sides=0, modifier=1)
    >>> w = Weapon(name="w", attacks=one, skill=3, strength=4, armour_penetration=0, damage=one)
    >>> t = Target(toughness=4, save=3, wounds=2)
    >>> hit_roll_target(w, t, Context(edition=11, cover=True, hit_modifier=-1))
    (4, -1)
    >>> psychic = Weapon(**{**w.__dict__, "psychic": True})
    >>> hit_roll_target(psychic, t, Context(edition=11, cover=True, hit_modifier=-1))
    (3, 0)
    >>> hit_roll_target(psychic, t, Context(edition=11, cover=True, hit_modifier=1))
    (3, 1)
    >>> hit_roll_target(w, t, Context(edition=11, cover=True, hit_modifier=-1, ignore_hit_modifiers=True))
    (3, 0)
    >>> hit_roll_target(w, Target(toughness=4, save=3, wounds=2, stealth=True), Context(hit_modifier=-1))
    (3, -1)
    >>> six = Weapon(**{**w.__dict__, "skill": 6})
    >>> hit_roll_target(six, t, Context(edition=11, cover=True, hit_modifier=1))  # BS 7+ is held at 6+
    (6, 1)
    """
    if weapon.skill is None:
        raise ValueError(f"weapon {weapon.name!r} makes no hit roll (TORRENT)")
    rules = rules_for(context.edition)
    helping = [rules.heavy.hit_modifier if heavy_applies(weapon, context, rules) else 0, max(0, context.hit_modifier)]
    hurting = [min(0, context.hit_modifier)]
    if rules.stealth.effect == "hit-roll-modifier" and target.stealth and not weapon.is_melee:
        hurting.append(rules.stealth.amount)
    if context.damaged:
        hurting.append(rules.damaged.hit_modifier)
    if (context.close_quarters and not weapon.is_melee and not weapon.close_quarters
            and {k.upper() for k in context.attacker_keywords} & {"MONSTER", "VEHICLE"}):
        hurting.append(rules.close_quarters.monster_vehicle_hit_modifier)
    if fires_indirectly(weapon, context):
        hurting.append(rules.indirect_fire.hit_modifier)
    worsening = rules.cover.amount if (rules.cover.effect == "worsen-bs"
                                       and has_benefit_of_cover(weapon, target, context)) else 0
    if weapon.psychic and rules.psychic.ignores_harmful_modifiers or context.ignore_hit_modifiers:  # each one that hurts
        hurting, worsening = [], 0
    elif context.ignore_skill_modifiers:  # the BS/WS only
        worsening = 0
    skill = limit("WS" if weapon.is_melee else "BS", weapon.skill + worsening, rules)
    return skill, capped(sum(helping) + sum(hurting), rules)


def hit_roll_fails_on_at_most(weapon: Weapon, context: Context) -> int:
    """The unmodified hit rolls that fail whatever the BS: 1, or with indirect fire 1-3 (10th
    edition; 11th with Remained Stationary and the target visible to a friendly unit) or 1-5
    (11th, 10.07), as declared in ``indirect_fire``.

    >>> from schemas.dice import DiceExpr
    >>> one = DiceExpr(text="1", dice_count=0, dice_sides=0, modifier=1)
    >>> w = Weapon(name="w", attacks=one, skill=3, strength=4, armour_penetration=0, damage=one, indirect_fire=True)
    >>> [hit_roll_fails_on_at_most(w, Context(edition=e, indirect=True)) for e in (10, 11)]
    [3, 5]
    """
    if not fires_indirectly(weapon, context):
        return 1
    rule = rules_for(context.edition).indirect_fire
    spotted = context.stationary and context.target_visible_to_friendly_unit
    return rule.fails_on_at_most_spotted if spotted else rule.fails_on_at_most


def save_roll_target(weapon: Weapon, target: Target, context: Context) -> int:
    """The unmodified save roll needed (7 means no save can succeed).

    10th edition: the armour save is worsened by AP and improved by 1 by the Benefit of Cover
    (ranged attacks without IGNORES COVER, except Sv 3+ or better against AP 0); the invulnerable
    save ignores both; the better of the two is taken. 11th edition: the better of the armour save
    worsened by AP and the InSv (cover changes the BS instead). An unmodified 1 always fails, so
    the result is >= 2.

    >>> from schemas.dice import DiceExpr
    >>> one = DiceExpr(text="1", dice_count=0, dice_sides=0, modifier=1)
    >>> w = Weapon(name="w", attacks=one, skill=3, strength=4, armour_penetration=-1, damage=one)
    >>> save_roll_target(w, Target(toughness=4, save=3, wounds=2), Context(cover=True))
    3
    >>> save_roll_target(w, Target(toughness=4, save=3, wounds=2), Context(edition=11, cover=True))
    4
    >>> save_roll_target(w, Target(toughness=4, save=3, wounds=2, invulnerable_save=4), Context())
    4
    """
    needed = 7
    cover = rules_for(context.edition).cover
    if target.save is not None:
        armour = target.save - weapon.armour_penetration
        in_cover = cover.effect == "improve-save" and has_benefit_of_cover(weapon, target, context)
        exception = cover.no_cover_for_save_at_most
        if in_cover and not (exception is not None and target.save <= exception and weapon.armour_penetration == 0):
            armour -= cover.amount
        needed = min(needed, armour)
    if target.invulnerable_save is not None:
        needed = min(needed, target.invulnerable_save)
    return max(2, needed)


def blast_attacks(weapon: Weapon, target: Target, context: Context) -> int:
    """The attacks BLAST adds per model firing ``weapon``: 1 (10th edition) or X (11th edition,
    [BLAST X], 24.05) for every five models in the target unit, rounding down.

    >>> from schemas.dice import DiceExpr
    >>> one = DiceExpr(text="1", dice_count=0, dice_sides=0, modifier=1)
    >>> w = Weapon(name="w", attacks=one, skill=3, strength=4, armour_penetration=0, damage=one, blast=2)
    >>> t = Target(toughness=3, save=5, wounds=1, models=12)
    >>> blast_attacks(w, t, Context()), blast_attacks(w, t, Context(edition=11))
    (2, 4)
    """
    if not weapon.blast:
        return 0
    per_five = weapon.blast if rules_for(context.edition).blast.per_five == "x" else 1
    return per_five * (target.models // 5)


def cleave_attacks(weapon: Weapon, target: Target, context: Context) -> int:
    """The attack dice [CLEAVE X] adds per model (11th edition, 24.06; the weapon's attacks all
    at one target, as here): X for every five models in the target unit, rounding down; 0 in an
    edition without the ability.

    >>> from schemas.dice import DiceExpr
    >>> three = DiceExpr(text="3", dice_count=0, dice_sides=0, modifier=3)
    >>> w = Weapon(name="w", attacks=three, skill=3, strength=4, armour_penetration=0, damage=three, cleave=1)
    >>> cleave_attacks(w, Target(toughness=3, save=5, wounds=1, models=16), Context(edition=11))
    3
    """
    if not weapon.cleave or not rules_for(context.edition).cleave.supported:
        return 0
    return weapon.cleave * (target.models // 5)


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
    elif reroll == "non-critical":
        again = ~judge(rolls)[1]
    else:
        return rolls
    rolls[again] = _d6(rng, int(again.sum()))
    return rolls


def _reroll_one(rng, rolls: np.ndarray, trial: np.ndarray, judge) -> None:
    """Re-roll, in place, the first failed roll of each trial (``trial[i]``: the trial of roll i):
    the unit's re-roll of one die (``Context.reroll_one_hit`` / ``reroll_one_wound``)."""
    failed = np.flatnonzero(~judge(rolls)[0])
    if not failed.size:
        return
    _, first = np.unique(trial[failed], return_index=True)
    again = failed[first]
    rolls[again] = _d6(rng, again.size)


_REROLL_RANK = {None: 0, "ones": 1, "failed": 2, "all": 2, "non-critical": 3}


def _more_generous(a: Reroll | None, b: Reroll | None) -> Reroll | None:
    return a if _REROLL_RANK[a] >= _REROLL_RANK[b] else b


def _per_trial(trial: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    counts = np.bincount(trial, weights=weights, minlength=n)
    return counts.astype(np.int64) if weights is not None else counts


def _damage(rng, weapon: Weapon, context: Context, n: int, first_of: np.ndarray | None = None) -> np.ndarray:
    """Damage of ``n`` events after Melta, halving, -1 and the context modifier (at least 1).
    A Damage roll below the mean of its dice is re-rolled (before modifiers): every such roll with
    ``context.reroll_damage``, the first of each trial (``first_of``: the events' trials, in
    allocation order) with the re-roll of one Damage roll."""
    dmg = _roll(rng, weapon.damage, n)
    if weapon.damage.dice_count and (context.reroll_damage or first_of is not None):
        low = np.flatnonzero(dmg < damage_reroll_below(weapon.damage, context.reroll_damage or "below-mean"))
        if first_of is not None and not context.reroll_damage:
            low = low[np.unique(first_of[low], return_index=True)[1]]
        dmg[low] = _roll(rng, weapon.damage, low.size)
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
    most += blast_attacks(weapon, target, context) + cleave_attacks(weapon, target, context)
    return max(1, most)


def _max_events(weapons: Sequence[Weapon], target: Target, context: Context) -> int:
    """An upper bound on the damage events of one trial (sizes the chunks)."""
    total = 0
    for w in weapons:
        per_attack = 1 + (w.sustained_hits.maximum if w.sustained_hits is not None else 0)
        total += w.models * _attacks_per_model_bound(w, target, context) * per_attack
    return total


def _hit_roll(rng, weapon: Weapon, target: Target, context: Context, attack_trial: np.ndarray,
              reroll_one: bool = False):
    """(normal hits, Critical Hits) as trial indices, one entry per hit, before Sustained Hits."""
    if weapon.torrent or weapon.skill is None:
        return attack_trial, attack_trial[:0]
    reroll = context.reroll_hits
    rules = rules_for(context.edition)
    if context.overwatch:
        if rules.overwatch.no_hit_rerolls:
            reroll = None  # 15.09 snap shooting: "You cannot re-roll hit rolls."

        def judge(rolls):
            six = rolls == 6
            return six, six
    else:
        needed, modifier = hit_roll_target(weapon, target, context)
        fails_on = hit_roll_fails_on_at_most(weapon, context)
        if fails_on > 1 and rules.indirect_fire.no_hit_rerolls:
            reroll = None  # 10.07 indirect shooting: "You cannot re-roll hit rolls."

        def judge(rolls):
            success, critical = _outcome(rolls, needed, modifier, context.critical_hit_on)
            return success & (rolls > fails_on), critical & (rolls > fails_on)

    rolls = _roll_test(rng, attack_trial.size, reroll, judge)
    if reroll_one:
        _reroll_one(rng, rolls, attack_trial, judge)
    success, critical = judge(rolls)
    return attack_trial[success & ~critical], attack_trial[critical]


def applicable_anti(weapon: Weapon, target: Target) -> tuple[Anti, ...]:
    """The weapon's ANTI-KEYWORD X+ abilities whose keyword the target has."""
    return tuple(a for a in weapon.anti if a.keyword.upper() in target.keywords)


def critical_wound_on(weapon: Weapon, target: Target, context: Context, anti: Anti | None = None) -> int:
    """The unmodified wound roll that is a Critical Wound, with ANTI-KEYWORD X+ applied.

    10th edition: every Anti ability whose keyword the target has applies, so the lowest of their
    thresholds counts. 11th edition: any two Anti abilities are duplicates and only one is used:
    ``anti`` (the attacker's choice, see ``attacker_choices``), by default the applicable one with
    the lowest threshold.

    >>> from schemas.dice import DiceExpr
    >>> one = DiceExpr(text="1", dice_count=0, dice_sides=0, modifier=1)
    >>> anti = (Anti("INFANTRY", 4), Anti("VEHICLE", 2), Anti("MONSTER", 3))
    >>> w = Weapon(name="w", attacks=one, skill=3, strength=4, armour_penetration=0, damage=one, anti=anti)
    >>> t = Target(toughness=4, save=3, wounds=2, keywords=frozenset({"INFANTRY", "MONSTER"}))
    >>> critical_wound_on(w, t, Context()), critical_wound_on(w, t, Context(edition=11))
    (3, 3)
    >>> critical_wound_on(w, t, Context(edition=11), anti=anti[0])
    4
    """
    applicable = [a.threshold for a in applicable_anti(weapon, target)]
    if rules_for(context.edition).anti.duplicates and applicable:
        applicable = [anti.threshold if anti is not None else min(applicable)]
    return min([context.critical_wound_on, *applicable])


def _fire(rng, weapon: Weapon, target: Target, context: Context, choice: AttackerChoice, n: int,
          reroll_one: tuple[str, ...] = ()) -> _Fired:
    """Resolve one weapon's attacks in ``n`` trials up to damage after Feel No Pain, with the
    attacker's ``choice`` (Lethal Hits option, the Anti ability used)."""
    # Attacks: rolled per model, plus Rapid Fire, Blast and Cleave per model.
    rules = rules_for(context.edition)
    per_model = _roll(rng, weapon.attacks, n * weapon.models)
    if weapon.rapid_fire is not None and context.half_range:
        per_model += _roll(rng, weapon.rapid_fire, n * weapon.models)
    per_model += blast_attacks(weapon, target, context) + cleave_attacks(weapon, target, context)
    fewest = rules.limits.bounds.get("A", (None, None))[0] or 0  # 11th edition: A at least 1
    attacks = np.maximum(per_model, fewest).reshape(n, weapon.models).sum(axis=1)
    attack_trial = np.repeat(np.arange(n, dtype=np.int32), attacks)
    empty = attack_trial[:0]

    normal_hit, critical_hit = _hit_roll(rng, weapon, target, context, attack_trial, "hit" in reroll_one)
    reroll_one_wound = "wound" in reroll_one
    extra_hit = empty
    if weapon.sustained_hits is not None and critical_hit.size:
        extra = np.maximum(_roll(rng, weapon.sustained_hits, critical_hit.size), 0)
        extra_hit = np.repeat(critical_hit, extra)
    hits = _per_trial(normal_hit, n) + _per_trial(critical_hit, n) + _per_trial(extra_hit, n)

    # Wound roll (Lethal Hits' Critical Hits skip it when the weapon auto-wounds).
    if weapon.lethal_hits and choice.auto_wound:
        rolled, automatic = np.concatenate([normal_hit, extra_hit]), critical_hit
    else:
        rolled, automatic = np.concatenate([normal_hit, extra_hit, critical_hit]), empty
    others = 0 if context.ignore_wound_modifiers and context.wound_modifier < 0 else context.wound_modifier
    wound_modifier = capped(others + (1 if weapon.lance and context.charged else 0), rules)
    needed = wound_roll_target(weapon.strength, target.toughness)
    critical_on = critical_wound_on(weapon, target, context, choice.anti)

    def judge_wound(rolls):
        return _outcome(rolls, needed, wound_modifier, critical_on)

    reroll = _more_generous(context.reroll_wounds, rules.twin_linked.reroll if weapon.twin_linked else None)
    twin = choice.twin_linked_reroll or (context.twin_linked_reroll if context.twin_linked_reroll != "best" else None)
    if weapon.twin_linked and twin == rules.twin_linked.fishing:
        reroll = "non-critical"
    rolls = _roll_test(rng, rolled.size, reroll, judge_wound)
    if reroll_one_wound:
        _reroll_one(rng, rolls, rolled, judge_wound)
    success, critical = judge_wound(rolls)
    wounded = rolled[success]
    wounds = _per_trial(wounded, n) + _per_trial(automatic, n)
    if weapon.devastating_wounds:
        devastating = rolled[critical]
        to_save = np.concatenate([rolled[success & ~critical], automatic])
    else:
        devastating = empty
        to_save = np.concatenate([wounded, automatic])

    # Saving throw: one roll against the better of armour (after AP and, in the 10th edition,
    # cover) and invulnerable.
    save_on = save_roll_target(weapon, target, context)
    unsaved_trial = to_save[_d6(rng, to_save.size) < save_on]

    # Damage and Feel No Pain.
    # Feel No Pain against Psychic Attacks: every damage point of a [PSYCHIC] weapon's attack.
    fnp_all = [x for x in (target.feel_no_pain,
                           target.feel_no_pain_psychic if weapon.psychic else None) if x is not None]
    normal_damage = _feel_no_pain(rng, _damage(rng, weapon, context, unsaved_trial.size,
                                               unsaved_trial if "damage" in reroll_one else None),
                                  min(fnp_all) if fnp_all else None)
    mortal = _damage(rng, weapon, context, devastating.size)
    fnp_mortal = [x for x in (*fnp_all, target.feel_no_pain_mortal) if x is not None]
    mortal_damage = _feel_no_pain(rng, mortal, min(fnp_mortal) if fnp_mortal else None)
    # A rule's mortal wounds on a Critical Hit / Critical Wound (not a Lethal Hits automatic
    # wound): in addition to the attack, one wound each, after the normal damage (06.02); they take
    # the devastating events' place (a weapon has one or the other).
    for expr, crits in ((weapon.mortal_wounds_on_critical_hit, critical_hit),
                        (weapon.mortal_wounds_on_critical_wound, rolled[critical])):
        if expr is None or not crits.size:
            continue
        per_crit = np.maximum(_roll(rng, expr, crits.size), 0)
        devastating = np.concatenate([devastating, np.repeat(crits, per_crit)])
        mortal = np.concatenate([mortal, np.ones(int(per_crit.sum()), dtype=mortal.dtype)])
        mortal_damage = np.concatenate([mortal_damage, _feel_no_pain(
            rng, np.ones(int(per_crit.sum()), dtype=mortal.dtype), min(fnp_mortal) if fnp_mortal else None)])

    # Hazardous: one D6 per model that fired the weapon; a 10th-edition Hazardous test fails on a
    # 1, an 11th-edition hazard roll (06.03) on a 1-2.
    hazardous = np.zeros(n, dtype=np.int64)
    if weapon.hazardous:
        fails_on = rules.hazardous.fails_on_at_most
        hazardous = (_d6(rng, n * weapon.models).reshape(n, weapon.models) <= fails_on).sum(axis=1)
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


def _simulate_chunk(
    rng,
    weapons: Sequence[Weapon],
    target: Target,
    context: Context,
    chosen: tuple[AttackerChoice, ...],
    n: int,
) -> TrialCounts:
    one_hit = reroll_one_weapon(weapons, "hit", context) if context.reroll_one_hit else None
    one_wound = reroll_one_weapon(weapons, "wound", context) if context.reroll_one_wound else None
    one_damage = reroll_one_weapon(weapons, "damage", context) if context.reroll_one_damage else None
    fired = [_fire(rng, w, target, context, choice, n,
                   tuple(r for r, at in (("hit", one_hit), ("wound", one_wound), ("damage", one_damage)) if at == i))
             for i, (w, choice) in enumerate(zip(weapons, chosen))]
    zero = np.zeros(n, dtype=np.int64)

    def total(name: str) -> np.ndarray:
        return sum((getattr(f, name) for f in fired), zero)

    # Devastating attacks are allocated after all the unit's other attacks, then a rule's mortal
    # wounds after the attack (Context.mortal_wounds_after), one wound each.
    events = [f.normal_events for f in fired] + [f.devastating_events for f in fired]
    mortal_wounds, damage = total("mortal_wounds"), total("damage")
    fnp = [x for x in (target.feel_no_pain, target.feel_no_pain_mortal) if x is not None]
    for needed, expr in context.mortal_wounds_after:
        rolled = _roll(rng, expr, n)
        if needed is not None:
            rolled = np.where(_d6(rng, n) >= needed, rolled, 0)
        rolled = np.maximum(rolled, 0)
        trial = np.repeat(np.arange(n), rolled)
        points = _feel_no_pain(rng, np.ones(trial.size, dtype=np.int64), min(fnp) if fnp else None)
        events.append((trial, points))
        mortal_wounds = mortal_wounds + rolled
        damage = damage + _per_trial(trial, n, points)
    return TrialCounts(
        attacks=total("attacks"),
        hits=total("hits"),
        wounds=total("wounds"),
        unsaved=total("unsaved"),
        mortal_wounds=mortal_wounds,
        damage=damage,
        models_destroyed=_allocate(events, n, target),
        hazardous_tests_failed=total("hazardous_tests_failed"),
    )
