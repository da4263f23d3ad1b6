"""Temporary files of the build and of fetch: names that say whose they are, and the removal of
those an earlier run left behind when it was killed (SIGKILL, a power cut: no ``finally`` ran).

A temporary file sits beside the file it will replace, named
``.<target name>.<pid>.<8 hex digits>.<kind>.tmp`` (``kind``: ``build`` or ``fetch``; DuckDB
may add ``.wal`` to a database's). A run removes, in each folder it writes into, the temporary
files of its kind whose process no longer runs, or whose pid is now another process's (the file
is older than that process).
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

#: A temporary file of this project: its target's name, the pid that made it, the kind. The
#: build's names before the kind was added (``.<name>.<pid>.<hex>.tmp``) count as ``build``.
_TEMP_NAME = re.compile(
    r"^\.(?P<target>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}(?:\.(?P<kind>build|fetch))?\.tmp(?:\.wal)?$"
)

#: Slack between a file's modification time and the start time of a process (clock ticks and
#: whole-second boot time): a file this close to the start of its pid's process is taken as that
#: process's own.
_START_SLACK_SECONDS = 2.0


def temp_path(target: Path, kind: str) -> Path:
    """A new temporary path beside ``target`` for this process (not created).

    >>> name = temp_path(Path("db/wh40k.duckdb"), "build").name
    >>> parse_temp_name(name) == ("wh40k.duckdb", os.getpid(), "build")
    True
    """
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.{kind}.tmp")


def parse_temp_name(name: str) -> tuple[str, int, str] | None:
    """(target name, pid, kind) of a temporary file of this project, or None for another file.

    >>> parse_temp_name(".Factions.csv.4242.0a1b2c3d.fetch.tmp")
    ('Factions.csv', 4242, 'fetch')
    >>> parse_temp_name(".wh40k.duckdb.77.deadbeef.tmp.wal")
    ('wh40k.duckdb', 77, 'build')
    >>> parse_temp_name("notes.tmp") is None
    True
    """
    found = _TEMP_NAME.match(name)
    if found is None:
        return None
    return found["target"], int(found["pid"]), found["kind"] or "build"


def remove_stale(folder: Path, kind: str, target_name: str | None = None) -> list[Path]:
    """Remove the temporary files of ``kind`` in ``folder`` that no running process owns; return them.

    ``target_name``: only those of that target (``wh40k.duckdb``). A file is stale when the
    process of its pid no longer runs, or runs but started after the file was last written (the
    pid was reused). Files that cannot be removed are left (and not returned). Never raises for a
    missing folder.
    """
    removed: list[Path] = []
    try:
        children = list(folder.iterdir())
    except OSError:
        return removed
    for path in children:
        parsed = parse_temp_name(path.name)
        if parsed is None or parsed[2] != kind or (target_name is not None and parsed[0] != target_name):
            continue
        try:
            modified = path.lstat().st_mtime
        except OSError:
            continue
        if _owned_by_running_process(parsed[1], modified):
            continue
        try:
            path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed


def _owned_by_running_process(pid: int, modified: float) -> bool:
    if not _is_running(pid):
        return False
    started = _process_start(pid)
    return started is None or modified >= started - _START_SLACK_SECONDS


def _is_running(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _process_start(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), from Linux's /proc; None elsewhere."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = next(line for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime "))
        ticks = int(stat[stat.rindex(")") + 2:].split()[19])  # field 22, starttime, in clock ticks
        return int(boot.split()[1]) + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None
