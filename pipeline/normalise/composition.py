"""Unit composition lines as printed (``1 Sergeant and 9 Troopers``, ``OR``) -> model lines.

One reading for every source that prints a unit composition (the Wahapedia export's
``Datasheets_unit_composition`` rows and the UNIT COMPOSITION box of a Wahapedia datasheet page),
so that the same datasheet read from both gives the same ``unit_composition`` rows:

- a printed line is one row per model group, in print order: ``1 Shock Trooper Sergeant and
  9 Shock Troopers`` is two rows, ``1 Grenadier Sergeant, 7 Grenadiers and 1 Heavy Weapons
  Team`` three; each row keeps the whole printed line as its ``text``;
- an ``OR`` between two alternative compositions (``OR``, ``or:``) is a row of its own, with no
  model name and no counts, so the rows say where each alternative starts;
- the rows of a datasheet are numbered from 1 in print order (the export's own ``line`` column
  numbers printed lines, not model groups).
"""

from __future__ import annotations

import re
from typing import NamedTuple

_COUNT = r"\d+(?:\s*[-–‑]\s*\d+)?"
#: A model group: ``4-9 Intercessors``, ``1 Lord Solar Leontus``.
_GROUP = re.compile(rf"(?P<min>\d+)(?:\s*[-–‑]\s*(?P<max>\d+))?\s+(?P<name>\S.*)", re.DOTALL)
#: Where one model group ends and the next begins: a comma or ``and`` before a model count.
_SEPARATOR = re.compile(rf"\s*,\s*(?:and\s+)?(?={_COUNT}\s+\S)|\s+and\s+(?={_COUNT}\s+\S)")
_PARENTHESISED = re.compile(r"\([^()]*\)")
_ALTERNATIVE = re.compile(r"\s*or\s*:?\s*", re.IGNORECASE)


class ModelGroup(NamedTuple):
    """One model group of a composition line: how many models (min, max) of which model."""

    min_models: int
    max_models: int
    model_name: str
    footnote: bool  # the name carried a ``*``: a note elsewhere on the datasheet refers to it


def is_alternative(printed: str) -> bool:
    """True for a line that separates two alternative compositions.

    >>> is_alternative("OR"), is_alternative(" or: "), is_alternative("One of the following:")
    (True, True, False)
    """
    return _ALTERNATIVE.fullmatch(printed) is not None


def model_groups(printed: str) -> list[ModelGroup] | None:
    """The model groups of one printed composition line, in print order.

    Groups are separated by a comma or ``and`` followed by a model count, outside parentheses.
    A trailing ``:`` or ``.`` is not part of a name; a trailing ``*`` (footnote marker) is
    dropped and reported as ``footnote``. Returns None when the line does not start with a
    model count (``One of the following:``) or is a size cap (``10 MODELS MAXIMUM``): it is not
    a model line.

    >>> model_groups("1 Shock Trooper Sergeant and 9 Shock Troopers")
    [ModelGroup(min_models=1, max_models=1, model_name='Shock Trooper Sergeant', footnote=False),
     ModelGroup(min_models=9, max_models=9, model_name='Shock Troopers', footnote=False)]
    >>> attaches = model_groups("1 Master of Ordnance, 1 Officer of the Fleet and 1 Astropath.")
    >>> [g.model_name for g in attaches]
    ['Master of Ordnance', 'Officer of the Fleet', 'Astropath']
    >>> model_groups("4-9 Intercessors"), model_groups("1-2 Atalan Wolfquads*")
    ([ModelGroup(min_models=4, max_models=9, model_name='Intercessors', footnote=False)],
     [ModelGroup(min_models=1, max_models=2, model_name='Atalan Wolfquads', footnote=True)])
    >>> model_groups("1 Kill Team Terminator (Garran Branatar and 2 others)")[0].model_name
    'Kill Team Terminator (Garran Branatar and 2 others)'
    >>> model_groups("10 MODELS MAXIMUM"), model_groups("One of the following:"), model_groups("OR")
    (None, None, None)
    """
    text = printed.strip()
    # Separators inside parentheses do not count: search a copy with those parts blanked out.
    masked = _PARENTHESISED.sub(lambda m: "_" * len(m.group()), text)
    parts, start = [], 0
    for separator in _SEPARATOR.finditer(masked):
        parts.append(text[start : separator.start()])
        start = separator.end()
    parts.append(text[start:])
    groups = []
    for part in parts:
        m = _GROUP.fullmatch(part.strip())
        if m is None:
            return None
        name = m.group("name").strip().rstrip(":.").rstrip()
        footnote = name.endswith("*")
        name = name.rstrip("*").rstrip()
        if not name or re.match(r"models?\b", name, re.IGNORECASE):
            return None  # a size cap ("10 MODELS MAXIMUM"), not a model group
        low = int(m.group("min"))
        high = int(m.group("max") or low)
        groups.append(ModelGroup(low, high, name, footnote))
    return groups


#: Points lines that state a unit size (``5 models``).
_SIZE_IN_POINTS = re.compile(r"\s*(\d+)\s+models?\s*", re.IGNORECASE)


def smallest_unit_size(lines: list[tuple[str, str, int | None]]) -> int | None:
    """The smallest unit a composition allows: the sum of its first alternative's minimums; None
    when that gives no model.

    ``lines``: each composition row's ``(text, model_name, min_models)`` in line order. The first
    alternative ends at an ``OR`` row; after a ``One of the following:`` row (a line that is no
    model line and ends with ``:``) it is the first printed line (the rows of the same ``text``).
    Rows that are no model line (``10 MODELS MAXIMUM``) count nothing.

    >>> smallest_unit_size([("1 Sergeant and 4-9 Intercessors", "Sergeant", 1),
    ...                     ("1 Sergeant and 4-9 Intercessors", "Intercessors", 4)])
    5
    >>> smallest_unit_size([("1 A and 9 B", "A", 1), ("1 A and 9 B", "B", 9), ("OR", "", None),
    ...                     ("2 A and 18 B", "A", 2), ("2 A and 18 B", "B", 18)])
    10
    >>> smallest_unit_size([("One of the following:", "", None), ("1 A and 9 B", "A", 1), ("1 A and 9 B", "B", 9),
    ...                     ("1 A, 7 B and 1 C", "A", 1), ("1 A, 7 B and 1 C", "B", 7), ("1 A, 7 B and 1 C", "C", 1)])
    10
    >>> smallest_unit_size([("1 Hero", "Hero", 1), ("1 Hero", "Hero", 1)])  # two model entries of one name
    2
    >>> smallest_unit_size([("0-1 Gun Servitor", "Gun Servitor", 0)]), smallest_unit_size([])
    (None, None)
    """
    total = 0
    listed = False  # after "One of the following:"
    first: str | None = None
    for text, name, least in lines:
        if is_alternative(text):
            break
        if not name and least is None:
            listed = listed or text.rstrip().endswith(":")
            continue
        if listed:
            first = text if first is None else first
            if text != first:
                break
        total += least or 0
    return total or None


def unit_size(starting_strength: int | None, points_lines: list[str],
              lines: list[tuple[str, str, int | None]]) -> tuple[int | None, str]:
    """A unit's smallest size and where it comes from, or None and what is missing (never 1 assumed).

    In order: the model count the datasheet prints (``starting_strength``), the smallest
    ``N models`` points line (``unit_costs.description``), the composition's first alternative
    (``smallest_unit_size``; ``lines`` as it takes them). The one reading of a unit's size, for the attack engine and the
    build's ``data_gaps``.

    >>> unit_size(10, [], [])
    (10, 'printed model count')
    >>> unit_size(None, ["5 models", "10 models"], [])
    (5, 'smallest unit size in its points')
    >>> unit_size(None, [], [("1-2 Hippogriff AFV", "Hippogriff AFV", 1)])
    (1, 'sum of its composition lines')
    >>> unit_size(None, ["+1 model"], [("0-1 Gun Servitor", "Gun Servitor", 0)])[1]
    "no starting strength, no 'N models' points line, and its 1 composition line(s) give no minimum"
    """
    if starting_strength:
        return starting_strength, "printed model count"
    sizes = [int(m.group(1)) for d in points_lines if (m := _SIZE_IN_POINTS.fullmatch(d))]
    if sizes:
        return min(sizes), "smallest unit size in its points"
    total = smallest_unit_size(lines)
    if total:
        return total, "sum of its composition lines"
    composition = f"its {len(lines)} composition line(s) give no minimum" if lines else "no composition lines"
    return None, f"no starting strength, no 'N models' points line, and {composition}"
