"""The commands of ``wh40k`` as data, and its top-level help, with no command-line library loaded.

``COMMANDS`` is the one registration of each command (its name, the module that defines it, its
one-line help); ``pipeline.cli`` builds the command line from it, and ``pipeline.wh40k`` answers
``wh40k --help`` from it alone (``help_text``): typer and click take most of the start of a
process, and the list of commands needs neither. ``tests/test_cli_startup.py`` checks that
``help_text`` is the help click renders, character for character.
"""

from __future__ import annotations

import os

#: The line printed for a Ctrl-C that lands before any command runs (exit status 130).
INTERRUPTED = "Interrupted: nothing was changed"

#: The help of the ``wh40k`` group (``wh40k --help``).
APP_HELP = ("The rules database for Warhammer 40,000: sourced datasheets, weapons and rules, "
            "exact attack resolution.\n\nExample: wh40k unit \"Battle Sisters Squad\"")

#: The group's options and their help, as click lists them (``--version`` is ``pipeline.cli``'s,
#: the completion options typer's).
OPTIONS: tuple[tuple[str, str], ...] = (
    ("--version", "Print the version of wh40k-rules-db and exit."),
    ("--install-completion", "Install completion for the current shell."),
    ("--show-completion", "Show completion for the current shell, to copy it or customize the installation."),
    ("--help", "Show this message and exit."),
)

#: Every command: name -> (module that registers it, the start of its help for ``wh40k --help``).
COMMANDS: dict[str, tuple[str, str]] = {
    "attack": ("pipeline.cli.attack", "Exact distributions of hits, wounds, damage and models destroyed (10th or 11th edition)."),
    "build": ("pipeline.cli.build", "Build the database from the raw snapshots (what `make build-db` runs)."),
    "detect-edition": ("pipeline.cli.rules", "Detect the edition of a rules text from its wording, with the evidence."),
    "effects": ("pipeline.cli.effects", "The effects of rules on attacks: coverage of the reader, rules it cannot read."),
    "export": ("pipeline.cli.export", "Write every table of the database into FOLDER, with the data dictionary beside it"),
    "fetch": ("pipeline.cli.fetch", "Download the sources of the raw manifest that have a url"),
    "list": ("pipeline.cli.lists", "Army lists exported from list-building apps."),
    "matchup": ("pipeline.cli.matchup", "Every unit of army list MINE attacking every unit of army list THEIRS"),
    "matchups": ("pipeline.cli.matchups", "Every weapon profile against every target"),
    "rule": ("pipeline.cli.rules", "The wording of a rule that applies, its source, and the precedence chain that picked it."),
    "rule-diff": ("pipeline.cli.rules", "Word-level differences between a rule's governing wordings in two editions."),
    "search": ("pipeline.cli.rules", "Find rule texts, abilities, stratagems, enhancements and datasheets whose wording has the words."),
    "schema": ("pipeline.cli.export", "Print the data dictionary: each table and column with its type and meaning"),
    "serve": ("pipeline.cli.serve", "Serve the database read-only over HTTP"),
    "sources-agree": ("pipeline.cli.compare", "How the sources agree, per edition, pair of sources and field"),
    "sql": ("pipeline.cli.data", "Run a read-only SQL query over the database."),
    "unit": ("pipeline.cli.data", "Show one unit: model profiles, wargear, weapons with abilities, abilities, keywords."),
    "unit-diff": ("pipeline.cli.compare", "What changed in a unit's datasheet between two editions"),
    "units": ("pipeline.cli.data", "List units (datasheets) of one edition, filtered by name and by faction."),
    "weapons": ("pipeline.cli.data", "List the weapon profiles of one edition's datasheets, filtered by name and by ability."),
}


def _columns() -> int:
    """The terminal's width as click reads it (``COLUMNS``, else the terminal of stdout, else 80)."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(1).columns
    except OSError:
        return 80


def _definitions(rows: list[tuple[str, str]], width: int) -> list[str]:
    """click's definition list (``HelpFormatter.write_dl``, indent 2, spacing 2) of ``rows``."""
    import textwrap  # for the help alone: this table of commands is imported by every command

    first_col = min(max(len(name) for name, _ in rows), 30) + 2
    text_width = max(width - first_col - 2, 10)
    lines = []
    for name, text in rows:
        wrapped = textwrap.wrap(text, text_width, replace_whitespace=False)
        if len(name) <= first_col - 2:
            lines.append(f"  {name}{' ' * (first_col - len(name))}{wrapped[0]}")
        else:
            lines.append(f"  {name}")
            lines.append(f"{' ' * (first_col + 2)}{wrapped[0]}")
        lines.extend(f"{' ' * (first_col + 2)}{line}" for line in wrapped[1:])
    return lines


def help_text() -> str | None:
    """``wh40k --help`` as click renders it for the terminal's width, or None for a terminal
    narrower than 80 columns (then the command line renders it itself).

    >>> help_text().splitlines()[0] if _columns() >= 80 else "Usage: wh40k [OPTIONS] COMMAND [ARGS]..."
    'Usage: wh40k [OPTIONS] COMMAND [ARGS]...'
    """
    import textwrap

    if _columns() < 80:
        return None
    width = 78
    lines = ["Usage: wh40k [OPTIONS] COMMAND [ARGS]...", ""]
    for paragraph in APP_HELP.split("\n\n"):
        lines.extend(textwrap.wrap(paragraph, width, initial_indent="  ", subsequent_indent="  ", replace_whitespace=False))
        lines.append("")
    lines.append("Options:")
    lines.extend(_definitions(list(OPTIONS), width))
    lines.extend(["", "Commands:"])
    lines.extend(_definitions([(name, COMMANDS[name][1]) for name in sorted(COMMANDS)], width))
    return "\n".join(lines) + "\n"
