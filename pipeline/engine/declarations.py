"""One declaration of each edition's attack rules, read by the exact engine and the simulator.

The rules are data in ``edition_rules.toml`` beside this module (each with its rule key, its
source and a quote of its wording; read through ``pipeline.toml_cache``), loaded once into
frozen records (``pipeline.frozen_record``: light frozen dataclasses): ``rules_for(edition)``
gives an ``EditionRules``. The code that
interprets them is here too, once for both engines: the wound table (``wound_roll_target``),
the order of modifiers and the characteristic limits (``apply_modifiers``, ``limit``), and the
meaning of each weapon ability (``weapon_ability``, ``grant_ability``: what "has the [LETHAL
HITS] ability" does to a ``Weapon``).

>>> rules_for(11).cover.effect, rules_for(10).cover.effect
('worsen-bs', 'improve-save')
>>> rules_for(11).hazardous.fails_on_at_most, rules_for(10).hazardous.fails_on_at_most
(2, 1)
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Literal, Sequence

from pipeline.frozen_record import FrozenRecord
from pipeline.errors import InputError
from pipeline.toml_cache import read_toml

RULES_FILE = Path(__file__).resolve().parent / "edition_rules.toml"

ModifierKind = Literal["set", "multiply", "add", "divide", "subtract"]
MODIFIER_KINDS: tuple[str, ...] = ("set", "multiply", "add", "divide", "subtract")


class Declared(FrozenRecord):
    """What every declared rule has: its rule key, its source and the quoted wording."""

    key: str
    source: str
    quote: str


class WoundRoll(Declared):
    #: (relation of Strength to Toughness, roll needed), most specific first
    table: tuple[tuple[str, int], ...]


class RollModifiers(Declared):
    cap: int


class ModifierOrder(Declared):
    #: the kinds in the order they apply; empty when the edition's sources do not state it
    order: tuple[str, ...]


class Limits(Declared):
    #: characteristic -> (lowest, highest) allowed after all modifiers (None: no limit)
    bounds: dict[str, tuple[int | None, int | None]]


class Cover(Declared):
    effect: Literal["improve-save", "worsen-bs"]
    amount: int
    #: 10th edition: no cover to a save of this or better against AP 0 (None: no exception)
    no_cover_for_save_at_most: int | None


class Stealth(Declared):
    effect: Literal["hit-roll-modifier", "benefit-of-cover"]
    amount: int


class Blast(Declared):
    per_five: Literal["one", "x"]


class Anti(Declared):
    duplicates: bool


class LethalHits(Declared):
    optional: bool


class TwinLinked(Declared):
    reroll: str
    #: the re-roll policy when fishing for Critical Wounds (any wound roll may be re-rolled)
    fishing: str


class Heavy(Declared):
    hit_modifier: int
    needs_unengaged: bool
    needs_not_set_up_this_turn: bool
    #: the most a model may have moved this turn (None: the unit Remained Stationary)
    moved_at_most_inches: float | None
    #: only in the attacker's own Shooting phase (not Fire Overwatch / snap shooting)
    own_shooting_phase_only: bool


class MortalWounds(Declared):
    after_normal_damage: bool


class RerollOne(Declared):
    policy: str


class Hazardous(Declared):
    roll_key: str
    name: str
    fails_on_at_most: int
    mortal_wounds: int
    mortal_wounds_monster_vehicle: int


class Psychic(Declared):
    ignores_harmful_modifiers: bool


class Overwatch(Declared):
    no_hit_rerolls: bool


class IndirectFire(Declared):
    hit_modifier: int
    fails_on_at_most: int
    fails_on_at_most_spotted: int
    no_hit_rerolls: bool
    cover: bool


class Cleave(Declared):
    supported: bool


class CloseQuarters(Declared):
    monster_vehicle_hit_modifier: int


class Damaged(Declared):
    hit_modifier: int


class DevastatingWounds(Declared):
    ends_attack_sequence: bool


class EditionRules(FrozenRecord):
    """The attack rules of one edition (``edition_rules.toml``, ``[edition.N]``)."""

    edition: int
    wording: str
    ordinal: str
    wound_roll: WoundRoll
    roll_modifiers: RollModifiers
    modifier_order: ModifierOrder
    limits: Limits
    cover: Cover
    stealth: Stealth
    blast: Blast
    anti: Anti
    lethal_hits: LethalHits
    twin_linked: TwinLinked
    hazardous: Hazardous
    psychic: Psychic
    overwatch: Overwatch
    indirect_fire: IndirectFire
    cleave: Cleave
    close_quarters: CloseQuarters
    damaged: Damaged
    devastating_wounds: DevastatingWounds
    heavy: Heavy
    mortal_wounds: MortalWounds
    reroll_one: RerollOne


class AbilityMeaning(FrozenRecord):
    """What a weapon ability does: the ``Weapon`` field it sets ("" for one that changes nothing
    in an attack), its parameter (``none``, ``dice``, ``count``, ``optional-count``,
    ``keyword-threshold``), its condition and effect in words, its 11th-edition section, and the
    editions that have it."""

    name: str
    field: str
    parameter: str
    condition: str
    effect: str
    section: str
    editions: tuple[int, ...] = (10, 11)


class OptionMeaning(FrozenRecord):
    """A situational option of an attack (a ``Context`` field) as condition -> effect."""

    name: str
    condition: str
    effect: str


_SECTIONS = {
    "wound_roll": WoundRoll, "roll_modifiers": RollModifiers, "modifier_order": ModifierOrder,
    "limits": Limits, "cover": Cover, "stealth": Stealth, "blast": Blast, "anti": Anti,
    "lethal_hits": LethalHits, "twin_linked": TwinLinked, "hazardous": Hazardous, "psychic": Psychic,
    "overwatch": Overwatch, "indirect_fire": IndirectFire, "cleave": Cleave,
    "close_quarters": CloseQuarters, "damaged": Damaged, "devastating_wounds": DevastatingWounds,
    "heavy": Heavy, "mortal_wounds": MortalWounds, "reroll_one": RerollOne,
}


def _none(value):
    return None if value == "" else value


def _section(cls, data: dict):
    data = dict(data)
    if cls is Limits:
        base = {k: data.pop(k) for k in ("key", "source", "quote")}
        return Limits(**base, bounds={name: (_none(lo), _none(hi)) for name, (lo, hi) in data.items()})
    if cls is WoundRoll:
        data["table"] = tuple((relation, needs) for relation, needs in data["table"])
    if cls is ModifierOrder:
        data["order"] = tuple(data["order"])
    if cls is Cover:
        data["no_cover_for_save_at_most"] = _none(data["no_cover_for_save_at_most"])
    if cls is Heavy:
        data["moved_at_most_inches"] = _none(data["moved_at_most_inches"])
    return cls(**data)


@lru_cache(maxsize=1)
def _load() -> tuple[dict[int, EditionRules], dict[str, AbilityMeaning], dict[str, OptionMeaning]]:
    data = read_toml(RULES_FILE)
    editions = {}
    for number, entry in data["edition"].items():
        sections = {name: _section(cls, entry[name]) for name, cls in _SECTIONS.items()}
        editions[int(number)] = EditionRules(edition=int(number), wording=entry["wording"],
                                             ordinal=entry["ordinal"], **sections)
    abilities = {name: AbilityMeaning(name=name, **{**entry, "editions": tuple(entry.get("editions", (10, 11)))})
                 for name, entry in data["ability"].items()}
    options = {name: OptionMeaning(name=name, **entry) for name, entry in data["option"].items()}
    return editions, abilities, options


def editions() -> tuple[int, ...]:
    """The editions declared (``(10, 11)``).

    >>> editions()
    (10, 11)
    """
    return tuple(sorted(_load()[0]))


def rules_for(edition: int) -> EditionRules:
    """The declared attack rules of ``edition`` (10 or 11), loaded once.

    Raises ``InputError`` for an edition that is not declared.

    >>> rules_for(11).blast.per_five
    'x'
    """
    try:
        return _load()[0][edition]
    except (KeyError, TypeError):
        raise InputError(f"edition {edition!r} has no declared attack rules; use one of "
                         f"{', '.join(str(e) for e in editions())}") from None


def weapon_ability(name: str) -> AbilityMeaning | None:
    """The meaning of a weapon ability by name (any case: ``"lethal hits"``), or None when the
    declaration does not know it.

    >>> weapon_ability("lethal hits").field
    'lethal_hits'
    >>> weapon_ability("PISTOL").field
    'close_quarters'
    """
    return _load()[1].get(" ".join(name.upper().replace("\u2011", "-").split()))


def situational_options() -> dict[str, OptionMeaning]:
    """The situational options of an attack (``Context`` fields) as condition -> effect."""
    return dict(_load()[2])


# ---------------------------------------------------------------------------------------------
# Interpreting the declarations


def wound_roll_target(strength: int, toughness: int, rules: EditionRules | None = None) -> int:
    """The wound roll needed from the declared Strength vs Toughness table (05.02 Wound Rolls;
    the 10th edition's table is the same).

    >>> [wound_roll_target(s, 4) for s in (8, 5, 4, 3, 2)]
    [2, 3, 4, 5, 6]
    """
    table = (rules or rules_for(11)).wound_roll.table
    for relation, needs in table:
        if _RELATIONS[relation](strength, toughness):
            return needs
    raise AssertionError(f"the wound table covers every S and T (S{strength} T{toughness})")


_RELATIONS = {
    "at-least-double": lambda s, t: s >= 2 * t,
    "greater": lambda s, t: s > t,
    "equal": lambda s, t: s == t,
    "at-most-half": lambda s, t: 2 * s <= t,
    "less": lambda s, t: s < t,
}


def capped(modifier: int, rules: EditionRules) -> int:
    """A net hit or wound roll modifier after the declared cap (+1/-1 in both editions).

    >>> capped(-3, rules_for(11)), capped(2, rules_for(10))
    (-1, 1)
    """
    cap = rules.roll_modifiers.cap
    return max(-cap, min(cap, modifier))


def limit(characteristic: str, value: int, rules: EditionRules) -> int:
    """``value`` of ``characteristic`` (``BS``, ``WS``, ``Sv``, ``InSv``, ``A``, ``S``, ``D``,
    ``AP``, ``T``) held within the edition's limits after all modifiers (11th edition, 02.02.01
    When modifying characteristics: "BS cannot be 1+ (or better) or 7+ (or worse)", "AP cannot
    be worse than 0", "A ... S ... D cannot be less than 1"). Roll targets are numbers (3 for 3+).
    A characteristic without a declared limit is returned unchanged.

    >>> r = rules_for(11)
    >>> limit("BS", 7, r), limit("BS", 1, r), limit("AP", 1, r), limit("D", 0, r), limit("Sv", 1, r)
    (6, 2, 0, 1, 2)
    >>> limit("BS", 7, rules_for(10))
    7
    """
    low, high = rules.limits.bounds.get(characteristic, (None, None))
    if low is not None:
        value = max(low, value)
    if high is not None:
        value = min(high, value)
    return value


class Modifier(FrozenRecord):
    """One modifier to a value: ``kind`` one of ``MODIFIER_KINDS``, ``amount`` its number
    (``set`` 3 changes the value to 3; ``multiply`` 2 doubles it; ``divide`` 2 halves it)."""

    kind: ModifierKind
    amount: int | Fraction


def apply_modifiers(value: int, modifiers: Sequence[Modifier], rules: EditionRules,
                    characteristic: str | None = None) -> int:
    """``value`` after ``modifiers`` in the edition's declared order, fractions rounded up, then
    held within the limits of ``characteristic`` (see ``limit``) when one is named.

    11th edition, 02.02.01 Applying modifiers: set, then multiplication, addition, division,
    subtraction, and "Round any fractions up after applying all modifiers". The 10th edition's
    order is not in the project's sources: modifiers of one kind (or additions with
    subtractions, whose order does not matter) are applied; other mixes raise ``InputError``.

    >>> r = rules_for(11)
    >>> apply_modifiers(2, [Modifier("add", 1), Modifier("multiply", 2)], r)  # (2 x 2) + 1
    5
    >>> apply_modifiers(3, [Modifier("divide", 2), Modifier("add", 1)], r)  # (3 + 1) / 2
    2
    >>> apply_modifiers(5, [Modifier("divide", 2)], r)  # 5/2 rounded up
    3
    >>> apply_modifiers(3, [Modifier("subtract", 1), Modifier("divide", 2)], r, "D")  # 3/2 - 1 = 1/2 -> 1
    1
    """
    for m in modifiers:
        if m.kind not in MODIFIER_KINDS:
            raise InputError(f"modifier kind {m.kind!r}: use one of {', '.join(MODIFIER_KINDS)}")
        if m.kind in ("multiply", "divide") and m.amount == 0:
            raise InputError(f"modifier {m.kind} 0: a multiplier or divisor must not be 0")
    order = rules.modifier_order.order
    if not order:
        kinds = {m.kind for m in modifiers}
        if len(kinds) > 1 and not kinds <= {"add", "subtract"}:
            raise InputError(f"the {rules.ordinal} edition's order of modifiers is not declared "
                             f"(edition_rules.toml); cannot combine {', '.join(sorted(kinds))}")
        order = MODIFIER_KINDS
    result = Fraction(value)
    for kind in order:
        for m in (m for m in modifiers if m.kind == kind):
            if kind == "set":
                result = Fraction(m.amount)
            elif kind == "multiply":
                result *= m.amount
            elif kind == "add":
                result += m.amount
            elif kind == "divide":
                result /= m.amount
            else:
                result -= m.amount
    rounded = math.ceil(result)
    return limit(characteristic, rounded, rules) if characteristic else rounded


def grant_ability(weapon, ability: str, *, replace: bool = True):
    """``weapon`` (a ``pipeline.engine.profiles.Weapon``) with the weapon ability ``ability`` as
    printed (``"LETHAL HITS"``, ``"SUSTAINED HITS 1"``, ``"ANTI-INFANTRY 4+"``, ``"LETHAL HITS:
    VEHICLE"``) added, read by the data's normaliser (``pipeline.normalise.weapon_abilities``)
    and given its meaning by the declaration (``weapon_ability``). An ability with a parameter
    the weapon already has is replaced when ``replace`` (24.02: duplicates are not cumulative;
    the attacker picks one) and kept otherwise; an Anti ability is added to the others.

    Raises ``InputError`` for an ability the declaration does not know or one missing its
    parameter.

    >>> from pipeline.engine.profiles import Weapon
    >>> w = Weapon.from_abilities(name="w", attacks="2", skill=3, strength=4, armour_penetration=0, damage="1")
    >>> grant_ability(w, "LETHAL HITS").lethal_hits, grant_ability(w, "SUSTAINED HITS 2").sustained_hits.text
    (True, '2')
    >>> grant_ability(w, "anti-vehicle 4+").anti
    (Anti(keyword='VEHICLE', threshold=4),)
    """
    from pipeline.normalise.weapon_abilities import parse_ability

    return grant_parsed(weapon, parse_ability(ability), replace=replace)


def grant_parsed(weapon, parsed, *, replace: bool = True, strict: bool = True):
    """``grant_ability`` for an ability already parsed (a ``ParsedWeaponAbility``). With
    ``strict=False`` (the data's abilities, ``Weapon.from_abilities``) an unknown ability or one
    missing its parameter is ignored and a [BLAST] of a dice value counts as [BLAST]."""
    from pipeline.engine.profiles import Anti as AntiAbility

    ability = parsed.raw_text
    meaning = weapon_ability(parsed.name)
    if meaning is None:
        if not strict:
            return weapon
        raise InputError(f"weapon ability {ability!r} is not declared (edition_rules.toml); known: "
                         + ", ".join(sorted(_load()[1])))
    if not meaning.field:
        return weapon
    changes: dict = {}
    if meaning.parameter == "keyword-threshold":
        if not parsed.target_keyword or not parsed.threshold:
            if not strict:
                return weapon
            raise InputError(f"weapon ability {ability!r}: write it as ANTI-KEYWORD X+ (ANTI-INFANTRY 4+)")
        changes["anti"] = weapon.anti + (AntiAbility(parsed.target_keyword, parsed.threshold),)
    elif meaning.parameter in ("dice", "count"):
        if parsed.value is None:
            if not strict:
                return weapon
            raise InputError(f"weapon ability {ability!r}: {parsed.name} needs its value ({parsed.name} 1)")
        if meaning.parameter == "count" and not parsed.value.is_fixed and not strict:
            return weapon
        value = parsed.value if meaning.parameter == "dice" else _count(parsed, ability)
        if replace or getattr(weapon, meaning.field) is None:
            changes[meaning.field] = value
    elif meaning.parameter == "optional-count":
        if replace or getattr(weapon, meaning.field) is None:
            fixed = parsed.value is not None and (parsed.value.is_fixed or strict)
            changes[meaning.field] = _count(parsed, ability) if fixed else 1
    else:
        changes[meaning.field] = True
    if meaning.field == "torrent":
        changes["skill"] = None
    if parsed.condition and meaning.parameter != "keyword-threshold":
        changes["conditions"] = weapon.conditions + ((meaning.field, parsed.condition),)
    return dataclasses.replace(weapon, **changes)


def _count(parsed, ability: str) -> int:
    if not parsed.value.is_fixed:
        raise InputError(f"weapon ability {ability!r}: {parsed.name} takes a whole number ({parsed.name} 1)")
    return parsed.value.modifier


def heavy_applies(weapon, context, rules: EditionRules) -> bool:
    """Whether [HEAVY]'s +1 to the hit roll applies to an attack of ``weapon`` (a ``Weapon``) under
    ``context`` (a ``Context``), as the edition declares it (``heavy``).

    10th edition (Heavy): the unit Remained Stationary this turn (``context.stationary``). 11th
    edition (24.16): in your Shooting phase (not snap shooting, ``context.overwatch``), the unit
    unengaged (not ``context.close_quarters``), not set up on the battlefield this turn
    (``context.set_up_this_turn``) and no model moved more than 3" (``context.stationary``, or
    ``context.moved_inches`` at most 3).

    >>> from pipeline.engine.profiles import Context, Weapon
    >>> w = Weapon.from_abilities(name="w", attacks="1", skill=4, strength=5, armour_penetration=0, damage="2",
    ...                           abilities=()); w = dataclasses.replace(w, heavy=True)
    >>> heavy_applies(w, Context(moved_inches=3), rules_for(10)), heavy_applies(w, Context(moved_inches=3), rules_for(11))
    (False, True)
    >>> heavy_applies(w, Context(edition=11, stationary=True, set_up_this_turn=True), rules_for(11))
    False
    """
    if not weapon.heavy or weapon.is_melee:
        return False
    rule = rules.heavy
    if rule.own_shooting_phase_only and context.overwatch:
        return False
    if rule.needs_unengaged and context.close_quarters:
        return False
    if rule.needs_not_set_up_this_turn and context.set_up_this_turn:
        return False
    if context.stationary:
        return True
    return (rule.moved_at_most_inches is not None and context.moved_inches is not None
            and context.moved_inches <= rule.moved_at_most_inches)


def reroll_one_weapon(weapons: Sequence, roll: str, context) -> int | None:
    """The index of the weapon whose failed ``roll`` (``hit``, ``wound`` or ``damage``) the unit's
    re-roll of one die (``Context.reroll_one_hit`` / ``_wound`` / ``_damage``) goes to, or None when none can
    take it. The policy (``reroll_one``): the first weapon, in the order given, that makes that
    roll and whose events the engine counts one attack at a time: one with a hit roll (not
    [TORRENT], not snap shooting or indirect shooting when the edition forbids re-rolls of hit
    rolls) for ``hit``; any for ``wound``; a random Damage for ``damage`` (the first roll below the
    mean of its dice is re-rolled: ``damage_reroll_below``); in all, not one whose rolls are re-rolled already
    (``reroll_hits``, ``reroll_wounds``, [TWIN-LINKED]: a die is re-rolled once), not a weapon with [DEVASTATING WOUNDS] or with
    mortal wounds on a critical (their events are allocated after the unit's, jointly). The
    re-roll is spent on one failed roll of that weapon if it has one (the count S of successes of
    its N rolls becomes S + Bernoulli(p) when S < N: 01.05, a die is re-rolled once, before
    modifiers).

    >>> from pipeline.engine.profiles import Context, Weapon
    >>> t = Weapon.from_abilities(name="t", attacks="1", skill=None, strength=4, armour_penetration=0, damage="1",
    ...                           abilities=()); t = dataclasses.replace(t, torrent=True)
    >>> b = Weapon.from_abilities(name="b", attacks="2", skill=3, strength=4, armour_penetration=0, damage="1")
    >>> reroll_one_weapon([t, b], "hit", Context()), reroll_one_weapon([t, b], "wound", Context())
    (1, 0)
    """
    rules = rules_for(context.edition)
    for i, w in enumerate(weapons):
        if w.devastating_wounds or w.mortal_wounds_on_critical_hit or w.mortal_wounds_on_critical_wound:
            continue
        if roll == "wound" and (context.reroll_wounds or w.twin_linked):
            continue  # its wound rolls are re-rolled already: a die is re-rolled at most once
        if roll == "damage" and (w.damage.dice_count == 0 or context.reroll_damage):
            continue  # a fixed Damage is no roll; every Damage roll is re-rolled already
        if roll == "hit":
            if w.torrent or w.skill is None or context.reroll_hits:
                continue
            if context.overwatch and rules.overwatch.no_hit_rerolls:
                continue
            if context.indirect and w.indirect_fire and not w.is_melee and rules.indirect_fire.no_hit_rerolls:
                continue
        return i
    return None


def damage_reroll_below(expr, policy: str = "below-mean") -> float:
    """The policy of a Damage re-roll (``Context.reroll_one_damage``, ``reroll_damage``): a Damage
    roll (a ``DiceExpr``, before modifiers) below this value is re-rolled: the mean of the dice
    (``below-mean``: a re-roll is expected to do better exactly when the roll is below the mean),
    or the dice's lowest roll plus 1/2 (``ones``: "re-roll a Damage roll of 1").

    >>> from pipeline.normalise.characteristics import dice
    >>> damage_reroll_below(dice("D6")), damage_reroll_below(dice("D3+1")), damage_reroll_below(dice("D6"), "ones")
    (3.5, 3.0, 1.5)
    """
    if policy == "ones":
        return min(expr.distribution()) + 0.5
    return float(sum(value * p for value, p in expr.distribution().items()))
