"""Case P28, BattleScribe part: categories split into keywords and faction keywords."""

import pytest

from pipeline.extractors.bsdata_categories import classify_categories, game_system_factions
from tests.conftest import CORPUS

GST = CORPUS / "bsdata-10e" / "Warhammer 40,000.gst"


@pytest.fixture(scope="module")
def factions() -> frozenset[str]:
    if not GST.exists():
        pytest.skip("the shared corpus is not beside the checkout")
    return game_system_factions(GST.read_text(encoding="utf-8"))


def test_game_system_defines_the_faction_keywords(factions):
    assert len(factions) == 35
    assert {"ASURYANI", "TYRANIDS", "ASTRA MILITARUM", "ADEPTUS ASTARTES"} <= factions
    assert "INFANTRY" not in factions


def test_p28_prefix_stripped_and_bare_faction_name_classed_by_the_game_system(factions):
    got = classify_categories(["Faction: Adeptus Astartes", "Infantry", "Asuryani"], factions)
    assert set(got.faction_keywords) == {"ADEPTUS ASTARTES", "ASURYANI"}
    assert got.keywords == ("INFANTRY",)
    assert got.flags == ()


def test_p28_plain_keyword_that_is_no_faction_stays_a_keyword(factions):
    got = classify_categories(["Infantry", "Battleline", "Imperium"], factions)
    assert got.faction_keywords == ()
    assert got.keywords == ("INFANTRY", "BATTLELINE", "IMPERIUM")
    assert got.flags == ("missing_faction_keyword",)


def test_repeats_and_spacing_collapse():
    got = classify_categories(["Faction:  Tyranids", "faction: Tyranids".title(), "Infantry", "INFANTRY"],
                              frozenset())
    assert got == (("TYRANIDS",), ("INFANTRY",), ())
