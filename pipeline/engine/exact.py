"""Exact attack resolution: full probability distributions, 10th edition (current wording) and 11th.

``resolve(weapons, target, context)`` computes, with no sampling, the distribution of every stage
of an attack by one unit's weapons against one target unit (see ``AttackResult``), under the rules
of ``context.edition``. Rules implemented (Warhammer 40,000 10th edition, Core Rules "Making
Attacks", "Weapon Abilities", "Benefit of Cover", "Feel No Pain", current wording, as in
``cases/README.md``; the 11th-edition differences are marked **11th** and cite the sections of
the 11th-edition core rules, ``raw/wahapedia-11e-core-rules-astra-militarum-page.txt``):

- Attacks: the Attacks characteristic (a dice expression) of each of ``Weapon.models`` models;
  RAPID FIRE X adds X per model at half range; BLAST adds 1 per model for every five models in
  the target unit (rounding down), whatever the X of a [BLAST X] profile. **11th** (24.05):
  [BLAST X] adds X attack dice per five models ([BLAST 2] against 12 models: +4).
- Hit roll against BS/WS: modifiers are the context's ``hit_modifier``, +1 for HEAVY when the
  attacker Remained Stationary and -1 for a ranged attack against a target with Stealth, capped
  at +1/-1 net. An unmodified 1 fails, an unmodified 6 succeeds, an unmodified
  ``critical_hit_on``+ is a Critical Hit (always a success). Fire Overwatch (``overwatch``): a
  hit only on an unmodified 6 whatever the BS and modifiers, so every hit is a Critical Hit.
  TORRENT (or a skill of None): no hit roll, every attack hits, no Critical Hits.
  **11th**: the benefit of cover (13.08: ``context.cover``, or Stealth, 24.33, when every model
  has it; the two are one benefit, not cumulative) applies to ranged attacks without IGNORES
  COVER (24.18) and worsens the attack's BS by 1: a characteristic change, outside the +/-1 cap
  of the hit roll modifiers (BS3+ in cover with -1 to hit needs 5+; with +1 it needs 3+). A
  Critical Hit still hits whatever the BS (Hit Roll table: unmodified 1 fails, then an
  unmodified Critical Hit result, then ">= BS"), so BS6+ in cover (7+) hits only on Critical
  Hits. Stealth is not a hit modifier in the 11th edition, and cover does not change the save.
  PSYCHIC (11th, BSData 11th "Psychic": "you can ignore any or all modifiers to that attack's BS
  or WS characteristic and any or all modifiers to the hit roll"): the attacker ignores each
  modifier that would hurt: the cover's BS worsening and a negative ``hit_modifier`` (the
  context gives other rules' modifiers as one net number, so a negative net is ignored whole);
  positive modifiers (Heavy, a positive net) are kept. In the 10th edition PSYCHIC is a tag.
  Snap shooting (15.09, what Fire Overwatch uses in the 11th edition): hits only on an
  unmodified 6 and hit rolls cannot be re-rolled (``reroll_hits`` is ignored).
- Re-rolls come before modifiers, at most once per die: ``ones`` re-rolls unmodified 1s,
  ``failed`` re-rolls every roll that fails after modifiers; ``all`` is re-roll failed (re-rolling
  a success is never required; T02 of ``cases/README.md``). A re-rolled 6 is critical.
  TWIN-LINKED re-rolls failed wound rolls (the more generous of it and the context's re-roll).
- SUSTAINED HITS X (X may be a dice expression, rolled per Critical Hit): extra hits that are
  normal hits, never critical. LETHAL HITS: a Critical Hit wounds automatically; that automatic
  wound is not a Critical Wound (it never triggers Devastating Wounds).
  **11th** (24.23): wounding automatically is the attacker's choice. The engine takes one policy
  per weapon (always auto-wound, or always roll to wound) for all its Critical Hits: the forced
  ``context.lethal_hits_choice`` if set, otherwise the one with the higher expected damage (the
  ``damage`` stage mean), ties going to auto-wound; it is reported in ``choices``. The damage
  mean of the unit is the sum of the weapons' means and each weapon's depends only on its own
  policy, so choosing weapon by weapon gives the best of all 2^k combinations of k weapons, at
  the cost of 2k evaluations (no cap on k is needed). Declining can pay with DEVASTATING
  WOUNDS (a Critical Wound is mortal wounds, no save) against a good save.
- Wound roll: Strength vs Toughness (``wound_roll_target``), modifiers ``wound_modifier`` and +1
  for LANCE when the bearer charged, capped at +1/-1. Unmodified 1 fails, 6 succeeds; unmodified
  ``critical_wound_on``+ is a Critical Wound, and so is an unmodified X+ of an ANTI-KEYWORD X+
  whose keyword the target has (all apply: the lowest threshold counts).
  **11th** (DESIGN: any two Anti abilities are duplicates): one applicable Anti ability applies,
  picked by the attacker: the engine takes the one with the higher expected damage, ties going to
  the lowest threshold (reported in ``choices`` when two thresholds apply). A lower threshold is
  better except with DEVASTATING WOUNDS against a target whose Feel No Pain against mortal wounds
  beats its save: then the 11th edition can differ from the 10th (where all Anti abilities apply).
- DEVASTATING WOUNDS: a Critical Wound allows no save; the attack inflicts mortal wounds equal to
  its Damage (after the damage modifiers below), allocated as one event onto one model after all
  the other attacks of the unit (every weapon), excess lost (current wording: no spill-over).
  **11th** (24.10, 06.02): the attack sequence ends; mortal wounds equal to D are inflicted after
  the normal damage of "those attacks" (read: the unit's attacks on the target, as in the 10th
  edition; with one weapon both readings coincide) and damage at most one model per Critical
  Wound, the rest lost. Numerically the same as the 10th edition's current wording, so the same
  code applies; only the 10th edition's original wording (mortal wounds spilling over to the next
  model) would differ, and it is not the current rule.
- Saving throw (``save_roll_target``): the armour save worsened by AP, +1 with the Benefit of
  Cover (ranged attacks without IGNORES COVER; not for Sv 3+ or better against AP 0); the
  invulnerable save ignores AP and cover; the better save is used (the defender's pick, the same
  for a unit of identical models); an unmodified 1 fails. **11th** (Save Rolls): the better of
  the armour save after AP and the InSv applies, with no cover bonus; for a unit of identical
  models (one allocation group) this is the 10th-edition figure without cover.
- Damage per event (``damage_per_event``): the rolled Damage, + MELTA X at half range, halved
  rounding up (``damage_reduction="half"``), then -1 (``"one"``) and ``damage_modifier``, at least
  1. Feel No Pain is rolled per damage point: ``feel_no_pain`` against all damage, the better of
  it and ``feel_no_pain_mortal`` against mortal wounds.
- Allocation: events (unsaved attacks, then devastating attacks) go one at a time onto one
  model; a wounded model takes the next event; damage beyond its remaining wounds is lost. The
  weapons are resolved in the order given and the target's wound state carries from one weapon
  to the next.
- HAZARDOUS (the attacking unit, after its attacks): 10th edition, current wording (BSData 10th
  "Hazardous"): one Hazardous test per Hazardous weapon used (each model's weapon), failing on a
  1; each failure is 3 mortal wounds allocated to one selected model (excess lost).
  **11th** (24.15, 06.03): one hazard roll per [HAZARDOUS] weapon selected (each model's),
  failing on a 1-2; each failure is 1 mortal wound, or 3 if every model of the unit is a
  MONSTER/VEHICLE (read from ``context.attacker_keywords``). ``AttackResult.
  hazardous_mortal_wounds`` is the expected mortal wounds; the expected failures are in the notes.

Every rule that changed something is reported as a ``Step`` (``AttackResult.steps``) with its
canonical rule key (``RULE_KEYS``) and a summary with the numbers; ``notes`` are the summaries.

Method. Attacks are independent, so each weapon's stage counts are compound distributions: the
per-attack distribution of a stage (a few numbers, from the cached per-roll probabilities) is
compounded over the per-model Attacks distribution with numpy convolutions, then raised to the
``models``-th convolution power. Models destroyed come from a Markov chain over the target's
state (models destroyed, damage on the wounded model): the per-event transition matrix ``T`` is
built from the damage distribution, and ``sum_u P(U = u) x T^u`` is evaluated with the powers
``x T^u`` (by doubling for a small chain, else one product per event, Horner's scheme). A Devastating
Wounds weapon's unsaved and devastating counts are not independent, so the chain carries, for
each such weapon, the pending count of its devastating events that do damage until every
weapon's other events are allocated; that count is capped where every model is destroyed from
any state (models x ceil(W / least damage)), and the weapon's hits are split in closed form
(``_with_devastating``; with Lethal Hits, one attack at a time): the work is linear in the
attacks, with no joint count matrix; for a small chain the powers of the split hits' transition
and of the devastating events' are kept by value (``_transition_powers``, ``_mortal_powers``, up
to 64 Ki cells each), so that each is one product; consecutive weapons whose devastating events are the same
transition share one pending count (their total is all that matters). Where pending counts would
be carried (two or more multiply: Devastating Wounds weapons of different Damage), the chain is
resolved by kill counts instead (``pipeline.engine.kill_counts``: the walk of the wounded model's
damage, joined where the devastating events start, with the models destroyed counted, each event
applied along its walk's axis; linear in the attacks, whatever the number of weapons), or, for a
last weapon with Devastating Wounds, with that weapon's unsaved count expanded instead of its
pending count carried (``pipeline.engine.last_expanded``: two such weapons against a few models of
many Wounds), whichever is the least work (``_chain_method``). A count's upper tail of at most 1e-15 is cut and its mass
put on the last kept value (``_truncated``), or, for a pending count, on "every model destroyed",
so every pmf still sums to 1 and no probability moves by more than 1e-15 per weapon.

The 11th-edition choices (Lethal Hits, Anti) compare closed-form expected damage per attack
(linearity of expectation), then build the distributions once for the chosen option.

Where the rules live: each edition's rules above are declared once, as data with the quoted
wording, in ``pipeline/engine/edition_rules.toml``, loaded by ``pipeline.engine.declarations``
(``rules_for(edition)``), which the simulator reads too; this module interprets them. Also
declared there and applied here: the 11th edition's characteristic limits after all modifiers
(02.02.01: BS/WS never better than 2+ or worse than 6+, AP never worse than 0, A and S at least
1: a BS 6+ attack in cover stays 6+), [CLEAVE X] (24.06, ``Weapon.cleave``), indirect fire
(``Context.indirect`` with ``Weapon.indirect_fire``; 11th 10.07: benefit of cover, no hit re-rolls,
an unmodified 1-5 fails, 1-3 when Remained Stationary and the target is visible to a friendly
unit; 10th Indirect Fire: -1 to hit, 1-3 fails, Benefit of Cover), close-quarters shooting
(``Context.close_quarters``: a MONSTER/VEHICLE attacker has -1 to hit except with [CLOSE-QUARTERS]
or [PISTOL], 10.06) and Damaged (``Context.damaged``: -1 to hit, 24.39).

Rules' effects as inputs (``pipeline.effects.apply`` sets them from the ``effects`` table):

- HEAVY (``declarations.heavy_applies``): 10th edition, Remained Stationary (``stationary``);
  11th (24.16), in your Shooting phase (not snap shooting), unengaged (not ``close_quarters``),
  not set up this turn (``set_up_this_turn``) and no model moved more than 3" (``stationary`` or
  ``moved_inches`` <= 3).
- TWIN-LINKED: "you can re-roll the wound roll" (either edition): ``twin_linked_reroll``
  ``failed`` (default), ``non-critical`` (every roll but a Critical Wound is re-rolled: fishing,
  which can pay with DEVASTATING WOUNDS or ANTI) or ``best`` (the higher expected damage per
  weapon, closed form as for Lethal Hits; reported in ``choices``).
- Mortal wounds a rule inflicts on a Critical Hit / Critical Wound (``Weapon.
  mortal_wounds_on_critical_hit`` / ``_wound``, dice), in addition to the attack, and once after
  the attack (``Context.mortal_wounds_after``: on a D6 of N+, X mortal wounds): one wound lost
  each, the excess of one spilling over to the next model, Feel No Pain against mortal wounds,
  inflicted after the unit's normal damage (11th 06.02: "resolve all of the normal damage first,
  then resolve all of the mortal wounds"; the 10th edition is read the same way). In the chain the
  per-critical ones are pending events of one damage point, like devastating events. A Lethal
  Hits automatic wound is not a Critical Wound. Not with DEVASTATING WOUNDS on the same weapon
  (refused).
- A re-roll of one die (``reroll_one_hit`` / ``reroll_one_wound``): one failed roll of the unit,
  spent on the first weapon that can take it (``declarations.reroll_one_weapon``: one with that
  roll, not re-rolled already, without DEVASTATING WOUNDS or mortal wounds on a critical); the
  weapon's counts are exact (``_reroll_one``: S successes of N dice become S + Bernoulli(p) when
  S < N, the re-rolled die critical with its own probability; a Hit and a Wound re-roll together
  compose, the wound re-roll possibly falling on the re-rolled attack).
- ``ignore_wound_modifiers``: a negative ``wound_modifier`` is ignored (a positive one kept);
  ``ignore_skill_modifiers``: the benefit of cover's BS worsening (11th) is ignored.

- Damage re-rolls (``reroll_damage`` ``below-mean`` / ``ones``: every such Damage roll re-rolled,
  ``_rerolled_damage``; ``reroll_one_damage``: the first roll below the mean of the weapon
  ``reroll_one_weapon`` picks, exact in the chain, ``_reroll_one_damage``).

Not modelled: PRECISION (a tag with no effect against identical models); allocation groups of
mixed units are outside these inputs.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Sequence

import numpy as np

from pipeline import limits
from pipeline.engine import declarations, kill_counts
from pipeline.engine.blas import single_blas_thread
from pipeline.engine.declarations import EditionRules, capped, limit, rules_for
from pipeline.engine.profiles import Anti, Context, Target, Weapon
from pipeline.engine.result import AttackResult, Distribution, Step
from pipeline.errors import InputError
from pipeline.frozen_record import FrozenRecord
from schemas.dice import DiceExpr

#: Largest target chain (models x wounds + 1 states) the engine accepts.
MAX_STATES = limits.MAX_TARGET_WOUNDS + 1

#: The rule keys of the steps the engine reports (``Step.rule_key``): canonical keys of
#: ``pipeline.aliases`` (the slug of the rule's 11th-edition name; 10th-edition names such as
#: "Saving Throw" and "Hazardous test" are aliases of ``save-rolls`` and ``hazard-rolls``).
RULE_KEYS = frozenset({
    "making-attacks", "rapid-fire", "blast", "torrent", "hit-roll", "re-rolls", "heavy", "stealth",
    "benefit-of-cover", "ignores-cover", "psychic", "fire-overwatch", "snap-shooting", "sustained-hits",
    "lethal-hits", "wound-roll", "lance", "twin-linked", "anti", "save-rolls", "normal-damage", "melta",
    "feel-no-pain", "devastating-wounds", "mortal-wounds", "hazardous", "hazard-rolls", "precision",
    "cleave", "indirect-fire", "close-quarters", "damaged",
})

_REROLL_RANK = {None: 0, "ones": 1, "failed": 2, "all": 2, "non-critical": 3}
_REDUCTIONS = (None, "one", "half")
_FAIL, _SUCCESS, _CRITICAL = 0, 1, 2
_ZERO = np.array([1.0])  # the count 0 with certainty
_ONE = np.array([0.0, 1.0])  # the count 1 with certainty
_ZERO.flags.writeable = False
_ONE.flags.writeable = False


class EngineInputError(InputError, ValueError):
    """An engine input that cannot be resolved (``models=0``, a save of ``1+``, edition 9...).

    Both an ``InputError`` (the CLI prints ``Error: ...``) and a ``ValueError``.
    """


# ---------------------------------------------------------------------------------------------
# Public rule helpers


def wound_roll_target(strength: int, toughness: int) -> int:
    """The wound roll needed from the Strength vs Toughness table (10th edition, "Wound Roll").

    The table is declared once (``edition_rules.toml``, ``wound_roll``) for both editions.

    >>> [wound_roll_target(s, 4) for s in (8, 5, 4, 3, 2)]
    [2, 3, 4, 5, 6]
    """
    return declarations.wound_roll_target(strength, toughness)


def save_roll_target(weapon: Weapon, target: Target, context: Context) -> int | None:
    """The unmodified D6 result a saving throw needs (2..6), or None when no save can succeed.

    10th edition "Saving Throw" and "Benefit of Cover": armour save worsened by AP; +1 for cover
    against a ranged attack without IGNORES COVER, except for a save of 3+ or better against AP 0;
    the invulnerable save ignores AP and cover; the better of the two is used (the defender's
    choice, the same for a unit of identical models); an unmodified 1 always fails. 11th edition
    (Save Rolls, 13.08): the better of the armour save after AP and the InSv applies; the benefit
    of cover worsens the attack's BS instead and never changes the save.

    >>> from pipeline.normalise.characteristics import dice
    >>> w = Weapon(name="w", attacks=dice("1"), skill=3, strength=4, armour_penetration=-1, damage=dice("1"))
    >>> save_roll_target(w, Target(toughness=4, save=3, wounds=2), Context(cover=True))
    3
    >>> save_roll_target(w, Target(toughness=4, save=3, wounds=2), Context(cover=True, edition=11))
    4
    >>> save_roll_target(w, Target(toughness=4, save=6, wounds=2), Context())
    """
    best: int | None = None
    if target.save is not None:
        armour = target.save - weapon.armour_penetration
        if _cover_improves_save(weapon, target, context):
            armour -= rules_for(context.edition).cover.amount
        best = armour
    if target.invulnerable_save is not None:
        best = target.invulnerable_save if best is None else min(best, target.invulnerable_save)
    if best is None or best >= 7:
        return None
    return max(2, best)


def damage_per_event(weapon: Weapon, target: Target, context: Context, *, mortal: bool = False) -> np.ndarray:
    """Damage points of one event after damage modifiers and Feel No Pain: pmf indexed by points.

    ``mortal=True`` for the mortal wounds of a Devastating Wounds attack (Feel No Pain is the
    better of ``feel_no_pain`` and ``feel_no_pain_mortal``). Rule order, on the rolled Damage
    (10th edition, ``cases/README.md``): + MELTA X at half range, halve rounding up, -1 and
    ``damage_modifier``, at least 1, then one Feel No Pain roll per point.

    >>> from pipeline.normalise.characteristics import dice
    >>> w = Weapon(name="w", attacks=dice("1"), skill=3, strength=4, armour_penetration=0, damage=dice("D3"))
    >>> damage_per_event(w, Target(toughness=4, save=3, wounds=2), Context(damage_reduction="one")).tolist()
    [0.0, 0.6666666666666666, 0.3333333333333333]
    """
    return _event_damage(weapon, target, context, mortal)[1].copy()


@single_blas_thread
def models_destroyed_by_events(
    target: Target, streams: Sequence[tuple[Sequence[float], Sequence[float]]]
) -> Distribution:
    """Models destroyed when independent streams of damage events are allocated in order.

    Each stream is ``(count_pmf, damage_pmf)``: the distribution of the number of events and of
    each event's damage points (after Feel No Pain; 0 is allowed). Events go one at a time onto
    one model, a wounded model takes the next one, excess damage is lost (10th edition).
    Returns the distribution over 0..``target.models``.

    >>> models_destroyed_by_events(Target(toughness=4, save=3, wounds=2, models=3),
    ...                            [([0, 0, 0, 1], [0, 0, 0, 1])]).pmf.tolist()
    [0.0, 0.0, 0.0, 1.0]
    """
    _validate_target(target)
    x = _initial_state(target)
    for count, dmg in streams:
        count_arr, dmg_arr = _as_pmf(count, "count_pmf"), _as_pmf(dmg, "damage_pmf")
        T = _transition_matrix(dmg_arr.tobytes(), target.models, target.wounds)
        x = _apply_count(x[None, :], T, count_arr)[0]
    return Distribution(_models_pmf(x, target))


# ---------------------------------------------------------------------------------------------
# The engine


@single_blas_thread
def resolve(weapons: Sequence[Weapon], target: Target, context: Context | None = None) -> AttackResult:
    """Resolve every weapon of ``weapons`` (in order) against ``target`` under ``context``.

    Returns an ``AttackResult`` whose stages are exact pmfs (float64 arrays indexed by count:
    attacks, hits, wounds, unsaved, mortal wounds, damage points, models destroyed over
    0..``target.models``), ``target_destroyed`` = P(every model destroyed), the expected mortal
    wounds the attacker suffers from HAZARDOUS, the steps of each rule applied (with their rule
    keys; ``notes`` are their summaries), and the choices taken for the attacker (re-rolls; in
    the 11th edition Lethal Hits and Anti). Rules: see the module docstring (``context.edition``
    10, current wording, or 11).

    Raises ``EngineInputError`` (a ``ValueError`` and an ``InputError``) for an empty weapon
    list, an invalid characteristic (``models < 1``, ``wounds < 1``, a roll target outside
    2..7, positive AP), an edition other than 10 or 11, or a value over a limit of
    ``pipeline.limits`` (models, attacks and Damage of a weapon, dice, the target's wounds, the
    number of weapons, the work of the allocation chain), checked before any work starts.

    Each weapon's plan is kept per (weapon, target, context) and the allocation chain's state
    per combination of plans and target size (``_plan_kept``, ``_chain_kept``): the same attack
    asked again does neither again and gives the same floats.

    Runs with BLAS limited to one thread (``pipeline.engine.blas``; the caller's limit is
    restored on return), so a program importing the engine needs no ``OPENBLAS_NUM_THREADS``.
    """
    context = context or Context()
    _validate(weapons, target, context)
    rules = rules_for(context.edition)
    steps: list[Step] = [
        Step("making-attacks", f"{rules.wording}; target {target.name}: {target.models} x T{target.toughness} W{target.wounds}")
    ]
    choices: dict = {}
    weapons = [_limited(_against(w, target, steps), rules, steps) for w in weapons]
    one_hit = declarations.reroll_one_weapon(weapons, "hit", context) if context.reroll_one_hit else None
    one_wound = declarations.reroll_one_weapon(weapons, "wound", context) if context.reroll_one_wound else None
    one_damage = declarations.reroll_one_weapon(weapons, "damage", context) if context.reroll_one_damage else None
    for flag, roll, index in ((context.reroll_one_hit, "hit", one_hit), (context.reroll_one_wound, "wound", one_wound),
                              (context.reroll_one_damage, "damage", one_damage)):
        if flag and index is None:
            steps.append(Step("re-rolls", f"re-roll one {roll.capitalize()} roll: no weapon of the attack can take it "
                              "(see reroll_one_weapon: a hit roll that can be re-rolled, no Devastating Wounds or "
                              "mortal wounds on a critical)"))
    plans = [_kept_plan(w, target, context, steps, choices, reroll_one=tuple(
        roll for roll, index in (("hit", one_hit), ("wound", one_wound), ("damage", one_damage)) if index == i))
        for i, w in enumerate(weapons)]
    _check_chain_work(plans, target)

    totals = {}
    for stage in ("attacks", "hits", "wounds", "unsaved", "mortal_wounds", "damage"):
        pmf = plans[0].stages[stage]
        if len(plans) == 1:
            pmf = pmf / np.add.reduce(pmf)  # a new array: the plan's is kept
        else:
            for plan in plans[1:]:
                pmf = np.convolve(pmf, plan.stages[stage])
            pmf /= np.add.reduce(pmf)  # the convolution's own array
        totals[stage] = Distribution.normalised(pmf)  # convolutions of pmfs: never negative

    x = _chain(plans, target, context, steps)
    if context.mortal_wounds_after:
        x = _mortal_wounds_after(x, totals, target, context, steps)
    models = _models_pmf(x, target)
    hazardous_mortal_wounds = _hazardous(weapons, context, rules, steps)
    return AttackResult(
        **totals,
        models_destroyed=Distribution.normalised(models),
        target_destroyed=float(models[-1]),
        hazardous_mortal_wounds=hazardous_mortal_wounds,
        hazardous_models_destroyed=0.0,
        notes=tuple(step.summary for step in steps),
        steps=tuple(steps),
        choices=choices,
    )


@dataclass(eq=False)
class _Plan:
    """One weapon's exact per-weapon results and what the allocation chain needs (compared and
    hashed by identity: a kept plan is a key of the kept chain figures)."""

    weapon: Weapon
    stages: dict[str, np.ndarray] = field(default_factory=dict)
    normal_damage: np.ndarray = field(default_factory=lambda: _ZERO)
    mortal_damage: np.ndarray = field(default_factory=lambda: _ZERO)
    #: How the unsaved and devastating events arise (``_DevastatingCounts``), or None when there are
    #: no devastating events.
    joint: "_DevastatingCounts | None" = None
    #: the re-roll of one Damage roll spent on this weapon: (damage pmf of an event whose roll is
    #: kept, a sub-probability; P(a roll to re-roll)); see ``_reroll_one_damage``
    damage_reroll: "tuple[np.ndarray, float] | None" = None


def _kept_plan(weapon: Weapon, target: Target, context: Context, steps: list[Step], choices: dict,
               reroll_one: tuple[str, ...] = ()) -> _Plan:
    """``_plan``, kept per (weapon, target, context, re-rolls of one roll) (``_plan_kept``): the same plan, and the same
    steps and choices added, for the same inputs (read-only arrays; the plan is not changed
    after it is made)."""
    try:
        plan, own_steps, own_choices = _plan_kept(weapon, target, context, reroll_one)
    except TypeError:  # an unhashable input (a list where a tuple is declared): not kept
        return _plan(weapon, target, context, steps, choices, reroll_one=reroll_one)
    steps.extend(own_steps)
    for key, value in own_choices.items():
        if key == "rerolls":
            choices.setdefault("rerolls", []).extend(dict(v) for v in value)
        else:
            choices[key] = value
    return plan


@lru_cache(maxsize=1024)
def _plan_kept(weapon: Weapon, target: Target, context: Context,
               reroll_one: tuple[str, ...]) -> tuple[_Plan, tuple[Step, ...], dict]:
    steps: list[Step] = []
    choices: dict = {}
    plan = _plan(weapon, target, context, steps, choices, reroll_one=reroll_one)
    return plan, tuple(steps), choices


class _Option(FrozenRecord):
    """One way to resolve a weapon's wound step: Lethal Hits auto-wound or not, the Critical
    Wound threshold (and the Anti abilities it comes from), the per-roll wound probabilities and
    the expected damage of the weapon with it."""

    lethal: bool
    critical_on: int
    anti: tuple[Anti, ...]
    q: tuple[float, float, float]
    faces: tuple[int, ...]
    expected_damage: float
    reroll: str | None = None


def _plan(weapon: Weapon, target: Target, context: Context, steps: list[Step], choices: dict,
          reroll_one: tuple[str, ...] = ()) -> _Plan:
    name = weapon.name
    plan = _Plan(weapon)
    rules = rules_for(context.edition)

    def step(rule_key: str, text: str) -> None:
        steps.append(Step(rule_key, f"{name}: {text}"))

    per_model = _attack_dice(weapon, target, context, step)
    p_hit = _hit_roll(weapon, target, context, step, choices)
    sustained = None
    if weapon.sustained_hits is not None:
        sustained = _dice_pmf(weapon.sustained_hits)
        if p_hit[2] > 0:
            step("sustained-hits", f"Sustained Hits {weapon.sustained_hits.text}: extra normal hits per Critical Hit")
        else:
            step("sustained-hits", f"Sustained Hits {weapon.sustained_hits.text}: no effect (no Critical Hits)")

    # Saving throw and damage per event (the same whatever the Lethal Hits / Anti choice).
    save = save_roll_target(weapon, target, context)
    unsaved_p = 1.0 if save is None else (save - 1) / 6
    raw_normal, normal = _event_damage(weapon, target, context, False)
    raw_mortal, mortal = _event_damage(weapon, target, context, True)
    plan.normal_damage, plan.mortal_damage = normal, mortal

    # Wound roll, with the Lethal Hits and Anti options of the edition.
    needed = wound_roll_target(weapon.strength, target.toughness)
    lance = weapon.lance and context.charged
    raw = context.wound_modifier + (1 if lance else 0)
    if context.ignore_wound_modifiers and context.wound_modifier < 0:
        step("wound-roll", f"a rule: ignores the {context.wound_modifier:+d} wound roll modifier")
        raw -= context.wound_modifier
    modifier = capped(raw, rules)
    rerolls = _wound_rerolls(weapon, context, rules)
    candidates = _candidates(weapon, target, context, p_hit)
    mw_hit = None if weapon.mortal_wounds_on_critical_hit is None else _dice_pmf(weapon.mortal_wounds_on_critical_hit)
    mw_wound = (None if weapon.mortal_wounds_on_critical_wound is None
                else _dice_pmf(weapon.mortal_wounds_on_critical_wound))
    mw_point = _mortal_point(weapon, target)
    if len(candidates) * len(rerolls) == 1:  # nothing to choose: no expected damage needed
        means = (0.0, 0.0, 0.0, 0.0)
    else:
        means = (weapon.models * _mean(per_model), _mean(sustained) if sustained is not None else 0.0,
                 _mean(normal), _mean(mortal))
    mw_means = (0.0, 0.0)
    if mw_hit is not None or mw_wound is not None:
        point_mean = _mean(mw_point)
        mw_means = (0.0 if mw_hit is None else _mean(mw_hit) * point_mean,
                    0.0 if mw_wound is None else _mean(mw_wound) * point_mean)
    options = [
        _option(lethal, anti, needed, modifier, reroll, context, p_hit, unsaved_p, weapon.devastating_wounds, *means,
                *mw_means)
        for reroll in rerolls for lethal, anti in candidates
    ]
    chosen = _best(options)
    lethal, q, faces, reroll = chosen.lethal, chosen.q, chosen.faces, chosen.reroll
    if len(rerolls) > 1:
        figures = ", ".join(f"{o.reroll} {o.expected_damage:.4f}" for o in options
                            if o.lethal == chosen.lethal and o.anti == chosen.anti)
        choices[f"Twin-linked: {name}"] = f"re-roll {reroll} wound rolls"
        step("twin-linked", f"Twin-linked (any wound roll can be re-rolled): re-roll {reroll} wound rolls, the higher "
             f"expected damage: {figures}")
    options = [o for o in options if o.reroll == reroll]

    if weapon.lethal_hits:
        _lethal_step(weapon, context, p_hit, options, chosen, step, choices)
    if lance:
        step("lance", "Lance: +1 to the wound roll (charged)")
    step(
        "wound-roll",
        f"S{weapon.strength} vs T{target.toughness}: wound roll {needed}+ with modifier {modifier:+d}"
        f"{f', capped from {raw:+d}' if raw != modifier else ''}{' (Lance +1)' if lance else ''}"
        f"; Critical Wounds on unmodified {chosen.critical_on}+",
    )
    _anti_step(weapon, target, context, options, chosen, step, choices)
    if faces:
        why = reroll
        if weapon.twin_linked and reroll != context.reroll_wounds:
            why = "Twin-linked"
            step("twin-linked", "Twin-linked: failed wound rolls are re-rolled" if reroll == "failed" else
                 "Twin-linked: every wound roll that is not a Critical Wound is re-rolled (fishing for Critical Wounds)")
        step("re-rolls", f"re-roll wounds ({why}): unmodified {_faces(faces)} re-rolled")
        choices.setdefault("rerolls", []).append({"weapon": name, "roll": "wound", "policy": reroll, "faces": list(faces)})
    step("wound-roll", f"P(fail, wound, Critical Wound) per wound roll = {_fmt(q)}")

    _save_steps(weapon, target, context, save, unsaved_p, step)
    _damage_steps(weapon, target, context, normal, step)

    devastating = weapon.devastating_wounds
    p_dev = q[2] if devastating else 0.0
    p_wound = q[1] + (0.0 if devastating else q[2])  # goes to the saving throw
    if devastating:
        step(
            "devastating-wounds",
            f"Devastating Wounds: a Critical Wound (P = {q[2]:.4f} per wound roll) is {_mean(raw_mortal):.4f} "
            "mortal wounds on average, no save, allocated after all other attacks onto one model"
            + (f" ({rules.wording}: the attack sequence ends)" if rules.devastating_wounds.ends_attack_sequence else ""),
        )

    # Per rolled hit and per Lethal Hits automatic wound, each stage's pmf.
    pu = p_wound * unsaved_p
    rolled = {
        "hits": _ONE,
        "wounds": np.array([q[0], 1.0 - q[0]]),
        "unsaved": np.array([1.0 - pu, pu]),
        "mortal_wounds": _mix([(1.0 - p_dev, _ZERO), (p_dev, raw_mortal)]),
        "damage": _mix([(1.0 - pu - p_dev, _ZERO), (pu, normal), (p_dev, mortal)]),
    }
    own = rolled
    if lethal:
        own = {
            "hits": _ONE,
            "wounds": _ONE,
            "unsaved": np.array([1.0 - unsaved_p, unsaved_p]),
            "mortal_wounds": _ZERO,
            "damage": _mix([(1.0 - unsaved_p, _ZERO), (unsaved_p, normal)]),
        }
    if mw_hit is not None or mw_wound is not None:
        rolled, own = _with_critical_mortal_wounds(rolled, own, lethal, q, unsaved_p, normal, mw_hit, mw_wound,
                                                   mw_point, p_hit, step)
    plan.stages.update(_stage_pmfs(per_model, p_hit, rolled, own, sustained, weapon.models))
    if set(reroll_one) - {"damage"}:
        _reroll_one(plan, tuple(r for r in reroll_one if r != "damage"), p_hit, rolled, own, lethal, q[0],
                    sustained, step)
    if "damage" in reroll_one:
        _reroll_one_damage(plan, weapon, target, context, step)

    # Joint distribution of unsaved and mortal wound events (a rule's, per Critical), for the chain.
    if mw_hit is not None or mw_wound is not None:
        plan.mortal_damage = mw_point
        plan.joint = _joint_mortal_wounds(plan.stages["attacks"], p_hit, sustained, lethal, q, unsaved_p,
                                          mw_hit, mw_wound)
    # Joint distribution of unsaved and devastating events, for the allocation chain.
    elif p_dev > 0:
        if not lethal:
            plan.joint = _split_counts(plan.stages["hits"], pu, p_dev)
        else:
            plan.joint = _joint_with_lethal(plan.stages["attacks"], p_hit, sustained, pu, p_dev, unsaved_p)
    if weapon.precision:
        step("precision", "Precision: no effect against the target's identical models (it chooses a CHARACTER "
             "allocation group of an Attached unit, which these inputs do not have)")
    if weapon.psychic and not rules.psychic.ignores_harmful_modifiers:
        step("psychic", f"Psychic: a tag in the {rules.ordinal} edition (no effect on the attack itself)")
    return plan


def _heavy_why(context: Context, rules: EditionRules, applies: bool = True) -> str:
    """Why [HEAVY] applies (or not), in the edition's terms (``declarations.heavy_applies``)."""
    rule = rules.heavy
    if rule.moved_at_most_inches is None:
        return "Remained Stationary" if applies else f"the unit did not Remain Stationary ({rules.wording})"
    if applies:
        moved = "remained stationary" if context.stationary else f"moved {context.moved_inches:g}\""
        return (f"unengaged, not set up this turn, {moved} (at most {rule.moved_at_most_inches:g}\"), "
                f"{rules.wording}, 24.16")
    why = [w for w, holds in (("snap shooting is not your Shooting phase", rule.own_shooting_phase_only
                               and context.overwatch),
                              ("the unit is engaged (close-quarters shooting)", context.close_quarters),
                              ("the unit was set up this turn", context.set_up_this_turn),
                              (f"a model moved more than {rule.moved_at_most_inches:g}\"", not context.stationary
                               and (context.moved_inches or 0) > rule.moved_at_most_inches)) if holds]
    return f"{'; '.join(why) or 'its conditions do not hold'} ({rules.wording}, 24.16)"


def _wound_rerolls(weapon: Weapon, context: Context, rules: EditionRules) -> list[str | None]:
    """The wound re-roll policies to compare for a weapon: the context's re-roll, or Twin-linked's
    (the more generous), and with ``context.twin_linked_reroll`` ``non-critical`` or ``best`` the
    declared fishing policy (``twin_linked.fishing``: re-roll every roll that is not a Critical
    Wound), alone or beside the other (the engine then takes the higher expected damage)."""
    base = context.reroll_wounds
    if weapon.twin_linked and _REROLL_RANK[base] < _REROLL_RANK[rules.twin_linked.reroll]:
        base = rules.twin_linked.reroll
    if not weapon.twin_linked or context.twin_linked_reroll == "failed":
        return [base]
    if context.twin_linked_reroll == "non-critical":
        return [rules.twin_linked.fishing]
    return [base, rules.twin_linked.fishing]


def _mortal_point(weapon: Weapon, target: Target) -> np.ndarray:
    """Damage of one mortal wound after Feel No Pain (the better of ``feel_no_pain``,
    ``feel_no_pain_mortal`` and, for a [PSYCHIC] weapon, ``feel_no_pain_psychic``): [P(0), P(1)]."""
    return _mortal_point_kept(target.feel_no_pain, target.feel_no_pain_mortal,
                              target.feel_no_pain_psychic if weapon is not None and weapon.psychic else None)


@lru_cache(maxsize=64)
def _mortal_point_kept(*feel_no_pains: int | None) -> np.ndarray:
    fnps = [f for f in feel_no_pains if f is not None]
    if not fnps or min(fnps) > 6:
        return _ONE
    ignored = (7 - max(2, min(fnps))) / 6
    point = np.array([ignored, 1.0 - ignored])
    point.flags.writeable = False
    return point


def _with_critical_mortal_wounds(rolled: dict, own: dict, lethal: bool, q, unsaved_p: float, normal: np.ndarray,
                                 mw_hit, mw_wound, mw_point: np.ndarray, p_hit, step) -> tuple[dict, dict]:
    """The per-hit (``rolled``) and per-Critical Hit (``own``) pmfs of each stage with a rule's
    mortal wounds on a Critical Wound (``mw_wound``, dice pmf) and on a Critical Hit (``mw_hit``):
    the mortal wounds are in addition to the attack (its wound roll, save and damage go on), each
    one point of damage after Feel No Pain (``mw_point``). A Lethal Hits automatic wound is not a
    Critical Wound (24.23), so it makes no ``mw_wound``."""
    rolled, own = dict(rolled), dict(own)
    q0, q1, q2 = q
    after_save = _mix([(1.0 - unsaved_p, _ZERO), (unsaved_p, normal)])
    if mw_wound is not None:
        rolled["mortal_wounds"] = _mix([(1.0 - q2, _ZERO), (q2, mw_wound)])
        rolled["damage"] = _mix([(q0 + q1 * (1.0 - unsaved_p), _ZERO), (q1 * unsaved_p, normal),
                                 (q2, np.convolve(after_save, _compound(mw_wound, mw_point)))])
    if lethal:
        own = dict(own)
    else:
        own = dict(rolled)
    if mw_hit is not None:
        own["mortal_wounds"] = np.convolve(own["mortal_wounds"], mw_hit)
        own["damage"] = np.convolve(own["damage"], _compound(mw_hit, mw_point))
    for what, pmf, p in (("Critical Hit", mw_hit, p_hit[2]), ("Critical Wound", mw_wound, q2)):
        if pmf is not None:
            step("mortal-wounds", f"mortal wounds on a {what} (P = {p:.4f} per {'attack' if what == 'Critical Hit' else 'wound roll'}): "
                 f"{_mean(pmf):.4f} on average, in addition to the attack, one wound each (they spill over), "
                 "inflicted after the unit's normal damage (06.02)")
    return rolled, own


def _joint_mortal_wounds(attacks: np.ndarray, p_hit, sustained, lethal: bool, q, unsaved_p: float,
                         mw_hit, mw_wound) -> "_DevastatingCounts":
    """Per attack, the joint pmf ``[a, b]`` of its unsaved events ``a`` and of the mortal wounds
    ``b`` a rule inflicts on its Critical Hit / Critical Wound (``_with_critical_mortal_wounds``),
    for the allocation chain (which allocates the b mortal wounds after every weapon's normal
    damage, as it does devastating events)."""
    q0, q1, q2 = q
    saved = np.array([[1.0 - unsaved_p], [unsaved_p]])
    per_wound = np.array([[q0 + q1 * (1.0 - unsaved_p)], [q1 * unsaved_p]])
    critical_wound = saved * q2 if mw_wound is None else q2 * _convolve2d(saved, mw_wound[None, :])
    rolled = _add2d(per_wound, critical_wound)
    crit = saved if lethal else rolled
    if mw_hit is not None:
        crit = _convolve2d(crit, mw_hit[None, :])
    if sustained is not None:
        crit = _convolve2d(crit, _sustained_extra(sustained, rolled))
    per_attack = _add2d(_add2d(np.array([[p_hit[0]]]), p_hit[1] * rolled), p_hit[2] * crit)
    return _DevastatingCounts(attacks, per_attack, split=False)


def _sustained_extra(sustained: np.ndarray, rolled: np.ndarray) -> np.ndarray:
    """The joint counts of the extra hits of [SUSTAINED HITS] (``sustained``: the pmf of their
    number), each rolled as ``rolled`` (a 2-D pmf of one hit's counts): ``sum_x P(x) rolled^{*x}``.

    >>> _sustained_extra(np.array([0.0, 1.0]), np.array([[0.5, 0.5]])).tolist()
    [[0.5, 0.5]]
    """
    extra = np.zeros((1, 1))
    power = np.ones((1, 1))
    for x, p in enumerate(sustained):
        if x:
            power = _convolve2d(power, rolled)
        extra = _add2d(extra, p * power)
    return extra


def _compound_sub(count: np.ndarray, item: np.ndarray) -> np.ndarray:
    """``sum_n count[n] item^{*n}`` for an ``item`` that may be a sub-probability (Horner's scheme).

    >>> _compound_sub(np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.5])).tolist()
    [0.0, 0.0, 0.25]
    """
    nonzero = count.nonzero()[0]
    if nonzero.size == 0:
        return np.array([0.0])
    high = int(nonzero[-1])
    acc = np.array([count[high]])
    for n in range(high - 1, -1, -1):
        acc = np.convolve(acc, item)
        acc[0] += count[n]
    return acc


def _per_attack_sub(p_hit, rolled: np.ndarray, own: np.ndarray, sustained: np.ndarray | None) -> np.ndarray:
    """``_per_attack`` for per-hit pmfs that may be sub-probabilities (a branch left out)."""
    crit = own
    if sustained is not None and p_hit[2] > 0:
        crit = np.convolve(own, _compound_sub(sustained, rolled))
    return _mix([(p_hit[0], _ZERO), (p_hit[1], rolled), (p_hit[2], crit)])


def _reroll_one(plan: "_Plan", rolls: tuple[str, ...], p_hit, rolled: dict, own: dict, lethal: bool, q_fail: float,
                sustained, step) -> None:
    """The weapon's stage pmfs when the unit re-rolls one failed Hit roll and/or one failed Wound
    roll (``rolls``) of this weapon, exactly. With C(a) the compound of the N attacks with each
    attack's pmf ``a`` (a sub-probability when a branch is left out): A an attack's pmf, A_m
    without its miss, A_f without its failed wound rolls, A_mf without both; Y a fresh attack (the
    re-rolled hit die; Y_f without its failed wound rolls) and W a fresh wound roll of a rolled hit:

    - one Hit roll: ``C(A_m) + (C(A) - C(A_m)) * Y`` (no miss: nothing changes; else a miss is
      replaced by a fresh attack, independent of the rest: the successes S of N dice become
      S + Bernoulli(p) when S < N, the re-rolled die a Critical Hit with its own probability);
    - one Wound roll: ``C(A_f) + (C(A) - C(A_f)) * W``;
    - both: ``C(A_mf) + (C(A_m) - C(A_mf)) * W + (C(A_f) - C(A_mf)) * Y_f
      + ((C(A) - C(A_m)) * Y - (C(A_f) - C(A_mf)) * Y_f) * W`` (the wound re-roll may fall on the
      re-rolled attack's wound roll).

    ``*`` is convolution (01.05: a die is re-rolled once, before modifiers)."""
    attacks = plan.stages["attacks"]
    C = lambda a: _compound_sub(attacks, a)  # noqa: E731

    def conv(x, y):
        return np.convolve(x, y)

    def plus(*parts):
        out = np.zeros(max(p.size for _, p in parts))
        for sign, p in parts:
            out[: p.size] += sign * p
        return out

    p_miss = None
    p_fail = None
    for stage in ("hits", "wounds", "unsaved", "mortal_wounds", "damage"):
        hit = "hit" in rolls
        wound = "wound" in rolls and stage != "hits"  # a wound re-roll changes no hit count
        if not hit and not wound:
            continue
        A = _per_attack(p_hit, rolled[stage], own[stage], sustained)
        A_m = A.copy()
        A_m[0] -= p_hit[0]
        r_f = rolled[stage].copy()
        r_f[0] -= q_fail
        A_f = _per_attack_sub(p_hit, r_f, own[stage] if lethal else r_f, sustained)
        A_mf = A_f.copy()
        A_mf[0] -= p_hit[0]
        W = rolled[stage]
        cA, cm, cf, cmf = C(A), C(A_m), C(A_f), C(A_mf)
        if hit and not wound:
            out = plus((1, cm), (1, conv(plus((1, cA), (-1, cm)), A)))
        elif wound and not hit:
            out = plus((1, cf), (1, conv(plus((1, cA), (-1, cf)), W)))
        else:
            some_miss = plus((1, conv(plus((1, cA), (-1, cm)), A)), (-1, conv(plus((1, cf), (-1, cmf)), A_f)))
            out = plus((1, cmf), (1, conv(plus((1, cm), (-1, cmf)), W)), (1, conv(plus((1, cf), (-1, cmf)), A_f)),
                       (1, conv(some_miss, W)))
        out = _normalised(_trim(np.clip(out, 0.0, None)))
        out.flags.writeable = False
        plan.stages[stage] = out
        if p_miss is None and hit:
            p_miss = 1.0 - float(cm.sum())
        if p_fail is None and wound:
            p_fail = 1.0 - float(cf.sum())
    for roll, p in (("hit", p_miss), ("wound", p_fail)):
        if p is not None:
            step("re-rolls", f"re-roll one {roll.capitalize()} roll (the unit's, spent on this weapon): P(a failed "
                 f"{roll} roll to re-roll) = {p:.4f}; the successes S of the N rolls become S + Bernoulli(p) when S < N")


def _reroll_one_damage(plan: "_Plan", weapon: Weapon, target: Target, context: Context, step) -> None:
    """The weapon's damage when the unit re-rolls one Damage roll: the first of its events (in
    allocation order) whose roll is below the mean of the Damage dice (``declarations.
    damage_reroll_below``) is re-rolled, before modifiers (01.05). With h the damage of an event
    whose roll is kept (a sub-probability), l = P(a roll to re-roll) and d the damage of a fresh
    event, K events do ``h^K + l d * sum_{j=1..K} h^(j-1) d^(K-j)``, compounded over the unsaved
    count; the chain carries whether the re-roll is spent (``_chain``)."""
    melta = weapon.melta if context.half_range else None
    fnp = _event_fnp(weapon, target)
    below = declarations.damage_reroll_below(weapon.damage)
    kept = np.zeros(1)
    low = 0.0
    for value, p in enumerate(_dice_pmf(weapon.damage)):
        if p <= 0:
            continue
        if value < below:
            low += p
            continue
        fixed = DiceExpr(text=str(value), dice_count=0, dice_sides=0, modifier=value)
        after = _damage_pmfs(fixed, melta, context.damage_reduction, context.damage_modifier, fnp)[1]
        kept = _mix([(1.0, kept), (p, after)])
    fresh = plan.normal_damage
    unsaved = plan.stages["unsaved"]
    total = unsaved[0] * _ZERO
    h_power, spread = _ZERO, np.zeros(1)  # h^(K-1); sum_{j<=K} h^(j-1) d^(K-j)
    for k in range(1, unsaved.size):
        spread = _mix([(1.0, h_power), (1.0, np.convolve(spread, fresh))])
        h_power = np.convolve(h_power, kept)
        total = _mix([(1.0, total), (unsaved[k], h_power), (unsaved[k] * low, np.convolve(fresh, spread))])
    damage = _normalised(_trim(total))
    damage.flags.writeable = False
    plan.stages["damage"] = damage
    plan.damage_reroll = (kept, low)
    step("re-rolls", f"re-roll one Damage roll (the unit's, spent on this weapon): the first roll below {below:g} "
         f"(the mean of {weapon.damage.text}; P = {low:.4f} per roll) is re-rolled; mean damage {_mean(damage):.4f}")


def _event_fnp(weapon: Weapon, target: Target) -> int | None:
    """The Feel No Pain against a normal damage point of ``weapon`` (as ``_event_damage``)."""
    fnp = target.feel_no_pain
    if weapon.psychic and target.feel_no_pain_psychic is not None:
        fnp = target.feel_no_pain_psychic if fnp is None else min(fnp, target.feel_no_pain_psychic)
    return fnp


def _with_damage_reroll(X: np.ndarray, plan: "_Plan", target: Target) -> np.ndarray:
    """The chain state after a weapon's unsaved events when one of its Damage rolls can be
    re-rolled (``_reroll_one_damage``): the state is doubled (re-roll still there, spent); an event
    whose roll is kept stays (transition of ``kept``), one to re-roll moves to spent with a fresh
    event's damage."""
    kept, low = plan.damage_reroll
    models, wounds = target.models, target.wounds
    S = X.shape[1]
    keep = np.array(_transition_matrix(_trim(kept).tobytes(), models, wounds))
    keep[S - 1, S - 1] = 1.0 - low  # the absorbing state: all destroyed either way
    fresh = _transition_matrix(plan.normal_damage.tobytes(), models, wounds)
    big = np.zeros((2 * S, 2 * S))
    big[:S, :S] = keep
    big[:S, S:] = low * fresh
    big[S:, S:] = fresh
    start = np.zeros((X.shape[0], 2 * S))
    start[:, :S] = X
    Y = _apply_count(start, big, plan.stages["unsaved"])
    return Y[:, :S] + Y[:, S:]


def _mortal_wounds_after(x: np.ndarray, totals: dict, target: Target, context: Context, steps: list[Step]) -> np.ndarray:
    """The chain state after the mortal wounds a rule inflicts once, after the attack
    (``context.mortal_wounds_after``: on a D6 roll of N+, or always, X mortal wounds): each is one
    wound lost, one at a time, the excess spilling over (06.02), after Feel No Pain. Updates the
    ``mortal_wounds`` and ``damage`` totals."""
    point = _mortal_point(None, target)
    T = _transition_matrix(point.tobytes(), target.models, target.wounds)
    for needed, expr in context.mortal_wounds_after:
        p = 1.0 if needed is None else (7 - max(2, min(7, needed))) / 6
        count = _mix([(1.0 - p, _ZERO), (p, _dice_pmf(expr))])
        x = _apply_count(x[None, :], T, count)[0]
        totals["mortal_wounds"] = Distribution(_normalised(np.convolve(totals["mortal_wounds"].pmf, count)))
        totals["damage"] = Distribution(_normalised(np.convolve(totals["damage"].pmf, _compound(count, point))))
        steps.append(Step("mortal-wounds", f"a rule: {'' if needed is None else f'on a {needed}+ (P = {p:.4f}), '}"
                          f"{expr.text} mortal wounds after the attack (mean {_mean(count):.4f}), one wound each, "
                          "after the unit's normal damage (06.02)"))
    return x


def _attack_dice(weapon: Weapon, target: Target, context: Context, step) -> np.ndarray:
    """Pmf of one model's attacks: Attacks, + RAPID FIRE X at half range, + BLAST, + CLEAVE
    (11th edition, with the weapon's one target), then the edition's limit on A (11th: at least 1)."""
    rules = rules_for(context.edition)
    per_model = _dice_pmf(weapon.attacks)
    step("making-attacks", f"{weapon.models} model(s) x Attacks {weapon.attacks.text} per model")
    if weapon.rapid_fire is not None and context.half_range:
        per_model = np.convolve(per_model, _dice_pmf(weapon.rapid_fire))
        step("rapid-fire", f"Rapid Fire {weapon.rapid_fire.text}: +{weapon.rapid_fire.text} attacks per model at half range")
    fives = target.models // 5
    if weapon.blast:
        bonus = blast_attacks(weapon, target, rules)
        if bonus:
            per_model = np.concatenate([np.zeros(bonus), per_model])
            if rules.blast.per_five == "x":
                why = f"[BLAST {weapon.blast}]: +{weapon.blast} per five of the {target.models} target models, {rules.wording}"
            else:
                why = f"Blast: +1 per five of the {target.models} target models, {rules.wording}" + (
                    f"; the X of [BLAST {weapon.blast}] is an 11th-edition rule" if weapon.blast > 1 else ""
                )
            step("blast", f"Blast +{bonus} attacks per model ({why})")
    if weapon.cleave:
        if not rules.cleave.supported:
            step("cleave", f"[CLEAVE {weapon.cleave}]: not a rule of the {rules.ordinal} edition (no effect)")
        elif fives:
            per_model = np.concatenate([np.zeros(weapon.cleave * fives), per_model])
            step("cleave", f"[CLEAVE {weapon.cleave}]: +{weapon.cleave * fives} attack dice per model "
                 f"(+{weapon.cleave} per five of the {target.models} target models; the weapon's one target)")
    low = rules.limits.bounds.get("A", (None, None))[0]
    if low is not None and per_model[:low].sum() > 0:
        lifted = np.concatenate([[0.0] * low, per_model[low:]])
        lifted[low] += per_model[:low].sum()
        step("making-attacks", f"Attacks {weapon.attacks.text}: a result below {low} is {low} "
             f"(A cannot be less than {low} after all modifiers, {rules.wording})")
        per_model = lifted
    return per_model


def blast_attacks(weapon: Weapon, target: Target, rules: EditionRules) -> int:
    """The attack dice BLAST adds per model: 1 (10th edition) or X (11th, [BLAST X], 24.05) for
    every five models in the target unit, rounding down (declared: ``blast.per_five``).

    >>> from pipeline.normalise.characteristics import dice
    >>> w = Weapon(name="w", attacks=dice("3"), skill=3, strength=4, armour_penetration=0, damage=dice("1"), blast=2)
    >>> t = Target(toughness=3, save=5, wounds=1, models=12)
    >>> blast_attacks(w, t, rules_for(10)), blast_attacks(w, t, rules_for(11))
    (2, 4)
    """
    if not weapon.blast:
        return 0
    return (weapon.blast if rules.blast.per_five == "x" else 1) * (target.models // 5)


def _limited(weapon: Weapon, rules: EditionRules, steps: list[Step]) -> Weapon:
    """The weapon with its characteristics held within the edition's limits after all modifiers
    (11th edition, 02.02.01: "AP cannot be worse than 0", "BS/WS cannot be 1+ (or better) or 7+
    (or worse)", "S cannot be less than 1"); a note for each change."""
    changes: dict = {}
    skill_name = "WS" if weapon.is_melee else "BS"
    if weapon.skill is not None and limit(skill_name, weapon.skill, rules) != weapon.skill:
        changes["skill"] = limit(skill_name, weapon.skill, rules)
    if limit("AP", weapon.armour_penetration, rules) != weapon.armour_penetration:
        changes["armour_penetration"] = limit("AP", weapon.armour_penetration, rules)
    if limit("S", weapon.strength, rules) != weapon.strength:
        changes["strength"] = limit("S", weapon.strength, rules)
    if not changes:
        return weapon
    labels = {"skill": skill_name, "armour_penetration": "AP", "strength": "S"}
    said = ", ".join(f"{labels[k]} {getattr(weapon, k)} -> {v}" for k, v in changes.items())
    steps.append(Step("making-attacks", f"{weapon.name}: {said} (the limits after all modifiers, {rules.wording}, "
                      "When modifying characteristics)"))
    return dataclasses.replace(weapon, **changes)


def _against(weapon: Weapon, target: Target, steps: list[Step]) -> Weapon:
    """The weapon with its keyword-restricted abilities kept or taken off for this target."""
    weapon, notes = weapon.against(target.keywords)
    steps.extend(Step(name.replace("_", "-"), note) for name, note in notes)
    return weapon


def _hit_roll(weapon: Weapon, target: Target, context: Context, step, choices: dict) -> tuple[float, float, float]:
    """(P(miss), P(hit, not critical), P(Critical Hit)) of one attack, with its steps; every rule
    as declared for ``context.edition`` (``edition_rules.toml``)."""
    name = weapon.name
    rules = rules_for(context.edition)
    if weapon.torrent or weapon.skill is None:
        if weapon.torrent:
            step("torrent", "Torrent: no hit roll, every attack hits, no Critical Hits")
        else:
            step("hit-roll", "no skill: no hit roll, every attack hits, no Critical Hits")
        return (0.0, 1.0, 0.0)
    reroll = context.reroll_hits
    indirect = _indirect(weapon, context)
    if context.overwatch:
        key = rules.overwatch.key
        label = "snap shooting (Fire Overwatch, 11th edition)" if key == "snap-shooting" else "Fire Overwatch"
        no_reroll = rules.overwatch.no_hit_rerolls and reroll
        step(key, f"{label}: hits only on an unmodified 6 whatever the BS and modifiers (each a Critical Hit)"
             + (f"; hit rolls cannot be re-rolled (re-roll hits {reroll} not applied)" if no_reroll else ""))
        if rules.overwatch.no_hit_rerolls:
            reroll = None
        p_hit, faces = _roll_probabilities(weapon.skill, 0, context.critical_hit_on, 5, reroll)
    else:
        needed = weapon.skill
        raw = context.hit_modifier
        parts = []
        harmful: list[tuple[str, int]] = []  # (what, amount) of each negative modifier, for Psychic

        def modify(rule_key: str, label: str, amount: int, why: str) -> None:
            nonlocal raw
            if not amount:
                return
            raw += amount
            parts.append(f"{label} {amount:+d}")
            if amount < 0:
                harmful.append((label, amount))
            step(rule_key, f"{label}: {amount:+d} to the hit roll ({why})")

        if declarations.heavy_applies(weapon, context, rules):
            modify("heavy", "Heavy", rules.heavy.hit_modifier, _heavy_why(context, rules))
        elif weapon.heavy and not weapon.is_melee and (context.stationary or context.moved_inches is not None):
            step("heavy", f"Heavy: no +1 to the hit roll ({_heavy_why(context, rules, applies=False)})")
        if context.damaged:
            modify(rules.damaged.key, "Damaged", rules.damaged.hit_modifier,
                   "the attacking models are damaged: Damaged X / the datasheet's Damaged profile")
        if (context.close_quarters and not weapon.is_melee and not weapon.close_quarters
                and {"MONSTER", "VEHICLE"} & {k.upper() for k in context.attacker_keywords}):
            modify(rules.close_quarters.key, "Close-quarters shooting", rules.close_quarters.monster_vehicle_hit_modifier,
                   "a MONSTER/VEHICLE shooting while engaged, not with a [CLOSE-QUARTERS] weapon")
        fails_at_most = 1
        if indirect:
            spotted = context.stationary and context.target_visible_to_friendly_unit
            fails_at_most = (rules.indirect_fire.fails_on_at_most_spotted if spotted
                             else rules.indirect_fire.fails_on_at_most)
            if rules.indirect_fire.no_hit_rerolls:
                reroll = None
            modify(rules.indirect_fire.key, "Indirect fire", rules.indirect_fire.hit_modifier, "fired indirectly")
            step(rules.indirect_fire.key, f"Indirect fire: an unmodified hit roll of 1-{fails_at_most} fails"
                 + (" (Remained Stationary, the target visible to a friendly unit)" if spotted and rules.indirect_fire.no_hit_rerolls else "")
                 + ("; hit rolls cannot be re-rolled" if rules.indirect_fire.no_hit_rerolls and context.reroll_hits else "")
                 + ("; the target has the benefit of cover" if rules.indirect_fire.cover else ""))
        cover = _cover(weapon, target, context)
        if rules.stealth.effect == "hit-roll-modifier" and target.stealth and not weapon.is_melee:
            modify("stealth", "Stealth", rules.stealth.amount, f"ranged attack, {rules.ordinal} edition")
        bs_text = ""
        if rules.cover.effect == "worsen-bs":
            if cover is None and not weapon.is_melee and weapon.ignores_cover and (context.cover or target.stealth or indirect):
                step("ignores-cover", "Ignores Cover: the target cannot have the benefit of cover"
                     + (" (including from Stealth)" if target.stealth else ""))
            if target.stealth and cover is not None and rules.stealth.effect == "benefit-of-cover":
                step("stealth", "Stealth: every target model has Stealth, so the target has the benefit of cover "
                     f"against this ranged attack ({rules.wording})"
                     + ("; not cumulative with the cover it already has" if context.cover or indirect else ""))
        ignored = []
        if weapon.psychic and rules.psychic.ignores_harmful_modifiers or context.ignore_hit_modifiers:
            if cover is not None and rules.cover.effect == "worsen-bs":
                ignored.append(f"the benefit of cover's BS worsening (BS stays {weapon.skill}+)")
                cover = None
            if context.hit_modifier < 0:
                ignored.append(f"the {context.hit_modifier:+d} hit roll modifier")
                raw -= context.hit_modifier
            for label, amount in harmful:
                ignored.append(f"the {label} {amount:+d}")
                raw -= amount
        elif context.ignore_skill_modifiers and cover is not None and rules.cover.effect == "worsen-bs":
            ignored.append(f"the benefit of cover's BS worsening (BS stays {weapon.skill}+)")
            cover = None
        if ignored:
            who = "Psychic" if weapon.psychic and rules.psychic.ignores_harmful_modifiers else "A rule"
            step("psychic", f"{who}: ignores {' and '.join(ignored)} ({rules.wording})")
        if cover is not None and rules.cover.effect == "worsen-bs":
            skill_name = "WS" if weapon.is_melee else "BS"
            worsened = weapon.skill + rules.cover.amount
            needed = limit(skill_name, worsened, rules)
            bs_text = (f" (BS{weapon.skill}+ worsened by the benefit of cover)" if needed > weapon.skill
                       else " (BS6+ held at 6+ in cover)")
            change = (f"worsened to {needed}+" if needed == worsened else
                      f"would be {worsened}+; BS cannot be 7+ (or worse) after all modifiers (When modifying "
                      f"characteristics), so it stays {needed}+")
            step("benefit-of-cover", f"BS{weapon.skill}+ {change} ({cover}, {rules.wording}; "
                 "a characteristic change, outside the +/-1 modifier cap)")
        modifier = capped(raw, rules)
        p_hit, faces = _roll_probabilities(needed, modifier, context.critical_hit_on, fails_at_most, reroll)
        extra = f" ({', '.join(parts)})" if parts else ""
        capped_text = f", capped from {raw:+d}" if raw != modifier else ""
        step("hit-roll", f"hit roll {needed}+{bs_text} with modifier {modifier:+d}{capped_text}{extra}; "
             f"Critical Hits on unmodified {context.critical_hit_on}+")
    if faces:
        step("re-rolls", f"re-roll hits ({reroll}): unmodified {_faces(faces)} re-rolled")
        choices.setdefault("rerolls", []).append({"weapon": name, "roll": "hit", "policy": reroll, "faces": list(faces)})
    step("hit-roll", f"P(miss, hit, Critical Hit) = {_fmt(p_hit)}")
    return p_hit


def _indirect(weapon: Weapon, context: Context) -> bool:
    """Whether the attack fires indirectly: an [INDIRECT FIRE] ranged weapon with ``context.indirect``."""
    return context.indirect and weapon.indirect_fire and not weapon.is_melee


def _candidates(weapon: Weapon, target: Target, context: Context, p_hit) -> list[tuple[bool, tuple[Anti, ...]]]:
    """The (Lethal Hits auto-wound?, Anti abilities that apply) options of a weapon's wound step.

    10th edition: one option (Lethal Hits automatic, every applicable Anti applies). 11th: the
    forced or both Lethal Hits choices, times one applicable Anti threshold at a time (Anti
    abilities with the same threshold are one option)."""
    applicable = tuple(a for a in weapon.anti if a.keyword.upper() in target.keywords)
    crits = weapon.lethal_hits and p_hit[2] > 0
    rules = rules_for(context.edition)
    if not rules.lethal_hits.optional and not rules.anti.duplicates:
        return [(crits, applicable)]
    if not crits or not rules.lethal_hits.optional:
        lethal_options = [False]
    elif context.lethal_hits_choice is None:
        lethal_options = [True, False]
    else:
        lethal_options = [bool(context.lethal_hits_choice)]
    thresholds = sorted({a.threshold for a in applicable})
    anti_options = [tuple(a for a in applicable if a.threshold == t) for t in thresholds] or [()]
    if not rules.anti.duplicates:
        anti_options = [applicable]
    return [(lethal, anti) for lethal in lethal_options for anti in anti_options]


def _option(lethal, anti, needed, modifier, reroll, context, p_hit, unsaved_p, devastating,
            attacks_mean, es, normal_mean, mortal_mean, mw_hit_mean=0.0, mw_wound_mean=0.0) -> _Option:
    """An option with its wound-roll probabilities and the weapon's expected damage (closed form:
    E[attacks] x (P(hit) x E[rolled hit] + P(Critical Hit) x (E[own] + E[Sustained] x E[rolled hit]));
    a rule's mortal wounds on a Critical Wound / Hit add their expected damage to a rolled hit's /
    a Critical Hit's)."""
    critical_on = min([context.critical_wound_on] + [a.threshold for a in anti])
    q, faces = _roll_probabilities(needed, modifier, critical_on, 1, reroll)
    p_dev = q[2] if devastating else 0.0
    p_wound = q[1] + (0.0 if devastating else q[2])
    rolled = p_wound * unsaved_p * normal_mean + p_dev * mortal_mean + q[2] * mw_wound_mean
    own = (unsaved_p * normal_mean if lethal else rolled) + mw_hit_mean
    expected = attacks_mean * (p_hit[1] * rolled + p_hit[2] * (own + es * rolled))
    return _Option(lethal, critical_on, anti, q, faces, expected, reroll)


def _best(options: list[_Option]) -> _Option:
    """The option with the highest expected damage; among equal ones (relative 1e-12), the
    first (candidates list auto-wound first, then the lowest Anti threshold)."""
    if len(options) == 1:
        return options[0]
    top = max(o.expected_damage for o in options)
    tolerance = 1e-12 * max(1.0, abs(top))
    return next(o for o in options if o.expected_damage >= top - tolerance)


_LETHAL_CHOICE = {
    True: "auto-wound on critical hits",
    False: "roll to wound (keeps Critical Wounds for DEVASTATING WOUNDS / ANTI)",
}


def _lethal_step(weapon: Weapon, context: Context, p_hit, options: list[_Option], chosen: _Option, step, choices) -> None:
    if p_hit[2] == 0:
        step("lethal-hits", "Lethal Hits: no effect (no Critical Hits)")
        return
    if not rules_for(context.edition).lethal_hits.optional:
        step("lethal-hits", "Lethal Hits: a Critical Hit wounds automatically (not a Critical Wound)")
        return
    choices[f"Lethal Hits: {weapon.name}"] = _LETHAL_CHOICE[chosen.lethal]
    if context.lethal_hits_choice is not None:
        why = f"forced by lethal_hits_choice={context.lethal_hits_choice}"
    else:
        same_anti = [o for o in options if o.anti == chosen.anti]
        figures = ", ".join(f"{'auto-wound' if o.lethal else 'roll to wound'} {o.expected_damage:.4f}" for o in same_anti)
        why = f"the higher expected damage: {figures}"
    action = ("a Critical Hit wounds automatically (not a Critical Wound)" if chosen.lethal
              else "Critical Hits roll to wound (a Critical Wound stays possible)")
    step("lethal-hits", f"Lethal Hits (11th edition, the attacker's choice): {action}; {why}")


def _anti_step(weapon: Weapon, target: Target, context: Context, options, chosen: _Option, step, choices) -> None:
    applicable = [a for a in weapon.anti if a.keyword.upper() in target.keywords]
    if not applicable:
        return
    label = lambda group: " / ".join(f"Anti-{a.keyword.upper()} {a.threshold}+" for a in group)  # noqa: E731
    if not rules_for(context.edition).anti.duplicates:
        best = min(a.threshold for a in applicable)
        step("anti", f"{label(applicable)}: Critical Wounds on {best}+"
             + (" (all apply: the lowest threshold)" if len(applicable) > 1 else ""))
        return
    if len({a.threshold for a in applicable}) == 1:
        step("anti", f"{label(applicable)}: Critical Wounds on {applicable[0].threshold}+"
             + (" (duplicates in the 11th edition: one applies)" if len(applicable) > 1 else ""))
        return
    choices[f"Anti: {weapon.name}"] = label(chosen.anti)
    same_lethal = [o for o in options if o.lethal == chosen.lethal]
    figures = ", ".join(f"{label(o.anti)} {o.expected_damage:.4f}" for o in same_lethal)
    step("anti", f"{label(chosen.anti)} applies: Critical Wounds on {chosen.anti[0].threshold}+ (11th edition: Anti "
         f"abilities are duplicates, the attacker picks one; expected damage {figures})")


def _save_steps(weapon: Weapon, target: Target, context: Context, save: int | None, unsaved_p: float, step) -> None:
    armour = None if target.save is None else target.save - weapon.armour_penetration
    rules = rules_for(context.edition)
    improves_save = rules.cover.effect == "improve-save"
    covered = context.cover or (_indirect(weapon, context) and rules.indirect_fire.cover)
    if improves_save and covered and not weapon.is_melee and target.save is not None:
        if weapon.ignores_cover:
            step("ignores-cover", "Ignores Cover: no benefit of cover to the save")
        elif _cover_improves_save(weapon, target, context):
            step("benefit-of-cover", f"Benefit of Cover: +{rules.cover.amount} to the armour save "
                 f"({armour}+ -> {armour - rules.cover.amount}+, {rules.ordinal} edition)"
                 + ("" if context.cover else "; from indirect fire"))
            armour -= rules.cover.amount
        else:
            step("benefit-of-cover", "Benefit of Cover: no effect (Sv 3+ or better against AP 0)")
    which = "no save"
    if save is not None:
        invulnerable = target.invulnerable_save is not None and (armour is None or target.invulnerable_save < armour)
        which = "invulnerable save" if invulnerable else "armour save"
        if not improves_save and target.invulnerable_save is not None and target.save is not None:
            which += f", the better of armour {armour}+ and InSv {target.invulnerable_save}+"
    step("save-rolls", f"AP{weapon.armour_penetration}: save {f'{save}+' if save else 'none'} ({which}); "
         f"P(unsaved) = {unsaved_p:.4f}")


def _damage_steps(weapon: Weapon, target: Target, context: Context, normal: np.ndarray, step) -> None:
    if weapon.melta is not None and context.half_range:
        step("melta", f"Melta {weapon.melta.text}: +{weapon.melta.text} Damage at half range")
    step("normal-damage", f"damage per event {_damage_text(weapon, target, context)}: mean {_mean(normal):.4f}"
         + (" after Feel No Pain" if target.feel_no_pain or target.feel_no_pain_mortal
            or (weapon.psychic and target.feel_no_pain_psychic) else ""))
    if target.feel_no_pain is not None:
        step("feel-no-pain", f"Feel No Pain {target.feel_no_pain}+: each damage point is ignored with P = "
             f"{(7 - target.feel_no_pain) / 6:.4f}")
    if target.feel_no_pain_mortal is not None and weapon.devastating_wounds:
        step("feel-no-pain", f"Feel No Pain {target.feel_no_pain_mortal}+ against mortal wounds (Devastating Wounds)")
    if target.feel_no_pain_psychic is not None and weapon.psychic:
        step("feel-no-pain", f"Feel No Pain {target.feel_no_pain_psychic}+ against Psychic Attacks: "
             "this weapon is [PSYCHIC]")


def _hazardous(weapons: Sequence[Weapon], context: Context, rules: EditionRules, steps: list[Step]) -> float:
    """Expected mortal wounds the attacking unit suffers from its HAZARDOUS weapons, as declared
    (``hazardous``: one roll per weapon selected, failing on ``fails_on_at_most`` or less, each
    failure ``mortal_wounds``, or ``mortal_wounds_monster_vehicle`` for a MONSTER/VEHICLE unit);
    adds the steps."""
    tests = sum(w.models for w in weapons if w.hazardous)
    if not tests:
        return 0.0
    rule = rules.hazardous
    failed = Fraction(tests * rule.fails_on_at_most, 6)
    beasts = {"MONSTER", "VEHICLE"} & {k.upper() for k in context.attacker_keywords}
    each = rule.mortal_wounds_monster_vehicle if beasts else rule.mortal_wounds
    if rule.roll_key == rule.key:  # the 10th edition's wording: one Hazardous test
        steps.append(Step(rule.key, f"Hazardous: {tests} Hazardous test(s) for the attacker (one per Hazardous weapon "
                                    f"per model), each failing on a 1: {float(failed):.4f} expected failed tests; "
                                    f"each is {each} mortal wounds on one selected model ({rules.wording})"))
    else:
        steps.append(Step(rule.key, f"[HAZARDOUS]: {tests} {rule.name}(s) for the attacker (one per [HAZARDOUS] "
                                    "weapon selected)"))
        steps.append(Step(rule.roll_key, f"{rule.name}s fail on a 1-{rule.fails_on_at_most}: {float(failed):.4f} "
                                         f"expected failures; each is {each} mortal wound{'s' if each > 1 else ''}"
                                         + (f" (every model is {'/'.join(sorted(beasts))})"
                                            if beasts and each != rule.mortal_wounds else "")))
    mortal_wounds = float(failed * each)
    steps.append(Step(rule.roll_key, f"attacker: expected mortal wounds from hazardous weapons = {mortal_wounds:.4f}"))
    return mortal_wounds


# ---------------------------------------------------------------------------------------------
# Per-roll probabilities (cached)


@lru_cache(maxsize=4096)
def _roll_probabilities(
    needed: int, modifier: int, critical_on: int, fails_at_most: int, reroll: str | None
) -> tuple[tuple[float, float, float], tuple[int, ...]]:
    """(P(fail), P(success, not critical), P(critical)) of one D6 test, and the faces re-rolled.

    ``needed`` is the roll target, ``modifier`` the capped modifier, ``critical_on`` the
    unmodified result that is critical; an unmodified result of ``fails_at_most`` or less fails
    (1 for every hit and wound roll; 5 for Fire Overwatch / snap shooting, where only an
    unmodified 6 hits and is critical; 3 or 5 for indirect fire). Re-rolls are decided on the
    unmodified face (``ones``) or on the modified outcome (``failed``, ``all``), and a re-roll's
    own outcome stands.
    """
    classes = []
    for face in range(1, 7):
        if face <= fails_at_most:
            classes.append(_FAIL)
        elif face >= critical_on:
            classes.append(_CRITICAL)
        elif face == 6 or face + modifier >= needed:
            classes.append(_SUCCESS)
        else:
            classes.append(_FAIL)
    base = [classes.count(c) / 6 for c in (_FAIL, _SUCCESS, _CRITICAL)]
    rerolled = tuple(
        face
        for face, cls in zip(range(1, 7), classes)
        if (reroll == "ones" and face == 1) or (reroll in ("failed", "all") and cls == _FAIL)
        or (reroll == "non-critical" and cls != _CRITICAL)
    )
    probs = [0.0, 0.0, 0.0]
    for face, cls in zip(range(1, 7), classes):
        if face in rerolled:
            for c in range(3):
                probs[c] += base[c] / 6
        else:
            probs[cls] += 1 / 6
    return (probs[0], probs[1], probs[2]), rerolled


def _event_damage(weapon: Weapon, target: Target, context: Context, mortal: bool) -> tuple[np.ndarray, np.ndarray]:
    """(damage points before Feel No Pain, after it) of one event, as pmfs."""
    melta = weapon.melta if context.half_range else None
    fnp = target.feel_no_pain
    if weapon.psychic and target.feel_no_pain_psychic is not None:
        fnp = target.feel_no_pain_psychic if fnp is None else min(fnp, target.feel_no_pain_psychic)
    if mortal and target.feel_no_pain_mortal is not None:
        fnp = target.feel_no_pain_mortal if fnp is None else min(fnp, target.feel_no_pain_mortal)
    return _damage_pmfs(weapon.damage, melta, context.damage_reduction, context.damage_modifier, fnp,
                        context.reroll_damage if weapon.damage.dice_count > 0 else None)


@lru_cache(maxsize=1024)
def _damage_pmfs(
    damage: DiceExpr, melta: DiceExpr | None, reduction: str | None, modifier: int, fnp: int | None,
    reroll: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    rolled = _rerolled_damage(damage, reroll) if reroll else _dice_pmf(damage)
    if melta is not None:
        rolled = np.convolve(rolled, _dice_pmf(melta))
    value = np.arange(rolled.size)
    if reduction == "half":
        value = (value + 1) // 2
    value = np.maximum(value + modifier - (1 if reduction == "one" else 0), 1)
    before = np.bincount(value, weights=rolled)
    after = before
    if fnp is not None and fnp <= 6:
        after = before @ _binomial_matrix(before.size - 1, (max(fnp, 2) - 1) / 6)
    before, after = _normalised(before), _normalised(after)
    before.flags.writeable = False
    after.flags.writeable = False
    return before, after


def _rerolled_damage(expr: DiceExpr, policy: str = "below-mean") -> np.ndarray:
    """The Damage roll's pmf when every roll below the policy's value is re-rolled once
    (``Context.reroll_damage``; ``declarations.damage_reroll_below``): P(v) = P(v) [v kept] +
    P(a roll re-rolled) P(v).

    >>> _rerolled_damage(DiceExpr(text="D3", dice_count=1, dice_sides=3, modifier=0)).tolist()[1:]
    [0.1111111111111111, 0.4444444444444444, 0.4444444444444444]
    """
    rolled = _dice_pmf(expr)
    below = np.arange(rolled.size) < declarations.damage_reroll_below(expr, policy)
    low = float(rolled[below].sum())
    return np.where(below, 0.0, rolled) + low * rolled


@lru_cache(maxsize=512)
def _dice_pmf(expr: DiceExpr) -> np.ndarray:
    """Pmf of a dice expression indexed by value; negative values count as 0."""
    dist = expr.distribution()
    pmf = np.zeros(max(max(dist), 0) + 1)
    for value, p in dist.items():
        pmf[max(value, 0)] += float(p)
    pmf.flags.writeable = False
    return pmf


# ---------------------------------------------------------------------------------------------
# Distributions of counts


def _mix(parts: list[tuple[float, np.ndarray]]) -> np.ndarray:
    """Mixture sum_i w_i pmf_i (pmfs of different lengths; parts of weight 0 or less are left out).

    >>> _mix([(0.5, _ZERO), (0.5, np.array([0.0, 0.5, 0.5])), (0.0, np.ones(5))]).tolist()
    [0.5, 0.25, 0.25]
    """
    size = 1
    for w, p in parts:
        if w > 0 and p.size > size:
            size = p.size
    if size <= _SMALL:  # a few values: the same sums in Python floats, without an array operation per part
        acc = [0.0] * size
        for w, p in parts:
            if w > 0:
                if p is _ZERO:  # the count 0: w * 1.0 on the first value
                    acc[0] += w
                    continue
                for i, v in enumerate(p.tolist()):
                    acc[i] += w * v
        return np.array(acc)
    out = np.zeros(size)
    for w, p in parts:
        if w > 0:
            out[: p.size] += w * p
    return out


#: Largest pmf that ``_mix`` adds up in Python floats (the same products and sums, in the same order).
_SMALL = 16


def _per_attack(p_hit, rolled: np.ndarray, own: np.ndarray, sustained: np.ndarray | None) -> np.ndarray:
    """Pmf of one attack's count: miss -> 0; normal hit -> ``rolled``; Critical Hit -> ``own``
    plus Sustained Hits' extra hits, each a ``rolled``."""
    crit = own
    if sustained is not None and p_hit[2] > 0:
        crit = np.convolve(own, _compound(sustained, rolled))
    return _mix([(p_hit[0], _ZERO), (p_hit[1], rolled), (p_hit[2], crit)])


def _stage_pmf(per_model: np.ndarray, p_hit, rolled: np.ndarray | None, own: np.ndarray | None,
               sustained: np.ndarray | None, models: int) -> np.ndarray:
    """Pmf of a weapon's count at one stage: ``models`` models of ``per_model`` attacks each, one
    attack's count ``_per_attack(p_hit, rolled, own, sustained)`` (``rolled`` None: the attacks
    themselves). Read-only; kept per inputs (``_stage_pmf_kept``), so that the same weapon against
    other targets, or asked again, is not compounded again."""
    key = tuple(None if a is None else a.tobytes() for a in (per_model, rolled, own, sustained))
    return _stage_pmf_kept(*key, None if p_hit is None else tuple(p_hit), models)


def _stage_pmfs(per_model: np.ndarray, p_hit, rolled: dict[str, np.ndarray], own: dict[str, np.ndarray],
                sustained: np.ndarray | None, models: int) -> dict[str, np.ndarray]:
    """``_stage_pmf`` of the attacks and of every stage of ``rolled`` (and ``own``), the keys of the
    inputs they share made once."""
    per_model_key = per_model.tobytes()
    sustained_key = None if sustained is None else sustained.tobytes()
    p_key = tuple(p_hit)
    out = {"attacks": _stage_pmf_kept(per_model_key, None, None, None, None, models)}
    for stage, pmf in rolled.items():
        rolled_key = pmf.tobytes()
        own_pmf = own[stage]
        own_key = rolled_key if own_pmf is pmf else own_pmf.tobytes()
        out[stage] = _stage_pmf_kept(per_model_key, rolled_key, own_key, sustained_key, p_key, models)
    return out


@lru_cache(maxsize=4096)
def _stage_pmf_kept(per_model: bytes, rolled: bytes | None, own: bytes | None, sustained: bytes | None,
                    p_hit: tuple[float, float, float] | None, models: int) -> np.ndarray:
    pmf = lambda b: np.frombuffer(b, dtype=np.float64)  # noqa: E731
    per_model_pmf = pmf(per_model)
    if rolled is None:
        out = _power(per_model_pmf, models)
    else:
        per_attack = _per_attack(p_hit, pmf(rolled), pmf(own), None if sustained is None else pmf(sustained))
        out = _power(_compound(per_model_pmf, per_attack), models)
    out = np.array(out, dtype=np.float64)  # an own copy, never a view of a cached input
    out.flags.writeable = False
    return out


def _power(pmf: np.ndarray, n: int) -> np.ndarray:
    """The n-fold convolution of ``pmf`` (the sum of n independent copies), by squaring; a
    certain value (a fixed Attacks characteristic) is placed at once.

    >>> _power(np.array([0.0, 0.0, 1.0]), 3).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    >>> _power(np.array([0.5, 0.5]), 2).tolist()
    [0.25, 0.5, 0.25]
    """
    if n and pmf[-1] == 1.0 and not pmf[:-1].any():
        out = np.zeros((pmf.size - 1) * n + 1)
        out[-1] = 1.0
        return out
    result = _ZERO
    base = pmf
    while n:
        if n & 1:
            result = np.convolve(result, base) if result is not _ZERO else base
        n >>= 1
        if n:
            base = np.convolve(base, base)
    return result


def _compound(count: np.ndarray, item: np.ndarray) -> np.ndarray:
    """Pmf of the sum of N independent copies of ``item`` where N has pmf ``count``."""
    item = _trim(item)
    nonzero = count.nonzero()[0]
    if nonzero.size == 0:
        return _ZERO
    if item.size == 1:  # every copy is 0
        return np.array([count.sum()])
    low, high = int(nonzero[0]), int(nonzero[-1])
    if low == high:
        return count[low] * _power(item, low)
    if item.size == 2:
        return count[: high + 1] @ _binomial_matrix(high, item[1] / (item[0] + item[1]))
    acc = np.array([count[high]])
    for n in range(high - 1, low - 1, -1):
        acc = np.convolve(acc, item)
        acc[0] += count[n]
    return np.convolve(acc, _power(item, low)) if low else acc


class _DevastatingCounts(FrozenRecord):
    """How a weapon with Devastating Wounds makes its unsaved and devastating events, for the
    allocation chain (``_chain``), without their joint distribution: ``count`` is the pmf of the
    number of independent units (the weapon's hits, or with Lethal Hits its attacks), and
    ``outcome[a, b]`` the probability that one unit makes ``a`` unsaved events and ``b``
    devastating events (each unit's outcome is independent of the others').
    ``split``: each unit is one hit, unsaved with ``outcome[1, 0]``, devastating with
    ``outcome[0, 1]`` (a multinomial split, which the chain resolves in closed form)."""

    count: np.ndarray
    outcome: np.ndarray
    split: bool


def _split_counts(hits: np.ndarray, p_unsaved: float, p_dev: float) -> _DevastatingCounts:
    """Unsaved and devastating events when each of R hits (pmf ``hits``) independently is
    unsaved (``p_unsaved``), devastating (``p_dev``) or neither: a multinomial split of R."""
    outcome = np.array([[1.0 - p_unsaved - p_dev, p_dev], [p_unsaved, 0.0]])  # [a, b]
    return _DevastatingCounts(hits, outcome, split=True)


def _joint_with_lethal(attacks, p_hit, sustained, p_unsaved, p_dev, p_auto_unsaved) -> _DevastatingCounts:
    """Unsaved and devastating events of a weapon with Lethal Hits and Devastating Wounds: per
    attack, a miss, a normal hit (split as in ``_split_counts``) or a Critical Hit (an automatic
    wound, unsaved with ``p_auto_unsaved``, plus the Sustained Hits extra hits, each split)."""
    rolled = np.array([[1.0 - p_unsaved - p_dev, p_dev], [p_unsaved, 0.0]])  # [u, v]
    auto = np.array([[1.0 - p_auto_unsaved], [p_auto_unsaved]])
    crit = auto
    if sustained is not None:
        crit = _convolve2d(auto, _sustained_extra(sustained, rolled))
    per_attack = _add2d(_add2d(np.array([[p_hit[0]]]), p_hit[1] * rolled), p_hit[2] * crit)
    return _DevastatingCounts(attacks, per_attack, split=False)


def _convolve2d(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """2-D convolution by shifted copies of ``a``, one per non-zero cell of ``b`` (small)."""
    out = np.zeros((a.shape[0] + b.shape[0] - 1, a.shape[1] + b.shape[1] - 1))
    for i, j in zip(*np.nonzero(b)):
        out[i : i + a.shape[0], j : j + a.shape[1]] += b[i, j] * a
    return out


def _add2d(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros((max(a.shape[0], b.shape[0]), max(a.shape[1], b.shape[1])))
    out[: a.shape[0], : a.shape[1]] += a
    out[: b.shape[0], : b.shape[1]] += b
    return out


#: Mass of a count's upper tail that the allocation chain drops (``_truncated``).
TAIL_MASS = 1e-15


def _truncated(count: np.ndarray) -> np.ndarray:
    """``count`` cut after the last value whose upper tail (that value and above) holds more than
    ``TAIL_MASS``, the mass cut off added to that last value: the total stays exact and no
    probability moves by more than ``TAIL_MASS``.

    >>> _truncated(np.array([0.5, 0.5 - 1e-16, 1e-16])).tolist()
    [0.5, 0.5]
    >>> _truncated(np.array([0.5, 0.5, 0.0])).tolist()
    [0.5, 0.5]
    """
    tail = count[::-1].cumsum()  # tail[i] = P(N >= size - 1 - i), non-decreasing in i
    cut = int(tail.searchsorted(TAIL_MASS, side="right"))  # the values whose upper tail is at most TAIL_MASS
    if cut == 0:
        return count
    if cut == count.size:  # no value holds more (a sub-probability of at most TAIL_MASS): as it is
        return _trim(count)
    out = count[: count.size - cut].copy()
    out[-1] += tail[cut - 1]
    return out


#: Kept arrays (``lru_cache``) hold at most this many cells each (512 KiB of float64), so that a
#: long-running process (the service) keeps at most some 256 MiB of them; larger ones are made anew (read-only all the same).
_KEEP_CELLS = 1 << 16


def _binomial_columns(n_max: int, p: float, k_size: int) -> np.ndarray:
    """``B[n, k]`` = P(Binomial(n, p) = k) for n in 0..n_max and k < k_size, column by column
    (``B[n, k] = B[n, k-1] (n-k+1)/k p/(1-p)``): n_max x k_size work, not n_max^2. Values
    below the smallest float (a start ``(1-p)^n`` under 1e-308) are 0. Up to n_max = 200 the
    columns are those of ``_binomial_matrix`` (binomial coefficients times powers, a few array
    operations, and no start that underflows).

    >>> _binomial_columns(3, 0.5, 2).tolist()
    [[1.0, 0.0], [0.5, 0.5], [0.25, 0.5], [0.125, 0.375]]
    """
    if (n_max + 1) * k_size > _KEEP_CELLS:
        return _binomial_columns_made(n_max, p, k_size)
    return _binomial_columns_kept(n_max, p, k_size)


@lru_cache(maxsize=256)
def _binomial_columns_kept(n_max: int, p: float, k_size: int) -> np.ndarray:
    return _binomial_columns_made(n_max, p, k_size)


def _binomial_columns_made(n_max: int, p: float, k_size: int) -> np.ndarray:
    n = np.arange(n_max + 1, dtype=np.float64)
    out = np.zeros((n_max + 1, k_size))
    if p <= 0.0:
        out[:, 0] = 1.0
        return out
    if p >= 1.0:
        idx = np.arange(min(n_max + 1, k_size))
        out[idx, idx] = 1.0
        return out
    if n_max <= 200:  # the whole table from the binomial coefficients: a few array operations
        table = _binomial_matrix_made(n_max, p)
        out[:, : min(k_size, n_max + 1)] = table[:, :k_size]
        out.flags.writeable = False
        return out
    out[:, 0] = (1.0 - p) ** n
    ratio = p / (1.0 - p)
    for k in range(1, k_size):
        out[:, k] = out[:, k - 1] * np.maximum(n - k + 1, 0.0) / k * ratio
    out.flags.writeable = False  # kept (lru_cache): read-only
    return out


_PASCAL = np.ones((1, 1))


def _pascal(n_max: int) -> np.ndarray:
    """Binomial coefficients C(n, k) as float64, ``[n, k]`` for n, k <= n_max (grown and kept)."""
    global _PASCAL
    if _PASCAL.shape[0] <= n_max:
        size = max(n_max + 1, 2 * _PASCAL.shape[0], 64)
        table = np.zeros((size, size))
        table[:, 0] = 1.0
        for n in range(1, size):
            table[n, 1 : n + 1] = table[n - 1, :n] + table[n - 1, 1 : n + 1]
        _PASCAL = table
    return _PASCAL[: n_max + 1, : n_max + 1]


def _binomial_matrix(n_max: int, p: float) -> np.ndarray:
    """``M[n, k]`` = P(Binomial(n, p) = k) for n, k in 0..n_max (kept per (n_max, p) up to
    ``_KEEP_CELLS`` cells: read-only)."""
    n_max, p = int(n_max), min(max(float(p), 0.0), 1.0)
    if (n_max + 1) ** 2 > _KEEP_CELLS:
        matrix = _binomial_matrix_made(n_max, p)
        matrix.flags.writeable = False
        return matrix
    return _binomial_matrix_kept(n_max, p)


@lru_cache(maxsize=256)
def _binomial_matrix_kept(n_max: int, p: float) -> np.ndarray:
    matrix = _binomial_matrix_made(n_max, p)
    matrix.flags.writeable = False
    return matrix


def _binomial_matrix_made(n_max: int, p: float) -> np.ndarray:
    p = min(max(float(p), 0.0), 1.0)
    size = n_max + 1
    if p == 0.0 or p == 1.0:
        m = np.zeros((size, size))
        idx = np.arange(size)
        m[idx, 0 if p == 0.0 else idx] = 1.0
        return m
    if n_max <= 4:  # a few cells: the same products in Python floats
        q = 1.0 - p
        powers_p, powers_q = [p ** i for i in range(size)], [q ** i for i in range(size)]
        return np.array([[math.comb(n, k) * powers_p[k] * powers_q[n - k] if k <= n else 0.0 for k in range(size)]
                         for n in range(size)])
    n = np.arange(size)[:, None]
    k = np.arange(size)[None, :]
    lower = k <= n
    if n_max <= 1000:
        powers_p = p ** np.arange(size, dtype=np.float64)
        powers_q = (1.0 - p) ** np.arange(size, dtype=np.float64)
        return _pascal(n_max) * powers_p[k] * np.where(lower, powers_q[np.where(lower, n - k, 0)], 0.0)
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, size)))])
    nk = np.where(lower, n - k, 0)
    log_m = log_fact[n] - log_fact[k] - log_fact[nk] + k * np.log(p) + nk * np.log1p(-p)
    return np.where(lower, np.exp(log_m), 0.0)


def _trim(pmf: np.ndarray) -> np.ndarray:
    """``pmf`` without its trailing zeros (``_ZERO`` when all are zero)."""
    nonzero = pmf.nonzero()[0]
    return pmf[: nonzero[-1] + 1] if nonzero.size else _ZERO


def _normalised(pmf: np.ndarray) -> np.ndarray:
    """``pmf`` (1-D) with rounding drift removed (clipped at 0, divided by its sum)."""
    pmf = np.maximum(pmf, 0.0)
    pmf /= np.add.reduce(pmf)
    return pmf


def _as_pmf(values: Sequence[float], what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0 or np.any(arr < 0) or abs(arr.sum() - 1) > 1e-9:
        raise EngineInputError(f"{what} must be a non-empty 1-D pmf summing to 1, got {values!r}")
    return arr


def _mean(pmf: np.ndarray) -> float:
    """The mean of a pmf indexed by count: in Python floats for a few values (no array made).

    >>> _mean(np.array([0.25, 0.5, 0.25]))
    1.0
    """
    if pmf.size <= _SMALL:
        return sum([i * v for i, v in enumerate(pmf.tolist())])
    return float(np.arange(pmf.size) @ pmf)


# ---------------------------------------------------------------------------------------------
# Allocation: Markov chain over (models destroyed, damage on the wounded model)


def _initial_state(target: Target) -> np.ndarray:
    x = np.zeros(target.models * target.wounds + 1)
    x[0] = 1.0
    return x


@lru_cache(maxsize=256)
def _transition_matrix(damage_bytes: bytes, models: int, wounds: int) -> np.ndarray:
    """One event's transition matrix over states ``k * wounds + w`` (k destroyed, w damage on
    the wounded model) plus the absorbing state ``models * wounds`` (all destroyed)."""
    damage = np.frombuffer(damage_bytes, dtype=np.float64)
    alive = models * wounds
    idx = np.arange(alive)
    k, w = idx // wounds, idx % wounds
    xs = np.flatnonzero(damage > 0)
    dest = np.where(w[:, None] + xs < wounds, idx[:, None] + xs, ((k + 1) * wounds)[:, None])  # [state, value]
    # one sum per cell, in the order of the values (a kill adds up every value that finishes the model)
    cells = (idx[:, None] * (alive + 1) + dest).ravel()
    weights = np.broadcast_to(damage[xs], dest.shape).ravel()
    T = np.bincount(cells, weights=weights, minlength=(alive + 1) ** 2).reshape(alive + 1, alive + 1)
    T[alive, alive] = 1.0
    T.flags.writeable = False
    return T


#: Largest target chain (states) for which the chain takes dense matrix products and powers by
#: doubling; above it, one event at a time on the band of the transition (``_step``).
DENSE_STATES = 64


def _powers(X: np.ndarray, T: np.ndarray, n: int, kept: tuple[bytes, int, int] | None = None) -> np.ndarray:
    """``[X T^0, X T^1, ..., X T^n]`` stacked on a new first axis (shape (n + 1,) + X.shape), by
    doubling: the first h powers times ``T^h`` give the next h, one 2-D product per doubling
    written into one array (a stack of 1-row products, or growing copies, cost more than the
    arithmetic for a small chain). With ``kept`` = (damage pmf bytes, models, wounds) of ``T``
    (``_transition_matrix``), the squares ``T^(2^k)`` are the kept ones (``_squared``).

    >>> T = np.array([[0.5, 0.5], [0.0, 1.0]])
    >>> _powers(np.array([[1.0, 0.0]]), T, 3)[:, 0].tolist()
    [[1.0, 0.0], [0.5, 0.5], [0.25, 0.75], [0.125, 0.875]]
    """
    out = np.empty((n + 1,) + X.shape)
    out[0] = X
    S = X.shape[-1]
    done, step, level = 1, T, 0
    while done <= n:
        take = min(done, n + 1 - done)
        np.matmul(out[:take].reshape(-1, S), step, out=out[done : done + take].reshape(-1, S))
        done += take
        if done <= n:
            level += 1
            step = step @ step if kept is None else _squared(*kept, level)
    return out


@lru_cache(maxsize=512)
def _squared(damage_bytes: bytes, models: int, wounds: int, level: int) -> np.ndarray:
    """``T^(2^level)`` for the transition ``T`` of one event of a damage pmf (``_transition_matrix``):
    the transition of 2^level events, kept by value as the transition itself (read-only)."""
    if level == 0:
        return _transition_matrix(damage_bytes, models, wounds)
    half = _squared(damage_bytes, models, wounds, level - 1)
    out = half @ half
    out.flags.writeable = False
    return out


def _apply_count(X: np.ndarray, T: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``sum_u count[u] X T^u`` for X of shape (M, S), ``count`` cut as ``_truncated``: powers by
    doubling for one small state vector, else Horner's scheme (``count.size`` products of X by T,
    X's size of memory)."""
    count = _truncated(count)
    if count.size == 1:
        return X * count[0]
    if X.shape[0] == 1 and X.shape[1] <= DENSE_STATES:
        return (count @ _powers(X, T, count.size - 1).reshape(count.size, -1)).reshape(X.shape)
    Y = count[-1] * X
    for c in count[-2::-1]:
        Y = Y @ T
        Y += c * X
    return Y


def _mortal_events(mortal_damage: np.ndarray, target: Target) -> tuple[float, np.ndarray, int]:
    """The devastating events that damage the target, for the chain: (P(an event does at least 1
    damage after Feel No Pain), the transition matrix of such an event, the cap: the number of
    them after which every model is destroyed from any state, ``models x ceil(W / least
    damage)``). An event of 0 damage changes nothing, so the chain counts only the others."""
    return _mortal_events_kept(mortal_damage.tobytes(), target.models, target.wounds)


@lru_cache(maxsize=256)
def _mortal_events_kept(damage_bytes: bytes, models: int, wounds: int) -> tuple[float, np.ndarray, int]:
    mortal_damage = np.frombuffer(damage_bytes, dtype=np.float64)
    d = _trim(mortal_damage)
    p_nonzero = float(d[1:].sum())
    if p_nonzero <= 0.0:
        identity = np.eye(models * wounds + 1)
        identity.flags.writeable = False
        return 0.0, identity, 1
    given = np.concatenate([[0.0], d[1:] / p_nonzero])
    if given.size > wounds + 1:  # W or more: the model is destroyed, whatever the excess
        given = np.append(given[: wounds], given[wounds :].sum())
    least = int(np.flatnonzero(given)[0])
    cap = models * -(-wounds // least)
    D = _transition_matrix(given.tobytes(), models, wounds)
    return p_nonzero, D, cap


#: Cells (float64) of the stack of powers ``X B^m`` the chain keeps at once (64 MiB).
STACK_CELLS = 8_000_000


def _times_transition(Y: np.ndarray, damage: np.ndarray, models: int, wounds: int) -> np.ndarray:
    """``Y @ T`` for the transition ``T`` of one event of ``damage`` (``_transition_matrix``),
    from its band: work ``Y.size x len(damage)``, not ``Y.size x states``.

    >>> d = np.array([0.2, 0.5, 0.3]); Y = np.arange(7.0)[None]
    >>> bool(np.allclose(_times_transition(Y, d, 3, 2), Y @ _transition_matrix(d.tobytes(), 3, 2)))
    True
    """
    alive = models * wounds
    lead = Y.shape[:-1]
    A = Y[..., :alive].reshape(*lead, models, wounds)
    stay = np.zeros_like(A)
    kill = np.zeros(lead + (models,))
    total = None  # A summed over the damage on the wounded model, for every x >= wounds
    for x, p in enumerate(damage):
        if p == 0.0:
            continue
        if x < wounds:
            stay[..., :, x:] += p * A[..., :, : wounds - x]
        if x >= wounds:
            if total is None:
                total = A.sum(axis=-1)
            kill += p * total
        elif x:
            kill += p * A[..., wounds - x :].sum(axis=-1)  # the models with at least W - x damage
    stay[..., 1:, 0] += kill[..., :-1]
    out = np.empty_like(Y)
    out[..., :alive] = stay.reshape(*lead, alive)
    out[..., alive] = Y[..., alive] + kill[..., -1]
    return out


def _power_stack(X: np.ndarray, T: np.ndarray, damage: np.ndarray, n: int, target: Target) -> np.ndarray:
    """``[X T^0, ..., X T^n]`` (shape (n + 1, M, S)): by doubling for a small chain, else one
    banded product per power (``n x M x S x len(damage)``)."""
    if X.shape[1] <= DENSE_STATES:
        return _powers(X, T, n, (damage.tobytes(), target.models, target.wounds))
    out = np.empty((n + 1,) + X.shape)
    out[0] = X
    for m in range(1, n + 1):
        out[m] = _times_transition(out[m - 1], damage, target.models, target.wounds)
    return out


def _with_devastating(X: np.ndarray, T: np.ndarray | None, normal_damage: np.ndarray, counts: _DevastatingCounts,
                      p_nonzero: float, cap: int, target: Target, fold: int = 1) -> np.ndarray:
    """``X'[m, v, s]`` (flattened to (M x size, S)): the chain state ``X[m, s]`` (m: the pending
    counts of earlier weapons) after this weapon's unsaved events (transition ``T`` of one event
    of ``normal_damage``; None: made where it is needed), jointly with the number ``v`` of its devastating events that do damage,
    for ``v < cap``; the mass of ``v >= cap`` (every model destroyed, whatever else happens) is
    dropped and put back on the last state by ``_chain``.

    With a multinomial split (``counts.split``), in closed form: of R hits, v are devastating and
    damaging (``Bin(R, q)``), each of the R - v others unsaved with ``p / (1 - q)``, so
    ``X'[v] = sum_m P(R = m + v) Bin(m + v, q)(v) X B^m`` with B the transition of one such other
    hit: the powers ``X B^m`` once (R x M x S^2, or banded; X in chunks of ``STACK_CELLS``),
    then an (size x R) product.
    Otherwise (Lethal Hits) Horner's scheme over the attacks, one attack's outcome applied to the
    (m, v, s) tensor: attacks x M x size x S^2 (or banded) work. Both linear in the attacks.
    ``fold > 1``: X's last pending count (the axis of size ``fold`` just before S, ``X[m', u, s]``)
    belongs to an earlier weapon whose devastating events have the same transition, allocated
    just before this weapon's: only their total matters, so this weapon's count is added to it
    (``X'[m', u + v, s]``, below ``cap``) by Horner's scheme, and no product of counts is made."""
    count = _truncated(counts.count)
    outcome = _thinned(counts.outcome, p_nonzero)
    size = _pending_size(count.tobytes(), outcome.tobytes(), outcome.shape, cap)
    M, S = X.shape
    if fold > 1:
        size = min(cap, size + fold - 1)
        M //= fold
    banded = S > DENSE_STATES

    def times(Y: np.ndarray, matrix: np.ndarray, damage: np.ndarray) -> np.ndarray:
        return _times_transition(Y, damage, target.models, target.wounds) if banded else Y @ matrix

    if counts.split and fold == 1:
        p_unsaved, q = outcome[1, 0], outcome[0, 1]
        p = p_unsaved / (1.0 - q) if q < 1.0 else 0.0
        mixed = p * _trim(normal_damage)
        mixed[0] += 1.0 - p
        mixed_bytes = mixed.tobytes()
        r_max = count.size - 1
        weight = _split_weights(count, _binomial_columns(r_max, q, size))  # [v, m]
        if M == 1 and not banded and (r_max + 1) * S * S <= _KEEP_CELLS:  # B's kept powers: one product
            Y = X @ _transition_powers(mixed_bytes, target.models, target.wounds, r_max + 1)
            return weight @ Y.reshape(r_max + 1, S)
        B = _transition_matrix(mixed_bytes, target.models, target.wounds)
        if M == 1:
            Y = _power_stack(X, B, mixed, r_max, target)  # (R, 1, S)
            return weight @ Y.reshape(r_max + 1, S)
        out = np.empty((M, size, S))
        rows = max(1, STACK_CELLS // ((r_max + 1) * S))  # rows of X per stack of powers
        for first in range(0, M, rows):
            Y = _power_stack(X[first : first + rows], B, mixed, r_max, target)  # (R, rows, S)
            out[first : first + rows] = (weight @ Y.reshape(r_max + 1, -1)).reshape(size, -1, S).transpose(1, 0, 2)
        return out.reshape(M * size, S)
    # Horner's scheme over the attacks: Y = sum_n count[n] Op^n (X at v = 0), where one attack's
    # Op makes a unsaved and b devastating events with probability outcome[a, b].
    if T is None and not banded:
        T = _transition_matrix(normal_damage.tobytes(), target.models, target.wounds)
    start = np.zeros((M, size, S))
    if fold > 1:
        start[:, :fold, :] = X.reshape(M, fold, S)[:, :size, :]
    else:
        start[:, 0, :] = X
    damage = _trim(normal_damage)
    Y = count[-1] * start
    for c in count[-2::-1]:
        by_a = [Y]
        for _ in range(1, outcome.shape[0]):
            by_a.append(times(by_a[-1], T, damage))
        out = c * start
        for b in range(min(outcome.shape[1], size)):
            for a in range(outcome.shape[0]):
                if outcome[a, b]:
                    out[:, b:, :] += outcome[a, b] * by_a[a][:, : size - b, :]
        Y = out
    return Y.reshape(M * size, S)


def _strided(base: np.ndarray, first: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """A view of the float64 array ``base`` (C-contiguous) from its item ``first`` with ``shape``
    and ``strides`` (bytes), writing through to ``base``; every item it reaches must lie in
    ``base`` (as ``np.lib.stride_tricks.as_strided``, without its cost of some microseconds).

    >>> _strided(np.arange(6.0), 1, (2, 2), (16, 8)).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return np.ndarray(shape, np.float64, base, first * base.itemsize, strides)


def _split_weights(count: np.ndarray, by_dev: np.ndarray) -> np.ndarray:
    """``weight[v, m] = count[m + v] by_dev[m + v, v]`` (0 where ``m + v`` is past the count): the
    weight of ``X B^m`` in the state with v devastating events (``_with_devastating``), shape
    (size, R) for ``by_dev`` of shape (R, size); one strided view of ``count x by_dev``.

    >>> _split_weights(np.array([0.5, 0.5]), np.array([[1.0, 0.0], [0.5, 0.5]])).tolist()
    [[0.5, 0.25], [0.25, 0.0]]
    """
    rows, size = by_dev.shape
    scaled = np.zeros((rows + size, size))
    np.multiply(by_dev, count[:, None], out=scaled[:rows])
    row, col = scaled.strides
    return _strided(scaled, 0, (size, rows), (row + col, row))


@lru_cache(maxsize=256)
def _pending_size(count_bytes: bytes, outcome_bytes: bytes, shape: tuple[int, int], cap: int) -> int:
    """The values a weapon's pending devastating count takes in the chain: its support after
    ``_truncated``, at most ``cap`` (shared by ``chain_work`` and ``_with_devastating``)."""
    count = np.frombuffer(count_bytes, dtype=np.float64)
    outcome = np.frombuffer(outcome_bytes, dtype=np.float64).reshape(shape)
    return min(cap, _truncated(_compound(count, outcome.sum(axis=0))).size)


def _thinned(outcome: np.ndarray, p_nonzero: float) -> np.ndarray:
    """``outcome[a, b]`` with each of the b devastating events kept (it does damage) with
    ``p_nonzero``: ``[a, b'] = sum_b outcome[a, b] Bin(b, p_nonzero)(b')``.

    >>> _thinned(np.array([[0.5, 0.5]]), 0.5).tolist()
    [[0.75, 0.25]]
    """
    if p_nonzero >= 1.0:
        return outcome
    return outcome @ _binomial_matrix(outcome.shape[1] - 1, p_nonzero)


def _chain(plans: list[_Plan], target: Target, context: Context, steps: list[Step]) -> np.ndarray:
    """State distribution after every weapon's unsaved events (in weapon order), then every
    weapon's devastating events (in weapon order).

    The chain carries ``X[v_1, ..., v_k, s]``: the state s after the unsaved events so far,
    jointly with the pending count v_i of each earlier Devastating Wounds weapon's events that
    do damage, each below its cap (``_mortal_events``); the mass of a count at its cap is every
    model destroyed, put back on the last state at the end. Nothing grows with the square of the
    attacks: each weapon's work is linear in its hits (or attacks).

    Kept per (plans, target size) (``_chain_kept``): plans are compared by identity and each is
    kept per weapon, target and context, so the same attack asked again is not allocated again
    and gives the same floats. Read-only."""
    x, mortal = _chain_kept(tuple(plans), target.models, target.wounds)
    if mortal:
        steps.append(_MORTAL_STEP(context))
    return x


@lru_cache(maxsize=256)
def _chain_kept(plans: tuple[_Plan, ...], models: int, wounds: int) -> tuple[np.ndarray, bool]:
    x, mortal = _chain_state(plans, models, wounds)
    x.flags.writeable = False
    return x, mortal


#: Multiply-adds (``_chain_work_bound``) under which a chain with one pending count is resolved by
#: the pending count without weighing the kill counts: some milliseconds of work at most.
_SMALL_CHAIN_WORK = 10_000_000


def _chain_state(plans: tuple[_Plan, ...], models: int, wounds: int) -> tuple[np.ndarray, bool]:
    """The work of ``_chain``: (its state, whether devastating events were allocated)."""
    target = _sized_target(models, wounds)
    # no pending count, or one in a small chain: never the kill counts (``_chain_method``), whose
    # choice is then not worked out (a few microseconds saved on every small attack)
    groups = _pending_groups(plans, target)
    if groups and (groups >= 2 or _chain_work_bound(plans, target) > _SMALL_CHAIN_WORK):
        method = _chain_by(plans, target)
        if method == "kill counts":
            return kill_counts.allocate(_streams(plans), models, wounds), True
        if method == "last expanded":
            from pipeline.engine import last_expanded

            return last_expanded.allocate(_streams(plans), models, wounds), True
    X = _initial_state(target)[None, :]  # (M, S): M indexes the pending devastating counts
    pending: list[tuple[int, np.ndarray]] = []
    for plan in plans:
        if plan.joint is None:
            if plan.damage_reroll is not None:
                X = _with_damage_reroll(X, plan, target)
                continue
            moves = _counter_moves(plan.normal_damage, wounds)
            if moves is not None:
                X = _counted(X, _compound(_truncated(plan.stages["unsaved"]), moves))
                continue
            X = _apply_count(X, _transition_matrix(plan.normal_damage.tobytes(), models, wounds), plan.stages["unsaved"])
            continue
        p_nonzero, D, cap = _mortal_events(plan.mortal_damage, target)
        if pending and _same_events(pending[-1][1], D):  # only the total of the two counts matters
            rest = X.shape[0] // pending[-1][0]
            X = _with_devastating(X, None, plan.normal_damage, plan.joint, p_nonzero, cap, target, fold=pending[-1][0])
            pending[-1] = (X.shape[0] // rest, D, pending[-1][2])
            continue
        X = _with_devastating(X, None, plan.normal_damage, plan.joint, p_nonzero, cap, target)
        pending.append((X.shape[0] // math.prod(size for size, _, _ in pending), D, plan.mortal_damage.tobytes()))
    if not pending:
        return X[0], False
    X = X.reshape(*[size for size, _, _ in pending], X.shape[1])
    for size, D, mortal_bytes in pending:
        if _kills_one(D, wounds):
            X = _killed_by_each(X, models, wounds)
        elif size * D.size <= _KEEP_CELLS:
            X = _times_kept_powers(X, _mortal_powers(mortal_bytes, models, wounds, size))
        else:
            X = _contract_powers(X, D)
    x = X.copy()
    x[-1] += max(0.0, 1.0 - float(np.add.reduce(x)))  # pending counts at their cap: every model destroyed
    return x, True


@lru_cache(maxsize=64)
def _sized_target(models: int, wounds: int) -> Target:
    """A target of ``models`` x W``wounds`` for the chain, which reads only its size."""
    return Target(toughness=1, save=None, wounds=wounds, models=models)


def _MORTAL_STEP(context: Context) -> Step:  # noqa: N802  (the one wording of the step)
    return Step("mortal-wounds", "allocation: devastating wounds allocated after every weapon's other attacks, "
                                 "one model each, excess lost"
                                 + (" (11th edition: after the normal damage, at most one model per Critical "
                                    "Wound)" if context.edition == 11 else ""))


def _streams(plans: Sequence[_Plan]) -> list[kill_counts.Stream]:
    """The plans as the streams of ``kill_counts.allocate`` (counts cut as by the main chain)."""
    streams = []
    for plan in plans:
        if plan.joint is None:
            count, outcome = _truncated(plan.stages["unsaved"]), np.array([[0.0], [1.0]])
        else:
            count, outcome = _truncated(plan.joint.count), plan.joint.outcome
        streams.append(kill_counts.Stream(count, outcome, _trim(plan.normal_damage), _trim(plan.mortal_damage)))
    return streams


def _kill_counts_work(plans: Sequence[_Plan], target: Target) -> int:
    """The work of ``kill_counts.allocate`` for ``plans`` in multiply-adds of the main chain (the
    time of ``kill_counts.STEPS_PER_MULTIPLY_ADD`` of its steps, ``kill_counts.work``)."""
    return kill_counts.work(_streams(plans), target.models, target.wounds) // kill_counts.STEPS_PER_MULTIPLY_ADD


def _pending_groups(plans: Sequence[_Plan], target: Target) -> int:
    """How many pending counts the main chain carries: one per Devastating Wounds weapon whose
    devastating events differ from the previous such weapon's."""
    groups, last = 0, None
    for plan in plans:
        if plan.joint is None:
            continue
        D = _mortal_events(plan.mortal_damage, target)[1]
        if last is None or not _same_events(last, D):
            groups += 1
        last = D
    return groups


def _chain_by(plans: Sequence[_Plan], target: Target) -> str:
    """How the chain is resolved where a pending count would be carried (two or more multiply:
    their product grows with the attacks of each): "pending counts" (the main chain), "kill counts"
    (``kill_counts``) or "last expanded" (``last_expanded``), whichever takes the least work
    (``_chain_method``)."""
    return _chain_method(tuple(plans), target.models, target.wounds)[0]


def _same_events(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two devastating events' transitions (``_mortal_events``) are the same matrix."""
    return a is b or (a.shape == b.shape and bool(np.array_equal(a, b)))


def _counter_moves(damage: np.ndarray, wounds: int) -> np.ndarray | None:
    """Where every event of ``damage`` moves the chain's state index (``k * wounds + w``) on by 1
    or leaves it (events of at most 1 damage point, or any damage against models of 1 wound: the
    point finishes the model or goes on the wounded one, nothing is lost), the pmf [stays, moves]
    of one event; else None.

    >>> _counter_moves(np.array([0.25, 0.75]), 2).tolist(), _counter_moves(np.array([0.1, 0.2, 0.7]), 2)
    ([0.25, 0.75], None)
    >>> _counter_moves(np.array([0.1, 0.2, 0.7]), 1).tolist()
    [0.1, 0.9]
    """
    damage = _trim(damage)
    if damage.size <= 2:
        return damage if damage.size == 2 else np.array([1.0, 0.0])
    if wounds == 1:
        return np.array([damage[0], 1.0 - damage[0]])
    return None


def _counted(X: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """The chain state ``X`` (shape (M, S)) after a number of moves on of its state index of pmf
    ``moves`` (``_counter_moves`` compounded over the events), the moves past the last state
    (every model destroyed) kept there: ``X @ Tg`` with ``Tg[s, s + j] = moves[j]``, one product
    whatever the number of events (exact: no count is cut).

    >>> _counted(np.array([[0.5, 0.5, 0.0]]), np.array([0.5, 0.5])).tolist()
    [[0.25, 0.5, 0.25]]
    """
    M, S = X.shape
    n = moves.size
    if M == 1:  # one state vector: the same sums as one convolution
        y = np.convolve(X[0], moves)
        out = y[None, :S].copy()
        out[0, -1] += np.add.reduce(y[S:])
        return out
    Tg = np.zeros((S, S + n))
    _strided(Tg, 0, (S, n), (Tg.strides[0] + Tg.strides[1], Tg.strides[1]))[:] = moves
    Y = X @ Tg
    out = Y[:, :S].copy()
    out[:, -1] += Y[:, S:].sum(axis=1)
    return out


def _kills_one(D: np.ndarray, wounds: int) -> bool:
    """Whether each devastating event of transition ``D`` (``_mortal_events``: events that do
    damage) destroys one model whatever its damage, the excess lost: no event leaves a fresh model
    wounded (every damage is W or more)."""
    return not D[0, 1:wounds].any()


def _killed_by_each(X: np.ndarray, models: int, wounds: int) -> np.ndarray:
    """``sum_v X[v] D^v`` (``_contract_powers``) where each of the v events of ``D`` destroys one
    model (``_kills_one``): the state (k destroyed, w) goes to (k + v, 0); the mass that reaches
    every model destroyed is left out (``_chain_state`` puts the missing mass there), so a few
    array operations replace the powers of D.

    >>> X = np.zeros((3, 5)); X[0, 1] = 0.5; X[1, 1] = 0.25; X[2, 0] = 0.25
    >>> _killed_by_each(X, 2, 2).tolist()
    [0.0, 0.5, 0.25, 0.0, 0.0]
    """
    size, S = X.shape[0], X.shape[-1]
    alive = S - 1
    Z = X.reshape(size, -1, S)
    out = Z[0].copy()
    shifts = min(size - 1, models - 1)  # v = 1..shifts leave a model standing
    if shifts > 0:
        rows = Z.shape[1]
        padded = np.zeros((shifts, rows, shifts + models))
        padded[:, :, shifts:] = Z[1 : shifts + 1, :, :alive].reshape(shifts, rows, models, wounds).sum(axis=3)
        sv, sr, sk = padded.strides  # skewed[v - 1, r, j] = padded[v - 1, r, shifts + j - v]: models killed before, j - v
        skewed = _strided(padded, shifts - 1, (shifts, rows, models), (sv - sk, sr, sk))
        out[:, 0:alive:wounds] += skewed.sum(axis=0)
    out[:, alive] = Z[0, :, alive]
    return out.reshape(X.shape[1:])


@lru_cache(maxsize=32)  # at most 32 x 512 KiB
def _mortal_powers(damage_bytes: bytes, models: int, wounds: int, size: int) -> np.ndarray:
    """``[D^0, ..., D^(size - 1)]`` stacked as one (size x S, S) array, for the transition ``D`` of
    one devastating event that does damage (``_mortal_events`` of the mortal damage pmf
    ``damage_bytes``), by doubling (one 2-D product per doubling); kept by value as the
    transition itself (read-only), so that the contraction of a pending count is one product.

    >>> P = _mortal_powers(np.array([0.0, 1.0]).tobytes(), 1, 2, 3)
    >>> P.reshape(3, 3, 3)[2].tolist()
    [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    """
    out = _stacked_powers(_mortal_events_kept(damage_bytes, models, wounds)[1], size)
    out = out.reshape(-1, out.shape[-1])
    out.flags.writeable = False
    return out


def _stacked_powers(T: np.ndarray, size: int) -> np.ndarray:
    """``[T^0, ..., T^(size - 1)]`` (shape (size, S, S)): ``_powers`` of the identity.

    >>> _stacked_powers(np.array([[0.5, 0.5], [0.0, 1.0]]), 3)[2].tolist()
    [[0.25, 0.75], [0.0, 1.0]]
    """
    return _powers(np.eye(T.shape[0]), T, size - 1)


@lru_cache(maxsize=32)  # at most 32 x 512 KiB
def _transition_powers(damage_bytes: bytes, models: int, wounds: int, size: int) -> np.ndarray:
    """``[T^0, ..., T^(size - 1)]`` for the transition ``T`` of one event of the damage pmf
    ``damage_bytes`` (``_transition_matrix``), laid out as one (S, size x S) array whose column
    ``m x S + t`` is ``T^m[:, t]``: ``X @`` it is ``[X T^0, ..., X T^(size - 1)]`` in one product.
    Kept by value as the transition itself (read-only).

    >>> P = _transition_powers(np.array([0.0, 1.0]).tobytes(), 1, 2, 3)
    >>> (np.array([[1.0, 0.0, 0.0]]) @ P).reshape(3, 3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    stack = _stacked_powers(_transition_matrix(damage_bytes, models, wounds), size)
    out = np.ascontiguousarray(stack.transpose(1, 0, 2)).reshape(stack.shape[1], -1)
    out.flags.writeable = False
    return out


def _times_kept_powers(X: np.ndarray, powers: np.ndarray) -> np.ndarray:
    """``sum_v X[v] D^v`` over the first axis of X (shape (size, ..., S)) with the stack of
    powers of ``_mortal_powers`` (shape (size x S, S)): one product.

    >>> P = _mortal_powers(np.array([0.0, 1.0]).tobytes(), 1, 1, 3)
    >>> _times_kept_powers(np.array([[0.5, 0.0], [0.25, 0.0], [0.25, 0.0]]), P).tolist()
    [0.5, 0.5]
    """
    size, S = X.shape[0], X.shape[-1]
    rest = X.shape[1:-1]
    flat = np.moveaxis(X, 0, -2).reshape(-1, size * S) if rest else X.reshape(1, size * S)
    return (flat @ powers).reshape(rest + (S,))


def _contract_powers(X: np.ndarray, D: np.ndarray) -> np.ndarray:
    """``sum_v X[v] D^v`` over the first axis of X, by pairing terms (log2 steps; X padded once
    with zero terms to a power of two).

    >>> D = np.array([[0.0, 1.0], [0.0, 1.0]])
    >>> _contract_powers(np.array([[0.5, 0.0], [0.25, 0.0], [0.25, 0.0]]), D).tolist()
    [0.5, 0.5]
    """
    size = X.shape[0]
    if size == 1:
        return X[0]
    padded = 1 << (size - 1).bit_length()
    if padded != size:
        X = np.concatenate([X, np.zeros((padded - size,) + X.shape[1:])])
    step = D
    while X.shape[0] > 1:
        X = X[0::2] + X[1::2] @ step
        if X.shape[0] > 1:
            step = step @ step
    return X[0]


def _models_pmf(x: np.ndarray, target: Target) -> np.ndarray:
    alive = target.models * target.wounds
    pmf = np.empty(target.models + 1)
    x[:alive].reshape(target.models, target.wounds).sum(axis=1, out=pmf[:-1])
    pmf[-1] = x[alive]
    return _normalised(pmf)


# ---------------------------------------------------------------------------------------------
# Validation and notes


def _cover(weapon: Weapon, target: Target, context: Context) -> str | None:
    """Why the target has the benefit of cover against this attack (``"benefit of cover"``, from
    Stealth where the edition's Stealth gives cover (11th, 24.33), from indirect fire where the
    edition's indirect fire gives it), or None (melee, IGNORES COVER (24.18), no cover). One
    benefit: the reasons are not cumulative."""
    if weapon.is_melee or weapon.ignores_cover:
        return None
    rules = rules_for(context.edition)
    if context.cover:
        return "benefit of cover"
    if target.stealth and rules.stealth.effect == "benefit-of-cover":
        return "benefit of cover from Stealth"
    if _indirect(weapon, context) and rules.indirect_fire.cover:
        return "benefit of cover from indirect fire"
    return None


def _cover_improves_save(weapon: Weapon, target: Target, context: Context) -> bool:
    """Whether the declared cover improves the armour save (10th edition "Benefit of Cover": +1,
    not for Sv 3+ or better against AP 0; the 11th edition's cover worsens the BS instead)."""
    rule = rules_for(context.edition).cover
    exception = rule.no_cover_for_save_at_most
    return (
        rule.effect == "improve-save"
        and _cover(weapon, target, context) is not None
        and target.save is not None
        and not (exception is not None and target.save <= exception and weapon.armour_penetration == 0)
    )


def _validate_target(target: Target) -> None:
    if not isinstance(target, Target):
        raise EngineInputError(f"target must be a Target, got {type(target).__name__}")
    if target.models < 1:
        raise EngineInputError(f"target {target.name!r}: models must be at least 1 (got {target.models})")
    if target.wounds < 1:
        raise EngineInputError(f"target {target.name!r}: wounds must be at least 1 (got {target.wounds})")
    if target.toughness < 1:
        raise EngineInputError(f"target {target.name!r}: toughness must be at least 1 (got {target.toughness})")
    for label, value in (
        ("save", target.save),
        ("invulnerable_save", target.invulnerable_save),
        ("feel_no_pain", target.feel_no_pain),
        ("feel_no_pain_mortal", target.feel_no_pain_mortal),
        ("feel_no_pain_psychic", target.feel_no_pain_psychic),
    ):
        if value is not None and not 2 <= value <= 7:
            raise EngineInputError(f"target {target.name!r}: {label} must be a roll target 2..7 (3 for 3+) or None, got {value}")
    wounds = target.models * target.wounds
    if wounds > limits.MAX_TARGET_WOUNDS:
        raise EngineInputError(
            f"target {target.name!r}: {target.models} models x W{target.wounds} = {wounds} wounds: at most "
            f"{limits.MAX_TARGET_WOUNDS} wounds in the target unit (models x Wounds) for the exact engine; "
            "give fewer models (--target-models) or simulate it (pipeline.engine.simulate.simulate)"
        )


def _validate(weapons: Sequence[Weapon], target: Target, context: Context) -> None:
    if context.edition not in (10, 11):
        raise EngineInputError(f"context edition must be 10 or 11, got {context.edition!r}")
    if not weapons:
        raise EngineInputError("no weapons to resolve: give at least one Weapon")
    if len(weapons) > limits.MAX_WEAPONS_PER_ATTACK:
        raise EngineInputError(f"{len(weapons)} weapons: at most {limits.MAX_WEAPONS_PER_ATTACK} weapon profiles "
                               "in one attack; resolve them in several attacks")
    _validate_target(target)
    for w in weapons:
        if w.devastating_wounds and (w.mortal_wounds_on_critical_hit or w.mortal_wounds_on_critical_wound):
            raise EngineInputError(f"weapon {w.name!r}: mortal wounds on a critical with [DEVASTATING WOUNDS] are not "
                                   "modelled together; resolve without one of them")
    if context.twin_linked_reroll not in ("failed", "non-critical", "best"):
        raise EngineInputError(f"context twin_linked_reroll must be failed, non-critical or best, got "
                               f"{context.twin_linked_reroll!r}")
    for label, value in (("critical_hit_on", context.critical_hit_on), ("critical_wound_on", context.critical_wound_on)):
        if not 2 <= value <= 6:
            raise EngineInputError(f"context {label} must be 2..6 (5 for Critical Hits on 5+), got {value}")
    for label, value in (("reroll_hits", context.reroll_hits), ("reroll_wounds", context.reroll_wounds)):
        if value not in _REROLL_RANK:
            raise EngineInputError(f"context {label} must be one of ones, failed, all or None, got {value!r}")
    if context.damage_reduction not in _REDUCTIONS:
        raise EngineInputError(f"context damage_reduction must be 'one', 'half' or None, got {context.damage_reduction!r}")
    for w in weapons:
        if not isinstance(w, Weapon):
            raise EngineInputError(f"weapons must be Weapon objects, got {type(w).__name__}")
        if w.models < 1:
            raise EngineInputError(f"weapon {w.name!r}: models must be at least 1 (got {w.models})")
        if w.strength < 1:
            raise EngineInputError(f"weapon {w.name!r}: strength must be at least 1 (got {w.strength})")
        if w.armour_penetration > 0 and limit("AP", w.armour_penetration, rules_for(context.edition)) > 0:
            raise EngineInputError(
                f"weapon {w.name!r}: armour_penetration is 0 or negative (-1 for AP -1), got {w.armour_penetration}"
            )
        if w.skill is not None and not 2 <= w.skill <= 7:
            raise EngineInputError(f"weapon {w.name!r}: skill must be a roll target 2..7 (3 for 3+) or None, got {w.skill}")
        for anti in w.anti:
            if not 2 <= anti.threshold <= 6:
                raise EngineInputError(f"weapon {w.name!r}: Anti-{anti.keyword} threshold must be 2..6, got {anti.threshold}")
        if w.blast is not None and w.blast < 0:
            raise EngineInputError(f"weapon {w.name!r}: blast must be 0 or more, got {w.blast}")
        if w.cleave is not None and w.cleave < 0:
            raise EngineInputError(f"weapon {w.name!r}: cleave must be 0 or more, got {w.cleave}")
        _check_weapon_limits(w, target, context)


def _check_weapon_limits(w: Weapon, target: Target, context: Context) -> None:
    """The limits of ``pipeline.limits`` on one weapon: its models, dice, Damage, attacks and hits
    (worked out from the dice's largest values, before any distribution is built)."""
    if w.models > limits.MAX_MODELS_PER_WEAPON:
        raise EngineInputError(f"weapon {w.name!r}: {w.models} models: at most {limits.MAX_MODELS_PER_WEAPON} "
                               "models fire one weapon; give fewer models")
    for label, expr in (("Attacks", w.attacks), ("Damage", w.damage), ("Sustained Hits", w.sustained_hits),
                        ("Rapid Fire", w.rapid_fire), ("Melta", w.melta)):
        if expr is None:
            continue
        if not isinstance(expr, DiceExpr):
            raise EngineInputError(f"weapon {w.name!r}: {label} must be a dice expression, got {expr!r}")
        if expr.dice_count > limits.MAX_DICE_COUNT:
            raise EngineInputError(f"weapon {w.name!r}: {label} {expr.text}: at most {limits.MAX_DICE_COUNT} "
                                   "dice in one dice expression")
        if expr.dice_count and expr.dice_sides < 2:
            raise EngineInputError(f"weapon {w.name!r}: {label} {expr.text}: dice of {expr.dice_sides} sides; "
                                   "a die has at least 2 sides (D3, D6)")
        if expr.dice_count and expr.dice_sides > limits.MAX_DICE_SIDES:
            raise EngineInputError(f"weapon {w.name!r}: {label} {expr.text}: at most {limits.MAX_DICE_SIDES} "
                                   "sides on a die (D3, D6)")
    half = context.half_range
    damage = w.damage.maximum + (w.melta.maximum if half and w.melta is not None else 0)
    damage = max(damage, 0) + max(context.damage_modifier, 0)
    if damage > limits.MAX_DAMAGE_PER_ATTACK:
        raise EngineInputError(f"weapon {w.name!r}: Damage {w.damage.text} (up to {damage}): at most "
                               f"{limits.MAX_DAMAGE_PER_ATTACK} Damage per attack")
    per_model = max(w.attacks.maximum, 0) + (max(w.rapid_fire.maximum, 0) if half and w.rapid_fire is not None else 0)
    rules = rules_for(context.edition)
    per_model += blast_attacks(w, target, rules)
    if w.cleave and rules.cleave.supported:
        per_model += w.cleave * (target.models // 5)
    attacks = w.models * per_model
    if attacks > limits.MAX_ATTACKS_PER_WEAPON:
        raise EngineInputError(f"weapon {w.name!r}: {w.models} models x up to {per_model} attacks = {attacks} "
                               f"attacks: at most {limits.MAX_ATTACKS_PER_WEAPON} attacks of one weapon; give fewer models")
    if w.lethal_hits and w.devastating_wounds and attacks > limits.MAX_ATTACKS_LETHAL_DEVASTATING:
        raise EngineInputError(f"weapon {w.name!r}: {attacks} attacks with Lethal Hits and Devastating Wounds: at most "
                               f"{limits.MAX_ATTACKS_LETHAL_DEVASTATING} attacks of a weapon with both; give fewer models")
    hits = attacks
    if w.sustained_hits is not None:
        hits = attacks * (1 + max(w.sustained_hits.maximum, 0))
        if hits > limits.MAX_ATTACKS_PER_WEAPON:
            raise EngineInputError(f"weapon {w.name!r}: {attacks} attacks with Sustained Hits {w.sustained_hits.text} "
                                   f"score up to {hits} hits: at most {limits.MAX_ATTACKS_PER_WEAPON} hits of one "
                                   "weapon; give fewer models")
    if hits * damage > limits.MAX_DAMAGE_PER_WEAPON:
        raise EngineInputError(f"weapon {w.name!r}: {hits} hits of up to {damage} Damage = {hits * damage} damage: "
                               f"at most {limits.MAX_DAMAGE_PER_WEAPON} damage of one weapon; give fewer models")


def chain_work(plans: Sequence["_Plan"], target: Target) -> int:
    """Multiply-adds of the allocation chain (``_chain``) for ``plans`` against ``target``, as
    estimated before it runs: that of the main chain (``_pending_work``), or of the kill counts
    (``kill_counts.work``) or the last weapon's count expanded (``last_expanded.work``) where
    ``_chain`` takes them. Kept per (plans, target size)."""
    return _chain_method(tuple(plans), target.models, target.wounds)[1]


@lru_cache(maxsize=1024)
def _chain_method(plans: tuple["_Plan", ...], models: int, wounds: int) -> tuple[str, int]:
    """(how ``_chain`` resolves ``plans``: ``_chain_by``, its work) (kept: plans are compared by
    identity and each kept plan is made once per weapon, target and context)."""
    target = _sized_target(models, wounds)
    # the kill counts read each plan's events as streams (``_streams``): not a re-rolled Damage roll
    if _pending_groups(plans, target) >= 1 and all(plan.damage_reroll is None for plan in plans):
        options = [(_pending_work(plans, target), "pending counts"), (_kill_counts_work(plans, target), "kill counts")]
        if _pending_groups(plans, target) >= 2:
            options.append((_last_expanded_work(plans, target), "last expanded"))
        work, method = min(options, key=lambda option: option[0])
        return method, work
    return "pending counts", _pending_work(plans, target)


def _last_expanded_work(plans: Sequence["_Plan"], target: Target) -> int:
    """The work of ``last_expanded.allocate`` for ``plans`` in multiply-adds of the main chain
    (as ``_kill_counts_work``); far over any limit where it does not apply."""
    from pipeline.engine import last_expanded

    return last_expanded.work(_streams(plans), target.models, target.wounds) // kill_counts.STEPS_PER_MULTIPLY_ADD


def _pending_work(plans: Sequence["_Plan"], target: Target) -> int:
    """Multiply-adds of the main chain (pending counts of ``_chain``) for ``plans`` against ``target``, as
    estimated before it runs, from the supports of the counts (no distribution is built): per
    weapon, its events (or hits, or attacks, after ``_truncated``) times the cells of the chain
    tensor times the cost of one product by a transition per cell (the states for a dense
    product, the damage values for a banded one; powers by doubling add ``log2(events)``
    squarings, ``states^3``); with Devastating Wounds the pending count it adds (at most the cap
    of ``_mortal_events``, or added to the previous weapon's when their devastating events are
    the same) and the final contraction. Linear in the attacks of each weapon."""
    states = target.models * target.wounds + 1
    dense = states <= DENSE_STATES
    pending: list[tuple[int, np.ndarray]] = []
    work = 0
    for plan in plans:
        per_cell = states if dense else _trim(plan.normal_damage).size
        cells = math.prod(int(size) for size, _ in pending)
        if plan.joint is None:
            events = _truncated(plan.stages["unsaved"]).size - 1
            if cells == 1 and dense:
                work += events * states * states + events.bit_length() * states ** 3
            else:
                work += events * cells * states * per_cell
            continue
        count = _truncated(plan.joint.count)
        units = count.size - 1
        p_nonzero, D, cap = _mortal_events(plan.mortal_damage, target)
        outcome = _thinned(plan.joint.outcome, p_nonzero)
        rows, cols = outcome.shape
        size = int(_pending_size(count.tobytes(), outcome.tobytes(), outcome.shape, cap))
        if pending and _same_events(pending[-1][1], D):
            fold = pending[-1][0]
            size = min(cap, size + fold - 1)
            work += units * (cells // fold) * size * states * (rows * per_cell + rows * cols)
            pending[-1] = (size, D)
        else:
            if plan.joint.split:
                work += units * cells * states * per_cell + units * size * cells * states
            else:
                work += units * size * cells * states * (rows * per_cell + rows * cols)
            pending.append((size, D))
        cells = math.prod(int(size) for size, _ in pending)
        work += cells * states * states + size.bit_length() * states ** 3
    return work


#: How far under ``MAX_ENGINE_WORK`` the bound of ``_chain_work_bound`` must be for the check to
#: skip the estimate (room for the estimate's own terms to change).
_BOUND_MARGIN = 64


def _chain_work_bound(plans: Sequence["_Plan"], target: Target) -> int:
    """An upper bound of ``chain_work`` from the sizes of the plans' counts alone (no count is
    cut, no pending size is worked out): every count at its full support, every pending count at
    the most the chain can carry (``models x wounds``, the cap of ``_mortal_events`` when the least
    damage is 1), every product dense or banded at its larger cost. A few integer operations per
    weapon, so that the work check of a small attack costs next to nothing (``_check_chain_work``).

    >>> from pipeline.normalise.characteristics import dice
    >>> w = Weapon(name="w", attacks=dice("2"), skill=3, strength=4, armour_penetration=0, damage=dice("1"), models=5)
    >>> t = Target(toughness=4, save=3, wounds=2, models=10)
    >>> plan = _plan(w, t, Context(), [], {})
    >>> _chain_work_bound([plan], t) >= chain_work([plan], t)
    True
    """
    states = target.models * target.wounds + 1
    cells, work = 1, 0
    for plan in plans:
        per_cell = max(states, plan.normal_damage.size, plan.mortal_damage.size)
        if plan.joint is None:
            events = plan.stages["unsaved"].size
            work += events * cells * states * per_cell + events.bit_length() * states ** 3
            continue
        units = plan.joint.count.size
        rows, cols = plan.joint.outcome.shape
        work += units * cells * states * (states * (rows * per_cell + rows * cols) + per_cell)
        cells *= states
        work += cells * states * states + states.bit_length() * states ** 3
    return work


def _check_chain_work(plans: Sequence["_Plan"], target: Target) -> None:
    if _chain_work_bound(plans, target) * _BOUND_MARGIN <= limits.MAX_ENGINE_WORK:
        return  # far under the limit whatever the estimate: not worked out
    work = chain_work(plans, target)
    if work > limits.MAX_ENGINE_WORK:
        raise EngineInputError(
            f"this attack needs about {work:.2g} steps of the exact engine: at most {limits.MAX_ENGINE_WORK:.2g} "
            f"in one attack ({len(plans)} weapon profile{'s' if len(plans) > 1 else ''} against "
            f"{target.models} x W{target.wounds}); "
            "resolve fewer weapons or models at once, a smaller target, or simulate it (pipeline.engine.simulate.simulate)"
        )


def _faces(faces: tuple[int, ...]) -> str:
    return ", ".join(str(f) for f in faces) + ("s" if len(faces) == 1 else "")


def _fmt(probs) -> str:
    """Probabilities to 4 decimals, comma-separated.

    >>> _fmt((0.5, 1 / 3, 0.0))
    '0.5000, 0.3333, 0.0000'
    """
    return ", ".join(["%.4f" % p for p in probs])


def _damage_text(weapon: Weapon, target: Target, context: Context) -> str:
    text = f"Damage {weapon.damage.text}"
    if weapon.melta is not None and context.half_range:
        text += f" + Melta {weapon.melta.text}"
    if context.damage_reduction == "half":
        text += ", halved (rounding up)"
    if context.damage_reduction == "one":
        text += ", -1 Damage"
    if context.damage_modifier:
        text += f", {context.damage_modifier:+d} Damage"
    if context.damage_reduction or context.damage_modifier:
        text += " (minimum 1)"
    if target.feel_no_pain is not None:
        text += f"; Feel No Pain {target.feel_no_pain}+"
    if target.feel_no_pain_mortal is not None:
        text += f"; Feel No Pain {target.feel_no_pain_mortal}+ against mortal wounds"
    if target.feel_no_pain_psychic is not None:
        text += f"; Feel No Pain {target.feel_no_pain_psychic}+ against Psychic Attacks"
    return text
