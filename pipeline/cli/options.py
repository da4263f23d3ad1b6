"""A command's parameters declared once, as data: typer builds the command from them, and a small
parser reads a plain command line from them without loading typer.

``Param`` is one argument or option: its name, the Python type typer reads (``bool``, ``int``,
``float``, ``str``, ``Path``, an ``Enum`` of choices, ``Optional[...]``, ``List[...]`` for a
repeatable option, ``Tuple[...]`` for an option of several values), its default, flags and help,
and a check of the value. ``command_signature`` turns a table of them into the signature typer
reads (``inspect.Signature``, the protocol ``inspect.signature`` follows for any callable), so the
command's help, usage errors and messages are typer's own. ``parse`` reads the same table for
``wh40k attack`` before typer loads (typer, click and pydantic take about 0.1 s to import): it
accepts the plain forms alone (``--flag``, ``--option VALUE``, ``--option=VALUE``, ``-o VALUE``,
one argument) and gives the values typer would give; for anything else (``--help``, an unknown
option, a value typer would refuse, ``--``) it gives None and the command line parses the
arguments itself, with its messages. ``tests/test_cli_startup.py`` checks that both agree.
"""

from __future__ import annotations

import enum
import inspect
import re
import typing
from pathlib import Path
from typing import Any, Callable, Sequence

from pipeline.frozen_record import FrozenRecord

#: The whole numbers and decimals ``parse`` reads itself (anything else is left to typer).
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]{0,8})")
_DECIMAL = re.compile(r"(?:0|[1-9][0-9]{0,8})(?:\.[0-9]{1,9})?")


class Param(FrozenRecord):
    """One parameter of a command. ``flags`` empty: the command's argument (at most one);
    ``check(value)`` gives the message of a value that is not allowed (a usage error, exit 2) or
    None; ``minimum`` is typer's ``min`` of a number."""

    name: str
    annotation: Any
    default: Any
    flags: tuple[str, ...] = ()
    help: str = ""
    check: Callable[[Any], str | None] | None = None
    minimum: float | None = None


def _unwrap(annotation: Any) -> tuple[Any, bool, tuple[Any, ...]]:
    """(element type, repeatable, types of a several-value option) of an annotation.

    >>> _unwrap(typing.Optional[int]), _unwrap(typing.List[str])
    ((<class 'int'>, False, ()), (<class 'str'>, True, ()))
    >>> _unwrap(typing.Optional[typing.Tuple[Path, str]])
    (None, False, (<class 'pathlib.Path'>, <class 'str'>))
    """
    if typing.get_origin(annotation) is typing.Union:
        (annotation,) = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin is list:
        return typing.get_args(annotation)[0], True, ()
    if origin is tuple:
        return None, False, typing.get_args(annotation)
    return annotation, False, ()


_NOT_READ = object()


def _value(kind: Any, text: str, param: Param) -> Any:
    """``text`` read as typer reads it for a value of type ``kind``, or ``_NOT_READ`` when
    ``parse`` leaves it to typer (an unusual spelling, a value typer refuses)."""
    if kind is str:
        return text
    if kind is int:
        return int(text) if _INTEGER.fullmatch(text) else _NOT_READ
    if kind is float:  # the numbers of this project's options are never negative (``minimum`` 0)
        return float(text) if _DECIMAL.fullmatch(text) and param.minimum == 0 else _NOT_READ
    if kind is Path:
        return Path(text) if text else _NOT_READ
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return next((member for member in kind if member.value == text), _NOT_READ)
    return _NOT_READ


def parse(params: Sequence[Param], argv: Sequence[str]) -> dict[str, Any] | None:
    """The values of ``params`` that a plain command line ``argv`` (the command's own arguments)
    gives, with the defaults of those not given, as typer gives them to the command; None when
    ``argv`` is not plain (see the module's docstring) or a value fails its ``check``.

    >>> table = [Param("name", typing.Optional[str], None), Param("count", int, 0, ("--count", "-n")),
    ...          Param("fast", bool, False, ("--fast",)), Param("tag", typing.List[str], [], ("--tag",))]
    >>> parse(table, ["Boyz", "-n", "3", "--tag=a", "--tag", "b", "--fast"])
    {'name': 'Boyz', 'count': 3, 'fast': True, 'tag': ['a', 'b']}
    >>> parse(table, ["--help"]), parse(table, ["-n", "three"]), parse(table, ["a", "b"])
    (None, None, None)
    """
    by_flag = {flag: p for p in params for flag in p.flags}
    argument = next((p for p in params if not p.flags), None)
    values: dict[str, Any] = {}
    args = list(argv)
    while args:
        token = args.pop(0)
        if not token.startswith("-") or token == "-":
            if argument is None or argument.name in values:
                return None
            values[argument.name] = token
            continue
        flag, equals, attached = token.partition("=")
        param = by_flag.get(flag)
        if param is None or (equals and not flag.startswith("--")):
            return None
        kind, repeatable, several = _unwrap(param.annotation)
        if kind is bool:
            if equals:
                return None
            values[param.name] = True
            continue
        count = len(several) or 1
        if equals:
            if count != 1:
                return None
            texts = [attached]
        else:
            if len(args) < count:
                return None
            texts, args = args[:count], args[count:]
        read = [_value(k, t, param) for k, t in zip(several or (kind,), texts)]
        if any(r is _NOT_READ for r in read):
            return None
        value = tuple(read) if several else read[0]
        if repeatable:
            values.setdefault(param.name, []).append(value)
        else:
            values[param.name] = value
    for param in params:
        value = values.setdefault(param.name, list(param.default) if isinstance(param.default, list) else param.default)
        if param.check is not None and param.check(value) is not None:
            return None
    return {p.name: values[p.name] for p in params}


def _callback(check: Callable[[Any], str | None]) -> Callable[[Any], Any]:
    """A typer callback raising ``typer.BadParameter`` with the message of ``check``."""
    import typer

    def callback(value):
        message = check(value)
        if message is not None:
            raise typer.BadParameter(message)
        return value
    return callback


def command_signature(params: Sequence[Param]) -> inspect.Signature:
    """The signature typer reads for a command of ``params``: each parameter's annotation, and
    as its default ``typer.Argument`` or ``typer.Option`` with the flags, help, check and
    minimum. Imports typer."""
    import typer

    out = []
    for p in params:
        extra: dict[str, Any] = {"help": p.help}
        if p.check is not None:
            extra["callback"] = _callback(p.check)
        if p.minimum is not None:
            extra["min"] = p.minimum
        default = typer.Option(p.default, *p.flags, **extra) if p.flags else typer.Argument(p.default, **extra)
        out.append(inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=p.annotation))
    return inspect.Signature(out, return_annotation=None)
