"""BattleScribe rule descriptions parser: the seed file, made-up lines, the golden file."""

from __future__ import annotations

import datetime as dt

import pytest

from pipeline.extractors.battlescribe_rules import looks_like_unsplit_rule, parse, split_rule_name
from schemas.records import DataFlag, RuleText, Source
from tests.conftest import assert_golden, records_as_json, seed_source

SOURCE_ID = "bsdata-10e-rule-descriptions"


@pytest.fixture(scope="module")
def seed():
    text, source = seed_source(SOURCE_ID)
    return parse(text, source)


def _rules(result) -> dict[str, RuleText]:
    return {r.rule_key: r for r in result.records if isinstance(r, RuleText)}


# --- the seed file ------------------------------------------------------------------------------


def test_three_rules_in_order(seed):
    got = [
        (r.rule_key, r.title, r.locator, r.section, r.edition, r.game_mode, r.source_id)
        for r in seed.records
    ]
    assert got == [
        ("acts-of-faith", "Acts of Faith", "line 1", None, 10, None, SOURCE_ID),
        ("deadly-demise", "Deadly Demise", "line 17", None, 10, None, SOURCE_ID),
        ("leader", "Leader", "line 18", None, 10, None, SOURCE_ID),
    ]
    assert seed.rejects == []
    assert not seed.duplicates
    assert not seed.boilerplate


def test_acts_of_faith_text(seed):
    text = _rules(seed)["acts-of-faith"].text
    assert text.startswith(
        "If your Army Faction is Adepta Sororitas, each unit from your army with this ability"
    )
    assert "- At the start of each battle round." in text
    assert "- Each time an Adepta Sororitas unit from your army is destroyed." in text
    assert "\nGAINING MIRACLE DICE\n" in text and "\nPERFORMING AN ACT OF FAITH\n" in text
    assert "^^" not in text and "**" not in text
    assert text.endswith("■ Hit roll\n■ Saving throw\n■ Wound roll")
    assert len(text.split("\n")) == 15


def test_broken_line_is_rejoined_with_a_space(seed):
    text = _rules(seed)["acts-of-faith"].text
    assert "only a single dice can be substituted). The dice that is being substituted" in text
    assert "can\nbe" not in text


def test_deadly_demise_text(seed):
    assert _rules(seed)["deadly-demise"].text == (
        "Some models have 'Deadly Demise x' listed in their abilities. When such a model is destroyed, "
        "roll one D6 before removing it from play (if such a model is a TRANSPORT, roll before any "
        'embarked models disembark). On a 6, each unit within 6" of that model suffers a number of '
        "mortal wounds denoted by 'x' (if this is a random number, roll separately for each unit within 6\")."
    )


def test_leader_has_four_paragraphs(seed):
    paragraphs = _rules(seed)["leader"].text.split("\n")
    assert len(paragraphs) == 4
    assert paragraphs[0].startswith(
        "While a Bodyguard unit contains a Leader, it is known as an Attached unit"
    )
    assert paragraphs[0].endswith("can then be allocated to Character models in that unit.")
    assert paragraphs[1].startswith("Each time the last model in a Bodyguard unit is destroyed")
    assert paragraphs[2].startswith("Each time the last model in a CHARACTER unit that is attached")
    assert paragraphs[3].startswith(
        "Each time a unit that is part of an Attached unit is destroyed"
    )
    assert paragraphs[3].endswith("triggered when that unit is destroyed.")


def test_golden(seed):
    assert_golden("battlescribe_rules", records_as_json(seed.records + seed.rejects))


# --- made-up lines ------------------------------------------------------------------------------

SNIPPET_SOURCE = Source(
    source_id="test-bs",
    title="test rules",
    file="test.txt",
    format="battlescribe-rule-descriptions",
    publisher="test",
    edition=10,
    kind="codex",
    game_mode="combat-patrol",
    version=None,
    version_date=dt.date(2024, 12, 1),
    origin="made up",
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "Acts of Faith If your Army Faction is X, do this.",
            ("Acts of Faith", "If your Army Faction is X, do this."),
        ),
        ("Deadly Demise Some models have it.", ("Deadly Demise", "Some models have it.")),
        (
            "Leader While a Bodyguard unit contains a Leader.",
            ("Leader", "While a Bodyguard unit contains a Leader."),
        ),
        (
            "Feel No Pain Each time this model would lose a wound, roll.",
            ("Feel No Pain", "Each time this model would lose a wound, roll."),
        ),
        (
            "Oath of Moment At the start of your Command phase, select.",
            ("Oath of Moment", "At the start of your Command phase, select."),
        ),
        (
            "Stealth If every model has this ability, subtract 1.",
            ("Stealth", "If every model has this ability, subtract 1."),
        ),
        (
            "Scouts Models with this ability can move.",
            ("Scouts", "Models with this ability can move."),
        ),
        (
            "Firing Deck Weapons of embarked models can shoot.",
            ("Firing Deck", "Weapons of embarked models can shoot."),
        ),
        # The longest name wins when the name itself contains a starter word.
        (
            "When Peril Threatens If a unit is attacked, it may react.",
            ("When Peril Threatens", "If a unit is attacked, it may react."),
        ),
        # Connectors inside the name, never at its end.
        (
            "Shield of the Emperor When a unit is hit, roll.",
            ("Shield of the Emperor", "When a unit is hit, roll."),
        ),
        (
            "Battle-shock Aura While this model leads a unit, add 1.",
            ("Battle-shock Aura", "While this model leads a unit, add 1."),
        ),
    ],
)
def test_split_rule_name_starts_a_rule(line, expected):
    assert split_rule_name(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "Each time you gain a Miracle dice, roll one D6.",  # starts with a starter: no name
        "If your Army Faction is ADEPTA SORORITAS, you gain 1 Miracle dice:",
        "GAINING MIRACLE DICE",  # upper-case sub-heading
        "- At the start of each battle round.",  # bullet
        "■ Advance roll",  # bullet
        "be substituted). The dice is not rolled.",  # lower case: a broken line
        "Leader",  # a name alone, no sentence
        "Leader While",  # a starter with nothing after it
        "Miracle dice pool is kept aside.",  # capitalised word then lower case, no starter
    ],
)
def test_split_rule_name_continuation_lines(line):
    assert split_rule_name(line) is None


@pytest.mark.parametrize(
    ("markup", "plain"),
    [
        ("an ^^Adepta Sororitas^^ unit", "an Adepta Sororitas unit"),
        ("an ^^**Adepta Sororitas**^^ unit", "an Adepta Sororitas unit"),
        ("an **^^Adepta Sororitas^^** unit", "an Adepta Sororitas unit"),
        ("^^INFANTRY^^ and **^^VEHICLE^^** and ^^**FLY**^^", "INFANTRY and VEHICLE and FLY"),
    ],
)
def test_every_markup_form_becomes_the_plain_keyword(markup, plain):
    result = parse(f"Test Rule If {markup}, do it.\n- Then {markup}.\n", SNIPPET_SOURCE)
    (rule,) = result.records
    assert rule.text == f"If {plain}, do it.\n- Then {plain}."


def test_markup_is_stripped_before_the_name_is_split():
    result = parse(
        "Shield of Faith ^^Adepta Sororitas^^ models have a 6+ invulnerable save.\n", SNIPPET_SOURCE
    )
    # After the markup is stripped, "Adepta Sororitas models" is not a sentence starter: no rule.
    assert result.records == []
    assert (
        result.rejects[0].reason == "text before the first rule (no line starting with a rule name)"
    )
    result = parse(
        "Shield of Faith Models with this ability have a ^^**6+**^^ save.\n", SNIPPET_SOURCE
    )
    assert [(r.title, r.text) for r in result.records] == [
        ("Shield of Faith", "Models with this ability have a 6+ save.")
    ]


def test_provenance_from_the_source():
    (rule,) = parse("Scouts Models with this ability can move.\n", SNIPPET_SOURCE).records
    assert (
        rule.rule_key,
        rule.edition,
        rule.game_mode,
        rule.effective_date,
        rule.section,
        rule.locator,
    ) == (
        "scouts",
        10,
        "combat-patrol",
        dt.date(2024, 12, 1),
        None,
        "line 1",
    )


def test_continuations_and_broken_lines_made_up():
    text = "\n".join(
        [
            "First Rule If a unit does this, then it can",
            "do that instead.",
            "SUB-HEADING",
            "- a bullet",
            "Each time it happens, roll.",
            "Second Rule While a unit is here, add 1.",
            "",
            "■ Hit roll",
        ]
    )
    result = parse(text, SNIPPET_SOURCE)
    assert [(r.title, r.locator, r.text) for r in result.records] == [
        (
            "First Rule",
            "line 1",
            "If a unit does this, then it can do that instead.\nSUB-HEADING\n- a bullet\nEach time it happens, roll.",
        ),
        ("Second Rule", "line 6", "While a unit is here, add 1.\n■ Hit roll"),
    ]


def test_text_before_the_first_rule_is_rejected():
    result = parse(
        "GAINING MIRACLE DICE\nScouts Models with this ability can move.\n", SNIPPET_SOURCE
    )
    (reject,) = result.rejects
    assert (reject.locator, reject.raw_text, reject.table_name) == (
        "line 1",
        "GAINING MIRACLE DICE",
        "rule_texts",
    )
    assert [r.rule_key for r in result.records] == ["scouts"]


def test_repeated_rule_is_collapsed_and_counted():
    line = "Scouts Models with this ability can move."
    result = parse(
        f"{line}\n{line}\nScouts Models with this ability can move 9 inches.\n", SNIPPET_SOURCE
    )
    assert [(r.locator, r.text) for r in result.records] == [
        ("line 1", "Models with this ability can move."),
        ("line 3", "Models with this ability can move 9 inches."),
    ]
    assert result.duplicates == {"rule_texts": 1}


def test_possible_unsplit_rule_is_flagged_not_dropped():
    text = "Scouts Models with this ability can move.\nLone Operative Provided that this unit is alone, it hides.\n"
    result = parse(text, SNIPPET_SOURCE)
    rule, flag = result.records
    assert (
        rule.text
        == "Models with this ability can move.\nLone Operative Provided that this unit is alone, it hides."
    )
    assert isinstance(flag, DataFlag)
    assert (flag.flag, flag.entity_key, flag.locator, flag.table_name) == (
        "possible_unsplit_rule",
        "scouts",
        "line 2",
        "rule_texts",
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Lone Operative Provided that this unit is alone", True),
        ("Each time a unit that is part of an Attached unit", False),
        ("GAINING MIRACLE DICE", False),
        ("- Each Time A Bullet", False),
        ("Miracle dice pool", False),
    ],
)
def test_looks_like_unsplit_rule(line, expected):
    assert looks_like_unsplit_rule(line) is expected
