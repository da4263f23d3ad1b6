"""Parser ``wahapedia-text-10e``: the Sanctuary Guardians Combat Patrol page (seed 002).

Exact expectations for every kind of record the page holds, a golden file of all records, and
made-up snippets for the scrape's faults (glued titles, repeated lines and cards).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest

from pipeline.errors import NormaliseError
from pipeline.extractors import wahapedia_text_10e as w
from tests.conftest import assert_golden, records_as_json, seed_source

SOURCE_ID = "wahapedia-10e-cp-sanctuary-guardians"
SCOPE = "cp-sanctuary-guardians"
CANONESS = f"{SCOPE}/canoness-adalya"
SISTERS = f"{SCOPE}/battle-sisters-squad"
SACRESANTS = f"{SCOPE}/celestian-sacresants"
ARCO = f"{SCOPE}/arco-flagellants"


@pytest.fixture(scope="module")
def page():
    return seed_source(SOURCE_ID)


@pytest.fixture(scope="module")
def result(page):
    text, source = page
    return w.parse(text, source)


def rows(result, table):
    return [r for r in result.records if r.__table__ == table]


def short(datasheet_id):
    return datasheet_id.split("/", 1)[1]


# --- accounting ------------------------------------------------------------------------------


def test_records_per_table(result):
    assert Counter(r.__table__ for r in result.records) == {
        "factions": 1,
        "datasheets": 4,
        "wargear_loadouts": 8,
        "weapon_profiles": 12,
        "weapon_abilities": 16,
        "abilities": 12,
        "keywords": 19,
        "stratagems": 11,
        "datasheet_stratagems": 40,
        "enhancements": 2,
        "secondary_objectives": 2,
        "rule_texts": 35,
        "data_gaps": 8,
        "data_flags": 4,
    }


def test_every_record_carries_source_and_line_locator(result):
    for record in result.records + result.rejects:
        assert record.source_id == SOURCE_ID
        assert record.locator.startswith("line ")


def test_duplicates_and_boilerplate_are_counted(result):
    assert result.duplicates == {
        "sources": 1,  # the publication row printed first with only the book name
        "datasheets": 4,  # each tactical text printed twice
        "weapon_profiles": 12,  # each weapon row printed first with only its name
        "keywords": 4,  # ADEPTA SORORITAS twice under each FACTION KEYWORDS
        "stratagems": 53,  # TARGET/EFFECT/RESTRICTIONS twice, 3 cards printed again
        "rule_texts": 19,  # Acts of Faith again, Desperate Escape Tests again, FEEL NO PAIN
    }
    assert result.boilerplate == {
        "repeated page title": 1,
        "section introduction": 2,
        "choice separator": 2,
        "keyword index (datasheet links lost)": 3,
        "core stratagem icon letter": 28,
    }


def test_the_only_reject_is_the_paragraph_that_lost_its_title(result):
    assert [(r.locator, r.table_name, r.raw_text) for r in result.rejects] == [
        ("line 477", "rule_texts",
         "Before selecting targets for this weapon, select one of its profiles to make attacks"
         " with."),
    ]


def test_every_segment_is_placed_exactly_once(page, result):
    text, source = page
    fates = w.dispositions(text, source)
    assert all(fate for _, _, fate in fates)
    nonblank_lines = {i for i, line in enumerate(text.split("\n"), 1) if line.strip()}
    assert {int(loc.split()[1]) for loc, _, _ in fates} == nonblank_lines
    counted = Counter(fate.split()[0] for _, _, fate in fates)
    assert counted["duplicate"] == sum(result.duplicates.values())
    assert counted["boilerplate"] == sum(result.boilerplate.values())
    assert counted["reject"] == len(result.rejects)
    assert sum(counted.values()) == len(fates)


def test_golden(result):
    assert_golden("wahapedia_text_10e", records_as_json(result.records + result.rejects))


# --- publication table -----------------------------------------------------------------------


def test_publication_table(page):
    text, _ = page
    assert w.publication_table(text) == {
        "book": "Sanctuary Guardians",
        "kind": "Index",
        "edition": 10,
        "version": "June 2024",
        "last_update": None,
    }


def test_publication_table_missing_raises():
    with pytest.raises(NormaliseError, match="no publication table"):
        w.publication_table("Sanctuary Guardians\nDatasheets\n")


def test_no_flag_when_table_agrees_with_manifest(result):
    assert not [f for f in rows(result, "data_flags") if f.table_name == "sources"]


def test_flag_when_table_disagrees_with_manifest(page):
    text, source = page
    other = source.model_copy(update={"version": "May 2024"})
    flags = [f for f in rows(w.parse(text, other), "data_flags") if f.table_name == "sources"]
    assert [(f.entity_key, f.flag, f.locator) for f in flags] == [
        (SOURCE_ID, "publication_table_differs", "line 5")
    ]
    assert "'June 2024'" in flags[0].detail and "'May 2024'" in flags[0].detail


# --- datasheets ------------------------------------------------------------------------------


def test_datasheets(result):
    got = {(d.datasheet_id, d.name, d.starting_strength, d.faction_id, d.edition, d.game_mode,
            d.locator) for d in rows(result, "datasheets")}
    assert got == {
        (CANONESS, "Canoness Adalya", 1, "adepta-sororitas", 10, "combat-patrol", "line 7"),
        (SISTERS, "Battle Sisters Squad", 10, "adepta-sororitas", 10, "combat-patrol", "line 11"),
        (ARCO, "Arco-flagellants", 10, "adepta-sororitas", 10, "combat-patrol", "line 19"),
        (SACRESANTS, "Celestian Sacresants", 5, "adepta-sororitas", 10, "combat-patrol",
         "line 23"),
    }


def test_datasheet_legend_is_the_tactical_text_once(result):
    legends = {d.datasheet_id: d.legend for d in rows(result, "datasheets")}
    assert legends[ARCO] == (
        "The Arco-flagellants’ Wounds characteristic of 2 also makes them particularly durable"
        " against small arms fire, but watch out for elite enemy units with weapons of Damage 3"
        " or higher, as these can quickly chew through this unit in spite of its Feel No Pain"
        " ability."
    )
    assert legends[CANONESS].startswith("However, her ability to re-roll Hit rolls")
    assert all("\u2011" not in legend for legend in legends.values())


def test_faction(result):
    assert [(f.faction_id, f.name) for f in rows(result, "factions")] == [
        ("adepta-sororitas", "Adepta Sororitas")
    ]


def test_wargear_loadouts(result):
    got = [(short(x.datasheet_id), x.line, x.models, x.model_count, x.equipment)
           for x in rows(result, "wargear_loadouts")]
    assert got == [
        ("canoness-adalya", 1, "This model", 1, "condemnor boltgun; hallowed chainsword; null rod"),
        ("battle-sisters-squad", 1, "The Sister Superior", None,
         "bolt pistol; combi-weapon; power weapon"),
        ("battle-sisters-squad", 2, "1 Battle Sister", 1,
         "bolt pistol; Ministorum flamer; close combat weapon"),
        ("battle-sisters-squad", 3, "1 Battle Sister", 1,
         "bolt pistol; Ministorum heavy flamer; close combat weapon"),
        ("battle-sisters-squad", 4, "1 Battle Sister", 1,
         "bolt pistol; boltgun; close combat weapon; simulacrum imperialis"),
        ("battle-sisters-squad", 5, "6 Battle Sisters", 6,
         "bolt pistol; boltgun; close combat weapon"),
        ("arco-flagellants", 1, "Every model", None, "arco-flails"),
        ("celestian-sacresants", 1, "Every model", None, "bolt pistol; hallowed mace"),
    ]


# --- weapons ---------------------------------------------------------------------------------

# (datasheet, name, melee, range, A, skill, S, AP, D, abilities as printed)
WEAPONS = {
    ("canoness-adalya", "Condemnor boltgun", False, 24, "1", 2, 4, 0, "1",
     "anti-psyker 2+, devastating wounds, precision, rapid fire 1"),
    ("canoness-adalya", "Hallowed chainsword", True, None, "5", 2, 3, -1, "1", ""),
    ("battle-sisters-squad", "Bolt pistol", False, 12, "1", 3, 4, 0, "1", "pistol"),
    ("battle-sisters-squad", "Boltgun", False, 24, "1", 3, 4, 0, "1", "rapid fire 1"),
    ("battle-sisters-squad", "Combi-weapon", False, 24, "1", 4, 4, 0, "1",
     "ANTI-INFANTRY 4+, DEVASTATING WOUNDS, RAPID FIRE 1"),
    ("battle-sisters-squad", "Ministorum flamer", False, 12, "D6", None, 5, 0, "1",
     "ignores cover, torrent"),
    ("battle-sisters-squad", "Ministorum heavy flamer", False, 12, "D6", None, 6, -1, "1",
     "ignores cover, torrent"),
    ("battle-sisters-squad", "Close combat weapon", True, None, "1", 4, 3, 0, "1", ""),
    ("battle-sisters-squad", "Power weapon", True, None, "2", 4, 4, -2, "1", ""),
    ("celestian-sacresants", "Bolt pistol", False, 12, "1", 3, 4, 0, "1", "pistol"),
    ("celestian-sacresants", "Hallowed mace", True, None, "3", 3, 4, -1, "2", "LETHAL HITS"),
    ("arco-flagellants", "Arco-flails", True, None, "4", 4, 5, 0, "1", "sustained hits 1"),
}


def test_weapon_profiles_exact(result):
    profiles = rows(result, "weapon_profiles")
    got = {(short(p.datasheet_id), p.weapon_name, p.is_melee, p.range_inches, p.attacks.text,
            p.skill, p.strength, p.armour_penetration, p.damage.text, p.abilities_text)
           for p in profiles}
    assert got == WEAPONS
    assert len(profiles) == 12
    assert len({p.weapon_name for p in profiles}) == 11
    assert all(p.profile_name == "" for p in profiles)


def test_dice_values_are_structured(result):
    flamer = next(p for p in rows(result, "weapon_profiles")
                  if p.weapon_name == "Ministorum flamer")
    attacks = flamer.attacks
    assert (attacks.dice_count, attacks.dice_sides, attacks.modifier) == (1, 6, 0)
    assert flamer.skill is None  # N/A: Torrent, no hit roll


def test_arco_flagellants_have_no_ranged_weapon(result):
    arco = [p for p in rows(result, "weapon_profiles") if p.datasheet_id == ARCO]
    assert [(p.weapon_name, p.is_melee) for p in arco] == [("Arco-flails", True)]


def test_weapon_abilities_exact(result):
    got = {(short(a.datasheet_id), a.weapon_name, a.position, a.name, a.target_keyword,
            a.threshold, a.value.text if a.value else None)
           for a in rows(result, "weapon_abilities")}
    assert got == {
        ("canoness-adalya", "Condemnor boltgun", 1, "ANTI", "PSYKER", 2, None),
        ("canoness-adalya", "Condemnor boltgun", 2, "DEVASTATING WOUNDS", None, None, None),
        ("canoness-adalya", "Condemnor boltgun", 3, "PRECISION", None, None, None),
        ("canoness-adalya", "Condemnor boltgun", 4, "RAPID FIRE", None, None, "1"),
        ("battle-sisters-squad", "Bolt pistol", 1, "PISTOL", None, None, None),
        ("battle-sisters-squad", "Boltgun", 1, "RAPID FIRE", None, None, "1"),
        ("battle-sisters-squad", "Combi-weapon", 1, "ANTI", "INFANTRY", 4, None),
        ("battle-sisters-squad", "Combi-weapon", 2, "DEVASTATING WOUNDS", None, None, None),
        ("battle-sisters-squad", "Combi-weapon", 3, "RAPID FIRE", None, None, "1"),
        ("battle-sisters-squad", "Ministorum flamer", 1, "IGNORES COVER", None, None, None),
        ("battle-sisters-squad", "Ministorum flamer", 2, "TORRENT", None, None, None),
        ("battle-sisters-squad", "Ministorum heavy flamer", 1, "IGNORES COVER", None, None, None),
        ("battle-sisters-squad", "Ministorum heavy flamer", 2, "TORRENT", None, None, None),
        ("celestian-sacresants", "Bolt pistol", 1, "PISTOL", None, None, None),
        ("celestian-sacresants", "Hallowed mace", 1, "LETHAL HITS", None, None, None),
        ("arco-flagellants", "Arco-flails", 1, "SUSTAINED HITS", None, None, "1"),
    }


def test_no_weapon_flags_on_this_page(result):
    assert not [f for f in rows(result, "data_flags")
                if f.table_name in ("weapon_profiles", "weapon_abilities")]


# --- abilities and keywords -----------------------------------------------------------------


def test_abilities_per_datasheet_by_kind(result):
    got = {(short(a.datasheet_id), a.kind, a.name, a.parameter) for a in rows(result, "abilities")}
    assert got == {
        ("canoness-adalya", "core", "Leader", None),
        ("canoness-adalya", "faction", "Acts of Faith", None),
        ("canoness-adalya", "datasheet", "Lead the Righteous", None),
        ("canoness-adalya", "wargear", "Null Rod", None),
        ("battle-sisters-squad", "faction", "Acts of Faith", None),
        ("battle-sisters-squad", "wargear", "Simulacrum Imperialis", None),
        ("battle-sisters-squad", "datasheet", "Patrol Squads", None),
        ("celestian-sacresants", "faction", "Acts of Faith", None),
        ("celestian-sacresants", "datasheet", "Sworn Protectors", None),
        ("arco-flagellants", "core", "Feel No Pain", "5+"),
        ("arco-flagellants", "faction", "Acts of Faith", None),
        ("arco-flagellants", "datasheet", "Extremis Trigger Word", None),
    }


def test_ability_texts(result):
    by_name = {a.name: a for a in rows(result, "abilities")}
    assert by_name["Patrol Squads"].text == (
        "Before the battle, at the start of the Declare Battle Formations step, this unit can be"
        " split into two units, each containing five models."
    )
    assert "arco-flails equipped by models" in by_name["Extremis Trigger Word"].text
    assert by_name["Leader"].text is None


def test_keywords_per_datasheet(result):
    kws: dict[tuple[str, bool], list[str]] = {}
    for k in rows(result, "keywords"):
        kws.setdefault((short(k.datasheet_id), k.is_faction_keyword), []).append(k.keyword)
    assert kws == {
        ("canoness-adalya", False): ["INFANTRY", "CHARACTER", "IMPERIUM", "CANONESS",
                                     "CANONESS ADALYA"],
        ("canoness-adalya", True): ["ADEPTA SORORITAS"],
        ("battle-sisters-squad", False): ["INFANTRY", "BATTLELINE", "IMPERIUM",
                                          "BATTLE SISTERS SQUAD"],
        ("battle-sisters-squad", True): ["ADEPTA SORORITAS"],
        ("celestian-sacresants", False): ["INFANTRY", "IMPERIUM", "CELESTIAN SACRESANTS"],
        ("celestian-sacresants", True): ["ADEPTA SORORITAS"],
        ("arco-flagellants", False): ["INFANTRY", "IMPERIUM", "ARCO-FLAGELLANTS"],
        ("arco-flagellants", True): ["ADEPTA SORORITAS"],
    }


# --- stratagems ------------------------------------------------------------------------------

STRATAGEMS = {
    ("10e-sanctuary-guardians-ascetic-discipline", "ASCETIC DISCIPLINE", 1, "Sanctuary Guardians",
     "Battle Tactic"),
    ("10e-sanctuary-guardians-a-martyrs-death", "A MARTYR’S DEATH", 1, "Sanctuary Guardians",
     "Battle Tactic"),
    ("10e-sanctuary-guardians-holy-radiance", "HOLY RADIANCE", 1, "Sanctuary Guardians",
     "Epic Deed"),
    ("10e-core-command-re-roll", "COMMAND RE-ROLL", 1, "Core", "Battle Tactic"),
    ("10e-core-insane-bravery", "INSANE BRAVERY", 1, "Core", "Epic Deed"),
    ("10e-core-fire-overwatch", "FIRE OVERWATCH", 1, "Core", "Strategic Ploy"),
    ("10e-core-rapid-ingress", "RAPID INGRESS", 1, "Core", "Strategic Ploy"),
    ("10e-core-go-to-ground", "GO TO GROUND", 1, "Core", "Battle Tactic"),
    ("10e-core-heroic-intervention", "HEROIC INTERVENTION", 1, "Core", "Strategic Ploy"),
    ("10e-core-counter-offensive", "COUNTER-OFFENSIVE", 2, "Core", "Strategic Ploy"),
    ("10e-core-epic-challenge", "EPIC CHALLENGE", 1, "Core", "Epic Deed"),
}


def test_stratagems_each_stored_once(result):
    strats = rows(result, "stratagems")
    assert len(strats) == 11
    assert {(s.stratagem_id, s.name, s.cp_cost, s.group, s.type) for s in strats} == STRATAGEMS


def test_stratagem_texts_are_filled_from_the_cards(result):
    strats = {s.name: s for s in rows(result, "stratagems")}
    for s in strats.values():
        assert s.legend and s.when and s.target and s.effect, s.name
        assert s.edition == 10
    with_restrictions = {n for n, s in strats.items() if s.restrictions}
    assert with_restrictions == {"FIRE OVERWATCH", "INSANE BRAVERY", "RAPID INGRESS",
                                 "HEROIC INTERVENTION"}
    cp = strats["COUNTER-OFFENSIVE"]
    assert (cp.when, cp.effect, cp.locator) == (
        "Fight phase, just after an enemy unit has fought.", "Your unit fights next.", "line 567")
    assert strats["ASCETIC DISCIPLINE"].locator == "line 64"  # first printing, not line 336
    assert strats["HOLY RADIANCE"].effect == (
        "Until the end of the phase, each time an attack targets your unit, subtract 1 from the"
        " Hit roll and models in your unit have the Feel No Pain 5+ ability against that attack."
    )


def test_datasheet_stratagem_links(result):
    links: dict[str, set[str]] = {}
    for link in rows(result, "datasheet_stratagems"):
        links.setdefault(short(link.datasheet_id), set()).add(link.stratagem_id)
    every = {s[0] for s in STRATAGEMS}
    assert links["canoness-adalya"] == every
    assert links["battle-sisters-squad"] == every - {"10e-core-epic-challenge"}
    assert links["celestian-sacresants"] == every - {"10e-core-epic-challenge"}
    assert links["arco-flagellants"] == every - {"10e-core-epic-challenge",
                                                 "10e-core-fire-overwatch"}


# --- enhancements and secondary objectives ---------------------------------------------------


def test_enhancements(result):
    got = [(e.enhancement_id, e.name, e.is_default, e.detachment, e.cost_points)
           for e in rows(result, "enhancements")]
    assert got == [
        (f"{SCOPE}/defender-of-the-faith", "DEFENDER OF THE FAITH", True, "Sanctuary Guardians",
         None),
        (f"{SCOPE}/righteous-fury", "RIGHTEOUS FURY", False, "Sanctuary Guardians", None),
    ]
    fury = rows(result, "enhancements")[1]
    assert fury.legend.startswith("This commander is a true warrior of the faith.")
    assert fury.text == (
        "- The bearer’s unit is eligible to shoot and declare a charge in a turn in which it"
        " Advanced or Fell Back.\n"
        "- In your Command phase, you can discard 1 Miracle dice. If you do, until the end of the"
        " turn, you can re-roll Charge rolls made for the bearer’s unit."
    )


def test_secondary_objectives(result):
    got = [(o.objective_id, o.name, o.is_default, o.group)
           for o in rows(result, "secondary_objectives")]
    assert got == [
        (f"{SCOPE}/hallowed-retribution", "HALLOWED RETRIBUTION", True, "Sanctuary Guardians"),
        (f"{SCOPE}/consecrated-ground", "CONSECRATED GROUND", False, "Sanctuary Guardians"),
    ]
    assert rows(result, "secondary_objectives")[0].text == (
        "You score 3VP each time an ADEPTA SORORITAS unit from your army destroys an enemy unit."
        " If that unit from your army performed an Act of Faith this phase, you score 4VP instead."
    )


def test_secondary_introduction_names_other_objectives_flagged(result):
    flags = [(f.entity_key, f.flag, f.locator) for f in rows(result, "data_flags")
             if f.table_name == "secondary_objectives"]
    assert flags == [
        (f"{SCOPE}/hallowed-retribution", "introduction_names_other_choice", "line 56"),
        (f"{SCOPE}/consecrated-ground", "introduction_names_other_choice", "line 56"),
    ]
    assert not [f for f in rows(result, "data_flags") if f.table_name == "enhancements"]


# --- rule texts ------------------------------------------------------------------------------

RULE_KEYS = [
    "acts-of-faith", "attached-units", "hit-roll", "wound-roll", "lethal-hits", "torrent",
    "normal-moves", "advance-moves", "fall-back-moves", "desperate-escape-tests",
    "charging-with-a-unit", "unit-visible", "hazardous", "devastating-wounds", "mortal-wounds",
    "feel-no-pain", "invulnerable-saves", "destroyed", "battle-shock", "saving-throw", "leader",
    "psychic-weapons-and-abilities", "anti", "precision", "rapid-fire", "characters", "re-rolls",
    "deep-strike", "benefit-of-cover", "charge-bonus", "engagement-range", "objective-markers",
    "pistol", "ignores-cover", "sustained-hits",
]


def test_rule_sections(result):
    rules = rows(result, "rule_texts")
    assert [r.rule_key for r in rules] == RULE_KEYS
    for r in rules:
        assert (r.section, r.edition, r.game_mode, r.effective_date) == (
            None, 10, "combat-patrol", dt.date(2024, 6, 1))
    titles = {r.rule_key: r.title for r in rules}
    assert titles["battle-shock"] == "2. Battle-shock"
    assert titles["feel-no-pain"] == "Feel No Pain"


def test_glued_titles_are_split(result):
    rules = {r.rule_key: r for r in rows(result, "rule_texts")}
    assert rules["lethal-hits"].text.endswith("a Critical Hit automatically wounds the target.")
    assert rules["torrent"].locator == "line 347"
    assert rules["torrent"].text.startswith("Torrent weapons shoot clouds of fire")
    assert rules["sustained-hits"].locator == "line 609"


def test_summary_bullets_belong_to_their_section(result):
    rules = {r.rule_key: r for r in rows(result, "rule_texts")}
    assert rules["hit-roll"].text.splitlines()[-3:] == [
        "- Critical Hit: Unmodified Hit roll of 6. Always successful.",
        "- An unmodified Hit roll of 1 always fails.",
        "- A Hit roll can never be modified by more than -1 or +1.",
    ]
    assert '- Normal Move: Models move up to M".' in rules["normal-moves"].text.splitlines()


def test_acts_of_faith_combat_patrol_wording(result):
    acts = next(r for r in rows(result, "rule_texts") if r.rule_key == "acts-of-faith")
    lines = acts.text.splitlines()
    assert acts.locator == "line 28"
    assert "- At the start of each turn." in lines
    assert "Gaining Miracle Dice" in lines and "Performing an Act of Faith" in lines
    assert lines[-1] == "- Wound roll"
    assert lines.count("- Hit roll") == 1  # the second printing collapsed


def test_repeated_section_is_merged(result):
    escape = next(r for r in rows(result, "rule_texts") if r.rule_key == "desperate-escape-tests")
    lines = escape.text.splitlines()
    assert escape.locator == "line 359"
    assert sum(line.startswith("Unlike when making other types of move") for line in lines) == 1
    assert lines[-1] == ("- Desperate Escape Test: Roll one D6. On a 1-2, one model from that"
                         " unit is destroyed.")


def test_characters_section_flagged(result):
    flags = {(f.entity_key, f.flag) for f in rows(result, "data_flags")
             if f.table_name == "rule_texts"}
    assert flags == {("characters", "template_text"), ("characters", "older_edition_wording")}


# --- data gaps -------------------------------------------------------------------------------


def test_data_gaps(result):
    got = {(g.table_name, g.entity_key, g.field, g.locator) for g in rows(result, "data_gaps")}
    characteristics = "M,T,Sv,InSv,W,Ld,OC"
    assert got == {
        ("model_profiles", CANONESS, characteristics, "line 7"),
        ("model_profiles", SISTERS, characteristics, "line 11"),
        ("model_profiles", ARCO, characteristics, "line 19"),
        ("model_profiles", SACRESANTS, characteristics, "line 23"),
        ("leader_links", CANONESS, "bodyguard units", "line 105"),
        ("leader_links", SISTERS, "leader units", "line 217"),
        ("leader_links", SACRESANTS, "leader units", "line 270"),
        ("rule_texts", "wound-roll", "wound table", "line 330"),
    }
    assert not rows(result, "model_profiles") and not rows(result, "leader_links")


# --- made-up snippets ------------------------------------------------------------------------


@pytest.fixture
def source(page):
    return page[1]


def test_snippet_title_glued_to_previous_paragraph(source):
    text = (
        "Datasheets\n"
        "Lethal Hits\n"
        "Weapons with [LETHAL HITS] are Lethal Hits weapons.Torrent\n"
        "Weapons with [TORRENT] are Torrent weapons.Example: one attack.- Torrent: hits.\n"
    )
    result = w.parse(text, source)
    assert [(r.rule_key, r.title, r.locator, r.text) for r in rows(result, "rule_texts")] == [
        ("lethal-hits", "Lethal Hits", "line 2",
         "Weapons with [LETHAL HITS] are Lethal Hits weapons."),
        ("torrent", "Torrent", "line 3",
         "Weapons with [TORRENT] are Torrent weapons.\nExample: one attack.\n- Torrent: hits."),
    ]
    assert not result.rejects and not result.duplicates


def test_snippet_repeated_lines_collapse(source):
    text = (
        "Datasheets\n"
        "Cover\n"
        "Models in cover get +1.\n"
        "Models in cover get +1.\n"
        "HOLD FAST\n"
        "1CP\n"
        "Core – Battle Tactic Stratagem\n"
        "Stand firm.\n"
        "WHEN: Any phase.\n"
        "TARGET: One unit.\n"
        "EFFECT: It holds.\n"
        "TARGET: One unit.\n"
        "EFFECT: It holds.\n"
        "Cover\n"
        "Models in cover get +1.\n"
        "- Cover: +1 to saves.\n"
        "HOLD FAST\n"
        "1CP\n"
        "Core – Battle Tactic Stratagem\n"
        "WHEN: Any phase.\n"
    )
    result = w.parse(text, source)
    (cover,) = rows(result, "rule_texts")
    assert (cover.locator, cover.text) == (
        "line 2", "Models in cover get +1.\n- Cover: +1 to saves.")
    (hold,) = rows(result, "stratagems")
    assert (hold.stratagem_id, hold.legend, hold.when, hold.target, hold.effect, hold.locator) == (
        "10e-core-hold-fast", "Stand firm.", "Any phase.", "One unit.", "It holds.", "line 5")
    # rule_texts: line 4, the repeated title (14), its first line again (15);
    # stratagems: lines 12-13, and the repeated card's 4 lines (17-20)
    assert result.duplicates == {"rule_texts": 3, "stratagems": 6}
    assert not result.rejects


def test_snippet_repeated_card_with_other_text_is_rejected(source):
    text = (
        "Datasheets\n"
        "HOLD FAST\n1CP\nCore – Battle Tactic Stratagem\nWHEN: Any phase.\n"
        "HOLD FAST\n1CP\nCore – Battle Tactic Stratagem\nWHEN: Your phase.\n"
    )
    result = w.parse(text, source)
    assert [(r.locator, r.table_name) for r in result.rejects] == [("line 9", "stratagems")]
    assert rows(result, "stratagems")[0].when == "Any phase."


def test_snippet_block_matched_by_keyword_not_by_order(source):
    text = (
        "Sanctuary Guardians\n"
        "Books\n"
        "| Book | Kind | Edition | Version | Last update |\n"
        "| Sanctuary Guardians | Index | 10 | June 2024 | |\n"
        "ALPHA SQUAD (5 MODELS)\n"
        "- Every model is equipped with: alpha gun.\n"
        "BETA SQUAD (3 MODELS)\n"
        "- Every model is equipped with: beta blade.\n"
        "Datasheets\n"
        "MELEE WEAPONS | RANGE | A | WS | S | AP | D | |\n"
        "| Beta blade | Melee | 3 | 3+ | 5 | -2 | D3 | |\n"
        "KEYWORDS: INFANTRY, BETA SQUAD\n"
        "RANGED WEAPONS | RANGE | A | BS | S | AP | D | |\n"
        "| Alpha gun [blast] | 18\" | D6+1 | 4+ | 8 | 1 | 2 | |\n"
        "KEYWORDS: INFANTRY, ALPHA SQUAD\n"
        "STRATAGEMS\n"
        "LOST PLOY\n2CP\nCore – Strategic Ploy\nC\n"
    )
    result = w.parse(text, source)
    got = {(short(p.datasheet_id), p.weapon_name, p.damage.text, p.armour_penetration)
           for p in rows(result, "weapon_profiles")}
    assert got == {("beta-squad", "Beta blade", "D3", -2), ("alpha-squad", "Alpha gun", "2", -1)}
    flags = {(f.entity_key, f.flag) for f in rows(result, "data_flags")}
    assert flags == {(f"{SCOPE}/alpha-squad|Alpha gun|ranged|", "positive_ap")}
    # a Stratagem listed on a datasheet with no card: stored from the list, its text a gap
    (ploy,) = rows(result, "stratagems")
    assert (ploy.name, ploy.cp_cost, ploy.when) == ("LOST PLOY", 2, None)
    assert ("stratagems", "10e-core-lost-ploy") in {(g.table_name, g.entity_key)
                                                for g in rows(result, "data_gaps")}
    assert not result.rejects


def test_snippet_unreadable_weapon_value_is_rejected(source):
    text = (
        "Made-up Patrol\n"
        "Books\n"
        "ALPHA SQUAD (5 MODELS)\n"
        "Datasheets\n"
        "RANGED WEAPONS | RANGE | A | BS | S | AP | D | |\n"
        "| Alpha gun | 18\" | lots | 4+ | 8 | -1 | 2 | |\n"
        "KEYWORDS: ALPHA SQUAD\n"
    )
    result = w.parse(text, source)
    assert [(r.locator, r.table_name) for r in result.rejects] == [("line 6", "weapon_profiles")]
    # the assembly's reason, as every source gives it (the row with its name is the raw text)
    assert result.rejects[0].reason == "not a dice expression: 'lots' (expected e.g. D6, 2D6+3 or 3)"
    assert not rows(result, "weapon_profiles")
