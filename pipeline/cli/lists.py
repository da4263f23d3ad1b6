"""``wh40k list show``: an army list read from its file and matched to the database."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from pipeline import query
from pipeline.cli import app
from pipeline.cli.output import Format, note, render_rows, to_json

list_app = typer.Typer(help="Army lists exported from list-building apps.\n\nExample: wh40k list show my-army.txt",
                       no_args_is_help=True)
app.add_typer(list_app, name="list")


@list_app.command("show")
def show_command(
    file: Path = typer.Argument(..., help="An exported army list: Warhammer app, New Recruit, ListForge or "
                                "War Organ text, or a BattleScribe roster (.ros, .rosz)."),
    edition: Optional[int] = typer.Option(None, "--edition", help=(
        "10 or 11: match the units to that edition's datasheets (default: the edition the list shows, "
        "else the latest edition in the database).")),
    db: str = typer.Option(str(query.DEFAULT_DB), "--db", help="Database (built by `make build-db`): a DuckDB file, sqlite:///FILE or postgresql://USER@HOST/DB."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="Output format: table, json or csv."),
) -> None:
    """Show an army list: its units, models, wargear, Enhancements, points and Attached units,
    each unit matched to a datasheet with a match score (1 is the same name), and every name
    that matched nothing.

    The format is detected from the file's content. A file that cannot be read or is no list of
    a known format is one `Error:` line naming the file (and the line), exit status 1.

    --format json: one object (the list's facts, units with models and wargear, attachments,
    unmatched). --format csv: one flat table with a `section` column (unit, model, wargear,
    enhancement, attachment, unmatched).

    Example: wh40k list show army.txt --format csv
    """
    from pipeline.lists import read_list
    from pipeline.lists.match import match_list
    from pipeline.lists.show import as_json, flat_rows, model_rows, summary, unit_rows

    army = read_list(file)
    con = query.open_database(db)
    query.check_edition(con, edition)
    if edition is None:
        edition = army.edition or query.latest_edition(con)
        if army.edition is None:
            note(f"{file}: the list does not say its edition; matching to edition {edition}'s datasheets "
                 "(--edition to choose)")
    matched = match_list(con, army, edition)
    if fmt is Format.json:
        print(to_json(as_json(matched)))
        return
    if fmt is Format.csv:
        render_rows(flat_rows(matched), fmt)
        return
    facts = summary(matched)
    faction = (f"{facts['faction']} ({facts['faction_id'] or 'faction not found'})" if facts['faction']
               else "no faction printed")
    print(f"{facts['name'] or file.name}: {faction}, "
          f"{', '.join(facts['detachments']) or 'no detachment'}, edition {edition}"
          f"{' (' + facts['edition_evidence'] + ')' if facts['edition_evidence'] else ''}, format {facts['format']}; "
          f"points: {facts['declared_points']} declared, {facts['summed_points']} summed")
    render_rows(unit_rows(matched), fmt, title="Units")
    render_rows(model_rows(matched), fmt, title="Models and wargear")
    for text in matched.notes:
        note(text)
    if matched.unmatched:
        note(f"{len(matched.unmatched)} unmatched: " + "; ".join(matched.unmatched))
