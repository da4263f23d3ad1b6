"""The army list as an importer reads it: plain, frozen data, the same shape for every format.

An importer only finds what the list prints (names as printed, counts, points); matching the
names to datasheets of the database is ``pipeline.lists.match``'s work.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Wargear:
    """One weapon or piece of wargear of a model line: ``count`` of it in all on the line
    (``9x Khorne Berzerker: 7x Bolt pistol`` is ``Wargear("Bolt pistol", 7)``).

    ``profile``: the weapon's characteristics where the list prints them (BattleScribe):
    range, attacks, skill, strength, armour penetration, damage, as printed (``('Melee', '3',
    '4+', '6', '0', '1')``); not part of equality or the repr."""

    name: str
    count: int = 1
    profile: tuple[str, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class ModelLine:
    """``count`` models of one kind in a unit, with the wargear they carry between them.

    ``line``: the line of the list where the model line is printed (1-based; for a unit printed
    without model lines, the unit's line)."""

    name: str
    count: int
    wargear: tuple[Wargear, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class Enhancement:
    """An Enhancement taken by a unit; ``points`` its cost when the list prints it."""

    name: str
    points: int | None = None


@dataclass(frozen=True)
class ListedUnit:
    """One unit as the list prints it.

    ``points``: the unit's printed cost (Enhancements included where the format includes them),
    None when the list prints none. ``models``: its model lines; a unit printed without any is
    one line named after the unit. ``wargear``: items the list gives to the unit as a whole
    (``Icon of Khorne`` printed beside the model lines), not to one model line. ``role``:
    ``leader``, ``bodyguard`` or None, as the list's Attached units say. ``section``: the
    heading the unit is printed under (``CHARACTERS``, ``Epic Hero``). ``notes``: printed lines
    of the unit the importer did not read as anything else (kept, never dropped)."""

    name: str
    points: int | None
    models: tuple[ModelLine, ...]
    line: int
    enhancements: tuple[Enhancement, ...] = ()
    wargear: tuple[Wargear, ...] = ()
    warlord: bool = False
    role: str | None = None
    section: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def model_count(self) -> int:
        """Models in the unit: the sum of its model lines' counts."""
        return sum(m.count for m in self.models)


@dataclass(frozen=True)
class Attachment:
    """An Attached unit: the Leader unit(s) and the Bodyguard unit they lead, as indexes into
    ``ArmyList.units``. ``roles_printed`` False: the list names the Attached unit's units but
    not which leads (War Organ), so ``leaders``/``bodyguard`` are the importer's guess and the
    matcher decides by the datasheets' leader links."""

    leaders: tuple[int, ...]
    bodyguard: int
    roles_printed: bool = True


@dataclass(frozen=True)
class ArmyList:
    """A whole army list.

    ``format``: the importer that read it (``pipeline.lists.detect.FORMATS``). ``edition``: 10,
    11, or None when the list does not say (``edition_evidence`` names what decided it).
    ``declared_points``: the army's total as printed (None when not printed); ``summed_points``
    is the sum of the units' points. ``points_limit``: the battle size's limit. ``detachments``
    and ``force_dispositions``: as printed (11th edition lists may name several)."""

    format: str
    name: str | None
    faction: str | None
    detachments: tuple[str, ...]
    units: tuple[ListedUnit, ...]
    edition: int | None = None
    edition_evidence: str = ""
    declared_points: int | None = None
    points_limit: int | None = None
    battle_size: str | None = None
    force_dispositions: tuple[str, ...] = ()
    attachments: tuple[Attachment, ...] = ()
    language: str = "en"
    notes: tuple[str, ...] = field(default=())

    @property
    def summed_points(self) -> int:
        """The sum of the units' printed points (units without points count 0)."""
        return sum(u.points or 0 for u in self.units)
