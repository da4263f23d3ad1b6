"""Inputs of the attack engine and the simulator: weapons, targets and the attack context.

These are plain frozen dataclasses with no database behind them; ``pipeline.engine.inputs``
builds them from database rows, standard profiles and inline profiles. Both the exact engine
(``pipeline.engine.exact``) and the Monte Carlo simulator (``pipeline.engine.simulate``) read
only these types.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Iterable, Literal

from pipeline.normalise.characteristics import dice
from pipeline.normalise.weapon_abilities import ParsedWeaponAbility
from schemas.dice import DiceExpr

Reroll = Literal["ones", "failed", "all"]
DamageReduction = Literal["one", "half"]


@dataclass(frozen=True)
class Anti:
    """ANTI-KEYWORD X+: against a target with ``keyword``, a wound roll of ``threshold``+ is critical."""

    keyword: str
    threshold: int


@dataclass(frozen=True)
class Weapon:
    """One weapon profile as fired by ``models`` models of the attacking unit.

    ``skill``: Ballistic Skill or Weapon Skill as a roll target (3 for ``3+``); None for a Torrent
    weapon (no hit roll). ``armour_penetration`` is 0 or negative (``-1`` for AP -1).
    Parameters of abilities: ``sustained_hits`` X (dice, e.g. D3), ``rapid_fire`` X,
    ``melta`` X, ``blast`` X (1 for a plain [BLAST]; the 10th edition adds 1 attack per five
    target models whatever X, the 11th edition adds X).
    """

    name: str
    attacks: DiceExpr
    skill: int | None
    strength: int
    armour_penetration: int
    damage: DiceExpr
    is_melee: bool = False
    models: int = 1
    sustained_hits: DiceExpr | None = None
    lethal_hits: bool = False
    devastating_wounds: bool = False
    anti: tuple[Anti, ...] = ()
    torrent: bool = False
    twin_linked: bool = False
    rapid_fire: DiceExpr | None = None
    blast: int | None = None
    melta: DiceExpr | None = None
    heavy: bool = False
    lance: bool = False
    ignores_cover: bool = False
    hazardous: bool = False
    psychic: bool = False
    precision: bool = False
    #: Abilities that hold only against some targets (11th edition, e.g. ``[LETHAL HITS: VEHICLE]``):
    #: (field name, condition as printed); see ``against``.
    conditions: tuple[tuple[str, str], ...] = ()
    #: 11th edition [CLEAVE X] (24.06): X extra attack dice per five target models (one target)
    cleave: int | None = None
    #: [INDIRECT FIRE] (24.19): its effect applies when the attack fires indirectly (``Context.indirect``)
    indirect_fire: bool = False
    #: [CLOSE-QUARTERS] or [PISTOL] (24.07, 24.27): no -1 to hit in close-quarters shooting
    close_quarters: bool = False
    #: a rule's "each time an attack scores a Critical Hit (Wound), the target suffers X mortal
    #: wounds" (``pipeline.effects``): X (dice) mortal wounds per Critical Hit / Critical Wound, in
    #: addition to the attack, inflicted after the unit's normal damage (see ``pipeline.engine.exact``)
    mortal_wounds_on_critical_hit: DiceExpr | None = None
    mortal_wounds_on_critical_wound: DiceExpr | None = None

    def against(self, keywords: frozenset[str]) -> tuple["Weapon", tuple[tuple[str, str], ...]]:
        """This weapon as it attacks a target with ``keywords`` (upper case): each ability of
        ``conditions`` whose condition the target does not meet is taken off. Returns the weapon
        and, per conditional ability, (its field name, a note saying whether it applies).

        11th edition, weapon abilities restricted to a keyword ("LETHAL HITS: VEHICLE": the
        ability applies against VEHICLE targets; "non-MONSTER/VEHICLE": against targets that are
        neither).

        >>> from schemas.dice import DiceExpr
        >>> one = DiceExpr(text="1", dice_count=0, dice_sides=0, modifier=1)
        >>> w = Weapon(name="w", attacks=one, skill=4, strength=4, armour_penetration=0, damage=one,
        ...            lethal_hits=True, conditions=(("lethal_hits", "VEHICLE"),))
        >>> w.against(frozenset({"INFANTRY"}))[0].lethal_hits, w.against(frozenset({"VEHICLE"}))[0].lethal_hits
        (False, True)
        """
        if not self.conditions:
            return self, ()
        off: dict[str, object] = {}
        notes = []
        defaults = {f.name: f.default for f in fields(self)}
        for name, condition in self.conditions:
            holds = keyword_condition_holds(condition, keywords)
            label = name.replace("_", " ").upper()
            notes.append((name, f"{self.name}: [{label}: {condition}] "
                         + ("applies: the target meets its condition" if holds else
                            "not applied: the target does not meet its condition")))
            if not holds:
                off[name] = defaults[name]
        return (replace(self, **off) if off else self), tuple(notes)

    @classmethod
    def from_abilities(
        cls,
        *,
        name: str,
        attacks: DiceExpr | str,
        skill: int | None,
        strength: int,
        armour_penetration: int,
        damage: DiceExpr | str,
        abilities: Iterable[ParsedWeaponAbility] = (),
        is_melee: bool = False,
        models: int = 1,
    ) -> "Weapon":
        """Build a weapon from parsed abilities (``pipeline.normalise.weapon_abilities``).

        Each ability means what the declaration says (``pipeline.engine.declarations.
        weapon_ability``, ``edition_rules.toml``); abilities that change nothing in an attack
        (ASSAULT, ONE SHOT, ...) and unknown ones are accepted and ignored. A Torrent weapon gets
        ``skill=None``.
        """
        from pipeline.engine.declarations import grant_parsed

        weapon = cls(
            name=name,
            attacks=dice(attacks) if isinstance(attacks, str) else attacks,
            skill=skill,
            strength=strength,
            armour_penetration=armour_penetration,
            damage=dice(damage) if isinstance(damage, str) else damage,
            is_melee=is_melee,
            models=models,
        )
        for a in abilities:
            weapon = grant_parsed(weapon, a, strict=False)
        return weapon


def keyword_condition_holds(condition: str, keywords: frozenset[str]) -> bool:
    """Whether a target with ``keywords`` (upper case) meets an ability's keyword condition as
    printed: ``VEHICLE``; ``MONSTER/VEHICLE`` (either); ``non-MONSTER/VEHICLE`` (neither); words
    joined by spaces are one keyword (``CHAOS SPACE MARINES``).

    >>> keyword_condition_holds("VEHICLE", frozenset({"VEHICLE", "TITANIC"}))
    True
    >>> keyword_condition_holds("non-MONSTER/VEHICLE", frozenset({"INFANTRY"}))
    True
    >>> keyword_condition_holds("non-MONSTER/VEHICLE", frozenset({"MONSTER"}))
    False
    """
    text = condition.strip()
    negated = text.lower().startswith("non-")
    if negated:
        text = text[4:]
    wanted = {part.strip().upper() for part in text.replace(" or ", "/").split("/") if part.strip()}
    met = bool(wanted & keywords)
    return not met if negated else met


@dataclass(frozen=True)
class Target:
    """The target unit: ``models`` identical models (the Bodyguard models of an Attached unit).

    ``save`` and ``invulnerable_save`` are roll targets (3 for ``3+``), None for none.
    ``feel_no_pain`` applies to all damage; ``feel_no_pain_mortal`` only to mortal wounds
    (the better of the two is used against mortal wounds); ``feel_no_pain_psychic`` to every
    damage point of an attack by a [PSYCHIC] weapon. ``keywords`` are upper case.
    ``stealth``: every model has Stealth.
    """

    toughness: int
    save: int | None
    wounds: int
    models: int = 1
    invulnerable_save: int | None = None
    feel_no_pain: int | None = None
    feel_no_pain_mortal: int | None = None
    feel_no_pain_psychic: int | None = None
    keywords: frozenset[str] = field(default_factory=frozenset)
    stealth: bool = False
    name: str = "target"
    #: a unit of several model profiles: the model line every model is given, and the lines ignored
    model_profile: str | None = None
    ignored_model_profiles: tuple[str, ...] = ()


@dataclass(frozen=True)
class Context:
    """The situation of the attack and modifiers from other rules.

    ``edition``: 10 (current wording) or 11; the rules each applies are listed in
    ``pipeline.engine.exact``.
    ``hit_modifier`` / ``wound_modifier``: the net of other rules' modifiers (capped at +/-1 by
    the engine, after Heavy, Lance and the Stealth of the 10th edition are added).
    ``cover``: the target has the Benefit of Cover against ranged attacks (10th edition: +1 to
    the armour save; 11th edition: the attack's BS is worsened by 1).
    ``critical_hit_on``: the unmodified hit roll that is a Critical Hit (5 for "crits on 5+").
    ``overwatch``: hits only on an unmodified 6 (Fire Overwatch; 11th-edition snap shooting,
    where hit rolls also cannot be re-rolled).
    ``damage_reduction``: ``one`` (-1 Damage, minimum 1) or ``half`` (halved, rounding up).
    ``damage_modifier``: added to Damage after halving.
    ``lethal_hits_choice`` (11th edition only): True makes every [LETHAL HITS] Critical Hit wound
    automatically, False rolls to wound for it; None lets the engine pick, per weapon, the choice
    with the higher expected damage.
    ``attacker_keywords``: keywords of the attacking unit, upper case (CHARACTER, MONSTER,
    VEHICLE...): the 11th-edition hazard roll inflicts 3 mortal wounds instead of 1 when the
    unit has MONSTER or VEHICLE (read as every model having it).
    """

    edition: Literal[10, 11] = 10
    half_range: bool = False
    stationary: bool = False
    charged: bool = False
    cover: bool = False
    overwatch: bool = False
    reroll_hits: Reroll | None = None
    reroll_wounds: Reroll | None = None
    hit_modifier: int = 0
    wound_modifier: int = 0
    critical_hit_on: int = 6
    critical_wound_on: int = 6
    damage_reduction: DamageReduction | None = None
    damage_modifier: int = 0
    lethal_hits_choice: bool | None = None
    attacker_keywords: frozenset[str] = field(default_factory=frozenset)
    #: [INDIRECT FIRE] weapons fire indirectly: 10th edition at a target none of whose models is
    #: visible; 11th edition indirect shooting (10.07). See ``edition_rules.toml`` indirect_fire.
    indirect: bool = False
    #: 11th edition, indirect shooting: the target is visible to one or more friendly units
    #: (with ``stationary``, an unmodified hit roll of 1-3 fails instead of 1-5).
    target_visible_to_friendly_unit: bool = False
    #: the attacker shoots while engaged (11th close-quarters shooting, 10.06): a MONSTER/VEHICLE
    #: attacker (``attacker_keywords``) gets -1 to hit except with [CLOSE-QUARTERS]/[PISTOL].
    close_quarters: bool = False
    #: the attacking models are damaged (their remaining wounds at or below Damaged X, 24.39;
    #: the 10th edition's Damaged profiles): -1 to the hit roll.
    damaged: bool = False
    #: a rule lets the attack ignore any or all modifiers to its BS/WS and to the hit roll ("you
    #: can ignore any or all modifiers to that attack's Ballistic Skill characteristic and/or any or
    #: all modifiers to the Hit roll"): those that hurt it are ignored, as for an 11th-edition
    #: [PSYCHIC] weapon (``edition_rules.toml`` psychic, 24.29), in either edition.
    ignore_hit_modifiers: bool = False
    #: a rule lets the attack ignore any or all modifiers to the wound roll ("ignore any or all
    #: modifiers to the Wound roll"): a negative ``wound_modifier`` is ignored, a positive one kept.
    ignore_wound_modifiers: bool = False
    #: a rule lets the attack ignore modifiers to its BS/WS only ("ignore any or all modifiers to
    #: the following: that attack's Ballistic Skill characteristic"): the 11th edition's benefit of
    #: cover, which worsens BS (13.08), is ignored; hit roll modifiers stay.
    ignore_skill_modifiers: bool = False
    #: "you can re-roll one Hit roll" / "one Wound roll" (Command Re-roll, and rules worded so): one
    #: failed roll of the attacking unit is re-rolled, on the weapon ``reroll_one_weapon`` picks
    #: (``pipeline.engine.declarations``).
    reroll_one_hit: bool = False
    reroll_one_wound: bool = False
    #: "re-roll one Damage roll": the first Damage roll of the weapon ``reroll_one_weapon`` picks
    #: that is below the mean of its Damage dice is re-rolled (before modifiers); ``reroll_damage``
    #: every attack's Damage roll: ``below-mean`` ("you can re-roll the Damage roll": each roll
    #: below the mean) or ``ones`` ("re-roll a Damage roll of 1").
    reroll_one_damage: bool = False
    reroll_damage: Literal["ones", "below-mean"] | None = None
    #: [TWIN-LINKED]'s re-roll: ``failed`` (re-roll failed wound rolls), ``non-critical`` (re-roll
    #: every wound roll that is not a Critical Wound: fishing for Critical Wounds, which can pay with
    #: [DEVASTATING WOUNDS] or [ANTI]; the 11th edition's wording lets the player re-roll any wound
    #: roll) or ``best`` (the exact engine takes, per weapon, the one with the higher expected damage).
    twin_linked_reroll: Literal["failed", "non-critical", "best"] = "failed"
    #: 11th edition [HEAVY] (24.16) needs all of: the unit unengaged (not ``close_quarters``), not
    #: set up on the battlefield this turn, and no model moved more than 3" this turn
    #: (``stationary``, or ``moved_inches`` at most 3). The 10th edition needs ``stationary`` only.
    set_up_this_turn: bool = False
    moved_inches: float | None = None
    #: mortal wounds the target suffers after the attack, each (roll needed on one D6 or None for
    #: always, mortal wounds as dice): "roll one D6: on a 4+, that unit suffers D3 mortal wounds".
    mortal_wounds_after: tuple[tuple[int | None, DiceExpr], ...] = ()
