"""The answers that ``wh40k unit``, ``wh40k rule`` and the HTTP API (``pipeline.service.app``)
both give: one function each, returning JSON-ready data and the notes for people.

No web framework is imported here, so the command line stays fast.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import duckdb

from pipeline import query
from pipeline.errors import InputError, NotFoundError

#: The languages the rules documents give (Game Datacards core rules).
LANGUAGES = ("en", "de", "es", "fr", "it", "ja", "ko", "zh")


def parse_date(text: str | None, option: str = "--on") -> dt.date | None:
    """A game date given as ``YYYY-MM-DD`` (None stays None).

    >>> parse_date("2025-01-15"), parse_date(None)
    (datetime.date(2025, 1, 15), None)
    >>> parse_date("15/01/2025")
    Traceback (most recent call last):
    ...
    pipeline.errors.InputError: --on '15/01/2025' is not a date; use YYYY-MM-DD, e.g. --on 2025-01-15
    """
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InputError(f"{option} {text!r} is not a date; use YYYY-MM-DD, e.g. {option} 2025-01-15") from None


def check_language(lang: str | None, option: str = "--lang") -> None:
    """Raise ``InputError`` unless ``lang`` is None or one of ``LANGUAGES``.

    >>> check_language("de")
    >>> check_language("xx")
    Traceback (most recent call last):
    ...
    pipeline.errors.InputError: --lang 'xx' is not a language of the rules; use one of en de es fr it ja ko zh
    """
    if lang is not None and lang not in LANGUAGES:
        raise InputError(f"{option} {lang!r} is not a language of the rules; use one of {' '.join(LANGUAGES)}")


def unit_answer(con: duckdb.DuckDBPyConnection, name: str, edition: int | None = None,
                mode: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """One unit as ``wh40k unit --format json`` gives it, and the notes for people.

    The answer: ``{"datasheet": {...}, "model_profiles": [...], "weapons": [...], "abilities":
    [...], "keywords": [...], "loadout": [...], "data_gaps": [...], "errata": [...]}``
    (``query.unit_detail`` and ``pipeline.rules.unit_errata``). Without ``edition``, the
    datasheet of the latest edition in the database, or the unit's own edition with a note;
    with it, only that edition's. Raises ``InputError`` for an edition the database does not
    have, ``NotFoundError`` (with close names) for a name that matches no unit.
    """
    from pipeline.rules import unit_errata

    notes: list[str] = []
    query.check_edition(con, edition)
    if edition is None:
        latest = query.latest_edition(con)
        sheet, others = query.find_datasheet_preferring(con, name, latest, mode=mode)
        if sheet["edition"] != latest:
            notes.append(f"{sheet['name']}: no datasheet of edition {latest} (the latest in the database); "
                         f"showing edition {sheet['edition']}'s ({sheet['datasheet_id']})")
    else:
        sheet, others = query.find_datasheet(con, name, edition=edition, mode=mode)
    if others:
        notes.append("also matching: " + ", ".join(o["datasheet_id"] for o in others)
                     + " (pass the datasheet id to choose)")
    detail = query.unit_detail(con, sheet["datasheet_id"])
    return {**detail, "errata": unit_errata(con, detail["datasheet"]["name"])}, notes


def rule_language(con: duckdb.DuckDBPyConnection, name: str, lang: str | None) -> str:
    """The language asked for, or the language of the name when it is a title in one language
    only (``Tödliche Treffer``: ``de``); English otherwise. Raises ``InputError`` for a language
    the rules are not given in."""
    if lang is not None:
        check_language(lang)
        return lang
    query.rule_keys_for(name)  # InputError for a name the lookup cannot read
    hits = query.rule_keys_by_title(con, name)
    langs = {h[1] for h in hits}
    return "en" if not hits or "en" in langs else sorted(langs)[0]


def default_edition_ruling(con: duckdb.DuckDBPyConnection, name: str, mode: str, on: dt.date | None,
                           language: str = "en", notes: list[str] | None = None):
    """The ruling (``pipeline.rules.Ruling``) in the latest edition of the database
    (``query.latest_edition``), or, when no wording of the rule applies there, in the newest
    other edition where one does, with a note appended to ``notes``; when none applies
    anywhere, another game mode's wording with a note, else the ``NotFoundError`` of the
    latest edition."""
    from pipeline.rules import governing_text

    notes = notes if notes is not None else []
    latest = query.latest_edition(con)
    others = sorted((e for e in query.known_editions(con) if e != latest), reverse=True)
    try:
        ruling = governing_text(con, name, latest, mode, on, language)
        if ruling.language == language:
            return ruling
        for edition in others:  # the language asked for is only in another edition's wording
            try:
                other = governing_text(con, name, edition, mode, on, language)
            except NotFoundError:
                continue
            if other.language == language:
                notes.append(f"{other.title}: no {language} wording in edition {latest} (the latest in the "
                             f"database); the edition {other.edition} wording")
                return other
        return ruling
    except NotFoundError as exc:
        first_error = exc
    for edition in others:
        try:
            ruling = governing_text(con, name, edition, mode, on, language)
        except NotFoundError:
            continue
        notes.append(f"{ruling.title}: no wording for {mode} games in edition {latest} (the latest in the "
                     f"database); the edition {ruling.edition} wording")
        return ruling
    try:  # no edition has a wording for this game mode: another mode's, with a note (or the error)
        return governing_text(con, name, latest, mode, on, language, other_mode=True)
    except NotFoundError:
        raise first_error from None


def rule_answer(con: duckdb.DuckDBPyConnection, name: str, edition: int | None = None, mode: str = "matched",
                on: dt.date | None = None, lang: str | None = None):
    """The governing wording of a rule as ``wh40k rule --format json`` gives it, and the notes.

    Returns ``(ruling, answer, notes)``: the ``Ruling``, its ``as_dict()`` with ``"errata"`` (the
    errata and FAQ entries that target it), and the notes for people. Raises ``InputError`` for
    an unknown edition or language, ``NotFoundError`` for an unknown rule or one with no wording
    that applies.
    """
    from pipeline.rules import errata_for_rule, governing_text

    notes: list[str] = []
    query.check_edition(con, edition)
    language = rule_language(con, name, lang)
    if edition is None:
        ruling = default_edition_ruling(con, name, mode, on, language, notes)
    else:
        ruling = governing_text(con, name, edition, mode, on, language, other_mode=True)
    return ruling, {**ruling.as_dict(), "errata": errata_for_rule(con, ruling)}, notes


class EmptyTable(InputError):
    """A table that the build leaves empty and a command fills (``matchups``), read before it was."""


#: The columns of ``matchup_rows``: the weapon's, the target's and the figures.
_MATCHUP_SQL = """
    SELECT w.edition, w.datasheet_id, d.name AS attacker, w.weapon_name, w.profile_name, w.is_melee, w.models,
           t.target_id, t.target_name, t.kind AS target_kind, t.models AS target_models,
           m.expected_damage, m.expected_models_destroyed, m.p_any_destroyed, m.p_unit_destroyed, m.resolution
    FROM matchup_weapons w
    JOIN datasheets d USING (datasheet_id)
    JOIN matchups m ON m.edition = w.edition AND m.weapon_key = w.weapon_key
    JOIN matchup_targets t ON t.edition = m.edition AND t.target_key = m.target_key
    WHERE (? IS NULL OR w.edition = ?)
      AND (? IS NULL OR lower(w.weapon_name) LIKE '%' || lower(?) || '%')
      AND (? IS NULL OR w.datasheet_id = ? OR lower(d.name) LIKE '%' || lower(?) || '%')
      AND (? IS NULL OR t.target_id = ? OR upper(t.target_id) = upper(?) OR lower(t.target_name) LIKE '%' || lower(?) || '%')
"""


def matchup_rows(con: duckdb.DuckDBPyConnection, weapon: str | None = None, attacker: str | None = None,
                 target: str | None = None, edition: int | None = None, limit: int = 100) -> dict[str, Any]:
    """Rows of the ``matchups`` table (``wh40k matchups`` fills it) joined to its weapons and
    targets: ``{"matchups": [row, ...], "total": N, "note": None or why nothing matched}``.

    Filters: ``weapon`` part of the weapon name; ``attacker`` part of the attacking datasheet's
    name or its id; ``target`` part of the target's name, its datasheet id or a standard
    profile (``MEQ``); ``edition``. Rows are ordered by expected models destroyed (most
    first; refused pairs last), then attacker, weapon, profile and target; at most ``limit``.
    Raises ``EmptyTable`` when the table is empty (the command that fills it named),
    ``InputError`` for a filter over ``MAX_NAME_LENGTH`` characters.
    """
    from pipeline.limits import check_name

    for what, value in (("weapon", weapon), ("attacker", attacker), ("target", target)):
        if value is not None:
            check_name(value, f"{what} filter")
    if con.execute("SELECT count(*) FROM matchups").fetchone()[0] == 0:
        raise EmptyTable("the matchups table is empty: fill it with `wh40k matchups` (every weapon profile against "
                         "every target; a few minutes), then ask again")
    params = [edition, edition, weapon, weapon, attacker, attacker, attacker, target, target, target, target]
    (total,) = con.execute(f"SELECT count(*) FROM ({_MATCHUP_SQL}) AS found", params).fetchone()
    cursor = con.execute(
        _MATCHUP_SQL + " ORDER BY m.expected_models_destroyed IS NULL, m.expected_models_destroyed DESC, "
        "d.name, w.weapon_name, w.profile_name, w.datasheet_id, t.target_id LIMIT ?", [*params, limit])
    names = [c[0] for c in cursor.description]
    rows = [dict(zip(names, row)) for row in cursor.fetchall()]
    note = None
    if not rows:
        given = [f"{what} {value!r}" for what, value in (("weapon", weapon), ("attacker", attacker),
                                                          ("target", target), ("edition", edition))
                 if value is not None]
        note = f"no matchup has {' and '.join(given)}; loosen a filter (each is part of a name, ignoring case)"
    return {"matchups": rows, "total": int(total), "note": note}


def top_matchups(con: duckdb.DuckDBPyConnection, edition: int, top: int = 30) -> list[dict[str, Any]]:
    """The rows of ``matchup_rows`` that a heatmap of a whole table shows: the ``top`` weapon
    profiles of ``edition`` with the most expected models destroyed on average against the
    standard profiles (GEQ, MEQ, TEQ, VEHICLE, MONSTER), each against each of those, the best
    first. Raises ``EmptyTable`` when the table is empty."""
    if con.execute("SELECT count(*) FROM matchups").fetchone()[0] == 0:
        raise EmptyTable("the matchups table is empty: fill it with `wh40k matchups` (every weapon profile against "
                         "every target; a few minutes), then ask again")
    rows = matchup_rows(con, edition=edition, limit=1_000_000)["matchups"]
    standard = [r for r in rows if r["target_kind"] == "standard"]
    by_weapon: dict[tuple, list[dict[str, Any]]] = {}
    for r in standard:
        by_weapon.setdefault((r["datasheet_id"], r["weapon_name"], r["profile_name"], r["is_melee"]), []).append(r)

    def mean(found: list[dict[str, Any]]) -> float:
        values = [r["expected_models_destroyed"] for r in found if r["expected_models_destroyed"] is not None]
        return sum(values) / len(values) if values else -1.0
    best = sorted(by_weapon, key=lambda key: (-mean(by_weapon[key]), key))[:top]
    order = {name: i for i, name in enumerate(("GEQ", "MEQ", "TEQ", "VEHICLE", "MONSTER"))}
    return [r for key in best for r in sorted(by_weapon[key], key=lambda r: order.get(r["target_id"], 99))]
