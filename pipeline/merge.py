"""Merging sources: one row per key, conflicts recorded, gaps filled from a twin datasheet.

The same datasheet (same key) from several sources is one datasheet. When two sources disagree
on a value, the precedence (``pipeline/precedence.toml``: source kind, then the later version
date) picks the value, and both values with both sources go to ``conflicts``; nothing is
overwritten silently. Combat Patrol datasheets stay datasheets of their own, but a model
characteristic their source lost is filled from the same-named datasheet of another source,
each row keeping the source it came from.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from pipeline.normalise.text import slug
from pipeline.precedence import kind_ranks
from schemas.records import Conflict, DataFlag, Datasheet, ModelProfile, Record, Source

_PROVENANCE = {"source_id", "locator"}


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

    A field that one source leaves empty (None) and the other gives is not a disagreement.
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
        if a[name] != b[name] and a[name] is not None and b[name] is not None
    ]


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
