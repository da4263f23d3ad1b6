"""A printed ability -> ``Ability``, the same way for every source.

The one reading (``PrintedAbility``):

- name: one clean line; an ability the datasheet only names (no text: core and faction
  abilities) carries its parameter in the name as printed (``Feel No Pain 5+``, ``Deadly Demise
  D6+2``, ``Scouts 6"``): the stored row keeps the name (``Feel No Pain``) and the parameter
  (``5+``) apart, so a rule lookup finds the rule by its name (``split_ability_parameter``);
- parameter: as a source prints it apart (the export's ``parameter`` column, a BattleScribe
  link's name modifier), one clean line; then the name is not split;
- text: as printed, None when empty.
"""

from __future__ import annotations

import re

from pipeline.assemble.printed import PrintedAbility
from pipeline.normalise.text import clean_line
from schemas.records import Ability

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


def assemble_ability(printed: PrintedAbility, source_id: str, datasheet_id: str) -> Ability:
    """The ``Ability`` of one printed ability (module docstring). Raises ``ValidationError`` for
    a kind that is not an ``AbilityKind``.

    >>> a = assemble_ability(PrintedAbility("line 3", "core", "Deadly Demise D3"), "s", "10e/x/y")
    >>> a.name, a.parameter, a.text
    ('Deadly Demise', 'D3', None)
    >>> assemble_ability(PrintedAbility("l", "core", "Feel No Pain", parameter=" 5+"), "s", "x").parameter
    '5+'
    """
    name, parameter = clean_line(printed.name), clean_line(printed.parameter or "") or None
    if parameter is None and not printed.text:
        name, parameter = split_ability_parameter(name)
    return Ability(source_id=source_id, locator=printed.locator, datasheet_id=datasheet_id,
                   kind=printed.kind, name=name, parameter=parameter,  # type: ignore[arg-type]
                   text=printed.text or None)
