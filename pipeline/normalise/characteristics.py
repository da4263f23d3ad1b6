"""Characteristics as printed (``24"``, ``3+``, ``D6+3``, ``-1``, ``N/A``) -> named values.

Each function takes the printed text and returns the value, or raises ``NormaliseError`` with
the reason (the caller turns it into a reject). Functions that may load a doubtful value return
``(value, flags)``: each flag is a stable code stored in ``data_flags``. The functions are pure
and their values immutable, so they are memoised (an export prints the same few values
thousands of times); an error is raised again on every call.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from pipeline.errors import NormaliseError
from pipeline.limits import MAX_NUMBER_DIGITS
from pipeline.normalise.text import clean_line
from schemas.dice import DiceExpr

#: A weapon table's title as Wahapedia prints it (case-folded: pages print ``Ranged weapons``,
#: the page text ``RANGED WEAPONS``) -> ``is_melee``.
WEAPON_TABLES: dict[str, bool] = {"ranged weapons": False, "melee weapons": True}

#: A weapon table's column label (case-folded) -> the ``WeaponProfile`` characteristic it holds.
WEAPON_COLUMNS: dict[str, str] = {
    "range": "range",
    "a": "attacks",
    "bs": "skill",
    "ws": "skill",
    "s": "strength",
    "ap": "armour_penetration",
    "d": "damage",
}

_DASHES = str.maketrans({"\u2013": "-", "\u2014": "-", "\u2212": "-", "\u2011": "-"})
#: A number as printed: at most MAX_NUMBER_DIGITS digits (a longer one is no value: it would not
#: fit a 64-bit column, and past 4,300 digits int() refuses it); a longer one does not match.
_N = rf"\d{{1,{MAX_NUMBER_DIGITS}}}"
_DICE = re.compile(rf"^(?:(\d{{0,{MAX_NUMBER_DIGITS}}})[dD]({_N}))?\s*(?:([+-])\s*({_N}))?$")
_FIXED = re.compile(rf"^{_N}$")


def _prep(text: str) -> str:
    if "&" in text:  # html.unescape changes nothing else: the entities' table loaded when needed
        import html

        text = html.unescape(text)
    return clean_line(text).translate(_DASHES)


@lru_cache(maxsize=4096)
def dice(text: str) -> DiceExpr:
    """Read a dice expression: ``D6``, ``2D6+3``, ``d3``, ``D6-1`` or a fixed ``3``.

    The printed form is canonicalised (``2d6+3`` -> ``2D6+3``).

    >>> d = dice("D6+2"); (d.dice_count, d.dice_sides, d.modifier, d.mean, d.minimum, d.maximum)
    (1, 6, 2, Fraction(11, 2), 3, 8)
    >>> dice("2d6+3").text
    '2D6+3'

    Raises ``NormaliseError`` for anything else (``-``, ``N/A``, ``D``).
    """
    t = _prep(text).replace(" ", "")
    if _FIXED.match(t):
        return DiceExpr(text=str(int(t)), dice_count=0, dice_sides=0, modifier=int(t))
    m = _DICE.match(t)
    if not t or not m or m.group(2) is None:
        raise NormaliseError(f"not a dice expression: {text!r} (expected e.g. D6, 2D6+3 or 3)")
    count = int(m.group(1) or 1)
    sides = int(m.group(2))
    mod = int(m.group(4) or 0) * (-1 if m.group(3) == "-" else 1)
    if count < 1 or sides < 2:
        raise NormaliseError(f"not a dice expression: {text!r}")
    return make_dice(count, sides, mod)


def make_dice(count: int, sides: int, modifier: int) -> DiceExpr:
    """Build a ``DiceExpr`` with its canonical text.

    >>> make_dice(1, 3, 1).text, make_dice(0, 0, 4).text, make_dice(2, 6, -1).text
    ('D3+1', '4', '2D6-1')
    """
    if count == 0:
        return DiceExpr(text=str(modifier), dice_count=0, dice_sides=0, modifier=modifier)
    text = ("" if count == 1 else str(count)) + f"D{sides}"
    if modifier:
        text += f"{modifier:+d}"
    return DiceExpr(text=text, dice_count=count, dice_sides=sides, modifier=modifier)


def add_to_dice(expr: DiceExpr, amount: int) -> DiceExpr:
    """Add a fixed amount to a dice expression: ``D6`` + 1 is ``D6+1``, never ``D7``.

    >>> add_to_dice(dice("D6+1"), 1).text
    'D6+2'
    """
    return make_dice(expr.dice_count, expr.dice_sides, expr.modifier + amount)


@lru_cache(maxsize=4096)
def roll_target(text: str) -> int:
    """Read a roll target: ``3+`` -> 3. A bare digit (Wahapedia's ``3``) is read as ``3+``.

    >>> roll_target("3+"), roll_target("4")
    (3, 4)
    """
    t = _prep(text).replace(" ", "")
    m = re.fullmatch(r"(\d)\+?", t)
    if not m or not 2 <= int(m.group(1)) <= 7:
        raise NormaliseError(f"not a roll target: {text!r} (expected e.g. 3+)")
    return int(m.group(1))


@lru_cache(maxsize=4096)
def leadership(text: str) -> int:
    """Read Leadership, a 2D6 roll target: ``6+`` -> 6, ``8+`` -> 8 (2..12).

    >>> leadership("6+"), leadership("8+"), leadership("7")
    (6, 8, 7)
    """
    t = _prep(text).replace(" ", "")
    m = re.fullmatch(r"(\d{1,2})\+?", t)
    if not m or not 2 <= int(m.group(1)) <= 12:
        raise NormaliseError(f"not a Leadership value: {text!r} (expected e.g. 6+)")
    return int(m.group(1))


class Skill(NamedTuple):
    """Ballistic Skill or Weapon Skill: ``value`` None means no hit roll (Torrent)."""

    value: int | None
    flags: tuple[str, ...]


@lru_cache(maxsize=4096)
def skill(text: str, *, torrent: bool = False) -> Skill:
    """Read BS/WS. ``N/A`` is None (no hit roll); a Torrent weapon always has None.

    A Torrent weapon printed with a skill keeps None and gets the flag ``torrent_with_bs``.

    >>> skill("N/A"), skill("2+", torrent=True), skill("3")
    (Skill(value=None, flags=()), Skill(value=None, flags=('torrent_with_bs',)), Skill(value=3, flags=()))
    """
    t = _prep(text)
    if t.upper() in ("N/A", "NA", "-", ""):
        return Skill(None, ())
    value = roll_target(t)
    if torrent:
        return Skill(None, ("torrent_with_bs",))
    return Skill(value, ())


class AP(NamedTuple):
    value: int
    flags: tuple[str, ...]


@lru_cache(maxsize=4096)
def armour_penetration(text: str) -> AP:
    """Read Armour Penetration: ``-1``, ``−1`` (U+2212), ``–1`` (U+2013), ``AP-3``, ``0``, ``-0``.

    A positive value such as ``1`` is read as ``-1`` with the flag ``positive_ap`` (AP is never
    positive in the 10th edition; storing +1 would make saves easier).

    >>> [armour_penetration(x).value for x in ("-1", "\u22121", "\u20131", "AP-3", "0", "-0")]
    [-1, -1, -1, -3, 0, 0]
    >>> armour_penetration("1")
    AP(value=-1, flags=('positive_ap',))
    """
    t = _prep(text).replace(" ", "")
    t = re.sub(r"^AP", "", t, flags=re.IGNORECASE)
    m = re.fullmatch(r"([+-]?)(\d)", t)
    if not m:
        raise NormaliseError(f"not an Armour Penetration value: {text!r} (expected e.g. -1 or 0)")
    magnitude = int(m.group(2))
    if m.group(1) == "-" or magnitude == 0:
        return AP(-magnitude, ())
    return AP(-magnitude, ("positive_ap",))


class Range(NamedTuple):
    """A weapon's range: ``inches`` None and ``is_melee`` True for ``Melee``."""

    inches: int | None
    is_melee: bool


@lru_cache(maxsize=4096)
def weapon_range(text: str) -> Range:
    """Read a weapon range: ``18"``, ``18&quot;``, ``18''``, ``Melee``.

    >>> weapon_range('18&quot;'), weapon_range("Melee")
    (Range(inches=18, is_melee=False), Range(inches=None, is_melee=True))
    """
    t = _prep(text)
    if t.lower() == "melee":
        return Range(None, True)
    m = re.fullmatch(rf"({_N})\s*(?:\"|''|”|″|in(?:ches)?)?", t)
    if not m:
        raise NormaliseError(f"not a weapon range: {text!r} (expected e.g. 24\" or Melee)")
    return Range(int(m.group(1)), False)


@lru_cache(maxsize=4096)
def distance(text: str) -> int | None:
    """Read a distance such as a Move characteristic: ``6"`` -> 6, ``20+"`` -> 20, ``-`` -> None.

    >>> distance('6"'), distance('20+"'), distance("-")
    (6, 20, None)
    """
    t = _prep(text)
    if t in ("-", ""):
        return None
    m = re.fullmatch(rf"({_N})\+?\s*(?:\"|''|”|″)?", t)
    if not m:
        raise NormaliseError(f"not a distance: {text!r} (expected e.g. 6\")")
    return int(m.group(1))


class InvulnerableSave(NamedTuple):
    """An invulnerable save: ``value`` None for none; ``scope`` e.g. ``ranged`` from a ``*`` note."""

    value: int | None
    scope: str | None


@lru_cache(maxsize=4096)
def invulnerable_save(text: str, note: str | None = None) -> InvulnerableSave:
    """Read an invulnerable save: ``-`` -> none, ``4+`` -> 4, ``3+*`` -> 3 scoped by the note.

    The scope comes from the ``*`` note (``* Ranged attacks only`` -> ``ranged``,
    ``* Melee attacks only`` -> ``melee``); a starred value with no readable note keeps the note
    text as its scope, so it is never loaded as an unconditional save.

    >>> invulnerable_save("-"), invulnerable_save("4+")
    (InvulnerableSave(value=None, scope=None), InvulnerableSave(value=4, scope=None))
    >>> invulnerable_save("3+*", "* Ranged attacks only")
    InvulnerableSave(value=3, scope='ranged')
    """
    t = _prep(text).replace(" ", "")
    if t in ("-", ""):
        return InvulnerableSave(None, None)
    starred = t.endswith("*")
    value = roll_target(t.rstrip("*"))
    if not starred:
        return InvulnerableSave(value, None)
    note_text = clean_line(note or "").lstrip("* ").strip()
    lowered = note_text.lower()
    if "ranged" in lowered:
        scope = "ranged"
    elif "melee" in lowered:
        scope = "melee"
    elif "mortal" in lowered:
        scope = "mortal-wounds"
    else:
        scope = note_text or "conditional (no note)"
    return InvulnerableSave(value, scope)


@lru_cache(maxsize=4096)
def characteristic_int(text: str, name: str) -> int | None:
    """Read a whole-number characteristic (T, W, OC, S): ``5``, ``5*`` -> 5, ``-`` -> None.

    >>> characteristic_int("5*", "T"), characteristic_int("-", "OC")
    (5, None)
    """
    t = _prep(text).replace(" ", "")
    if t in ("-", ""):
        return None
    m = re.fullmatch(rf"({_N})\*?", t)
    if not m:
        raise NormaliseError(f"not a {name} characteristic: {text!r} (expected a whole number)")
    return int(m.group(1))
