"""``wh40k unit-diff`` and ``wh40k sources-agree``: a datasheet across editions, sources against
each other."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from pipeline import query
from pipeline.cli import app
from pipeline.cli.output import Format, ModeChoice, render_rows, to_json

DbOption = typer.Option(query.DEFAULT_DB, "--db", help="Database file (built by `make build-db`).")
FormatOption = typer.Option(Format.table, "--format", "-f", help="Output format: table, json or csv.")


@app.command("unit-diff")
def unit_diff_command(
    name: str = typer.Argument(..., help="Unit name or datasheet id."),
    from_edition: int = typer.Option(10, "--from", help="Edition to compare from."),
    to_edition: int = typer.Option(11, "--to", help="Edition to compare to."),
    mode: Optional[ModeChoice] = typer.Option(None, "--mode", help="matched or combat-patrol (default: matched play first)."),
    db: Path = DbOption,
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
