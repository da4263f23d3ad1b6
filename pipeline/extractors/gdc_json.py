"""Game Datacards JSON (the data behind the Game Datacards app): extract what a faction file prints.

A faction file (``space_marines.json``) holds ``datasheets[]`` and, beside them, the faction's
``detachments``, ``stratagems``, ``enhancements`` and ``rules``. Texts are either plain strings
(the 10th-edition Combat Patrol files) or dicts per language (``{"en": ..., "de": ...}``, the
11th-edition files): the English text is read. Formats:

- ``gdc-json``: one faction (or Combat Patrol) file;
- ``gdc-json-folder``: every ``.json`` of a folder (``pipeline.extractors.FOLDER_FILES``), read
  together so that leader links and repeated names resolve across the files. A file without
  ``datasheets`` (``faqs.json``, ``keywords.json``, the Combat Patrol ``index.json``) holds rules
  texts or an index, not datasheets: it is counted in ``boilerplate`` and not read.

What each datasheet gives, handed to the shared assembly (``pipeline.assemble``):

- ``stats[]``: one ``PrintedModel`` per line; the invulnerable save is an ability
  (``abilities.invul`` ``value`` and ``info``: the ``*`` note, ``*Against ranged attacks only*``)
  given to every line, or to the line the note names (``*Ibram Gaunt model only.*``) / not to the
  one it excludes (``*Excluding the Cyber-mastiff.*``);
- ``rangedWeapons`` / ``meleeWeapons``: one ``PrintedWeapon`` per profile (``Plasma pistol –
  Supercharge`` names a profile), its ``keywords`` as the ability cell; a weapon's own named
  rules (``abilities`` of the weapon: ``Conversion``, ``Linked Fire``) are abilities of kind
  ``other``;
- ``abilities``: ``core`` (the parameter split off: ``Deadly Demise D3``), ``faction``, ``other``
  (kind ``datasheet``), ``wargear``, ``special`` and ``primarch`` (kind ``other``; a primarch's
  group gives each of its abilities), ``damaged`` (a ``DamagedProfile``: ``1-5 WOUNDS REMAINING``,
  with the hit-roll modifier as data when the text is that plain change), ``transport`` (an
  ability ``Transport`` of kind ``other``);
- ``keywords`` and ``factions`` (faction keywords), ``composition`` (``**4-9 Battle Sisters**``,
  ``OR``), ``loadout`` (one ``**X is equipped with:** ...`` line each), ``wargear`` (option lines),
  ``wargearOptions`` (a ``WargearCost`` for each choice that costs points), ``leader`` (``This
  model can be attached to the following units: ■ **X** ■ **Y**``: a ``LeaderLink`` to each unit
  of that name in the faction; the ``Support`` ability's text gives links of kind ``support``),
  ``points[]`` and ``additionalCost`` (``UnitCost`` rows: ``{cost: 10, afterSelections: 2}`` adds a
  row for each unit size costing 10 more from the 3rd unit on; a keyword or detachment of a cost
  is its ``condition``; a 0-point cost is rejected, never loaded);
- the file's ``detachments`` (Detachment Points, Force Disposition), ``stratagems`` and
  ``enhancements``;
- the file's detachment rules (``rules.detachment[]``: a detachment's name and id, and its
  rules, each a name and parts): one ``DetachmentAbility`` per rule, as the 10th edition's
  Detachment_abilities.csv gives them, its text the parts' texts in their ``order``, one line each
  (``header``, ``text``, ``textBold``, ``boxedText``, ``accordion``; an ``image`` or ``bullets``
  part printed as ``-`` holds no text and is skipped), the faction the file's; id
  ``<detachment id>--<slug of the rule's name>``. Army rules are rules texts, counted in
  ``boilerplate``.

Markup: ``**bold**`` is taken off, HTML (``<ul><li>``, ``<b>``, ``<k>``) becomes plain lines.

Ids: ``ids.datasheet_id(edition, faction, name)`` with the faction id of the file's faction
(``ids.faction_id``: a chapter file, ``parent_name`` ``Adeptus Astartes``, files under Space
Marines); a second datasheet of one name in a faction (the Black Templars' own Repulsor beside
the Space Marines' one) is ``ids.qualified_datasheet_id(first, its file's faction)``. A Combat
Patrol source's datasheets are scoped by their Combat Patrol: ``cp-sanctuary-guardians/...`` in
the 10th edition (as the Wahapedia page's), ``11e-cp-sanctuary-guardians/...`` in the 11th.
Locators: ``<file> datasheets[i] (<name>)`` and below it the JSON path.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from pipeline.assemble.abilities import assemble_ability
from pipeline.assemble.collector import Collector
from pipeline.assemble.composition import assemble_composition
from pipeline.assemble.datasheets import assemble_datasheet
from pipeline.assemble.ids import FACTION_NAMES, datasheet_id, faction_id, qualified_datasheet_id, scoped_datasheet_id
from pipeline.assemble.keywords import read_keyword
from pipeline.assemble.loadouts import assemble_loadout, read_loadout_line
from pipeline.assemble.models import assemble_model
from pipeline.assemble.printed import (
    PrintedAbility, PrintedComposition, PrintedDatasheet, PrintedModel, PrintedStratagem,
    PrintedWeapon,
)
from pipeline.assemble.stratagems import assemble_stratagem
from pipeline.assemble.weapons import assemble_weapon, raw_weapon_text
from pipeline.errors import NormaliseError
from pipeline.extractors import ParseResult, TooDeep, load_json, source_rule_text
from pipeline.normalise.composition import model_groups
from pipeline.normalise.names import name_key
from pipeline.normalise.text import clean_line, html_to_text, slug
from schemas.records import (
    Ability,
    DamagedProfile,
    Detachment,
    DetachmentAbility,
    Enhancement,
    Faction,
    Keyword,
    LeaderLink,
    Record,
    Source,
    UnitComposition,
    UnitCost,
    WargearCost,
    WargearOption,
)
from pydantic import ValidationError

Tree = dict[str, Any]

#: ``abilities`` keys of a datasheet that list abilities, and the kind each is stored as.
ABILITY_KINDS: dict[str, str] = {
    "core": "core", "faction": "faction", "other": "datasheet", "wargear": "wargear",
    "special": "other", "primarch": "other",
}
#: ``abilities`` keys read otherwise (``invul``: the model lines; ``damaged``: a DamagedProfile).
ABILITY_OTHER_KEYS = frozenset({"invul", "damaged"})
#: The language read of a text given per language.
LANGUAGE = "en"
#: The prefix of a Combat Patrol file's name (``Combat Patrol: Sanctuary Guardians``).
_CP_PREFIX = re.compile(r"^Combat Patrol:\s*", re.IGNORECASE)
_BOLD = re.compile(r"\*\*")
_BULLET = re.compile(r"^\s*[■•◦-]\s*")
#: A composition line's keyword tail: ``1 Adrax Agatone – EPIC HERO``.
_NAME_KEYWORD_TAIL = re.compile(r"\s+[–—-]\s+[A-Z][A-Z ]+$")
_NAME_AND_COUNT = re.compile(r"^(?P<name>[^()]+?)\s*\((?P<n>\d{1,3})\s+MODELS?\)$", re.IGNORECASE)
_WOUNDS_REMAINING = re.compile(r"^\s*(?P<min>\d+)\s*:?\s*-\s*(?P<max>\d+)\s+WOUNDS?\s+REMAINING\s*$", re.IGNORECASE)
_HIT_ROLL = re.compile(
    r"^While this model has \d+-\d+ wounds remaining, each time this model makes an attack, "
    r"subtract (?P<n>\d) from the Hit roll\.?$", re.IGNORECASE)
_BOLD_NAME = re.compile(r"^\s*\**([^*\n]+?)\*\*")
_ATTACHED_TO = re.compile(r"can be attached to the following units?:?", re.IGNORECASE)
_MODEL_ONLY = re.compile(r"^\*?\s*(?:the\s+)?(?P<who>.+?)\s+models?\s+only\.?\s*\*?$", re.IGNORECASE)
_EXCLUDING = re.compile(r"^\*?\s*Excluding\s+(?:the\s+)?(?P<who>.+?)\.?\s*\*?$", re.IGNORECASE)


def english(value: object) -> str:
    """The English text of a value given per language, or the value itself when it is a string.

    >>> english({"en": "Leader", "de": "Anführer"}), english("Leader"), english(None), english(12)
    ('Leader', 'Leader', '', '12')
    """
    if isinstance(value, dict):
        value = value.get(LANGUAGE, "")
    if value is None:
        return ""
    return str(value)


def plain_text(value: object) -> str:
    """A rule text as plain text: the English text, HTML lists as lines, ``**bold**`` taken off,
    each line cleaned, empty lines dropped.

    >>> plain_text({"en": "<ul><li><k>Speeder</k> only.</li><li>Re-roll <b>A</b>.</li></ul>"})
    'Speeder only.\\nRe-roll A.'
    >>> plain_text("Each time a **CHARACTER** unit...\\n\\n■ You can re-roll.")
    'Each time a CHARACTER unit...\\n■ You can re-roll.'
    """
    text = english(value)
    if "<" in text or "&lt;" in text:
        text = html_to_text(text.replace("\r", ""))
    text = _BOLD.sub("", text)
    return "\n".join(line for line in (clean_line(x) for x in text.replace("\r", "\n").split("\n")) if line)


def plain_name(value: object) -> str:
    """A printed name on one line, markup and surrounding spaces taken off.

    >>> plain_name({"en": "Ministorum heavy flamer "}), plain_name("**1 Sister Superior**")
    ('Ministorum heavy flamer', '1 Sister Superior')
    """
    return clean_line(" ".join(plain_text(value).split("\n")))


def _int(text: object) -> int | None:
    t = clean_line(english(text))
    return int(t) if re.fullmatch(r"\d{1,6}", t) else None


def parse_file(text: str, source: Source) -> ParseResult:
    """Parse one Game Datacards faction (or Combat Patrol) file (format ``gdc-json``).

    Returns the records, rejects and counted duplicates (see the module docstring). A text that
    is not JSON, or is nested too deep, is one reject of the whole file.
    """
    return parse_folder({"file.json" if not source.file else source.file.rsplit("/", 1)[-1]: text}, source)


def parse_folder(files: dict[str, str], source: Source) -> ParseResult:
    """Parse a folder of Game Datacards files read together (format ``gdc-json-folder``):
    ``files`` maps each file name to its text. See the module docstring."""
    reader = _Reader(source, Collector(source.source_id))
    documents: list[tuple[str, Tree]] = []
    for name in sorted(files):
        try:
            data = load_json(files[name])
        except (json.JSONDecodeError, TooDeep, ValueError) as exc:
            reader.collector.reject("datasheets", f"{name}", files[name][:200], f"not a JSON file: {exc}")
            continue
        if not isinstance(data, dict) or not isinstance(data.get("datasheets"), list):
            reader.boilerplate["gdc: files without datasheets (FAQs, keywords, index: not read here)"] += 1
            continue
        documents.append((name, data))
    # a faction's own file before its chapters' (``parent_name``): a name both print is the
    # faction's datasheet under the plain id, the chapter's under a qualified one
    for name, doc in sorted(documents, key=lambda item: (bool(item[1].get("parent_name")), item[0])):
        reader.read_document(name, doc)
    reader.resolve_leaders()
    return ParseResult(records=reader.collector.records, rejects=reader.collector.rejects,
                       duplicates=reader.collector.duplicates, boilerplate=reader.boilerplate)


@dataclass
class _Sheet:
    """A datasheet read, kept for the leader links (resolved once every file is read)."""

    ds_id: str
    name: str
    faction_id: str
    scope: str  # the file it is in, for a name looked up first there
    locator: str
    leads: list[tuple[str, str]]  # (printed unit name, kind)


@dataclass
class _Reader:
    source: Source
    collector: Collector
    boilerplate: Counter[str] = field(default_factory=Counter)
    sheets: list[_Sheet] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)  # datasheet id -> locator of the first
    factions: set[str] = field(default_factory=set)
    scope: str | None = None  # the Combat Patrol of the file being read

    @property
    def sid(self) -> str:
        return self.source.source_id

    def add(self, record: Record) -> None:
        self.collector.add(record)

    def flag(self, table: str, entity: str, code: str, detail: str, locator: str) -> None:
        self.collector.flag(table, entity, code, detail, locator)

    # -- a file

    def read_document(self, file: str, doc: Tree) -> None:
        combat_patrol = self.source.game_mode == "combat-patrol" or bool(doc.get("isCombatPatrol"))
        printed_faction = plain_name(doc.get("parent_name") or doc.get("name"))
        if combat_patrol:
            sheets = [d for d in doc["datasheets"] if isinstance(d, dict)]
            first = next((english(f) for d in sheets for f in d.get("factions") or []), "")
            printed_faction = plain_name(first) or printed_faction
        fid = faction_id(printed_faction) if printed_faction else None
        if fid is None:
            fid = slug(printed_faction) or "unknown"
            self.flag("factions", fid, "faction_not_mapped",
                      f"no faction id for {printed_faction!r} in pipeline.assemble.ids.FACTION_IDS: the slug "
                      "of its name is used", file)
        if fid not in self.factions:
            self.factions.add(fid)
            self.add(Faction(source_id=self.sid, locator=file, faction_id=fid,
                             name=FACTION_NAMES.get(fid, printed_faction or fid)))
        scope = None
        if combat_patrol:
            scope = self._combat_patrol_scope(doc, file)
        self.scope = scope
        for i, sheet in enumerate(doc["datasheets"]):
            locator = f"{file} datasheets[{i}]"
            if not isinstance(sheet, dict):
                self.collector.reject("datasheets", locator, json.dumps(sheet)[:500], "a datasheet that is not an object")
                continue
            try:
                _Datasheet(self, file, doc, sheet, locator, fid, scope).run()
            except (NormaliseError, ValidationError, KeyError, TypeError, ValueError, AttributeError) as exc:
                self.collector.reject("datasheets", locator, json.dumps(sheet, ensure_ascii=False)[:2000],
                                      f"datasheet not read: {exc}")
        self.read_detachments(file, doc, fid)
        self.read_stratagems(file, doc)
        self.read_enhancements(file, doc)
        rules = doc.get("rules")
        if isinstance(rules, dict):
            self.read_detachment_rules(file, rules.get("detachment"), fid)
            self.read_army_rules(file, rules.get("army"))
            for group, items in rules.items():
                if group not in ("detachment", "army") and isinstance(items, list) and items:
                    self.boilerplate[f"gdc: {group} rules (rules texts: not read here)"] += len(items)

    def _combat_patrol_scope(self, doc: Tree, file: str) -> str:
        """``cp-<name>`` (10th edition) or ``11e-cp-<name>`` (11th) of a Combat Patrol file: the
        name after ``Combat Patrol:`` (10th-edition files), else its first detachment's (the
        11th-edition files are named by faction), else the file's."""
        printed = plain_name(doc.get("name"))
        name = _CP_PREFIX.sub("", printed) if _CP_PREFIX.match(printed) else ""
        detachments = doc.get("detachments") or []
        if not name and detachments:
            first = detachments[0]
            name = plain_name(first.get("name") if isinstance(first, dict) else first)
        prefix = "cp" if self.source.edition == 10 else f"{self.source.edition}e-cp"
        return f"{prefix}-{slug(name) or slug(file.rsplit('.', 1)[0])}"

    # -- the file's own lists

    def scoped(self, own_id: str) -> str:
        """A stratagem's or enhancement's id, within its Combat Patrol for a Combat Patrol file
        (the files of both editions and the faction files reuse ids for other texts)."""
        return f"{self.scope}/{own_id}" if self.scope else own_id

    def read_detachments(self, file: str, doc: Tree, fid: str) -> None:
        for i, d in enumerate(doc.get("detachments") or []):
            locator = f"{file} detachments[{i}]"
            if isinstance(d, dict):
                name = plain_name(d.get("name"))
                did = clean_line(str(d.get("id") or "")) or f"gdc-{fid}-{slug(name)}"
                disposition = d.get("forceDisposition")
                force = plain_name(disposition.get("name")) if isinstance(disposition, dict) else plain_name(disposition)
                points = d.get("detachmentPoints")
                points = points if isinstance(points, int) and not isinstance(points, bool) else _int(points)
            else:
                name, force, points = plain_name(d), "", None
                did = f"gdc-{fid}-{slug(name)}"
            if not name:
                self.collector.reject("detachments", locator, json.dumps(d, ensure_ascii=False)[:500], "a detachment without a name")
                continue
            self.add(Detachment(source_id=self.sid, locator=locator, detachment_id=did, faction_id=fid, name=name,
                                legend=None, type=None, detachment_points=points, force_disposition=force or None))

    def read_detachment_rules(self, file: str, detachments: object, fid: str) -> None:
        """One ``DetachmentAbility`` per rule of each detachment of ``rules.detachment``."""
        for i, d in enumerate(detachments if isinstance(detachments, list) else []):
            if not isinstance(d, dict):
                self.collector.reject("detachment_abilities", f"{file} rules.detachment[{i}]",
                                      json.dumps(d, ensure_ascii=False)[:500], "a detachment's rules that are not an object")
                continue
            detachment = plain_name(d.get("detachment")) or None
            did = clean_line(str(d.get("detachment_id") or "")) or (f"gdc-{fid}-{slug(detachment)}" if detachment else None)
            for j, rule in enumerate(d.get("rules") or []):
                locator = f"{file} rules.detachment[{i}].rules[{j}]"
                name = plain_name(rule.get("name")) if isinstance(rule, dict) else ""
                text = rule_parts_text(rule.get("rules")) if isinstance(rule, dict) else ""
                if not name or not text:
                    self.collector.reject("detachment_abilities", locator, json.dumps(rule, ensure_ascii=False)[:500],
                                          "a detachment rule without a name" if not name else
                                          "a detachment rule without a text")
                    continue
                self.add(DetachmentAbility(
                    source_id=self.sid, locator=locator,
                    detachment_ability_id=self.scoped(f"{did or slug(file)}--{slug(name)}"),
                    detachment_id=did, detachment=detachment, faction_id=fid, name=name, legend=None, text=text))

    def read_army_rules(self, file: str, army: object) -> None:
        """One ``RuleText`` (section ``army rule``, rule key the name's slug) per army rule of
        ``rules.army`` (Oath of Moment: the faction ability its datasheets name)."""
        for i, rule in enumerate(army if isinstance(army, list) else []):
            locator = f"{file} rules.army[{i}]"
            name = plain_name(rule.get("name")) if isinstance(rule, dict) else ""
            text = rule_parts_text(rule.get("rules")) if isinstance(rule, dict) else ""
            if not name or not text:
                self.collector.reject("rule_texts", locator, json.dumps(rule, ensure_ascii=False)[:500],
                                      "an army rule without a name" if not name else "an army rule without a text")
                continue
            self.add(source_rule_text(self.source, locator, slug(name), name, text, section="army rule"))

    def read_stratagems(self, file: str, doc: Tree) -> None:
        for i, s in enumerate(doc.get("stratagems") or []):
            locator = f"{file} stratagems[{i}]"
            name = plain_name(s.get("name")) if isinstance(s, dict) else ""
            if not name or not s.get("id"):
                self.collector.reject("stratagems", locator, json.dumps(s, ensure_ascii=False)[:500],
                                      "a stratagem without a name or id")
                continue
            cost = s.get("cost")
            detachment = plain_name(s.get("detachment"))
            printed = PrintedStratagem(
                locator, name, None if cost is None else english(cost), plain_name(s.get("type")) or "",
                group=detachment, legend=plain_text(s.get("fluff")) or None,
                when=plain_text(s.get("when")) or None, target=plain_text(s.get("target")) or None,
                effect=plain_text(s.get("effect")) or None, restrictions=plain_text(s.get("restrictions")) or None)
            # the id is the name's: a stratagem of one name in two detachments shares it
            sid = self.scoped(f"{s['id']}--{slug(detachment)}" if detachment else str(s["id"]))
            try:
                assembled = assemble_stratagem(printed, self.sid, sid, self.source.edition)
            except ValueError as e:
                self.collector.reject("stratagems", locator, json.dumps(s, ensure_ascii=False)[:500], str(e))
                continue
            assembled.into(self.collector, locator)

    def read_enhancements(self, file: str, doc: Tree) -> None:
        for i, e in enumerate(doc.get("enhancements") or []):
            locator = f"{file} enhancements[{i}]"
            name = plain_name(e.get("name")) if isinstance(e, dict) else ""
            if not name or not e.get("id"):
                self.collector.reject("enhancements", locator, json.dumps(e, ensure_ascii=False)[:500],
                                      "an enhancement without a name or id")
                continue
            detachment = plain_name(e.get("detachment"))
            # the id is the name's: an enhancement of one name in two detachments shares it
            eid = self.scoped(f"{e['id']}--{slug(detachment)}" if detachment else str(e["id"]))
            self.add(Enhancement(
                source_id=self.sid, locator=locator, enhancement_id=eid, name=name,
                detachment=detachment or None, is_default=None,
                cost_points=_int(e.get("cost")), legend=None, text=plain_text(e.get("description")),
            ))

    # -- leader links, once every datasheet is known

    def resolve_leaders(self) -> None:
        """A ``LeaderLink`` from each Leader (or Support unit) to each unit its text names: the
        datasheet of that name (``name_key``, plural aside) in the same file, else in the same
        faction. A name that matches none is rejected (table ``leader_links``) with the reason."""
        by_file: dict[tuple[str, str], list[_Sheet]] = {}
        by_faction: dict[tuple[str, str], list[_Sheet]] = {}
        for s in self.sheets:
            key = name_key(s.name, ignore_plural=True)
            by_file.setdefault((s.scope, key), []).append(s)
            by_faction.setdefault((s.faction_id, key), []).append(s)
        for s in self.sheets:
            for printed, kind in s.leads:
                key = name_key(printed, ignore_plural=True)
                found = by_file.get((s.scope, key)) or by_faction.get((s.faction_id, key))
                if not found:
                    self.collector.reject("leader_links", s.locator, printed,
                                          f"{s.name!r} can be attached to {printed!r}: no datasheet of that name "
                                          f"in {s.scope} or faction {s.faction_id}")
                    continue
                for target in found[:1]:
                    self.add(LeaderLink(source_id=self.sid, locator=s.locator, leader_datasheet_id=s.ds_id,
                                        bodyguard_datasheet_id=target.ds_id, leader_name=s.name,
                                        bodyguard_name=target.name, kind=kind))


@dataclass
class _Datasheet:
    """One datasheet of a file, read into the collector."""

    reader: _Reader
    file: str
    doc: Tree
    sheet: Tree
    locator: str
    faction_id: str
    scope: str | None
    composition_in_loadout: int = 0  # lines of the loadout read as the composition

    @property
    def sid(self) -> str:
        return self.reader.sid

    def add(self, record: Record) -> None:
        self.reader.add(record)

    def run(self) -> None:
        r, sheet = self.reader, self.sheet
        name = plain_name(sheet.get("name"))
        if not name:
            raise NormaliseError("a datasheet without a name")
        self.name = name
        self.locator = f"{self.locator} ({name})"
        if self.scope is not None:
            ds_id = scoped_datasheet_id(self.scope, name)
        else:
            ds_id = datasheet_id(r.source.edition, self.faction_id, name)
        if ds_id in r.ids:
            qualifier = plain_name(self.doc.get("name")) or self.file
            first, ds_id = r.ids[ds_id], qualified_datasheet_id(ds_id, qualifier)
            if ds_id in r.ids:
                ds_id = qualified_datasheet_id(ds_id, str(sheet.get("id") or self.locator))
            r.flag("datasheets", ds_id, "repeated_datasheet_name",
                   f"{name!r} is also the datasheet at {first}; this one ({self.file}) is {ds_id}", self.locator)
        r.ids[ds_id] = self.locator
        self.ds_id = ds_id
        printed_edition = english(sheet.get("source"))
        if printed_edition and r.source.edition and printed_edition != f"40k-{r.source.edition}e":
            r.flag("datasheets", ds_id, "edition_differs",
                   f"the datasheet says {printed_edition!r}; the source is of edition {r.source.edition}", self.locator)
        abilities = sheet.get("abilities") if isinstance(sheet.get("abilities"), dict) else {}
        rows, model_count = self.composition()
        self.add(assemble_datasheet(PrintedDatasheet(
            self.locator, name, self.faction_id, r.source.edition, r.source.game_mode or "matched",
            external_id=str(sheet["id"]) if sheet.get("id") else None, model_count=model_count), self.sid, ds_id, rows))
        self.models(abilities)
        self.weapons()
        self.abilities(abilities)
        self.keywords()
        self.loadout()
        self.wargear()
        self.points()
        self.damaged(abilities)
        leads = self.leads(abilities)
        r.sheets.append(_Sheet(ds_id, name, self.faction_id, self.scope or self.file, self.locator, leads))

    # -- parts

    def composition(self) -> tuple[list[UnitComposition], str | None]:
        """The ``UnitComposition`` rows (``assemble_composition``: one per model group) and the
        model count printed with a name (the 10th-edition form ``CANONESS ADALYA (1 MODEL)``)."""
        printed_lines = list(self.sheet.get("composition") or [])
        where = "composition"
        if not printed_lines:  # some Combat Patrol files print it in the loadout: ``■ Arkoth (1 model)``
            where = "loadout"
            for line_text in plain_text(self.sheet.get("loadout")).split("\n"):
                text = _BULLET.sub("", line_text)
                if text and read_loadout_line(text) is None and (_NAME_AND_COUNT.match(text) or model_groups(text)):
                    printed_lines.append(text)
            self.composition_in_loadout = len(printed_lines)
        rows: list[UnitComposition] = []
        counted_total: int | None = 0
        for i, printed in enumerate(printed_lines):
            text = _BULLET.sub("", plain_name(printed))
            if not text:
                continue
            locator = f"{self.locator} {where}[{i}]" if where == "composition" else f"{self.locator} loadout"
            models = _NAME_KEYWORD_TAIL.sub("", text)
            counted = _NAME_AND_COUNT.match(text)
            if counted and model_groups(models) is None:
                models = f"{counted.group('n')} {counted.group('name')}"
                counted_total = None if counted_total is None else counted_total + int(counted.group("n"))
            else:
                counted_total = None
            assembled = assemble_composition(PrintedComposition(locator, text, models=models), self.sid, self.ds_id,
                                             len(rows) + 1)
            assembled.into(self.reader.collector, locator)
            rows += [r for r in assembled.records if isinstance(r, UnitComposition)]
        return rows, (str(counted_total) if counted_total else None)

    def models(self, abilities: Tree) -> None:
        invul = abilities.get("invul") if isinstance(abilities.get("invul"), dict) else {}
        value = clean_line(english(invul.get("value")))
        note = plain_name(invul.get("info")) or None
        stats = [s for s in self.sheet.get("stats") or [] if isinstance(s, dict)]
        names = [plain_name(s.get("name")) or self.name for s in stats]
        if not stats:
            self.reader.collector.gap("model_profiles", self.ds_id, "characteristics",
                                      "the datasheet has no stats", self.locator)
        for line, (stat, model) in enumerate(zip(stats, names), start=1):
            locator = f"{self.locator} stats[{line - 1}]"
            has_save = bool(value) and value not in ("-", "None") and _gets_invulnerable(model, note, names)
            printed = PrintedModel(
                locator=locator, line=line, name=model,
                move=_cell(stat, "m"), toughness=_cell(stat, "t"), save=_cell(stat, "sv"),
                wounds=_cell(stat, "w"), leadership=_cell(stat, "ld"), objective_control=_cell(stat, "oc"),
                invulnerable_save=value if has_save else None,
                invulnerable_save_note=note if has_save else None,
            )
            try:
                assemble_model(printed, self.sid, self.ds_id, self.name).into(self.reader.collector, locator)
            except NormaliseError as exc:
                self.reader.collector.reject("model_profiles", locator, json.dumps(stat, ensure_ascii=False), str(exc))

    def weapons(self) -> None:
        for table, is_melee in (("rangedWeapons", False), ("meleeWeapons", True)):
            for i, weapon in enumerate(self.sheet.get(table) or []):
                if not isinstance(weapon, dict):
                    continue
                for j, profile in enumerate(weapon.get("profiles") or []):
                    locator = f"{self.locator} {table}[{i}].profiles[{j}]"
                    printed = PrintedWeapon(
                        locator=locator, name=plain_name(profile.get("name")), range=english(profile.get("range")),
                        attacks=english(profile.get("attacks")), skill=english(profile.get("skill")),
                        strength=english(profile.get("strength")), armour_penetration=english(profile.get("ap")),
                        damage=english(profile.get("damage")),
                        abilities=", ".join(plain_name(k) for k in profile.get("keywords") or [] if plain_name(k)),
                        is_melee=is_melee,
                    )
                    try:
                        assemble_weapon(printed, self.sid, self.ds_id).into(self.reader.collector, locator)
                    except NormaliseError as exc:
                        self.reader.collector.reject("weapon_profiles", locator, raw_weapon_text(printed), str(exc))
                for k, rule in enumerate(weapon.get("abilities") or []):
                    self.ability("other", rule, f"{self.locator} {table}[{i}].abilities[{k}]")

    def ability(self, kind: str, item: object, locator: str) -> None:
        if isinstance(item, dict):
            printed, text = plain_name(item.get("name")), plain_text(item.get("description"))
            restriction = plain_text(item.get("restriction"))
            if restriction:
                text = f"{text}\n{restriction}".strip()
        else:
            printed, text = plain_name(item), ""
        if not printed:
            self.reader.collector.reject("abilities", locator, json.dumps(item, ensure_ascii=False)[:500],
                                         "an ability without a name")
            return
        self.add(assemble_ability(PrintedAbility(locator, kind, printed, text or None), self.sid, self.ds_id))

    def abilities(self, abilities: Tree) -> None:
        for key, items in abilities.items():
            if key in ABILITY_OTHER_KEYS:
                continue
            kind = ABILITY_KINDS.get(key)
            if kind is None:
                self.reader.collector.reject("abilities", f"{self.locator} abilities.{key}",
                                             json.dumps(items, ensure_ascii=False)[:500],
                                             f"unknown ability group {key!r} (known: {', '.join(ABILITY_KINDS)})")
                continue
            for i, item in enumerate(items if isinstance(items, list) else []):
                locator = f"{self.locator} abilities.{key}[{i}]"
                if key == "primarch" and isinstance(item, dict):
                    for j, sub in enumerate(item.get("abilities") or []):
                        self.ability(kind, sub, f"{locator}.abilities[{j}]")
                    continue
                self.ability(kind, item, locator)
        transport = plain_text(self.sheet.get("transport"))
        if transport:
            self.add(Ability(source_id=self.sid, locator=f"{self.locator} transport", datasheet_id=self.ds_id,
                             kind="other", name="Transport", parameter=None, text=transport))

    def keywords(self) -> None:
        factions = [read_keyword(plain_name(f)) for f in self.sheet.get("factions") or []]
        factions = [f for f in dict.fromkeys(factions) if f]
        for keyword in factions:
            self.add(Keyword(source_id=self.sid, locator=f"{self.locator} factions", datasheet_id=self.ds_id,
                             keyword=keyword, is_faction_keyword=True))
        for printed in self.sheet.get("keywords") or []:
            keyword = read_keyword(plain_name(printed))
            if keyword and keyword not in factions:
                self.add(Keyword(source_id=self.sid, locator=f"{self.locator} keywords", datasheet_id=self.ds_id,
                                 keyword=keyword, is_faction_keyword=False))

    def loadout(self) -> None:
        text = plain_text(self.sheet.get("loadout"))
        line = 0
        for printed in text.split("\n"):
            stripped = _BULLET.sub("", printed)
            if not stripped:
                continue
            row = assemble_loadout(stripped, source_id=self.sid, locator=f"{self.locator} loadout",
                                   datasheet_id=self.ds_id, line=line + 1)
            if row is None:
                if self.composition_in_loadout:  # read as the unit's composition
                    self.composition_in_loadout -= 1
                    continue
                self.reader.boilerplate["gdc: loadout lines that are no 'equipped with' line (notes, a composition)"] += 1
                continue
            line += 1
            self.add(row)

    def wargear(self) -> None:
        line = 0
        for printed in self.sheet.get("wargear") or []:
            text = plain_text(printed)
            if not text or text.casefold() in ("none", "none."):
                continue
            line += 1
            self.add(WargearOption(source_id=self.sid, locator=f"{self.locator} wargear[{line - 1}]",
                                   datasheet_id=self.ds_id, line=line, text=text, is_footnote=text.startswith("*")))
        line = 0
        for i, group in enumerate(self.sheet.get("wargearOptions") or []):
            if not isinstance(group, dict):
                continue
            instruction = plain_text(group.get("instruction"))
            for j, option in enumerate(group.get("options") or []):
                wargear = plain_name(option.get("name")) if isinstance(option, dict) else ""
                cost = _int(option.get("cost")) if isinstance(option, dict) else None
                if not wargear or wargear.endswith(":") or not cost:
                    continue  # a free choice, or a header of the choices: no cost of its own
                line += 1
                self.add(WargearCost(source_id=self.sid, locator=f"{self.locator} wargearOptions[{i}].options[{j}]",
                                     datasheet_id=self.ds_id, line=line, option_text=instruction, wargear=wargear,
                                     cost_points=cost))

    def points(self) -> None:
        extra = self.sheet.get("additionalCost") if isinstance(self.sheet.get("additionalCost"), dict) else None
        rows: list[tuple[int, int | None, str | None, str]] = []  # cost, models, condition, locator
        for i, p in enumerate(self.sheet.get("points") or []):
            locator = f"{self.locator} points[{i}]"
            if not isinstance(p, dict):
                continue
            cost, models = _int(p.get("cost")), _int(p.get("models"))
            if p.get("cost") is None or clean_line(english(p.get("cost"))).casefold() in ("", "null", "none"):
                self.reader.boilerplate["gdc: points rows without a cost (Combat Patrol units)"] += 1
                continue
            if cost is None or cost == 0:
                self.reader.collector.reject("unit_costs", locator, json.dumps(p, ensure_ascii=False),
                                             "a points cost of 0 or none: not a cost" if cost == 0 else
                                             f"points cost {p.get('cost')!r} is not a whole number")
                continue
            condition = plain_name(p.get("keyword")) or plain_name(p.get("detachment")) or None
            rows.append((cost, models, condition, locator))
        more = _int(extra.get("cost")) if extra else None
        after = extra.get("afterSelections") if extra else None
        brackets = [(1, 0)]
        if more and isinstance(after, int) and not isinstance(after, bool) and after >= 1:
            brackets.append((after + 1, more))
        elif extra:
            self.reader.collector.reject("unit_costs", f"{self.locator} additionalCost",
                                         json.dumps(extra, ensure_ascii=False), "a points bracket without a cost and a count")
        line = 0
        for from_unit, add in brackets:
            for cost, models, condition, locator in rows:
                line += 1
                size = f"{models} model{'s' if models != 1 else ''}" if models is not None else "unit"
                self.add(UnitCost(
                    source_id=self.sid, locator=locator if add == 0 else f"{self.locator} additionalCost",
                    datasheet_id=self.ds_id, line=line,
                    description=size if from_unit == 1 else f"{size} (unit {from_unit}+)",
                    cost_points=cost + add, is_addon=False, model_count=models, from_unit=from_unit,
                    condition=condition,
                ))

    def damaged(self, abilities: Tree) -> None:
        damaged = abilities.get("damaged")
        if not isinstance(damaged, dict):
            return
        printed_range, text = plain_name(damaged.get("range")), plain_text(damaged.get("description"))
        if not printed_range and not text:
            return
        locator = f"{self.locator} abilities.damaged"
        m = _WOUNDS_REMAINING.match(printed_range)
        hit = _HIT_ROLL.match(" ".join(text.split("\n")))
        if m is None:
            self.reader.collector.flag("damaged_profiles", f"{self.ds_id}|1", "damaged_range_not_read",
                                       f"range {printed_range!r}", locator)
        self.add(DamagedProfile(
            source_id=self.sid, locator=locator, datasheet_id=self.ds_id, line=1,
            min_wounds=int(m.group("min")) if m else None, max_wounds=int(m.group("max")) if m else None,
            text=text, hit_roll_modifier=-int(hit.group("n")) if hit else None,
        ))

    def leads(self, abilities: Tree) -> list[tuple[str, str]]:
        """The units this one can be attached to, as printed, with the kind of link."""
        out = [(n, "leader") for n in attached_units(_raw_text(self.sheet.get("leader")))]
        for item in abilities.get("special") or []:
            if isinstance(item, dict) and plain_name(item.get("name")).casefold() == "support":
                out += [(n, "support") for n in attached_units(_raw_text(item.get("description")))]
        return out


def attached_units(text: str) -> list[str]:
    """The unit names a Leader's (or Support unit's) text lists, in print order: each ``■`` item's
    bold name (a note after it is not part of the name), else the item's first line.

    >>> attached_units("This model can be attached to the following units:  ■ **A SQUAD** ■ ***B**")
    ['A SQUAD', 'B']
    >>> attached_units("It can be attached to the following units:\\n■ **PLAGUE MARINES**\\nYou can attach this model to...")
    ['PLAGUE MARINES']
    >>> attached_units("")
    []
    """
    m = _ATTACHED_TO.search(text)
    if not m:
        return []
    names = []
    for item in text[m.end():].split("■")[1:]:
        bold = _BOLD_NAME.search(item)
        name = bold.group(1) if bold else item.strip().split("\n")[0]
        name = clean_line(name.replace("*", ""))
        if name:
            names.append(name)
    return names


def rule_parts_text(parts: object) -> str:
    """The text of a rule given as parts (``[{order, type, text}]``): each part's plain text in
    ``order``, one line each; a part printed as ``-`` (an ``image``, empty ``bullets``) is skipped.

    >>> rule_parts_text([{"order": 2, "type": "text", "text": {"en": "Add 1 to the **Hit** roll."}},
    ...                  {"order": 1, "type": "header", "text": {"en": "Fury"}},
    ...                  {"order": 3, "type": "image", "text": {"en": "-"}}])
    'Fury\\nAdd 1 to the Hit roll.'
    """
    items = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    items.sort(key=lambda p: p.get("order") if isinstance(p.get("order"), int) else 0)
    texts = (plain_text(p.get("text")) for p in items)
    return "\n".join(t for t in texts if t and t != "-")


def _raw_text(value: object) -> str:
    """The English text with its ``**bold**`` kept (the names of a leader's text are bold), HTML
    taken off."""
    text = english(value)
    return html_to_text(text) if "<" in text else text


def _cell(stat: Tree, key: str) -> str | None:
    return english(stat[key]) if key in stat and stat[key] is not None else None


def _gets_invulnerable(model: str, note: str | None, names: Iterable[str]) -> bool:
    """Whether a model line gets the datasheet's invulnerable save, given its note: every line,
    but only the line a note names (``*Ibram Gaunt model only.*``), and not the one it excludes.

    >>> _gets_invulnerable("Cyber-mastiff", "*Excluding the Cyber-mastiff.*", ["Proctor", "Cyber-mastiff"])
    False
    >>> _gets_invulnerable("Proctor", "*Excluding the Cyber-mastiff.*", ["Proctor", "Cyber-mastiff"])
    True
    """
    names = list(names)
    if not note or len(names) < 2:
        return True
    key = name_key(model, ignore_plural=True)
    only = _MODEL_ONLY.match(note)
    if only and any(name_key(n, ignore_plural=True) == name_key(only.group("who"), ignore_plural=True) for n in names):
        return key == name_key(only.group("who"), ignore_plural=True)
    excluding = _EXCLUDING.match(note)
    if excluding:
        return key != name_key(excluding.group("who"), ignore_plural=True)
    return True
