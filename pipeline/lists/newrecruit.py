"""New Recruit's text exports: ``GW`` (the app's layout under New Recruit's header), ``Tournament``
/ WTC and WTC-Compact (one line per unit or model line), and ``NR`` (markdown).

The GW and Tournament exports start with a header block of ``+`` lines (``+ FACTION KEYWORD:
Xenos - T'au Empire``, ``+ DETACHMENT: Retaliation Cadre (Bonded Heroes)``, ``+ FORCE
DISPOSITION:``, ``+ TOTAL ARMY POINTS: 2000pts``, ``+ ENHANCEMENT: ... (on Char7: ...)``).
Tournament lines: ``Char1: 1x Commander Farsight (70 pts): Warlord, Dawn Blade, ...``, a unit
``10x Pathfinder Team (85 pts)`` over its model lines ``• 9x Pathfinders`` and their loadouts
``6 with Close combat weapon, Pulse carbine``, ``Enhancement: X (+20 pts)``, and (WE2) ``Leading
Khorne Berzerkers[1]`` / ``Attached to Khârn the Betrayer`` for Attached units.
"""

from __future__ import annotations

import re

from pipeline.lists.errors import ArmyListError
from pipeline.lists.model import ArmyList, Attachment, Enhancement, ListedUnit, ModelLine, Wargear
from pipeline.lists.text import lines_of, points_in, without_points
from pipeline.lists.units import listed_unit, wargear_of
from pipeline.normalise.names import name_key

_HEADER = re.compile(r"^\+\s*([A-Z][A-Z ]+):\s*(.*)$")
_CHAR_LABEL = re.compile(r"^[A-Z][a-z]{2,4}\d+:\s*")
_UNIT_LINE = re.compile(r"^(?:(?P<label>[A-Z][a-z]{2,4}\d+):\s*)?(?:(?P<count>\d+)x\s+)?(?P<name>.+?)\s*"
                        r"\((?P<points>\d+)\s*pts\)(?::\s*(?P<items>.*))?$")
_WITH = re.compile(r"^(\d+)\s+with\s+(.*)$")
_LEADING = re.compile(r"^Leading\s+(.+?)(?:\[(\d+)\])?$")
_ATTACHED_TO = re.compile(r"^Attached to\s+(.+)$")


def _header(lines: list[tuple[int, str]]) -> tuple[dict[str, str], int]:
    """The ``+`` header's fields (``& ...`` lines continue the one before) and the last line of it."""
    fields: dict[str, str] = {}
    last_key, end = None, 0
    for n, line in lines:
        if not line.strip():
            if fields:
                continue
            continue
        if line.startswith("+"):
            end = n
            found = _HEADER.match(line)
            if found:
                last_key = found.group(1).strip()
                fields[last_key] = found.group(2).strip()
            continue
        if line.startswith("&") and last_key:
            fields[last_key] += " & " + line[1:].strip()
            end = n
            continue
        break
    return fields, end


def _detachments(value: str) -> tuple[tuple[str, ...], str | None]:
    """Detachment names and the rule in parentheses: ``Retaliation Cadre (Bonded Heroes)``.

    >>> _detachments("Advanced Acquisition Cadre, Retaliation Cadre (Expert Fieldcraft)")
    (('Advanced Acquisition Cadre', 'Retaliation Cadre'), 'Expert Fieldcraft')
    """
    rule = re.search(r"\(([^)]*)\)\s*$", value)
    names = re.sub(r"\s*\([^)]*\)\s*$", "", value)
    return tuple(p.strip() for p in names.split(",") if p.strip()), rule.group(1) if rule else None


def _army(fields: dict[str, str], fmt: str, units: list[ListedUnit], attachments: list[Attachment],
          notes: list[str]) -> ArmyList:
    faction = fields.get("FACTION KEYWORD")
    if faction and " - " in faction:
        faction = faction.split(" - ", 1)[1]
    detachments, rule = _detachments(fields.get("DETACHMENT", ""))
    dispositions = tuple(d.strip() for d in fields.get("FORCE DISPOSITION", "").split(",") if d.strip())
    evidence = []
    if "FORCE DISPOSITION" in fields:
        evidence.append("'FORCE DISPOSITION' in the header")
    if len(detachments) > 1:
        evidence.append("several detachments")
    if rule and not evidence:
        # the 11th-edition exports print the detachment's rule after its name; the 10th's do not
        evidence.append(f"the detachment rule '({rule})' after the detachment")
    total = fields.get("TOTAL ARMY POINTS")
    declared = int(re.sub(r"\D", "", total)) if total and re.search(r"\d", total) else None
    edition = 11 if evidence else (10 if fields else None)
    return ArmyList(
        format=fmt, name=None, faction=faction, detachments=detachments, units=tuple(units), edition=edition,
        edition_evidence="; ".join(evidence) if evidence else ("a New Recruit header without 11th-edition fields"
                                                               if edition else ""),
        declared_points=declared, force_dispositions=dispositions, attachments=tuple(attachments),
        notes=tuple(notes))


def _mark_warlord_and_enhancements(units: list[ListedUnit], fields: dict[str, str]) -> None:
    """Nothing to do: the units carry their own Warlord and Enhancements (the header repeats them)."""


def parse_gw(text: str) -> ArmyList:
    """Read New Recruit's ``GW`` text export (module docstring) into an ``ArmyList``.

    Raises ``ArmyListError`` naming the line of a line that is no heading, unit or item."""
    numbered = [(i + 1, line) for i, line in enumerate(lines_of(text))]
    fields, end = _header(numbered)
    units: list[ListedUnit] = []
    notes: list[str] = []
    section = None
    current: tuple[int, str, list[tuple[int, str]]] | None = None

    def close() -> None:
        if current is None:
            return
        line, head, item_lines = current
        count, name = _counted_name(without_points(head))
        units.append(listed_unit(name, head, line, item_lines, section, count))

    for n, line in numbered:
        if n <= end or not line.strip():
            continue
        indented = line.startswith(" ") or line.lstrip()[:1] in "•◦"
        if not indented and points_in(line) is not None:
            close()
            current = (n, line.strip(), [])
        elif not indented and line.strip() == line.strip().upper():
            close()
            current, section = None, line.strip()
        elif not indented and line.startswith("Created with"):
            notes.append(line.strip())
        elif current is not None:
            current[2].append((n, line))
        else:
            raise ArmyListError(f"line {n}: {line.strip()!r} is neither a heading nor a unit ('Name (N pts)')")
    close()
    if not units:
        raise ArmyListError(f"line {end + 1}: no unit ('Name (N pts)') after New Recruit's header")
    return _army(fields, "newrecruit-gw", units, [], notes)


def _counted_name(text: str) -> tuple[int, str]:
    found = re.match(r"^(\d+)x\s+(.*)$", text)
    return (int(found.group(1)), found.group(2).strip()) if found else (1, text.strip())


def _per_model(count: int, items: str) -> list[Wargear]:
    """The wargear of ``count`` models each carrying ``items`` (``2x Plasma rifle`` each)."""
    return [Wargear(w.name, w.count * count) for w in wargear_of(items)]


def _merge(gear: list[Wargear]) -> tuple[Wargear, ...]:
    """Wargear of the same name added up, in the order first printed."""
    totals: dict[str, list] = {}
    for w in gear:
        totals.setdefault(name_key(w.name), [w.name, 0])[1] += w.count
    return tuple(Wargear(name, count) for name, count in totals.values())


def parse_tournament(text: str) -> ArmyList:
    """Read New Recruit's ``Tournament`` (WTC) or a WTC-Compact text export (module docstring)
    into an ``ArmyList``. Raises ``ArmyListError`` naming the line it cannot read."""
    numbered = [(i + 1, line) for i, line in enumerate(lines_of(text))]
    fields, end = _header(numbered)
    units: list[dict] = []
    notes: list[str] = []
    model: dict | None = None
    for n, line in numbered:
        if n <= end or not line.strip():
            continue
        stripped = line.strip()
        bullet = stripped[:1] in "•◦" and stripped[1:2] == " "
        body = stripped[2:].strip() if bullet else stripped
        unit_line = None if (bullet or line.startswith(" ")) else _UNIT_LINE.match(stripped)
        if unit_line:
            count = int(unit_line.group("count") or 1)
            unit = {"name": unit_line.group("name"), "points": int(unit_line.group("points")), "line": n,
                    "count": count, "models": [], "enhancements": [], "warlord": False, "notes": [],
                    "label": unit_line.group("label"), "leading": None, "attached_to": None}
            units.append(unit)
            model = None
            if unit_line.group("items") is not None:
                gear = _items_of(unit, unit_line.group("items"))
                group = _WITH.match(unit_line.group("items"))
                if group:  # "2x Chaos Spawn (95 pts): 2 with Hideous Mutations"
                    gear = _per_model(int(group.group(1)), group.group(2))
                model = {"name": unit["name"], "count": count, "gear": gear, "line": n}
                unit["models"].append(model)
            continue
        if not units:
            raise ArmyListError(f"line {n}: {stripped!r} before the first unit")
        unit = units[-1]
        if body.startswith("Enhancement:"):
            value = body.partition(":")[2].strip()
            unit["enhancements"].append(Enhancement(re.sub(r"\s*\(\+.*\)$", "", value), points_in(value.replace("+", ""))))
        elif _LEADING.match(stripped) and not bullet:
            unit["leading"] = _LEADING.match(stripped).groups()
        elif _ATTACHED_TO.match(stripped) and not bullet:
            unit["attached_to"] = _ATTACHED_TO.match(stripped).group(1)
        elif bullet:
            head, sep, items = body.partition(":")
            count, name = _counted_name(head)
            gear: list[Wargear] = []
            if sep:
                group = _WITH.match(items.strip())
                gear = _per_model(int(group.group(1)), group.group(2)) if group else _items_of(unit, items)
            model = {"name": name, "count": count, "gear": gear, "line": n}
            unit["models"].append(model)
        elif _WITH.match(stripped) and model is not None:
            group = _WITH.match(stripped)
            model["gear"].extend(_per_model(int(group.group(1)), group.group(2)))
        elif stripped.startswith("Created with"):
            notes.append(stripped)
        else:
            unit["notes"].append(stripped)
    if not units:
        raise ArmyListError(f"line {end + 1}: no unit ('1x Name (N pts)') after New Recruit's header")
    listed = [ListedUnit(
        name=u["name"], points=u["points"], line=u["line"],
        models=tuple(ModelLine(m["name"], m["count"], _merge(m["gear"]), m["line"]) for m in u["models"])
        or (ModelLine(u["name"], u["count"], (), u["line"]),),
        enhancements=tuple(u["enhancements"]), warlord=u["warlord"], notes=tuple(u["notes"]),
        role="leader" if u["leading"] else ("bodyguard" if u["attached_to"] else None)) for u in units]
    return _army(fields, "newrecruit-wtc", listed, _tournament_attachments(units), notes)


def _items_of(unit: dict, items: str) -> list[Wargear]:
    """Wargear of a comma list; ``Warlord`` marks the unit instead."""
    gear = []
    for w in wargear_of(items):
        if name_key(w.name) == "warlord":
            unit["warlord"] = True
        else:
            gear.append(w)
    return gear


def _tournament_attachments(units: list[dict]) -> list[Attachment]:
    """Attached units from ``Leading NAME[k]`` (the k-th unit of that name) and ``Attached to
    LEADER`` lines."""
    found: dict[int, list[int]] = {}
    for i, unit in enumerate(units):
        if not unit["leading"]:
            continue
        target, nth = unit["leading"]
        same = [j for j, u in enumerate(units) if name_key(u["name"]) == name_key(target)]
        pick = same[int(nth) - 1] if nth and int(nth) <= len(same) else next(
            (j for j in same if units[j]["attached_to"] and name_key(units[j]["attached_to"]) == name_key(unit["name"])),
            same[0] if same else None)
        if pick is not None:
            found.setdefault(pick, []).append(i)
    return [Attachment(tuple(leaders), guard) for guard, leaders in found.items()]


_MD_UNIT = re.compile(r"^(?P<name>[^•\s].*?)\s*\[(?P<points>[\d,]+)\s*pts\]\s*:?\s*(?P<items>.*)$")
_MD_MODEL = re.compile(r"^(?P<count>\d+)x\s+(?P<name>[^:]+?)\s*(?::\s*(?P<items>.*))?$")


def split_top_level(text: str) -> list[str]:
    """A comma-separated list split outside parentheses.

    >>> split_top_level("Maulerfiend fists, 2 magma cutters (2x Magma cutter), Havoc launcher")
    ['Maulerfiend fists', '2 magma cutters (2x Magma cutter)', 'Havoc launcher']
    """
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _md_items(text: str, unit: dict, each: int = 1) -> list[Wargear]:
    """The wargear of a markdown item list, ``each`` of it per model; an option printed with
    its contents (``2 magma cutters (2x Magma cutter)``) is its contents; ``Warlord`` marks the
    unit."""
    gear: list[Wargear] = []
    for part in split_top_level(text):
        inner = re.fullmatch(r"(.*?)\s*\((.+)\)", part)
        if inner:
            gear.extend(_md_items(inner.group(2), unit, each))
        elif name_key(part) == "warlord":
            unit["warlord"] = True
        else:
            gear.extend(Wargear(w.name, w.count * each) for w in wargear_of(part))
    return gear


def parse_markdown(text: str) -> ArmyList:
    """Read New Recruit's ``NR`` markdown export into an ``ArmyList``.

    Layout: a title ``Chaos - World Eaters - Fiendish! - [2000 pts]``; ``# ++ Army Roster ++``;
    ``## Configuration`` (``Battle Size: ...``, ``Detachment: ...``); headings ``## Battleline
    [180 pts]`` over units ``Name [N pts]: items`` or ``Name [N pts]:`` over model lines ``• 5x
    Khorne Berzerker: Bolt pistol, Chainblade`` (each of the five carries each item). Indented
    lines below a model line (``1 mauler chainblade, 7 chainblades``: the option chosen) are
    kept as notes. Enhancements are printed as items (``Favoured of Khorne``): the matcher
    tells them from wargear. Raises ``ArmyListError`` naming the line it cannot read."""
    numbered = [(i + 1, line) for i, line in enumerate(lines_of(text))]
    body = [(n, line) for n, line in numbered if line.strip()]
    if not body:
        raise ArmyListError("line 1: the file is empty")
    title_line, title = body[0]
    parts = [p.strip() for p in title.split(" - ")]
    name = parts[-2] if len(parts) >= 3 else None
    faction = " - ".join(parts[1:-2]) if len(parts) > 3 else (parts[0] if len(parts) == 3 else None)
    config: dict[str, str] = {}
    extra: list[str] = []  # the configuration's other lines, kept as notes
    units: list[dict] = []
    section = None
    for n, line in numbered:
        if n <= title_line or not line.strip():
            continue
        stripped = line.strip()
        if stripped.startswith("#"):
            section = re.sub(r"\s*\[.*\]\s*$", "", stripped.lstrip("#").strip())
            continue
        if section == "Configuration":
            key, sep, value = stripped.partition(":")
            if key.strip().lower() in ("battle size", "detachment", "detachments") and sep:
                config[key.strip().lower().rstrip("s")] = value.strip()
            else:
                extra.append(stripped)
            continue
        unit_line = None if line.startswith((" ", "•")) else _MD_UNIT.match(stripped)
        if unit_line:
            unit = {"name": unit_line.group("name"), "points": int(unit_line.group("points").replace(",", "")),
                    "line": n, "models": [], "gear": [], "warlord": False, "notes": [], "section": section}
            unit["gear"] = _md_items(unit_line.group("items"), unit)
            units.append(unit)
            continue
        if not units:
            raise ArmyListError(f"line {n}: {stripped!r} before the first unit ('Name [N pts]')")
        unit = units[-1]
        model = _MD_MODEL.match(stripped[1:].strip()) if stripped.startswith("•") else None
        if model:
            count = int(model.group("count"))
            unit["models"].append(ModelLine(model.group("name"), count,
                                            tuple(_md_items(model.group("items") or "", unit, count)), n))
        else:
            unit["notes"].append(stripped)
    if not units:
        raise ArmyListError(f"line {title_line}: no unit ('Name [N pts]') after the title")
    listed = [ListedUnit(
        name=u["name"], points=u["points"], line=u["line"],
        models=tuple(u["models"]) if u["models"] else (ModelLine(u["name"], 1, tuple(u["gear"]), u["line"]),),
        wargear=tuple(u["gear"]) if u["models"] else (), warlord=u["warlord"], section=u["section"],
        notes=tuple(u["notes"])) for u in units]
    size = config.get("battle size", "")
    limit = re.search(r"\((\d+)\s*Point limit\)", size, re.IGNORECASE)
    detachments = tuple(d.strip() for d in config.get("detachment", "").split(",") if d.strip())
    evidence = ["several detachments"] if len(detachments) > 1 else []
    if any(line.lower().startswith("force disposition") for line in extra):
        evidence.append("'Force Disposition' in the configuration")
    return ArmyList(
        format="newrecruit-nr", name=name, faction=faction, detachments=detachments, units=tuple(listed),
        edition=11 if evidence else None, edition_evidence="; ".join(evidence), declared_points=points_in(title),
        points_limit=int(limit.group(1)) if limit else None,
        battle_size=re.sub(r"\s*\(.*\)\s*$", "", size) or None,
        notes=tuple(extra))
