"""``wh40k effects coverage`` and ``wh40k effects unread``: how much of the rules the effects cover."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from pipeline import query
from pipeline.cli import app
from pipeline.cli.output import Format, note, render_rows

effects_app = typer.Typer(help="The effects of rules on attacks: coverage of the reader, rules it cannot read."
                          "\n\nExample: wh40k effects coverage --edition 10 --faction \"Adepta Sororitas\"",
                          no_args_is_help=True)
app.add_typer(effects_app, name="effects")


class Kind(str, Enum):
    stratagem = "stratagem"
    datasheet_ability = "datasheet-ability"
    detachment_rule = "detachment-rule"
    enhancement = "enhancement"
    order = "order"
    army_rule = "army-rule"


def _faction_id(con, faction: Optional[str]) -> Optional[str]:
    if faction is None:
        return None
    found = con.execute("SELECT DISTINCT faction_id FROM factions WHERE lower(faction_id) = lower(?) "
                        "OR lower(name) = lower(?)", [faction, faction]).fetchall()
    if not found:
        from pipeline.errors import NotFoundError

        names = [n for (n,) in con.execute("SELECT DISTINCT name FROM factions").fetchall()]
        close = query._close(faction, names)[:5]
        raise NotFoundError(f"--faction {faction!r}: no such faction" + (f"; close names: {', '.join(close)}" if close
                                                                          else "") + " (`wh40k sql \"SELECT * FROM factions\"`)")
    return found[0][0]


@effects_app.command("coverage")
def coverage_command(
    edition: Optional[int] = typer.Option(None, "--edition", help="10 or 11 (default: both)."),
    faction: Optional[str] = typer.Option(None, "--faction", help="A faction name or id (default: every one)."),
    db: str = typer.Option(str(query.DEFAULT_DB), "--db", help="Database: a DuckDB file, sqlite:///FILE or postgresql://USER@HOST/DB."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table, json or csv."),
) -> None:
    """Per edition and kind: rules, those that change an attack, read by the reader, hand-kept, unread.

    Example: wh40k effects coverage --edition 10 --faction "Adepta Sororitas"
    """
    from pipeline.effects.coverage import coverage

    con = query.open_database(db)
    try:
        rows = coverage(con, edition, _faction_id(con, faction))
    finally:
        con.close()
    render_rows(rows, fmt, title="Effects: coverage of the rules that change an attack",
                columns=["edition", "kind", "rules", "change_an_attack", "read", "hand_kept", "unread", "read_share"])


@effects_app.command("unread")
def unread_command(
    kind: Optional[Kind] = typer.Option(None, "--kind", help="stratagem, datasheet-ability, detachment-rule, "
                                                              "enhancement, order or army-rule."),
    faction: Optional[str] = typer.Option(None, "--faction", help="A faction name or id."),
    edition: Optional[int] = typer.Option(None, "--edition", help="10 or 11 (default: both)."),
    db: str = typer.Option(str(query.DEFAULT_DB), "--db", help="Database: a DuckDB file, sqlite:///FILE or postgresql://USER@HOST/DB."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table, json or csv."),
) -> None:
    """The rules that change an attack and that neither the reader nor a hand-kept entry covers.

    Example: wh40k effects unread --kind stratagem --faction "Adepta Sororitas"
    """
    from pipeline.effects.coverage import unread

    con = query.open_database(db)
    try:
        rows = unread(con, edition, kind.value if kind else None, _faction_id(con, faction))
    finally:
        con.close()
    if not rows:
        note("every rule that changes an attack has effects")
    render_rows(rows, fmt, columns=["edition", "kind", "faction_id", "name", "rule", "text"])
