"""The rows ``wh40k list show`` prints: one matched list as unit rows, model rows and a flat
table (plain dicts, for the table, JSON and CSV renderers)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pipeline.lists.match import MatchedList, MatchedWargear


def _gear_text(gear: tuple[MatchedWargear, ...]) -> str:
    return ", ".join(f"{w.count}x {w.printed}" + ("" if w.kind else " (unmatched)") for w in gear)


def _attached(matched: MatchedList) -> dict[int, str]:
    """Per unit index, the Attached unit it is in (``leads 2``, ``led by 1``)."""
    out: dict[int, list[str]] = {}
    for a in matched.attachments:
        allowed = "" if a.allowed is not False else " (not allowed by its datasheet)"
        out.setdefault(a.leader, []).append(f"leads {a.bodyguard + 1}{allowed}")
        out.setdefault(a.bodyguard, []).append(f"led by {a.leader + 1}")
    return {i: "; ".join(v) for i, v in out.items()}


def unit_rows(matched: MatchedList) -> list[dict[str, Any]]:
    """One row per unit: number, printed name, points, models, datasheet and score, Attached
    unit, Enhancements, Warlord."""
    attached = _attached(matched)
    return [{
        "unit": i + 1, "name": u.unit.name, "points": u.unit.points, "models": u.unit.model_count,
        "datasheet_id": u.datasheet_id, "score": u.score, "attached": attached.get(i, ""),
        "enhancements": ", ".join(e[0] for e in u.enhancements), "warlord": u.unit.warlord, "line": u.unit.line,
    } for i, u in enumerate(matched.units)]


def model_rows(matched: MatchedList) -> list[dict[str, Any]]:
    """One row per model line: unit number, model as printed, count, the datasheet's model it
    is and the score, its wargear (unmatched items marked)."""
    rows = []
    for i, u in enumerate(matched.units):
        for m in u.models:
            rows.append({"unit": i + 1, "model": m.printed, "count": m.count, "matched": m.matched,
                         "score": m.score, "wargear": _gear_text(m.wargear)})
        if u.wargear:
            rows.append({"unit": i + 1, "model": "(unit)", "count": None, "matched": None, "score": None,
                         "wargear": _gear_text(u.wargear)})
    return rows


def flat_rows(matched: MatchedList) -> list[dict[str, Any]]:
    """Every part of the list as one flat table: ``section`` (unit, model, wargear,
    enhancement, attachment, unmatched), the unit number, the printed name, count, points, what
    it matched (``kind``: weapon or wargear) and the score."""
    rows: list[dict[str, Any]] = []
    row = lambda **kw: rows.append({"section": None, "unit": None, "name": None, "count": None,  # noqa: E731
                                    "points": None, "matched": None, "kind": None, "score": None, **kw})
    for i, u in enumerate(matched.units):
        row(section="unit", unit=i + 1, name=u.unit.name, count=u.unit.model_count, points=u.unit.points,
            matched=u.datasheet_id, score=u.score)
        for m in u.models:
            row(section="model", unit=i + 1, name=m.printed, count=m.count, matched=m.matched, score=m.score)
            for w in m.wargear:
                row(section="wargear", unit=i + 1, name=w.printed, count=w.count, matched=w.matched, kind=w.kind,
                    score=w.score)
        for w in u.wargear:
            row(section="wargear", unit=i + 1, name=w.printed, count=w.count, matched=w.matched, kind=w.kind,
                score=w.score)
        for name, found, score in u.enhancements:
            points = next((e.points for e in u.unit.enhancements if e.name == name), None)
            row(section="enhancement", unit=i + 1, name=name, points=points, matched=found, score=score)
    for a in matched.attachments:
        row(section="attachment", unit=a.bodyguard + 1, name=matched.units[a.leader].unit.name,
            matched=matched.units[a.bodyguard].unit.name, kind="leader",
            score=None if a.allowed is None else float(a.allowed))
    for text in matched.unmatched:
        row(section="unmatched", name=text)
    return rows


def summary(matched: MatchedList) -> dict[str, Any]:
    """The list's own facts: format, name, faction, detachments, edition and how it was decided,
    points declared and summed."""
    a = matched.army
    return {"format": a.format, "name": a.name, "faction": a.faction, "faction_id": matched.faction_id,
            "detachments": list(a.detachments), "force_dispositions": list(a.force_dispositions),
            "edition": matched.edition, "edition_evidence": a.edition_evidence, "battle_size": a.battle_size,
            "points_limit": a.points_limit, "declared_points": a.declared_points, "summed_points": a.summed_points,
            "language": a.language}


def as_json(matched: MatchedList) -> dict[str, Any]:
    """The whole matched list as one JSON-ready dict: the summary, every unit with its models,
    wargear, Enhancements and matches, the Attached units, unmatched names and notes."""
    units = []
    for i, u in enumerate(matched.units):
        units.append({
            "unit": i + 1, "name": u.unit.name, "points": u.unit.points, "line": u.unit.line,
            "section": u.unit.section, "role": u.unit.role, "warlord": u.unit.warlord,
            "datasheet_id": u.datasheet_id, "datasheet_name": u.datasheet_name, "score": u.score,
            "models": [asdict(m) for m in u.models], "wargear": [asdict(w) for w in u.wargear],
            "enhancements": [{"name": n, "points": next((e.points for e in u.unit.enhancements if e.name == n), None),
                              "matched": f, "score": s} for n, f, s in u.enhancements],
            "notes": list(u.unit.notes)})
    return {**summary(matched), "units": units,
            "attachments": [{"leader": a.leader + 1, "bodyguard": a.bodyguard + 1, "allowed": a.allowed,
                             "leader_can_lead": list(a.can_lead)} for a in matched.attachments],
            "unmatched": list(matched.unmatched), "notes": list(matched.notes) + list(matched.army.notes)}
