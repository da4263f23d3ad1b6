"""One real list of each format imported with its expected units (written down from reading
the files), and the same army exported in different formats giving the same units."""

from __future__ import annotations

from collections import Counter

import pytest

from pipeline.lists import read_list
from pipeline.lists.model import Wargear
from pipeline.normalise.names import name_key
from tests.lists.conftest import LISTS

pytestmark = pytest.mark.skipif(not LISTS.exists(), reason="the shared corpus is not beside the checkout")

# Test-WE-GWAPP-English, read by hand: (unit, points, {model line: count})
WE_UNITS = [
    ("Khârn the Betrayer", 115, {"Khârn the Betrayer": 1}),
    ("Khorne Berzerkers", 170, {"Khorne Berzerker Champion": 1, "Khorne Berzerker": 9}),
    ("Slaughterbound", 120, {"Slaughterbound": 1}),
    ("Exalted Eightbound", 130, {"Exalted Eightbound Champion": 1, "Exalted Eightbound": 2}),
    ("Lord Invocatus", 100, {"Lord Invocatus": 1}),
    ("Khorne Berzerkers", 170, {"Khorne Berzerker Champion": 1, "Khorne Berzerker": 9}),
    ("Master of Executions", 95, {"Master of Executions": 1}),
    ("Khorne Berzerkers", 170, {"Khorne Berzerker Champion": 1, "Khorne Berzerker": 9}),
    ("Chaos Rhino", 75, {"Chaos Rhino": 1}),
    ("Chaos Rhino", 75, {"Chaos Rhino": 1}),
    ("Chaos Predator Destructor", 130, {"Chaos Predator Destructor": 1}),
    ("Chaos Predator Destructor", 130, {"Chaos Predator Destructor": 1}),
    ("Chaos Spawn", 95, {"Chaos Spawn": 2}),
    ("Chaos Spawn", 95, {"Chaos Spawn": 2}),
    ("Eightbound", 125, {"Eightbound Champion": 1, "Eightbound": 2}),
    ("Jakhals", 65, {"Jakhal Pack Leader": 1, "Dishonoured": 1, "Jakhal": 8}),
    ("Maulerfiend", 140, {"Maulerfiend": 1}),
]


def _units(army):
    return [(u.name, u.points, {m.name: m.count for m in u.models}) for u in army.units]


def _key_units(army):
    """Units as a multiset of (name, points, model lines by singular name key and count)."""
    def lines(u):
        counts: Counter = Counter()
        for m in u.models:
            counts[name_key(m.name, ignore_plural=True)] += m.count
        return tuple(sorted(counts.items()))
    return Counter((name_key(u.name), u.points, lines(u)) for u in army.units)


def test_warhammer_app_english_11th_edition_world_eaters():
    army = read_list(LISTS / "11e" / "Test-WE-GWAPP-English")
    assert army.format == "gw-app"
    assert (army.name, army.faction, army.detachments, army.force_dispositions) == (
        "Flood of Chainblades", "World Eaters", ("Berzerker Warband",), ("Purge the Foe",))
    assert (army.edition, army.declared_points, army.summed_points, army.points_limit) == (11, 2000, 2000, 2000)
    assert _units(army) == WE_UNITS
    assert [(a.leaders, a.bodyguard) for a in army.attachments] == [((0,), 1), ((2,), 3), ((4,), 5), ((6,), 7)]
    assert [u.role for u in army.units[:8]] == ["leader", "bodyguard"] * 4
    assert [i for i, u in enumerate(army.units) if u.warlord] == [0]
    assert {u.name: [e.name for e in u.enhancements] for u in army.units if u.enhancements} == {
        "Slaughterbound": ["Battle-lust"], "Master of Executions": ["Berzerker Glaive"]}
    berzerker = army.units[1].models[1]
    assert berzerker.wargear == (Wargear("Bolt pistol", 7), Wargear("Chainblade", 7), Wargear("Icon of Khorne", 1),
                                 Wargear("Khornate eviscerator", 2), Wargear("Plasma pistol", 2))
    assert army.units[8].models[0].wargear == (Wargear("Armoured tracks", 1), Wargear("Combi-bolter", 2),
                                               Wargear("Havoc launcher", 1))


def test_warhammer_app_french_reads_the_french_labels():
    army = read_list(LISTS / "11e" / "Test-WE-GWAPP-French")
    assert (army.format, army.language, army.edition, army.battle_size) == ("gw-app", "fr", 11, "Force de Frappe")
    assert army.force_dispositions == ("Purge the Foe",)  # "Éliminez l’Adversaire"
    assert _units(army) == WE_UNITS
    assert [u.role for u in army.units[:8]] == ["leader", "bodyguard"] * 4  # Meneur, Gardes du Corps
    assert army.units[0].warlord  # Seigneur de Guerre
    assert [e.name for e in army.units[6].enhancements] == ["Berzerker Glaive"]  # Optimisation : ...


def test_warhammer_app_10th_edition():
    army = read_list(LISTS / "10e" / "GWAPPSample.txt")
    assert (army.format, army.edition, army.edition_evidence) == ("gw-app", 10, "app version v1")
    assert (army.faction, army.detachments, army.declared_points) == ("World Eaters", ("Berzerker Warband",), 1995)
    assert [u.name for u in army.units][:4] == ["Daemon Prince of Khorne", "Khârn the Betrayer",
                                                "Master of Executions", "Slaughterbound"]
    champion = army.units[4].models[0]
    assert (champion.name, champion.count, champion.wargear) == ("Khorne Berzerker Champion", 1, (
        Wargear("Chainblade", 1), Wargear("Icon of Khorne", 1), Wargear("Plasma pistol", 1)))
    assert [e.name for e in army.units[0].enhancements] == ["Helm of Brazen Ire"]


def test_best_coast_pairings_bullets_without_indent():
    army = read_list(LISTS / "10e" / "BCPSample.txt")
    assert (army.format, army.faction, army.detachments) == ("gw-app", "Thousand Sons", ("Warpforged Cabal",))
    tzaangors = army.units[15]
    assert [(m.name, m.count) for m in tzaangors.models] == [("Twistbray", 1), ("Tzaangor", 9)]
    assert tzaangors.models[1].wargear[1] == Wargear("Brayhorn", 1)
    assert [e.name for e in army.units[0].enhancements] == ["Warp-Cursed Runemaster"]


def test_new_recruit_gw():
    army = read_list(LISTS / "11e" / "Test-WE-NRGW-English")
    assert (army.format, army.edition, army.declared_points) == ("newrecruit-gw", 11, 2000)
    assert (army.faction, army.detachments, army.force_dispositions) == (
        "World Eaters", ("Berzerker Warband",), ("Purge the Foe",))
    assert [u.name for u in army.units][:5] == ["Khârn the Betrayer", "Lord Invocatus", "Master of Executions",
                                                "Slaughterbound", "Khorne Berzerkers"]
    assert [(e.name, e.points) for e in army.units[2].enhancements] == [("Berzerker Glaive", 35)]
    assert army.units[0].warlord
    assert army.units[6].models[0].wargear == (Wargear("Chainblade", 1), Wargear("Bolt pistol", 1))
    assert army.units[16].models[0].wargear == (Wargear("Maulerfiend fists", 1), Wargear("Magma cutter", 2))


def test_new_recruit_tournament_with_attached_units():
    army = read_list(LISTS / "11e" / "Test-WE2-NRTournament-English")
    assert (army.format, army.edition, army.summed_points) == ("newrecruit-wtc", 11, 2000)
    names = [u.name for u in army.units]
    assert names[:7] == ["Khârn the Betrayer", "Lord Invocatus", "Master of Executions", "Slaughterbound",
                         "Khorne Berzerkers", "Khorne Berzerkers", "Khorne Berzerkers"]
    assert sorted((a.leaders, a.bodyguard) for a in army.attachments) == [
        ((0,), 4), ((1,), 5), ((2,), 6), ((3,), names.index("Exalted Eightbound"))]
    berzerkers = army.units[4]
    # 5 with Bolt pistol, Chainblade; 1 with Chainblade, Plasma pistol; 1 with Icon, Chainblade,
    # Plasma pistol; 2 with Bolt pistol, Khornate eviscerator
    assert {w.name: w.count for w in berzerkers.models[0].wargear} == {
        "Bolt pistol": 7, "Chainblade": 7, "Plasma pistol": 2, "Icon of Khorne": 1, "Khornate eviscerator": 2}
    assert (berzerkers.models[1].name, berzerkers.models[1].count) == ("Khorne Berzerker Champion", 1)
    assert army.units[0].warlord and [e.points for e in army.units[3].enhancements] == [20]


def test_wtc_compact_10th_edition():
    army = read_list(LISTS / "10e" / "WTCCompactSample.txt")
    assert (army.format, army.edition, army.declared_points, len(army.units)) == ("newrecruit-wtc", 10, 1995, 17)
    pathfinders = army.units[5]
    assert [(m.name, m.count) for m in pathfinders.models] == [("Pathfinders", 9), ("Pathfinder Shas'ui", 1)]
    # 6 with ..., Pulse carbine; 3 with ..., Ion rifle
    assert {w.name: w.count for w in pathfinders.models[0].wargear}["Pulse carbine"] == 6


@pytest.mark.parametrize("other", ["Test-WE-GWAPP-French", "Test-WE-NRGW-English", "Test-WE-NRTournament-English",
                                   "Test-WE2-NRTournament-English"])
def test_the_same_world_eaters_army_in_each_format_gives_the_same_units(other):
    assert _key_units(read_list(LISTS / "11e" / other)) == _key_units(read_list(LISTS / "11e" / "Test-WE-GWAPP-English"))


@pytest.mark.parametrize("other", ["Test-TAU-GWAPP-French", "Test-TAU-NRGW-English", "Test-TAU-NRTournament-English"])
def test_the_same_tau_army_in_each_format_gives_the_same_units(other):
    assert _key_units(read_list(LISTS / "11e" / other)) == _key_units(read_list(LISTS / "11e" / "Test-TAU-GWAPP-English"))
