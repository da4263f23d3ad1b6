"""The ``wh40k`` command line: thin commands over the library (one file per command group).

This package's own module loads no command-line library: ``wh40k attack`` runs from
``pipeline.cli.attack_command`` without typer (``pipeline.wh40k``), and ``wh40k --help`` from
``pipeline.commands``. The typer command line is ``pipeline.cli.group`` (``app``, ``run``,
``main``, ``load_command``, ...); those names (``GROUP_NAMES``) are also this package's, loaded
on first use (PEP 562's module ``__getattr__``): ``from pipeline.cli import app, run`` works as
before.
"""

from __future__ import annotations

import os

from pipeline.commands import APP_HELP, COMMANDS, INTERRUPTED  # noqa: F401  (the table of commands)

# The attack engine's small matrix products run fastest single-threaded; several BLAS threads on
# a busy two-core machine can stall them. Set before numpy is first imported; a user's own
# setting wins (a program of its own gets the limit from pipeline.engine.blas).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


#: The names of ``pipeline.cli.group`` that are also this package's (loaded on first use).
GROUP_NAMES = frozenset({
    "app", "run", "main", "register_commands", "load_command", "command_module", "usage_message", "LazyGroup",
    "ClickException", "click", "typer", "_command", "_name",
})


def __getattr__(name: str):
    """A name of the typer command line (``GROUP_NAMES``), which loads ``pipeline.cli.group``; any
    other name is no attribute (a probe of every module, such as ``pickle.whichmodule``'s, loads
    nothing)."""
    if name not in GROUP_NAMES:
        raise AttributeError(f"module 'pipeline.cli' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module("pipeline.cli.group"), name)
