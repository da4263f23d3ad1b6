"""Merging sources: one row per key, conflicts recorded, gaps filled from a twin datasheet.

The same datasheet (same key) from several sources is one datasheet. When two sources disagree
on a value, the precedence (``pipeline/precedence.toml``: source kind, then the later version
date) picks the value, and both values with both sources go to ``conflicts``; nothing is
overwritten silently. Combat Patrol datasheets stay datasheets of their own, but a model
characteristic their source lost is filled from the same-named datasheet of another source,
each row keeping the source it came from.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Iterable

from pipeline.normalise.text import slug
from pipeline.precedence import kind_ranks
from schemas.records import Conflict, DataFlag, Datasheet, ModelProfile, Record, Source, WeaponAbility

_PROVENANCE = {"source_id", "locator"}

#: Fields holding text as a source prints it, compared the way a reader reads them (``as_read``):
#: ``text`` ignores case, quote style, spacing, brackets and emphasis marks; ``list`` is a
#: comma-separated list whose order carries no meaning (``-`` or nothing: an empty list);
#: ``inches`` also ignores where the inch mark stands (``20+"`` and ``20"+``). The stored value
#: stays the one printed by the source that wins.
AS_READ: dict[tuple[str, str], str] = {
    ("datasheets", "name"): "text",
    ("model_profiles", "model_name"): "text",
    ("model_profiles", "move_text"): "inches",
    ("weapon_profiles", "abilities_text"): "list",
    ("weapon_abilities", "raw_text"): "text",
    ("weapon_abilities", "name"): "text",
    ("abilities", "text"): "text",
}

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
    """
    if not isinstance(value, str):
        return value
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


def content(record: Record) -> dict:
    """A record's values without its provenance."""
    return {k: v for k, v in record.model_dump().items() if k not in _PROVENANCE}


def precedence_reason(winner: Source, loser: Source) -> str:
    """Why ``winner``'s value is taken over ``loser``'s, in words."""
    ranks = kind_ranks()
    rw, rl = ranks.get(winner.kind, 0), ranks.get(loser.kind, 0)
    if rw != rl:
        return f"precedence: {winner.kind} ({rw}) over {loser.kind} ({rl})"
    if winner.version_date != loser.version_date:
        return f"precedence: later version date {winner.version_date} over {loser.version_date}"
    return "precedence: same kind and date; first source id"


def conflicts_between(first: Record, other: Record, sources: dict[str, Source]) -> list[Conflict]:
    """One ``Conflict`` per field on which two records with the same key disagree.

    A field that one source leaves empty (None) and the other gives is not a disagreement; a
    printed text field (``AS_READ``) is compared as read, so capitals, spacing or brackets alone
    are not one.
    """
    a, b = content(first), content(other)
    sid_a, sid_b = first.source_id, other.source_id  # type: ignore[attr-defined]
    reason = precedence_reason(sources[sid_a], sources[sid_b])
    entity = "/".join(str(k) for k in first.key())
    return [
        Conflict(
            table_name=first.__table__, entity_key=entity, field=name,
            value_a=None if a[name] is None else str(a[name]), source_id_a=sid_a,
            value_b=None if b[name] is None else str(b[name]), source_id_b=sid_b,
            chosen_source_id=sid_a, reason=reason,
        )
        for name in a
        if a[name] is not None and b[name] is not None
        and _differ(first.__table__, name, a[name], b[name])
    ]


def _differ(table: str, name: str, a: object, b: object) -> bool:
    how = AS_READ.get((table, name))
    return a != b if how is None else as_read(a, how) != as_read(b, how)


def fill_combat_patrol_characteristics(records: list[Record]) -> list[Record]:
    """Model profiles for Combat Patrol datasheets that have none, from a same-named twin.

    The twin is a datasheet of the same edition and name (case and hyphen style ignored) from
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
            twins.setdefault((s.edition, slug(s.name)), s)
    added: list[Record] = []
    for s in sheets:
        if s.game_mode != "combat-patrol" or profiles.get(s.datasheet_id):
            continue
        twin = twins.get((s.edition, slug(s.name)))
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

    Model lines: when both sources name the models of a datasheet (each name once, compared as
    read), a later source's line takes the line number of the earlier source's model of that
    name; its other lines take the numbers left, in their order. Weapon abilities: when a later
    source lists the same abilities of a weapon profile (as read) in another order, each takes
    the position of the earlier one (the order of a weapon's abilities carries no meaning).
    Returns new lists; records not moved are the same objects.
    """
    first_models: dict[str, dict[object, int]] = {}
    first_abilities: dict[tuple, list[tuple[object, int]]] = {}
    aligned: list[list[Record]] = []
    for batch in batches:
        models: dict[str, list[ModelProfile]] = defaultdict(list)
        abilities: dict[tuple, list[WeaponAbility]] = defaultdict(list)
        for r in batch:
            if isinstance(r, ModelProfile):
                models[r.datasheet_id].append(r)
            elif isinstance(r, WeaponAbility):
                abilities[(r.datasheet_id, r.weapon_name, r.is_melee, r.profile_name)].append(r)
        moved: dict[int, Record] = {}
        for sheet, rows in models.items():
            earlier = first_models.get(sheet)
            if earlier is None:
                first_models[sheet] = _lines_by_name(rows)
                continue
            moved.update(_realign_models(rows, earlier))
        for profile, rows in abilities.items():
            earlier_abilities = first_abilities.get(profile)
            if earlier_abilities is None:
                first_abilities[profile] = [(as_read(r.raw_text), r.position) for r in rows]
                continue
            moved.update(_realign_abilities(rows, earlier_abilities))
        aligned.append([moved.get(id(r), r) for r in batch] if moved else batch)
    return aligned


def _lines_by_name(rows: list[ModelProfile]) -> dict[object, int]:
    names = Counter(as_read(r.model_name) for r in rows)
    return {as_read(r.model_name): r.line for r in rows if names[as_read(r.model_name)] == 1}


def _realign_models(rows: list[ModelProfile], earlier: dict[object, int]) -> dict[int, Record]:
    mine = _lines_by_name(rows)
    if len(mine) != len(rows):
        return {}
    wanted = {id(r): earlier[as_read(r.model_name)] for r in rows if as_read(r.model_name) in earlier}
    if not wanted or all(wanted[id(r)] == r.line for r in rows if id(r) in wanted):
        return {}
    free = iter(sorted(set(range(1, len(rows) + len(earlier) + 1)) - set(wanted.values())))
    lines = {id(r): wanted[id(r)] if id(r) in wanted else next(free) for r in rows}
    return {id(r): r.model_copy(update={"line": lines[id(r)]}) for r in rows if lines[id(r)] != r.line}


def _realign_abilities(rows: list[WeaponAbility], earlier: list[tuple[object, int]]) -> dict[int, Record]:
    texts = [as_read(r.raw_text) for r in rows]
    if sorted(map(str, texts)) != sorted(str(t) for t, _ in earlier) or len(set(texts)) != len(texts):
        return {}
    position = {t: p for t, p in earlier}
    return {id(r): r.model_copy(update={"position": position[t]}) for r, t in zip(rows, texts) if position[t] != r.position}
