"""Effects turned into the engine's inputs: weapons, target, context -> new weapons, target, context.

``apply_effects`` takes ``effects`` rows (``schemas.records.Effect``) and the attack as the engine
sees it (``pipeline.engine.profiles``: ``Weapon``, ``Target``, ``Context``, and the phase) and
gives the changed inputs with one ``AppliedEffect`` per effect saying what it did, or why it was
not applied (a condition the attack does not meet, a ``situational:`` condition the request
cannot state, an option not chosen, or an effect the engine does not model). Conditions are
evaluated against the request: phase, ``half_range``, ``charged``, ``stationary``, the target's
and the attacker's keywords, the weapon's abilities (``pipeline.effects.vocabulary``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

from pipeline.effects.vocabulary import split_conditions
from pipeline.engine.declarations import grant_ability
from pipeline.engine.profiles import Context, Target, Weapon, keyword_condition_holds
from pipeline.errors import InputError
from pipeline.normalise.characteristics import dice
from schemas.records import Effect
from schemas.dice import DiceExpr

_REROLL_RANK = {None: 0, "ones": 1, "failed": 2, "all": 3}
#: The weapon abilities that act only on a Critical Hit / a Critical Wound.
_ON_CRITICAL = {"critical-hit": frozenset({"LETHAL HITS", "SUSTAINED HITS"}),
                "critical-wound": frozenset({"DEVASTATING WOUNDS"})}
#: A weapon ability of a ``weapon:`` condition and whether a weapon has it.
_HAS_ABILITY = {"RAPID FIRE": lambda w: w.rapid_fire is not None, "TORRENT": lambda w: w.torrent or w.skill is None,
                "HEAVY": lambda w: w.heavy, "LANCE": lambda w: w.lance, "MELTA": lambda w: w.melta is not None,
                "BLAST": lambda w: w.blast is not None, "PSYCHIC": lambda w: w.psychic}


@dataclass(frozen=True)
class AppliedEffect:
    """One effect of a named rule and what it did to the attack (``applied`` False: ``did`` says why not)."""

    rule_kind: str
    rule_name: str
    origin: str
    source_id: str
    locator: str
    wording: str
    did: str
    applied: bool


def _describe(e: Effect) -> str:
    """The effect in words.

    >>> _describe(Effect(source_id="s", locator="l", rule_table="t", rule_id="i", rule_kind="order",
    ...     rule_name="Take Aim!", edition=11, faction_id=None, position=0, side="attacker",
    ...     effect="modify-characteristic", roll=None, characteristic="BS", value=1, parameter=None,
    ...     weapon_type="ranged", conditions=None, wording="w", origin="reader"))
    'improve BS by 1 (ranged)'
    """
    what = {
        "modify-roll": f"{e.value:+d} to the {e.roll} roll" if e.value is not None else "modify a roll",
        "modify-characteristic": (f"{'improve' if (e.value or 0) > 0 else 'worsen'} {e.characteristic} by "
                                  f"{abs(e.value or 0)}" + (f" (not better than {e.parameter})" if e.parameter else "")),
        "set-characteristic": f"{e.characteristic} is {e.value}",
        "reroll": f"re-roll {e.parameter} {e.roll or ''} rolls".replace("  ", " "),
        "critical-on": f"Critical {'Hits' if e.roll == 'hit' else 'Wounds'} on {e.value}+",
        "extra-hits": f"{e.parameter} extra hits on a Critical Hit", "auto-wound": "Critical Hits wound automatically",
        "mortal-wounds": f"{e.parameter} mortal wounds", "feel-no-pain": f"Feel No Pain {e.value}+ ({e.parameter})",
        "damage-reduction": "-1 Damage" if e.parameter == "one" else "halve Damage",
        "invulnerable-save": f"{e.value}+ invulnerable save", "grant-ability": f"[{e.parameter}]",
        "ignore-modifiers": f"ignore modifiers to {e.parameter}", "benefit-of-cover": "the Benefit of Cover",
        "stealth": "Stealth", "hit-on": f"hits only on an unmodified {e.value}",
    }.get(e.effect, e.effect)
    return what + (f" ({e.weapon_type})" if e.weapon_type else "") + (f" [{e.conditions}]" if e.conditions else "")


def _fixed(expr: DiceExpr, add: int) -> DiceExpr:
    """A dice expression with ``add`` more (at least 1 in all).

    >>> _fixed(dice("D6"), 1).text, _fixed(dice("2"), -3).text
    ('D6+1', '1')
    """
    modifier = expr.modifier + add
    if expr.dice_count == 0:
        value = max(1, modifier)
        return DiceExpr(text=str(value), dice_count=0, dice_sides=0, modifier=value)
    base = f"{'' if expr.dice_count == 1 else expr.dice_count}D{expr.dice_sides}"
    return DiceExpr(text=base + (f"{modifier:+d}" if modifier else ""), dice_count=expr.dice_count,
                    dice_sides=expr.dice_sides, modifier=modifier)


def _grant(weapon: Weapon, printed: str) -> tuple[Weapon, str | None]:
    """The weapon with an ability added by the declaration's ``grant_ability`` (``LETHAL HITS``,
    ``SUSTAINED HITS 1``, ``ANTI-INFANTRY 4+``), or the weapon unchanged and why (an ability the
    declaration does not know, or gives no meaning in the engine).

    >>> from pipeline.engine.profiles import Weapon
    >>> w = Weapon(name="Boltgun", attacks=dice("2"), skill=3, strength=4, armour_penetration=0, damage=dice("1"))
    >>> _grant(w, "SUSTAINED HITS 1")[0].sustained_hits.text, _grant(w, "ASSAULT")[1]
    ('1', '[ASSAULT] does not change an attack the engine resolves')
    """
    try:
        new = grant_ability(weapon, printed, replace=False)
    except InputError as exc:
        return weapon, f"[{printed}] is not read by the engine's declarations ({exc})"
    return new, None if new != weapon else f"[{printed}] does not change an attack the engine resolves"


@dataclass
class _Attack:
    weapons: list[Weapon]
    target: Target
    context: Context
    phase: str


def _holds(e: Effect, attack: _Attack, choices: Sequence[str]) -> str | None:
    """None when the effect's conditions hold for the attack, else why not."""
    c = attack.context
    for name, value in split_conditions(e.conditions):
        if name == "situational":
            return f"not applied: it holds only {value!r}, which the request cannot state"
        if name == "choice" and value.upper() not in {x.upper() for x in choices}:
            return f"not applied: an option of a choice (give --with 'NAME: {value}' to pick it)"
        if name == "phase" and value != attack.phase:
            return f"not applied: {value} phase only"
        if name in ("half-range", "charged", "stationary") and not getattr(c, name.replace("-", "_")):
            return f"not applied: only when {name} (--{name})"
        if name == "target" and not keyword_condition_holds(value, attack.target.keywords):
            return f"not applied: the target is not {value}"
        if name == "attacker" and not keyword_condition_holds(value, c.attacker_keywords):
            return f"not applied: the attacker is not {value}"
        if name in ("critical-hit", "critical-wound") and not _acts_on_critical_only(e, name) and e.effect != "mortal-wounds":
            return f"not applied: an effect on a {name.replace('-', ' ')} only is not modelled by the engine"
    if e.weapon_type and e.effect not in ("modify-characteristic", "set-characteristic", "grant-ability", "mortal-wounds"):
        if (e.weapon_type == "ranged") != (attack.phase == "shooting"):
            return f"not applied: {e.weapon_type} attacks only"
    return None


def _acts_on_critical_only(e: Effect, condition: str) -> bool:
    """Whether an effect given "on a Critical Hit" (or Wound) is the same effect given always: an
    ability that acts on that Critical roll only ([LETHAL HITS], [SUSTAINED HITS] on a Critical
    Hit, [DEVASTATING WOUNDS] on a Critical Wound; core rules 24, either edition).

    >>> e = Effect(source_id="s", locator="l", rule_table="t", rule_id="i", rule_kind="stratagem",
    ...     rule_name="r", edition=10, faction_id=None, position=0, side="attacker", effect="grant-ability",
    ...     roll=None, characteristic=None, value=None, parameter="LETHAL HITS", weapon_type=None,
    ...     conditions="critical-hit", wording="w", origin="reader")
    >>> _acts_on_critical_only(e, "critical-hit"), _acts_on_critical_only(e, "critical-wound")
    (True, False)
    """
    if e.effect != "grant-ability" or not e.parameter:
        return False
    from pipeline.normalise.weapon_abilities import parse_ability

    return parse_ability(e.parameter).name in _ON_CRITICAL[condition]


def _ignores_hit_modifiers(e: Effect) -> bool:
    """Whether an ``ignore-modifiers`` effect of the attacker covers the hit roll (its BS/WS and
    hit roll modifiers: the engine's ``Context.ignore_hit_modifiers``).

    >>> e = Effect(source_id="s", locator="l", rule_table="t", rule_id="i", rule_kind="stratagem",
    ...     rule_name="r", edition=10, faction_id=None, position=0, side="attacker", effect="ignore-modifiers",
    ...     roll=None, characteristic=None, value=None, parameter="that attack's Ballistic Skill characteristic "
    ...     "and/or any or all modifiers to the Hit roll", weapon_type=None, conditions=None, wording="w",
    ...     origin="reader")
    >>> _ignores_hit_modifiers(e), _ignores_hit_modifiers(e.model_copy(update={"parameter": "the Move"}))
    (True, False)
    """
    return e.side == "attacker" and "hit roll" in (e.parameter or "").lower()


def _ignores_wound_modifiers(e: Effect) -> bool:
    """Whether an ``ignore-modifiers`` effect of the attacker covers the wound roll ("the Hit roll
    and/or the Wound roll", "any roll or test made for it (excluding modifiers to saving throws)").

    >>> e = Effect(source_id="s", locator="l", rule_table="t", rule_id="i", rule_kind="stratagem",
    ...     rule_name="r", edition=10, faction_id=None, position=0, side="attacker", effect="ignore-modifiers",
    ...     roll=None, characteristic=None, value=None, parameter="the Hit roll and/or the Wound roll",
    ...     weapon_type=None, conditions=None, wording="w", origin="reader")
    >>> _ignores_wound_modifiers(e), _ignores_wound_modifiers(e.model_copy(update={"parameter": "the Hit roll"}))
    (True, False)
    """
    text = (e.parameter or "").lower()
    return e.side == "attacker" and ("wound roll" in text or "any roll" in text)


def _ignores_skill_modifiers(e: Effect) -> bool:
    """Whether an ``ignore-modifiers`` effect of the attacker covers its BS/WS ("that attack's
    Ballistic Skill characteristic") without the hit roll (``_ignores_hit_modifiers`` covers both).

    >>> e = Effect(source_id="s", locator="l", rule_table="t", rule_id="i", rule_kind="stratagem",
    ...     rule_name="r", edition=11, faction_id=None, position=0, side="attacker", effect="ignore-modifiers",
    ...     roll=None, characteristic=None, value=None, parameter="the following: that attack's Ballistic Skill "
    ...     "characteristic", weapon_type=None, conditions=None, wording="w", origin="reader")
    >>> _ignores_skill_modifiers(e), _ignores_skill_modifiers(e.model_copy(update={"parameter": "the Move"}))
    (True, False)
    """
    text = (e.parameter or "").lower()
    return e.side == "attacker" and ("ballistic skill" in text or "weapon skill" in text)


_SUFFERS = re.compile(r"\b(?:the\s+target(?:\s+unit)?|that\s+(?:enemy\s+)?unit|the\s+enemy\s+unit|that\s+target)"
                      r"\s+suffers\b", re.I)
_ON_A = re.compile(r"\bon\s+a\s+([2-6])\+", re.I)


def _mortal_wounds(e: Effect, attack: _Attack) -> tuple[str, bool]:
    """A rule's mortal wounds applied to the attack: on a Critical Hit / Critical Wound (the
    ``critical-hit`` / ``critical-wound`` condition) as weapon inputs, otherwise once, after the
    attack (``Context.mortal_wounds_after``, "on a N+" read from the wording when it says so).
    Only mortal wounds the attack's target suffers ("the target suffers", "that enemy unit
    suffers"); 11th edition 06.02: they are resolved after the normal damage."""
    if e.side != "attacker" or not _SUFFERS.search(e.wording or ""):
        return "not applied: the mortal wounds are not the attack's target's (or the wording does not say so)", False
    try:
        amount = dice(e.parameter or "1")
    except (InputError, ValueError):
        return f"not applied: {e.parameter!r} is not a number of mortal wounds the engine reads", False
    terms = {name for name, _ in split_conditions(e.conditions)}
    field = ("mortal_wounds_on_critical_hit" if "critical-hit" in terms else
             "mortal_wounds_on_critical_wound" if "critical-wound" in terms else None)
    if field is None:
        if e.weapon_type and (e.weapon_type == "ranged") != (attack.phase == "shooting"):
            return f"not applied: {e.weapon_type} attacks only", False
        on = _ON_A.search(e.wording[: _SUFFERS.search(e.wording).start()])
        needed = int(on.group(1)) if on else None
        attack.context = replace(attack.context, mortal_wounds_after=attack.context.mortal_wounds_after
                                 + ((needed, amount),))
        return ("applied: " + (f"on a {needed}+, " if needed else "") + f"{amount.text} mortal wounds after the attack"), True
    changed = []
    for i, w in enumerate(attack.weapons):
        if not _weapon_matches(e, w):
            continue
        if w.devastating_wounds:
            return (f"not applied: {w.name} has [DEVASTATING WOUNDS]; mortal wounds on a critical are not modelled "
                    "with it"), False
        attack.weapons[i] = replace(w, **{field: amount})
        changed.append(w.name)
    if not changed:
        return "not applied: no weapon of the attack it applies to", False
    return "applied to " + ", ".join(dict.fromkeys(changed)), True


def _weapon_matches(e: Effect, w: Weapon) -> bool:
    if e.weapon_type and (e.weapon_type == "melee") != w.is_melee:
        return False
    if e.characteristic == "BS" and w.is_melee or e.characteristic == "WS" and not w.is_melee:
        return False
    for name, value in split_conditions(e.conditions):
        if name == "weapon" and not _HAS_ABILITY.get(value, lambda _w: False)(w):
            return False
    return True


def _on_weapons(e: Effect, attack: _Attack) -> str:
    changed = []
    why = None
    for i, w in enumerate(attack.weapons):
        if not _weapon_matches(e, w):
            continue
        new = w
        v = e.value or 0
        char = e.characteristic
        if e.effect == "grant-ability":
            new, why = _grant(w, e.parameter or "")
        elif e.effect == "modify-characteristic" and char in ("BS", "WS"):
            new = replace(w, skill=None if w.skill is None else max(2, min(6, w.skill - v)))
        elif e.effect == "modify-characteristic" and char == "S":
            new = replace(w, strength=max(1, w.strength + v))
        elif e.effect == "modify-characteristic" and char == "AP":
            new = replace(w, armour_penetration=min(0, w.armour_penetration - v))
        elif e.effect == "modify-characteristic" and char == "A":
            new = replace(w, attacks=_fixed(w.attacks, v))
        elif e.effect == "modify-characteristic" and char == "D":
            new = replace(w, damage=_fixed(w.damage, v))
        elif e.effect == "set-characteristic" and char in ("BS", "WS"):
            new = replace(w, skill=None if w.skill is None else e.value)
        elif e.effect == "set-characteristic" and char == "S":
            new = replace(w, strength=e.value)
        elif e.effect == "set-characteristic" and char in ("A", "D") and e.value:
            new = replace(w, **{"attacks" if char == "A" else "damage": dice(str(e.value))})
        elif e.effect == "extra-hits" and w.sustained_hits is None:
            new = replace(w, sustained_hits=dice(e.parameter or "1"))
        elif e.effect == "auto-wound":
            new = replace(w, lethal_hits=True)
        if new != w:
            attack.weapons[i] = new
            changed.append(w.name)
    if changed:
        return "applied to " + ", ".join(dict.fromkeys(changed))
    return "not applied: " + (why or "no weapon of the attack it applies to changes")


def _apply_one(e: Effect, attack: _Attack, choices: Sequence[str]) -> tuple[str, bool]:
    why_not = _holds(e, attack, choices)
    if why_not:
        return why_not, False
    c, t, v = attack.context, attack.target, e.value or 0
    if e.effect in ("grant-ability", "extra-hits", "auto-wound") or (
            e.effect in ("modify-characteristic", "set-characteristic") and e.characteristic not in ("T", "Sv")):
        did = _on_weapons(e, attack)
        return did, did.startswith("applied")
    if e.effect == "modify-characteristic" and e.characteristic == "T":
        attack.target = replace(t, toughness=max(1, t.toughness + v))
    elif e.effect in ("modify-characteristic", "set-characteristic") and e.characteristic == "Sv":
        if t.save is None:
            return "not applied: the target has no armour save", False
        new = e.value if e.effect == "set-characteristic" else t.save - v
        bound = int(e.parameter[0]) if e.parameter and e.parameter[0].isdigit() else 2
        attack.target = replace(t, save=min(t.save, max(bound, new)) if v > 0 or e.effect == "set-characteristic"
                                else min(7, new))
    elif e.effect == "modify-roll" and e.roll in ("hit", "wound"):
        field = "hit_modifier" if e.roll == "hit" else "wound_modifier"
        attack.context = replace(c, **{field: getattr(c, field) + v})
    elif e.effect == "reroll" and e.roll in ("hit", "wound") and e.parameter in ("ones", "failed", "all"):
        field = "reroll_hits" if e.roll == "hit" else "reroll_wounds"
        if _REROLL_RANK[e.parameter] > _REROLL_RANK[getattr(c, field)]:
            attack.context = replace(c, **{field: e.parameter})
    elif e.effect == "critical-on" and e.roll in ("hit", "wound") and e.value:
        field = "critical_hit_on" if e.roll == "hit" else "critical_wound_on"
        attack.context = replace(c, **{field: min(getattr(c, field), e.value)})
    elif e.effect == "feel-no-pain" and e.value:
        field = {"mortal-wounds": "feel_no_pain_mortal", "psychic": "feel_no_pain_psychic"}.get(e.parameter or "",
                                                                                              "feel_no_pain")
        current = getattr(t, field)
        attack.target = replace(t, **{field: e.value if current is None else min(current, e.value)})
    elif e.effect == "invulnerable-save" and e.value:
        current = t.invulnerable_save
        attack.target = replace(t, invulnerable_save=e.value if current is None else min(current, e.value))
    elif e.effect == "damage-reduction" and e.parameter in ("one", "half"):
        if c.damage_reduction != "half":
            attack.context = replace(c, damage_reduction=e.parameter)  # type: ignore[arg-type]
    elif e.effect == "benefit-of-cover":
        if attack.phase != "shooting":
            return "not applied: the Benefit of Cover is against ranged attacks", False
        attack.context = replace(c, cover=True)
    elif e.effect == "stealth":
        attack.target = replace(t, stealth=True)
    elif e.effect == "hit-on" and e.value == 6:
        attack.context = replace(c, overwatch=True)
    elif e.effect == "ignore-modifiers" and (_ignores_hit_modifiers(e) or _ignores_wound_modifiers(e)
                                            or _ignores_skill_modifiers(e)):
        attack.context = replace(c, ignore_hit_modifiers=c.ignore_hit_modifiers or _ignores_hit_modifiers(e),
                                 ignore_wound_modifiers=c.ignore_wound_modifiers or _ignores_wound_modifiers(e),
                                 ignore_skill_modifiers=c.ignore_skill_modifiers or _ignores_skill_modifiers(e))
    elif e.effect == "reroll" and e.parameter == "one" and e.roll in ("hit", "wound"):
        attack.context = replace(c, **{f"reroll_one_{e.roll}": True})
    elif e.effect == "mortal-wounds":
        return _mortal_wounds(e, attack)
    elif e.effect == "reroll" and e.roll == "damage":
        if not any(w.damage.dice_count for w in attack.weapons if _weapon_matches(e, w)):
            return "not applied: no weapon of the attack has a random Damage to re-roll", False
        if e.parameter == "one":
            attack.context = replace(c, reroll_one_damage=True)
            return "applied: the first Damage roll below the mean of the Damage dice is re-rolled", True
        policy = "ones" if e.parameter == "ones" else "below-mean"
        if c.reroll_damage != "below-mean":
            attack.context = replace(c, reroll_damage=policy)
        return ("applied: each Damage roll " + ("of 1" if policy == "ones" else "below the mean of the Damage dice")
                + " is re-rolled"), True
    else:
        return f"not applied: {_describe(e)} is not modelled by the engine", False
    return "applied", True


def apply_effects(effects: Iterable[Effect], weapons: Sequence[Weapon], target: Target, context: Context,
                  phase: str, choices: Sequence[str] = ()) -> tuple[list[Weapon], Target, Context, list[AppliedEffect]]:
    """Apply ``effects`` in order to an attack made in ``phase`` (``shooting`` or ``fight``).
    ``choices``: the options picked for rules that offer a choice (``LETHAL HITS``).

    Returns (weapons, target, context, one ``AppliedEffect`` per effect). The same effect printed
    twice by one rule (one sentence for each of two units) is applied once. Characteristic limits:
    BS/WS 2+ to 6+, AP at most 0, S, A and D at least 1, a Save not better than the bound printed.

    >>> from pipeline.engine.profiles import Context, Target, Weapon
    >>> bolt = Weapon(name="Boltgun", attacks=dice("2"), skill=4, strength=4, armour_penetration=0, damage=dice("1"))
    >>> aim = Effect(source_id="s", locator="l", rule_table="rule_texts", rule_id="i", rule_kind="order",
    ...     rule_name="Take Aim!", edition=11, faction_id=None, position=0, side="attacker",
    ...     effect="modify-characteristic", roll=None, characteristic="BS", value=1, parameter=None,
    ...     weapon_type="ranged", conditions=None, wording="Improve the Ballistic Skill ...", origin="reader")
    >>> w, t, c, notes = apply_effects([aim], [bolt], Target(toughness=4, save=3, wounds=2), Context(), "shooting")
    >>> w[0].skill, notes[0].did
    (3, 'improve BS by 1 (ranged): applied to Boltgun')
    """
    attack = _Attack(list(weapons), target, context, phase)
    out: list[AppliedEffect] = []
    seen: set[tuple] = set()
    for e in effects:
        same = (e.rule_table, e.rule_id, e.effect, e.roll, e.characteristic, e.value, e.parameter, e.weapon_type,
                e.conditions)
        if same in seen:
            continue
        seen.add(same)
        did, applied = _apply_one(e, attack, choices)
        out.append(AppliedEffect(e.rule_kind, e.rule_name, e.origin, e.source_id, e.locator, e.wording,
                                 f"{_describe(e)}: {did}", applied))
    return attack.weapons, attack.target, attack.context, out


def effect_from_row(row: dict) -> Effect:
    """An ``Effect`` from a row of the ``effects`` table (a dict of its columns)."""
    return Effect(**{f: row[f] for f in Effect.model_fields})

