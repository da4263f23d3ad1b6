"""A printed Stratagem -> ``Stratagem``, the same way for every source.

The one reading (``PrintedStratagem``):

- cost: bare digits (``1``) or with its unit (``1CP``, ``1 CP``) are the Command points; a cost
  not printed (or an empty one) is None, flagged ``cp_cost_missing``; any other text is not a
  cost (``ValueError``: the caller rejects the Stratagem);
- type: stored without the word ``Stratagem`` (``Battle Tactic Stratagem`` and ``Battle
  Tactic`` are both ``Battle Tactic``; a type that is only ``Stratagem`` stays so); a group
  printed in it before a dash (``Core – Battle Tactic``) is taken off (``read_type``);
- group: as printed apart, else the group printed in the type (``Core Stratagem`` means
  ``Core``: ``GROUP_ALIASES``); neither: ``Core``, flagged ``stratagem_group_assumed``. A group
  printed apart and one in the type that do not name each other are flagged
  ``stratagem_group_differs`` (the one printed apart is kept);
- sections: as printed apart, None when empty; a whole text is split at its ``WHEN:`` /
  ``TARGET:`` / ``EFFECT:`` / ``RESTRICTIONS:`` labels (``split_sections``): text before the
  first label is flagged ``stratagem_text_before_when``, and a missing WHEN, TARGET or EFFECT
  ``stratagem_section_missing``;
- name: one clean line; legend: as printed, None when empty.

Every flag is about the ``stratagems`` row (entity key: its ``stratagem_id``).
"""

from __future__ import annotations

import re

from pipeline.assemble.printed import PrintedStratagem
from pipeline.assemble.weapons import Assembled, Note
from pipeline.limits import MAX_NUMBER_DIGITS
from pipeline.normalise.text import clean_line, slug
from schemas.records import Stratagem

#: Section labels of a Stratagem's text -> ``Stratagem`` fields.
SECTIONS: dict[str, str] = {
    "WHEN": "when",
    "TARGET": "target",
    "EFFECT": "effect",
    "RESTRICTIONS": "restrictions",
}
#: Groups printed in a type that mean another group's name.
GROUP_ALIASES: dict[str, str] = {"Core Stratagem": "Core"}

_LABEL = re.compile(r"(?<![A-Za-z])(WHEN|TARGET|EFFECT|RESTRICTIONS):\s*")
_COST = re.compile(rf"^(?P<cp>\d{{1,{MAX_NUMBER_DIGITS}}})(?:\s*CP)?$")
_GROUPED_TYPE = re.compile(r"^(?P<group>.+?)\s+[–—-]\s+(?P<type>.+)$")
_SUFFIX = " Stratagem"


def read_cp_cost(printed: str | None) -> int | None:
    """The Command points of a printed cost; None when none is printed. Raises ``ValueError``
    (``not a CP cost: '...'``) for a text that is no cost.

    >>> read_cp_cost("1"), read_cp_cost("2CP"), read_cp_cost(" 1 CP"), read_cp_cost("")
    (1, 2, 1, None)
    """
    text = clean_line(printed or "")
    if not text:
        return None
    m = _COST.match(text)
    if m is None:
        raise ValueError(f"not a CP cost: {text!r}")
    return int(m["cp"])


def read_type(printed: str) -> tuple[str, str]:
    """(the group printed in a type, the type without the word ``Stratagem``); the group is
    ``""`` when the type prints none.

    >>> read_type("Core – Battle Tactic Stratagem"), read_type("Battle Tactic")
    (('Core', 'Battle Tactic'), ('', 'Battle Tactic'))
    >>> read_type("Strategic Ploy Stratagem"), read_type("Stratagem"), read_type("")
    (('', 'Strategic Ploy'), ('', 'Stratagem'), ('', ''))
    """
    text = clean_line(printed)
    m = _GROUPED_TYPE.match(text)
    group, kind = (m["group"].strip(), m["type"].strip()) if m else ("", text)
    if kind.endswith(_SUFFIX):
        kind = kind[: -len(_SUFFIX)].rstrip()
    return group, kind


def split_sections(text: str) -> tuple[dict[str, str], str]:
    """Split a Stratagem's text at its ``WHEN:`` / ``TARGET:`` / ... labels: the sections by
    field name (a label printed twice: its texts joined by a line break) and the text before
    the first label.

    >>> split_sections("WHEN: Your Shooting phase.\\nEFFECT: Re-roll 1s.")
    ({'when': 'Your Shooting phase.', 'effect': 'Re-roll 1s.'}, '')
    """
    parts = _LABEL.split(text)
    sections: dict[str, str] = {}
    for label, body in zip(parts[1::2], parts[2::2]):
        name, body = SECTIONS[label], body.strip()
        sections[name] = f"{sections[name]}\n{body}" if name in sections else body
    return sections, parts[0].strip()


def assemble_stratagem(printed: PrintedStratagem, source_id: str, stratagem_id: str,
                       edition: int | None) -> Assembled:
    """The ``Stratagem`` of one printed Stratagem with id ``stratagem_id`` (each source's own
    scheme), and its flags (module docstring). Raises ``ValueError`` for a cost that is not a
    number (``read_cp_cost``).

    >>> a = assemble_stratagem(PrintedStratagem("line 3", "FIRE!", "1CP", "Core – Battle Tactic",
    ...                        when="Your Shooting phase.", target="One unit.", effect="Re-roll."),
    ...                        "s", "10e-core-fire", 10)
    >>> s = a.records[0]
    >>> s.cp_cost, s.group, s.type, s.when, [n.code for n in a.notes]
    (1, 'Core', 'Battle Tactic', 'Your Shooting phase.', [])
    """
    out = Assembled()

    def flag(code: str, detail: str) -> None:
        out.notes.append(Note("stratagems", stratagem_id, code, detail))

    type_group, kind = read_type(printed.type)
    apart = clean_line(printed.group or "")
    group = apart or GROUP_ALIASES.get(type_group, type_group)
    if not group:
        group = "Core"
        flag("stratagem_group_assumed", "no group in the type and no detachment: Core")
    elif apart and type_group:
        a, b = slug(apart), slug(type_group)
        if a not in b and b not in a:
            flag("stratagem_group_differs", f"type says {type_group!r}, detachment column says {apart!r}")
    cp_cost = read_cp_cost(printed.cost)
    if cp_cost is None:
        flag("cp_cost_missing", "empty cp_cost")
    if printed.text is not None:
        sections, before = split_sections(printed.text)
        if before:
            flag("stratagem_text_before_when", before)
        for label, name in SECTIONS.items():
            if name != "restrictions" and not sections.get(name):
                flag("stratagem_section_missing", f"no {label}: section")
    else:
        sections = {name: getattr(printed, name) for name in SECTIONS.values()}
    out.records.append(Stratagem(
        source_id=source_id, locator=printed.locator, stratagem_id=stratagem_id,
        name=clean_line(printed.name), cp_cost=cp_cost, group=group, type=kind,
        edition=edition,  # type: ignore[arg-type]
        legend=printed.legend or None,
        when=sections.get("when") or None, target=sections.get("target") or None,
        effect=sections.get("effect") or None, restrictions=sections.get("restrictions") or None,
    ))
    return out
