"""Wahapedia 11th-edition rule page parser: the seed page, made-up snippets, the golden file."""

from __future__ import annotations

import datetime as dt

import pytest

from pipeline.extractors.wahapedia_rules_11e import (
    Header,
    heading_style,
    line_dispositions,
    parse,
    read_header,
)
from schemas.records import DataGap, RuleReference, RuleText, Source, Stratagem
from tests.conftest import assert_golden, records_as_json, seed_source

SOURCE_ID = "wahapedia-11e-rules-astra-militarum"
NOTICE = (
    "This datasheet does not meet the selection criteria (see Filter combo-box or Settings tab)."
)


@pytest.fixture(scope="module")
def seed():
    text, source = seed_source(SOURCE_ID)
    return text, source, parse(text, source)


def _of(result, cls):
    return [r for r in result.records if isinstance(r, cls)]


def _rule(result, rule_key: str) -> RuleText:
    (rule,) = [r for r in _of(result, RuleText) if r.rule_key == rule_key]
    return rule


# --- the seed page ------------------------------------------------------------------------------

#: Every numbered section of the page, in page order: (section, title, rule_key).
NUMBERED = [
    ("24.30", "RAPID FIRE", "rapid-fire"),
    ("17.02", "Frame", "frame"),
    ("03.04", "Engagement", "engagement"),
    ("09.06", "ADVANCE MOVE", "advance-move"),
    ("06.03", "Hazard Rolls", "hazard-rolls"),
    ("09.07", "FALL-BACK MOVE", "fall-back-move"),
    ("09.05", "NORMAL MOVE", "normal-move"),
    ("20.04", "INGRESS MOVE", "ingress-move"),
    ("09.04", "REMAIN STATIONARY", "remain-stationary"),
    ("05.04.04", "Destroyed", "destroyed"),
    ("01.04.03", "As Close As Possible", "as-close-as-possible"),
    ("01.02.02", "Persisting Rules Effects", "persisting-rules-effects"),
    ("18.03", "Disembarking", "disembarking"),
    ("18.04", "DISEMBARK MOVE", "disembark-move"),
    ("18.05", "EMERGENCY DISEMBARK MOVE", "emergency-disembark-move"),
    ("06.01", "Visibility", "visibility"),
    ("24.23", "LETHAL HITS", "lethal-hits"),
    ("13.08", "Benefit of Cover", "benefit-of-cover"),
    ("24.33", "STEALTH", "stealth"),
    ("15.09", "SNAP SHOOTING", "snap-shooting"),
    ("15.08", "FIRE OVERWATCH", "fire-overwatch"),
    ("24.05", "BLAST", "blast"),
    ("06.02.01", "Normal Damage", "normal-damage"),
    ("06.02", "Mortal Wounds", "mortal-wounds"),
    ("24.10", "DEVASTATING WOUNDS", "devastating-wounds"),
    ("05.02.01", "Multiple Toughness Characteristics", "multiple-toughness-characteristics"),
    ("24.15", "HAZARDOUS", "hazardous"),
    ("01.07.01", "Battlefield Morale", "battlefield-morale"),
    ("01.07.02", "Battle-shock Test", "battle-shock-test"),
    ("01.07", "Battle-shock Rolls", "battle-shock-rolls"),
    ("24.18", "IGNORES COVER", "ignores-cover"),
    (
        "01.05.01",
        "Automatically Successful/Passes/Hits/Wounds",
        "automatically-successful-passes-hits-wounds",
    ),
    ("15.04", "INSANE BRAVERY", "insane-bravery"),
    ("24.13", "FIGHTS FIRST", "fights-first"),
]

#: Rules of the page without a section number, in page order: (line, title, rule_key).
NUMBERLESS = [
    (41, "Voice of Command", "voice-of-command"),
    (79, "DEEP STRIKE", "deep-strike"),
    (287, "Moving a Model in a Straight Line", "moving-a-model-in-a-straight-line"),
    (291, "Rotating a Model", "rotating-a-model"),
    (426, "Hit Roll", "hit-roll"),
    (603, "Wound Roll", "wound-roll"),
    (662, "Save Rolls", "save-rolls"),
]


def test_numbered_sections_exact(seed):
    _, _, result = seed
    got = [(r.section, r.title, r.rule_key) for r in _of(result, RuleText) if r.section]
    assert got == NUMBERED


def test_numberless_rules_exact(seed):
    _, _, result = seed
    got = [
        (int(r.locator.split()[1]), r.title, r.rule_key)
        for r in _of(result, RuleText)
        if r.section is None
    ]
    assert got == NUMBERLESS


def test_rule_text_provenance(seed):
    _, source, result = seed
    rule = _rule(result, "lethal-hits")
    assert (rule.source_id, rule.locator, rule.edition, rule.game_mode, rule.effective_date) == (
        SOURCE_ID,
        "line 418",
        11,
        None,
        source.version_date,
    )
    assert {(r.edition, r.game_mode) for r in _of(result, RuleText)} == {(11, None)}


def test_lethal_hits_text_is_optional_with_designers_note(seed):
    text = _rule(seed[2], "lethal-hits").text
    assert text.startswith("Many deadly weapons can inflict fatal injuries on any foe")
    assert "you can choose for that attack to automatically wound the target" in text
    assert "Designer’s Note: Choosing to automatically wound the target" in text
    assert text.endswith("such as [DEVASTATING WOUNDS].")
    assert "Hit Roll" not in text


@pytest.mark.parametrize(
    ("rule_key", "start", "end"),
    [
        ("rapid-fire", "Rapid fire weapons are capable", "(for a total of two for that weapon)."),
        (
            "hazard-rolls",
            "To make a hazard roll for a unit, roll one D6: on a 1-2,",
            "make all of those rolls simultaneously.",
        ),
        (
            "benefit-of-cover",
            "Each time a ranged attack targets a unit, if every model",
            "worsen the BS characteristic of that attack by 1.",
        ),
        (
            "stealth",
            "The stealthiest warriors",
            "that unit has the benefit of cover against that attack (13.08).",
        ),
        (
            "engagement",
            'A model’s engagement range is the area of the battlefield within 2"',
            "are therefore engaged with each other.",
        ),
        (
            "advance-move",
            "MAXIMUM DISTANCE: Advance roll + your unit’s M characteristic.",
            "not eligible to declare a charge or start an action.",
        ),
        (
            "fights-first",
            "Those possessed of lightning-fast reactions",
            "Resolve Fights First Combats step in the Fight phase (12.04).",
        ),
        (
            "battlefield-morale",
            "The morale and organisation of troops",
            "by making a leadership roll.",
        ),
        (
            "disembarking",
            "In the active player’s Movement phase",
            "with each unit embarked within it.",
        ),
        (
            "mortal-wounds",
            "Some attacks or rules inflict mortal wounds",
            "then resolve all of the mortal wounds.",
        ),
        (
            "deep-strike",
            "Some units make their way to battle",
            'more than 9" horizontally away from all enemy models.',
        ),
        (
            "voice-of-command",
            "Raised and trained to instil",
            "Improve the Leadership and Objective Control characteristics of models in this unit by 1.",
        ),
        (
            "moving-a-model-in-a-straight-line",
            "Each time you move a model in a straight line",
            "maximum distance of that move type.",
        ),
        (
            "save-rolls",
            "The opposing player resolves the following sequence:",
            "by rolling one D6.",
        ),
        (
            "fire-overwatch",
            "1CP\n\nCore Stratagem\n\nA hail of fire",
            "EFFECT: Your unit shoots using snap shooting.",
        ),
    ],
)
def test_text_starts_and_ends(seed, rule_key, start, end):
    text = _rule(seed[2], rule_key).text
    assert text.startswith(start)
    assert text.endswith(end)


@pytest.mark.parametrize(
    ("rule_key", "sub_heading"),
    [
        ("engagement", "\n\nWHAT IS ENGAGEMENT?\n\n"),
        ("engagement", "\n\nENGAGEMENT\n\nThese two units"),
        ("hit-roll", "\n\nCRITICAL HITS\n\nCritical hits are still hits."),
        ("wound-roll", "\n\nCRITICAL WOUNDS\n\n"),
        ("mortal-wounds", "\n\nMORTAL WOUNDS AND NORMAL DAMAGE\nWhen resolving attack dice"),
        ("disembark-move", "\n\nRAPID DISEMBARK\n\nWhen a unit uses the rapid disembark mode"),
        ("visibility", "\n\nModel Visible\n\n"),
        ("visibility", "\n\nUnit Fully Visible\n\n"),
        ("voice-of-command", '\n\nMove! Move! Move!\n\n+3"\n\nAdd 3"'),
        ("voice-of-command", "\n\nFirst Rank, Fire! Second Rank, Fire!\n\n"),
        ("voice-of-command", "\n\nDuty and Honour!\n\nImprove the Leadership"),
    ],
)
def test_sub_headings_stay_in_their_section(seed, rule_key, sub_heading):
    assert sub_heading in _rule(seed[2], rule_key).text


def test_tables_keep_cells_and_lost_numbers(seed):
    wound = _rule(seed[2], "wound-roll").text
    assert "ATTACK’S STRENGTH VS TARGET’S TOUGHNESS | REQUIRED RESULT" in wound
    assert "Strength is TWICE (or more than twice) the Toughness | +\n" in wound
    assert "Unmodified | CRITICAL WOUND" in wound
    hit = _rule(seed[2], "hit-roll").text
    assert "Equal to or greater than that attack’s BS/WS characteristic | HIT" in hit


def test_no_boilerplate_or_see_also_in_texts(seed):
    for rule in _of(seed[2], RuleText):
        for fragment in (
            "SEE ALSO",
            "selection criteria",
            "keyword is used",
            "keywords are used",
            "and others",
            "Army List",
        ):
            assert fragment not in rule.text, (rule.rule_key, fragment)


def test_see_also_references_exact(seed):
    got = [
        (r.rule_key, r.referenced_title, r.referenced_section, r.locator)
        for r in _of(seed[2], RuleReference)
    ]
    assert got == [
        ("disembarking", "Persisting Rules Effects", "01.02.02", "line 336"),
        ("disembarking", "Hazard Rolls", "06.03", "line 337"),
        ("mortal-wounds", "Normal Damage", "06.02.01", "line 584"),
        ("wound-roll", "Multiple Toughness Characteristics", "05.02.01", "line 624"),
        ("battle-shock-rolls", "Battlefield Morale", "01.07.01", "line 655"),
        ("battle-shock-rolls", "Battle-shock Test", "01.07.02", "line 656"),
    ]


def test_boilerplate_duplicates_and_rejects(seed):
    _, _, result = seed
    assert dict(result.boilerplate) == {
        "page title": 1,
        "empty link [ ]": 1,
        "selection criteria notice": 9,
        "keyword datasheet list": 96,
        "datasheet index": 34,
    }
    # BATTLEFIELD MORALE (repeats 01.07.01) and Duty and Honour! (repeats the Order).
    assert dict(result.duplicates) == {"rule_texts": 2}
    assert result.rejects == []
    assert sum(1 for r in _of(result, RuleText) if r.title.casefold() == "battlefield morale") == 1


def test_every_nonblank_line_is_accounted_for(seed):
    text, _, _ = seed
    dispositions = line_dispositions(text)
    nonblank = {n for n, line in enumerate(text.splitlines(), start=1) if line.strip()}
    assert set(dispositions) == nonblank
    assert dispositions[1] == "boilerplate: page title"
    assert dispositions[5] == dispositions[7] == "boilerplate: keyword datasheet list"
    assert [n for n, d in dispositions.items() if d == "duplicate"] == [658, 660, 675, 677]
    assert dispositions[582] == dispositions[584] == "rule_references"


def test_data_gaps_for_lost_table_numbers(seed):
    got = sorted((g.entity_key, g.field, g.locator, g.table_name) for g in _of(seed[2], DataGap))
    assert got == [
        ("hit-roll", "hit table unmodified roll values", "line 430", "rule_texts"),
        ("wound-roll", "wound table required results", "line 611", "rule_texts"),
        ("wound-roll", "wound table unmodified roll values", "line 607", "rule_texts"),
    ]
    (required,) = [g for g in _of(seed[2], DataGap) if g.field == "wound table required results"]
    assert required.reason.startswith("5 table rows print '+' without its number")


def test_core_stratagems(seed):
    got = {s.name: s for s in _of(seed[2], Stratagem)}
    assert set(got) == {"FIRE OVERWATCH", "INSANE BRAVERY"}
    fire = got["FIRE OVERWATCH"]
    assert fire.model_dump(exclude={"source_id"}) == {
        "locator": "line 506",
        "stratagem_id": "11e-core-fire-overwatch",
        "name": "FIRE OVERWATCH",
        "cp_cost": 1,
        "group": "Core",
        "type": "Stratagem",
        "edition": 11,
        "legend": "A hail of fire can drive back advancing foes.",
        "when": "End of your opponent’s Movement phase.",
        "target": "One friendly unengaged unit (excluding TITANIC units).",
        "effect": "Your unit shoots using snap shooting.",
        "restrictions": None,
    }
    bravery = got["INSANE BRAVERY"]
    assert (bravery.cp_cost, bravery.group, bravery.type) == (1, "Core", "Stratagem")
    assert bravery.when == (
        "Battle-shock step of your Command phase, just before you make a battle-shock roll for a friendly unit."
    )
    assert bravery.target == "That unit."
    assert bravery.effect == "That battle-shock roll is automatically successful."
    assert bravery.restrictions == "You cannot use this stratagem more than once per battle."
    assert _rule(seed[2], "insane-bravery").section == "15.04"


def test_golden(seed):
    _, _, result = seed
    assert_golden("wahapedia_rules_11e", records_as_json(result.records + result.rejects))


# --- made-up snippets ---------------------------------------------------------------------------

SNIPPET_SOURCE = Source(
    source_id="test-11e",
    title="test page",
    file="test.txt",
    format="wahapedia-rules-11e",
    publisher="test",
    edition=11,
    kind="core-rules",
    game_mode="matched",
    version=None,
    version_date=dt.date(2025, 6, 1),
    origin="made up",
)


def _parse(*lines: str):
    """Parse a made-up page: a title line, then the given lines separated by blank lines."""
    return parse("\n\n".join(["Made-up Page Title", *lines]) + "\n", SNIPPET_SOURCE)


def _titles(result) -> list[tuple[str | None, str]]:
    return [(r.section, r.title) for r in _of(result, RuleText)]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("[RAPID FIRE]24.30", Header("24.30", "RAPID FIRE", "bracket")),
        ("[SUSTAINED HITS] 24.34", Header("24.34", "SUSTAINED HITS", "bracket")),
        ("ADVANCE MOVE09.06", Header("09.06", "ADVANCE MOVE", "glued")),
        ("FALL-BACK MOVE09.07", Header("09.07", "FALL-BACK MOVE", "glued")),
        ("FIRE OVERWATCH 15.08", Header("15.08", "FIRE OVERWATCH", "glued")),
        ("STEALTH24.33", Header("24.33", "STEALTH", "glued")),
        ("06.03 Hazard Rolls", Header("06.03", "Hazard Rolls", "number-first")),
        ("05.04.04 Destroyed", Header("05.04.04", "Destroyed", "number-first")),
        (
            "01.05.01 Automatically Successful/Passes/Hits/Wounds",
            Header("01.05.01", "Automatically Successful/Passes/Hits/Wounds", "number-first"),
        ),
        (
            "01.07\u00a0Battle\u2011shock Rolls",
            Header("01.07", "Battle-shock Rolls", "number-first"),
        ),
        ("Normal Damage 06.02.01", None),
        ("24.30", None),
        ("[ ]", None),
        ("See the Fight phase (12.04).", None),
        ("06.03 the hazard roll is made.", None),
        ("Strength is LESS than the Toughness 24.30", None),
    ],
)
def test_read_header_forms(line, expected):
    assert read_header(line) == expected


@pytest.mark.parametrize(
    ("line", "style"),
    [
        ("DEEP STRIKE", "caps"),
        ("WHAT IS ENGAGEMENT?", "caps"),
        ("Voice of Command", "title"),
        ("Duty and Honour!", "title"),
        ("First Rank, Fire! Second Rank, Fire!", "title"),
        ("Datasheets collated", None),
        ("Rapid Disembark:", None),
        ("\tUnmodified\tFAILS", None),
        ("A line that is far too long to be any kind of heading at all here", None),
    ],
)
def test_heading_style(line, style):
    assert heading_style(line) == style


def test_snippet_number_first_section_with_body_and_paragraphs():
    result = _parse("06.03 Hazard Rolls", "Roll one D6.", "On a 1-2 it fails.")
    (rule,) = _of(result, RuleText)
    assert (rule.section, rule.title, rule.rule_key, rule.text) == (
        "06.03",
        "Hazard Rolls",
        "hazard-rolls",
        "Roll one D6.\n\nOn a 1-2 it fails.",
    )
    assert (rule.locator, rule.edition, rule.game_mode, rule.effective_date) == (
        "line 3",
        11,
        "matched",
        dt.date(2025, 6, 1),
    )
    assert result.boilerplate == {"page title": 1}


def test_snippet_title_case_heading_after_a_card_starts_a_rule():
    result = _parse(
        "[LETHAL HITS]24.23", "Flavour text here.", "Hit Roll", "Make one hit roll per attack."
    )
    assert _titles(result) == [("24.23", "LETHAL HITS"), (None, "Hit Roll")]


def test_snippet_run_of_title_case_sub_headings_stays_in_section():
    result = _parse(
        "06.01 Visibility",
        "Intro paragraph, as shown below.",
        "Model Visible",
        "A model is visible.",
        "Unit Visible",
        "A unit is visible.",
    )
    (rule,) = _of(result, RuleText)
    assert (
        rule.text
        == "Intro paragraph, as shown below.\n\nModel Visible\n\nA model is visible.\n\nUnit Visible\n\nA unit is visible."
    )


def test_snippet_lone_title_case_heading_starts_a_rule():
    result = _parse(
        "05.02.01 Multiple Toughness",
        "Use the highest T.",
        "Wound Roll",
        "Make one wound roll for each hit.",
    )
    assert _titles(result) == [("05.02.01", "Multiple Toughness"), (None, "Wound Roll")]


def test_snippet_caps_call_out_stays_but_multi_paragraph_caps_block_starts_a_rule():
    result = _parse(
        "03.04 Engagement",
        "Within 2 inches.",
        "WHAT IS ENGAGEMENT?",
        "A call-out paragraph.",
        "DEEP STRIKE",
        "Some units arrive suddenly.",
        "Set it up more than 9 inches away.",
    )
    assert _titles(result) == [("03.04", "Engagement"), (None, "DEEP STRIKE")]
    assert _of(result, RuleText)[0].text.endswith("WHAT IS ENGAGEMENT?\n\nA call-out paragraph.")


def test_snippet_see_also_becomes_references_not_text():
    result = _parse(
        "18.03 Disembarking",
        "Units can disembark.",
        "SEE ALSO",
        "Persisting Rules Effects 01.02.02\nHazard Rolls 06.03",
        "Stray text after the references.",
        "A reference with no number",
    )
    (rule,) = _of(result, RuleText)
    assert rule.text == "Units can disembark."
    refs = [
        (r.rule_key, r.referenced_title, r.referenced_section) for r in _of(result, RuleReference)
    ]
    assert refs == [
        ("disembarking", "Persisting Rules Effects", "01.02.02"),
        ("disembarking", "Hazard Rolls", "06.03"),
    ]
    assert [(r.raw_text, r.reason) for r in result.rejects] == [
        ("Stray text after the references.", "text outside any rule section (no header before it)"),
        ("A reference with no number", "text outside any rule section (no header before it)"),
    ]


def test_snippet_see_also_entry_without_number_is_rejected():
    result = _parse(
        "18.03 Disembarking", "Units can disembark.", "SEE ALSO", "Hazard Rolls 06.03\nDeep Strike"
    )
    assert [r.referenced_title for r in _of(result, RuleReference)] == ["Hazard Rolls"]
    (reject,) = result.rejects
    assert (reject.raw_text, reject.locator) == ("Deep Strike", "line 10")
    assert reject.reason.startswith("SEE ALSO entry without a section number")


def test_snippet_repeated_block_is_collapsed_and_counted():
    result = _parse(
        "01.07.01 Battlefield Morale",
        "Morale can waver.",
        "01.07 Battle-shock Rolls",
        "Make a leadership roll.",
        "SEE ALSO",
        "Battlefield Morale 01.07.01",
        "BATTLEFIELD MORALE",
        "Morale can waver.",
    )
    assert _titles(result) == [("01.07.01", "Battlefield Morale"), ("01.07", "Battle-shock Rolls")]
    assert result.duplicates == {"rule_texts": 1}
    assert result.rejects == []


def test_snippet_same_title_with_other_text_is_not_a_duplicate():
    result = _parse(
        "01.07.01 Battlefield Morale",
        "Morale can waver.",
        "SEE ALSO",
        "X 01.07",
        "BATTLEFIELD MORALE",
        "Different words here.",
        "And more words.",
    )
    assert [r.title for r in _of(result, RuleText)] == ["Battlefield Morale", "BATTLEFIELD MORALE"]
    assert not result.duplicates


def test_snippet_keyword_list_boilerplate_ends_at_and_others_or_a_heading():
    result = _parse(
        "24.33 Frame-ish Rule",
        "Body text.",
        NOTICE,
        "The TRANSPORT keyword is used in the following Astra Militarum datasheets:",
        "Dedicated Transports",
        "Valkyrie",
        "and others...",
        "The ASTRA MILITARUM and VEHICLE keywords are used in the following Astra Militarum datasheets:",
        "Vehicle Character",
        "Voice of Command",
        "If your Army Faction is ASTRA MILITARUM, officers can issue Orders.",
    )
    assert _titles(result) == [("24.33", "Frame-ish Rule"), (None, "Voice of Command")]
    assert result.boilerplate == {
        "page title": 1,
        "selection criteria notice": 1,
        "keyword datasheet list": 6,
    }


def test_snippet_index_and_empty_link_are_boilerplate():
    result = _parse(
        "[ ]",
        "06.03 Hazard Rolls",
        "Roll one D6.",
        NOTICE,
        "Army List",
        "Datasheets collated",
        "Infantry",
        "Cadian Castellan",
    )
    assert _titles(result) == [("06.03", "Hazard Rolls")]
    assert result.boilerplate == {
        "page title": 1,
        "empty link [ ]": 1,
        "selection criteria notice": 1,
        "datasheet index": 4,
    }


def test_snippet_text_before_any_section_is_rejected():
    result = _parse("Mounted Character", NOTICE, "An orphan sentence with no header before it.")
    assert result.boilerplate == {
        "page title": 1,
        "keyword datasheet list": 1,
        "selection criteria notice": 1,
    }
    (reject,) = result.rejects
    assert (reject.locator, reject.table_name) == ("line 7", "rule_texts")
    assert _of(result, RuleText) == []


def test_snippet_name_followed_by_text_is_a_heading_not_a_list_item():
    result = _parse(
        "Mounted Character", "Vehicle Character", "Some sentence that follows the name."
    )
    assert result.boilerplate == {"page title": 1, "keyword datasheet list": 1}
    assert [(r.title, r.text) for r in _of(result, RuleText)] == [
        ("Vehicle Character", "Some sentence that follows the name.")
    ]


def test_snippet_stratagem_card_with_dash_category():
    result = _parse(
        "GO TO GROUND15.20",
        "2CP",
        "Core – Battle Tactic",
        "Flavour one.\nFlavour two.",
        "WHEN: Your opponent’s Shooting phase.",
        "TARGET: One unit.",
        "EFFECT: The unit gets cover.\nAnd an invulnerable save.",
    )
    (strat,) = _of(result, Stratagem)
    assert (strat.stratagem_id, strat.cp_cost, strat.group, strat.type, strat.legend) == (
        "11e-core-go-to-ground",
        2,
        "Core",
        "Battle Tactic",
        "Flavour one.\nFlavour two.",
    )
    assert (strat.when, strat.target, strat.effect, strat.restrictions) == (
        "Your opponent’s Shooting phase.",
        "One unit.",
        "The unit gets cover.\nAnd an invulnerable save.",
        None,
    )
    assert _titles(result) == [("15.20", "GO TO GROUND")]


def test_snippet_stratagem_with_unreadable_category_is_rejected_but_rule_text_kept():
    result = _parse("ODD PLOY15.30", "1CP", "Mystery", "WHEN: Any phase.")
    assert _of(result, Stratagem) == []
    (reject,) = result.rejects
    assert (reject.table_name, reject.raw_text) == ("stratagems", "Mystery")
    assert _titles(result) == [("15.30", "ODD PLOY")]


def test_snippet_cp_line_without_a_category_is_not_a_stratagem():
    result = _parse("ODD PLOY15.30", "1CP", "15.31 Next Rule", "Body.")
    assert _of(result, Stratagem) == []
    assert [(r.section, r.text) for r in _of(result, RuleText)] == [
        ("15.30", "1CP"),
        ("15.31", "Body."),
    ]


def test_snippet_table_with_lost_numbers_gives_data_gaps():
    result = _parse(
        "Wound Roll",
        "Make one wound roll for each hit.\n\tUnmodified\tFAILS\nStrength is EQUAL to the Toughness\t\t+\nStrength is LESS than the Toughness\t\t5+",
    )
    assert [(g.entity_key, g.field, g.locator) for g in _of(result, DataGap)] == [
        ("wound-roll", "wound table required results", "line 7"),
        ("wound-roll", "wound table unmodified roll values", "line 6"),
    ]


def test_snippet_complete_table_gives_no_data_gap():
    result = _parse(
        "Hit Roll", "Make one hit roll.\n\tUnmodified 1\tFAILS\n\tUnmodified 6\tCRITICAL HIT"
    )
    assert _of(result, DataGap) == []
    assert (
        _of(result, RuleText)[0].text
        == "Make one hit roll.\nUnmodified 1 | FAILS\nUnmodified 6 | CRITICAL HIT"
    )


def test_snippet_every_line_accounted():
    text = "\n\n".join(
        ["Title", "[ ]", "06.03 Hazard Rolls", "Body.", "SEE ALSO", "X 01.02", "Orphan text."]
    )
    assert line_dispositions(text) == {
        1: "boilerplate: page title",
        3: "boilerplate: empty link [ ]",
        5: "rule_texts",
        7: "rule_texts",
        9: "rule_references",
        11: "rule_references",
        13: "reject",
    }
