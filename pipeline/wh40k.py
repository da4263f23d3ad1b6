"""The ``wh40k`` program: loads the command line with Ctrl-C held back, then runs it.

A Ctrl-C while the modules load (typer, rich, pydantic, the commands: most of a second) would
land inside an import, where a C extension can even turn it into an ``ImportError``. It is held
until the imports are done, then ends the program with the one line ``Interrupted: nothing was
changed`` (exit status 130) before any command starts. Once the command runs, Ctrl-C is Python's
``KeyboardInterrupt`` again (``wh40k build`` says whether its database was changed).
"""

from __future__ import annotations

import gc
import importlib
import signal
import sys
from typing import Callable, NoReturn, TypeVar

T = TypeVar("T")

#: Set when a plain attack has run to its end (``_attack``), or by a command that asked for it
#: (``end_without_teardown``): ``console`` may then end the process without tearing the
#: interpreter down.
_END_WITHOUT_TEARDOWN = False
#: Set by ``console``: the process ends when the command line does.
_IN_CONSOLE = False
#: What a command asked to be kept to the end of the process (``end_without_teardown``).
_KEPT: list[object] = []


def end_without_teardown() -> list[object]:
    """Ask ``console`` to end the process without taking the interpreter down object by object
    (``_exit``) once the command has ended, and pause the cyclic garbage collector to the end;
    returns a list whose objects are left to the end of the process: a command puts there what
    it would otherwise free just before the end (the build's records: some million objects,
    freed one by one, or traversed by a last collection, for nothing). Outside ``console`` (a
    program or a test running the command line in a process that goes on), nothing changes:
    the list is a new one, freed with its objects when the command drops it."""
    global _END_WITHOUT_TEARDOWN
    if not _IN_CONSOLE:
        return []
    _END_WITHOUT_TEARDOWN = True
    gc.disable()
    return _KEPT


def console() -> NoReturn:
    """Entry point of the ``wh40k`` console script and of ``python -m pipeline.cli``: ``main``,
    which ends with ``SystemExit``; after a plain attack or a command that asked for it
    (``end_without_teardown``: the build), the process then ends without taking the interpreter
    down (``_exit``). ``main`` itself raises ``SystemExit`` as before, for a
    program or a test that runs the command line in its own process."""
    global _IN_CONSOLE
    _IN_CONSOLE = True
    try:
        main()
    except SystemExit as exc:
        if _END_WITHOUT_TEARDOWN and isinstance(exc.code, int):
            _exit(exc.code)
        raise
    sys.exit(0)


def main() -> None:
    """Entry point of the ``wh40k`` console script. ``wh40k --help`` is answered from the table
    of commands alone (``pipeline.commands.help_text``: the same text as click's), and ``wh40k
    attack`` on a plain command line from its table of parameters (``pipeline.cli.attack_command``),
    without loading the command line (typer)."""
    if sys.argv[1:] == ["--help"]:
        from pipeline.commands import help_text

        text = help_text()
        if text is not None:
            sys.stdout.write(text)
            sys.stdout.flush()
            sys.exit(0)
    if sys.argv[1:2] == ["attack"]:
        _attack(sys.argv[2:])
    if sys.argv[1:2] == ["build"] and "--help" not in sys.argv[2:]:
        # The build's second process (``pipeline.duckdb_file``) forked first: it imports DuckDB
        # and Arrow while this process loads the command line.
        from pipeline.duckdb_file import ForkedDuckdbFile

        ForkedDuckdbFile.start_early()

    def load():
        from pipeline import cli

        module = cli.command_module(sys.argv[1:])
        if module is not None:  # only the command that runs is loaded
            importlib.import_module(module)
        return cli

    _held_ctrl_c(load).main()


def _held_ctrl_c(load: Callable[[], T]) -> T:
    """``load()`` (imports) with Ctrl-C held back: pressed meanwhile, it ends the program once
    ``load`` is done, with the one line ``INTERRUPTED`` and exit status 130."""
    pressed: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: pressed.append(signum))
    try:
        loaded = load()
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        from pipeline.commands import INTERRUPTED

        print(INTERRUPTED, file=sys.stderr)
        sys.exit(130)
    return loaded


def _attack(argv: list[str]) -> None:
    """``wh40k attack`` on a plain command line, without typer (``attack_command.run_plain``):
    exits with its status; returns when the command line must parse ``argv`` itself (its help,
    a usage error). Ctrl-C is held while the command's modules load, as in ``main``.

    The cyclic garbage collector is off for the command, as for ``wh40k build``: the process
    loads some 30,000 objects (numpy, DuckDB, the engine), makes almost no cyclic garbage (a few
    hundred objects for an attack of seconds) and ends; the collections it would run, about 80
    over objects that all stay alive, cost 10-40 ms of CPU (2-core machine, under load). Reference counting
    frees everything else as before. The end of a plain attack is marked for ``console``."""
    global _END_WITHOUT_TEARDOWN

    def load():
        from pipeline.cli.attack_command import run_plain

        return run_plain

    gc.disable()
    run_plain = _held_ctrl_c(load)
    try:
        status = run_plain(argv)
    finally:
        gc.freeze()  # as pipeline.cli.group.main: no last collections over every object loaded
    if status is not None:
        _END_WITHOUT_TEARDOWN = True
        sys.exit(status)
    gc.enable()  # the command line parses argv itself (typer), the collector on as for any command


def _exit(status: int) -> NoReturn:
    """End the process with ``status`` as ``sys.exit`` would (``console``, after a plain attack),
    but without taking the interpreter down object by object: the standard streams flushed and
    the exit functions run (``atexit``, and with it ``weakref.finalize``'s), then ``os._exit``.
    Freeing every module and object of a process that ends (numpy, the engine: some 240
    modules) cost 12-20 ms of CPU of each attack. With another thread still running, or a
    stream that cannot be flushed, ``sys.exit`` ends it as usual (its threads joined, its error
    reported)."""
    import atexit
    import os
    import threading

    if threading.active_count() > 1:
        sys.exit(status)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(status)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()  # what the exit functions printed
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(status)
