"""A printed keyword -> the stored keyword, the same way for every source.

Keywords are printed in capitals on a datasheet (``INFANTRY``, ``EPIC HERO``) but not in every
source (BattleScribe categories: ``Infantry``; HTML spans split a keyword over tags and lines).
The one reading: the text on one line, spacing folded, hyphens plain, upper case; a keyword list
is split at commas. Empty items are not keywords.
"""

from __future__ import annotations

import re

from pipeline.normalise.text import clean_line

_SPACES = re.compile(r"\s+")


def read_keyword(printed: str) -> str:
    """The stored form of one printed keyword ("" when it is empty).

    >>> read_keyword(" Epic\\n hero "), read_keyword("Faction: Adepta Sororitas"[9:]), read_keyword("")
    ('EPIC HERO', 'ADEPTA SORORITAS', '')
    """
    return clean_line(_SPACES.sub(" ", printed)).upper()


def read_keywords(printed: str) -> list[str]:
    """The keywords of a printed, comma-separated keyword list, in print order.

    >>> read_keywords("Infantry, Battleline,  Imperium,")
    ['INFANTRY', 'BATTLELINE', 'IMPERIUM']
    """
    return [k for k in (read_keyword(item) for item in printed.split(",")) if k]
