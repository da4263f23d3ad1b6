"""Rule aliases: the shipped table, the joins the DESIGN notes require, and the table's checks."""

from __future__ import annotations

import pytest

from pipeline.aliases import (
    AliasFileError,
    PartOf,
    canonical_rule_key,
    load_aliases,
    part_of,
    read_alias_table,
    rule_key_from_name,
)
from pipeline.errors import NormaliseError, NotFoundError
from pipeline.extractors.bsdata_gamesystem import parse_gst_json, parse_gst_xml
from schemas.records import RuleAlias, RulePart
from tests.conftest import CORPUS, RAW
from tests.test_parser_bsdata_gamesystem import GST_10E, GST_11E, SOURCE_10E, SOURCE_11E


def test_every_alias_resolves_both_ways_to_its_canonical_key():
    aliases = [a for a in load_aliases() if isinstance(a, RuleAlias)]
    assert aliases
    assert len({a.alias_key for a in aliases}) == len(aliases)
    for alias in aliases:
        assert canonical_rule_key(alias.alias_key) == alias.rule_key
        assert canonical_rule_key(alias.rule_key) == alias.rule_key
        assert alias.note


@pytest.mark.parametrize(
    "one, other, key",
    [
        ("Lethal Hits", "24.23", "lethal-hits"),
        ("[LETHAL HITS]", "[LETHAL HITS]24.23", "lethal-hits"),
        ("Hazardous", "24.15", "hazardous"),
        ("Hazardous test", "hazard roll", "hazard-rolls"),
        ("Hazardous test", "06.03", "hazard-rolls"),
        ("06.03 Hazard Rolls", "hazard rolls", "hazard-rolls"),
        ("Engagement Range", "03.04", "engagement"),
        ("engaged", "unengaged", "engagement"),
        ("Benefit of Cover", "13.08", "benefit-of-cover"),
        ("Saving Throw", "Save Rolls", "save-rolls"),
        ("Pistol", "Close-quarters", "close-quarters"),
        ("[PISTOL]", "[CLOSE-QUARTERS]", "close-quarters"),
        ("Battle-shock test", "battle-shock roll", "battle-shock-rolls"),
        ("Battle-shock test", "01.07", "battle-shock-rolls"),
        ("01.07.02", "01.07", "battle-shock-rolls"),
        ("Devastating Wounds", "24.10", "devastating-wounds"),
        ("Blast", "24.05", "blast"),
        ("Rapid Fire X", "24.30", "rapid-fire"),
        ("Stealth", "STEALTH24.33", "stealth"),
        ("Ignores Cover", "24.18", "ignores-cover"),
        ("Fights First", "24.13", "fights-first"),
        ("Fire Overwatch", "15.08", "fire-overwatch"),
        ("Advance move", "ADVANCE MOVE09.06", "advance-move"),
    ],
)
def test_required_joins(one, other, key):
    assert canonical_rule_key(one) == canonical_rule_key(other) == key


@pytest.mark.parametrize(
    "name, key",
    [
        ("Feel No Pain X", "feel-no-pain"),
        ("Feel No Pain 5+", "feel-no-pain"),
        ("Deadly Demise D3", "deadly-demise"),
        ("Deadly Demise D6+1", "deadly-demise"),
        ("Sustained Hits 2", "sustained-hits"),
        ("[SUSTAINED HITS X]", "sustained-hits"),
        ("Rapid Fire X", "rapid-fire"),
        ("Melta 2", "melta"),
        ("Anti-X", "anti"),
        ("Anti-Infantry 4+", "anti"),
        ("[ANTI-KEYWORD X+]", "anti"),
        ("Anti-", "anti"),
        ('Scouts 6"', "scouts"),
        ('Lone Operative X"', "lone-operative"),
        ("Twin-linked", "twin-linked"),
        ("Super-Heavy Walker", "super-heavy-walker"),
    ],
)
def test_rule_key_drops_the_parameter(name, key):
    assert rule_key_from_name(name) == key


def test_unknown_names_are_their_own_key_and_unknown_sections_are_errors():
    assert canonical_rule_key("Acts of Faith") == "acts-of-faith"
    with pytest.raises(NotFoundError, match=r"no rule with 11th-edition section 99\.99 .*add it"):
        canonical_rule_key("99.99")
    assert canonical_rule_key("[LETHAL HITS]99.99") == "lethal-hits"  # the name still joins
    with pytest.raises(NormaliseError, match="has no letters"):
        canonical_rule_key("+++")


def test_bsdata_core_abilities_join_across_editions():
    """Every 10th-edition shared rule of BSData has an 11th-edition counterpart by canonical key."""
    if not (GST_10E.exists() and GST_11E.exists()):
        pytest.skip(f"corpus files are not present under {CORPUS}")
    keys_10e = {
        r.rule_key
        for r in parse_gst_xml(GST_10E.read_text(encoding="utf-8"), SOURCE_10E).records
        if r.__table__ == "rule_texts"
    }
    keys_11e = {
        r.rule_key
        for r in parse_gst_json(GST_11E.read_text(encoding="utf-8"), SOURCE_11E).records
        if r.__table__ == "rule_texts"
    }
    canonical_10e = {canonical_rule_key(k) for k in keys_10e}
    canonical_11e = {canonical_rule_key(k) for k in keys_11e}
    assert canonical_10e <= canonical_11e
    assert canonical_11e - canonical_10e == {"cleave"}
    assert canonical_rule_key("pistol") in canonical_10e & canonical_11e  # via Close-quarters


def test_11e_bsdata_wording_matches_the_wahapedia_11e_page():
    """The cleaned BSData text equals the Wahapedia 11th-edition page line for the same section."""
    page = RAW / "wahapedia-11e-core-rules-astra-militarum-page.txt"
    if not (GST_11E.exists() and page.exists()):
        pytest.skip("corpus or raw page not present")
    lines = set(page.read_text(encoding="utf-8").splitlines())
    texts = {
        r.rule_key: r.text
        for r in parse_gst_json(GST_11E.read_text(encoding="utf-8"), SOURCE_11E).records
        if r.__table__ == "rule_texts"
    }
    for key in ("hazardous", "stealth", "ignores-cover"):
        assert texts[key] in lines, key


_GOOD = """
[[rule]]
key = "hazard-rolls"
section = "06.03"
title = "Hazard Rolls"
aliases = [{ name = "Hazardous test", edition = 10 }]
"""


def test_read_alias_table():
    table = read_alias_table(_GOOD)
    assert table.aliases == {"06.03": "hazard-rolls", "hazardous-test": "hazard-rolls"}
    assert [a.note for a in table.records] == [
        "11th edition section 06.03 Hazard Rolls",
        "10th edition name 'Hazardous test'",
    ]


@pytest.mark.parametrize(
    "name, edition, rule_key",
    [
        # the 10th edition words the test/roll in another rule; the 11th has a rule of its own
        ("Hazardous test", 10, "hazardous"),
        ("hazard roll", 10, "hazardous"),
        ("06.03 Hazard Rolls", 10, "hazardous"),
        ("Hazardous test", 11, None),
        ("Battle-shock test", 10, "battle-shock"),
        ("battle-shock roll", 10, "battle-shock"),
        ("01.07", 10, "battle-shock"),
        ("Battle-shock test", 11, None),
        ("Hazardous", 10, None),
        ("Lethal Hits", 10, None),
        ("99.99", 10, None),
    ],
)
def test_part_of_in_the_shipped_table(name, edition, rule_key):
    found = part_of(name, edition)
    assert (found.rule_key if found else None) == rule_key


def test_read_part_of():
    table = read_alias_table(_GOOD + 'part_of = [{ edition = 10, rule = "Hazardous", note = "n" }]\n')
    assert table.part_of == {("hazard-rolls", 10): PartOf("hazard-rolls", 10, "Hazardous", "hazardous", "n")}
    assert table.aliases == {"06.03": "hazard-rolls", "hazardous-test": "hazard-rolls"}  # no alias row


@pytest.mark.parametrize(
    "text, message",
    [
        ("[[rule]]\nkey = 'a'\npart_of = [{ edition = 10, name = 'b' }]\n", r"unknown fields \['name'\]"),
        ("[[rule]]\nkey = 'a'\npart_of = [{ edition = 9, rule = 'b' }]\n", "edition must be 10 or 11"),
        ("[[rule]]\nkey = 'a'\npart_of = [{ edition = 10 }]\n", "needs the rule's name"),
        ("[[rule]]\nkey = 'a'\npart_of = ['b']\n", "write { edition = 10"),
        ("[[rule]]\nkey = 'a'\naliases = [{ name = 'c' }]\npart_of = [{ edition = 10, rule = 'C' }]\n",
         "is this rule itself"),
        ("[[rule]]\nkey = 'a'\npart_of = [{ edition = 10, rule = 'b' }, { edition = 10, rule = 'c' }]\n",
         "given twice for edition 10"),
        ("[[rule]]\nkey = 'a'\npart_of = [{ edition = 10, rule = 'b' }]\n"
         "[[rule]]\nkey = 'b'\npart_of = [{ edition = 10, rule = 'c' }]\n", "is itself part of another rule"),
    ],
)
def test_malformed_part_of(text, message):
    with pytest.raises(AliasFileError, match=message):
        read_alias_table(text, where="test.toml")


@pytest.mark.parametrize(
    "text, message",
    [
        ("[[rule]]\nkey = 'Hazard Rolls'\n", "key must be a slug"),
        ("[[rule]]\nkey = 'a'\nsection = '6.3'\n", "section must be a string such as '24.23'"),
        ("[[rule]]\nkey = 'a'\ncolour = 'red'\n", r"unknown fields \['colour'\]"),
        ("[[rule]]\nkey = 'a'\naliases = [{ name = 'b', edition = 9 }]\n", "edition must be 10 or 11"),
        ("[[rule]]\nkey = 'a'\naliases = [{ name = 'A' }]\n", "has the rule's own key"),
        (
            "[[rule]]\nkey = 'a'\naliases = [{ name = 'c' }]\n[[rule]]\nkey = 'b'\naliases = [{ name = 'c' }]\n",
            "already given for 'a'",
        ),
        ("[[rule]]\nkey = 'a'\naliases = [{ name = 'b' }]\n[[rule]]\nkey = 'b'\n", "aliases never chain"),
        ("[[rule]]\nkey = 'a'\n[[rule]]\nkey = 'a'\n", "declared twice"),
        ("[[rule]\n", "not valid TOML"),
    ],
)
def test_malformed_alias_tables(text, message):
    with pytest.raises(AliasFileError, match=message):
        read_alias_table(text, where="test.toml")


def test_part_of_entries_are_rows_of_rule_parts():
    parts = {(p.rule_key, p.edition): p for p in load_aliases() if isinstance(p, RulePart)}
    assert set(parts) == {("hazard-rolls", 10), ("battle-shock-rolls", 10)}
    hazard = parts[("hazard-rolls", 10)]
    assert (hazard.part_of_rule_key, hazard.part_of_rule_name) == ("hazardous", "Hazardous")
    assert hazard.note.startswith("the Hazardous ability says how to take a Hazardous test")
