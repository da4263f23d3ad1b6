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
from schemas.types import DiceExpr

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

    def against(self, keywords: frozenset[str]) -> tuple["Weapon", tuple[tuple[str, str], ...]]:
        """This weapon as it attacks a target with ``keywords`` (upper case): each ability of
        ``conditions`` whose condition the target does not meet is taken off. Returns the weapon
        and, per conditional ability, (its field name, a note saying whether it applies).

        11th edition, weapon abilities restricted to a keyword ("LETHAL HITS: VEHICLE": the
        ability applies against VEHICLE targets; "non-MONSTER/VEHICLE": against targets that are
        neither).

        >>> from schemas.types import DiceExpr
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

        Abilities the engine does not model (PISTOL, ASSAULT, ...) are accepted and ignored.
        A Torrent weapon gets ``skill=None``.
        """
        kw: dict = {}
        anti: list[Anti] = []
        conditions: list[tuple[str, str]] = []
        for a in abilities:
            if a.condition and a.name != "ANTI" and _field_of(a.name):
                conditions.append((_field_of(a.name), a.condition))  # type: ignore[arg-type]
            if a.name == "ANTI" and a.target_keyword and a.threshold:
                anti.append(Anti(a.target_keyword, a.threshold))
            elif a.name == "SUSTAINED HITS" and a.value is not None:
                kw["sustained_hits"] = a.value
            elif a.name == "RAPID FIRE" and a.value is not None:
                kw["rapid_fire"] = a.value
            elif a.name == "MELTA" and a.value is not None:
                kw["melta"] = a.value
            elif a.name == "BLAST":
                kw["blast"] = a.value.modifier if a.value is not None and a.value.is_fixed else 1
            elif a.name in _FLAGS:
                kw[_FLAGS[a.name]] = True
        if kw.get("torrent"):
            skill = None
        return cls(
            name=name,
            attacks=dice(attacks) if isinstance(attacks, str) else attacks,
            skill=skill,
            strength=strength,
            armour_penetration=armour_penetration,
            damage=dice(damage) if isinstance(damage, str) else damage,
            is_melee=is_melee,
            models=models,
            anti=tuple(anti),
            conditions=tuple(conditions),
            **kw,
        )


def _field_of(ability: str) -> str | None:
    """The ``Weapon`` field an ability sets (``"LETHAL HITS"`` -> ``"lethal_hits"``), or None."""
    return _FLAGS.get(ability) or {"SUSTAINED HITS": "sustained_hits", "RAPID FIRE": "rapid_fire",
                                   "MELTA": "melta", "BLAST": "blast"}.get(ability)


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


_FLAGS = {
    "LETHAL HITS": "lethal_hits",
    "DEVASTATING WOUNDS": "devastating_wounds",
    "TORRENT": "torrent",
    "TWIN-LINKED": "twin_linked",
    "HEAVY": "heavy",
    "LANCE": "lance",
    "IGNORES COVER": "ignores_cover",
    "HAZARDOUS": "hazardous",
    "PSYCHIC": "psychic",
    "PRECISION": "precision",
}


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
