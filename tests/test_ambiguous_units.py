"""A datasheet name printed by several factions (``query.find_datasheet``): the faction whose own
datasheet it is wins over one that borrows it; with no such signal, an error lists the candidates."""

from __future__ import annotations

import duckdb
import pytest

from pipeline import query
from pipeline.errors import InputError

# (datasheet id, name, faction, faction keywords): as the Wahapedia export prints them
SHEETS = [
    ("10e/chaos-space-marines/plague-marines", "Plague Marines", "chaos-space-marines", ["DEATH GUARD", "HERETIC ASTARTES"]),
    ("10e/death-guard/plague-marines", "Plague Marines", "death-guard", ["DEATH GUARD"]),
    ("10e/chaos-space-marines/chaos-rhino", "Chaos Rhino", "chaos-space-marines", ["HERETIC ASTARTES"]),
    ("10e/chaos-space-marines/legionaries", "Legionaries", "chaos-space-marines", ["HERETIC ASTARTES"]),
    ("10e/death-guard/poxwalkers", "Poxwalkers", "death-guard", ["DEATH GUARD"]),
    ("10e/chaos-daemons/bloodletters", "Bloodletters", "chaos-daemons", ["LEGIONES DAEMONICA"]),
    ("10e/chaos-daemons/bloodthirster", "Bloodthirster", "chaos-daemons", ["LEGIONES DAEMONICA"]),
    ("10e/world-eaters/bloodletters", "Bloodletters", "world-eaters", ["BLOOD LEGIONS"]),
    ("10e/world-eaters/berzerkers", "Khorne Berzerkers", "world-eaters", ["WORLD EATERS"]),
    ("10e/world-eaters/angron", "Angron", "world-eaters", ["WORLD EATERS"]),
    ("10e/grey-knights/land-raider", "Land Raider", "grey-knights", ["GREY KNIGHTS"]),
    ("10e/space-marines/land-raider", "Land Raider", "space-marines", ["ADEPTUS ASTARTES"]),
]


@pytest.fixture()
def con():
    con = duckdb.connect()
    con.execute("CREATE TABLE datasheets (datasheet_id VARCHAR, name VARCHAR, faction_id VARCHAR, edition INTEGER, "
                "game_mode VARCHAR)")
    con.execute("CREATE TABLE keywords (datasheet_id VARCHAR, keyword VARCHAR, is_faction_keyword BOOLEAN)")
    for sheet_id, name, faction, keywords in SHEETS:
        con.execute("INSERT INTO datasheets VALUES (?, ?, ?, 10, NULL)", [sheet_id, name, faction])
        for k in keywords:
            con.execute("INSERT INTO keywords VALUES (?, ?, true)", [sheet_id, k])
    yield con
    con.close()


def test_a_copy_carrying_another_faction_s_keyword_loses_to_that_faction_s_own(con):
    # alphabetically chaos-space-marines came first; its copy carries DEATH GUARD
    sheet, others = query.find_datasheet(con, "Plague Marines", edition=10)
    assert sheet["datasheet_id"] == "10e/death-guard/plague-marines"
    assert [o["datasheet_id"] for o in others] == ["10e/chaos-space-marines/plague-marines"]


def test_a_copy_without_its_own_faction_s_keyword_is_borrowed(con):
    # the World Eaters' Bloodletters lack WORLD EATERS (the keyword of most World Eaters sheets)
    sheet, others = query.find_datasheet(con, "Bloodletters", edition=10)
    assert sheet["datasheet_id"] == "10e/chaos-daemons/bloodletters"
    assert [o["datasheet_id"] for o in others] == ["10e/world-eaters/bloodletters"]


def test_no_signal_is_an_error_listing_the_candidates_and_a_datasheet_id_chooses(con):
    with pytest.raises(InputError) as caught:
        query.find_datasheet(con, "Land Raider", edition=10)
    assert str(caught.value) == (
        "'Land Raider' names datasheets of 2 factions and none is another's copy: 10e/grey-knights/land-raider, "
        "10e/space-marines/land-raider; name one by its datasheet id (e.g. '10e/grey-knights/land-raider')")
    sheet, _ = query.find_datasheet(con, "10e/space-marines/land-raider", edition=10)
    assert sheet["faction_id"] == "space-marines"
