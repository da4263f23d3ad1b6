"""War Organ's own text, ListForge and New Recruit's markdown imported with their expected units
(written down from reading the files), and the same army in every format matched to the same
datasheets and model lines."""

from __future__ import annotations

from collections import Counter

import pytest

from pipeline.lists import read_list
from pipeline.lists.match import match_list
from pipeline.lists.model import Enhancement, Wargear
from tests.lists.conftest import LISTS

pytestmark = pytest.mark.skipif(not LISTS.exists(), reason="the shared corpus is not beside the checkout")


def _units(army):
    return [(u.name, u.points, {m.name: m.count for m in u.models}) for u in army.units]


def _lines(unit):
    """A unit's model lines as {name: count}, lines of one name added up."""
    counts: Counter = Counter()
    for m in unit.models:
        counts[m.name] += m.count
    return dict(counts)


# Test-WE-WARORGAN-English, read by hand: units in the file's order (Attached units first, under
# the names the player gave them), model lines of one name added up.
WO_WE_UNITS = [
    ("Exalted Eightbound", 130, {"Exalted Eightbound Champion": 1, "Exalted Eightbound": 2}),
    ("Slaughterbound", 120, {"Slaughterbound": 1}),
    ("Khârn The Betrayer", 115, {"Khârn The Betrayer": 1}),
    ("Khorne Berzerkers", 170, {"Khorne Berzerker Champion": 1, "Khorne Berzerkers": 9}),
    ("Khorne Berzerkers", 170, {"Khorne Berzerker Champion": 1, "Khorne Berzerkers": 9}),
    ("Lord Invocatus", 100, {"Lord Invocatus": 1}),
    ("Khorne Berzerkers", 170, {"Khorne Berzerker Champion": 1, "Khorne Berzerkers": 9}),
    ("Master of Executions", 95, {"Master of Executions": 1}),
    ("Chaos Rhino", 75, {"Chaos Rhino": 1}),
    ("Chaos Rhino", 75, {"Chaos Rhino": 1}),
    ("Chaos Predator Destructor", 130, {"Chaos Predator Destructor": 1}),
    ("Chaos Predator Destructor", 130, {"Chaos Predator Destructor": 1}),
    ("Maulerfiend", 140, {"Maulerfiend": 1}),
    ("Chaos Spawn", 95, {"Chaos Spawn": 2}),
    ("Chaos Spawn", 95, {"Chaos Spawn": 2}),
    ("Eightbound", 125, {"Eightbound Champion": 1, "Eightbound": 2}),
    ("Jakhals", 65, {"Jakhal Pack Leader": 1, "Dishonoured": 1, "Jakhals": 8}),
]


def test_war_organ_world_eaters():
    army = read_list(LISTS / "11e" / "Test-WE-WARORGAN-English")
    assert (army.format, army.name, army.faction, army.detachments, army.force_dispositions) == (
        "warorgan", "Flood of Chainblades", "World Eaters", ("Berzerker Warband",), ("Purge The Foe",))
    assert (army.edition, army.declared_points, army.summed_points, army.points_limit, army.battle_size) == (
        11, 2000, 2000, 2000, "Strike Force")
    assert [(u.name, u.points, _lines(u)) for u in army.units] == WO_WE_UNITS
    assert [i for i, u in enumerate(army.units) if u.warlord] == [2]
    assert {u.name: u.enhancements for u in army.units if u.enhancements} == {
        "Slaughterbound": (Enhancement("Battle-Lust", 20),), "Master of Executions": (Enhancement("Berzerker Glaive", 35),)}
    # "• 4 Khorne Berzerkers with Bolt pistol and Chainblade": each of the four carries both
    assert army.units[3].models[1].wargear == (Wargear("Bolt pistol", 4), Wargear("Chainblade", 4))
    assert army.units[5].models[0].wargear == (Wargear("Bladed horn"), Wargear("Bolt pistol"), Wargear("Coward’s bane"))
    assert army.units[8].models[0].wargear == (Wargear("Armoured tracks"), Wargear("Combi-bolter", 2),
                                               Wargear("Havoc launcher"))
    # four headings name Attached units; War Organ prints no roles: the unit of most models is
    # guessed to be the Bodyguard, and the list says the roles are not printed
    assert [(a.leaders, a.bodyguard, a.roles_printed) for a in army.attachments] == [
        ((1,), 0, False), ((2,), 3, False), ((5,), 4, False), ((7,), 6, False)]
    assert [u.section for u in army.units[8:10]] == ["Dedicated Transport"] * 2


def test_war_organ_astra_militarum_without_headings():
    army = read_list(LISTS / "11e" / "WO-Sample-AM1.txt")
    assert (army.format, army.edition, army.edition_evidence, army.detachments) == (
        "warorgan", 11, "several detachments", ("Armoured Infantry", "Bridgehead Strike"))
    assert (len(army.units), army.summed_points, army.attachments) == (19, 2000, ())
    commander = army.units[10]
    # "Grand strategist [+25 points]" printed inside the wargear list is an Enhancement
    assert (commander.name, commander.points, commander.enhancements) == (
        "Leman Russ Commander", 260, (Enhancement("Grand strategist", 25),))
    assert commander.models[0].wargear[0] == Wargear("Multi-meltas", 2)
    squad = army.units[11]
    assert squad.warlord and _lines(squad) == {"Tempestor Prime": 1, "Tempestus Scions": 4}
    assert squad.models[4].wargear == (Wargear("Close combat weapon"), Wargear("Hot-shot lasgun"),
                                       Wargear("hot-shot laspistol"), Wargear("medi-pack"))


def test_war_organ_attached_units_take_their_roles_from_the_leader_links(lists_db):
    import duckdb

    army = read_list(LISTS / "11e" / "Test-WE-WARORGAN-English")
    with duckdb.connect(str(lists_db), read_only=True) as con:
        matched = match_list(con, army, 11)
    assert matched.unmatched == ()
    # Slaughterbound (unit 1) leads the Exalted Eightbound (unit 0), printed after them
    assert [(a.leader, a.bodyguard, a.allowed) for a in matched.attachments] == [
        (1, 0, True), (2, 3, True), (5, 4, True), (7, 6, True)]
