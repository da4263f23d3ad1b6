"""The ``wh40k`` command line (typer): thin commands over the library (one file per command group).

Commands are registered in ``COMMANDS`` (``pipeline/commands.py``, a module with no command-line
library, so that ``wh40k --help`` is answered from it alone), one line each: the command's name, the module that
defines it (with ``@app.command(NAME)`` or ``app.add_typer(..., name=NAME)``) and its one-line
help. The command line imports only the module of the command it runs (``LazyGroup``), so
``wh40k attack`` never loads the build's parsers and ``wh40k --help`` loads no command at all;
a test checks that the table matches the commands the modules define.

Expected errors (``Wh40kError``) print ``Error: <what, where, how to fix>`` on stderr and exit 1;
a mistyped option or value prints the usage and ``Error: ...`` and exits 2; anything else is a
bug and keeps its traceback. Error lines are printed as one line, never wrapped to the terminal.
Ctrl-C while the command line loads prints ``Interrupted: nothing was changed`` and exits 130
(``pipeline.wh40k``); ``wh40k build`` says whether its database was changed.
"""

from __future__ import annotations

import functools
import gc
import importlib
import re
import sys

from pipeline.commands import APP_HELP, COMMANDS, INTERRUPTED  # noqa: F401  (the table of commands)

try:  # a Ctrl-C while the command line loads (typer, rich) has changed nothing
    import typer

    from pipeline.cli.failures import failure_status, undecodable_argument

    from typer.core import TyperGroup

    try:  # recent typer carries its own copy of click
        from typer import _click as click
        from typer._click.exceptions import ClickException
    except ImportError:  # pragma: no cover - older typer uses click itself
        import click
        from click.exceptions import ClickException
except KeyboardInterrupt:
    print(INTERRUPTED, file=sys.stderr)
    sys.exit(130)


class LazyGroup(TyperGroup):
    """The ``wh40k`` group: a command's module is imported when the command is asked for
    (``get_command``); ``wh40k --help`` lists ``COMMANDS`` without importing any."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in COMMANDS:
            self.commands[name] = load_command(name)
        return self.commands.get(name)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's plain layout: typer's rich one would build every command for its table
        super(TyperGroup, self).format_help(ctx, formatter)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1] if name in COMMANDS else self.commands[name].get_short_help_str(80))
                for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer.Typer(
    name="wh40k",
    cls=LazyGroup,
    help=APP_HELP,
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
    """Import every command module of ``COMMANDS`` (each registers its commands with ``app``)."""
    for module, _ in COMMANDS.values():
        importlib.import_module(module)


def command_module(argv: list[str]) -> str | None:
    """The module of the command ``argv`` runs (its first argument that is not an option), if any.

    >>> command_module(["attack", "--target", "MEQ"]), command_module(["--help"]), command_module(["nope"])
    ('pipeline.cli.attack', None, None)
    """
    name = next((a for a in argv if not a.startswith("-")), None)
    return COMMANDS[name][0] if name in COMMANDS else None


def load_command(name: str) -> click.Command:
    """The click command ``name`` of ``COMMANDS``, built by typer from its module's registration
    alone (importing the module registers it with ``app``). Raises ``LookupError`` when the
    module registers no such command (a wrong line in ``COMMANDS``: a bug)."""
    importlib.import_module(COMMANDS[name][0])
    one = typer.Typer(rich_markup_mode=app.rich_markup_mode, pretty_exceptions_enable=False)
    one.registered_commands = [c for c in app.registered_commands if _name(c) == name]
    one.registered_groups = [g for g in app.registered_groups if g.name == name]
    if not one.registered_commands and not one.registered_groups:
        raise LookupError(f"{COMMANDS[name][0]} registers no command {name!r} (see COMMANDS)")
    return typer.main.get_group(one).commands[name]


def _name(info) -> str:
    """The name of a registered typer command (its function's name with dashes when not given)."""
    return info.name or info.callback.__name__.replace("_", "-")


@functools.lru_cache(maxsize=1)
def _command() -> click.Command:
    """The click group of ``app`` (``LazyGroup``: each command is built when it is asked for),
    with typer's completion options when ``app`` has them (as ``typer.main.get_command``)."""
    group = typer.main.get_group(app)
    if app._add_completion:
        group.params.extend(typer.main.get_install_completion_arguments())
    return group


def run(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); return the exit status.

    Expected errors, and what DuckDB raises for a damaged database file or a refusal of the
    read-only sandbox (``pipeline.database.database_failure``), print one ``Error: ...`` line
    on stderr and give 1; a mistyped option or value prints the usage and ``Error: ...`` and
    gives 2; a Ctrl-C while the commands load prints ``INTERRUPTED`` and gives 130.
    """
    if argv is None:
        argv = sys.argv[1:]
    bad = undecodable_argument(argv)
    if bad is not None:
        print(f"Error: argument {bad} is not valid UTF-8 text; give names and SQL as UTF-8 (check the terminal's "
              "encoding, e.g. LANG=C.UTF-8)", file=sys.stderr)
        return 1
    try:
        # not standalone: typer would draw a usage error in a panel wrapped at the terminal's width
        status = _command().main(args=argv, prog_name="wh40k", standalone_mode=False)
    except KeyboardInterrupt:  # while the commands load
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except ClickException as exc:
        # a mistyped option or value: one `Error: ...` line (exit status 2);
        # with no arguments, the help: typer's rich layout (a command group) has printed it,
        # click's plain one (``LazyGroup``) is the message
        if type(exc).__name__ != "NoArgsIsHelpError":
            print(f"Error: {usage_message(exc)}", file=sys.stderr)
        elif exc.format_message().strip():
            print(exc.format_message())
        return exc.exit_code
    except typer.Abort:
        print("Aborted!", file=sys.stderr)
        return 1
    except Exception as exc:  # an expected error (Wh40kError, a damaged database) is one line
        failed = failure_status(exc)
        if failed is None:
            raise
        return failed
    return status if isinstance(status, int) else 0


def usage_message(exc: ClickException) -> str:
    """A usage error of click as one line: the option, what is wrong with its value (without
    pydantic's wording), and where the help is.

    >>> NoSuchOption = click.exceptions.NoSuchOption
    >>> print(usage_message(NoSuchOption("-- only comment")))
    '-- only comment' is not an option; for text that starts with '-', give the options first, then -- and the text (wh40k sql --db FILE -- "-- ...")
    """
    exceptions = click.exceptions
    BadParameter, MissingParameter, NoSuchOption = (
        exceptions.BadParameter, exceptions.MissingParameter, exceptions.NoSuchOption)

    if isinstance(exc, NoSuchOption) and (" " in exc.option_name or exc.option_name == "--"):
        return (f"{exc.option_name!r} is not an option; for text that starts with '-', give the options first, "
                "then -- and the text (wh40k sql --db FILE -- \"-- ...\")")
    message = exc.format_message().rstrip(".")
    if isinstance(exc, BadParameter) and not isinstance(exc, MissingParameter) and exc.param is not None:
        name = " / ".join(getattr(exc.param, "opts", None) or [exc.param.human_readable_name])
        text = exc.message.removeprefix("Value error, ").rstrip(".")
        text = text.replace("Input should be a valid integer, unable to parse string as an integer", "not a whole number")
        text = text.replace("Input should be a valid number, unable to parse string as a number", "not a number")
        # a number under the option's minimum, or nan (which is no number of the range either)
        text = re.sub(r"^Input should be greater than or equal to (\S+)$", r"give a number of \1 or more", text)
        message = f"{name}: {text}"
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and ctx.command_path:
        message += f"; see `{ctx.command_path} --help`"
    return message


def main() -> None:
    """Run the command line (``pipeline.wh40k.main``, the ``wh40k`` console script, loads it first)."""
    try:
        status = run()
    finally:
        # The process ends here: spare the interpreter's last collections over every object of
        # the imported libraries (measured: 0.1 s after a build, 0.2 s after a full build).
        gc.freeze()
    sys.exit(status)
