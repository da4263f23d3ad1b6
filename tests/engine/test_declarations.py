"""The declaration of each edition's attack rules (``pipeline/engine/edition_rules.toml``).

Every 11th-edition quote taken from the core rules (``gdc-11e/core/core_rules.json``, English)
is checked against that file, fragment by fragment, so a quote cannot drift from the rule text.
The order of modifiers and the characteristic limits are checked with values worked by hand from
02.02.01 Modifiers.
"""

from __future__ import annotations

import html
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from pipeline.engine import declarations as d
from pipeline.engine.declarations import Modifier, apply_modifiers, grant_ability, limit, rules_for
from pipeline.engine.profiles import Anti, Weapon
from pipeline.errors import InputError

CORE_RULES = Path("../shared/corpus/gdc-11e/core/core_rules.json")
E10, E11 = rules_for(10), rules_for(11)


def _english(node) -> list[str]:
    if isinstance(node, dict):
        return [t for k, v in node.items() for t in ([v] if k == "en" and isinstance(v, str) else _english(v))]
    if isinstance(node, list):
        return [t for v in node for t in _english(v)]
    return []


def _plain(text: str) -> str:
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    text = text.replace("\u2011", "-").replace("\u2018", "'").replace("\u2019", "'").replace("*", "")
    text = re.sub(r"\s+", " ", text).strip().lower()
    return re.sub(r"\s+([,.:;)\]])", r"\1", re.sub(r"([(\[])\s+", r"\1", text))


@pytest.fixture(scope="module")
def core_text() -> str:
    if not CORE_RULES.exists():
        pytest.skip("the corpus (../shared/corpus) is not here")
    return _plain(" ".join(_english(json.loads(CORE_RULES.read_text(encoding="utf-8")))))


def _declared(edition) -> list[d.Declared]:
    return [getattr(edition, f) for f in edition.FIELDS if isinstance(getattr(edition, f), d.Declared)]


def test_both_editions_declare_every_rule():
    assert d.editions() == (10, 11)
    assert len(_declared(E10)) == len(_declared(E11)) == 21


@pytest.mark.parametrize("rule", [r for r in _declared(E11) if r.source.startswith("gdc-11e")], ids=lambda r: r.key)
def test_11th_edition_quotes_are_in_the_core_rules(rule, core_text):
    fragments = [f.strip(" .;:") for f in re.split(r"\.\s|;\s|\s\.\.\.\s|:\s", _plain(rule.quote))]
    missing = [f for f in fragments if f and f not in core_text]
    assert not missing, f"{rule.key}: not in core_rules.json: {missing}"


def test_unknown_edition_is_an_error():
    with pytest.raises(InputError, match="edition 9 has no declared attack rules; use one of 10, 11"):
        rules_for(9)


# --- 02.02.01 Applying modifiers: set, multiply, add, divide, subtract, round up ---------------


@pytest.mark.parametrize("value, modifiers, expected", [
    (2, [("add", 1), ("multiply", 2)], 5),  # 2 x 2 = 4, + 1 = 5 (not (2 + 1) x 2 = 6)
    (3, [("divide", 2), ("add", 1)], 2),  # 3 + 1 = 4, / 2 = 2 (not 3/2 + 1 = 5/2 -> 3)
    (4, [("subtract", 1), ("divide", 2)], 1),  # 4 / 2 = 2, - 1 = 1 (not (4 - 1) / 2 = 3/2 -> 2)
    (5, [("divide", 2)], 3),  # 5/2 rounded up
    (6, [("set", 2), ("add", 1)], 3),  # set first: 2, then + 1
    (1, [("multiply", 3), ("divide", 2), ("subtract", 1)], 1),  # 3 / 2 - 1 = 1/2 -> 1
])
def test_modifier_order_11th(value, modifiers, expected):
    assert apply_modifiers(value, [Modifier(k, a) for k, a in modifiers], E11) == expected


def test_modifier_order_10th_is_not_guessed():
    assert apply_modifiers(3, [Modifier("add", 2), Modifier("subtract", 1)], E10) == 4
    with pytest.raises(InputError, match="10th edition's order of modifiers is not declared"):
        apply_modifiers(3, [Modifier("add", 1), Modifier("multiply", 2)], E10)


# --- 02.02.01 When modifying characteristics: limits after all modifiers -----------------------


@pytest.mark.parametrize("characteristic, value, expected", [
    ("BS", 7, 6), ("BS", 1, 2), ("WS", 8, 6), ("WS", 0, 2), ("Sv", 1, 2), ("InSv", 1, 2),
    ("A", 0, 1), ("S", 0, 1), ("D", -1, 1), ("AP", 1, 0), ("AP", -3, -3), ("T", 0, 1),
])
def test_characteristic_limits_11th(characteristic, value, expected):
    assert limit(characteristic, value, E11) == expected


def test_limits_apply_after_the_modifiers():
    # D1 with -1 and -1: 1 - 2 = -1, then "D cannot be less than 1" -> 1
    assert apply_modifiers(1, [Modifier("subtract", 1), Modifier("subtract", 1)], E11, "D") == 1
    # BS 5+ worsened by 2: 7+, then "BS cannot be ... 7+ (or worse)" -> 6
    assert apply_modifiers(5, [Modifier("add", 2)], E11, "BS") == 6
    assert apply_modifiers(Fraction(1), [Modifier("add", 1)], E11, "AP") == 0


# --- The meaning of weapon abilities ------------------------------------------------------------


def _gun() -> Weapon:
    return Weapon.from_abilities(name="gun", attacks="2", skill=3, strength=4, armour_penetration=0, damage="1")


def test_every_known_weapon_ability_has_a_meaning():
    from pipeline.normalise.weapon_abilities import KNOWN_ABILITIES

    assert [a for a in KNOWN_ABILITIES if d.weapon_ability(a) is None] == []
    assert d.weapon_ability("ANTI").parameter == "keyword-threshold"
    assert d.weapon_ability("CLEAVE").editions == (11,)


def test_grant_ability():
    w = grant_ability(_gun(), "LETHAL HITS: VEHICLE")
    assert w.lethal_hits and w.conditions == (("lethal_hits", "VEHICLE"),)
    assert grant_ability(grant_ability(_gun(), "SUSTAINED HITS 1"), "SUSTAINED HITS 2").sustained_hits.text == "2"
    assert grant_ability(grant_ability(_gun(), "SUSTAINED HITS 1"), "SUSTAINED HITS 2",
                         replace=False).sustained_hits.text == "1"
    assert grant_ability(_gun(), "TORRENT").skill is None
    assert grant_ability(_gun(), "CLEAVE 2").cleave == 2
    assert grant_ability(_gun(), "ASSAULT") == _gun()
    assert grant_ability(grant_ability(_gun(), "ANTI-INFANTRY 4+"), "ANTI-VEHICLE 2+").anti == (
        Anti("INFANTRY", 4), Anti("VEHICLE", 2))


@pytest.mark.parametrize("text, message", [
    ("FROBNICATE", "weapon ability 'FROBNICATE' is not declared"),
    ("MELTA", "weapon ability 'MELTA': MELTA needs its value"),
    ("CLEAVE D3", "CLEAVE takes a whole number"),
    ("ANTI-INFANTRY", "write it as ANTI-KEYWORD X\\+"),
])
def test_grant_ability_errors(text, message):
    with pytest.raises(InputError, match=message):
        grant_ability(_gun(), text)
