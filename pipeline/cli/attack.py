"""``wh40k attack`` in the typer command line: ``attack_command`` registered with the signature
its table ``ATTACK_PARAMS`` gives (``pipeline.cli.options.command_signature``). The command
itself, its parameters and the plain parse that runs it without typer are in
``pipeline.cli.attack_command``."""

from __future__ import annotations

from pipeline.cli import app
from pipeline.cli.attack_command import (  # noqa: F401  (outcome_as_dict: the JSON of the service too)
    ATTACK_PARAMS, attack_command, choice_lines, damage_reductions, outcome_as_dict,
)
from pipeline.cli.options import command_signature


def attack(**values) -> None:
    attack_command(**values)


# typer reads a command's parameters from its signature and annotations (``inspect.signature``
# follows ``__signature__``): both come from the one table
attack.__doc__ = attack_command.__doc__
attack.__signature__ = command_signature(ATTACK_PARAMS)
attack.__annotations__ = {p.name: p.annotation for p in ATTACK_PARAMS} | {"return": None}
app.command("attack")(attack)
