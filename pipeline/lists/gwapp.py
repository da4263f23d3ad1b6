"""The Warhammer app's text export (10th and 11th edition, English and French), and the lists
other apps write in its layout (Best Coast Pairings, War Organ's app-style text).

Layout: a title ``R.U.D.E. (2000 points)``; a header block (faction, detachment(s) with
``(3 Detachment Points)`` in the 11th edition, Force Dispositions, the battle size ``Strike Force
(2000 points)``) in an order that varies between app versions; then headings (``CHARACTERS``,
``Attached Units``, ``Attached Unit 1``) and units ``Name (N points)`` with bulleted items
(``pipeline.lists.units``); last, ``Exported with App Version: v2.4.0 ...``. A unit inside
``Attached Unit N`` says ``• Attached as: Leader`` or ``Bodyguard``.
"""

from __future__ import annotations

import re

from pipeline.lists.model import ArmyList, Attachment, ListedUnit
from pipeline.lists.text import (
    _labels, bullet_tree, faction_in_english, label_language, labelled, labels, lines_of, points_in, without_points)
from pipeline.lists.units import UnitItems, read_items, unit_models
from pipeline.normalise.names import name_key

_APP_VERSION = re.compile(r"App Version\s*:\s*v(\d+)\.", re.IGNORECASE)
_VERSION_APPLI = re.compile(r"Version de l'Appli\s*:\s*v(\d+)\.", re.IGNORECASE)


def _attached_unit_heading(text: str) -> str | None:
    """The language of an ``Attached Unit 1`` heading, else None."""
    for language, forms in _labels()["attached_unit"].items():
        for form in forms:
            pattern = re.escape(form).replace(re.escape("{n}"), r"\d+")
            if re.fullmatch(pattern, text, re.IGNORECASE):
                return language
    return None


def _is_heading(text: str) -> bool:
    return (label_language("attached_units", text) is not None or _attached_unit_heading(text) is not None
            or (text == text.upper() and any(c.isalpha() for c in text) and points_in(text) is None))


def _is_footer(text: str) -> bool:
    return any(text.startswith(label) for label in labels("exported_with"))


def _split_names(text: str) -> tuple[str, ...]:
    """Names printed as a list: ``A and B``, ``A, B``.

    >>> _split_names("Advanced Acquisition Cadre and Retaliation Cadre")
    ('Advanced Acquisition Cadre', 'Retaliation Cadre')
    """
    return tuple(p.strip() for p in re.split(r",| and ", text) if p.strip())


def _english_disposition(name: str) -> str:
    table = {name_key(k): v for k, v in _labels()["force_disposition_names"].items()}
    return table.get(name_key(name), name)


def _header(lines: list[str]) -> dict:
    """The header block's faction, detachments, Force Dispositions and battle size.

    Labelled lines are read by their label; of the others the first is the faction (a second
    one before the detachment is the sub-faction, ``Space Marines`` / ``Blood Angels``); the
    detachment is the unlabelled line after them unless a line says ``Detachment Points``, in
    which case unlabelled lines after it are Force Dispositions (``Purge the Foe``)."""
    out: dict = {"faction": None, "detachments": (), "dispositions": (), "battle_size": None, "limit": None,
                 "evidence": [], "language": None}
    unlabelled: list[str] = []
    for text in lines:
        head, sep, value = text.partition(":")
        dp = next((label for label in labels("detachment_points") if label.lower() in text.lower()), None)
        if dp:
            out["detachments"] = _split_names(re.sub(r"\s*\(.*\)\s*$", "", text))
            out["evidence"].append(f"'{dp}' in the header")
            out["language"] = out["language"] or label_language("detachment_points", dp)
        elif sep and label_language("force_dispositions", head.strip()):
            out["dispositions"] = tuple(_english_disposition(d.strip()) for d in value.split(",") if d.strip())
            out["evidence"].append(f"'{head.strip()}' in the header")
        elif points_in(text) is not None:
            out["battle_size"], out["limit"] = without_points(text), points_in(text)
        else:
            unlabelled.append(text)
    if unlabelled:
        out["faction"] = " - ".join(faction_in_english(u) for u in (unlabelled[:1] if out["detachments"] else unlabelled[:-1] or unlabelled[:1]))
        rest = unlabelled[1:]
        if out["detachments"]:
            if rest and not out["dispositions"]:
                out["dispositions"] = tuple(_english_disposition(d.strip()) for r in rest for d in r.split(",") if d.strip())
        elif len(unlabelled) > 1:
            out["detachments"] = _split_names(unlabelled[-1])
    if len(out["detachments"]) > 1:
        out["evidence"].append("several detachments")
    return out


def parse(text: str) -> ArmyList:
    """Read a Warhammer app text export (module docstring) into an ``ArmyList``.

    ``text``: the whole list. Raises ``pipeline.lists.errors.ArmyListError`` (with the line)
    for a list without any unit."""
    from pipeline.lists.errors import ArmyListError

    lines = lines_of(text)
    numbered = [(i + 1, line) for i, line in enumerate(lines)]
    body = [(n, line) for n, line in numbered if line.strip()]
    if not body:
        raise ArmyListError("line 1: the file is empty")
    title_line, title = body[0]
    header: list[str] = []
    position = 1
    # the header is the first block of lines after the title (up to the first blank line)
    after_title = [(n, line) for n, line in numbered if n > title_line]
    started = False
    for n, line in after_title:
        if not line.strip():
            if started:
                break
            continue
        if _is_heading(line) or line.startswith((" ", "•")) or (points_in(line) is not None and not started and False):
            break
        started = True
        header.append(line.strip())
        position = n
    head = _header(header)
    units: list[ListedUnit] = []
    attachments: list[Attachment] = []
    group: list[int] | None = None
    section: str | None = None
    footer: list[str] = []
    current: tuple[int, str, list[tuple[int, str]]] | None = None
    language = head["language"]

    def close() -> None:
        nonlocal language
        if current is None:
            return
        line, header_text, item_lines = current
        items = read_items(bullet_tree(item_lines), UnitItems())
        language = language or items.language
        name = without_points(header_text)
        models, wargear = unit_models(name, items, line)
        units.append(ListedUnit(
            name=name, points=points_in(header_text), models=models, line=line,
            enhancements=tuple(items.enhancements), wargear=wargear, warlord=items.warlord, role=items.role,
            section=section, notes=tuple(items.notes)))
        if group is not None:
            group.append(len(units) - 1)

    def close_group() -> None:
        if group:
            leaders = tuple(i for i in group if units[i].role == "leader")
            guards = [i for i in group if units[i].role != "leader"]
            if leaders and guards:
                attachments.append(Attachment(leaders, guards[0]))

    for n, line in numbered:
        if n <= position or not line.strip():
            continue
        indented = line.startswith(" ") or line.lstrip()[:1] in "•◦"
        if not indented and _is_footer(line):
            footer.append(line)
            language = language or ("fr" if line.startswith("Export") and "é" in line.split()[0] else "en")
            break
        if not indented and points_in(line) is not None:
            close()
            current = (n, line.strip(), [])
        elif not indented and _is_heading(line.strip()):
            close()
            current = None
            if _attached_unit_heading(line.strip()):
                close_group()
                group = []
            elif label_language("attached_units", line.strip()):
                group = None
                section = line.strip()
            else:
                close_group()
                group = None
                section = line.strip()
        elif current is not None:
            current[2].append((n, line))
        else:
            raise ArmyListError(f"line {n}: {line.strip()!r} is neither a heading nor a unit "
                                "('Name (N points)') nor an item of one")
    close()
    close_group()
    if not units:
        raise ArmyListError(f"line {title_line}: no unit ('Name (N points)') found after the title")
    evidence = head["evidence"]
    version = next((m for line in footer for m in [_APP_VERSION.search(line) or _VERSION_APPLI.search(line)] if m), None)
    edition = None
    if evidence:
        edition = 11
    elif version is not None:
        edition = 10 if version.group(1) == "1" else 11
        evidence = [f"app version v{version.group(1)}"]
    return ArmyList(
        format="gw-app", name=without_points(title), faction=head["faction"], detachments=head["detachments"],
        units=tuple(units), edition=edition, edition_evidence="; ".join(evidence) if edition else "",
        declared_points=points_in(title), points_limit=head["limit"], battle_size=head["battle_size"],
        force_dispositions=head["dispositions"], attachments=tuple(attachments), language=language or "en",
        notes=tuple(footer))
