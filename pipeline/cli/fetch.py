"""``wh40k fetch``: download the sources of the raw manifest into raw/ (or copy them from a mirror)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from pipeline.cli import app
from pipeline.cli.output import Format, note, render_rows
from pipeline.errors import InputError
from pipeline.manifest import read_manifest


@app.command("fetch")
def fetch_command(
    raw: Path = typer.Option(Path("raw"), "--raw", help="Folder with manifest.toml; files are written there."),
    mirror: Optional[str] = typer.Option(
        None, "--mirror",
        help="A folder, or an http(s) base URL, holding the files under their raw/ names (or base names); "
        "used instead of each source's url.",
    ),
    only: Optional[list[str]] = typer.Option(None, "--only", help="Fetch only this source id (repeatable)."),
    delay: float = typer.Option(1.0, "--delay", min=0.0, help="Seconds between two requests to the same host."),
    deadline: float = typer.Option(
        300.0, "--deadline", min=0.001,  # pipeline.fetch.DEFAULT_DEADLINE_SECONDS
        help="Seconds the whole fetch may take; a source not fetched by then fails and keeps its previous files.",
    ),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="Summary format: table, json or csv."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines (the summary is still printed)."),
) -> None:
    """Download the sources of the raw manifest that have a url (unchanged files are not downloaded again).

    A file replaces the previous one only when it arrived whole (and matches the manifest's sha256).
    A redirect to another host is refused unless the source's entry lists it in
    allow_redirect_hosts; a source's files may have 200 MiB together unless its entry sets max_bytes.

    Example: wh40k fetch --only wahapedia-10e-export --mirror /data/wahapedia-mirror
    """
    from pipeline.fetch import fetch_sources, read_fetch_settings

    sources = read_manifest(raw)
    if only:
        known = [s.source_id for s in sources]
        unknown = [source_id for source_id in only if source_id not in known]
        if unknown:
            raise InputError(
                f"--only {', '.join(unknown)}: not a source id of {raw / 'manifest.toml'}; "
                f"known ids: {', '.join(known)}"
            )
        sources = [s for s in sources if s.source_id in only]
    from pipeline.cli.progress import progress_messages

    with progress_messages("fetch", quiet) as progress:
        report = fetch_sources(
            sources, raw, mirror=mirror, settings=read_fetch_settings(raw), delay_seconds=delay,
            deadline_seconds=deadline, progress=progress,
        )
    render_rows(report.rows(), fmt, title=f"Fetched into {raw}")
    counts = ", ".join(f"{n} {status}" for status, n in report.counts().items())
    state = f"; ETag / Last-Modified kept in {report.state_file}" if report.state_file.exists() else ""
    note(f"{len(report.results)} sources: {counts}{state}")
    report.raise_for_failures()
