"""What a source prints: the typed hand-off from an extractor to the assembly.

Every field is the text as printed (after the source's own markup is taken off: HTML tags,
BattleScribe's characteristic elements, table pipes), never a read value; ``None`` means the
source does not print that value at all (a data gap), ``""`` that it prints an empty cell.
Each record carries the locator of where the source prints it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PrintedWeapon:
    """One weapon profile line as printed.

    ``name`` may carry a profile name (``➤ Plasma pistol - supercharge``); ``profile_name`` is
    given only by a source that prints it apart. ``is_melee`` is the table or type the source
    files the line under (``Melee weapons``, type ``Melee``); None when it files it under none,
    and the range decides. ``abilities`` is the keyword cell (``[ANTI-INFANTRY 4+, PISTOL]``,
    ``anti-infantry 4+, pistol``); ``linked_abilities`` the abilities a source gives as links to
    rules instead (BattleScribe), each as its link's name. ``roll`` is a D6 result that picks
    this profile (``1-2``), if printed.
    """

    locator: str
    name: str
    range: str
    attacks: str
    skill: str
    strength: str
    armour_penetration: str
    damage: str
    abilities: str = ""
    is_melee: bool | None = None
    profile_name: str | None = None
    linked_abilities: tuple[str, ...] = ()
    roll: str = ""


@dataclass(frozen=True, slots=True)
class PrintedModel:
    """One model line's characteristics as printed (``6"``, ``3``, ``3+``, ``4+*``, ``6+``).

    ``invulnerable_save_note`` is the ``*`` note printed with the invulnerable save
    (``* Ranged attacks only``). A characteristic the source does not print is None.
    """

    locator: str
    line: int
    name: str
    move: str | None
    toughness: str | None
    save: str | None
    wounds: str | None
    leadership: str | None
    objective_control: str | None
    invulnerable_save: str | None = None
    invulnerable_save_note: str | None = None
