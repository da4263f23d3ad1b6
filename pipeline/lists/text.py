"""What the text formats share: cleaned lines, printed points and counts, bullet trees, labels.

Pure helpers over text; no file or database is read here except the label table beside this
module (``labels.toml``, read once).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pipeline.lists.model import Wargear
from pipeline.normalise.names import name_key

LABELS_FILE = Path(__file__).resolve().parent / "labels.toml"

#: Bullets the exports print before an item; ``◦`` is one level below ``•`` at the same indent.
BULLETS = "•◦▪‣-"
_SPACES = str.maketrans({"\u00a0": " ", "\u2009": " ", "\u202f": " ", "\u2011": "-", "\t": "    "})
_POINTS = re.compile(r"[\(\[]\s*([\d,.]+)\s*(?:points?|pts|Points?|PTS)\s*[\)\]]", re.IGNORECASE)
_COUNT = re.compile(r"^(\d+)\s*x\s+(\S.*)$", re.IGNORECASE)
_BARE_COUNT = re.compile(r"^(\d+)\s+(\S.*)$")


def clean(line: str) -> str:
    """A printed line with non-breaking and thin spaces as spaces, tabs as four spaces, no line
    end; the rest as printed.

    >>> clean("Retaliation\\u00a0Cadre\\t(3)\\r\\n")
    'Retaliation Cadre    (3)'
    """
    return line.translate(_SPACES).rstrip("\r\n").rstrip()


def lines_of(text: str) -> list[str]:
    """The cleaned lines of a text (a byte-order mark dropped).

    >>> lines_of("\\ufeffa\\r\\nb")
    ['a', 'b']
    """
    return [clean(line) for line in text.lstrip("\ufeff").splitlines()]


def points_in(text: str) -> int | None:
    """The points printed in parentheses or brackets (``(1,990 Points)``, ``[85 pts]``), or None.

    >>> points_in("CRISIS SUITS  (1,990 Points)"), points_in("Kasrkin [115 points]"), points_in("Boyz")
    (1990, 115, None)
    >>> points_in("Starflare Ignition System (+20 pts)")
    """
    found = _POINTS.search(text)
    return int(found.group(1).replace(",", "").replace(".", "")) if found else None


def without_points(text: str) -> str:
    """``text`` with its printed points removed.

    >>> without_points("Commander Farsight (70 points)")
    'Commander Farsight'
    """
    return _POINTS.sub("", text).strip()


def counted(text: str, bare: bool = False) -> tuple[int, str]:
    """The count printed before a name (``2x Fusion blaster``; with ``bare``, also ``2 Fusion
    blaster``), and the name; a name without a count is one.

    >>> counted("2x Fusion blaster"), counted("Warlord"), counted("2 Burst cannon", bare=True)
    ((2, 'Fusion blaster'), (1, 'Warlord'), (2, 'Burst cannon'))
    """
    found = _COUNT.match(text) or (_BARE_COUNT.match(text) if bare else None)
    return (int(found.group(1)), found.group(2).strip()) if found else (1, text.strip())


def split_items(text: str, bare: bool = False) -> list[Wargear]:
    """A comma-separated list of wargear with counts, as ``Wargear`` items.

    >>> split_items("2x Missile Drone, Weapon support system")
    [Wargear(name='Missile Drone', count=2), Wargear(name='Weapon support system', count=1)]
    """
    items = []
    for part in text.split(","):
        if part.strip():
            count, name = counted(part.strip(), bare)
            items.append(Wargear(name, count))
    return items


@dataclass
class Node:
    """One bulleted item of a unit and the items printed below it (``text`` without its bullet)."""

    text: str
    line: int
    bulleted: bool = True
    children: list["Node"] = field(default_factory=list)


def _level(line: str) -> tuple[int, str, bool]:
    """(depth key, text, bulleted) of one cleaned line: the indent, doubled, plus one for ``◦``."""
    stripped = line.lstrip(" ")
    indent = len(line) - len(stripped)
    if stripped[:1] in BULLETS and stripped[1:2] == " ":
        return indent * 2 + (1 if stripped[0] == "◦" else 0), stripped[2:].strip(), True
    return indent * 2, stripped.strip(), False


def bullet_tree(lines: list[tuple[int, str]]) -> list[Node]:
    """The items of a unit as a tree: a bulleted line indented deeper than the item before it
    (or ``◦`` below ``•``) is its child; a line without a bullet continues the list the item
    before it is in (the Warhammer app prints ``• 1x Gorechild`` then ``  1x Plasma pistol``).

    ``lines``: (line number, cleaned line) pairs. Returns the top-level nodes.

    >>> tree = bullet_tree([(1, "  • 1x Sergeant"), (2, "    • 1x Boltgun"), (3, "      1x Pistol"),
    ...                     (4, "  • Warlord")])
    >>> [(n.text, [c.text for c in n.children]) for n in tree]
    [('1x Sergeant', ['1x Boltgun', '1x Pistol']), ('Warlord', [])]
    """
    roots: list[Node] = []
    stack: list[tuple[int, Node, list[Node]]] = []  # (depth, node, the list the node is in)
    for number, line in lines:
        if not line.strip():
            continue
        depth, text, bulleted = _level(line)
        node = Node(text, number, bulleted)
        if not bulleted and stack:
            stack[-1][2].append(node)  # a sibling of the item before it
            continue
        while stack and stack[-1][0] >= depth:
            stack.pop()
        siblings = stack[-1][1].children if stack else roots
        siblings.append(node)
        stack.append((depth, node, siblings))
    return roots


@lru_cache(maxsize=1)
def _labels() -> dict:
    return tomllib.loads(LABELS_FILE.read_text(encoding="utf-8"))


def labels(meaning: str) -> list[str]:
    """Every printed form of one label (``labels("warlord")``: the English and French ones).

    >>> labels("warlord")
    ['Warlord', 'Seigneur de Guerre']
    """
    table = _labels()[meaning]
    return [label for forms in table.values() for label in forms]


def label_language(meaning: str, text: str) -> str | None:
    """The language (``en``, ``fr``) whose label for ``meaning`` ``text`` is, else None.

    >>> label_language("warlord", "Seigneur de Guerre"), label_language("warlord", "Boltgun")
    ('fr', None)
    """
    key = name_key(text)
    for language, forms in _labels()[meaning].items():
        if any(name_key(f) == key for f in forms):
            return language
    return None


def labelled(meaning: str, text: str) -> str | None:
    """The value after a label (``Enhancement: X``, ``Optimisation : X``), else None.

    >>> labelled("enhancement", "Optimisation : Battle-lust"), labelled("enhancement", "Battle-lust")
    ('Battle-lust', None)
    """
    head, sep, value = text.partition(":")
    if sep and label_language(meaning, head.strip()):
        return value.strip()
    return None


def faction_in_english(name: str) -> str:
    """A faction named as a French list names it, in English (``labels.toml``); other names as
    they are.

    >>> faction_in_english("Empire T’au"), faction_in_english("World Eaters")
    ('T’au Empire', 'World Eaters')
    """
    table = {name_key(k): v for k, v in _labels()["factions"].items()}
    return table.get(name_key(name), name)
