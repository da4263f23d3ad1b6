"""The project's TOML data files read through a cache, as Python reads modules through bytecode.

Parsing a TOML file costs the import of ``tomllib`` (some 4 ms) and the parse itself (5 ms for
``engine/edition_rules.toml``), in every process that needs the data: ``wh40k attack`` reads
the edition rules and the spelling table. ``read_toml(path)`` parses the file once and keeps
the result beside it, in the ``__pycache__`` folder where Python keeps the bytecode of the
modules (``NAME.toml.<cache tag>.marshal``, or under ``sys.pycache_prefix`` when that is set),
as ``marshal`` data with the file's size and modification time (nanoseconds); later reads load
that while the file keeps its size and modification time. The TOML file is the one source: the
cache is written from it, never committed (``.gitignore``'s ``__pycache__/``), and a file
changed since is parsed again. Like bytecode, the cache is not written when Python writes no
bytecode (``PYTHONDONTWRITEBYTECODE``, ``-B``), nor when the folder cannot be written (no
message), and data marshal cannot keep (a TOML date) is not cached.
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path
from typing import Any

#: Part of each cache file: a new one makes every cache stale.
CACHE_VERSION = 1


def cache_path(path: Path) -> Path:
    """Where the parsed ``path`` is kept: ``__pycache__/NAME.<cache tag>.marshal`` beside it,
    or the same folder under ``sys.pycache_prefix`` (as ``importlib.util.cache_from_source``).

    >>> cache_path(Path("/x/pipeline/spellings.toml")).as_posix().endswith("/x/pipeline/__pycache__/spellings.toml."
    ...                                                               f"{sys.implementation.cache_tag}.marshal")
    True
    """
    name = f"{path.name}.{sys.implementation.cache_tag}.marshal"
    folder = os.path.abspath(path.parent)
    if sys.pycache_prefix:
        return Path(sys.pycache_prefix, os.path.splitdrive(folder)[1].lstrip(os.sep + (os.altsep or "")), name)
    return Path(folder, "__pycache__", name)


def read_toml(path: Path) -> dict[str, Any]:
    """The data of the TOML file ``path`` (UTF-8), as ``tomllib.loads`` gives it: from the
    cache when it was written from the file as it is now, else parsed (and the cache written).

    Raises ``OSError`` when ``path`` cannot be read, ``tomllib.TOMLDecodeError`` for a file that
    is no TOML."""
    st = os.stat(path)
    key = (CACHE_VERSION, st.st_size, st.st_mtime_ns)
    cache = cache_path(path)
    try:
        found = marshal.loads(cache.read_bytes())
        if isinstance(found, tuple) and len(found) == 2 and found[0] == key and isinstance(found[1], dict):
            return found[1]
    except (OSError, ValueError, EOFError, TypeError):
        pass  # no cache, or not one this code writes: parse the file
    import tomllib

    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if not sys.dont_write_bytecode:
        _write(cache, key, data)
    return data


def _write(cache: Path, key: tuple, data: dict[str, Any]) -> None:
    """Keep ``data`` in ``cache`` (a temporary file renamed over it); nothing when marshal
    cannot keep the data or the folder cannot be written."""
    try:
        blob = marshal.dumps((key, data))
    except ValueError:  # a date or a time: parsed in every process
        return
    tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(blob)
        os.replace(tmp, cache)
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
