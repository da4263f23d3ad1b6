"""War Organ's own text export (``Created with WarOrgan``).

Layout: a title ``Flood of Chainblades [2000 points]``, the faction, ``Battle Size: Strike Force
(2000 point limit)``, ``Detachments: Berzerker Warband (3/3 Detachment Points)`` (or several,
comma-separated), ``Force Disposition: Purge The Foe``; then headings over units ``Name (N
points)`` or ``Name [N points]`` (indented or not), each with bulleted lines:

- ``• 4 Khorne Berzerkers with Bolt pistol and Chainblade``: a model line (count, model, the
  wargear each of them carries: items joined by ``, `` and `` and ``; ``&`` joins the words of one item's name,
  ``lacerator & daemonic claw``; ``Gun drone with twin pulse carbine`` is one item);
- ``• 2 Heavy bolters, Armoured tracks and Combi-bolter``: the wargear of a unit of one model;
- ``• Warlord``; ``• Battle-Lust [+20 points]``: an Enhancement (also inside a wargear list).

A heading is a unit category (``Epic Hero``, ``Vehicle``, ``Other``: ``labels.toml``
``unit_sections``) or, over two units or more, the name the player gave an Attached unit
(``Loud Exalted Conclave``). War Organ prints no roles: the importer guesses the unit of most
models as the Bodyguard and says so (``Attachment.roles_printed`` False), and the matcher
decides by the datasheets' leader links.
"""

from __future__ import annotations

import re

from pipeline.lists.errors import ArmyListError
from pipeline.lists.model import ArmyList, Attachment, Enhancement, ListedUnit, ModelLine, Wargear
from pipeline.lists.text import counted, labels, lines_of, points_in, without_points
from pipeline.normalise.names import name_key

_UNIT = re.compile(r"^(?P<name>\S.*?)\s*[\(\[]\s*(?P<points>[\d,]+)\s*points?\s*[\)\]]$", re.IGNORECASE)
_MODEL = re.compile(r"^(?P<count>\d+)\s+(?P<name>[^,]+?)\s+with\s+(?P<items>.+)$")
_ADDED = re.compile(r"^(?P<name>.+?)\s*\[\s*\+\s*(?P<points>\d+)\s*points?\s*\]$", re.IGNORECASE)
_SPLIT = re.compile(r",\s*|\s+and\s+")


def split_gear(text: str) -> list[str]:
    """War Organ's items of one line: separated by ``, `` and `` and ``, the words after a
    ``with`` kept with their item up to the next separator.

    >>> split_gear("Bladed horn, Bolt pistol and Coward’s bane")
    ['Bladed horn', 'Bolt pistol', 'Coward’s bane']
    >>> split_gear("2 Fusion blaster, Battlesuit fists and Gun drone with twin pulse carbine and shield drone")
    ['2 Fusion blaster', 'Battlesuit fists', 'Gun drone with twin pulse carbine', 'shield drone']
    """
    return [part.strip() for part in _SPLIT.split(text) if part.strip()]


def _read_items(text: str, unit: dict) -> list[Wargear]:
    """The wargear of a line; Enhancements (``[+N points]``) and ``Warlord`` go to the unit."""
    gear = []
    for part in split_gear(text):
        added = _ADDED.match(part)
        if added:
            unit["enhancements"].append(Enhancement(added.group("name"), int(added.group("points"))))
        elif name_key(part) == "warlord":
            unit["warlord"] = True
        else:
            count, name = counted(part, bare=True)
            gear.append(Wargear(name, count))
    return gear


def _header(lines: list[str]) -> dict:
    out: dict = {"faction": None, "detachments": (), "dispositions": (), "battle_size": None, "limit": None,
                 "evidence": []}
    for text in lines:
        head, sep, value = text.partition(":")
        head = head.strip().lower()
        if sep and head == "battle size":
            limit = re.search(r"\((\d+)\s*point limit\)", value, re.IGNORECASE)
            out["battle_size"] = re.sub(r"\s*\(.*\)\s*$", "", value).strip()
            out["limit"] = int(limit.group(1)) if limit else None
        elif sep and head in ("detachment", "detachments"):
            points = re.search(r"\(([^)]*Detachment Points)\)", value, re.IGNORECASE)
            names = re.sub(r"\s*\([^)]*\)\s*$", "", value)
            out["detachments"] = tuple(p.strip() for p in names.split(",") if p.strip())
            if points:
                out["evidence"].append(f"'{points.group(1)}' in the header")
            if len(out["detachments"]) > 1:
                out["evidence"].append("several detachments")
        elif sep and head in ("force disposition", "force dispositions"):
            out["dispositions"] = tuple(d.strip() for d in value.split(",") if d.strip())
            out["evidence"].append("'Force Disposition' in the header")
        elif out["faction"] is None:
            out["faction"] = text.strip()
    return out


def parse(text: str) -> ArmyList:
    """Read War Organ's own text export (module docstring) into an ``ArmyList``.

    ``text``: the whole list. Raises ``ArmyListError`` naming the line of a bulleted line
    before any unit, or for a list without units."""
    numbered = [(i + 1, line) for i, line in enumerate(lines_of(text))]
    body = [(n, line) for n, line in numbered if line.strip()]
    if not body:
        raise ArmyListError("line 1: the file is empty")
    title_line, title = body[0]
    header, end = [], title_line
    for n, line in body[1:]:
        if _UNIT.match(line.strip()) or line.strip()[:1] == "•":
            break
        if ":" not in line and header and any(":" in h for h in header) and n > end + 1:
            break  # a heading after the header block (a blank line between)
        header.append(line.strip())
        end = n
    head = _header(header)
    sections = {name_key(s) for s in labels("unit_sections")}
    units: list[dict] = []
    groups: list[tuple[str, list[int]]] = []
    notes: list[str] = []
    for n, line in numbered:
        if n <= end or not line.strip():
            continue
        stripped = line.strip()
        if stripped.startswith("Created with"):
            notes.append(stripped)
            continue
        unit_line = _UNIT.match(stripped)
        if unit_line and stripped[:1] != "•":
            units.append({"name": unit_line.group("name"), "points": int(unit_line.group("points").replace(",", "")),
                          "line": n, "models": [], "gear": [], "enhancements": [], "warlord": False,
                          "section": groups[-1][0] if groups else None})
            if groups:
                groups[-1][1].append(len(units) - 1)
            continue
        if stripped[:1] == "•":
            if not units:
                raise ArmyListError(f"line {n}: {stripped!r} before the first unit ('Name (N points)')")
            unit = units[-1]
            item = stripped[1:].strip()
            model = _MODEL.match(item)
            if model:  # each of the models carries the items
                count = int(model.group("count"))
                gear = tuple(Wargear(w.name, w.count * count) for w in _read_items(model.group("items"), unit))
                unit["models"].append(ModelLine(model.group("name"), count, gear, n))
            else:
                unit["gear"].extend(_read_items(item, unit))
            continue
        groups.append((stripped, []))  # a heading
    if not units:
        raise ArmyListError(f"line {title_line}: no unit ('Name (N points)') found after the title")
    listed = [ListedUnit(
        name=u["name"], points=u["points"], line=u["line"],
        models=tuple(u["models"]) if u["models"] else (ModelLine(u["name"], 1, tuple(u["gear"]), u["line"]),),
        wargear=tuple(u["gear"]) if u["models"] else (), enhancements=tuple(u["enhancements"]),
        warlord=u["warlord"], section=u["section"]) for u in units]
    attachments = []
    for heading, members in groups:
        if name_key(heading) in sections or len(members) < 2:
            continue
        guard = max(members, key=lambda i: (listed[i].model_count, -i))
        attachments.append(Attachment(tuple(i for i in members if i != guard), guard, roles_printed=False))
    return ArmyList(
        format="warorgan", name=without_points(title), faction=head["faction"], detachments=head["detachments"],
        units=tuple(listed), edition=11 if head["evidence"] else None, edition_evidence="; ".join(head["evidence"]),
        declared_points=points_in(title), points_limit=head["limit"], battle_size=head["battle_size"],
        force_dispositions=head["dispositions"], attachments=tuple(attachments), notes=tuple(notes))
