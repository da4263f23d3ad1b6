"""``wh40k matchup``: every unit of one army list against every unit of another."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from pipeline import query
from pipeline.cli import app
from pipeline.cli.output import Format, note, render_rows, to_json


class MatchupPhase(str, Enum):
    shooting = "shooting"
    fight = "fight"
    both = "both"


@app.command("matchup")
def matchup_command(
    mine: Path = typer.Argument(..., help="The attacking army list (any format `wh40k list show` reads)."),
    theirs: Path = typer.Argument(..., help="The target army list."),
    phase: MatchupPhase = typer.Option(MatchupPhase.both, "--phase", help="shooting, fight or both."),
    edition: Optional[int] = typer.Option(None, "--edition", help=(
        "10 or 11: the rules and the datasheets the units are matched to (default: the edition MINE shows, "
        "else THEIRS's, else the latest in the database).")),
    db: str = typer.Option(str(query.DEFAULT_DB), "--db", help="Database: a DuckDB file, sqlite:///FILE or postgresql://USER@HOST/DB."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table, json or csv."),
    plot: Optional[Path] = typer.Option(None, "--plot", help=(
        "Also draw FILE.png or FILE.svg: a heatmap of expected models destroyed, each attacking unit and "
        "phase (rows) by each target unit (columns).")),
) -> None:
    """Every unit of army list MINE attacking every unit of army list THEIRS (shooting and fight):
    expected models destroyed, P(target unit destroyed) and expected damage per pair.

    Units are built as `attack --list` builds them: the list's model lines and wargear, Attached
    units, the target's own protective rules and the Enhancements the effects table has. No
    situational option (no cover, not stationary, not charged, full range). The `method` column
    says which engine gave the row (batch, exact, unit, or `unit, saves one at a time` where the
    11th edition's save rolls together would take too long). Progress goes to stderr; the table
    (or JSON, CSV) to stdout, a summary at the end.

    Example: wh40k matchup my-army.txt their-army.txt --phase shooting --format csv
    """
    from pipeline.lists import read_list
    from pipeline.lists.match import match_list
    from pipeline.lists.matchup import matchup

    if edition is not None and edition not in (10, 11):
        from pipeline.errors import InputError

        raise InputError(f"--edition {edition}: the editions are 10 and 11")
    if plot is not None:
        from pipeline.service.plot import check_plot_path

        check_plot_path(plot)
    army, other = read_list(mine), read_list(theirs)
    con = query.open_database(db)
    query.check_edition(con, edition)
    edition = edition or army.edition or other.edition or query.latest_edition(con)
    if army.edition and other.edition and army.edition != other.edition:
        note(f"{mine} is a list of the {army.edition}th edition, {theirs} of the {other.edition}th; both are matched "
             f"to edition {edition}'s datasheets")
    result = matchup(con, match_list(con, army, edition), match_list(con, other, edition),
                     ("shooting", "fight") if phase is MatchupPhase.both else (phase.value,), edition,
                     progress=lambda text: print(text, file=sys.stderr, flush=True))
    summary = result.summary()
    if plot is not None:
        from pipeline.service.plot import plot_list_matchup

        plot_list_matchup(result.rows, plot, f"Expected models destroyed: {mine.name} against {theirs.name} "
                                             f"(edition {edition})")
        note(f"chart written to {plot}")
    if fmt is Format.json:
        print(to_json({"summary": summary, "rows": result.rows, "notes": result.notes}))
        return
    if fmt is Format.csv:
        render_rows(result.rows, fmt)
    else:
        rows = [{**r, **{k: round(r[k], 4) for k in ("expected_models_destroyed", "p_unit_destroyed",
                                                   "expected_damage")}} for r in result.rows]
        render_rows(rows, fmt, title=f"{mine.name} against {theirs.name} (edition {edition})")
        best = summary.pop("best")
        render_rows([summary], fmt, title="Summary")
        render_rows([{k: round(v, 4) if isinstance(v, float) else v for k, v in b.items()} for b in best], fmt,
                    title="Each unit's best target (most expected models destroyed)")
    for text in result.notes:
        note(text)
    if fmt is Format.csv:
        note("summary: " + ", ".join(f"{k} {v}" for k, v in summary.items() if k != "best"))
