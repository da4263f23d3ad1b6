"""The precedence of sources, kept as data (``pipeline/precedence.toml``).

Read by the manifest (a source's kind must be ranked), the merge (which source's value is kept)
and the rule lookup (which wording governs). A module of its own so that reading it imports
nothing heavy.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

PRECEDENCE_FILE = Path(__file__).resolve().parent / "precedence.toml"


@lru_cache(maxsize=2)
def kind_ranks(path: Path = PRECEDENCE_FILE) -> dict[str, int]:
    """Rank of each source kind (higher is more specific), from the precedence file.

    >>> kind_ranks()["errata"] > kind_ranks()["codex"] > kind_ranks()["core-rules"]
    True
    """
    return dict(tomllib.loads(path.read_text(encoding="utf-8"))["kind_rank"])
