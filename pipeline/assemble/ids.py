"""The one datasheet-id scheme of every source.

``{edition}e/{faction id}/{name slug}`` (``10e/tyranids/termagants``): the same unit printed by two
sources gets the same id, so the merge joins them. A datasheet of a Combat Patrol is its own
datasheet (played only in that game mode): ``{scope}/{name slug}``, the scope naming the Combat
Patrol (``cp-sanctuary-guardians/canoness-adalya``). A source that prints two datasheets of one
name keeps the first id and gives the others ``{id}--{qualifier}`` (``--`` never occurs in a slug).
"""

from __future__ import annotations

from pipeline.normalise.text import slug


def datasheet_id(edition: int | None, faction_id: str, name: str) -> str:
    """The id of a datasheet of a faction in an edition.

    >>> datasheet_id(10, "tyranids", "Termagants"), datasheet_id(11, "orks", "Boyz")
    ('10e/tyranids/termagants', '11e/orks/boyz')
    """
    return f"{edition}e/{faction_id}/{slug(name)}"


def scoped_datasheet_id(scope: str, name: str) -> str:
    """The id of a datasheet of one Combat Patrol (or another scope of its own).

    >>> scoped_datasheet_id("cp-sanctuary-guardians", "Canoness Adalya")
    'cp-sanctuary-guardians/canoness-adalya'
    """
    return f"{scope}/{slug(name)}"


def qualified_datasheet_id(base: str, qualifier: str) -> str:
    """The id of a second datasheet printed under the name of ``base``.

    >>> qualified_datasheet_id("10e/space-marines/captain", "Codex Supplement")
    '10e/space-marines/captain--codex-supplement'
    """
    return f"{base}--{slug(qualifier)}"
