"""A throwaway PostgreSQL server for the tests: initdb and pg_ctl in a temporary folder.

``postgres_server()`` starts one (trust authentication, a free port, its unix socket in the
temporary folder, no TCP listener) and yields its base URL; leaving the context stops it and
removes the folder. The server binaries are looked up as ``WH40K_PG_BIN``, then
``/usr/lib/postgresql/<version>/bin`` (the newest), then ``pg_ctl`` on the PATH; without them the
tests that need a server skip, saying so. Run as root (as CI does), the server runs as the
``postgres`` user, which initdb requires.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def server_binaries() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl`` (None when PostgreSQL is not installed)."""
    if os.environ.get("WH40K_PG_BIN"):
        return Path(os.environ["WH40K_PG_BIN"])
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def postgres_server(superuser: str = "wh40k") -> Iterator[str]:
    """A running server; yields ``postgresql://<superuser>@/postgres?host=<socket dir>&port=<port>``."""
    binaries = server_binaries()
    assert binaries is not None, "no PostgreSQL server binaries"
    as_user: dict = {}
    folder = Path(tempfile.mkdtemp(prefix="wh40k-pg-"))
    if os.geteuid() == 0:  # initdb refuses root
        as_user = {"user": "postgres"}
        os.chmod(folder, 0o755)
        shutil.chown(folder, "postgres", "postgres")
    data, port = folder / "data", _free_port()
    run = lambda *args: subprocess.run([str(a) for a in args], check=True, capture_output=True, **as_user)  # noqa: E731
    try:
        # C collation: text sorts by code point, as in DuckDB (see the README on collations)
        run(binaries / "initdb", "-D", data, "-U", superuser, "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync")
        run(binaries / "pg_ctl", "-D", data, "-w", "-l", folder / "server.log", "-o",
            f"-k {folder} -p {port} -c listen_addresses='' -c fsync=off", "start")
        try:
            yield f"postgresql://{superuser}@/postgres?host={folder}&port={port}"
        finally:
            run(binaries / "pg_ctl", "-D", data, "-w", "-m", "fast", "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
