"""Weapon abilities as printed (``[anti-psyker 2+, RAPID FIRE 1]``) -> names with parameters.

The table below is the data this normaliser reads: each known ability, and what its parameter
is. An unknown name is kept (never dropped) with the flag ``unknown_weapon_ability``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, NamedTuple

from pipeline.errors import NormaliseError
from pipeline.normalise.characteristics import dice
from pipeline.normalise.text import clean_line
from schemas.dice import DiceExpr

if TYPE_CHECKING:  # the records (pydantic) are imported by the build, not by the attack engine
    from schemas.records import WeaponAbility

ParamKind = Literal["none", "value", "optional-value"]

#: Known weapon abilities (both editions) and the kind of parameter each takes.
KNOWN_ABILITIES: dict[str, ParamKind] = {
    "ASSAULT": "none",
    "BLAST": "optional-value",  # [BLAST] in the 10th edition, [BLAST X] in the 11th
    "CLEAVE": "value",
    "CLOSE-QUARTERS": "none",
    "CONVERSION": "none",
    "DEVASTATING WOUNDS": "none",
    "EXTRA ATTACKS": "none",
    "HAZARDOUS": "none",
    "HEAVY": "none",
    "IGNORES COVER": "none",
    "INDIRECT FIRE": "none",
    "LANCE": "none",
    "LETHAL HITS": "none",
    "MELTA": "value",
    "ONE SHOT": "none",
    "PISTOL": "none",
    "PRECISION": "none",
    "PSYCHIC": "none",
    "RAPID FIRE": "value",
    "SUSTAINED HITS": "value",
    "TORRENT": "none",
    "TWIN-LINKED": "none",
}

_ANTI = re.compile(r"^ANTI[- ](?P<kw>[A-Z][A-Z0-9 '\-]*?)?(?:\s+(?P<t>\d)(?P<plus>\+)?)?$")
_VALUE = re.compile(r"^(?P<name>[A-Z][A-Z \-]*?)(?:\s+(?P<v>\d*D\d+(?:[+-]\d+)?|\d+))?$")


class ParsedWeaponAbility(NamedTuple):
    """One weapon ability: canonical ``name`` plus parameters; ``flags`` note doubtful input.

    ``condition`` is the text after a colon in 11th-edition forms such as
    ``LETHAL HITS: non-MONSTER/VEHICLE``.
    """

    name: str
    target_keyword: str | None
    threshold: int | None
    value: DiceExpr | None
    condition: str | None
    raw_text: str
    flags: tuple[str, ...]


def split_abilities(text: str) -> list[str]:
    """Split a printed ability list into items; brackets and empty items are dropped.

    >>> split_abilities("[anti-psyker 2+, devastating wounds]")
    ['anti-psyker 2+', 'devastating wounds']
    >>> split_abilities("-")
    []
    """
    t = clean_line(text).strip()
    t = t.strip("[]")
    if t in ("", "-"):
        return []
    return [clean_line(item) for item in t.split(",") if clean_line(item).strip("[] ")]


@lru_cache(maxsize=8192)
def parse_ability(item: str) -> ParsedWeaponAbility:
    """Parse one ability item, in any case, with U+2011 hyphens read as hyphens.

    >>> parse_ability("anti-psyker 2+")[:4]
    ('ANTI', 'PSYKER', 2, None)
    >>> a = parse_ability("Sustained Hits D3"); (a.name, a.value.text)
    ('SUSTAINED HITS', 'D3')
    >>> parse_ability("Anti-infantry").flags
    ('anti_missing_threshold',)
    >>> a = parse_ability("Anti-fly 2"); (a.target_keyword, a.threshold, a.flags)
    ('FLY', 2, ('threshold_without_plus',))
    >>> parse_ability("Anti Vehicle 3+")[:3]
    ('ANTI', 'VEHICLE', 3)

    Pure and memoised (its value is immutable). Raises ``NormaliseError`` for an empty item.
    """
    raw = clean_line(item).strip("[] ")
    if not raw:
        raise NormaliseError("empty weapon ability")
    condition = None
    body = raw
    if ":" in raw:
        body, condition = (part.strip() for part in raw.split(":", 1))
    upper = re.sub(r"\s+", " ", body.upper())
    m = _ANTI.match(upper)
    if m:
        threshold = int(m.group("t")) if m.group("t") else None
        if not m.group("kw"):  # the rule's own name, "Anti-": no keyword, no threshold
            return ParsedWeaponAbility("ANTI", None, threshold, None, condition, raw, ("anti_missing_keyword",))
        if threshold is None:
            flags: tuple[str, ...] = ("anti_missing_threshold",)
        else:
            flags = () if m.group("plus") else ("threshold_without_plus",)
        return ParsedWeaponAbility(
            "ANTI", m.group("kw").strip(), threshold, None, condition, raw, flags
        )
    m = _VALUE.match(upper)
    if not m:
        return ParsedWeaponAbility(upper, None, None, None, condition, raw, ("unknown_weapon_ability",))
    name, value_text = m.group("name").strip(), m.group("v")
    kind = KNOWN_ABILITIES.get(name)
    if kind is None:
        return ParsedWeaponAbility(upper, None, None, None, condition, raw, ("unknown_weapon_ability",))
    value = dice(value_text) if value_text else None
    flags = ()
    if kind == "none" and value is not None:
        flags = ("unexpected_ability_value",)
    if kind == "value" and value is None:
        flags = (f"{name.lower().replace(' ', '_').replace('-', '_')}_missing_value",)
    return ParsedWeaponAbility(name, None, None, value, condition, raw, flags)


def parse_abilities(text: str) -> list[ParsedWeaponAbility]:
    """Parse a whole printed ability list.

    >>> [a.name for a in parse_abilities("[IGNORES COVER, torrent]")]
    ['IGNORES COVER', 'TORRENT']
    """
    return [parse_ability(item) for item in split_abilities(text)]


def weapon_ability_record(
    ability: ParsedWeaponAbility,
    *,
    source_id: str,
    locator: str,
    datasheet_id: str,
    weapon_name: str,
    profile_name: str,
    is_melee: bool,
    position: int,
) -> WeaponAbility:
    """The ``weapon_abilities`` row of a parsed ability on one weapon profile (its flags are
    the caller's to record, with its own locator)."""
    from schemas.records import WeaponAbility

    return WeaponAbility(
        source_id=source_id,
        locator=locator,
        datasheet_id=datasheet_id,
        weapon_name=weapon_name,
        profile_name=profile_name,
        is_melee=is_melee,
        position=position,
        name=ability.name,
        target_keyword=ability.target_keyword,
        threshold=ability.threshold,
        value=ability.value,
        raw_text=ability.raw_text,
        condition=ability.condition,
    )
