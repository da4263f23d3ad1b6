"""A BattleScribe unit's default roster: its model lines with their counts, and the default
wargear of each model (the unit's size and loadout, as ``bsdata_catalogue`` emits them).

BattleScribe builds a unit from its entry the same way every time a player adds it: each
selection entry (and entry link) under a selected parent is selected as many times as its
``min`` constraint asks (field ``selections``, scope ``parent``); a selection entry group whose
``min`` its members' minimums do not reach gets the rest from its ``defaultSelectionEntryId``
(``Battle Sisters``: min 9, ``Battle Sister`` min 6 -> 9 Battle Sisters). What this gives is the
smallest unit the catalogue allows, with its default wargear (for 430 of the 432 units that the
10th-edition catalogues and the Wahapedia export both give, the export's smallest size: Canis
Rex's pilot is a model of its own in the catalogue, and the Aquila Kill Team's default names no
entry); ``unit_roster`` reads the same from the tree, without a roster:

- a model line (one ``UnitComposition`` row) is a model entry (type ``model``), or a group with
  its own counts whose members are model entries (or upgrades holding only model entries, as the
  ``Weapons Team`` of a Cadian Recon Squad) -- one line ``9 Battle Sisters`` rather than one per
  option slot; a count the catalogue prints in a group's name (``10-20 Termagants``) is left out
  of the model name. A top-level model unit is one line of one model.
- a line's ``default`` is its number of models in the default roster (so the lines add up to
  the unit's smallest size; a model group's is at least its own ``min``, even where which models
  is the player's choice), ``most`` the most the constraints allow (own ``max`` times the ``max``
  of the entries it sits in, a group's ``max`` holding each of its entries too; None when an
  entry on the way has no ``max``).
- each model entry of the default roster carries the upgrades selected by default under it
  that hold a weapon profile (``Ranged Weapons`` / ``Melee Weapons``, own or linked), each with
  its number per model (``2 Lascannon`` from an upgrade ``2 Lascannons`` holding a link with
  ``min 2``); upgrades without a weapon of their own (``Bolt Rifle w/ Grenade Launcher``) are
  walked through. Weapons named as their profiles name them (``Plasma pistol`` for ``➤ Plasma
  pistol - standard``, ``split_weapon_name``). Weapons outside every model entry are no model's
  (the 10th-edition catalogues have none selected by default).

A link's constraints and its target's both hold (the larger ``min``, the smaller ``max``).
Entries marked ``hidden`` are never selected; ``modifiers`` are not applied (they change
constraints under conditions of a roster that does not exist here, or per repeat), so the counts
are the constraints as written. A group whose members' minimums do not reach its own and that
names no default leaves that choice to the player: it is reported in ``Roster.undecided`` (the
catalogue parser makes it a ``DataGap``), never guessed. Links into the game system (Crusade,
Warlord) and enhancement or Crusade groups (``skip``) are not walked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

from pipeline.assemble.weapons import split_weapon_name

Tree = dict[str, Any]

#: Profile type names of weapons.
WEAPON_TYPES = frozenset({"Ranged Weapons", "Melee Weapons"})
#: A count a catalogue prints at the start of a group's name (``9 Recon Troopers``, ``1-2 Hippogriff AFV``).
_COUNT_IN_NAME = re.compile(r"^\s*\d+(?:\s*[-–]\s*\d+)?\s+(?=\S)")
_CHILD_KINDS = (("selectionEntries", "selectionEntry"), ("selectionEntryGroups", "selectionEntryGroup"))
#: The largest count a selection constraint gives (real ones have at most 20); and the most models
#: a line is counted at (counts multiply down the tree: a larger product is no maximum, and a
#: default count is held at it).
MAX_COUNT = 1000


class _Target(Protocol):
    """An indexed element (``bsdata_catalogue._Target``): the node, its kind and its document
    (``.is_game_system``)."""

    node: Tree
    kind: str
    doc: Any


@dataclass(frozen=True)
class ModelLine:
    """One composition line: ``name``, its models in the default roster and the most allowed."""

    name: str
    default: int
    most: int | None
    node: Tree
    doc: Any
    kind: str  # "selectionEntry" or "selectionEntryGroup" (for the locator)


@dataclass(frozen=True)
class RosterModel:
    """A model entry of the default roster: ``count`` models, each with ``equipment``
    (``(name, number per model)``, in walk order)."""

    name: str
    count: int
    equipment: tuple[tuple[str, int], ...]
    node: Tree
    doc: Any


@dataclass(frozen=True)
class Undecided:
    """A group whose default selection is the player's choice: of ``models`` (a unit's models) or
    of ``equipment`` (a model's weapons; groups of other wargear are not reported)."""

    node: Tree
    doc: Any
    what: str
    why: str


@dataclass
class Roster:
    """What ``unit_roster`` returns: composition lines, default models, undecided groups."""

    lines: list[ModelLine] = field(default_factory=list)
    models: list[RosterModel] = field(default_factory=list)
    undecided: list[Undecided] = field(default_factory=list)

    @property
    def smallest(self) -> int:
        """The unit's smallest size: the models of the default roster."""
        return sum(line.default for line in self.lines)


def _list(node: Tree, key: str) -> list[Tree]:
    value = node.get(key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def own_counts(node: Tree) -> tuple[int | None, int | None]:
    """The ``min`` and ``max`` selection constraints of an entry, link or group (scope ``parent``).

    A value that is not a whole number from 0 to ``MAX_COUNT`` is no constraint (BattleScribe
    writes ``-1`` for "no limit"; ``inf`` or a number of 5,000 digits is no count).

    >>> own_counts({"constraints": [{"type": "min", "value": "1", "field": "selections", "scope": "parent"},
    ...                             {"type": "max", "value": 3.0, "field": "selections", "scope": "parent"},
    ...                             {"type": "max", "value": "6", "field": "selections", "scope": "roster"}]})
    (1, 3)
    >>> own_counts({"constraints": [{"type": "max", "value": "-1", "field": "selections", "scope": "parent"},
    ...                             {"type": "min", "value": "inf", "field": "selections", "scope": "parent"}]})
    (None, None)
    >>> own_counts({})
    (None, None)
    """
    lo = hi = None
    for c in _list(node, "constraints"):
        if c.get("field") != "selections" or c.get("scope") != "parent":
            continue
        text = str(c.get("value"))
        if len(text) > 12:
            continue
        try:
            number = float(text)
        except ValueError:
            continue
        if not (0 <= number <= MAX_COUNT) or number != int(number):
            continue
        value = int(number)
        if c.get("type") == "min":
            lo = value if lo is None else max(lo, value)
        elif c.get("type") == "max":
            hi = value if hi is None else min(hi, value)
    return lo, hi


def _combined(a: tuple[int | None, int | None], b: tuple[int | None, int | None]) -> tuple[int | None, int | None]:
    """Both constraints hold: the larger minimum, the smaller maximum.

    >>> _combined((1, None), (None, 2)), _combined((2, 5), (1, 3)), _combined((None, None), (None, None))
    ((1, 2), (2, 3), (None, None))
    """
    lows = [x for x in (a[0], b[0]) if x is not None]
    highs = [x for x in (a[1], b[1]) if x is not None]
    return (max(lows) if lows else None), (min(highs) if highs else None)


def group_name(name: str) -> str:
    """A group's name without the count a catalogue may print first.

    >>> group_name("10-20 Termagants"), group_name("9 Recon Troopers"), group_name("Battle Sisters")
    ('Termagants', 'Recon Troopers', 'Battle Sisters')
    """
    return _COUNT_IN_NAME.sub("", name).strip()


def _hidden(node: Tree) -> bool:
    return str(node.get("hidden", "false")).lower() == "true"


@dataclass(frozen=True)
class _Child:
    node: Tree  # the entry or group (a link's target)
    doc: Any
    kind: str
    lo: int | None
    hi: int | None
    ids: frozenset[str]  # its id and its link's id (a group's default names either)


@dataclass
class _Walker:
    index: Mapping[str, _Target]
    clean: Callable[[str], str]
    skip: Callable[[Tree], bool]
    roster: Roster = field(default_factory=Roster)

    def children(self, node: Tree, doc: Any) -> list[_Child]:
        out: list[_Child] = []
        for key, kind in _CHILD_KINDS:
            for child in _list(node, key):
                if not _hidden(child) and not self.skip(child):
                    out.append(_Child(child, doc, kind, *own_counts(child), frozenset({str(child.get("id"))})))
        for link in _list(node, "entryLinks"):
            target = self.index.get(str(link.get("targetId", "")))
            if target is None or target.kind not in ("selectionEntry", "selectionEntryGroup") \
                    or target.doc.is_game_system or _hidden(link) or _hidden(target.node) or self.skip(target.node):
                continue
            lo, hi = _combined(own_counts(link), own_counts(target.node))
            out.append(_Child(target.node, target.doc, target.kind, lo, hi,
                              frozenset({str(link.get("id")), str(target.node.get("id"))})))
        return out

    def defaults(self, node: Tree, kind: str, doc: Any, children: list[_Child], what: str) -> list[int]:
        """How many times each child is selected per selection of ``node`` (a group's minimum
        filled with its default entry); a group left to the player goes to ``undecided``."""
        counts = [c.lo or 0 for c in children]
        lo, _ = own_counts(node)
        missing = (lo or 0) - sum(counts)
        if missing > 0 and kind == "selectionEntryGroup":
            default = str(node.get("defaultSelectionEntryId", "none"))
            at = next((i for i, c in enumerate(children) if default in c.ids), None)
            if at is None:
                if what == "models" or any(self.any_weapon(c) for c in children):
                    named = "it names no default" if default == "none" else \
                        f"its default {default!r} is none of its entries"
                    self.roster.undecided.append(Undecided(node, doc, what, (
                        f"group {self.clean(str(node.get('name', '')))!r} asks for {lo} selection(s), its entries' "
                        f"minimums give {sum(counts)} and {named}: the choice is the player's")))
            else:
                counts[at] += missing
        return counts

    def model_group(self, group: Tree, doc: Any) -> bool:
        """A group with its own counts whose members are models, at least one of them directly (the
        others may be groups or upgrades holding only models: a linked ``Shock Trooper w/ Special
        Weapon`` group, a ``Weapons Team``)."""
        if own_counts(group) == (None, None):
            return False
        members = self.children(group, doc)
        return any(m.kind == "selectionEntry" and m.node.get("type") == "model" for m in members) \
            and all(self.only_models(m, 0) for m in members)

    def only_models(self, member: _Child, depth: int) -> bool:
        if member.kind == "selectionEntry" and member.node.get("type") == "model":
            return True
        inner = self.children(member.node, member.doc)
        return depth < 4 and bool(inner) and all(self.only_models(i, depth + 1) for i in inner)

    def walk(self, node: Tree, kind: str, doc: Any, times: int, most: int | None, line: bool,
             stack: frozenset[str]) -> None:
        """Model lines and default models under ``node``, selected ``times`` times by default and
        at most ``most`` times; ``line``: already inside a composition line."""
        children = self.children(node, doc)
        cap = own_counts(node)[1] if kind == "selectionEntryGroup" else None  # a group's max holds each entry too
        for child, count in zip(children, self.defaults(node, kind, doc, children, "models")):
            ident = str(child.node.get("id"))
            if ident in stack:
                continue
            d = min(times * count, MAX_COUNT)
            hi = _combined((None, child.hi), (None, cap))[1]
            m = None if most is None or hi is None or most * hi > MAX_COUNT else most * hi
            inner = stack | {ident}
            if child.kind == "selectionEntryGroup":
                if not line and self.model_group(child.node, child.doc):
                    at = len(self.roster.models)
                    self.walk(child.node, child.kind, child.doc, times, most, True, inner)
                    group_least, group_most = own_counts(child.node)
                    models = min(max(times * (group_least or 0), sum(r.count for r in self.roster.models[at:])),
                                 MAX_COUNT)
                    top = None if most is None or group_most is None else most * group_most
                    self.roster.lines.append(ModelLine(
                        group_name(self.clean(str(child.node.get("name", "")))), models,
                        None if top is None or top > MAX_COUNT else top, child.node, child.doc, child.kind))
                else:
                    self.walk(child.node, child.kind, child.doc, times, most, line, inner)
            elif child.node.get("type") == "model":
                name = self.clean(str(child.node.get("name", "")))
                if not line:
                    self.roster.lines.append(ModelLine(name, d, m, child.node, child.doc, child.kind))
                if d > 0:
                    self.roster.models.append(RosterModel(
                        name, d, tuple(self.equipment(child.node, child.kind, child.doc, 1, inner)), child.node,
                        child.doc))
            else:  # an upgrade: it may hold models (a Weapons Team)
                self.walk(child.node, child.kind, child.doc, d, m, line, inner)

    def equipment(self, node: Tree, kind: str, doc: Any, per: int, stack: frozenset[str]) -> list[tuple[str, int]]:
        """The weapons selected by default under ``node``, ``per`` times per model (a group is
        not selected itself: its entries are, per selection of its parent)."""
        items: list[tuple[str, int]] = []
        children = self.children(node, doc)
        for child, count in zip(children, self.defaults(node, kind, doc, children, "equipment")):
            ident = str(child.node.get("id"))
            if ident in stack or child.node.get("type") == "model":
                continue
            if child.kind == "selectionEntryGroup":
                items += self.equipment(child.node, child.kind, child.doc, per, stack | {ident})
                continue
            if count <= 0:
                continue
            k = min(per * count, MAX_COUNT)
            items += [(weapon, k) for weapon in self.weapons(child.node)]
            items += self.equipment(child.node, child.kind, child.doc, k, stack | {ident})
        return items

    def weapons(self, entry: Tree) -> list[str]:
        """The weapons an entry holds itself: its weapon profiles' (own or linked) weapon names."""
        profiles = [p for p in _list(entry, "profiles") if p.get("typeName") in WEAPON_TYPES]
        for link in _list(entry, "infoLinks"):
            target = self.index.get(str(link.get("targetId", ""))) if link.get("type") == "profile" else None
            if target is not None and target.kind == "profile" and target.node.get("typeName") in WEAPON_TYPES:
                profiles.append(target.node)
        return list(dict.fromkeys(split_weapon_name(str(p.get("name", "")))[0] for p in profiles))

    def any_weapon(self, child: _Child, depth: int = 0) -> bool:
        """True when an entry or group holds a weapon, itself or below."""
        if child.kind == "selectionEntry" and self.weapons(child.node):
            return True
        return depth < 4 and any(self.any_weapon(c, depth + 1) for c in self.children(child.node, child.doc))


def unit_roster(entry: Tree, doc: Any, index: Mapping[str, _Target], clean: Callable[[str], str],
                skip: Callable[[Tree], bool] = lambda _node: False) -> Roster:
    """The default roster of a unit entry (module docstring): composition lines, models with
    their default weapons, and groups left to the player.

    ``index``: every element with an id (``.node``, ``.kind``, ``.doc``), to resolve links;
    ``clean``: how a printed name is cleaned; ``skip``: entries and groups not to walk
    (enhancements, Crusade). A top-level model unit is one line of one model.
    """
    walker = _Walker(index, clean, skip)
    ident = frozenset({str(entry.get("id"))})
    if entry.get("type") == "model":
        name = clean(str(entry.get("name", "")))
        walker.roster.lines.append(ModelLine(name, 1, 1, entry, doc, "selectionEntry"))
        equipment = tuple(walker.equipment(entry, "selectionEntry", doc, 1, ident))
        walker.roster.models.append(RosterModel(name, 1, equipment, entry, doc))
        return walker.roster
    walker.walk(entry, "selectionEntry", doc, 1, 1, False, ident)
    return walker.roster
