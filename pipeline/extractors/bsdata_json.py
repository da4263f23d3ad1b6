"""BattleScribe 11th-edition catalogues in JSON (BSData ``wh40k-11e``), read as one folder.

``parse_cat_set_json`` is the build's parser of the format ``bsdata-cat-set-json``: every
``.json`` file of the folder (the faction catalogues, their libraries and the game system) is read
into one set, so that links across files resolve (``entryLinks``, ``infoLinks``, the
catalogue-level shared entries of a library named in ``catalogueLinks``), and the units of every
catalogue become datasheets through the walker the XML set uses (``bsdata_catalogue``: profiles,
abilities, keywords, sizes and default loadouts, each read by the shared assembly). A catalogue
added to the folder is read with the others: nothing names the files.

What this module reads on top, per unit (``unit_extras``, the walker's ``unit_hook``):

- points (``unit_points``): the ``pts`` cost of the unit entry, and the cost modifiers the
  catalogue gives it: ``set``/``increment``/``decrement`` under conditions on the unit's number of
  models (``greaterThan 5`` models: the 10-model price), on how many units of the same datasheet
  come before it in the army (the 11th-edition brackets: ``atLeast 2`` earlier units, the
  3rd+ unit, is ``from_unit`` 3), and on the army's catalogue (``notInstanceOf`` the
  ``primary-catalogue``: ``condition`` "army's catalogue is not ..."). One ``UnitCost`` row per
  unit size at the top of a price bracket (``5 models`` 100, ``10 models`` 190), per ``from_unit``
  and per condition where the price differs; ``model_count`` is the size. A model entry with a
  cost of its own prices each model (``Beast of Nurgle`` 70 each: ``1 model`` 70, ``2 models``
  140, ...). A modifier whose conditions are of another kind (a Crusade rank, a count of one
  wargear) is not applied: flag ``points_modifier_not_read`` with the modifier. A 0-point row is
  never stored (a unit whose every price is 0 gets a ``DataGap``, field ``cost_points``).
- wargear costs: every upgrade entry under the unit (own, in groups or linked) with a ``pts``
  cost above 0 is a ``WargearCost`` (``option_text``: the group or entry it is chosen in, as the
  catalogue names it; ``wargear``: the upgrade).
- leaders and support units: an ability ``Leader`` or ``Support`` whose text says "This model
  can be attached to the following unit(s):" followed by ``■`` lines gives one ``LeaderLink``
  per unit named (``kind`` ``leader`` or ``support``), resolved by name among the datasheets of
  the set (the leader's faction first); a name the set does not define keeps the id of that name
  in the leader's faction (a ``DataGap``: the build rejects it as an orphan unless another source
  defines that datasheet).

What could not be resolved: a ``catalogueLinks`` library that is not in the folder (four large
libraries are not in the corpus snapshot) is a ``DataGap`` (table ``sources``, field
``catalogueLink``); a root ``entryLink`` of a catalogue whose target is in no file (a unit of the
missing library) is a ``DataGap`` (table ``datasheets``, field ``entryLink``) naming the unit;
links inside units are ``DataGap`` rows of the walker. Each catalogue with any of these gets one
summary ``DataGap`` (table ``sources``, field ``links``: how many links, to how many targets, and
which libraries are missing). Nothing is dropped silently and nothing raises.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import product
from typing import Any, Iterator, Mapping

from pipeline.extractors import ParseResult, xml_reason
from pipeline.extractors.bsdata_catalogue import (
    LEGENDS_MARKER,
    Document,
    Tree,
    UnitWalk,
    _list,
    _loc,
    _not_unit_wargear,
    read_json,
    walk_catalogues,
)
from pipeline.assemble.ids import datasheet_id
from pipeline.normalise.text import clean_line, slug
from schemas.records import DataGap, Datasheet, LeaderLink, Record, Reject, Source, UnitCost, WargearCost

_RAW_LIMIT = 2000
#: The name of the points cost in BSData (``costs[].name``; the game system's ``costTypes``).
POINTS_COST_NAME = "pts"
#: Unit sizes between the smallest and the largest read one by one (a larger range: only the
#: sizes next to a price condition).
MAX_SIZES = 60
#: At most this many army-level conditions are combined for one unit (2**n cases).
MAX_ARMY_CONDITIONS = 3
#: Abilities that list the units a model can join, and the ``LeaderLink.kind`` they give.
ATTACH_ABILITIES: dict[str, str] = {"leader": "leader", "support": "support"}
_ATTACH_INTRO = re.compile(r"can be attached to the following units?\s*:?", re.IGNORECASE)
_BULLET = re.compile(r"^\s*[■•▪\-]\s*(?P<name>.+?)\s*$")
_COMPARE = {
    "atLeast": lambda a, b: a >= b, "greaterThan": lambda a, b: a > b, "atMost": lambda a, b: a <= b,
    "lessThan": lambda a, b: a < b, "equalTo": lambda a, b: a == b, "notEqualTo": lambda a, b: a != b,
}


def parse_cat_set_json(files: Mapping[str, str], source: Source) -> ParseResult:
    """The build's parser for a folder of BattleScribe JSON files read together (11th edition).

    ``files``: file name -> text, every ``.json`` file of the folder source ``source`` (its
    catalogues, their libraries and the game system). Returns the datasheets of every catalogue
    with their points, wargear costs and leader links (module docstring), and the ``DataGap``
    rows of what could not be resolved. A file that is not JSON, is over the limits of
    ``pipeline.extractors.load_json``, or has no ``catalogue`` or ``gameSystem`` object at the
    top is one reject; the others are still read. Raises nothing for bad input.
    """
    result = ParseResult()
    docs: list[Document] = []
    for name, text in sorted(files.items()):
        try:
            doc = Document(name, read_json(text), source)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            result.rejects.append(Reject(source_id=source.source_id, locator=name, table_name="datasheets",
                                         raw_text=text[:_RAW_LIMIT], reason=f"not a readable catalogue: {xml_reason(str(exc))}"))
            continue
        if not doc.root:
            result.rejects.append(Reject(source_id=source.source_id, locator=name, table_name="datasheets",
                                         raw_text=text[:_RAW_LIMIT], reason="no catalogue or gameSystem object at the top"))
            continue
        docs.append(doc)
    extras = _Extras(source, _points_type_ids(docs), _catalogue_names(docs))
    walked = walk_catalogues(docs, extras)
    walked.records.extend(extras.leader_links(walked.records))
    walked.records.extend(unresolved_links(docs, walked.records, source))
    result.extend(walked)
    return result


# ---- what could not be resolved ----------------------------------------------------------------


def _catalogue_names(docs: list[Document]) -> dict[str, str]:
    """Catalogue and game-system ids of the files read -> their names."""
    return {str(d.root.get("id")): str(d.root.get("name", d.name)) for d in docs}


def unresolved_links(docs: list[Document], records: list[Record], source: Source) -> list[DataGap]:
    """The ``DataGap`` rows of libraries and root links that no file of the set holds, and one
    summary per catalogue (module docstring). ``records``: what the walker gave (its own gaps
    of links inside units are counted in the summary)."""
    present = {str(d.root.get("id")) for d in docs}
    index_ids = _all_ids(docs)
    gaps: list[DataGap] = []
    sid = source.source_id
    inside_gaps = [r for r in records if isinstance(r, DataGap) and "not in the files read" in r.reason]
    for doc in docs:
        if doc.is_game_system:
            continue
        missing_libraries = []
        for link in _list(doc.root, "catalogueLinks"):
            target = str(link.get("targetId", ""))
            if target in present:
                continue
            library = clean_line(str(link.get("name", ""))) or target
            missing_libraries.append(library)
            gaps.append(DataGap(source_id=sid, locator=_loc(doc, link, "catalogueLink"), table_name="sources",
                                entity_key=f"{sid}|{doc.name}|{target}", field="catalogueLink",
                                reason=f"library {library!r} (catalogue id {target!r}) is not in the folder: "
                                       "the units and shared entries it holds are not read"))
        root_missing = 0
        for link in _list(doc.root, "entryLinks"):
            target = str(link.get("targetId", ""))
            if target in index_ids:
                continue
            root_missing += 1
            gaps.append(DataGap(source_id=sid, locator=_loc(doc, link, "entryLink"), table_name="datasheets",
                                entity_key=f"{doc.name}|{target}", field="entryLink",
                                reason=f"root entry link {clean_line(str(link.get('name', '')))!r} -> targetId "
                                       f"{target!r}: not in the files read, so this entry is not read"))
        inside = [g for g in inside_gaps if g.locator.startswith(f"{doc.name} ")]
        targets = {g.entity_key.rsplit("|", 1)[-1] for g in inside}
        if root_missing or inside or missing_libraries:
            libraries = ", ".join(repr(x) for x in missing_libraries) or "none"
            gaps.append(DataGap(
                source_id=sid, locator=doc.name, table_name="sources", entity_key=f"{sid}|{doc.name}", field="links",
                reason=f"{root_missing} root entry link(s) and {len(inside)} link(s) inside units "
                       f"(to {len(targets)} target(s)) not in the files read; libraries not in the folder: {libraries}"))
    return gaps


def _all_ids(docs: list[Document]) -> set[str]:
    ids: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            ident = node.get("id")
            if isinstance(ident, str):
                ids.add(ident)
            for value in node.values():
                if isinstance(value, list):
                    for child in value:
                        visit(child)
    for doc in docs:
        visit(doc.root)
    return ids


# ---- points -------------------------------------------------------------------------------------


def _points_type_ids(docs: list[Document]) -> frozenset[str]:
    """The cost type ids named ``pts`` (the game system's ``costTypes``)."""
    ids = {str(c.get("id")) for d in docs for c in _list(d.root, "costTypes")
           if clean_line(str(c.get("name", ""))) == POINTS_COST_NAME}
    return frozenset(ids)


def entry_points(node: Tree, pts_ids: frozenset[str]) -> int | None:
    """The ``pts`` cost of an entry (None when it has no points cost; a value that is no whole
    number is None too).

    >>> entry_points({"costs": [{"name": "pts", "typeId": "x", "value": 100}, {"name": "Crusade", "value": 1}]}, frozenset())
    100
    >>> entry_points({"costs": [{"name": "Crusade Points", "value": 1}]}, frozenset()) is None
    True
    """
    total = None
    for cost in _list(node, "costs"):
        if cost.get("name") == POINTS_COST_NAME or str(cost.get("typeId")) in pts_ids:
            number = _number(cost.get("value"))
            if number is not None:
                total = (total or 0) + number
    return total


def _number(value: Any) -> int | None:
    """A whole number as BSData writes one (``100``, ``100.0``, ``"5"``), else None.

    >>> _number(100.0), _number("5"), _number("NaN"), _number(float("inf")), _number(2.5), _number(True)
    (100, 5, None, None, None, None)
    """
    if isinstance(value, bool):
        return None
    text = str(value)
    if len(text) > 12:
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if math.isfinite(number) and number == int(number) else None


@dataclass(frozen=True)
class Case:
    """A situation a unit's price is computed for: its number of models, the units of the same
    datasheet before it in the army, and the army-level conditions that hold."""

    models: int
    earlier_units: int
    facts: frozenset[str] = frozenset()


class _Unreadable(Exception):
    """A cost condition of a kind not read (its reason)."""


@dataclass
class _Conditions:
    """Reads the conditions of a unit's cost modifiers (``holds``) and collects what they test:
    size thresholds, earlier-unit thresholds and army-level propositions (with their text)."""

    unit_ids: frozenset[str]
    names: Mapping[str, str]  # ids -> names, for the text of an army-level condition
    sizes: set[int] = field(default_factory=set)
    brackets: set[int] = field(default_factory=set)  # from_unit values
    facts: dict[str, str] = field(default_factory=dict)  # proposition key -> its text when true

    def check(self, node: Tree) -> None:
        """Raise ``_Unreadable`` unless every condition under ``node`` (a modifier or a group) is
        of a kind read; record what it tests."""
        for c in _list(node, "conditions"):
            self.condition(c, Case(0, 0), record=True)
        for g in _list(node, "conditionGroups"):
            self.group(g, Case(0, 0), record=True)
        if _list(node, "localConditionGroups"):
            for lg in _list(node, "localConditionGroups"):
                self.local(lg, Case(0, 0), record=True)

    def holds(self, node: Tree, case: Case) -> bool:
        return all(self.condition(c, case) for c in _list(node, "conditions")) and all(
            self.group(g, case) for g in _list(node, "conditionGroups")) and all(
            self.local(lg, case) for lg in _list(node, "localConditionGroups"))

    def group(self, group: Tree, case: Case, record: bool = False) -> bool:
        parts = [self.condition(c, case, record) for c in _list(group, "conditions")]
        parts += [self.group(g, case, record) for g in _list(group, "conditionGroups")]
        parts += [self.local(lg, case, record) for lg in _list(group, "localConditionGroups")]
        kind = group.get("type", "and")
        if kind not in ("and", "or"):
            raise _Unreadable(f"condition group of type {kind!r}")
        return all(parts) if kind == "and" else any(parts)

    def local(self, group: Tree, case: Case, record: bool = False) -> bool:
        """The 11th-edition bracket: at least N selections before this one that are this unit."""
        conds = _list(group, "conditions")
        kinds = {c.get("type") for c in conds}
        compare = _COMPARE.get(str(group.get("type")))
        n = _number(group.get("value"))
        same = any(c.get("type") == "instanceOf" and str(c.get("childId")) in self.unit_ids for c in conds)
        if compare is None or n is None or kinds != {"before", "instanceOf"} or not same:
            raise _Unreadable("a local condition group other than 'N units of this datasheet before it'")
        if record:
            first = next(k for k in range(0, 100) if compare(k, n))
            self.brackets.add(first + 1)
        return compare(case.earlier_units, n)

    def condition(self, c: Tree, case: Case, record: bool = False) -> bool:
        kind, scope, child = str(c.get("type")), str(c.get("scope")), str(c.get("childId"))
        value = _number(c.get("value"))
        if c.get("field") == "selections" and child == "model" and (scope == "self" or scope in self.unit_ids) \
                and kind in _COMPARE and value is not None:
            if record:
                self.sizes.add(value)
            return _COMPARE[kind](case.models, value)
        if scope == "primary-catalogue" and kind in ("instanceOf", "notInstanceOf"):
            key = f"primary-catalogue={child}"
            if record:
                self.facts[key] = f"army's catalogue is {self.names.get(child, child)}"
            return (key in case.facts) == (kind == "instanceOf")
        raise _Unreadable(f"condition {kind!r} on {c.get('field')!r} of {child!r} in scope {scope!r}")


def _cost_modifiers(entry: Tree, pts_ids: frozenset[str]) -> Iterator[tuple[Tree, list[Tree]]]:
    """The entry's modifiers of its points, with the modifier groups they sit in (whose
    conditions hold too)."""
    def walk(node: Tree, groups: list[Tree]) -> Iterator[tuple[Tree, list[Tree]]]:
        for m in _list(node, "modifiers"):
            if str(m.get("field")) in pts_ids or m.get("field") == POINTS_COST_NAME:
                yield m, groups
        for g in _list(node, "modifierGroups"):
            yield from walk(g, [*groups, g])
    yield from walk(entry, [])


def _ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``.

    >>> [_ordinal(n) for n in (1, 2, 3, 4, 11, 21)]
    ['1st', '2nd', '3rd', '4th', '11th', '21st']
    """
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


@dataclass
class _Extras:
    """The walker's ``unit_hook``: points, wargear costs and leader lists of each unit."""

    source: Source
    pts_ids: frozenset[str]
    names: dict[str, str]
    attach: list[tuple[UnitWalk, str, str, str]] = field(default_factory=list)  # unit, kind, name, locator

    def __call__(self, unit: UnitWalk) -> list[Record]:
        records: list[Record] = list(self.unit_points(unit))
        records += self.wargear_costs(unit)
        for ability in unit.abilities:
            kind = ATTACH_ABILITIES.get(ability.name.casefold())
            if kind and ability.text and _ATTACH_INTRO.search(ability.text):
                for name in attached_units(ability.text):
                    self.attach.append((unit, kind, name, ability.locator))
        return records

    # -- unit points

    def unit_points(self, unit: UnitWalk) -> list[UnitCost]:
        """The unit's ``UnitCost`` rows (module docstring)."""
        entry, sid = unit.entry, self.source.source_id
        loc = _loc(unit.doc, entry)
        own = entry_points(entry, self.pts_ids) or 0
        conditions = _Conditions(frozenset({str(entry.get("id"))}), self.names)
        modifiers: list[tuple[Tree, list[Tree]]] = []
        for modifier, groups in _cost_modifiers(entry, self.pts_ids):
            try:
                if _list(modifier, "repeats") or modifier.get("type") not in ("set", "increment", "decrement") \
                        or _number(modifier.get("value")) is None:
                    raise _Unreadable(f"a {modifier.get('type')!r} modifier"
                                      + (" repeated per selection" if _list(modifier, "repeats") else ""))
                for node in [*groups, modifier]:
                    conditions.check(node)
            except _Unreadable as why:
                unit.collector.flag("unit_costs", unit.datasheet_id, "points_modifier_not_read",
                                    f"{why}: {_short(modifier)}", loc)
                continue
            modifiers.append((modifier, groups))
        sizes, per_model = self.sizes(unit, conditions.sizes, loc)
        if not sizes:
            sizes = [0]

        def price(case: Case) -> int:
            cost = own + (per_model(case.models) if case.models else 0)
            for modifier, groups in modifiers:
                if all(conditions.holds(node, case) for node in [*groups, modifier]):
                    value = _number(modifier.get("value")) or 0
                    kind = modifier.get("type")
                    cost = value if kind == "set" else cost + value if kind == "increment" else cost - value
            return cost

        facts = sorted(conditions.facts)
        if len(facts) > MAX_ARMY_CONDITIONS:
            unit.collector.flag("unit_costs", unit.datasheet_id, "points_conditions_not_combined",
                                f"{len(facts)} army-level conditions: only the first {MAX_ARMY_CONDITIONS} are combined", loc)
            facts = facts[:MAX_ARMY_CONDITIONS]
        combos = [frozenset(f for f, on in zip(facts, bits) if on) for bits in product((False, True), repeat=len(facts))]
        from_units = sorted({1, *conditions.brackets})
        table = {(held, k, n): price(Case(n, k - 1, held)) for held in combos for k in from_units for n in sizes}
        depends = len({tuple(table[(h, k, n)] for k in from_units for n in sizes) for h in combos}) > 1
        rows: list[UnitCost] = []
        for held in (combos if depends else combos[:1]):
            condition = None
            if depends:
                condition = "; ".join(conditions.facts[f] if f in held else
                                      conditions.facts[f].replace(" is ", " is not ", 1) for f in facts)
            base = None
            for k in from_units:
                prices = [table[(held, k, n)] for n in sizes]
                if base is not None and prices == base:
                    continue
                base = base or prices
                for i, n in enumerate(sizes):
                    if i + 1 < len(sizes) and prices[i + 1] == prices[i]:
                        continue  # not the top of its price bracket
                    if prices[i] <= 0:
                        continue  # never a 0-point row
                    what = "unit" if n == 0 else f"{n} model{'s' if n != 1 else ''}"
                    extra = [f"{_ordinal(k)}+ unit" if k > 1 else "", condition or ""]
                    description = what + "".join(f" ({e})" for e in extra if e)
                    rows.append(UnitCost(source_id=sid, locator=loc, datasheet_id=unit.datasheet_id,
                                         line=len(rows) + 1, description=description, cost_points=prices[i],
                                         is_addon=False, model_count=n or None, from_unit=k, condition=condition))
        if not rows:
            unit.collector.gap("unit_costs", unit.datasheet_id, "cost_points",
                               "the catalogue gives the unit no points above 0", loc)
        return rows

    def sizes(self, unit: UnitWalk, thresholds: set[int], loc: str):
        """The unit sizes to price, and the price of its models at a size (per-model costs)."""
        roster = unit.roster
        smallest = roster.smallest
        if not roster.lines:
            return [], lambda n: 0
        mosts = [line.most for line in roster.lines]
        largest = sum(m for m in mosts if m is not None) if all(m is not None for m in mosts) else None
        # a top-level model unit is its own line: its points are the entry's, counted once
        priced = [(line, 0 if line.node is unit.entry else self.model_price(line.node, unit)) for line in roster.lines]
        at_smallest = sum(line.default * p for line, p in priced)
        growing = {p for line, p in priced if line.most is None or line.most > line.default}
        if len(growing) > 1:
            unit.collector.flag("unit_costs", unit.datasheet_id, "points_per_model_mixed",
                                f"model lines that can grow have different points per model {sorted(growing)}: "
                                "only the smallest size is priced", loc)
            return [smallest], lambda n: at_smallest
        step = next(iter(growing)) if growing else 0
        if largest is not None and largest - smallest <= MAX_SIZES:
            sizes = list(range(smallest, largest + 1))
        else:
            top = largest if largest is not None else max([smallest, *thresholds]) + 1
            sizes = sorted({smallest, *(t + d for t in thresholds for d in (-1, 0, 1) if smallest <= t + d <= top)})
        return sizes, lambda n: at_smallest + step * (n - smallest)

    def model_price(self, node: Tree, unit: UnitWalk) -> int:
        """Points of one model of a composition line (a model entry, or a group of them)."""
        if node.get("type") == "model":
            return entry_points(node, self.pts_ids) or 0
        prices = {entry_points(m, self.pts_ids) or 0 for m in _members(node, unit)}
        return max(prices) if prices else 0

    # -- wargear costs

    def wargear_costs(self, unit: UnitWalk) -> list[WargearCost]:
        """Upgrades under the unit that cost points (module docstring)."""
        rows: list[WargearCost] = []
        seen: set[tuple[str, str, int]] = set()

        def walk(node: Tree, doc: Document, where: str, stack: frozenset[str]) -> None:
            for child, child_doc, kind, link in _children(node, doc, unit):
                ident = str(child.get("id"))
                if ident in stack:
                    continue
                name = LEGENDS_MARKER.sub("", clean_line(str(child.get("name", ""))))
                if child.get("type") == "upgrade":
                    cost = entry_points(link, self.pts_ids) if link is not None else None
                    cost = cost if cost else entry_points(child, self.pts_ids)
                    if cost and cost > 0 and (where, name, cost) not in seen:
                        seen.add((where, name, cost))
                        rows.append(WargearCost(source_id=self.source.source_id, locator=_loc(child_doc, child),
                                                datasheet_id=unit.datasheet_id, line=len(rows) + 1,
                                                option_text=where, wargear=name, cost_points=cost))
                # a choice is named by the group it is made in, else by the model that makes it
                inner = name if kind == "selectionEntryGroup" or child.get("type") == "model" else where
                walk(child, child_doc, inner, stack | {ident})

        walk(unit.entry, unit.doc, unit.name, frozenset({str(unit.entry.get("id"))}))
        return rows

    # -- leaders

    def leader_links(self, records: list[Record]) -> list[Record]:
        """One ``LeaderLink`` per unit a Leader or Support ability names, resolved by name among
        the set's datasheets (module docstring); a ``DataGap`` for a name the set does not define."""
        by_name: dict[str, list[Datasheet]] = defaultdict(list)
        for r in records:
            if isinstance(r, Datasheet):
                by_name[slug(r.name)].append(r)
        out: list[Record] = []
        for unit, kind, name, loc in self.attach:
            found = by_name.get(slug(name), [])
            same = [d for d in found if d.faction_id == unit.faction_id]
            pick = (same or found)[0].datasheet_id if (same or found) else None
            target = pick or datasheet_id(self.source.edition, unit.faction_id, name)
            if pick is None:
                out.append(DataGap(source_id=self.source.source_id, locator=loc, table_name="leader_links",
                                   entity_key=f"{unit.datasheet_id}|{target}", field="bodyguard_datasheet_id",
                                   reason=f"{name!r} is no datasheet of the catalogues read: the id of that name "
                                          f"in {unit.faction_id} is used"))
            out.append(LeaderLink(source_id=self.source.source_id, locator=loc, leader_datasheet_id=unit.datasheet_id,
                                  bodyguard_datasheet_id=target, leader_name=unit.name, bodyguard_name=name,
                                  kind=kind))
        return _first_per_key(out)


def _first_per_key(records: list[Record]) -> list[Record]:
    """Records with a key not seen before (a Leader ability reached twice names its units twice)."""
    seen: set[tuple] = set()
    out = []
    for r in records:
        key = (r.__table__, r.key())
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def attached_units(text: str) -> list[str]:
    """The units a Leader or Support ability lists after "can be attached to the following units:".

    >>> attached_units("This model can be attached to the following units:\\n■ Battle Sisters Squad\\n"
    ...                "■ Dominion Squad\\nThis model can be attached to a Battle Sisters Squad, even if ...")
    ['Battle Sisters Squad', 'Dominion Squad']
    >>> attached_units("This model can be attached to the following unit: ■ BLOODLETTERS")
    ['BLOODLETTERS']
    """
    m = _ATTACH_INTRO.search(text)
    if not m:
        return []
    rest = text[m.end():]
    names: list[str] = []
    for line in re.split(r"\n|(?=■)", rest):
        if not line.strip():
            continue
        bullet = _BULLET.match(line)
        if not bullet:
            if names:
                break
            continue
        names.append(LEGENDS_MARKER.sub("", clean_line(bullet.group("name").rstrip(".;,"))))
    return [n for n in names if n]


def _children(node: Tree, doc: Document, unit: UnitWalk) -> Iterator[tuple[Tree, Document, str, Tree | None]]:
    """An entry's child entries and groups, links resolved (not hidden, not enhancements or
    Crusade, not the game system's), with their kind and the link that reached each."""
    for key, kind in (("selectionEntries", "selectionEntry"), ("selectionEntryGroups", "selectionEntryGroup")):
        for child in _list(node, key):
            if child.get("hidden") is not True and not _not_unit_wargear(child):
                yield child, doc, kind, None
    for link in _list(node, "entryLinks"):
        target = unit.index.get(str(link.get("targetId", "")))
        if target is None or target.kind not in ("selectionEntry", "selectionEntryGroup") or target.doc.is_game_system:
            continue
        if link.get("hidden") is True or target.node.get("hidden") is True or _not_unit_wargear(target.node):
            continue
        yield target.node, target.doc, target.kind, link


def _members(group: Tree, unit: UnitWalk) -> list[Tree]:
    """The model entries of a composition group (one level, links resolved)."""
    return [c for c, _, _, _ in _children(group, unit.doc, unit) if c.get("type") == "model"]


def _short(node: Tree) -> str:
    return json.dumps(node, ensure_ascii=False)[:400]

