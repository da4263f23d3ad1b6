"""``wh40k unit-diff`` and ``wh40k sources-agree``: a datasheet across editions, sources against
each other."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from pipeline import query
from pipeline.cli import app
from pipeline.cli.output import Format, ModeChoice, note, render_rows, to_json

DbOption = typer.Option(str(query.DEFAULT_DB), "--db", help="Database (built by `make build-db`): a DuckDB file, sqlite:///FILE or postgresql://USER@HOST/DB.")
FormatOption = typer.Option(Format.table, "--format", "-f", help="Output format: table, json or csv.")


@app.command("unit-diff")
def unit_diff_command(
    name: str = typer.Argument(..., help="Unit name or datasheet id."),
    from_edition: int = typer.Option(10, "--from", help="Edition to compare from."),
    to_edition: int = typer.Option(11, "--to", help="Edition to compare to."),
    mode: Optional[ModeChoice] = typer.Option(None, "--mode", help="matched or combat-patrol (default: matched play first)."),
    db: str = DbOption,
    fmt: Format = FormatOption,
) -> None:
    """What changed in a unit's datasheet between two editions: characteristics per model line,
    weapons added, removed or changed (per field), abilities added, removed or reworded,
    keywords, points.

    One row per change: part (characteristics, weapons, abilities, keywords, points), item (the
    model line, weapon, ability, keyword or points line), change (added, removed, changed),
    field, old, new; a reworded ability also has `marked` (the new text with [-removed-] and
    {+added+} words). --format json: {"from": ..., "to": ..., "changes": [...]}.

    Example: wh40k unit-diff "Battle Sisters Squad" --from 10 --to 11
    """
    from pipeline.unit_diff import PARTS, unit_diff

    con = query.open_database(db)
    query.check_edition(con, from_edition, "--from")
    query.check_edition(con, to_edition, "--to")
    diff = unit_diff(con, name, from_edition, to_edition, mode.value if mode else None)
    if fmt is Format.json:
        print(to_json(diff.as_dict()))
        return
    rows = [vars(c) for c in diff.changes]
    columns = ["part", "item", "change", "field", "old", "new", "marked"]
    if fmt is Format.csv:
        render_rows(rows, fmt, columns=columns)
        return
    old, new = diff.old, diff.new
    print(f"{new['name']}: edition {old['edition']} ({old['datasheet_id']}, {old['source_id']}) -> "
          f"edition {new['edition']} ({new['datasheet_id']}, {new['source_id']})")
    if not rows:
        print("no differences")
        return
    for part in PARTS:  # a reworded ability: its old text, and the new one with the words marked
        shown = [{**r, "new": r["marked"] or r["new"]} for r in rows if r["part"] == part]
        if shown:
            render_rows(shown, fmt, title=part.capitalize(), columns=["item", "change", "field", "old", "new"])


@app.command("sources-agree")
def sources_agree_command(
    edition: Optional[int] = typer.Option(None, "--edition", help="10 or 11 (default: every edition)."),
    list_field: Optional[str] = typer.Option(None, "--list", help=(
        "List the disagreements of one field: table.field (weapon_profiles.skill) or a field name "
        "alone (skill) for every table that has it.")),
    db: str = DbOption,
    fmt: Format = FormatOption,
) -> None:
    """How the sources agree, per edition, pair of sources and field, as the build's merge
    compared them: each later source's row against the row kept from the first source in
    precedence that gave it (source_a).

    Per pair: datasheets both gave, fields compared (both gave a value), agreeing, disagreeing,
    given by one source only, and the share agreeing. Per field: the same for each table and
    field. --list FIELD lists that field's disagreements (the conflicts rows). --format json:
    {"pairs": [...], "fields": [...]} (with --list, the disagreements); --format csv: the
    per-field rows (with --list, the disagreements).

    Example: wh40k sources-agree --edition 10 --list weapon_profiles.skill
    """
    from pipeline.limits import check_name
    from pipeline.sources_agree import agreement_by_field, agreement_by_pair, disagreements

    con = query.open_database(db)
    query.check_edition(con, edition)
    if list_field is not None:
        check_name(list_field, "--list field")
        rows = disagreements(con, list_field, edition)
        if not rows and fmt is Format.table:
            note(f"no disagreement on {list_field}" + (f" in edition {edition}" if edition else ""))
        render_rows(rows, fmt, title=f"Disagreements on {list_field}")
        return
    pairs, fields = agreement_by_pair(con, edition), agreement_by_field(con, edition)
    if not pairs:
        note("no two sources gave the same row" + (f" in edition {edition}" if edition else "")
             + ": nothing was compared")
    if fmt is Format.json:
        print(to_json({"pairs": pairs, "fields": fields}))
    elif fmt is Format.csv:
        render_rows(fields, fmt)
    else:
        render_rows(pairs, fmt, title="Per pair of sources (a: the source whose value is kept)")
        render_rows(fields, fmt, title="Per field")
