"""War Organ's own text, ListForge and New Recruit's markdown imported with their expected units
(written down from reading the files), and the same army in every format matched to the same
datasheets and model lines."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from pipeline.lists import read_list
from pipeline.lists.match import match_list
from pipeline.lists.model import Enhancement, Wargear
from pipeline.normalise.names import name_key
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


# 10e/LFSample.txt, read by hand
LF_UNITS = [
    ("Khârn the Betrayer", 100, {"Khârn the Betrayer": 1}),
    ("Slaughterbound", 110, {"Slaughterbound": 1}),
    ("Slaughterbound", 85, {"Slaughterbound": 1}),
    ("World Eaters Daemon Prince", 215, {"World Eaters Daemon Prince": 1}),
    ("Khorne Berserkers", 180, {"Khorne Berserker Champion": 1, "Khorne Berserker w/ alternate weapons": 4,
                                "Khorne Berserker": 5}),
    ("Eightbound", 135, {"Eightbound Champion": 1, "Eightbound": 2}),
    ("Exalted Eightbound", 140, {"Exalted Eightbound Champion": 1, "Exalted Eightbound": 2}),
    ("Jakhals", 65, {"Jakhal Pack Leader": 1, "Jakhal w/ mauler chainblade": 1, "Jakhal": 7,
                     "Dishonoured w/ skullsmasher": 1}),
    ("World Eaters Rhino", 85, {"World Eaters Rhino": 1}),
    ("World Eaters Chaos Spawn", 90, {"Chaos Spawn": 2}),
    ("World Eaters Chaos Spawn", 90, {"Chaos Spawn": 2}),
    ("World Eaters Forgefiend", 170, {"World Eaters Forgefiend": 1}),
    ("World Eaters Forgefiend", 170, {"World Eaters Forgefiend": 1}),
    ("World Eaters Maulerfiend", 150, {"World Eaters Maulerfiend": 1}),
    ("World Eaters Maulerfiend", 150, {"World Eaters Maulerfiend": 1}),
]


def test_listforge_world_eaters():
    army = read_list(LISTS / "10e" / "LFSample.txt")
    assert (army.format, army.name, army.faction, army.detachments, army.edition) == (
        "listforge", "Fiendish!", "World Eaters", ("Berzerker Warband",), None)
    assert (army.declared_points, army.summed_points, army.attachments) == (1935, 1935, ())
    assert _units(army) == LF_UNITS
    assert [u.section for u in army.units[:5]] == ["Epic Hero", "Character", "Character", "Character", "Battleline"]
    assert [i for i, u in enumerate(army.units) if u.warlord] == [3]
    assert {i: [e.name for e in u.enhancements] for i, u in enumerate(army.units) if u.enhancements} == {
        1: ["Berzerker Glaive"], 3: ["Favoured of Khorne"]}
    berserkers = army.units[4]
    assert berserkers.wargear == (Wargear("Icon of Khorne"),)  # printed beside the model lines
    assert berserkers.models[1].wargear == (Wargear("Khornate eviscerator", 2), Wargear("Bolt pistol", 2),
                                            Wargear("Plasma pistol", 2), Wargear("Berserker chainblade", 2))
    # "2 ectoplasma cannons" over "2x Ectoplasma cannon" is a choice of wargear, not a model line
    assert army.units[11].models[0].wargear == (Wargear("Ectoplasma cannon", 2), Wargear("Forgefiend claws"),
                                                Wargear("Ectoplasma cannon"))
    assert army.units[7].notes == ("B: 1 mauler chainblade, 7 chainblades",)


def test_listforge_10th_edition_list_matched_to_10th_edition_datasheets(lists_db):
    import duckdb

    army = read_list(LISTS / "10e" / "LFSample.txt")
    with duckdb.connect(str(lists_db), read_only=True) as con:
        matched = match_list(con, army, 10)
    assert (matched.faction_id, matched.unmatched) == ("world-eaters", ())
    assert [(u.datasheet_id, u.score) for u in matched.units] == [
        ("10e/world-eaters/kharn-the-betrayer", 1.0), ("10e/world-eaters/slaughterbound", 1.0),
        ("10e/world-eaters/slaughterbound", 1.0),
        ("10e/world-eaters/daemon-prince-of-khorne", 0.9),  # its words all in "Daemon Prince of Khorne"
        ("10e/world-eaters/khorne-berzerkers", 0.94),  # "Berserkers": difflib's ratio
        ("10e/world-eaters/eightbound", 1.0), ("10e/world-eaters/exalted-eightbound", 1.0),
        ("10e/world-eaters/jakhals", 1.0),
        ("10e/world-eaters/chaos-rhino", 0.85),  # "Rhino": the faction's one datasheet with that word
        ("10e/world-eaters/chaos-spawn", 1.0), ("10e/world-eaters/chaos-spawn", 1.0),
        ("10e/world-eaters/forgefiend", 1.0), ("10e/world-eaters/forgefiend", 1.0),  # the faction's name dropped
        ("10e/world-eaters/maulerfiend", 1.0), ("10e/world-eaters/maulerfiend", 1.0)]
    # its one model, printed by the unit's name: the datasheet's one model, by the words
    assert [(m.matched, m.score) for m in matched.units[11].models] == [("Forgefiend", 0.85)]
    champion, alternate = matched.units[4].models[:2]
    assert [(w.printed, w.matched, w.score) for w in champion.wargear] == [
        ("Bolt pistol", "Bolt pistol", 1.0), ("Berserker chainblade", "Chainblade", 0.85)]
    assert (alternate.matched, alternate.score) == ("Khorne Berzerkers", 0.94)  # read before " w/ "
    assert [e[1] for e in matched.units[3].enhancements] == ["Favoured of Khorne"]


def test_new_recruit_markdown():
    army = read_list(LISTS / "10e" / "NRNRsample.txt")
    assert (army.format, army.name, army.faction, army.detachments, army.edition) == (
        "newrecruit-nr", "Fiendish! (no hb)", "World Eaters", ("Berzerker Warband",), None)
    assert (army.declared_points, army.summed_points, army.points_limit, army.battle_size) == (
        2000, 2000, 2000, "Strike Force")
    assert army.notes == ("Blessings of Khorne Reference", "Show/Hide Options")
    assert [(u.name, u.points) for u in army.units] == [
        ("Khârn the Betrayer", 100), ("Daemon Prince of Khorne", 215), ("Slaughterbound", 110),
        ("Slaughterbound", 85), ("Khorne Berzerkers", 180), ("Eightbound", 135), ("Exalted Eightbound", 140),
        ("Jakhals", 65), ("Jakhals", 65), ("Chaos Spawn", 90), ("Chaos Spawn", 90), ("Forgefiend", 170),
        ("Forgefiend", 170), ("Maulerfiend", 150), ("Maulerfiend", 150), ("Chaos Rhino", 85)]
    assert [u.section for u in army.units[:5]] == ["Epic Hero", "Character", "Character", "Character", "Battleline"]
    assert [i for i, u in enumerate(army.units) if u.warlord] == [1]
    berzerkers = army.units[4]
    assert [(m.name, m.count) for m in berzerkers.models] == [
        ("Khorne Berzerker Champion", 1), ("Khorne Berzerker", 5), ("Khorne Berzerker w/ chainblade and plasma pistol", 2),
        ("Khorne Berzerker w/ eviscerator and bolt pistol", 2)]
    # "• 5x Khorne Berzerker: Bolt pistol, Chainblade": each of the five carries both
    assert berzerkers.models[1].wargear == (Wargear("Bolt pistol", 5), Wargear("Chainblade", 5))
    # "2 magma cutters (2x Magma cutter)": the option is its contents
    assert army.units[13].models[0].wargear == (Wargear("Maulerfiend fists"), Wargear("Magma cutter", 2))
    assert army.units[7].notes == ("1 mauler chainblade, 7 chainblades",)
    # Enhancements are printed among the weapons; the list alone cannot tell them apart
    assert army.units[1].models[0].wargear[0] == Wargear("Favoured of Khorne")


def test_new_recruit_markdown_enhancements_told_from_wargear_by_the_matcher(lists_db):
    import duckdb

    army = read_list(LISTS / "10e" / "NRNRsample.txt")
    with duckdb.connect(str(lists_db), read_only=True) as con:
        matched = match_list(con, army, 10)
    assert (matched.faction_id, matched.unmatched) == ("world-eaters", ())
    assert {i: u.enhancements for i, u in enumerate(matched.units) if u.enhancements} == {
        1: (("Favoured of Khorne", "Favoured of Khorne", 1.0),), 2: (("Berzerker Glaive", "Berzerker Glaive", 1.0),)}
    assert [w.printed for w in matched.units[1].models[0].wargear] == ["Hellforged weapons", "Infernal cannon"]


def _matched_units(con, path, edition=11):
    """The units of a list as a multiset of (datasheet, points, {datasheet model: count}), the
    model by its singular name key (the datasheets name a model line ``Khorne Berzerkers`` and
    its profile ``Khorne Berzerker``), its Attached units as a multiset of (Leader's datasheet,
    Bodyguard's datasheet), and the printed names of what matched nothing."""
    matched = match_list(con, read_list(path), edition)
    units = Counter()
    for u in matched.units:
        lines: Counter = Counter()
        for m in u.models:
            lines[name_key(m.matched or "", ignore_plural=True)] += m.count
        units[(u.datasheet_id, u.unit.points, tuple(sorted(lines.items())))] += 1
    attached = Counter((matched.units[a.leader].datasheet_id, matched.units[a.bodyguard].datasheet_id)
                       for a in matched.attachments)
    return units, attached, {re.match(r"\w+ '(.*?)'|\w+ \"(.*?)\"", text).group(1) for text in matched.unmatched}


@pytest.fixture(scope="module")
def con(lists_db):
    import duckdb

    with duckdb.connect(str(lists_db), read_only=True) as connection:
        yield connection


# New Recruit prints the weapons of the Ri'Lantar's and Pathfinders' drones, which the
# 11th-edition datasheets give as wargear abilities without a weapon profile: named unmatched
DRONE_WEAPONS = {"Twin pulse blaster", "Drone burst cannon"}
_REFERENCE: dict[str, tuple] = {}


@pytest.mark.parametrize("army, other, attached, unmatched", [
    ("WE", "Test-WE-GWAPP-French", True, set()), ("WE", "Test-WE-NRGW-English", False, set()),
    ("WE", "Test-WE-NRTournament-English", False, set()), ("WE", "Test-WE2-NRTournament-English", True, set()),
    ("WE", "Test-WE-WARORGAN-English", True, set()),
    ("TAU", "Test-TAU-GWAPP-French", True, set()), ("TAU", "Test-TAU-NRGW-English", False, DRONE_WEAPONS),
    ("TAU", "Test-TAU-NRTournament-English", False, DRONE_WEAPONS), ("TAU", "Test-TAU-WARORGAN-English", True, set())])
def test_the_same_army_in_every_format_is_matched_to_the_same_units(con, army, other, attached, unmatched):
    if army not in _REFERENCE:  # the Warhammer app's English export, matched once per module
        _REFERENCE[army] = _matched_units(con, LISTS / "11e" / f"Test-{army}-GWAPP-English")
    reference = _REFERENCE[army]
    units, attachments, names = _matched_units(con, LISTS / "11e" / other)
    assert (reference[2], names) == (set(), unmatched)
    assert units == reference[0]
    # the formats that print Attached units give the same ones (New Recruit's GW text and these
    # Tournament exports print none)
    assert attachments == (reference[1] if attached else Counter())


@pytest.mark.parametrize("content, message", [
    ("Mine [500 points]\nOrks\nBattle Size: Incursion (1000 point limit)\n\nDetachments: War Horde\n\n• 10 Boyz\n"
     "Created with WarOrgan\n", "line 7: '• 10 Boyz' before the first unit"),
    ("Mine [500 points]\nOrks\n\nDetachments: War Horde\n\nCreated with WarOrgan\n", "line 1: no unit"),
    ("Mine - Orks - War Horde (500 Points)\n\nBattleline:\n  • 10x Boy\n", "line 4: '• 10x Boy' is neither"),
    ("Orks - Mine - [500 pts]\n\n# ++ Army Roster ++ [500 pts]\n• 10x Boy: Slugga\n",
     "line 4: '• 10x Boy: Slugga' before the first unit"),
])
def test_a_broken_list_of_the_new_formats_is_one_error_line(content, message):
    from pipeline.lists import ArmyListError, parse_list

    with pytest.raises(ArmyListError) as caught:
        parse_list(content.encode())
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
