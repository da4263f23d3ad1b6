"""BattleScribe game-system parsers: the shared rules of the 10th-edition .gst (XML) and the
11th-edition game system (JSON), on the real files of the corpus and on made-up snippets."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from pipeline.extractors.bsdata_gamesystem import parse_gst_json, parse_gst_xml, plain_rule_text, references
from schemas.records import DataFlag, DataGap, RuleReference, RuleText, Source
from tests.conftest import CORPUS

GST_10E = CORPUS / "bsdata-10e" / "Warhammer 40,000.gst"
GST_11E = CORPUS / "bsdata-11e" / "Warhammer 40,000.json"


def _source(edition: int, file: str, date: dt.date | None = None) -> Source:
    return Source(
        source_id=f"bsdata-{edition}e-gamesystem",
        title=f"BattleScribe game system, {edition}th edition",
        file=file,
        format="bsdata-gst-xml" if edition == 10 else "bsdata-gst-json",
        publisher="BSData",
        edition=edition,
        kind="core-rules",
        game_mode=None,
        version=None,
        version_date=date,
        origin="BSData",
    )


SOURCE_10E = _source(10, "bsdata-10e/Warhammer 40,000.gst", dt.date(2026, 5, 27))
SOURCE_11E = _source(11, "bsdata-11e/Warhammer 40,000.json", dt.date(2026, 7, 22))


def _texts(result) -> dict[str, RuleText]:
    return {r.rule_key: r for r in result.records if isinstance(r, RuleText)}


@pytest.fixture(scope="module")
def result_10e():
    if not GST_10E.exists():
        pytest.skip(f"corpus file {GST_10E} is not present (the corpus sits beside the checkout)")
    return parse_gst_xml(GST_10E.read_text(encoding="utf-8"), SOURCE_10E)


@pytest.fixture(scope="module")
def result_11e():
    if not GST_11E.exists():
        pytest.skip(f"corpus file {GST_11E} is not present (the corpus sits beside the checkout)")
    return parse_gst_json(GST_11E.read_text(encoding="utf-8"), SOURCE_11E)


# --- the real files ---------------------------------------------------------------------------


def test_10e_counts(result_10e):
    texts = _texts(result_10e)
    assert len(texts) == 33
    assert len(result_10e.records) == 33  # no references (10th edition cites pages), no gaps
    assert not result_10e.rejects and not result_10e.duplicates


def test_11e_counts(result_11e):
    texts = _texts(result_11e)
    assert len(texts) == 35  # 36 shared rules; Support has no description
    refs = [r for r in result_11e.records if isinstance(r, RuleReference)]
    assert len(refs) == 13
    assert not result_11e.rejects and not result_11e.duplicates


def test_provenance_and_keys(result_10e, result_11e):
    lethal_10e = _texts(result_10e)["lethal-hits"]
    assert lethal_10e.locator == "sharedRules/rule[@id='d1d1-611e-5191-1095']"
    assert (lethal_10e.title, lethal_10e.edition, lethal_10e.effective_date) == (
        "Lethal Hits",
        10,
        dt.date(2026, 5, 27),
    )
    assert lethal_10e.section is None and lethal_10e.game_mode is None
    lethal_11e = _texts(result_11e)["lethal-hits"]
    assert lethal_11e.locator == "gameSystem.sharedRules[?(@.id=='d1d1-611e-5191-1095')]"
    assert (lethal_11e.edition, lethal_11e.section) == (11, None)  # the file gives no section numbers
    assert _texts(result_10e)["anti"].title == "Anti-"
    assert _texts(result_11e)["anti"].title == "Anti"


def test_lethal_hits_is_automatic_in_10th_and_a_choice_in_11th(result_10e, result_11e):
    assert "a Critical Hit automatically wounds the target" in _texts(result_10e)["lethal-hits"].text
    text_11e = _texts(result_11e)["lethal-hits"].text
    assert text_11e.startswith(
        "Each time an attack made with a [LETHAL HITS] weapon results in a critical hit, "
        "you can choose for that attack to automatically wound the target."
    )
    assert "Designer’s Note: Choosing to automatically wound" in text_11e


@pytest.mark.parametrize(
    "key, text_10e, text_11e",
    [
        (
            "feel-no-pain",
            "Some models have 'Feel No Pain x+' listed",
            "This ability always takes the form Feel No Pain X+.",
        ),
        ("deadly-demise", "Some models have 'Deadly Demise x' listed", "that model suffers a deadly demise;"),
        ("devastating-wounds", "no saving throw of any kind can be made", "the attack sequence for that attack ends"),
    ],
)
def test_core_abilities_in_both_editions(result_10e, result_11e, key, text_10e, text_11e):
    assert text_10e in _texts(result_10e)[key].text
    assert text_11e in _texts(result_11e)[key].text


def test_close_quarters_and_cleave_only_in_11th(result_10e, result_11e):
    assert {"close-quarters", "cleave"} <= set(_texts(result_11e))
    assert not {"close-quarters", "cleave"} & set(_texts(result_10e))
    assert "[PISTOL] and [CLOSE-QUARTERS] are identical for all rules purposes." in _texts(result_11e)["pistol"].text


def test_no_markup_left(result_10e, result_11e):
    for result in (result_10e, result_11e):
        for record in _texts(result).values():
            assert "^^" not in record.text and "*" not in record.text, record.rule_key
            assert "\u00a0" not in record.text and "\n\n\n" not in record.text, record.rule_key
            assert record.text == record.text.strip()


def test_paragraphs_and_lists_kept(result_10e):
    text = _texts(result_10e)["hazardous"].text
    assert "that test is failed. For each failed test" in text
    assert "\n\n■ If possible, select one model" in text
    assert "\n■ Otherwise, select one Character model" in text


def test_support_gives_a_data_gap(result_11e):
    gaps = [r for r in result_11e.records if isinstance(r, DataGap)]
    assert gaps == [
        DataGap(
            source_id="bsdata-11e-gamesystem",
            locator="gameSystem.sharedRules[?(@.id=='3342-2180-9c5d-925f')]",
            table_name="rule_texts",
            entity_key="support",
            field="text",
            reason="empty description in the source",
        )
    ]
    assert "support" not in _texts(result_11e)


def test_11e_references(result_11e):
    refs = {
        (r.rule_key, r.referenced_section): r.referenced_title
        for r in result_11e.records
        if isinstance(r, RuleReference)
    }
    assert refs[("hazardous", "06.03")] == "hazard rolls"
    assert refs[("deep-strike", "20.04")] == "ingress move"
    assert refs[("stealth", "13.08")] == "benefit of cover"
    assert refs[("extra-attacks", "04.01")] == "Select Weapons step"
    assert refs[("fights-first", "12.04")] == "Resolve Fights First Combats step"
    assert refs[("indirect-fire", "10.07")] == ""
    assert ("leader", "12") not in refs  # "(pg 12)" is a page, not a section


# --- made-up snippets -------------------------------------------------------------------------

_NS = "http://www.battlescribe.net/schema/gameSystemSchema"


def _gst(rules: str, name: str = "Warhammer 40,000 10th Edition") -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        f'<gameSystem xmlns="{_NS}" id="sys-1" name="{name}" revision="1" battleScribeVersion="2.03" type="gameSystem">'
        f"<sharedRules>{rules}</sharedRules></gameSystem>"
    )


def _game_json(rules: list, name: str = "Warhammer 40,000 11th Edition") -> str:
    return json.dumps({"gameSystem": {"id": "sys-1", "name": name, "sharedRules": rules}})


def test_markup_forms():
    raw = (
        "An ^^Adepta Sororitas^^ unit, **^^VEHICLE^^**, ^^**FLY**^^ and **[LETHAL HITS]** weapons.\u00a0\n\n\n"
        "***Example:** a **critical hit** (05.01).*\n"
        "***Example: a **[BLAST 2]** weapon.*"
    )
    assert plain_rule_text(raw) == (
        "An Adepta Sororitas unit, VEHICLE, FLY and [LETHAL HITS] weapons.\n\n"
        "Example: a critical hit (05.01).\n"
        "Example: a [BLAST 2] weapon."
    )
    assert references(raw) == [("critical hit", "05.01")]


def test_xml_snippet_parameters_duplicates_and_gaps():
    rules = (
        '<rule id="a" name="Feel No Pain X"><description>Some models have **Feel No Pain x+**.</description></rule>'
        '<rule id="b" name="Deadly Demise D3"><description>On a 6, ^^**Vehicle**^^.</description></rule>'
        '<rule id="c" name="Feel No Pain"><description>Some models have **Feel No Pain x+**.</description></rule>'
        '<rule id="d" name="Sustained Hits"><description>  </description></rule>'
        '<rule id="e" name="Sustained Hits X"><description/></rule>'
        '<rule id="f" name="Anti-X Y+"><description>Anti.</description></rule>'
        '<rule id="g" name="Anti-"><description>Another anti text.</description></rule>'
        '<rule id="h"><description>Nameless.</description></rule>'
        '<rule id="i" name="[RAPID FIRE]24.30"><description>Rapid.</description></rule>'
    )
    result = parse_gst_xml(_gst(rules), SOURCE_10E)
    texts = _texts(result)
    assert {k: (t.title, t.section) for k, t in texts.items()} == {
        "feel-no-pain": ("Feel No Pain X", None),
        "deadly-demise": ("Deadly Demise D3", None),
        "anti": ("Anti-X Y+", None),
        "rapid-fire": ("[RAPID FIRE]24.30", "24.30"),
    }
    assert texts["deadly-demise"].text == "On a 6, Vehicle."
    assert texts["feel-no-pain"].locator == "sharedRules/rule[@id='a']"
    # "Feel No Pain" repeats "Feel No Pain X" word for word; the second empty Sustained Hits too.
    assert result.duplicates == {"rule_texts": 2}
    assert [g.entity_key for g in result.records if isinstance(g, DataGap)] == ["sustained-hits"]
    assert [(r.locator, r.reason) for r in result.rejects] == [
        (
            "sharedRules/rule[@id='g']",
            "rule 'anti' repeated with a different text; the first, at sharedRules/rule[@id='f'], is kept",
        ),
        ("sharedRules/rule[@id='h']", "shared rule without a name"),
    ]
    assert "Nameless." in result.rejects[1].raw_text


def test_xml_rule_without_id_is_located_by_position():
    result = parse_gst_xml(_gst('<rule name="Heavy"><description>Heavy.</description></rule>'), SOURCE_10E)
    assert _texts(result)["heavy"].locator == "sharedRules/rule[1]"


def test_xml_unreadable_file_is_one_reject():
    result = parse_gst_xml("<gameSystem><sharedRules>", SOURCE_10E)
    assert not result.records
    [reject] = result.rejects
    assert reject.locator == "line 1" and reject.reason.startswith("not well-formed XML")
    result = parse_gst_xml(f'<catalogue xmlns="{_NS}"/>', SOURCE_10E)
    assert [r.reason for r in result.rejects] == ["root element is <catalogue>, expected <gameSystem> (a .gst file)"]


def test_edition_mismatch_is_flagged():
    result = parse_gst_xml(_gst("", name="Warhammer 40,000 11th Edition"), SOURCE_10E)
    [flag] = result.records
    assert isinstance(flag, DataFlag) and flag.flag == "edition_mismatch"


def test_json_snippet_forms():
    rules = [
        {"id": "a", "name": "Support", "description": None},
        {"id": "b", "name": "Hover", "description": {"$text": "Each time this unit **takes to the skies** (21.03)."}},
        {"id": "c", "name": "Heavy", "description": 3},
        "not an object",
        {"id": "d", "name": "Twin-linked", "description": "Re-roll the **wound roll** (05.02) (05.02)."},
        {"id": "e", "name": "Twin-linked", "description": "Re-roll the **wound roll** (05.02) (05.02)."},
    ]
    result = parse_gst_json(_game_json(rules), SOURCE_11E)
    texts = _texts(result)
    assert sorted(texts) == ["hover", "twin-linked"]
    assert texts["hover"].text == "Each time this unit takes to the skies (21.03)."
    assert [g.entity_key for g in result.records if isinstance(g, DataGap)] == ["support"]
    refs = [
        (r.rule_key, r.referenced_title, r.referenced_section) for r in result.records if isinstance(r, RuleReference)
    ]
    assert refs == [("hover", "takes to the skies", "21.03"), ("twin-linked", "wound roll", "05.02")]
    assert result.duplicates == {"rule_texts": 1, "rule_references": 1}
    assert [(r.locator, r.reason) for r in result.rejects] == [
        ("gameSystem.sharedRules[?(@.id=='c')]", "description is a JSON int, expected text"),
        ("gameSystem.sharedRules[3]", "shared rule is not a JSON object"),
    ]


def test_json_unreadable_file_is_one_reject():
    assert [r.reason for r in parse_gst_json("{", SOURCE_11E).rejects][0].startswith("not valid JSON")
    assert [r.reason for r in parse_gst_json("[]", SOURCE_11E).rejects] == [
        "no gameSystem object at the top level (a game-system file)"
    ]
