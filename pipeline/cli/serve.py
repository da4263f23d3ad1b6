"""``wh40k serve``: the read-only HTTP JSON API and the web page (``pipeline.service``)."""

from __future__ import annotations

import socket

import typer

from pipeline import query
from pipeline.cli import app
from pipeline.cli.output import note
from pipeline.errors import InputError
from pipeline.service import DEFAULT_CACHE_SIZE


def _check_port(host: str, port: int) -> None:
    """Raise ``InputError`` when nothing can listen on ``host``:``port`` (in use, not an
    address of this machine), before the server starts."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise InputError(f"--host {host!r}: not an address of this machine ({exc.strerror}); "
                         "use 127.0.0.1 or the name of one of its interfaces") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise InputError(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror}); "
                             "choose another --port") from None


@app.command("serve")
def serve_command(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (127.0.0.1: this machine only)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    db: str = typer.Option(str(query.DEFAULT_DB), "--db", help=(
        "Database: a DuckDB file, sqlite:///FILE.sqlite or postgresql://USER@HOST/DBNAME.")),
    cache: int = typer.Option(DEFAULT_CACHE_SIZE, "--cache", min=0, max=1_000_000, help=(
        "Answers kept in memory (the database cannot change under the server; a replaced file empties "
        "the cache); 0 keeps none.")),
    copy: bool = typer.Option(True, "--copy/--no-copy", help=(
        "Serve a DuckDB file from a SQLite copy made at start (a unit or an attack reads some 10 to 60 "
        "small queries, each ten times faster there); --no-copy reads the DuckDB file itself.")),
) -> None:
    """Serve the database read-only over HTTP: a JSON API (schema at /openapi.json, docs at
    /docs) and a web page (/) to look units and rules up and resolve attacks.

    The endpoints: GET /api/units, /api/unit, /api/weapons, /api/rule, /api/rule-diff,
    /api/rule-changes, /api/search, /api/matchups, /api/info and POST /api/attack, /api/list,
    /api/matchup; they answer as `units`, `unit`, `weapons`, `rule`, `rule-diff`, `search`,
    `attack`, `list show` and `matchup` do with --format json (/api/matchups reads the table
    `wh40k matchups` fills).
    --db takes a DuckDB file (served from a SQLite copy made at start), sqlite:///FILE or
    postgresql://USER@HOST/DB. Ctrl-C stops the server.

    Example: wh40k serve --port 8040   (then open http://127.0.0.1:8040/)
    """
    import uvicorn

    from pipeline.service.app import create_app

    application = create_app(db, cache_size=cache, copy=copy)  # DatabaseError for a missing or foreign file, before listening
    _check_port(host, port)
    note(f"serving {application.state.database.target} at http://{host}:{port}/ (API: /api/..., schema: /openapi.json, docs: /docs); "
         "Ctrl-C stops")
    uvicorn.run(application, host=host, port=port, log_level="warning", access_log=False)
