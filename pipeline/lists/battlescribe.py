"""BattleScribe rosters: ``.ros`` (XML) and ``.rosz`` (a zip holding one ``.ros``).

A unit is a top-level ``selection`` of type ``unit`` or ``model`` of a ``force`` (``upgrade``
selections of the Configuration category give the detachment and the battle size); its model
lines are its ``model`` selections (``number`` models), a single-model unit is its own model
line; wargear are the leaf ``upgrade`` selections below (a weapon by its profile's name, ``➤``
and `` - Frag`` profile names folded, with its printed characteristics); ``Warlord`` marks the unit; an upgrade with points and an
ability profile is an Enhancement. Points are the ``pts`` costs of the selection and all below.

BattleScribe rosters do not record Attached units: a Leader is a unit of its own, and the only
text about attaching is the Leader ability's wording (``This model can be attached to the
following units: ...``), a rule of the datasheet, not the player's choice. So a roster's list
has no ``attachments``.

Hostile files: the file and the unzipped roster are at most ``MAX_LIST_BYTES`` (read in
bounded chunks, so a zip that lies about its sizes cannot fill memory), a zip has at most 16
members, read without writing anything to disk (member names are never used as paths), and
the XML is refused if it declares a DOCTYPE or entities (BattleScribe writes none; libxml2
expands internal entities even with ``resolve_entities=False``) and parsed without DTDs or the network and at most ``MAX_NESTING_DEPTH`` deep.
"""

from __future__ import annotations

import io
import re
import zipfile

from lxml import etree

from pipeline.extractors import xml_reason
from pipeline.limits import MAX_LIST_BYTES
from pipeline.lists.errors import ArmyListError
from pipeline.lists.model import ArmyList, Enhancement, ListedUnit, ModelLine, Wargear

MAX_ZIP_MEMBERS = 16


def _unzip(data: bytes) -> bytes:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise ArmyListError(f"line 1: not a readable zip file ({exc})") from None
    if len(members) > MAX_ZIP_MEMBERS:
        raise ArmyListError(f"line 1: a zip of {len(members)} files: a .rosz holds one roster (at most {MAX_ZIP_MEMBERS})")
    rosters = [m for m in members if m.filename.lower().endswith(".ros") and not m.is_dir()]
    if len(rosters) != 1:
        raise ArmyListError(f"line 1: a .rosz holds one .ros roster; this zip has {len(rosters)}")
    member = rosters[0]
    if member.flag_bits & 0x1:
        raise ArmyListError(f"line 1: {member.filename!r} in the zip is encrypted")
    if member.file_size > MAX_LIST_BYTES:
        raise ArmyListError(f"line 1: {member.filename!r} unzips to {member.file_size} bytes: at most {MAX_LIST_BYTES}")
    try:
        with archive.open(member) as stream:
            out = stream.read(MAX_LIST_BYTES + 1)  # bounded, whatever the header says
    except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError, ValueError) as exc:
        raise ArmyListError(f"line 1: cannot unzip {member.filename!r} ({exc})") from None
    if len(out) > MAX_LIST_BYTES:
        raise ArmyListError(f"line 1: {member.filename!r} unzips to more than {MAX_LIST_BYTES} bytes")
    return out


def _local(element) -> str:
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def _children(element, name: str):
    return [c for c in element if _local(c) == name]


def _selections(element):
    return [s for group in _children(element, "selections") for s in _children(group, "selection")]


def _points(selection) -> float:
    own = sum(float(c.get("value") or 0) for group in _children(selection, "costs") for c in _children(group, "cost")
              if (c.get("name") or "").strip().lower() in ("pts", "points"))
    return own + sum(_points(s) for s in _selections(selection))


def _profiles(selection) -> list[tuple[str, str]]:
    return [(p.get("typeName") or "", p.get("name") or "") for group in _children(selection, "profiles")
            for p in _children(group, "profile")]


_CHARACTERISTICS = (("Range",), ("A",), ("BS", "WS"), ("S",), ("AP",), ("D",))


def _weapon_profile(selection, weapon: str) -> tuple[str, ...]:
    """The printed characteristics (range, A, BS/WS, S, AP, D) of the one weapon profile named
    ``weapon`` below ``selection``; () when there is none or several."""
    found = []
    for group in _children(selection, "profiles"):
        for profile in _children(group, "profile"):
            if "weapon" in (profile.get("typeName") or "").lower() and (profile.get("name") or "").strip() == weapon:
                values = {c.get("name"): (c.text or "").strip() for g in _children(profile, "characteristics")
                          for c in _children(g, "characteristic")}
                found.append(tuple(next((values[k] for k in keys if k in values), "") for keys in _CHARACTERISTICS))
    return found[0] if len(found) == 1 else ()


def _weapon_names(selection) -> list[str]:
    names = []
    for kind, name in _profiles(selection):
        if "weapon" in kind.lower():
            name = re.sub(r"\s+-\s+.*$", "", name.replace("➤", "").strip()) if "➤" in name else name
            names.append(name.strip())
    return list(dict.fromkeys(names))


def _gear(selection, into: list[Wargear], unit: dict) -> None:
    """The leaf upgrades below ``selection`` as wargear (Warlord and Enhancements apart)."""
    for s in _selections(selection):
        if s.get("type") == "model":
            continue
        if _selections(s):
            _gear(s, into, unit)
            continue
        name = s.get("name") or ""
        number = int(float(s.get("number") or 1))
        times = re.match(r"^(\d+)\s+", name)
        number *= int(times.group(1)) if times else 1
        if name.strip().lower() == "warlord":
            unit["warlord"] = True
        elif _points(s) > 0 and not _weapon_names(s) and any(k == "Abilities" for k, _ in _profiles(s)):
            unit["enhancements"].append(Enhancement(name, int(_points(s))))
        else:
            into.extend(Wargear(w, number, _weapon_profile(s, w)) for w in (_weapon_names(s) or [name]))


def parse(data: bytes) -> ArmyList:
    """Read a BattleScribe roster (``.ros`` XML or ``.rosz`` zip bytes; module docstring).

    Raises ``ArmyListError`` for a zip or XML that cannot be read safely or is no roster."""
    xml = _unzip(data) if data[:4] == b"PK\x03\x04" else data
    if len(xml) > MAX_LIST_BYTES:
        raise ArmyListError(f"line 1: {len(xml)} bytes of XML: at most {MAX_LIST_BYTES}")
    if re.search(rb"<!(?:DOCTYPE|ENTITY)", xml):
        raise ArmyListError("line 1: the roster declares a DOCTYPE or entities, which BattleScribe never writes; "
                            "refused (entities could expand without bound)")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(xml, parser)
    except etree.XMLSyntaxError as exc:
        line = exc.position[0] if exc.position else 1
        raise ArmyListError(f"line {line}: not well-formed XML ({xml_reason(exc.msg)})") from None
    if _local(root) != "roster":
        raise ArmyListError(f"line {root.sourceline or 1}: root element <{_local(root)}>, expected <roster> (a .ros file)")
    system = root.get("gameSystemName") or ""
    edition = 11 if "11th" in system else (10 if "10th" in system else None)
    units: list[ListedUnit] = []
    detachments: list[str] = []
    battle_size = faction = None
    declared = sum(float(c.get("value") or 0) for g in _children(root, "costs") for c in _children(g, "cost")
                   if (c.get("name") or "").lower() == "pts")
    for force in (f for g in _children(root, "forces") for f in _children(g, "force")):
        # "Imperium - Adeptus Astartes - Ultramarines": the faction and sub-faction, without the
        # grand alliance (the matcher reads each part)
        catalogue = (force.get("catalogueName") or "").split(" - ")
        faction = faction or " - ".join(catalogue[1:] if len(catalogue) > 1 else catalogue) or None
        for s in _selections(force):
            name = s.get("name") or ""
            if s.get("type") == "upgrade":
                chosen = [c.get("name") or "" for c in _selections(s)]
                if name.lower().startswith("detachment"):
                    detachments.extend(chosen)
                elif name.lower() == "battle size" and chosen:
                    battle_size = chosen[0]
                continue
            unit = {"warlord": False, "enhancements": []}
            models = []
            for m in (x for x in _selections(s) if x.get("type") == "model"):
                gear: list[Wargear] = []
                _gear(m, gear, unit)
                models.append(ModelLine(m.get("name") or "", int(float(m.get("number") or 1)), tuple(gear),
                                        m.sourceline or 0))
            unit_gear: list[Wargear] = []
            _gear(s, unit_gear, unit)
            if not models:
                models = [ModelLine(name, int(float(s.get("number") or 1)), tuple(unit_gear), s.sourceline or 0)]
                unit_gear = []
            units.append(ListedUnit(name=name, points=int(_points(s)), models=tuple(models), line=s.sourceline or 0,
                                    enhancements=tuple(unit["enhancements"]), wargear=tuple(unit_gear),
                                    warlord=unit["warlord"]))
    if not units:
        raise ArmyListError("line 1: the roster has no unit")
    limit = re.search(r"\((\d+) Point limit\)", battle_size or "")
    return ArmyList(format="battlescribe", name=root.get("name"), faction=faction, detachments=tuple(detachments),
                    units=tuple(units), edition=edition,
                    edition_evidence=f"game system {system!r}" if edition else "", declared_points=int(declared),
                    points_limit=int(limit.group(1)) if limit else None, battle_size=battle_size)
