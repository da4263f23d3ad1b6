"""BattleScribe rosters: a real ``.rosz`` imported with its expected units, and crafted hostile
files, each one ``ArmyListError`` line with bounded memory."""

from __future__ import annotations

import io
import zipfile

import pytest

from pipeline.limits import MAX_LIST_BYTES
from pipeline.lists import ArmyListError, parse_list, read_list
from pipeline.lists.model import Wargear
from tests.lists.conftest import LISTS

ROSTER = b"""<?xml version="1.0" encoding="utf-8"?>
<roster name="Mini" gameSystemName="Warhammer 40,000 10th Edition" xmlns="http://www.battlescribe.net/schema/rosterSchema">
  <costs><cost name="pts" value="80"/></costs>
  <forces><force name="Army Roster" catalogueName="Xenos - Orks"><selections>
    <selection name="Boyz" type="unit" number="1"><costs><cost name="pts" value="80"/></costs><selections>
      <selection name="Boy" type="model" number="9"><selections>
        <selection name="Slugga" type="upgrade" number="9"/></selections></selection>
    </selections></selection>
  </selections></force></forces>
</roster>"""


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


@pytest.mark.skipif(not LISTS.exists(), reason="the shared corpus is not beside the checkout")
def test_leagues_of_votann_rosz():
    army = read_list(LISTS / "battlescribe" / "01.LoV.Leviathan.v0102.rosz")
    assert (army.format, army.edition, army.faction, army.detachments) == (
        "battlescribe", 10, "Leagues of Votann", ("Oathband",))
    assert (army.declared_points, army.summed_points, army.points_limit) == (965, 965, 1000)
    assert [(u.name, u.points) for u in army.units] == [
        ("Hearthkyn Warriors", 110), ("Einhyr Hearthguard", 150), ("Hernkyn Pioneers", 90),
        ("Hekaton Land Fortress", 225), ("Sagitaur", 100), ("Sagitaur", 100), ("Hearthkyn Warriors", 110),
        ("Einhyr Champion", 80)]
    assert [(m.name, m.count) for m in army.units[1].models] == [("Hesyr", 1), ("Einhyr Hearthguard", 4)]
    assert army.units[1].models[1].wargear == (Wargear("Exo-armour grenade launcher", 4),
                                               Wargear("Concussion gauntlet", 4), Wargear("Volkanite disintegrator", 4))
    champion = army.units[7]
    assert champion.warlord and [(e.name, e.points) for e in champion.enhancements] == [("Appraising Glare", 20)]
    # "L7 missile launcher*" is read by its profiles "➤ L7 missile launcher - blast" / "- focused"
    assert army.units[0].models[2].wargear[2] == Wargear("L7 missile launcher", 1)


def test_a_small_ros_and_its_rosz_give_the_same_list():
    assert parse_list(ROSTER) == parse_list(_zip({"mini.ros": ROSTER}))
    army = parse_list(ROSTER)
    assert [(u.name, u.points, [(m.name, m.count, m.wargear) for m in u.models]) for u in army.units] == [
        ("Boyz", 80, [("Boy", 9, (Wargear("Slugga", 9),))])]


@pytest.mark.parametrize("data, message", [
    (_zip({"bomb.ros": b"<" + b"a" * (MAX_LIST_BYTES + 10)}), "unzips to"),
    (_zip({f"r{i}.ros": ROSTER for i in range(20)}), "a zip of 20 files"),
    (_zip({"a.ros": ROSTER, "b.ros": ROSTER}), "holds one .ros roster; this zip has 2"),
    (_zip({"notes.txt": b"hi"}), "this zip has 0"),
    (b"PK\x03\x04 broken", "not a readable zip file"),
    (b"<roster>" + b"<a>" * 300 + b"</a>" * 300 + b"</roster>", "nested deeper than 256 levels"),
    (b"<?xml version='1.0'?><catalogue/>", "not an army list of a known format"),
    (b"<roster><forces>", "not well-formed XML"),
])
def test_hostile_rosters_are_one_line_errors(data, message):
    with pytest.raises(ArmyListError) as caught:
        parse_list(data)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_member_path_names_are_never_used_as_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    army = parse_list(_zip({"../../escaped.ros": ROSTER}))
    assert [u.name for u in army.units] == ["Boyz"] and list(tmp_path.parent.glob("escaped*")) == []


def test_a_roster_with_entities_is_refused_before_they_expand():
    laughs = (b'<?xml version="1.0"?><!DOCTYPE roster [<!ENTITY a "aaaaaaaaaa">'
              b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
              b'<roster gameSystemName="10th"><forces><force><selections>'
              b'<selection name="&b;" type="model" number="1"/></selections></force></forces></roster>')
    with pytest.raises(ArmyListError, match="declares a DOCTYPE or entities"):
        parse_list(laughs)


@pytest.mark.skipif(not LISTS.exists(), reason="the shared corpus is not beside the checkout")
def test_ultramarines_rosz_matched_to_10th_edition_datasheets(lists_db):
    import duckdb

    from pipeline.lists.match import match_list

    army = read_list(LISTS / "battlescribe" / "Ultramarines_10E.rosz")
    # the catalogue "Imperium - Adeptus Astartes - Ultramarines"; Adeptus Astartes are the Space Marines
    assert (army.faction, army.edition, army.declared_points) == ("Adeptus Astartes - Ultramarines", 10, 810)
    # BattleScribe records no Attached units (the Leaders are units of their own)
    assert army.attachments == ()
    tracks = army.units[8].models[0].wargear[0]
    assert (tracks.name, tracks.profile) == ("Armoured Tracks", ("Melee", "3", "4+", "6", "0", "1"))
    with duckdb.connect(str(lists_db), read_only=True) as con:
        matched = match_list(con, army, 10)
    assert (matched.faction_id, matched.unmatched) == ("space-marines", ())
    # the 10th-edition index names them Captain and Lieutenant: the faction's one datasheet whose
    # words are all in the printed name
    assert [(u.unit.name, u.datasheet_id, u.score) for u in matched.units[2:4]] == [
        ("Primaris Captain", "10e/space-marines/captain", 0.85),
        ("Primaris Lieutenant", "10e/space-marines/lieutenant", 0.85)]
    # the Impulsor's sheet calls its melee profile (Melee, A3, WS4+, S6, AP0, D1) "Armoured hull":
    # matched by the characteristics the roster prints
    impulsor = matched.units[8]
    assert (impulsor.datasheet_id, impulsor.models[0].wargear[0].matched, impulsor.models[0].wargear[0].score) == (
        "10e/space-marines/impulsor", "Armoured hull", 0.85)
    assert matched.units[5].datasheet_id == "10e/space-marines/razorback"  # the list's faction first
