"""``wh40k matchups``: fill the ``matchups`` tables (every weapon profile against every target)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from pipeline import query
from pipeline.cli import app
from pipeline.cli.output import Format, note, render_rows, to_json


@app.command("matchups")
def matchups_command(
    edition: Optional[int] = typer.Option(None, "--edition", help="10 or 11 (default: both)."),
    db: Path = typer.Option(query.DEFAULT_DB, "--db", help="Database file (written: its matchups tables)."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table, json or csv (the summary)."),
    workers: int = typer.Option(2, "--workers", help="Processes computing the editions at once (1: in this one)."),
    plot: Optional[Path] = typer.Option(None, "--plot", help=(
        "Also draw FILE.png or FILE.svg: a heatmap of expected models destroyed, the 30 weapon profiles that "
        "destroy the most against the standard profiles (rows) by GEQ/MEQ/TEQ/VEHICLE/MONSTER (columns), "
        "in --edition (default: the latest).")),
) -> None:
    """Every weapon profile against every target (each datasheet and GEQ/MEQ/TEQ/VEHICLE/MONSTER),
    per edition, into the tables matchups, matchup_weapons and matchup_targets of the database.

    Defaults: the weapon's unit at its smallest size, every model firing it; no situational
    option; in the 11th edition the better Lethal Hits choice. Both editions are computed at
    once in two worker processes (--workers 1: one after the other). Progress goes to stderr,
    the summary (pairs a second, seconds per phase) to stdout.

    Example: wh40k matchups --edition 10 && wh40k sql "SELECT * FROM matchups LIMIT 5"
    """
    from pipeline.errors import InputError
    from pipeline.matchups import compute_matchups, write_matchups

    if edition is not None and edition not in (10, 11):
        raise InputError(f"--edition {edition}: the editions are 10 and 11; give one of them or leave it out for both")
    if workers < 1:
        raise InputError(f"--workers {workers}: give 1 or more processes (1 computes the editions one after the other)")
    editions = (edition,) if edition else (10, 11)
    if plot is not None:
        from pipeline.service.plot import check_plot_path

        check_plot_path(plot)
    parts = compute_matchups(db, editions, progress=lambda text: print(text, file=sys.stderr, flush=True),
                             workers=workers)
    written = write_matchups(db, parts)
    rows = [part.summary() for part in parts]
    if plot is not None:
        _plot(db, max(editions), plot)
    if fmt is Format.json:
        typer.echo(to_json({"editions": rows, "rows_written": written}))
        return
    for row in rows:  # a table cell or a CSV field holds text: the phases as "name seconds, ..."
        row["seconds_by_phase"] = ", ".join(f"{name} {value:.1f}" for name, value in row["seconds_by_phase"].items())
    render_rows(rows, fmt, title="Matchups: every weapon profile against every target")
    for part in parts:
        for reason, count in part.left_out.items():
            note(f"edition {part.edition}: {count} datasheet(s) left out: {reason}")
        if part.result and part.result.refusals:
            first = next(iter(part.result.refusals))
            note(f"edition {part.edition}: {part.result.refused_pairs} pair(s) refused by the exact engine, e.g. {first}")
    note(f"rows written: {', '.join(f'{table} {n}' for table, n in written.items())}")


def _plot(db: Path, edition: int, path: Path) -> None:
    """The heatmap of ``--plot`` from the table just written (``pipeline.service.plot``)."""
    from pipeline.service.answers import top_matchups
    from pipeline.service.plot import plot_matchups

    con = query.open_database(db)
    try:
        rows = top_matchups(con, edition)
    finally:
        con.close()
    weapons = len({(r["datasheet_id"], r["weapon_name"], r["profile_name"], r["is_melee"]) for r in rows})
    plot_matchups(rows, path, f"Expected models destroyed, edition {edition}:\nthe {weapons} weapon profiles "
                              "that destroy the most against the standard profiles")
    note(f"chart written to {path}")
