"""BattleScribe catalogues (BSData): extracts the units they hold; one tree walker, two readers (XML and JSON).

What it hands to the assembly (``pipeline.assemble``): each unit (``PrintedDatasheet``), each
``Unit`` profile (``PrintedModel``), each weapon profile (``PrintedWeapon``, with the rules it
links), each ability profile and rule link (``PrintedAbility``, a link's name modifier as the
parameter), each line of the default roster (``PrintedComposition``, its counts given apart), the
loadout lines and the keywords.

A BattleScribe catalogue (``.cat``, BSData ``wh40k-10e``, XML schema 2.03; the same data model
as JSON in ``wh40k-11e``) holds units as selection entries. Each unit is turned into the records
every other source gives (``Datasheet``, ``ModelProfile``, ``WeaponProfile``, ``WeaponAbility``,
``Ability``, ``Keyword``, ``UnitComposition``), with the values read by the shared normalisers
(``pipeline.normalise``), so that the same unit from Wahapedia and from BattleScribe compare
alike when the build merges them.

Readers: ``read_xml`` and ``read_json`` turn a file into the same tree of plain dicts (the JSON
shape: an element's attributes as keys, each child list under its container name -
``"selectionEntries": [...]`` - and element text under ``"$text"``). ``walk_catalogues`` reads
such trees; it never sees the encoding.

What is a unit (a datasheet): a top-level entry of a catalogue (``selectionEntries`` or
``sharedSelectionEntries``) of type ``unit`` or ``model`` that carries a ``Faction: X`` category
link. A top-level ``unit`` without one is rejected (reason given); a top-level ``model`` without
one is a model shared by several units, not a datasheet (counted in
``boilerplate["bsdata: top-level model entries without a Faction category (shared models)"]``).
Units reached only through ``entryLink`` (the Astra Militarum catalogue links every unit of its
library) are emitted where they are defined, once.

What is read of a unit, walking its entries, groups and links (each shared target once per unit):

- profiles by type name (``PROFILE_TYPES``): ``Unit`` -> one ``ModelProfile`` per distinct
  profile, numbered from 1 in walk order; ``Ranged Weapons`` / ``Melee Weapons`` ->
  ``WeaponProfile`` (name split into weapon and profile, ``➤ Plasma pistol - standard``) and its
  ``WeaponAbility`` rows from ``Keywords``; ``Abilities`` -> ``Ability`` (kind ``wargear`` inside
  an upgrade entry, else ``datasheet``); ``Transport`` -> ``Ability`` kind ``other`` named
  ``Transport``. Other profile types (Crusade ``Orders``, ``Hymn of Battle``, ...) are counted
  per type in ``boilerplate``.
- rule links (``infoLink type="rule"``) -> ``Ability`` without text (the text is a rule text of
  its own): kind ``core`` for a rule of the game system, ``faction`` for a rule of a catalogue.
  An unconditional ``append`` name modifier on the link gives the parameter
  (``Feel No Pain`` + ``5+``).
- the invulnerable save: an ``Abilities`` profile on the unit or a model entry (not on wargear)
  named ``Invulnerable Save`` (also ``Invulnerable Save (4+)``, ``(5+*)``, ``5+``): the value
  from the name, else from the description (``a 4+ invulnerable save``, ``an invulnerable save of
  6+``); a description that restricts it to ranged or melee attacks gives the scope. A
  conditional one (``While this model is leading a unit ...``) is not put on the model profile
  (flag ``invulnerable_save_conditional``). It applies to every model profile of the unit (or
  the one it names) that prints none: an 11th-edition ``Unit`` profile prints its own (``InSv``:
  ``4+``; ``5+ (Ranged)``, the bracket its note; ``4+*``, the ability's text its note, or the
  text of the unit's ability named with the star, ``*Invulnerable Save``), read with
  the line by the shared assembly as every source's.
- keywords: the unit entry's category links, through ``bsdata_categories.classify_categories``
  (case P28; the game system's faction list when the game system is among the files).
- the unit's size and loadout, from its default roster (``bsdata_roster``: what BattleScribe
  selects when the unit is added -- every entry's ``min``, a group's ``min`` filled with its
  ``defaultSelectionEntryId``): one ``UnitComposition`` row per model entry, or per group of model
  entries with its own counts (``9 Battle Sisters``), ``min_models`` its models in the default
  roster (so the rows add up to the unit's smallest size) and ``max_models`` the most the
  constraints allow (None: no maximum), ``text`` ``9 Battle Sisters`` / ``0-1 ...`` / ``6+ ...``;
  a top-level model unit is one row of one model. ``starting_strength`` is their sum when every
  row is a fixed count. The default weapons become ``WargearLoadout`` rows (``loadout_lines``):
  ``This model`` for a model unit, ``Every model`` when every model has the same weapons, else
  one row per model entry (``4x Intercessor``, ``model_count`` 4); ``text`` is composed as
  ``<models> is/are equipped with: <weapons>.`` (BattleScribe prints no such line). A group whose
  default is the player's choice (a Crucible character's weapon, a squad's ``9`` models with no
  default entry) is a ``DataGap`` (field ``default selection``), never guessed. When a source
  of higher precedence also gives the unit, the build keeps that source's composition and loadout
  whole (``pipeline.merge.keep_first_whole``): BattleScribe's option slots (``0-1 Shock Trooper
  w/ Meltagun``) do not line up with another publisher's printed lines.
- enhancement and Crusade groups a unit links (``NOT_UNIT_WARGEAR``) are not walked: they are
  not the unit's wargear (counted in ``boilerplate``).
- links into the game system's selection entries and groups (Crusade, Warlord, Weapon
  Modifications) are not followed; they are counted in ``boilerplate``.

Ids: ``{edition}e/{faction slug}/{name slug}``, as the Wahapedia parsers build them; the faction
slug comes from the one faction table, ``pipeline.assemble.ids.FACTION_IDS`` (any printed faction name -> Wahapedia faction id),
else the slug of the BSData name with a ``faction_not_mapped`` flag. Locators name the file and
the element: ``Tyranids.cat selectionEntry[@id='a1b2-...']``.

Links: ``walk_catalogues`` resolves every ``targetId`` against all the trees it is given (a
catalogue, its libraries and the game system). A target that is not among them is never guessed:
a profile or entry link gives a ``DataGap`` (its name and target id); a rule link gives an
``Ability`` named as the link names it, kind ``other``, with a ``DataGap`` saying the kind and
text are unknown. ``parse_cat_xml`` and ``parse_cat_json`` read one file alone, so links to other
files stay unresolved there; the build reads the 10th-edition catalogues and their game system as
one folder source (``parse_cat_set_xml``), and ``parse_catalogue_set`` resolves across any set.

Values the normalisers refuse reject the profile (``Reject``, with the profile's XML/JSON, the
reason as the shared assembly gives it for every source, and the unit the profile was reached
from in the locator: ``Tyranids.cat profile[@id='...'] (unit 10e/tyranids/...)``); the unit
keeps its other records.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Iterator, Mapping

from lxml import etree
from pydantic import ValidationError

from pipeline.errors import NormaliseError
from pipeline.normalise.text import clean_line, slug
from pipeline.extractors import ParseResult, load_json, xml_reason
from pipeline.extractors.bsdata_categories import FACTION_PREFIX, classify_categories
from pipeline.extractors.bsdata_gamesystem import plain_rule_text
from pipeline.extractors.bsdata_roster import Roster, unit_roster
from pipeline.assemble.abilities import assemble_ability
from pipeline.assemble.collector import Collector
from pipeline.assemble.composition import assemble_composition
from pipeline.assemble.datasheets import assemble_datasheet
from pipeline.assemble.ids import datasheet_id, faction_id as faction_id_of
from pipeline.assemble.models import assemble_model
from pipeline.assemble.printed import PrintedAbility, PrintedComposition, PrintedDatasheet, PrintedModel, PrintedWeapon
from pipeline.assemble.protection import INVULNERABLE_NAME, read_invulnerable_ability
from pipeline.assemble.weapons import ability_items, assemble_weapon
from pipeline.normalise.weapon_abilities import parse_ability
from schemas.records import (
    Ability,
    Keyword,
    ModelProfile,
    Record,
    Reject,
    Source,
    WargearLoadout,
)

Tree = dict[str, Any]

#: Profile type names and what they give.
PROFILE_TYPES: dict[str, str] = {
    "Unit": "model",
    "Ranged Weapons": "ranged",
    "Melee Weapons": "melee",
    "Abilities": "ability",
    "Transport": "transport",
}

#: Characteristic names of a model profile and of a weapon profile, as BSData prints them.
#: A ``Unit`` profile's characteristic names (case-folded: 10th-edition ``SV``, ``LD``; 11th
#: ``Sv``, ``Ld``) -> the ``PrintedModel`` field.
MODEL_CHARACTERISTICS: dict[str, str] = {
    "m": "move", "t": "toughness", "sv": "save", "w": "wounds", "ld": "leadership",
    "oc": "objective_control", "insv": "invulnerable_save",
}
#: An ``InSv`` characteristic with its note in brackets (11th edition): ``5+ (Ranged)``.
_INSV_NOTE = re.compile(r"^(?P<value>\d\+\*?)\s*\((?P<note>[^)]*)\)$")
WEAPON_CHARACTERISTICS = ("Range", "A", "S", "AP", "D", "Keywords")

#: Container names -> the kind of element they hold (for the id index).
_CONTAINERS: dict[str, str] = {
    "selectionEntries": "selectionEntry",
    "sharedSelectionEntries": "selectionEntry",
    "selectionEntryGroups": "selectionEntryGroup",
    "sharedSelectionEntryGroups": "selectionEntryGroup",
    "profiles": "profile",
    "sharedProfiles": "profile",
    "rules": "rule",
    "sharedRules": "rule",
    "infoGroups": "infoGroup",
    "sharedInfoGroups": "infoGroup",
    "categoryEntries": "categoryEntry",
}

_RAW_LIMIT = 2000
#: How BSData marks a Warhammer Legends unit in its name (``Repressor [Legends]``). Wahapedia names
#: the same datasheet without it (filed under a ``(Warhammer Legends)`` source): the marker is taken
#: off the name and the id, and kept in a ``legends_marker_removed`` flag.
LEGENDS_MARKER = re.compile(r"\s*[\[(]Legends[\])]\s*$", re.IGNORECASE)
#: Groups and entries a unit links that are not the unit's wargear: enhancements (bought for a
#: CHARACTER from the army's detachment) and Crusade content (relics, battle traits and scars,
#: honours, Chapter Command upgrades). Matched on the name, or a ``Crusade`` comment on the
#: element; not walked (counted in ``boilerplate``), so their abilities are never the unit's.
NOT_UNIT_WARGEAR = re.compile(
    r"\bEnhancements?\b|\bCrusade\b|Battle Traits|Battle Scars|Battle Honours|Chapter Command|"
    r"Blackstone Upgrades|Chivalric Quests|Threats$", re.IGNORECASE)


# ---- readers -------------------------------------------------------------------------------


def read_xml(text: str) -> Tree:
    """A BattleScribe XML file as the JSON-shaped tree: ``{"catalogue": {...}}``.

    An element becomes a dict of its attributes; a child without attributes that holds elements
    (``<profiles>``) becomes a list under its name; a child without attributes or children
    (``<description>``) its text; an element's own text goes under ``"$text"``.
    Raises ``etree.XMLSyntaxError`` for text that is not XML.

    >>> read_xml('<catalogue id="c"><profiles><profile id="p"><characteristics>'
    ...          '<characteristic name="M">6"</characteristic></characteristics></profile></profiles></catalogue>')
    {'catalogue': {'id': 'c', 'profiles': [{'id': 'p', 'characteristics': [{'name': 'M', '$text': '6"'}]}]}}
    """
    # libxml2's own limits stay (no huge_tree): elements nested at most MAX_NESTING_DEPTH deep.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True)
    root = etree.fromstring(text.encode("utf-8"), parser)
    return {etree.QName(root).localname: _element(root)}


def _element(element: Any) -> Tree:
    node: Tree = dict(element.attrib)
    children = [c for c in element if isinstance(c.tag, str)]
    if not children and element.text and element.text.strip():
        node["$text"] = element.text
    for child in children:
        name = etree.QName(child).localname
        grand = [g for g in child if isinstance(g.tag, str)]
        if not child.attrib and (grand or name in _CONTAINER_NAMES):
            node[name] = [_element(g) for g in grand]
        elif not child.attrib:
            node[name] = child.text or ""  # <description>, <readme>, <comment>
        else:
            node[name] = _element(child)
    return node


_CONTAINER_NAMES = frozenset(set(_CONTAINERS) | {
    "characteristics", "entryLinks", "infoLinks", "categoryLinks", "constraints", "modifiers",
    "conditions", "conditionGroups", "modifierGroups", "repeats", "costs", "catalogueLinks",
    "publications", "profileTypes", "costTypes", "characteristicTypes", "forceEntries",
    "localConditionGroups", "associations",
})


def read_json(text: str) -> Tree:
    """A BattleScribe JSON file (BSData 11th edition) as the tree: it already has that shape.

    Raises ``json.JSONDecodeError`` for text that is not JSON, ``ValueError`` for JSON over the
    limits of ``pipeline.extractors.load_json``.
    """
    data = load_json(text)
    if not isinstance(data, dict):
        raise ValueError("the top level is not a JSON object")
    return data


# ---- the walker ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Document:
    """One file of a set: its name (for locators), its tree and the source it belongs to."""

    name: str
    tree: Tree
    source: Source
    emit: bool = True  # datasheets are emitted for the units defined in this file

    @property
    def root(self) -> Tree:
        for key in ("catalogue", "gameSystem"):
            if isinstance(self.tree.get(key), dict):
                return self.tree[key]
        return {}

    @property
    def is_game_system(self) -> bool:
        return isinstance(self.tree.get("gameSystem"), dict)


@dataclass
class _Target:
    node: Tree
    kind: str
    doc: Document


def _list(node: Tree, key: str) -> list[Tree]:
    value = node.get(key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _text(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("$text", "")
    return "" if value is None else str(value)


def _index(docs: Iterable[Document]) -> dict[str, _Target]:
    """Every element with an id in the documents, by id (the first one wins)."""
    index: dict[str, _Target] = {}

    def visit(node: Tree, doc: Document) -> None:
        for key, value in node.items():
            if not isinstance(value, list):
                continue
            kind = _CONTAINERS.get(key)
            for child in value:
                if not isinstance(child, dict):
                    continue
                ident = child.get("id")
                if kind and isinstance(ident, str):
                    index.setdefault(ident, _Target(child, kind, doc))
                visit(child, doc)

    for doc in docs:
        visit(doc.root, doc)
    return index


def game_system_factions(docs: Iterable[Document]) -> frozenset[str]:
    """The faction keywords of the game system among the documents (P28), upper case."""
    names: set[str] = set()
    for doc in docs:
        if doc.is_game_system:
            for entry in _list(doc.root, "categoryEntries"):
                name = str(entry.get("name", ""))
                if name.startswith(FACTION_PREFIX):
                    names.add(clean_line(name[len(FACTION_PREFIX):]).upper())
    return frozenset(names)


def parse_cat_xml(text: str, source: Source) -> ParseResult:
    """The build's parser for one BattleScribe XML catalogue (``.cat``): ``text`` -> records.

    Links to other files are not resolved (module docstring). A file that is not well-formed XML
    or not a catalogue is one reject.
    """
    return _parse_one(text, source, read_xml)


def parse_cat_json(text: str, source: Source) -> ParseResult:
    """The build's parser for one BattleScribe JSON catalogue (BSData 11th edition)."""
    return _parse_one(text, source, read_json)


def _parse_one(text: str, source: Source, reader: Any) -> ParseResult:
    result = ParseResult()
    name = source.file.rsplit("/", 1)[-1]
    try:
        tree = reader(text)
    except (etree.XMLSyntaxError, ValueError) as exc:
        result.rejects.append(Reject(source_id=source.source_id, locator=name, table_name="datasheets",
                                     raw_text=text[:_RAW_LIMIT], reason=f"not a readable catalogue: {xml_reason(str(exc))}"))
        return result
    doc = Document(name, tree, source)
    if not doc.root:
        result.rejects.append(Reject(source_id=source.source_id, locator=name, table_name="datasheets",
                                     raw_text=text[:_RAW_LIMIT], reason="no catalogue or gameSystem element at the top"))
        return result
    return walk_catalogues([doc])


def parse_cat_set_xml(files: Mapping[str, str], source: Source) -> ParseResult:
    """The build's parser for a folder of BattleScribe XML files read together (``.cat`` and ``.gst``).

    ``files``: file name -> text, every file of the folder source ``source`` (its catalogues,
    their libraries and the game system), so that links across files resolve (module docstring).
    The units of every catalogue become datasheets; the game system gives none (its rules are read
    by the ``bsdata-gst-xml`` source). A file that is not well-formed XML or has no catalogue or
    gameSystem element is one reject; the others are still read.
    """
    result = ParseResult()
    docs: list[Document] = []
    for name, text in sorted(files.items()):
        try:
            doc = Document(name, read_xml(text), source)
        except (etree.XMLSyntaxError, ValueError) as exc:
            result.rejects.append(Reject(source_id=source.source_id, locator=name, table_name="datasheets",
                                         raw_text=text[:_RAW_LIMIT], reason=f"not a readable catalogue: {xml_reason(str(exc))}"))
            continue
        if not doc.root:
            result.rejects.append(Reject(source_id=source.source_id, locator=name, table_name="datasheets",
                                         raw_text=text[:_RAW_LIMIT], reason="no catalogue or gameSystem element at the top"))
            continue
        docs.append(doc)
    result.extend(walk_catalogues(docs))
    return result


def parse_catalogue_set(files: Mapping[str, str], sources: Mapping[str, Source],
                        emit: Iterable[str] | None = None) -> ParseResult:
    """Parse a set of BattleScribe files together, links resolved across all of them.

    ``files``: file name -> text (``.cat``/``.gst`` read as XML, ``.json`` as JSON);
    ``sources``: file name -> its ``Source``; ``emit``: the files whose units become datasheets
    (default: every catalogue). Raises ``etree.XMLSyntaxError`` / ``json.JSONDecodeError`` for a
    file that cannot be read.
    """
    wanted = set(files) if emit is None else set(emit)
    docs = [
        Document(name, read_json(text) if name.endswith(".json") else read_xml(text), sources[name], name in wanted)
        for name, text in files.items()
    ]
    return walk_catalogues(docs)


@dataclass(frozen=True)
class UnitWalk:
    """What the walker read of one unit, handed to a ``unit_hook`` of ``walk_catalogues``: its
    datasheet id and faction, its entry and document, the id index of every file, its default
    roster (``bsdata_roster``), the abilities it was given, and its collector (for flags and
    gaps)."""

    datasheet_id: str
    faction_id: str
    name: str
    entry: Tree
    doc: Document
    index: Mapping[str, "_Target"]
    roster: Roster
    abilities: tuple[Ability, ...]
    collector: Collector


#: A reader of more of a unit (the 11th-edition points and leader lists, ``bsdata_json``):
#: returns records of the unit's datasheet.
UnitHook = Callable[[UnitWalk], list[Record]]


def walk_catalogues(docs: list[Document], unit_hook: UnitHook | None = None) -> ParseResult:
    """The tree walker: datasheets of every unit defined in the documents marked ``emit``.

    Links resolve against all the documents. Returns records, rejects and counters
    (module docstring). ``unit_hook``, when given, is called once per unit after its walk and
    its records join the unit's.
    """
    result = ParseResult()
    index = _index(docs)
    factions = game_system_factions(docs)
    # datasheet ids across all the files: a unit copied into a second catalogue (the 11th
    # edition's god-specific catalogues copy Chaos Daemons units) is a datasheet of its own
    # (``repeated_datasheet_name``), never rows added to the first one's
    taken: dict[str, str] = {}
    for doc in docs:
        if not doc.emit or doc.is_game_system:
            continue
        for entry in [*_list(doc.root, "selectionEntries"), *_list(doc.root, "sharedSelectionEntries")]:
            kind = entry.get("type")
            if kind not in ("unit", "model"):
                continue
            categories = [str(c.get("name", "")) for c in _list(entry, "categoryLinks")]
            if not any(c.startswith(FACTION_PREFIX) for c in categories):
                if kind == "unit":
                    result.rejects.append(_reject(doc, _loc(doc, entry), entry,
                                                  "unit entry without a 'Faction: X' category: no faction to file it under"))
                else:
                    result.boilerplate["bsdata: top-level model entries without a Faction category (shared models)"] += 1
                continue
            _Unit(doc, entry, index, factions, result, taken, unit_hook).run()
    return result


def _loc(doc: Document, node: Tree, kind: str = "selectionEntry") -> str:
    return f"{doc.name} {kind}[@id='{node.get('id', '?')}']"


def _raw(node: Tree) -> str:
    return json.dumps(node, ensure_ascii=False)[:_RAW_LIMIT]


def _reject(doc: Document, locator: str, node: Tree, reason: str, table: str = "datasheets") -> Reject:
    return Reject(source_id=doc.source.source_id, locator=locator, table_name=table, raw_text=_raw(node), reason=reason)


def _model_name(printed: str) -> str:
    """A model's name as the datasheet's: cleaned, the Legends marker taken off (``LEGENDS_MARKER``)."""
    return LEGENDS_MARKER.sub("", clean_line(printed))


def _not_unit_wargear(node: Tree) -> bool:
    """Enhancement and Crusade groups and entries (``NOT_UNIT_WARGEAR``): not the unit's."""
    return bool(NOT_UNIT_WARGEAR.search(str(node.get("name", "")))) or "crusade" in _text(node.get("comment")).lower()


def loadout_lines(roster: Roster, single_model: bool) -> list[tuple[str, int | None, str]]:
    """The default loadout as lines ``(models, model_count, equipment)``.

    A top-level model unit: ``This model`` (1). Every model of the default roster with the same
    weapons (in any order; every model of the roster decided): one line ``Every model`` (no count:
    it is every model at any size). Else one line per model entry with weapons, ``9x Battle
    Sister`` (9). Equipment: ``; ``-separated, a number first when a model has more than one
    (``2 Heavy bolter``). Models without weapons get no line.
    """
    def equipment(items: tuple[tuple[str, int], ...]) -> str:
        counts: dict[str, int] = {}
        for name, n in items:
            counts[name] = counts.get(name, 0) + n
        return "; ".join(name if n == 1 else f"{n} {name}" for name, n in counts.items())

    armed = [m for m in roster.models if m.equipment]
    if not armed:
        return []
    if single_model:
        return [("This model", 1, equipment(armed[0].equipment))]
    decided = sum(m.count for m in roster.models) == roster.smallest
    if decided and len(armed) == len(roster.models) and len({tuple(sorted(m.equipment)) for m in armed}) == 1:
        return [("Every model", None, equipment(armed[0].equipment))]
    return [(f"{m.count}x {m.name}", m.count, equipment(m.equipment)) for m in armed]


@dataclass
class _Walk:
    """Where the walk is: inside wargear (an upgrade entry), and the document of the node."""

    doc: Document
    wargear: bool = False


@dataclass
class _Unit:
    doc: Document
    entry: Tree
    index: dict[str, _Target]
    factions: frozenset[str]
    result: ParseResult
    taken: dict[str, str]
    hook: UnitHook | None = None
    records: list[Record] = field(default_factory=list)
    visited: set[str] = field(default_factory=set)
    models: list[PrintedModel] = field(default_factory=list)  # the Unit profiles, as printed
    model_values: set[tuple] = field(default_factory=set)
    abilities: dict[tuple, Ability] = field(default_factory=dict)
    invulns: list[tuple[str, str, str]] = field(default_factory=list)  # (name, description, locator)
    star_notes: list[str] = field(default_factory=list)
    weapon_spellings: dict[str, str] = field(default_factory=dict)  # casefolded weapon name -> first printed  # texts of abilities named "*...": an InSv's "*" note
    collector: Collector = field(init=False)  # the shared rules; its records are the unit's

    def __post_init__(self) -> None:
        self.collector = Collector(self.doc.source.source_id, records=self.records)

    # -- bookkeeping

    @property
    def sid(self) -> str:
        return self.doc.source.source_id

    def flag(self, locator: str, table: str, entity: str, code: str, detail: str) -> None:
        self.collector.flag(table, entity, code, detail, locator)

    def gap(self, locator: str, table: str, entity: str, fieldname: str, reason: str) -> None:
        self.collector.gap(table, entity, fieldname, reason, locator)

    # -- the unit

    def run(self) -> None:
        entry, doc = self.entry, self.doc
        printed = clean_line(str(entry.get("name", "")))
        name = LEGENDS_MARKER.sub("", printed)
        locator = _loc(doc, entry)
        categories = [str(c.get("name", "")) for c in _list(entry, "categoryLinks")]
        split = classify_categories(categories, self.factions)
        bs_factions = [clean_line(c[len(FACTION_PREFIX):]) for c in categories if c.startswith(FACTION_PREFIX)]
        mapped = [m for m in map(faction_id_of, bs_factions) if m]
        faction_id = mapped[0] if mapped else slug(bs_factions[0])
        edition = doc.source.edition
        ds_id = datasheet_id(edition, faction_id, name)
        if ds_id in self.taken:
            first = self.taken[ds_id]
            ds_id = f"{ds_id}--{entry.get('id')}"
            self.flag(locator, "datasheets", ds_id, "repeated_datasheet_name",
                      f"{name!r} is also the unit at {first}; this one is {ds_id}")
        self.taken.setdefault(ds_id.split("--")[0], locator)
        self.ds_id = ds_id
        if name != printed:
            self.flag(locator, "datasheets", ds_id, "legends_marker_removed",
                      f"printed {printed!r}: a Warhammer Legends datasheet, named as Wahapedia names it")
        if not mapped:
            self.flag(locator, "datasheets", ds_id, "faction_not_mapped",
                      f"no Wahapedia faction for {bs_factions[0]!r} in pipeline.assemble.ids.FACTION_IDS: "
                      "the slug of its name is used")
        elif len(set(mapped)) > 1:
            self.flag(locator, "datasheets", ds_id, "several_factions",
                      f"Faction categories {bs_factions}: filed under {faction_id}")
        # the walk
        self.visit_entry(entry, _Walk(doc), top=True)
        # the model lines: a line that prints no invulnerable save gets the one of the unit's
        # Invulnerable Save abilities for the unit, or for its model
        saves = self.invulnerable([m.name for m in self.models])
        for printed in self.models:
            self.assemble_model(printed, saves.get(printed.name, saves.get(None)))
        if not self.models:
            self.gap(locator, "model_profiles", ds_id, "characteristics",
                     "no 'Unit' profile reachable from this unit in the files read")
        composition, roster = self.composition_and_loadout()
        if self.hook is not None:
            self.records.extend(self.hook(UnitWalk(
                ds_id, faction_id, name, entry, doc, self.index, roster,
                tuple(self.abilities.values()), self.collector)))
        printed = PrintedDatasheet(locator, name, faction_id, edition, doc.source.game_mode, external_id=str(entry.get("id")))
        datasheet = assemble_datasheet(printed, self.sid, ds_id, composition)
        keywords = [Keyword(source_id=self.sid, locator=locator, datasheet_id=ds_id, keyword=k, is_faction_keyword=True)
                    for k in split.faction_keywords]
        keywords += [Keyword(source_id=self.sid, locator=locator, datasheet_id=ds_id, keyword=k, is_faction_keyword=False)
                     for k in split.keywords if k not in split.faction_keywords]
        for code in split.flags:
            self.flag(locator, "keywords", ds_id, code, f"categories: {categories}")
        self.result.records.extend([datasheet, *keywords, *self.records])
        self.result.rejects.extend(self.collector.rejects)
        self.result.duplicates.update(self.collector.duplicates)

    def composition_and_loadout(self) -> tuple[list[Record], Roster]:
        """The unit's ``UnitComposition`` and ``WargearLoadout`` rows from its default roster
        (``bsdata_roster``, module docstring); returns the ``UnitComposition`` rows and the roster."""
        roster = unit_roster(self.entry, self.doc, self.index, _model_name, _not_unit_wargear)
        composition: list[Record] = []
        for line, model in enumerate(roster.lines, start=1):
            printed = PrintedComposition(_loc(model.doc, model.node, model.kind), "", counts=(model.default, model.most, model.name))
            composition += assemble_composition(printed, self.sid, self.ds_id, line).records
        self.records += composition
        for undecided in roster.undecided:
            table = "unit_composition" if undecided.what == "models" else "wargear_loadouts"
            self.gap(_loc(undecided.doc, undecided.node, "selectionEntryGroup"), table,
                     f"{self.ds_id}|{undecided.node.get('id')}", "default selection", undecided.why)
        for line, (models, count, equipment) in enumerate(loadout_lines(roster, self.entry.get("type") == "model"), start=1):
            verb = "are" if count is not None and count > 1 else "is"
            self.records.append(WargearLoadout(
                source_id=self.sid, locator=_loc(self.doc, self.entry), datasheet_id=self.ds_id, line=line,
                models=models, model_count=count, equipment=equipment,
                text=f"{models} {verb} equipped with: {equipment}."))
        return composition, roster

    # -- walking

    def resolve(self, link: Tree, walk: _Walk, expected: tuple[str, ...]) -> _Target | None:
        target = self.index.get(str(link.get("targetId", "")))
        if target is None or target.kind not in expected:
            where = "not in the files read" if target is None else f"a {target.kind}, not a {'/'.join(expected)}"
            self.gap(_loc(walk.doc, link, "link"), "datasheets", f"{self.ds_id}|{link.get('targetId')}", str(link.get("type", "link")),
                     f"link {link.get('name')!r} -> targetId {link.get('targetId')!r}: {where}")
            return None
        return target

    def visit_entry(self, entry: Tree, walk: _Walk, top: bool = False) -> None:
        ident = entry.get("id")
        if not top and ident in self.visited:
            return
        if not top and _not_unit_wargear(entry):
            self.result.boilerplate["bsdata: enhancement and Crusade groups linked from units (not the unit's wargear)"] += 1
            return
        if ident:
            self.visited.add(str(ident))
        kind = entry.get("type")
        inner = _Walk(walk.doc, walk.wargear or kind == "upgrade")
        linked = _weapon_links(entry) if inner.wargear else {}
        for profile in _list(entry, "profiles"):
            self.profile(profile, inner, linked.get(str(profile.get("id")), ()))
        for rule in _list(entry, "rules"):
            self.rule(rule, inner, walk.doc, name=str(rule.get("name", "")))
        for link in _list(entry, "infoLinks"):
            self.info_link(link, inner)
        for group in _list(entry, "infoGroups"):
            self.visit_entry(group, inner)
        for child in _list(entry, "selectionEntries"):
            self.visit_entry(child, inner)
        for group in _list(entry, "selectionEntryGroups"):
            self.visit_entry(group, inner)
        for link in _list(entry, "entryLinks"):
            target = self.resolve(link, inner, ("selectionEntry", "selectionEntryGroup"))
            if target is None:
                continue
            if target.doc.is_game_system:
                self.result.boilerplate["bsdata: links to game-system entries (Crusade, Warlord) not followed"] += 1
                continue
            node = target.node
            self.visit_entry(node, _Walk(target.doc, inner.wargear or node.get("type") == "upgrade"))

    def info_link(self, link: Tree, walk: _Walk) -> None:
        kind = link.get("type")
        if kind == "rule" and walk.wargear:
            # a weapon's or a wargear's rule (Torrent, Pistol ...): read as the weapon's abilities
            self.result.boilerplate["bsdata: rule links on wargear (read as weapon abilities) not listed as abilities"] += 1
            return
        if kind == "rule":
            target = self.index.get(str(link.get("targetId", "")))
            name = _linked_name(link)
            if target is None or target.kind != "rule":
                loc = _loc(walk.doc, link, "infoLink")
                self.add_ability(PrintedAbility(loc, "other", name[0], None, name[1]))
                self.gap(loc, "abilities", f"{self.ds_id}|other|{name[0]}", "kind",
                         f"rule link -> targetId {link.get('targetId')!r} not in the files read: kind and text unknown")
                return
            self.rule(target.node, walk, target.doc, name=None, link=link)
        elif kind == "profile":
            target = self.index.get(str(link.get("targetId", "")))
            if target is None or target.kind != "profile":
                name = clean_line(str(link.get("name", "")))
                loc = _loc(walk.doc, link, "infoLink")
                if INVULNERABLE_NAME.match(name) and not walk.wargear:
                    self.invulns.append((name, "", loc))
                    self.flag(loc, "model_profiles", self.ds_id, "invulnerable_save_from_link_name",
                              f"the profile is not in the files read; its value is read from the link's name {name!r}")
                self.gap(loc, "datasheets", f"{self.ds_id}|{link.get('targetId')}", "profile",
                         f"profile link {name!r} -> targetId {link.get('targetId')!r}: not in the files read")
                return
            if target.node.get("id") in self.visited:
                return
            self.visited.add(str(target.node.get("id")))
            self.profile(target.node, _Walk(target.doc, walk.wargear))
        elif kind == "infoGroup":
            target = self.resolve(link, walk, ("infoGroup",))
            if target is not None:
                self.visit_entry(target.node, _Walk(target.doc, walk.wargear))
        else:
            self.result.boilerplate[f"bsdata: infoLink of type {kind!r} not read"] += 1

    def rule(self, rule: Tree, walk: _Walk, doc: Document, name: str | None, link: Tree | None = None) -> None:
        if link is not None:
            printed, parameter = _linked_name(link)
        else:
            printed, parameter = clean_line(str(name)), None
        kind = "core" if doc.is_game_system else ("faction" if link is not None else "datasheet")
        text = None
        if link is None:
            text = plain_rule_text(_text(rule.get("description"))) or None
        loc = _loc(walk.doc, link if link is not None else rule, "infoLink" if link is not None else "rule")
        self.add_ability(PrintedAbility(loc, kind, printed, text, parameter))

    def add_ability(self, printed: PrintedAbility) -> None:
        ability = assemble_ability(printed, self.sid, self.ds_id)
        key = ability.key()
        first = self.abilities.get(key)
        if first is None:
            self.abilities[key] = ability
            self.records.append(ability)
        elif (first.parameter, first.text) != (ability.parameter, ability.text):
            self.result.rejects.append(Reject(
                source_id=self.sid, locator=ability.locator, table_name="abilities", raw_text=ability.model_dump_json(),
                reason=f"duplicate_key_conflict: ability {key} already read from {first.locator} with other values"))
        else:
            self.result.duplicates["abilities"] += 1

    def profile(self, profile: Tree, walk: _Walk, linked: tuple[str, ...] = ()) -> None:
        type_name = str(profile.get("typeName", ""))
        what = PROFILE_TYPES.get(type_name)
        if what is None:
            self.result.boilerplate[f"bsdata: profiles of type {type_name!r} not read"] += 1
            return
        chars = {str(c.get("name", "")): clean_line(_text(c)) for c in _list(profile, "characteristics")}
        name = clean_line(str(profile.get("name", "")))
        loc = _loc(walk.doc, profile, "profile")
        try:
            if what == "model":
                self.model(name, chars, loc, profile)
            elif what in ("ranged", "melee"):
                self.weapon(name, chars, loc, profile, what == "melee", linked)
            elif what == "ability":
                text = plain_rule_text(chars.get("Description", ""))
                if INVULNERABLE_NAME.match(name) and not walk.wargear:
                    self.invulns.append((name, text, loc))
                elif name.startswith("*") and not walk.wargear and text:
                    self.star_notes.append(text)
                self.add_ability(PrintedAbility(loc, "wargear" if walk.wargear else "datasheet", name, text))
            else:
                values = {k: v for k, v in chars.items() if v}
                # one characteristic (Capacity): its text as printed; several: each named
                text = next(iter(values.values())) if len(values) == 1 else "; ".join(f"{k}: {v}" for k, v in values.items())
                self.add_ability(PrintedAbility(loc, "other", "Transport", text))
        except (NormaliseError, ValidationError) as exc:
            table = {"model": "model_profiles", "ranged": "weapon_profiles", "melee": "weapon_profiles"}.get(what, "abilities")
            reason = str(exc) if isinstance(exc, NormaliseError) else "; ".join(e["msg"] for e in exc.errors())
            # the reason as the assembly gives it, the same from every source; the unit the
            # profile was reached from (a shared profile is reached from several) in the locator
            self.result.rejects.append(_reject(walk.doc, f"{loc} (unit {self.ds_id})", profile, reason, table))

    def model(self, name: str, chars: dict[str, str], loc: str, profile: Tree) -> None:
        printed = {MODEL_CHARACTERISTICS[k.casefold()]: v for k, v in chars.items()
                   if k.casefold() in MODEL_CHARACTERISTICS}
        name = LEGENDS_MARKER.sub("", name)  # as the datasheet's name (LEGENDS_MARKER)
        values = tuple(sorted(printed.items()))
        if (name, values) in self.model_values:
            self.result.duplicates["model_profiles"] += 1
            return
        self.model_values.add((name, values))
        self.models.append(PrintedModel(
            locator=loc, line=len(self.models) + 1, name=name, move=printed.get("move"),
            toughness=printed.get("toughness"), save=printed.get("save"), wounds=printed.get("wounds"),
            leadership=printed.get("leadership"), objective_control=printed.get("objective_control"),
            invulnerable_save=printed.get("invulnerable_save"),
        ))

    def assemble_model(self, printed: PrintedModel, ability: tuple[int, str | None, str] | None) -> None:
        """One ``Unit`` profile through the shared assembly, once the unit's walk has found its
        ``Invulnerable Save`` abilities (``ability``: value, scope and text of the one for this
        line, from ``invulnerable``).

        A line that prints its invulnerable save (``InSv``, 11th edition) is read with it, and
        with its note as printed: in brackets (``5+ (Ranged)``), or for a starred one (``4+*``)
        the text of the ability. A line that prints none gets the ability's value and scope.
        """
        value, note = clean_line(printed.invulnerable_save or ""), None
        bracketed = _INSV_NOTE.match(value)
        if bracketed:
            value, note = bracketed.group("value"), bracketed.group("note")
        elif value.endswith("*") and ability is not None:
            note = ability[2] or None
        elif value.endswith("*") and self.star_notes:
            # 11th edition: the note is an ability of its own named with the star ("*Invulnerable Save")
            note = self.star_notes[0]
        elif not value and ability is not None:
            # the ability's save, read as if the line printed it with the ability's text as its note
            value, note = f"{ability[0]}+" + ("*" if ability[2] else ""), ability[2]
        assembled = assemble_model(replace(printed, invulnerable_save=value or printed.invulnerable_save,
                                           invulnerable_save_note=note), self.sid, self.ds_id)
        record = assembled.records[0]
        assert isinstance(record, ModelProfile)
        self.records.append(record)
        for flag in assembled.notes:
            self.flag(printed.locator, flag.table, flag.entity, flag.code, flag.detail)
        for gap in assembled.gaps:
            self.gap(printed.locator, gap.table, gap.entity, gap.field, gap.reason)

    def weapon(self, printed: str, chars: dict[str, str], loc: str, profile: Tree, is_melee: bool,
               linked: tuple[str, ...] = ()) -> None:
        skill_name = "WS" if is_melee else "BS"
        missing = [c for c in (*WEAPON_CHARACTERISTICS, skill_name) if c not in chars]
        if missing:
            raise NormaliseError(f"weapon profile {printed!r} lacks the characteristic(s) {', '.join(missing)}")
        # one weapon printed in two cases by two entries of the unit ("Heavy Flamer", "Heavy
        # flamer"; 11th edition) is one weapon, under the spelling met first
        first = self.weapon_spellings.setdefault(printed.casefold(), printed)
        if first != printed:
            self.flag(loc, "weapon_profiles", self.ds_id, "weapon_name_case_aligned",
                      f"{printed!r} read as {first!r}, as another entry of the unit prints it")
            printed = first
        line = PrintedWeapon(
            locator=loc, name=printed, range=chars["Range"], attacks=chars["A"], skill=chars[skill_name],
            strength=chars["S"], armour_penetration=chars["AP"], damage=chars["D"],
            abilities=chars["Keywords"], is_melee=is_melee, linked_abilities=linked,
        )
        assemble_weapon(line, self.sid, self.ds_id).into(self.collector, loc)

    def invulnerable(self, model_names: list[str]) -> dict[str | None, tuple[int, str | None, str]]:
        """The invulnerable saves of the unit's ``Invulnerable Save`` abilities, read by the shared
        reader (``pipeline.assemble.protection.read_invulnerable_ability``): (value, scope, the
        ability's text) by the model line it is for, None for every model. A conditional one is
        flagged, not applied."""
        found: dict[str | None, list[tuple[int, str | None, str, str]]] = {}
        for name, text, loc in self.invulns:
            save = read_invulnerable_ability(name, text, model_names)
            assert save is not None  # only names it reads are collected
            for code, detail in save.flags:
                self.flag(loc, "model_profiles", self.ds_id, code, detail)
            if not save.value:
                continue
            if save.condition:
                self.flag(loc, "model_profiles", self.ds_id, "invulnerable_save_conditional",
                          f"{name!r}: {text!r} (not put on the model profiles)")
                continue
            found.setdefault(save.model_name, []).append((save.value, save.scope, loc, save.note))
        out: dict[str | None, tuple[int, str | None, str]] = {}
        for model, saves in found.items():
            values = {(v, sc) for v, sc, _, _ in saves}
            if len(values) > 1:
                self.flag(saves[0][2], "model_profiles", self.ds_id, "several_invulnerable_saves",
                          f"{sorted(values, key=str)}: the first is used")
            out[model] = (saves[0][0], saves[0][1], saves[0][3])
        return out


def _weapon_links(entry: Tree) -> dict[str, tuple[str, ...]]:
    """The rules a wargear entry links (``infoLink type="rule"``: its weapon abilities, as the
    links name them), for each of its weapon profiles by profile id: a link goes to the profiles
    whose keyword cell has that ability, or to every profile when none has it (a two-profile
    weapon's ``Hazardous`` belongs to its supercharge profile only)."""
    names = []
    for link in _list(entry, "infoLinks"):
        if link.get("type") == "rule":
            name, parameter = _linked_name(link)
            names.append(f"{name} {parameter}" if parameter else name)
    if not names:
        return {}
    cells: dict[str, set[str]] = {}
    for profile in _list(entry, "profiles"):
        if PROFILE_TYPES.get(str(profile.get("typeName", ""))) in ("ranged", "melee"):
            keywords = next((_text(c) for c in _list(profile, "characteristics") if c.get("name") == "Keywords"), "")
            cells[str(profile.get("id"))] = {_ability_name(i) for i in ability_items(keywords)}
    out: dict[str, tuple[str, ...]] = {}
    for pid, cell in cells.items():
        out[pid] = tuple(n for n in names if _ability_name(n) in cell
                         or not any(_ability_name(n) in other for other in cells.values()))
    return out


def _ability_name(item: str) -> tuple:
    parsed = parse_ability(item)
    return (parsed.name, parsed.target_keyword)


def _linked_name(link: Tree) -> tuple[str, str | None]:
    """The name a rule link shows, and the parameter an unconditional ``append`` modifier adds."""
    name = clean_line(str(link.get("name", "")))
    parameter = None
    for modifier in _list(link, "modifiers"):
        if modifier.get("field") == "name" and modifier.get("type") == "append" and not _list(modifier, "conditions") \
                and not _list(modifier, "conditionGroups"):
            parameter = clean_line(str(modifier.get("value", ""))) or None
    return name, parameter


def iter_units(doc: Document) -> Iterator[Tree]:
    """The top-level unit entries of a document (type unit or model, with a Faction category)."""
    for entry in [*_list(doc.root, "selectionEntries"), *_list(doc.root, "sharedSelectionEntries")]:
        if entry.get("type") in ("unit", "model") and any(
            str(c.get("name", "")).startswith(FACTION_PREFIX) for c in _list(entry, "categoryLinks")
        ):
            yield entry
