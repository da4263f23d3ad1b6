"""BattleScribe game-system files (BSData) -> the shared rules as rule texts.

The game system of a BattleScribe data set holds the core abilities every catalogue links to
(``Lethal Hits``, ``Feel No Pain``, ``Deadly Demise`` ...) in ``sharedRules``. Two encodings of
the same data model are read:

- ``parse_gst_xml``: XML, BattleScribe schema 2.03 (``BSData/wh40k-10e``, ``Warhammer 40,000.gst``):
  ``<gameSystem><sharedRules><rule id=".." name=".."><description>text</description>``
  (also ``<alias>``, ``<modifiers>``, which are not rule text).
- ``parse_gst_json``: JSON (``BSData/wh40k-11e``, ``Warhammer 40,000.json``):
  ``{"gameSystem": {"sharedRules": [{"id": "..", "name": "..", "description": "text"}]}}``;
  ``description`` is a string, ``null`` (the 11th-edition Support ability), or an object with a
  ``$text`` field.

Output per shared rule: one ``RuleText`` keyed by the slug of its name with the parameter
dropped (``Feel No Pain X`` -> ``feel-no-pain``, ``Anti-`` -> ``anti``; the printed name is the
title; see ``pipeline.aliases.rule_key_from_name``), and one ``RuleReference`` per distinct
11th-edition section number cited in parentheses (``hazard rolls (06.03)``; a section cited
again in the same rule is counted in ``duplicates["rule_references"]``). ``section`` is
None unless the rule's name carries its number (``[LETHAL HITS]24.23``): the BSData files give
none, and the alias table joins the rule to its number. The ``page`` attribute is a 10th-edition
Core Rules page (the 11th-edition file keeps the 10th-edition values) and is not loaded.

Text: ``^^Keyword^^`` markup and ``**bold**`` / ``*italic*`` emphasis removed (the words kept,
``**[LETHAL HITS]**`` -> ``[LETHAL HITS]``); every line cleaned (``clean_line``); lines of a
paragraph joined by a newline and paragraphs by one blank line.

Accounting: a rule with an empty description gives a ``DataGap`` (field ``text``) and no
``RuleText``; a rule whose key was already read with the same text is counted in
``duplicates["rule_texts"]``, with a different text it is rejected (the first is kept); a rule
without a name, a description that is not text, or a file that is not a readable game system is
rejected with its raw text. Nothing is read outside ``sharedRules``: the game system's shared
profiles (``Fortification``, ``Invulnerable Save (4+)``, ``Lord of Deceit (Aura)``) and the
Abilities profiles of its selection entries (Crusade Battle Traits and Battle Scars) are not core
rules.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from lxml import etree

from pipeline.aliases import rule_key_from_name, split_section
from pipeline.errors import NormaliseError
from pipeline.normalise.text import clean_line, strip_battlescribe_markup
from pipeline.extractors import ParseResult, load_json, source_rule_text, xml_reason
from schemas.records import DataFlag, DataGap, Record, Reject, RuleReference, Source

TABLE = "rule_texts"
_RAW_LIMIT = 2000  # characters of raw text kept on a whole-file reject

#: A cross reference to an 11th-edition section, in parentheses: ``(20.04)``, ``(01.07.02)``.
_REFERENCE = re.compile(r"\((?P<section>\d{2}(?:\.\d{2}){1,2})\)")
#: A bold term right before a reference: ``**hazard rolls** (06.03)``.
_BOLD_BEFORE = re.compile(r"\*\*(?P<term>[^*\n]+?)\*\*\s*$")
#: A named step right before a reference: ``the Allocation Order step (05.03)``, also
#: ``the Resolve Fights First Combats step in the Fight phase (12.04)``.
_STEP_BEFORE = re.compile(r"(?P<term>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*\s+step)(?:\s+in the [A-Z][\w-]* phase)?\s*$")
_BOLD = re.compile(r"\*\*(?P<term>[^*\n]+?)\*\*")
_CLAUSE_END = re.compile(r"[.,;:\n]")
_EMPHASIS_RUN = re.compile(r"\*{2,}")
_ITALIC_OPEN = re.compile(r"(?:^|(?<=\s))\*(?=\S)", re.MULTILINE)
_ITALIC_CLOSE = re.compile(r"(?<=[^\s+\d*])\*(?=\s|$|[.,;:)])", re.MULTILINE)
_EDITION_IN_NAME = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th) Edition\b", re.IGNORECASE)


def strip_emphasis(text: str) -> str:
    """Remove Markdown emphasis (``**bold**``, ``***bold italic**``, ``*italic*``), keep the words.

    A single ``*`` after a roll or digit (``5+*``) is kept: it is a footnote mark, not emphasis.

    >>> strip_emphasis("***Example:** a **[BLAST 2]** weapon ... (for a total of seven).*")
    'Example: a [BLAST 2] weapon ... (for a total of seven).'
    >>> strip_emphasis("Invulnerable Save (5+*)")
    'Invulnerable Save (5+*)'
    """
    text = _EMPHASIS_RUN.sub("", text)
    text = _ITALIC_OPEN.sub("", text)
    return _ITALIC_CLOSE.sub("", text)


def plain_rule_text(description: str) -> str:
    """A BattleScribe rule description as plain text: markup and emphasis removed, lines cleaned.

    Lines of a paragraph are joined by a newline, paragraphs by one blank line; empty input
    gives ``""``.

    >>> plain_rule_text("An ^^**Infantry**^^ unit.\\u00a0\\n\\n\\n- **[ASSAULT]** weapon")
    'An Infantry unit.\\n\\n- [ASSAULT] weapon'
    """
    text = strip_emphasis(strip_battlescribe_markup(description)).replace("^^", "")
    paragraphs: list[list[str]] = [[]]
    for raw_line in text.splitlines():
        line = clean_line(raw_line)
        if line:
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n\n".join("\n".join(lines) for lines in paragraphs if lines)


def references(description: str) -> list[tuple[str, str]]:
    """The 11th-edition sections a description cites, as ``(referenced_title, section)``.

    The title is the term the text names right before the number: a bold term
    (``**hazard rolls** (06.03)``), a named step (``the Select Weapons step (04.01)``), else the
    last bold term of the same clause (``the **benefit of cover** against that attack (13.08)``),
    else ``""``. Bracketed weapon abilities (``**[ANTI]**``) and one-letter terms are not titles.
    Page references (``(pg 12)``) are not sections and are not read.

    >>> references("make **hazard rolls** (06.03) in the Select Weapons step (04.01).")
    [('hazard rolls', '06.03'), ('Select Weapons step', '04.01')]
    >>> references("shoot using indirect shooting (10.07)")
    [('', '10.07')]
    """
    text = strip_battlescribe_markup(description)
    found: list[tuple[str, str]] = []
    for match in _REFERENCE.finditer(text):
        before = text[: match.start()]
        term = ""
        bold = _BOLD_BEFORE.search(before)
        step = _STEP_BEFORE.search(before)
        if bold and _is_title(bold.group("term")):
            term = bold.group("term")
        elif step:
            term = step.group("term")
        else:
            clause = before[max((m.end() for m in _CLAUSE_END.finditer(before)), default=0) :]
            terms = [m.group("term") for m in _BOLD.finditer(clause) if _is_title(m.group("term"))]
            term = terms[-1] if terms else ""
        found.append((clean_line(strip_emphasis(term)), match.group("section")))
    return found


def _is_title(term: str) -> bool:
    term = term.strip()
    return len(term) > 1 and not term.startswith("[")


@dataclass(frozen=True)
class _SharedRule:
    """One ``sharedRules`` entry as read from either encoding."""

    locator: str
    name: str
    description: str | None  # None: the source gives no description
    raw: str


def parse_gst_xml(text: str, source: Source) -> ParseResult:
    """Parse a BattleScribe game-system XML file (``.gst``) into its shared rules.

    ``text``: the whole file. ``source``: the manifest entry (``source_id``, ``edition``,
    ``game_mode``, ``version_date`` as the effective date). Returns ``RuleText``,
    ``RuleReference``, ``DataGap`` and ``DataFlag`` records and rejects (module docstring).
    Never raises on bad input: a file that is not well-formed XML or not a ``gameSystem`` is one
    reject. Locators: ``sharedRules/rule[@id='d1d1-611e-5191-1095']``.
    """
    result = ParseResult()
    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True)
    try:
        root = etree.fromstring(text.encode("utf-8"), parser)
    except etree.XMLSyntaxError as exc:
        line = exc.position[0] if exc.position else 1
        return _file_reject(result, source, f"line {line}", text, f"not well-formed XML: {xml_reason(exc.msg)}")
    if etree.QName(root).localname != "gameSystem":
        reason = f"root element is <{etree.QName(root).localname}>, expected <gameSystem> (a .gst file)"
        return _file_reject(result, source, "/", text, reason)
    _check_edition(result, source, root.get("name"), "gameSystem/@name")
    rules: list[_SharedRule] = []
    shared = root.find("{*}sharedRules")
    for number, element in enumerate(shared.iterfind("{*}rule") if shared is not None else (), start=1):
        ident = element.get("id")
        locator = f"sharedRules/rule[@id='{ident}']" if ident else f"sharedRules/rule[{number}]"
        description = element.find("{*}description")
        rules.append(
            _SharedRule(
                locator=locator,
                name=element.get("name") or "",
                description=None if description is None else "".join(description.itertext()),
                raw=etree.tostring(element, encoding="unicode", with_tail=False),
            )
        )
    _read_rules(result, rules, source)
    return result


def parse_gst_json(text: str, source: Source) -> ParseResult:
    """Parse a BattleScribe game system in JSON (BSData 11th edition) into its shared rules.

    ``text``: the whole file, ``{"gameSystem": {..., "sharedRules": [...]}}``. ``source``: as for
    ``parse_gst_xml``. Never raises on bad input: a file that is not JSON or has no
    ``gameSystem`` object is one reject; an entry that is not an object, has no name or a
    description that is not text is rejected. Locators:
    ``gameSystem.sharedRules[?(@.id=='d1d1-611e-5191-1095')]``.
    """
    result = ParseResult()
    try:
        data = load_json(text)
    except json.JSONDecodeError as exc:
        return _file_reject(result, source, f"line {exc.lineno}", text, f"not valid JSON: {exc.msg}")
    except ValueError as exc:  # over a limit of load_json: the nesting depth, a number's digits
        return _file_reject(result, source, "$", text, f"not readable JSON: {exc}")
    system = data.get("gameSystem") if isinstance(data, dict) else None
    if not isinstance(system, dict):
        return _file_reject(result, source, "$", text, "no gameSystem object at the top level (a game-system file)")
    _check_edition(result, source, system.get("name"), "gameSystem.name")
    shared = system.get("sharedRules", [])
    if not isinstance(shared, list):
        return _file_reject(result, source, "gameSystem.sharedRules", json.dumps(shared), "sharedRules is not a list")
    rules: list[_SharedRule] = []
    for index, entry in enumerate(shared):
        ident = entry.get("id") if isinstance(entry, dict) else None
        locator = f"gameSystem.sharedRules[?(@.id=='{ident}')]" if ident else f"gameSystem.sharedRules[{index}]"
        raw = json.dumps(entry, ensure_ascii=False)
        if not isinstance(entry, dict):
            result.rejects.append(_reject(source, locator, raw, "shared rule is not a JSON object"))
            continue
        description = entry.get("description")
        if isinstance(description, dict) and "$text" in description:
            description = description["$text"]
        if description is not None and not isinstance(description, str):
            reason = f"description is a JSON {type(description).__name__}, expected text"
            result.rejects.append(_reject(source, locator, raw, reason))
            continue
        name = entry.get("name")
        rules.append(
            _SharedRule(locator=locator, name=name if isinstance(name, str) else "", description=description, raw=raw)
        )
    _read_rules(result, rules, source)
    return result


def _read_rules(result: ParseResult, rules: list[_SharedRule], source: Source) -> None:
    """Turn shared rules into records, counting duplicates and rejecting conflicting repeats."""
    first: dict[str, tuple[str, str]] = {}  # rule key -> (locator, text) of the first reading
    for rule in rules:
        title = clean_line(strip_battlescribe_markup(rule.name))
        if not title:
            result.rejects.append(_reject(source, rule.locator, rule.raw, "shared rule without a name"))
            continue
        name, section = split_section(title)
        try:
            rule_key = rule_key_from_name(name)
        except NormaliseError as exc:
            result.rejects.append(_reject(source, rule.locator, rule.raw, str(exc)))
            continue
        text = plain_rule_text(rule.description or "")
        if rule_key in first:
            first_locator, first_text = first[rule_key]
            if text == first_text:
                result.duplicates[TABLE] += 1
            else:
                reason = f"rule {rule_key!r} repeated with a different text; the first, at {first_locator}, is kept"
                result.rejects.append(_reject(source, rule.locator, rule.raw, reason))
            continue
        first[rule_key] = (rule.locator, text)
        if not text:
            result.records.append(
                DataGap(
                    source_id=source.source_id,
                    locator=rule.locator,
                    table_name=TABLE,
                    entity_key=rule_key,
                    field="text",
                    reason="empty description in the source",
                )
            )
            continue
        records: list[Record] = [
            source_rule_text(source, rule.locator, rule_key, title, text, section)
        ]
        titles: dict[str, str] = {}  # section -> title: one reference per section, a named one first
        for referenced_title, referenced_section in references(rule.description or ""):
            if referenced_section in titles:
                result.duplicates["rule_references"] += 1
                titles[referenced_section] = titles[referenced_section] or referenced_title
            else:
                titles[referenced_section] = referenced_title
        records.extend(
            RuleReference(
                source_id=source.source_id,
                locator=rule.locator,
                rule_key=rule_key,
                referenced_title=referenced_title,
                referenced_section=referenced_section,
            )
            for referenced_section, referenced_title in titles.items()
        )
        result.records.extend(records)


def _check_edition(result: ParseResult, source: Source, name: Any, locator: str) -> None:
    """Flag a game system whose name states another edition than the manifest declares."""
    match = _EDITION_IN_NAME.search(name) if isinstance(name, str) else None
    if match and source.edition is not None and int(match.group(1)) != source.edition:
        result.records.append(
            DataFlag(
                source_id=source.source_id,
                locator=locator,
                table_name="sources",
                entity_key=source.source_id,
                flag="edition_mismatch",
                detail=f"the file is named {name!r}; the manifest declares edition {source.edition}",
            )
        )


def _reject(source: Source, locator: str, raw: str, reason: str) -> Reject:
    return Reject(source_id=source.source_id, locator=locator, table_name=TABLE, raw_text=raw, reason=reason)


def _file_reject(result: ParseResult, source: Source, locator: str, text: str, reason: str) -> ParseResult:
    result.rejects.append(_reject(source, locator, text[:_RAW_LIMIT], reason))
    return result
