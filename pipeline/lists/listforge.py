"""ListForge's text export.

Layout: a title ``Fiendish! - World Eaters - Berzerker Warband (1935 Points)`` (the list's name,
the faction, the detachment, the total), then headings ending in ``:`` (``Epic Hero:``,
``Battleline:``) over units ``Name (N pts)``, each with a tree of bulleted items read as the
other app layouts are (``pipeline.lists.units``): ``• Khorne Berserker Champion`` over its
weapons is a model line, ``• Icon of Khorne`` an item of the unit, ``• E: Berzerker Glaive`` an
Enhancement, ``• Warlord``, ``• B: 1 mauler chainblade, 7 chainblades`` a group of model lines,
``• 2 ectoplasma cannons`` over ``• 2x Ectoplasma cannon`` a choice of wargear. Unit names may
carry the faction (``World Eaters Forgefiend``): the matcher tries them without it. ListForge
prints neither Attached units nor the edition.
"""

from __future__ import annotations

import re

from pipeline.lists.errors import ArmyListError
from pipeline.lists.model import ArmyList, ListedUnit
from pipeline.lists.text import lines_of, points_in, without_points
from pipeline.lists.units import listed_unit

_HEADING = re.compile(r"^(?P<name>[A-Z][A-Za-z ]+):$")


def _title(title: str) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(name, faction, detachments) of the title line.

    >>> _title("Fiendish! - World Eaters - Berzerker Warband (1935 Points)")
    ('Fiendish!', 'World Eaters', ('Berzerker Warband',))
    """
    parts = [p.strip() for p in without_points(title).split(" - ")]
    if len(parts) < 3:
        return parts[0] or None, parts[1] if len(parts) > 1 else None, ()
    return parts[0], " - ".join(parts[1:-1]), (parts[-1],)


def parse(text: str) -> ArmyList:
    """Read a ListForge text export (module docstring) into an ``ArmyList``.

    ``text``: the whole list. Raises ``ArmyListError`` naming the line of an item before any
    unit, or for a list without units."""
    numbered = [(i + 1, line) for i, line in enumerate(lines_of(text))]
    body = [(n, line) for n, line in numbered if line.strip()]
    if not body:
        raise ArmyListError("line 1: the file is empty")
    title_line, title = body[0]
    name, faction, detachments = _title(title.strip())
    units: list[ListedUnit] = []
    section: str | None = None
    current: tuple[int, str, list[tuple[int, str]]] | None = None

    def close() -> None:
        if current is None:
            return
        line, head, item_lines = current
        units.append(listed_unit(without_points(head), head, line, item_lines, section))

    for n, line in numbered:
        if n <= title_line or not line.strip():
            continue
        indented = line.startswith(" ") or line.lstrip()[:1] in "•◦"
        heading = None if indented else _HEADING.match(line.strip())
        if heading:
            close()
            current, section = None, heading.group("name")
        elif not indented and points_in(line) is not None:
            close()
            current = (n, line.strip(), [])
        elif current is not None:
            current[2].append((n, line))
        else:
            raise ArmyListError(f"line {n}: {line.strip()!r} is neither a heading ('Battleline:') nor a unit "
                                "('Name (N pts)') nor an item of one")
    close()
    if not units:
        raise ArmyListError(f"line {title_line}: no unit ('Name (N pts)') found after the title")
    return ArmyList(format="listforge", name=name, faction=faction, detachments=detachments, units=tuple(units),
                    declared_points=points_in(title))
