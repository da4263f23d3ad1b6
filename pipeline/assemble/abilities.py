"""A printed ability name -> the ability's name and parameter, the same way for every source.

Core abilities carry their parameter in the name as printed (``Feel No Pain 5+``, ``Deadly
Demise D6+2``, ``Scouts 6"``); the stored ``abilities`` row keeps the name (``Feel No Pain``) and
the parameter (``5+``) apart, so a rule lookup finds the rule by its name. A source that prints
the parameter apart (the export's ``parameter`` column, a BattleScribe link's name modifier)
gives it as is.
"""

from __future__ import annotations

import re

from pipeline.normalise.text import clean_line

_PARAMETER = re.compile(r"^(?P<name>.+?)\s+(?P<param>\d+\+|\d*D\d+(?:[+-]\d+)?|\d+\s*(?:\"|'')?)$")


def split_ability_parameter(printed: str) -> tuple[str, str | None]:
    """(name, parameter) of a printed core ability; the parameter is None when none is printed.

    >>> split_ability_parameter("Feel No Pain 5+"), split_ability_parameter('Scouts 6"')
    (('Feel No Pain', '5+'), ('Scouts', '6"'))
    >>> split_ability_parameter("Deadly Demise D6+2"), split_ability_parameter("Deep Strike")
    (('Deadly Demise', 'D6+2'), ('Deep Strike', None))
    """
    text = clean_line(printed)
    m = _PARAMETER.match(text)
    if not m:
        return text, None
    return m.group("name").strip(), m.group("param").replace(" ", "")
