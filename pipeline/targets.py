"""Where a database lives: a DuckDB file (the default), a SQLite file or a PostgreSQL database.

``--db`` takes a file path (a DuckDB database) or a SQLAlchemy URL: ``sqlite:///path.sqlite``
(a relative path; ``sqlite:////abs/path.sqlite`` for an absolute one), ``postgresql://user@host/db``
(driven by psycopg 3: ``postgresql+psycopg://`` is the same), or ``duckdb:///path.duckdb``.
``parse_target`` reads it; the build (``pipeline.load``) writes each kind and ``open_database``
(``pipeline.database``) reads each kind.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pipeline.errors import InputError
from pipeline.frozen_record import FrozenRecord

Backend = Literal["duckdb", "sqlite", "postgresql"]

#: ``scheme://`` at the start of a ``--db`` value: a URL, not a file path.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

#: The URL schemes of each backend (SQLAlchemy's dialect names, with their drivers).
_SCHEMES: dict[str, Backend] = {
    "duckdb": "duckdb", "sqlite": "sqlite", "sqlite+pysqlite": "sqlite",
    "postgresql": "postgresql", "postgresql+psycopg": "postgresql", "postgres": "postgresql",
}

#: What ``--db`` takes, for error messages.
ACCEPTED = "a DuckDB file path, sqlite:///FILE.sqlite or postgresql://USER@HOST/DBNAME"


class Target(FrozenRecord):
    """A database to build or read.

    ``backend``: ``duckdb``, ``sqlite`` or ``postgresql``; ``path``: the file of a DuckDB or SQLite
    database (None for PostgreSQL); ``url``: the SQLAlchemy URL of a PostgreSQL database, with
    the psycopg driver (None for a file).
    """

    backend: Backend
    path: Path | None = None
    url: str | None = None

    def __str__(self) -> str:
        """The target as a message names it: the file path, or the URL without its password."""
        if self.url is None:
            return str(self.path)
        import sqlalchemy as sa

        return sa.engine.make_url(self.url).render_as_string(hide_password=True)

    @property
    def is_file(self) -> bool:
        """Whether the database is a file (DuckDB or SQLite)."""
        return self.path is not None


def parse_target(db: str | Path | Target) -> Target:
    """The ``Target`` of a ``--db`` value: a path is a DuckDB file; a URL names its backend.

    Raises ``InputError`` for a URL of another database, another driver, a SQLite URL without a
    file (``sqlite://``: in memory) or one that SQLAlchemy cannot read.

    >>> parse_target("db/wh40k.duckdb")
    Target(backend='duckdb', path=PosixPath('db/wh40k.duckdb'), url=None)
    >>> parse_target("sqlite:///db/wh40k.sqlite")
    Target(backend='sqlite', path=PosixPath('db/wh40k.sqlite'), url=None)
    >>> parse_target("postgresql://wh40k@localhost:5432/rules").url
    'postgresql+psycopg://wh40k@localhost:5432/rules'
    >>> parse_target("mysql://x@y/z")
    Traceback (most recent call last):
    ...
    pipeline.errors.InputError: --db mysql://x@y/z: wh40k builds and reads DuckDB, SQLite and PostgreSQL; give a DuckDB file path, sqlite:///FILE.sqlite or postgresql://USER@HOST/DBNAME
    """
    if isinstance(db, Target):
        return db
    if isinstance(db, Path) or not _URL.match(db):
        return Target("duckdb", path=Path(db))
    import sqlalchemy as sa

    try:
        url = sa.engine.make_url(db)
    except sa.exc.ArgumentError as exc:
        raise InputError(f"--db {db}: not a URL SQLAlchemy reads ({exc}); give {ACCEPTED}") from None
    shown = url.render_as_string(hide_password=True)
    backend = _SCHEMES.get(url.drivername)
    if backend is None:
        if url.get_backend_name() in ("postgresql", "sqlite"):
            raise InputError(f"--db {shown}: the driver {url.drivername.split('+', 1)[-1]} is not the one wh40k "
                             f"uses; drop it ({url.get_backend_name()}://...)")
        raise InputError(f"--db {shown}: wh40k builds and reads DuckDB, SQLite and PostgreSQL; give {ACCEPTED}")
    if backend == "postgresql":
        return Target("postgresql", url=url.set(drivername="postgresql+psycopg").render_as_string(hide_password=False))
    if not url.database or url.database == ":memory:":
        raise InputError(f"--db {shown}: no file named (an in-memory database would be lost at once); "
                         f"give {url.drivername}:///FILE")
    return Target(backend, path=Path(url.database))
