"""Read commands over the database: ``sql``, ``units``, ``unit``, ``weapons``, ``rule``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from pipeline import query
from pipeline.cli import app
from pipeline.cli.output import Format, ModeChoice, note, render_rows, to_json

DbOption = typer.Option(str(query.DEFAULT_DB), "--db", help="Database (built by `make build-db`): a DuckDB file, sqlite:///FILE or postgresql://USER@HOST/DB.")
FormatOption = typer.Option(Format.table, "--format", "-f", help="Output format: table, json or csv.")
EditionOption = typer.Option(
    None, "--edition", help="10 or 11: the datasheets of that edition (default: the latest edition in the database).")


@app.command("sql")
def sql_command(
    statement: str = typer.Argument(..., help="A read-only SQL statement."),
    db: str = DbOption,
    fmt: Format = FormatOption,
) -> None:
    """Run a read-only SQL query over the database.

    Example: wh40k sql "SELECT name, starting_strength FROM datasheets ORDER BY name"
    """
    from pipeline.cli.output import time_limit
    from pipeline.limits import MAX_SQL_SECONDS

    stopped = (f"the query ran past {MAX_SQL_SECONDS} s (the limit of one sql call, its output included) and was "
               "stopped; narrow it or add a LIMIT")
    with time_limit(MAX_SQL_SECONDS, stopped):  # DuckDB's own stop (run_sql) and the rendering
        rows = query.run_sql(query.open_database(db), statement)
        for text in rows.notes:
            note(text)
        if not rows and fmt is Format.table:
            note("no rows")
        render_rows(rows, fmt)


@app.command("units")
def units_command(
    name: Optional[str] = typer.Option(None, "--name", help="Part of the unit name."),
    faction: Optional[str] = typer.Option(None, "--faction", help="Faction id, e.g. adepta-sororitas."),
    edition: Optional[int] = EditionOption,
    db: str = DbOption,
    fmt: Format = FormatOption,
) -> None:
    """List units (datasheets) of one edition, filtered by name and by faction.

    Without --edition, the units of the latest edition in the database. Nothing matching the
    filters is not an error: the output is empty (no table, [] in JSON, the header line in CSV),
    a note on stderr names close faction ids and unit names, or the editions that have matches,
    and the exit status is 0.

    Example: wh40k units --name sisters --edition 10 --format csv
    """
    con = query.open_database(db)
    edition = query.resolve_edition(con, edition)
    rows = query.list_units(con, name=name, faction=faction, edition=edition)
    if not rows:
        note(query.units_filter_note(con, name=name, faction=faction, edition=edition))
    render_rows(rows, fmt, title=f"Units (edition {edition})")


@app.command("unit")
def unit_command(
    name: str = typer.Argument(..., help="Unit name or datasheet id."),
    edition: Optional[int] = typer.Option(None, "--edition", help=(
        "10 or 11 (default: the latest edition in the database, or the unit's own edition when it "
        "has no datasheet of that one, said in a note).")),
    mode: Optional[ModeChoice] = typer.Option(None, "--mode", help="matched or combat-patrol."),
    db: str = DbOption,
    fmt: Format = FormatOption,
) -> None:
    """Show one unit: model profiles, wargear, weapons with abilities, abilities, keywords.

    Looks up one unit, so a name that matches none (or none in the --edition / --mode asked
    for) is an error: `Error: ...` with close names (or the editions and modes it has), exit
    status 1. (units and weapons, which list what matches their filters, give an empty list, a
note and exit status 0 instead.) Without --edition, the datasheet of the latest edition in the
database; a unit that only another edition has is shown from that edition, with a note.

    --format json: one object with the parts (datasheet, model_profiles, weapons, abilities,
    keywords, loadout, data_gaps). --format csv: one flat table, one row per item; its first
    column, section, says which part the row is (datasheet, model_profile, wargear, weapon,
    ability, keyword, data_gap) and the other columns are the union of the parts' columns, empty
    where a part has no such column (name and kind are the datasheet's, the weapon's or the
    ability's, by section).

    Example: wh40k unit "Battle Sisters Squad" --format csv
    """
    from pipeline.service.answers import unit_answer

    con = query.open_database(db)
    answer, notes = unit_answer(con, name, edition, mode.value if mode else None)
    for line in notes:
        note(line)
    detail, found_errata = answer, answer["errata"]
    if fmt is Format.json:
        print(to_json(answer))
        return
    if fmt is Format.csv:
        render_rows(query.flat_unit(detail), fmt)
        return
    d = detail["datasheet"]
    from pipeline.engine.from_db import model_count

    size, how = model_count(con, d)
    models = f"{size} models" + ("" if how == "printed model count" else f", {how}")
    print(f"{d['name']}  ({d['datasheet_id']}, {models}, "
          f"edition {d['edition']}, {d['game_mode'] or 'all game modes'}, source {d['source_id']})")
    if detail["model_profiles"]:
        render_rows(detail["model_profiles"], fmt, title="Model profiles", columns=[
            "model_name", "move_inches", "toughness", "save", "invulnerable_save", "wounds",
            "leadership", "objective_control"])
    if detail["loadout"]:
        render_rows(detail["loadout"], fmt, title="Wargear")
    render_rows(detail["weapons"], fmt, title="Weapons", columns=[
        "weapon_name", "profile_name", "range", "A", "skill", "S", "AP", "D", "abilities"])
    abilities = [
        {**a, "text": a["text"] if a["text"] else f'(a rule: wh40k rule "{a["name"]}")'} for a in detail["abilities"]
    ]
    render_rows(abilities, fmt, title="Abilities", columns=["kind", "name", "parameter", "text"])
    kws = detail["keywords"]
    print("Keywords: " + ", ".join(k["keyword"] for k in kws if not k["is_faction_keyword"]))
    print("Faction keywords: " + ", ".join(k["keyword"] for k in kws if k["is_faction_keyword"]))
    if found_errata:
        render_rows(found_errata, fmt, title="Errata and FAQs", columns=["kind", "publication", "heading", "text"])
    for gap in detail["data_gaps"]:
        note(f"missing in {gap['source_id']}: {gap['table_name']} {gap['field']} ({gap['reason']})")


@app.command("weapons")
def weapons_command(
    name: Optional[str] = typer.Option(None, "--name", help="Part of the weapon name."),
    ability: Optional[str] = typer.Option(
        None, "--ability", help="Weapon ability, e.g. 'DEVASTATING WOUNDS', 'anti-infantry 4+', ANTI."
    ),
    edition: Optional[int] = EditionOption,
    db: str = DbOption,
    fmt: Format = FormatOption,
) -> None:
    """List the weapon profiles of one edition's datasheets, filtered by name and by ability.

    Without --edition, the weapons of the latest edition in the database. Nothing matching the
    filters is not an error: the output is empty (no table, [] in JSON, the header line in CSV),
    a note on stderr names close weapon names and abilities, or the editions that have matches,
    and the exit status is 0.

    Example: wh40k weapons --ability "devastating wounds" --edition 10
    """
    con = query.open_database(db)
    edition = query.resolve_edition(con, edition)
    rows = query.weapons(con, name=name, ability=ability, edition=edition)
    if not rows:
        note(query.weapons_filter_note(con, name=name, ability=ability, edition=edition))
    render_rows(rows, fmt, title=f"Weapons (edition {edition})", columns=[
        "weapon_name", "profile_name", "datasheet", "range", "A", "skill", "S", "AP", "D", "abilities"])
