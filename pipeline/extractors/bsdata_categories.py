"""BattleScribe categories -> keywords and faction keywords (case P28).

A BattleScribe unit lists its keywords as category links. Faction keywords are the categories
named ``Faction: X`` in the game system (``<categoryEntry name="Faction: Asuryani">``); a unit may
link one with the prefix (``Faction: Adeptus Astartes``) or, in older catalogues, by its bare
name (``Asuryani``), so the game system's list decides, never the spelling alone.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

from lxml import etree

from pipeline.assemble.keywords import read_keyword
from pipeline.normalise.text import clean_line

FACTION_PREFIX = "Faction:"


class Categories(NamedTuple):
    """A unit's keywords split in two, with data-quality flags (``missing_faction_keyword``)."""

    faction_keywords: tuple[str, ...]
    keywords: tuple[str, ...]
    flags: tuple[str, ...]


def game_system_factions(gst_xml: str) -> frozenset[str]:
    """The faction keywords a game system (``.gst`` XML text) defines, upper case, no prefix.

    Raises ``ValueError`` (lxml's ``XMLSyntaxError``) for text that is not XML.
    """
    root = etree.fromstring(gst_xml.encode("utf-8"))
    names = root.xpath("//*[local-name()='categoryEntry']/@name")
    return frozenset(
        clean_line(n[len(FACTION_PREFIX):]).upper() for n in names if n.startswith(FACTION_PREFIX)
    )


def classify_categories(categories: Iterable[str], factions: frozenset[str]) -> Categories:
    """Split a unit's category names into faction keywords and keywords.

    ``Faction: X`` -> faction keyword X (prefix stripped); a bare name that the game system
    defines as a faction (``factions``) -> faction keyword; anything else -> keyword. All upper
    case, in first-seen order, without repeats. A unit with no faction keyword gets the flag
    ``missing_faction_keyword``.

    >>> classify_categories(["Faction: Adeptus Astartes", "Infantry", "Asuryani"], frozenset({"ASURYANI"}))
    Categories(faction_keywords=('ADEPTUS ASTARTES', 'ASURYANI'), keywords=('INFANTRY',), flags=())
    """
    faction_keywords: dict[str, None] = {}
    keywords: dict[str, None] = {}
    for name in categories:
        text = clean_line(name)
        if text.startswith(FACTION_PREFIX):
            faction_keywords[read_keyword(text[len(FACTION_PREFIX):])] = None
        elif read_keyword(text) in factions:
            faction_keywords[read_keyword(text)] = None
        elif text:
            keywords[read_keyword(text)] = None
    flags = () if faction_keywords else ("missing_faction_keyword",)
    return Categories(tuple(faction_keywords), tuple(keywords), flags)
