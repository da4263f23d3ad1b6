"""The ``wh40k`` command line: thin commands over the library (one file per command group).

Expected errors (``Wh40kError``) print ``Error: <what, where, how to fix>`` on stderr and exit 1;
a mistyped option or value prints the usage and ``Error: ...`` and exits 2; anything else is a
bug and keeps its traceback. Error lines are printed as one line, never wrapped to the terminal.
Ctrl-C while the command line loads prints ``Interrupted: nothing was changed`` and exits 130
(``pipeline.wh40k``); ``wh40k build`` says whether its database was changed.
"""

from __future__ import annotations

import functools
import gc
import os
import sys

#: The line printed for a Ctrl-C that lands before any command runs (exit status 130).
INTERRUPTED = "Interrupted: nothing was changed"

# The attack engine's small matrix products run fastest single-threaded; several BLAS threads on
# a busy two-core machine can stall them. Set before numpy is first imported; a user's own
# setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

try:  # a Ctrl-C while the command line loads (typer, rich) has changed nothing
    import typer

    from pipeline.errors import Wh40kError

    try:  # recent typer carries its own copy of click
        from typer import _click as click
        from typer._click.exceptions import ClickException
    except ImportError:  # pragma: no cover - older typer uses click itself
        import click
        from click.exceptions import ClickException
except KeyboardInterrupt:
    print(INTERRUPTED, file=sys.stderr)
    sys.exit(130)

app = typer.Typer(
    name="wh40k",
    help="The rules database for Warhammer 40,000: sourced datasheets, weapons and rules, "
    "exact attack resolution.\n\nExample: wh40k unit \"Battle Sisters Squad\"",
    no_args_is_help=True,
    add_completion=True,  # --install-completion, --show-completion (typer's)
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


def _show_version(value: bool) -> None:
    if value:
        from pipeline.load import project_version

        print(f"wh40k-rules-db {project_version()}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(False, "--version", callback=_show_version, is_eager=True,
                                 help="Print the version of wh40k-rules-db and exit."),
) -> None:
    """The rules database for Warhammer 40,000: sourced datasheets, weapons and rules, exact attack resolution.

    Example: wh40k unit "Battle Sisters Squad"
    """


def register_commands() -> None:
    """Import the command modules (each registers its commands with ``app`` on import)."""
    from pipeline.cli import attack, build, compare, data, fetch, rules  # noqa: F401
    from pipeline.cli import lists  # noqa: F401
    from pipeline.cli import effects  # noqa: F401
    from pipeline.cli import serve  # noqa: F401
    from pipeline.cli import matchups  # noqa: F401
    from pipeline.cli import export  # noqa: F401


@functools.lru_cache(maxsize=1)
def _command() -> click.Command:
    """The click command of ``app`` with every command registered (built once per process:
    typer takes some 0.1 s to build it from the functions' signatures)."""
    register_commands()
    return typer.main.get_command(app)


def run(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); return the exit status.

    Expected errors, and what DuckDB raises for a damaged database file or a refusal of the
    read-only sandbox (``pipeline.database.database_failure``), print one ``Error: ...`` line
    on stderr and give 1; a mistyped option or value prints the usage and ``Error: ...`` and
    gives 2; a Ctrl-C while the commands load prints ``INTERRUPTED`` and gives 130.
    """
    try:
        # not standalone: typer would draw a usage error in a panel wrapped at the terminal's width
        status = _command().main(args=argv, prog_name="wh40k", standalone_mode=False)
    except KeyboardInterrupt:  # while the commands load
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except Wh40kError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except ClickException as exc:
        # a mistyped option or value: usage, then `Error: ...` on one line (exit status 2);
        # with no arguments at all the help has already been printed
        if type(exc).__name__ != "NoArgsIsHelpError":
            exc.show()
        return exc.exit_code
    except typer.Abort:
        print("Aborted!", file=sys.stderr)
        return 1
    except Exception as exc:
        failure = _database_failure(exc)
        if failure is None:
            raise
        print(f"Error: {failure}", file=sys.stderr)
        return 1
    return status if isinstance(status, int) else 0


def _database_failure(exc: Exception) -> Wh40kError | None:
    """The one-line error for a DuckDB error of a damaged database or the sandbox (None for any
    other exception: a bug, which keeps its traceback)."""
    if "duckdb" not in sys.modules:  # nothing opened a database
        return None
    from pipeline.database import database_failure

    return database_failure(exc)


def main() -> None:
    """Run the command line (``pipeline.wh40k.main``, the ``wh40k`` console script, loads it first)."""
    try:
        status = run()
    finally:
        # The process ends here: spare the interpreter's last collections over every object of
        # the imported libraries (measured: 0.1 s after a build, 0.2 s after a full build).
        gc.freeze()
    sys.exit(status)
