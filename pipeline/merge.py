"""Merging sources: one row per key, conflicts recorded, gaps filled from a twin datasheet.

The same datasheet (same key) from several sources is one datasheet. When two sources disagree
on a value, the precedence (``pipeline/precedence.toml``: source kind, then the later version
date) picks the value, and both values with both sources go to ``conflicts``; nothing is
overwritten silently. Names are compared as a reader compares them (``name_key``,
``pipeline/normalise/names.py``): a datasheet, weapon, ability or keyword that a later source
prints another way (``Thunder Hammer``, ``... Terminator Armor``) is lined up with the earlier
source's, whose printed name is kept. Each source's own id of a datasheet is not a
disagreement: it goes to ``external_ids``. Combat Patrol datasheets stay datasheets of their
own, but a model characteristic their source lost is filled from the same-named datasheet of
another source, each row keeping the source it came from.
"""

from __future__ import annotations

import operator
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping

from pipeline.assemble.collector import content, entity_key  # noqa: F401  (content: re-exported)
from pipeline.normalise.composition import smallest_unit_size
from pipeline.normalise.names import name_key
from pipeline.precedence import kind_ranks
if TYPE_CHECKING:
    from pipeline.extractors import LinkColumns

from schemas.records import (
    Ability,
    Conflict,
    DataFlag,
    DataGap,
    Datasheet,
    Keyword,
    ModelProfile,
    Record,
    Source,
    SourceAgreement,
    UnitCost,
    WeaponAbility,
    WeaponProfile,
)


#: Fields holding text as a source prints it, compared the way a reader reads them (``as_read``):
#: ``text`` ignores case, quote style, spacing, brackets and emphasis marks; ``list`` is a
#: comma-separated list whose order carries no meaning (``-`` or nothing: an empty list);
#: ``inches`` also ignores where the inch mark stands (``20+"`` and ``20"+``); ``name`` is a
#: name's ``name_key``, ``name_any_number`` its key with the plural read as the singular (model
#: names: ``Battle Sisters`` and ``Battle Sister``). The stored value stays the one printed by the
#: source that wins.
AS_READ: dict[tuple[str, str], str] = {
    ("datasheets", "name"): "name",
    ("model_profiles", "model_name"): "name_any_number",
    ("unit_composition", "model_name"): "name_any_number",
    ("model_profiles", "move_text"): "inches",
    ("weapon_profiles", "abilities_text"): "list",
    ("weapon_abilities", "raw_text"): "text",
    ("weapon_abilities", "name"): "text",
    ("abilities", "text"): "text",
}

#: Fields that are not compared: each source's own id of a datasheet differs by nature (it goes
#: to ``external_ids``, one row per datasheet and source).
NOT_COMPARED: frozenset[tuple[str, str]] = frozenset({("datasheets", "external_id")})

_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})
_BULLET = re.compile(r"(?m)^\s*[-•]\s+")
_NOT_READ = re.compile(r"\*\*|\^\^|[\[\](){}]")


def as_read(value: object, how: str = "text") -> object:
    """A printed value as a reader compares it (``AS_READ``); other values unchanged.

    >>> as_read("Captain In  Terminator Armour") == as_read("Captain in Terminator Armour")
    True
    >>> as_read("Hazardous, Rapid Fire 1", "list") == as_read("RAPID FIRE 1, HAZARDOUS", "list")
    True
    >>> as_read("-", "list") == as_read("", "list")
    True
    >>> as_read('20+"', "inches") == as_read('20"+', "inches")
    True
    >>> as_read("Roll:\\n\\n- add 1 to the Hit roll.") == as_read("Roll:\\nadd 1 to the Hit roll")
    True
    >>> as_read("Raveners") == as_read("Ravener")
    False
    >>> as_read("Raveners", "name_any_number") == as_read("Ravener", "name_any_number")
    True
    >>> as_read("Captain in Terminator Armor", "name") == as_read("Captain In Terminator Armour", "name")
    True
    """
    if not isinstance(value, str):
        return value
    if how == "name" or how == "name_any_number":
        return name_key(value, ignore_plural=how == "name_any_number")
    text = _BULLET.sub("", value.translate(_QUOTES))
    text = _NOT_READ.sub(" ", text).casefold().rstrip().removesuffix(".")
    if how == "inches":
        text = text.replace('"', "")
    if how == "list":
        items = (" ".join(i.split()) for i in text.split(","))
        return tuple(sorted(i for i in items if i and i != "-"))
    return " ".join(text.split())


def source_order(sources: Iterable[Source]) -> list[Source]:
    """Sources from the highest precedence to the lowest: kind rank, then the later date, then id."""
    ranks = kind_ranks()
    return sorted(
        sources,
        key=lambda s: (
            -ranks.get(s.kind, 0),
            -(s.version_date.toordinal() if s.version_date else 0),
            s.source_id,
        ),
    )


def precedence_reason(winner: Source, loser: Source) -> str:
    """Why ``winner``'s value is taken over ``loser``'s, in words."""
    ranks = kind_ranks()
    rw, rl = ranks.get(winner.kind, 0), ranks.get(loser.kind, 0)
    if rw != rl:
        return f"precedence: {winner.kind} ({rw}) over {loser.kind} ({rl})"
    if winner.version_date != loser.version_date:
        return f"precedence: later version date {winner.version_date} over {loser.version_date}"
    return "precedence: same kind and date; first source id"


def _value_text(value: object) -> str | None:
    """A conflicting value as text: a dice expression by its printed form (``D6+1``).

    >>> _value_text({"text": "D6", "dice_count": 1, "dice_sides": 6, "modifier": 0}), _value_text(3)
    ('D6', '3')
    """
    if value is None:
        return None
    if isinstance(value, dict) and "text" in value:
        return str(value["text"])
    return str(value)


#: Fields that matched two rows, as their key does: not counted as agreeing (``AgreementTally``).
#: Two sources' datasheets are one datasheet when they have the same edition, faction and name
#: (``unify_datasheet_ids``; the id is made of them).
MATCHED_ON: frozenset[tuple[str, str]] = frozenset({
    ("datasheets", "edition"), ("datasheets", "faction_id"), ("datasheets", "name"),
})

#: How a field of two records with the same key compares (``compare_fields``).
AGREE, DIFFER, ONLY_A, ONLY_B, NEITHER = "agree", "differ", "only a", "only b", "neither"


def compare_fields(first: Record, other: Record) -> dict[str, str]:
    """Each field of two records with the same key, but the key fields (the match itself) and
    ``NOT_COMPARED``: ``AGREE``, ``DIFFER``, ``ONLY_A`` or ``ONLY_B`` (one record alone gives a
    value; None is no value) or ``NEITHER``. A printed text field (``AS_READ``) is compared as
    read, so capitals, spacing or brackets alone are no difference.

    >>> from schemas.records import Keyword
    >>> k = dict(datasheet_id="d", keyword="FLY", locator="l")
    >>> compare_fields(Keyword(**k, source_id="a", is_faction_keyword=False),
    ...                Keyword(**k, source_id="b", is_faction_keyword=True))
    {'is_faction_keyword': 'differ'}
    """
    a, b = content(first), content(other)
    table, key = first.__table__, first.__key__
    out = {}
    for name, value in a.items():
        if name in key or (table, name) in NOT_COMPARED:
            continue
        theirs = b[name]
        if value is None or theirs is None:
            out[name] = NEITHER if value is None and theirs is None else ONLY_B if value is None else ONLY_A
        else:
            out[name] = DIFFER if _differ(table, name, value, theirs) else AGREE
    return out


def conflicts_between(first: Record, other: Record, sources: dict[str, Source],
                      comparison: dict[str, str] | None = None) -> list[Conflict]:
    """One ``Conflict`` per field on which two records with the same key disagree
    (``compare_fields``, or ``comparison`` when the caller has it already).

    A field that one source leaves empty (None) and the other gives is not a disagreement; a
    printed text field (``AS_READ``) is compared as read, so capitals, spacing or brackets alone
    are not one; a field of ``NOT_COMPARED`` (each source's own id) is never one.
    """
    comparison = compare_fields(first, other) if comparison is None else comparison
    differ = [name for name, how in comparison.items() if how == DIFFER]
    if not differ:
        return []
    a, b = content(first), content(other)
    sid_a, sid_b = first.source_id, other.source_id  # type: ignore[attr-defined]
    reason = precedence_reason(sources[sid_a], sources[sid_b])
    entity = entity_key(first)  # the one entity key: the record's declared key, |-joined
    return [
        Conflict(
            table_name=first.__table__, entity_key=entity, field=name,
            value_a=_value_text(a[name]), source_id_a=sid_a,
            value_b=_value_text(b[name]), source_id_b=sid_b,
            chosen_source_id=sid_a, reason=reason,
        )
        for name in differ
    ]


class AgreementTally:
    """Counts of how sources agree, per (source a, source b, table, field), as the merge
    compares rows: the rows ``SourceAgreement`` declares (a: the source of the row kept). The
    fields that matched the rows (``MATCHED_ON``) are not counted.

    >>> from schemas.records import Keyword
    >>> srcs = {s: Source(source_id=s, title="", file="", format="", publisher="", edition=10, kind="export",
    ...                   game_mode=None, version=None, version_date=None, origin="") for s in "ab"}
    >>> tally = AgreementTally(srcs)
    >>> k = dict(datasheet_id="d", locator="l", is_faction_keyword=False)
    >>> tally.add(Keyword(**k, source_id="a", keyword="FLY"), Keyword(**k, source_id="b", keyword="FLY"))
    >>> [(r.field, r.rows, r.compared, r.agreed, r.disagreed) for r in tally.records()]
    [('is_faction_keyword', 1, 1, 1, 0)]
    """

    _OUTCOMES = {AGREE: 0, DIFFER: 1, ONLY_A: 2, ONLY_B: 3, NEITHER: 4}

    def __init__(self, sources: Mapping[str, Source]) -> None:
        self.sources = sources
        self.counts: dict[tuple[str, str, str, str], list[int]] = {}

    def add(self, first: Record, other: Record, comparison: dict[str, str] | None = None) -> None:
        """Count one pair of rows with the same key from two sources (``compare_fields``, or
        ``comparison`` when the caller has it already)."""
        comparison = compare_fields(first, other) if comparison is None else comparison
        pair = (first.source_id, other.source_id)  # type: ignore[attr-defined]
        table = first.__table__
        for name, how in comparison.items():
            if (table, name) not in MATCHED_ON:
                self.add_outcome(*pair, table, name, how)

    def add_outcome(self, source_a: str, source_b: str, table: str, field: str, how: str) -> None:
        """Count one comparison of ``field`` (one of ``AGREE``, ``DIFFER``, ``ONLY_A``,
        ``ONLY_B``, ``NEITHER``)."""
        counts = self.counts.setdefault((source_a, source_b, table, field), [0, 0, 0, 0, 0])
        counts[self._OUTCOMES[how]] += 1

    def records(self) -> list[SourceAgreement]:
        """One ``SourceAgreement`` per (source a, source b, table, field) counted, sorted."""
        return [
            SourceAgreement(
                edition=self._edition(a, b), source_id_a=a, source_id_b=b, table_name=table, field=field,
                rows=sum(n), compared=n[0] + n[1], agreed=n[0], disagreed=n[1], only_a=n[2], only_b=n[3],
            )
            for (a, b, table, field), n in sorted(self.counts.items())
        ]

    def _edition(self, a: str, b: str) -> int | None:
        """The edition of both sources; None when they differ (a faction both name, say)."""
        edition = self.sources[a].edition
        return edition if self.sources[b].edition == edition else None


def _differ(table: str, name: str, a: object, b: object) -> bool:
    how = AS_READ.get((table, name))
    return a != b if how is None else as_read(a, how) != as_read(b, how)


def fill_combat_patrol_characteristics(records: list[Record]) -> list[Record]:
    """Model profiles for Combat Patrol datasheets that have none, from a same-named twin.

    The twin is a datasheet of the same edition and name (compared by ``name_key``) from
    another source that is not a Combat Patrol datasheet and has model profiles. Each copied row
    keeps the twin's ``source_id`` and ``locator`` (where the value came from); a ``DataFlag``
    ``characteristics_filled_from_twin`` names the twin. Returns the rows to add.
    """
    sheets = [r for r in records if isinstance(r, Datasheet)]
    profiles: dict[str, list[ModelProfile]] = {}
    for r in records:
        if isinstance(r, ModelProfile):
            profiles.setdefault(r.datasheet_id, []).append(r)
    twins: dict[tuple, Datasheet] = {}
    for s in sheets:
        if s.game_mode != "combat-patrol" and profiles.get(s.datasheet_id):
            twins.setdefault((s.edition, name_key(s.name)), s)
    added: list[Record] = []
    for s in sheets:
        if s.game_mode != "combat-patrol" or profiles.get(s.datasheet_id):
            continue
        twin = twins.get((s.edition, name_key(s.name)))
        if twin is None:
            continue
        for p in profiles[twin.datasheet_id]:
            added.append(p.model_copy(update={"datasheet_id": s.datasheet_id}))
        added.append(DataFlag(
            source_id=s.source_id, locator=s.locator, table_name="model_profiles",
            entity_key=s.datasheet_id, flag="characteristics_filled_from_twin",
            detail=f"the source lost them; taken from {twin.datasheet_id} ({twin.source_id})",
        ))
    return added


def merged_counts(conflicts: list[Conflict]) -> Counter:
    """Conflicting fields per table (for the build summary)."""
    return Counter(c.table_name for c in conflicts)


def align_with_earlier(batches: list[list[Record]]) -> list[list[Record]]:
    """Each source's records, with model lines and weapon-ability positions lined up with the
    same rows of an earlier source (``batches`` in precedence order), so that the merge compares
    like with like.

    Model lines: when both sources name the models of a datasheet (each name once, compared by
    ``name_key`` with the plural read as the singular), a later source's line takes the line
    number of the earlier source's model of that name; its other lines take the numbers left, in
    their order. Weapon abilities: when a later
    source lists the same abilities of a weapon profile (as read) in another order, each takes
    the position of the earlier one (the order of a weapon's abilities carries no meaning).
    Points: when both sources price a datasheet's unit sizes by a model count (each (model count,
    bracket, condition) once), a later source's ``unit_costs`` row takes the line of the earlier
    source's row of that size and bracket, the others the lines left: the sources list sizes and
    brackets in different orders, and a line holds no meaning of its own.
    Returns new lists; records not moved are the same objects.
    """
    first_costs: dict[str, dict[object, int]] = {}
    first_models: dict[str, dict[object, int]] = {}
    first_abilities: dict[tuple, list[tuple[object, int]]] = {}
    aligned: list[list[Record]] = []
    for i, batch in enumerate(batches):
        if i == len(batches) - 1 and not (first_models or first_costs or first_abilities):
            aligned.append(batch)  # the last source, and no earlier one to line up with (one source)
            continue
        models: dict[str, list[ModelProfile]] = defaultdict(list)
        abilities: dict[tuple, list[WeaponAbility]] = defaultdict(list)
        costs: dict[str, list[UnitCost]] = defaultdict(list)
        for r in batch:
            if isinstance(r, ModelProfile):
                models[r.datasheet_id].append(r)
            elif isinstance(r, UnitCost):
                costs[r.datasheet_id].append(r)
            elif isinstance(r, WeaponAbility):
                abilities[(r.datasheet_id, r.weapon_name, r.is_melee, r.profile_name)].append(r)
        moved: dict[int, Record] = {}
        for sheet, rows in models.items():
            earlier = first_models.get(sheet)
            if earlier is None:
                first_models[sheet] = _lines_by_name(rows)
                continue
            moved.update(_realign_models(rows, earlier))
        for sheet, cost_rows in costs.items():
            earlier_costs = first_costs.get(sheet)
            if earlier_costs is None:
                first_costs[sheet] = _lines_by(cost_rows, _cost_key)
                continue
            moved.update(_realign_lines(cost_rows, earlier_costs, _cost_key))
        for profile, rows in abilities.items():
            earlier_abilities = first_abilities.get(profile)
            if earlier_abilities is None:
                first_abilities[profile] = [(as_read(r.raw_text), r.position) for r in rows]
                continue
            moved.update(_realign_abilities(rows, earlier_abilities))
        aligned.append([moved.get(id(r), r) for r in batch] if moved else batch)
    return aligned


def _cost_key(row: "UnitCost") -> object:
    """A points row's size and bracket: (model count, from unit, condition); None without a count."""
    if row.model_count is None or row.is_addon:
        return None
    return (row.model_count, row.from_unit, name_key(row.condition or ""))


def _lines_by(rows: list, key) -> dict[object, int]:
    keys = Counter(key(r) for r in rows)
    return {key(r): r.line for r in rows if key(r) is not None and keys[key(r)] == 1}


def _realign_lines(rows: list, earlier: dict[object, int], key, unmatched: str = "after") -> dict[int, Record]:
    """Rows of a later source renumbered to the lines of the earlier source's rows of the same
    ``key`` (each key once in both); a row of a key the earlier source does not have takes a line
    after all of the earlier source's (``unmatched="after"``: never compared with another size)
    or the numbers left in order (``"free"``).

    >>> rows = [UnitCost(source_id="b", locator="l", datasheet_id="d", line=n, description=f"{m} models",
    ...                  cost_points=p, is_addon=False, model_count=m) for n, m, p in ((1, 10, 190), (2, 5, 100), (3, 20, 300))]
    >>> moved = _realign_lines(rows, {(5, 1, ""): 1, (10, 1, ""): 2, (10, 3, ""): 3}, _cost_key)
    >>> sorted((moved.get(id(r), r).line, r.model_count) for r in rows)
    [(1, 5), (2, 10), (4, 20)]
    """
    mine = _lines_by(rows, key)
    if len(mine) != len(rows):
        return {}
    wanted = {id(r): earlier[key(r)] for r in rows if key(r) in earlier}
    if unmatched == "free":  # the numbers left, in order (model lines: a line is a place, not a size)
        if not wanted or all(wanted[id(r)] == r.line for r in rows if id(r) in wanted):
            return {}
        free = iter(sorted(set(range(1, len(rows) + len(earlier) + 1)) - set(wanted.values())))
    else:
        after = max(earlier.values(), default=0) + 1
        free = iter(range(after, after + len(rows)))
    lines = {id(r): wanted[id(r)] if id(r) in wanted else next(free) for r in rows}
    return {id(r): r.model_copy(update={"line": lines[id(r)]}) for r in rows if lines[id(r)] != r.line}


def _model_key(name: str) -> str:
    return name_key(name, ignore_plural=True)


def _model_line_key(row: ModelProfile) -> object:
    return _model_key(row.model_name)


def _lines_by_name(rows: list[ModelProfile]) -> dict[object, int]:
    return _lines_by(rows, _model_line_key)


def _realign_models(rows: list[ModelProfile], earlier: dict[object, int]) -> dict[int, Record]:
    """Model lines renumbered to the earlier source's lines of the same model name; the others
    take the numbers left, in their order (``_realign_lines`` with ``unmatched="free"``)."""
    return _realign_lines(rows, earlier, _model_line_key, unmatched="free")


def _realign_abilities(rows: list[WeaponAbility], earlier: list[tuple[object, int]]) -> dict[int, Record]:
    texts = [as_read(r.raw_text) for r in rows]
    if sorted(map(str, texts)) != sorted(str(t) for t, _ in earlier) or len(set(texts)) != len(texts):
        return {}
    position = {t: p for t, p in earlier}
    return {id(r): r.model_copy(update={"position": position[t]}) for r, t in zip(rows, texts) if position[t] != r.position}


def unify_datasheet_ids(batches: list[list[Record]], refs: Mapping[str, tuple[str, ...]],
                        moves: list[dict[str, str]] | None = None) -> list[list[Record]]:
    """Each source's records, with a datasheet that an earlier source prints under another spelling
    given the earlier source's id (``batches`` in precedence order).

    A later source's datasheet whose id no earlier source has is the earlier source's datasheet
    when both have the same edition, faction and game mode and the same name by ``name_key``
    (``Ancient in Terminator Armor`` is ``Ancient In Terminator Armour``), and the name is
    unambiguous: one datasheet of that name in the earlier sources, one in this source. Every
    row of the source that points to it is moved with it: the fields of ``refs`` (table ->
    fields holding a datasheet id, the datasheets table aside) and the ``entity_key`` of its
    data gaps and flags. Two
    datasheets of one source are never joined. Returns new lists; records not moved are the same
    objects. ``moves``, when given, gets for each batch its moved ids (old id -> earlier id), for
    the rows the caller keeps outside the records (``LinkColumns.moved``).
    """
    known: set[str] = set()
    by_name: dict[tuple, set[str]] = defaultdict(set)
    unified: list[list[Record]] = []
    for batch in batches:
        sheets = [r for r in batch if type(r) is Datasheet]
        mine = Counter(_sheet_name(s) for s in sheets)
        moved: dict[str, str] = {}
        for s in sheets:
            name = _sheet_name(s)
            earlier = by_name.get(name, ())
            if s.datasheet_id not in known and mine[name] == 1 and len(earlier) == 1:
                (moved[s.datasheet_id],) = earlier
        if moved:
            fields = {**refs, Datasheet.__table__: ("datasheet_id",)}
            batch = [_moved_to(r, moved, fields.get(r.__table__, ())) for r in batch]
        for s in sheets:
            known.add(moved.get(s.datasheet_id, s.datasheet_id))
            by_name[_sheet_name(s)].add(moved.get(s.datasheet_id, s.datasheet_id))
        unified.append(batch)
        if moves is not None:
            moves.append(moved)
    return unified


def _sheet_name(sheet: Datasheet) -> tuple:
    return sheet.edition, sheet.faction_id, sheet.game_mode, name_key(sheet.name)


def _moved_to(record: Record, moved: dict[str, str], fields: tuple[str, ...]) -> Record:
    update = {f: moved[v] for f in fields if (v := getattr(record, f)) in moved}
    if not fields and isinstance(record, (DataGap, DataFlag)):
        entity = record.entity_key
        for old, new in moved.items():
            if entity == old or (entity.startswith(old) and entity[len(old)] in "/|#"):
                update["entity_key"] = new + entity[len(old):]
                break
    return record.model_copy(update=update) if update else record


@dataclass(frozen=True)
class NamedRows:
    """Rows named within a scope, whose names ``align_names`` lines up across sources.

    ``records``: the record classes renamed together (the first defines the names; a weapon's
    abilities follow its profile). ``scope``: the fields within which a name is looked up (the
    datasheet, melee or ranged). ``names``: the fields of the name. ``any_number``: the plural is
    read as the singular (``name_key(..., ignore_plural=True)``).
    """

    records: tuple[type[Record], ...]
    scope: tuple[str, ...]
    names: tuple[str, ...]
    any_number: bool


#: The names lined up across sources. Weapons are things a model has one or several of
#: (``Twin power fist`` / ``Twin power fists``), so their number is not read; ability and keyword
#: names are compared by case, spacing, quotes and spelling only.
NAMED_ROWS: tuple[NamedRows, ...] = (
    NamedRows((WeaponProfile, WeaponAbility), ("datasheet_id", "is_melee"), ("weapon_name", "profile_name"), True),
    NamedRows((Ability,), ("datasheet_id", "kind"), ("name",), False),
    NamedRows((Keyword,), ("datasheet_id",), ("keyword",), False),
)


def align_names(batches: list[list[Record]], named: tuple[NamedRows, ...] = NAMED_ROWS) -> list[list[Record]]:
    """Each source's records, with the names of weapons, abilities and keywords that an earlier
    source prints another way (by ``name_key``) replaced by the earlier source's printed name
    (``batches`` in precedence order), so that they share a key and merge: ``Thunder Hammer``
    of a datasheet becomes its ``Thunder hammer``, and where the two profiles differ the merge
    records a conflict.

    A name is replaced only when it is unambiguous: within its scope (``NamedRows.scope``), one
    printed name of that key in this source and one in the earlier sources. Returns new lists;
    records not renamed are the same objects.
    """
    earlier: list[dict[tuple, tuple | None]] = [{} for _ in named]
    aligned: list[list[Record]] = []
    for i, batch in enumerate(batches):
        if i == len(batches) - 1 and not any(earlier):
            aligned.append(batch)  # the last source, and no earlier one to line up with (one source)
            continue
        by_type: dict[type, list[Record]] = defaultdict(list)
        for r in batch:
            by_type[type(r)].append(r)
        moved: dict[int, Record] = {}
        for rows, first in zip(named, earlier):
            scope_of, names_of = operator.attrgetter(*rows.scope), operator.attrgetter(*rows.names)
            mine: dict[tuple, set] = defaultdict(set)
            for r in by_type.get(rows.records[0], ()):
                printed = names_of(r)
                key = (scope_of(r), _name_keys(printed, rows.any_number))
                mine[key].add(printed)
            new: dict[tuple, object] = {}
            for key, printed in mine.items():
                earlier_name = first.get(key)
                if earlier_name is not None and len(printed) == 1 and earlier_name not in printed:
                    new[(key[0], next(iter(printed)))] = earlier_name
                if key not in first:
                    first[key] = next(iter(printed)) if len(printed) == 1 else None
            if not new:
                continue
            for kind in rows.records:
                for r in by_type.get(kind, ()):
                    name = new.get((scope_of(r), names_of(r)))
                    if name is not None:
                        values = name if len(rows.names) > 1 else (name,)
                        moved[id(r)] = r.model_copy(update=dict(zip(rows.names, values)))
        aligned.append([moved.get(id(r), r) for r in batch] if moved else batch)
    return aligned


def _name_keys(printed: object, any_number: bool) -> object:
    if isinstance(printed, tuple):
        return tuple(name_key(p, ignore_plural=any_number) for p in printed)
    return name_key(printed, ignore_plural=any_number)  # type: ignore[arg-type]


#: Tables whose rows of one datasheet are one value: a unit's composition and its loadout are
#: taken whole from the first source (in precedence order) that gives any row of them. The field
#: that names each line (compared as read) says whether another print's lines line up with them.
WHOLE_PER_DATASHEET: dict[str, str] = {"unit_composition": "model_name", "wargear_loadouts": "models"}


def keep_first_whole(batches: list[list[Record]], sources: dict[str, Source],
                     tally: AgreementTally | None = None) -> tuple[list[list[Record]], Counter, list[Conflict]]:
    """Each source's records less its rows of a ``WHOLE_PER_DATASHEET`` table for a datasheet
    whose rows of that table an earlier source (``batches`` in precedence order) already gave,
    unless they line up with those: the same publisher's print (a Wahapedia page and its export
    print the same lines), with the same line numbers each naming the same model.

    Lines that line up are merged line by line as any row (a count printed otherwise is a
    conflict). Another publisher's lines are composed otherwise (BattleScribe's option slots,
    ``0-1 Shock Trooper w/ Meltagun``, against a printed ``1 Shock Trooper Sergeant and 9 Shock
    Troopers``; its loadout lines in the catalogue's order and capitals): merged line by line,
    two compositions would mix into one, and every line would differ in print. Returns the batches, the rows set aside per ``(source_id, table)``
    (counted as duplicates: merged into the kept ones), and a ``Conflict`` per datasheet whose
    set-aside composition gives another smallest unit size
    (``normalise.composition.smallest_unit_size``; field ``unit size``, ``entity_key`` the
    datasheet id: the composition as a whole). ``tally`` counts each such comparison of unit
    sizes (table ``unit_composition``, field ``unit size``).
    """
    first: dict[tuple[str, str], tuple[str, list[Record]]] = {}  # (table, datasheet) -> (source, rows)
    set_aside: Counter = Counter()
    later: list[tuple[str, str, list[Record]]] = []  # composition rows set aside: (datasheet, source, rows)
    out: list[list[Record]] = []
    for batch in batches:
        mine: dict[tuple[str, str], list[Record]] = defaultdict(list)
        for r in batch:
            if r.__table__ in WHOLE_PER_DATASHEET:
                mine[(r.__table__, r.datasheet_id)].append(r)  # type: ignore[attr-defined]
        dropped: set[int] = set()
        for (table, sheet), rows in mine.items():
            if (table, sheet) not in first:
                first[(table, sheet)] = (rows[0].source_id, rows)  # type: ignore[attr-defined]
                continue
            kept_sid, kept = first[(table, sheet)]
            sid = rows[0].source_id  # type: ignore[attr-defined]
            if sources[kept_sid].publisher == sources[sid].publisher \
                    and _lines(rows, WHOLE_PER_DATASHEET[table]) == _lines(kept, WHOLE_PER_DATASHEET[table]):
                continue
            dropped.update(id(r) for r in rows)
            for r in rows:
                set_aside[(r.source_id, table)] += 1  # type: ignore[attr-defined]
            if table == "unit_composition":
                later.append((sheet, sid, rows))
        out.append([r for r in batch if id(r) not in dropped] if dropped else batch)
    conflicts: list[Conflict] = []
    for sheet, sid, rows in later:
        kept_sid, kept = first[("unit_composition", sheet)]
        a, b = (smallest_unit_size([(r.text, r.model_name, r.min_models)  # type: ignore[attr-defined]
                                    for r in sorted(c, key=lambda r: r.line)])  # type: ignore[attr-defined]
                for c in (kept, rows))
        if tally is not None:
            how = NEITHER if a is None and b is None else ONLY_B if a is None else ONLY_A if b is None \
                else AGREE if a == b else DIFFER
            tally.add_outcome(kept_sid, sid, "unit_composition", "unit size", how)
        if a is not None and b is not None and a != b:
            conflicts.append(Conflict(
                table_name="unit_composition", entity_key=sheet, field="unit size", value_a=str(a),
                source_id_a=kept_sid, value_b=str(b), source_id_b=sid, chosen_source_id=kept_sid,
                reason=precedence_reason(sources[kept_sid], sources[sid]) + "; the composition is taken whole"))
    return out, set_aside, conflicts


def _lines(rows: list[Record], name: str) -> dict[int, object]:
    """Line number -> what the line names, as read."""
    return {r.line: as_read(getattr(r, name)) for r in rows}  # type: ignore[attr-defined]


def filled_gaps(records: Iterable[Record], refs: Mapping[str, tuple[str, ...]],
                links: Iterable[LinkColumns] = ()) -> set[int]:
    """The data gaps (``id()`` of each) that another source fills: a ``DataGap`` of a table of
    ``refs`` (table -> the fields holding a datasheet id) about a datasheet (its ``entity_key``,
    or the part before ``|``) for which a source other than the gap's gives rows of that table.

    The gap says what one source lost ("the page scrape lost the characteristics table"); once
    another source gives those rows, the datasheet no longer misses them, and each row keeps the
    source it came from. The build counts such a gap as a duplicate of its source (merged into
    the other source's rows). ``links``: rows of link tables kept as columns, given as rows are.
    """
    records = list(records)
    if not any(isinstance(r, DataGap) and r.table_name in refs for r in records):
        return set()  # no gap to fill (as in most builds of one source)
    given: dict[tuple[str, str], set[str]] = defaultdict(set)  # (table, datasheet) -> sources
    for r in records:
        for name in refs.get(r.__table__, ()):
            given[(r.__table__, getattr(r, name))].add(r.source_id)  # type: ignore[attr-defined]
    for link in links:
        for sheet, sid in zip(link.datasheet_ids, link.source_ids):
            given[(link.table, sheet)].add(sid)
    out: set[int] = set()
    for r in records:
        if isinstance(r, DataGap) and r.table_name in refs:
            sheet = r.entity_key.split("|", 1)[0]
            if given.get((r.table_name, sheet), set()) - {r.source_id}:
                out.add(id(r))
    return out
