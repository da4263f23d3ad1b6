"""A unit's bulleted items read the same way for every format that prints them as a tree (the
Warhammer app, New Recruit's GW text, ListForge, War Organ's app-style text).

An item with bulleted items below it is a model line (``• 9x Khorne Berzerker`` over its
weapons); an item without is wargear of the unit (of its one model when no model line is
printed); labelled items are the unit's role in an Attached unit, Warlord and Enhancements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.lists.model import Enhancement, ListedUnit, ModelLine, Wargear
from pipeline.lists.text import Node, bullet_tree, counted, label_language, labelled, labels, points_in, without_points
from pipeline.normalise.names import name_key

_ADDED_POINTS = re.compile(r"[\(\[]\s*\+\s*\d+\s*(?:pts|points?)\s*[\)\]]", re.IGNORECASE)
_UPGRADE_NOTE = re.compile(r"\s*\((?:Upgrade)\)\s*$", re.IGNORECASE)


@dataclass
class UnitItems:
    """What a unit's items say (``read_items``)."""

    models: list[ModelLine] = field(default_factory=list)
    wargear: list[Wargear] = field(default_factory=list)
    enhancements: list[Enhancement] = field(default_factory=list)
    warlord: bool = False
    role: str | None = None
    notes: list[str] = field(default_factory=list)
    language: str | None = None


def wargear_of(text: str) -> list[Wargear]:
    """The wargear one printed item names: a comma-separated list, each with its count; a count
    printed twice (``5x 2 Bolt Pistols``: five of the option of two) is multiplied.

    >>> wargear_of("5x 2 Bolt Pistols")
    [Wargear(name='Bolt Pistols', count=10)]
    >>> wargear_of("2x Gun Drone, Grav-inhibitor drone")
    [Wargear(name='Gun Drone', count=2), Wargear(name='Grav-inhibitor drone', count=1)]
    """
    items = []
    for part in text.split(","):
        if not part.strip():
            continue
        count, name = counted(part.strip())
        inner, name = counted(name, bare=True)
        items.append(Wargear(name, count * inner))
    return items


def _role(value: str) -> str | None:
    key = name_key(value)
    if any(name_key(label) in key for label in labels("leader")):
        return "leader"
    if any(name_key(label) in key for label in labels("bodyguard")):
        return "bodyguard"
    return None


def _is_option_group(node: Node) -> bool:
    """An uncounted item whose items' names are in its own (ListForge's ``2 ectoplasma cannons``
    over ``2x Ectoplasma cannon``): a choice of wargear, not a model line."""
    if re.match(r"^\d+\s*x\s", node.text, re.IGNORECASE) or "w/" in node.text:
        return False
    own = name_key(node.text, ignore_plural=True)
    return any(name_key(counted(c.text)[1], ignore_plural=True) in own for c in node.children)


def _enhancement(text: str) -> Enhancement | None:
    value = labelled("enhancement", text)
    if value is not None:
        return Enhancement(_UPGRADE_NOTE.sub("", without_points(value)).strip(), points_in(value.replace("+", "")))
    if _ADDED_POINTS.search(text):
        return Enhancement(_ADDED_POINTS.sub("", text).strip(), points_in(text.replace("+", "")))
    return None


def _leaf_wargear(nodes: list[Node]) -> list[Wargear]:
    return [item for node in nodes for item in wargear_of(node.text)]


def read_items(nodes: list[Node], items: UnitItems | None = None) -> UnitItems:
    """Read a unit's item tree (``pipeline.lists.text.bullet_tree``) into model lines, wargear,
    Enhancements, Warlord and role; what is none of these is kept in ``notes``."""
    items = items or UnitItems()
    for node in nodes:
        text = node.text
        attached = labelled("attached_as", text)
        if attached is not None:
            items.role = _role(attached)
            items.language = items.language or label_language("attached_as", text.partition(":")[0].strip())
            read_items(node.children, items)  # the app prints the unit's items below this line
            continue
        if label_language("warlord", text):
            items.warlord = True
            items.language = items.language or label_language("warlord", text)
            read_items(node.children, items)
            continue
        enhancement = _enhancement(text)
        if enhancement is not None:
            items.enhancements.append(enhancement)
            continue
        if not node.children:
            items.wargear.extend(wargear_of(text))
        elif any(c.children for c in node.children):  # a group of model lines (ListForge's ``B: ...``)
            items.notes.append(text)
            read_items(node.children, items)
        elif _is_option_group(node):
            items.wargear.extend(_leaf_wargear(node.children))
        else:
            count, name = counted(text)
            gear: list[Wargear] = []
            for child in node.children:
                enhancement = _enhancement(child.text)
                if enhancement is not None:
                    items.enhancements.append(enhancement)
                else:
                    gear.extend(wargear_of(child.text))
            items.models.append(ModelLine(name, count, tuple(gear), node.line))
    return items


def unit_models(unit_name: str, items: UnitItems, line: int, count: int = 1) -> tuple[tuple[ModelLine, ...], tuple[Wargear, ...]]:
    """The unit's model lines and its unit-wide wargear: a unit printed without model lines is
    one line of ``count`` models named after the unit carrying the unit's wargear."""
    if items.models:
        return tuple(items.models), tuple(items.wargear)
    return (ModelLine(unit_name, count, tuple(items.wargear), line),), ()


def listed_unit(name: str, head: str, line: int, item_lines: list[tuple[int, str]], section: str | None,
                count: int = 1) -> ListedUnit:
    """The ``ListedUnit`` of a unit printed as a head line (``head``, at ``line``, with its points)
    and its bulleted ``item_lines`` (models, wargear, Enhancements, Warlord), named ``name``; a unit
    without model lines is ``count`` models of its name (``unit_models``)."""
    items = read_items(bullet_tree(item_lines), UnitItems())
    models, wargear = unit_models(name, items, line, count)
    return ListedUnit(name=name, points=points_in(head), models=models, line=line,
                      enhancements=tuple(items.enhancements), wargear=wargear, warlord=items.warlord,
                      section=section, notes=tuple(items.notes))
