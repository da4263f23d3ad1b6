"""The Wahapedia CSV export parser on small made-up inputs (cases P01-P28 and their neighbours).

The real export is tested in ``test_parser_wahapedia_csv_corpus.py``.
"""

from __future__ import annotations

import datetime as dt

import pytest

from pipeline.errors import ManifestError
from pipeline.extractors.psv import read_table
from pipeline.extractors.wahapedia_csv import (
    ExportParseResult,
    accounting,
    check_accounting,
    parse_export,
    restore_listbrewer_resave,
)
from pipeline.assemble.weapons import split_weapon_name as split_profile_name
from schemas.records import (
    DataFlag,
    DataGap,
    Datasheet,
    Faction,
    Keyword,
    ModelProfile,
    RuleText,
    Source,
    Stratagem,
    UnitComposition,
    WeaponAbility,
    WeaponProfile,
)

BOM = "\ufeff"


def source(edition: int | None = 10) -> Source:
    return Source(
        source_id="wahapedia-test",
        title="made-up export",
        file="wahapedia-test",
        format="wahapedia-csv",
        publisher="Wahapedia",
        edition=edition,
        kind="export",
        game_mode=None,
        version=None,
        version_date=dt.date(2025, 11, 14),
        origin="made up",
    )


def table(*lines: str) -> str:
    """A table as the export writes it: BOM, CRLF, a closing line break."""
    return BOM + "\r\n".join(lines) + "\r\n"


FACTIONS = table("id|name|link|", "SM|Space Marines||", "AS|Adepta Sororitas||", "AE|Aeldari||")
DS_HEADER = "id|name|faction_id|source_id|legend|role|loadout|transport|virtual|link|"


def datasheets(*rows: str) -> str:
    return table(DS_HEADER, *rows)


def ds(wid: str, name: str, faction: str = "SM", **extra: str) -> str:
    v = {
        "source_id": "000000139",
        "legend": "",
        "role": "Other",
        "loadout": "",
        "transport": "",
        "virtual": "false",
        "link": "",
    }
    v.update(extra)
    return (
        f"{wid}|{name}|{faction}|{v['source_id']}|{v['legend']}|{v['role']}|{v['loadout']}|"
        f"{v['transport']}|{v['virtual']}|{v['link']}|"
    )


WARGEAR_HEADER = (
    "datasheet_id|line|line_in_wargear|dice|name|description|range|type|A|BS_WS|S|AP|D|"
)
MODELS_HEADER = (
    "datasheet_id|line|name|M|T|Sv|inv_sv|inv_sv_descr|W|Ld|OC|base_size|base_size_descr|"
)


def parse(**tables: str) -> ExportParseResult:
    result = parse_export(tables, source())
    check_accounting(accounting(result, "wahapedia-test"))
    return result


def of(result: ExportParseResult, cls: type) -> list:
    return [r for r in result.records if isinstance(r, cls)]


def flags(result: ExportParseResult, code: str) -> list[DataFlag]:
    return [r for r in of(result, DataFlag) if r.flag == code]


# ---- the pipe-separated reader --------------------------------------------------------------


def test_p16_bom_crlf_trailing_pipe_and_zero_padded_ids():
    t = read_table(BOM + "id|name|faction_id|\r\n000000001|Captain|SM|\r\n")
    assert t.columns == ("id", "name", "faction_id")  # header key exactly "id", no 4th column
    assert [r.values for r in t.rows] == [
        {"id": "000000001", "name": "Captain", "faction_id": "SM"}
    ]
    assert t.bad_rows == [] and t.input_rows == 1


def test_p16_through_the_parser_gives_one_datasheet_with_its_wahapedia_id():
    result = parse(
        Factions=FACTIONS, Datasheets=BOM + "id|name|faction_id|\r\n000000001|Captain|SM|\r\n"
    )
    (sheet,) = of(result, Datasheet)
    assert (sheet.datasheet_id, sheet.external_id, sheet.faction_id, sheet.edition) == (
        "10e/space-marines/captain",
        "000000001",
        "space-marines",
        10,
    )
    assert sheet.locator == "Datasheets.csv line 2"


def test_reader_lf_endings_and_no_final_line_break():
    t = read_table("id|name|\n1|a|\n2|b|")
    assert [r.values["name"] for r in t.rows] == ["a", "b"]
    assert [r.line for r in t.rows] == [2, 3]


def test_reader_rejects_wrong_column_counts_with_line_numbers_without_swallowing_rows():
    t = read_table("id|name|faction_id|\r\n1|a|SM|\r\n2|b|SM|extra|\r\n3|short|\r\n4|d|SM|\r\n")
    assert [r.values["id"] for r in t.rows] == ["1", "4"]
    assert [(b.line, b.raw, b.reason) for b in t.bad_rows] == [
        (3, "2|b|SM|extra|", "wrong column count: 4 fields, the header has 3"),
        (4, "3|short|", "wrong column count: 2 fields, the header has 3"),
    ]
    assert t.input_rows == 4


def test_reader_text_after_the_closing_pipe_is_a_bad_row():
    t = read_table("id|name|\n1|a|b\n")
    assert t.rows == [] and t.bad_rows[0].reason.startswith("text after the closing '|'")


def test_reader_header_without_trailing_pipe():
    t = read_table("id|name\n1|a\n")
    assert t.columns == ("id", "name") and t.rows[0].values == {"id": "1", "name": "a"}


def test_reader_keeps_a_raw_line_break_inside_a_field():
    t = read_table("id|legend|phase|\r\n7|line one\r\nline two|Any|\r\n8|x|Any|\r\n")
    assert [(r.line, r.values["legend"]) for r in t.rows] == [(2, "line one\nline two"), (4, "x")]


def test_reader_blank_line_between_records_is_a_bad_row():
    t = read_table("id|name|\n1|a|\n\n2|b|\n")
    assert [r.values["id"] for r in t.rows] == ["1", "2"]
    assert [(b.line, b.reason) for b in t.bad_rows] == [(3, "blank line between records")]


# ---- P15: a record over two lines, and a row that is not a stratagem ------------------------

F15 = (
    "id|faction_id|name|type|cp_cost|legend|turn|phase|detachment|description|\n"
    "000000101|XX|Hold the Line|Battle Tactic Stratagem|1|Fluff line one\n"
    "fluff line two|Your turn|Shooting|Alpha Force|<b>WHEN:</b> Your Shooting phase.<br>"
    "<b>EFFECT:</b> Re-roll 1s.|\n"
    "000000102|XX|Brace|Strategic Ploy Stratagem|1|Short fluff.|Either player’s turn|Any phase|"
    "Alpha Force|<b>WHEN:</b> Any phase.|\n"
    "000000103|XX|Sample Rule|Datasheet Ability|0||Your turn|Any phase||Some unit rule text.|\n"
)


def test_p15_two_stratagems_one_rule_and_the_legend_keeps_its_line_break():
    result = parse(Stratagems=F15)
    stratagems = of(result, Stratagem)
    assert [s.stratagem_id for s in stratagems] == [
        "10e/wahapedia/000000101",
        "10e/wahapedia/000000102",
    ]
    hold, brace = stratagems
    assert hold.legend == "Fluff line one\nfluff line two"
    assert (hold.when, hold.target, hold.effect, hold.restrictions) == (
        "Your Shooting phase.",
        None,
        "Re-roll 1s.",
        None,
    )
    assert (hold.group, hold.type, hold.cp_cost) == ("Alpha Force", "Battle Tactic", 1)
    assert (brace.name, brace.when, brace.effect) == ("Brace", "Any phase.", None)
    (rule,) = of(result, RuleText)
    assert (rule.rule_key, rule.text, rule.locator) == (
        "sample-rule",
        "Some unit rule text.",
        "Stratagems.csv line 5",
    )
    assert [f.detail for f in flags(result, "not_a_stratagem")] == [
        "Stratagems.csv row 000000103 has type 'Datasheet Ability'; loaded as a rule text"
    ]
    names = [getattr(r, "name", "") for r in result.records] + [
        getattr(r, "title", "") for r in result.records
    ]
    assert not any(n.lower().startswith("fluff line two") for n in names if n)
    assert (result.input_rows["Stratagems"], result.loaded["Stratagems"], result.rejects) == (
        3,
        3,
        [],
    )
    # The missing TARGET / EFFECT are flagged, not invented.
    assert sorted(f.detail for f in flags(result, "stratagem_section_missing")) == [
        "no EFFECT: section",
        "no TARGET: section",
        "no TARGET: section",
    ]


def test_stratagem_type_with_group_restrictions_and_a_linked_datasheet():
    strats = table(
        "faction_id|name|id|type|cp_cost|legend|turn|phase|detachment|detachment_id|description|",
        "|GRENADE|000008335006|Core – Wargear Stratagem|1|Throw.|Your turn|Shooting phase|||"
        '<b>WHEN:</b> Your Shooting phase.<br><br><b>TARGET:</b> One <span class="kwb">GRENADES</span>'
        " unit.<br><br><b>EFFECT:</b> Roll six D6.<br><br><b>RESTRICTIONS:</b> Once per phase.|",
        "|NEW ORDERS|000008539002|Core Stratagem – Strategic Ploy Stratagem|1||Your turn|Command phase|||"
        "<b>WHEN:</b> End.<br><b>TARGET:</b> You.<br><b>EFFECT:</b> Draw.|",
        "AS|X|000000777001|Other Detachment – Battle Tactic Stratagem|2||Your turn|Fight phase|"
        "Hallowed Martyrs|000000001|<b>WHEN:</b> a.<br><b>TARGET:</b> b.<br><b>EFFECT:</b> c.|",
        "AE|FADE BACK|000009895007|||||Shooting phase|Army Rules|000000783|<span>TRIGGER:</span> x|",
    )
    result = parse(
        Factions=FACTIONS,
        Datasheets=datasheets(ds("000000001", "Captain")),
        Stratagems=strats,
        Datasheets_stratagems=table(
            "datasheet_id|stratagem_id|",
            "000000001|000008335006|",
            "000000001|000009895007|",
            "000000009|000008335006|",
            "000000001|000000000404|",
        ),
    )
    grenade, orders, other = of(result, Stratagem)
    assert (grenade.group, grenade.type, grenade.target, grenade.restrictions) == (
        "Core",
        "Wargear",
        "One GRENADES unit.",
        "Once per phase.",
    )
    assert orders.group == "Core"  # "Core Stratagem" is read as the Core group
    assert other.group == "Hallowed Martyrs"  # the detachment column wins over the type text
    assert [f.detail for f in flags(result, "stratagem_group_differs")] == [
        "type says 'Other Detachment', detachment column says 'Hallowed Martyrs'"
    ]
    assert [r.title for r in of(result, RuleText)] == ["FADE BACK"]
    assert [f.detail for f in flags(result, "cp_cost_missing")] == []  # the rule row has no CP
    links = [
        (r.datasheet_id, r.stratagem_id)
        for r in result.records
        if r.__table__ == "datasheet_stratagems"
    ]
    assert links == [("10e/space-marines/captain", "10e/wahapedia/000008335006")]
    assert sorted(r.reason for r in result.rejects) == [
        "orphan: datasheet 000000009 is not in Datasheets.csv",
        "orphan: stratagem 000000000404 is not in Stratagems.csv",
        "stratagem 000009895007 is not a stratagem (type '')",
    ]


# ---- P17: unit composition with keyword spans ------------------------------------------------


def test_p17_composition_keyword_span_and_neighbours():
    rows = [
        '000000001|1|1 Captain – <span class="kwb">EPIC</span> <span class="kwb">HERO</span>|',
        "000000002|1|1 Sister Superior|",
        "000000002|2|4\u20119 Battle Sisters|",
        '000000003|1|1 Bjorn the Fell-Handed– <span class="kwb">EPIC</span> <span class="kwb">HERO</span>|',
        '000000004|1|0-1 Chapter Ancient - <span class="kwb">EPIC</span> <span class="kwb">HERO</span>|',
        "000000005|1|1 Runtherd and 10 Gretchin|",
        "000000005|2|OR|",
        "000000006|1|8 Kill Team Veterans:<br><ul><li>Vael Donatus</li><li>Zameon Gydrael</li></ul>|",
        "000000006|2|1 Kill Team Terminator (Garran Branatar)|",
        "000000007|1|1-2 Atalan Wolfquads*|",
        "000000404|1|1 Greater Daemon|",
    ]
    sheets = datasheets(*(ds(f"00000000{i}", f"Unit {i}") for i in range(1, 8)))
    result = parse(
        Factions=FACTIONS,
        Datasheets=sheets,
        Datasheets_unit_composition=table("datasheet_id|line|description|", *rows),
    )
    lines = {(c.datasheet_id.rsplit("/", 1)[1], c.line): c for c in of(result, UnitComposition)}
    captain = lines[("unit-1", 1)]
    assert (captain.model_name, captain.min_models, captain.max_models) == ("Captain", 1, 1)
    assert captain.text == "1 Captain – EPIC HERO"  # no tags left
    assert [(k.datasheet_id, k.keyword, k.is_faction_keyword) for k in of(result, Keyword)] == [
        ("10e/space-marines/unit-1", "EPIC HERO", False),
        ("10e/space-marines/unit-3", "EPIC HERO", False),
        ("10e/space-marines/unit-4", "EPIC HERO", False),
    ]
    assert (
        lines[("unit-2", 2)].model_name,
        lines[("unit-2", 2)].min_models,
        lines[("unit-2", 2)].max_models,
    ) == (
        "Battle Sisters",
        4,
        9,
    )
    assert (
        lines[("unit-3", 1)].model_name == "Bjorn the Fell-Handed"
    )  # the hyphen is part of the name
    assert (lines[("unit-4", 1)].min_models, lines[("unit-4", 1)].max_models) == (0, 1)
    # one row per model group, each with the printed line; the OR line is a row of its own
    gretchin = [
        (c.line, c.model_name, c.min_models, c.max_models, c.text, c.locator)
        for c in of(result, UnitComposition)
        if c.datasheet_id.endswith("/unit-5")
    ]
    assert gretchin == [
        (1, "Runtherd", 1, 1, "1 Runtherd and 10 Gretchin", "Datasheets_unit_composition.csv line 7"),
        (2, "Gretchin", 10, 10, "1 Runtherd and 10 Gretchin", "Datasheets_unit_composition.csv line 7"),
        (3, "", None, None, "OR", "Datasheets_unit_composition.csv line 8"),
    ]
    veterans = lines[("unit-6", 1)]
    assert (veterans.model_name, veterans.min_models) == ("Kill Team Veterans", 8)
    assert veterans.text == "8 Kill Team Veterans:\nVael Donatus\nZameon Gydrael"
    assert lines[("unit-6", 2)].model_name == "Kill Team Terminator (Garran Branatar)"
    assert lines[("unit-7", 1)].model_name == "Atalan Wolfquads"
    flags = [(f.entity_key, f.flag) for f in of(result, DataFlag) if f.table_name == "unit_composition"]
    assert sorted(flags) == [
        ("10e/space-marines/unit-5|3", "composition_text_line"),
        ("10e/space-marines/unit-7|1", "composition_footnote_marker"),
    ]
    starting = {d.name: d.starting_strength for d in of(result, Datasheet)}
    assert starting == {
        "Unit 1": 1,
        "Unit 2": None,
        "Unit 3": 1,
        "Unit 4": None,
        "Unit 5": None,
        "Unit 6": 9,
        "Unit 7": None,
    }
    assert [r.reason for r in result.rejects] == [
        "orphan: datasheet 000000404 is not in Datasheets.csv"
    ]


def test_composition_rows_numbered_per_datasheet_with_repeats_and_order_checked():
    rows = [
        "000000001|1|1 Grenadier Sergeant, 7 Grenadiers and 1 Heavy Weapons Team|",
        "000000001|2|OR|",
        "000000001|2|OR |",  # the same line again, same text: a duplicate
        "000000001|3|10 Grenadiers|",
        "000000001|3|12 Grenadiers|",  # the same line again, another text: a conflict
        "000000002|2|9 Wolf Scouts|",  # out of order: numbered as the file lists them
        "000000002|1|1 Wolf Scout Pack Leader|",
    ]
    result = parse(
        Factions=FACTIONS,
        Datasheets=datasheets(ds("000000001", "Grenadiers"), ds("000000002", "Wolf Scouts")),
        Datasheets_unit_composition=table("datasheet_id|line|description|", *rows),
    )
    got = [
        (c.datasheet_id.rsplit("/", 1)[1], c.line, c.model_name, c.min_models)
        for c in of(result, UnitComposition)
    ]
    assert got == [
        ("grenadiers", 1, "Grenadier Sergeant", 1),
        ("grenadiers", 2, "Grenadiers", 7),
        ("grenadiers", 3, "Heavy Weapons Team", 1),
        ("grenadiers", 4, "", None),
        ("grenadiers", 5, "Grenadiers", 10),
        ("wolf-scouts", 1, "Wolf Scouts", 9),
        ("wolf-scouts", 2, "Wolf Scout Pack Leader", 1),
    ]
    assert result.duplicates["Datasheets_unit_composition"] == 1
    (reject,) = result.rejects
    assert (reject.locator, reject.reason) == (
        "Datasheets_unit_composition.csv line 6",
        "duplicate_key_conflict: key ('10e/space-marines/grenadiers', 3) already loaded from "
        "Datasheets_unit_composition.csv line 5 with different values (min_models: 10 vs 12; "
        "max_models: 10 vs 12; text: '10 Grenadiers' vs '12 Grenadiers')",
    )
    (order,) = [f for f in of(result, DataFlag) if f.flag == "composition_line_order"]
    assert (order.entity_key, order.detail) == (
        "10e/space-marines/wolf-scouts|1",
        "export line 2 does not follow line 1: rows numbered in file order",
    )


def test_composition_keyword_does_not_repeat_a_listed_keyword():
    result = parse(
        Factions=FACTIONS,
        Datasheets=datasheets(ds("000000001", "Captain")),
        Datasheets_keywords=table(
            "datasheet_id|keyword|model|is_faction_keyword|",
            "000000001|Epic Hero||false|",
            "000000001|Adeptus Astartes||true|",
        ),
        Datasheets_unit_composition=table(
            "datasheet_id|line|description|",
            '000000001|1|1 Captain – <span class="kwb">EPIC</span> <span class="kwb">HERO</span>|',
        ),
    )
    assert [(k.keyword, k.locator) for k in of(result, Keyword)] == [
        ("EPIC HERO", "Datasheets_keywords.csv line 2"),
        ("ADEPTUS ASTARTES", "Datasheets_keywords.csv line 3"),
    ]


# ---- P12 and the other characteristics of a model --------------------------------------------


def test_p12_invulnerable_saves_and_neighbours():
    rows = [
        '000000001|1|A|6"|4|3+|-||2|6+|1|32mm||',
        '000000001|2|B|6"|4|3+|4+||2|6+|1|32mm||',
        '000000001|3|C|6"|4|3+|3+*|* Ranged attacks only|2|6+|1|32mm||',
        '000000001|4|D|20+"|12|3+|4*|Against ranged attacks only|30|6+|0|170mm||',
        '000000001|5|E|8"|3|6+|6|* 4+ against melee attacks|1|7+|2|25mm||',
        '000000001|6|F|6"|3|5+|5|* Traitor Enforcer model only.|3|6+|1|32mm||',
        "000000001|7|G|-|5*|5+|2|You cannot re-roll invulnerable saving throws made for this model.|2|8+|1|25mm||",
    ]
    result = parse(
        Factions=FACTIONS,
        Datasheets=datasheets(ds("000000001", "Unit")),
        Datasheets_models=table(MODELS_HEADER, *rows),
    )
    profiles = {p.model_name: p for p in of(result, ModelProfile)}
    inv = {n: (p.invulnerable_save, p.invulnerable_save_scope) for n, p in profiles.items()}
    assert inv == {
        "A": (None, None),
        "B": (4, None),
        "C": (3, "ranged"),  # never an unconditional 3+
        "D": (4, "ranged"),
        "E": (6, None),  # the note improves it in melee; the 6+ stays unconditional
        "F": (5, "Traitor Enforcer model only."),
        "G": (2, None),  # a note about re-rolls, not a scope
    }
    assert (
        profiles["D"].move_inches,
        profiles["D"].move_text,
        profiles["D"].objective_control,
    ) == (20, '20+"', 0)
    assert (profiles["G"].move_inches, profiles["G"].move_text, profiles["G"].toughness) == (
        None,
        "-",
        5,
    )
    assert (profiles["G"].leadership, profiles["A"].leadership) == (
        8,
        6,
    )  # Leadership is a 2D6 target
    assert [(f.flag, f.detail) for f in flags(result, "starred_characteristic")] == [
        ("starred_characteristic", "T='5*'")
    ]
    assert len(flags(result, "invulnerable_save_note")) == 5  # every note is kept


def test_model_profile_with_an_unreadable_value_keeps_the_line_with_a_data_gap():
    # The shared assembly's rule (pipeline.assemble.models): the line's good values load, the
    # unreadable one is None with a data gap naming the printed value and why.
    result = parse(
        Factions=FACTIONS,
        Datasheets=datasheets(ds("000000001", "Unit")),
        Datasheets_models=table(MODELS_HEADER, '000000001|1|A|6"|four|3+|-||2|6+|1|||'),
    )
    (model,) = of(result, ModelProfile)
    assert (model.move_inches, model.toughness, model.save, model.wounds) == (6, None, 3, 2)
    assert result.rejects == []
    (gap,) = of(result, DataGap)
    assert (gap.locator, gap.table_name, gap.entity_key, gap.field) == (
        "Datasheets_models.csv line 2", "model_profiles", "10e/space-marines/unit|1", "toughness",
    )
    assert gap.reason == "value 'four' not loaded: not a T characteristic: 'four' (expected a whole number)"


# ---- weapons: P01, P03, P09, P10, P18, P19, P24, P25 -----------------------------------------


def weapons(*rows: str, sheets: tuple[str, ...] = ()) -> ExportParseResult:
    sheets = sheets or (ds("000000001", "Unit"),)
    return parse(
        Factions=FACTIONS,
        Datasheets=datasheets(*sheets),
        Datasheets_wargear=table(WARGEAR_HEADER, *rows),
    )


def abilities_of(result: ExportParseResult, weapon: str) -> list[tuple]:
    return [
        (a.name, a.target_keyword, a.threshold, a.value.text if a.value else None, a.condition)
        for a in of(result, WeaponAbility)
        if a.weapon_name == weapon
    ]


def test_p01_anti_without_threshold_is_flagged_not_defaulted():
    result = weapons(
        "000000001|1|1||Gun A|Pistol, Anti-infantry, Precision|12|Ranged|1|3|4|0|1|",
        "000000001|2|1||Gun B|[ANTI-INFANTRY 4+, DEVASTATING WOUNDS]|12|Ranged|1|3|4|0|1|",
    )
    assert abilities_of(result, "Gun A") == [
        ("PISTOL", None, None, None, None),
        ("ANTI", "INFANTRY", None, None, None),
        ("PRECISION", None, None, None, None),
    ]
    assert abilities_of(result, "Gun B") == [
        ("ANTI", "INFANTRY", 4, None, None),
        ("DEVASTATING WOUNDS", None, None, None, None),
    ]
    assert [(f.entity_key, f.detail) for f in flags(result, "anti_missing_threshold")] == [
        ("10e/space-marines/unit|Gun A|ranged||2", "'Anti-infantry'")
    ]


def test_p03_sustained_hits_values():
    result = weapons(
        "000000001|1|1||Gun A|Sustained Hits, Twin-linked|12|Ranged|1|3|4|0|1|",
        "000000001|2|1||Gun B|[SUSTAINED HITS D3]|12|Ranged|1|3|4|0|1|",
        "000000001|3|1||Gun C|Sustained Hits 2|12|Ranged|1|3|4|0|1|",
    )
    assert abilities_of(result, "Gun A") == [
        ("SUSTAINED HITS", None, None, None, None),
        ("TWIN-LINKED", None, None, None, None),
    ]
    (d3,) = [a for a in of(result, WeaponAbility) if a.weapon_name == "Gun B"]
    assert (d3.value.text, d3.value.mean) == ("D3", 2)
    assert abilities_of(result, "Gun C") == [("SUSTAINED HITS", None, None, "2", None)]
    assert len(flags(result, "sustained_hits_missing_value")) == 1  # never a silent 1


def test_links_plain_text_and_period_separators_in_the_description():
    link = '<a href="/wh40k10ed/the-rules/core-rules/#{}">{}</a>'
    desc = (
        ", ".join([link.format("Anti", "anti-infantry 4+"), link.format("Blast", "blast")])
        + ", one shot"
    )
    dotted = (
        link.format("Sustained-Hits", "sustained hits 1")
        + ". "
        + link.format("Twin-linked", "twin-linked")
    )
    result = weapons(
        f"000000001|1|1||Missile|{desc}|48|Ranged|D6|3|8|-2|2|",
        f"000000001|2|1||Twin bolter|{dotted}|24|Ranged|2|3|4|0|1|",
        "000000001|3|1||Klaw|dead choppy|Melee|Melee|3|3|12|-2|2|",
    )
    missile = [p for p in of(result, WeaponProfile) if p.weapon_name == "Missile"][0]
    assert missile.abilities_text == "anti-infantry 4+, blast, one shot"
    assert abilities_of(result, "Missile") == [
        ("ANTI", "INFANTRY", 4, None, None),
        ("BLAST", None, None, None, None),
        ("ONE SHOT", None, None, None, None),
    ]
    assert [a[0] for a in abilities_of(result, "Twin bolter")] == ["SUSTAINED HITS", "TWIN-LINKED"]
    assert abilities_of(result, "Klaw") == [("DEAD CHOPPY", None, None, None, None)]
    assert [f.detail for f in flags(result, "unknown_weapon_ability")] == ["'dead choppy'"]


def test_11th_edition_condition_is_kept():
    result = weapons(
        "000000001|1|1||Shoota|LETHAL HITS: non-MONSTER/VEHICLE, Rapid Fire 1|18|Ranged|2|5|4|0|1|"
    )
    assert abilities_of(result, "Shoota") == [
        ("LETHAL HITS", None, None, None, "non-MONSTER/VEHICLE"),
        ("RAPID FIRE", None, None, "1", None),
    ]
    assert [a.raw_text for a in of(result, WeaponAbility)] == [
        "LETHAL HITS: non-MONSTER/VEHICLE",
        "Rapid Fire 1",
    ]


def test_p09_p10_torrent_skill_ap_range_and_dice():
    result = weapons(
        "000000001|1|1||Arcane fire|torrent|18|Ranged|D6|N/A|6|-1|1|",
        "000000001|2|1||Heavy flamer|torrent|12|Ranged|D6|3|5|-1|1|",
        "000000001|3|1||Flamer|torrent|12|Ranged|D6 |N/A|4|-0|1|",
        "000000001|4|1||Deathstrike missile|blast, one shot|N/A|Ranged|2D6|2|16|-4|1|",
        "000000001|5|1||Zzap gun|heavy|36|Ranged|1|6|2D6|-3|3|",
        "000000001|6|1||Grav-pistol|pistol|12|Ranged|1|3+|4|-1|2|",
        "000000001|7|1||Blade||Melee|Melee|D6+3|2|5|-1|D3+3|",
    )
    p = {w.weapon_name: w for w in of(result, WeaponProfile)}
    assert (
        p["Arcane fire"].skill,
        p["Arcane fire"].attacks.text,
        p["Arcane fire"].range_inches,
    ) == (None, "D6", 18)
    assert p["Heavy flamer"].skill is None  # Torrent: no hit roll, even with a printed BS
    assert [f.entity_key for f in flags(result, "torrent_with_bs")] == [
        "10e/space-marines/unit|Heavy flamer|ranged|"
    ]
    assert (p["Flamer"].armour_penetration, p["Flamer"].attacks.text) == (0, "D6")
    assert p["Deathstrike missile"].range_inches is None
    assert [f.detail for f in flags(result, "range_not_applicable")] == ["range='N/A'"]
    assert p["Zzap gun"].strength is None
    assert [f.detail for f in flags(result, "strength_not_fixed")] == [
        "S='2D6' (a dice roll; not stored)"
    ]
    assert p["Grav-pistol"].skill == 3
    blade = p["Blade"]
    assert (
        blade.is_melee,
        blade.range_inches,
        blade.attacks.text,
        blade.damage.text,
        blade.skill,
    ) == (
        True,
        None,
        "D6+3",
        "D3+3",
        2,
    )


def test_p18_multi_profile_weapon_is_one_weapon_with_two_profiles():
    result = weapons(
        "000000001|1|1||➤ Plasma storm battery - standard|blast|36|Ranged|D6+3|3|8|-3|2|",
        "000000001|2|2||Plasma storm battery - supercharge|blast, hazardous|36|Ranged|D6+3|3|9|-4|3|",
        "000000001|3|1|1-2 |Bubblechukka – big bubble|bubblechukka, blast|48|Ranged|2D6|4|6|-1|1|",
    )
    profiles = of(result, WeaponProfile)
    assert [(p.weapon_name, p.profile_name) for p in profiles] == [
        ("Plasma storm battery", "standard"),
        ("Plasma storm battery", "supercharge"),
        ("Bubblechukka", "big bubble"),
    ]
    assert len({p.weapon_name for p in profiles if "Plasma" in p.weapon_name}) == 1
    assert not any("➤" in p.weapon_name for p in profiles)
    assert [f.detail for f in flags(result, "profile_chosen_by_roll")] == [
        "this profile is used on a D6 roll of 1-2"
    ]


def test_split_profile_name_never_splits_a_hyphenated_word():
    assert split_profile_name("Kombi-rokkit - Busta Rokkit") == ("Kombi-rokkit", "Busta Rokkit")
    assert split_profile_name("Plasma cannon – standard ") == ("Plasma cannon", "standard")
    assert split_profile_name("Twin-linked heavy bolter") == ("Twin-linked heavy bolter", "")


def test_p19_same_name_ranged_and_melee_are_two_profiles():
    result = weapons(
        "000000001|1|1||Singing spear|assault|12|Ranged|1|3|9|0|3|",
        "000000001|2|1||Singing spear||Melee|Melee|1|3|9|0|3|",
    )
    spear = {p.is_melee: p for p in of(result, WeaponProfile)}
    assert (spear[False].range_inches, spear[True].range_inches) == (12, None)
    assert len(spear) == 2 and result.rejects == [] and result.duplicates["Datasheets_wargear"] == 0


def test_p24_weapons_are_keyed_by_datasheet():
    sheets = (
        ds("000000001", "Autarch", "AE"),
        ds("000000002", "Fire Dragons", "AE"),
        ds("000000003", "Unit C"),
        ds("000000004", "Unit D"),
    )
    result = weapons(
        "000000001|1|1||Fusion gun|melta 2|12|Ranged|1|2|9|-4|D6|",
        "000000002|1|1||Fusion gun|melta 2|12|Ranged|1|3|9|-4|D6|",
        "000000003|1|1||Close combat weapon||Melee|Melee|1|4|4|0|1|",
        "000000004|1|1||Close combat weapon||Melee|Melee|3|3|4|0|1|",
        sheets=sheets,
    )
    by_key = {(p.datasheet_id, p.weapon_name): p for p in of(result, WeaponProfile)}
    assert by_key[("10e/aeldari/fire-dragons", "Fusion gun")].skill == 3
    assert by_key[("10e/aeldari/autarch", "Fusion gun")].skill == 2
    c = by_key[("10e/space-marines/unit-c", "Close combat weapon")]
    assert (c.attacks.text, c.skill, c.strength) == ("1", 4, 4)


def test_p25_conflicting_profiles_keep_the_first_and_flag_identical_ones_collapse():
    rows = (
        "000000001|1|1||Storm bolter|rapid fire 2|24|Ranged|2|3|4|0|1|",
        "000000001|2|1||Storm bolter|rapid fire 1|24|Ranged|2|3|4|0|1|",
        "000000001|3|1||Power fist||Melee|Melee|3|3|8|-2|2|",
        "000000001|4|1||Power fist||Melee|Melee|3|3|8|-2|2|",  # same values, another line
        "000000001|4|1||Power fist||Melee|Melee|3|3|8|-2|2|",  # the very same row again
    )
    result = weapons(*rows)
    bolters = [p for p in of(result, WeaponProfile) if p.weapon_name == "Storm bolter"]
    assert [b.abilities_text for b in bolters] == ["rapid fire 2"]  # the first, never the last
    assert len([p for p in of(result, WeaponProfile) if p.weapon_name == "Power fist"]) == 1
    (reject,) = result.rejects
    assert (reject.locator, reject.raw_text) == ("Datasheets_wargear.csv line 3", rows[1])
    assert reject.reason.startswith(
        "duplicate_profile_conflict: key ('10e/space-marines/unit', 'Storm bolter', False, '')"
    )
    (flag,) = flags(result, "duplicate_profile_conflict")
    assert flag.detail == (
        'kept Datasheets_wargear.csv line 2: 24" A2 BS3+ S4 AP0 D1 [rapid fire 2]; '
        'rejected Datasheets_wargear.csv line 3: 24" A2 BS3+ S4 AP0 D1 [rapid fire 1]'
    )
    assert (
        result.duplicates["Datasheets_wargear"],
        result.exact_duplicates["Datasheets_wargear"],
    ) == (2, 1)
    assert (result.input_rows["Datasheets_wargear"], result.loaded["Datasheets_wargear"]) == (5, 2)


def test_blank_placeholder_rows_orphans_and_the_test_row():
    sheets = (
        ds("000000087", "Drop Pod"),
        ds("000003708", "Example Wargear", source_id="", role="", virtual="true"),
    )
    result = weapons(
        "000000087||1||||||0|-|-|0|-|",
        "000000087||1||||||0|-|-|0|-|",
        "000003708|1|1||Bolt pistol|pistol|12|Ranged|1|3|4|0|1|",
        "000004150|1|1||Claws||Melee|Melee|4|3|5|-1|1|",
        sheets=sheets,
    )
    assert [d.name for d in of(result, Datasheet)] == ["Drop Pod"]
    assert [(r.table_name, r.locator, r.reason) for r in result.rejects] == [
        (
            "Datasheets",
            "Datasheets.csv line 3",
            "test row: 'Example Wargear' is virtual and has no source publication",
        ),
        ("Datasheets_wargear", "Datasheets_wargear.csv line 2", "blank wargear placeholder row"),
        (
            "Datasheets_wargear",
            "Datasheets_wargear.csv line 4",
            "datasheet 000003708 was rejected (test row: 'Example Wargear' is virtual and has no source publication)",
        ),
        (
            "Datasheets_wargear",
            "Datasheets_wargear.csv line 5",
            "orphan: datasheet 000004150 is not in Datasheets.csv",
        ),
    ]
    assert result.exact_duplicates["Datasheets_wargear"] == 1


# ---- P28: factions and keywords ---------------------------------------------------------------


def test_p28_both_tau_spellings_are_one_faction_and_faction_keywords_are_kept_apart():
    factions = table(
        "id|name|link|", "TAU|T’au Empire||", "TAU2|T'au Empire||", "SM|Space Marines||"
    )
    result = parse(
        Factions=factions,
        Datasheets=datasheets(ds("000000001", "Strike Team", "TAU2"), ds("000000002", "Scouts")),
        Datasheets_keywords=table(
            "datasheet_id|keyword|model|is_faction_keyword|",
            "000000002|Infantry||false|",
            "000000002|Adeptus Astartes||true|",
            "000000002|Infantry|SERGEANT|false|",
            "000000002||ALL MODELS|true|",
            "000000001|Fly||maybe|",
        ),
    )
    assert [(f.faction_id, f.name) for f in of(result, Faction)] == [
        ("tau-empire", "T’au Empire"),
        ("space-marines", "Space Marines"),
    ]
    assert result.duplicates["Factions"] == 1
    assert [f.detail for f in flags(result, "faction_name_variant")] == [
        "\"T'au Empire\" (id TAU2) joined to 'T’au Empire' from Factions.csv line 2"
    ]
    assert [d.faction_id for d in of(result, Datasheet)] == ["tau-empire", "space-marines"]
    assert [(k.keyword, k.is_faction_keyword) for k in of(result, Keyword)] == [
        ("INFANTRY", False),
        ("ADEPTUS ASTARTES", True),
    ]
    assert result.duplicates["Datasheets_keywords"] == 1  # INFANTRY again, for one model
    assert [f.detail for f in flags(result, "model_specific_keyword")] == [
        "INFANTRY applies to: SERGEANT"
    ]
    assert sorted(r.reason for r in result.rejects) == [
        "blank keyword",
        "is_faction_keyword='maybe' is neither true nor false",
    ]
    assert [f.entity_key for f in flags(result, "missing_faction_keyword")] == [
        "10e/tau-empire/strike-team"
    ]


# ---- datasheets --------------------------------------------------------------------------------


def test_repeated_name_in_one_faction_gets_distinct_stable_ids():
    result = parse(
        Factions=FACTIONS,
        Source=table(
            "id|name|type|edition|version|errata_date|errata_link|",
            "000000139|Space Marines|Codex|10|1.0|08.10.2025 0:00:00||",
            "000000162|Black Templars|Codex Supplement|10|1.0|01.01.0001 0:00:00||",
        ),
        Datasheets=datasheets(
            ds(
                "000004139",
                "Land Raider Crusader",
                source_id="000000162",
                link="https://x/Land-Raider-Crusader-1",
            ),
            ds("000000066", "Land Raider Crusader", link="https://x/Land-Raider-Crusader"),
        ),
    )
    assert sorted((d.external_id, d.datasheet_id) for d in of(result, Datasheet)) == [
        ("000000066", "10e/space-marines/land-raider-crusader"),
        ("000004139", "10e/space-marines/land-raider-crusader--black-templars"),
    ]
    assert len(flags(result, "repeated_datasheet_name")) == 2
    pubs = {
        p.publication_id: (p.edition, p.errata_date)
        for p in result.records
        if p.__table__ == "publications"
    }
    assert pubs == {
        "10e/wahapedia/000000139": (10, dt.date(2025, 10, 8)),
        "10e/wahapedia/000000162": (10, None),  # 01.01.0001 means no date
    }


def test_loadout_lines_and_datasheet_sections():
    loadout = (
        "<b>The Sister Superior is equipped with:</b> bolt pistol; boltgun.<br><br>"
        "<b>6 Battle Sisters are equipped with:</b> boltgun; close combat weapon.<br><br>"
        "<b>Designer’s Note:</b> <i>Place a token.</i>"
    )
    row = (
        "000000001|Squad|AS|000000001|Fluff &amp; more.|Battleline|"
        + loadout
        + '|This model has a transport capacity of 6 <span class="kwb">INFANTRY</span> models.|false|||1-5|'
        "While this model has 1-5 wounds remaining, subtract 1 from the Hit roll.||"
    )
    header = (
        "id|name|faction_id|source_id|legend|role|loadout|transport|virtual|leader_head|"
        "leader_footer|damaged_w|damaged_description|link|"
    )
    result = parse(Factions=FACTIONS, Datasheets=table(header, row))
    (sheet,) = of(result, Datasheet)
    assert (sheet.legend, sheet.role) == ("Fluff & more.", "Battleline")
    loadouts = [
        (w.line, w.models, w.model_count, w.equipment)
        for w in result.records
        if w.__table__ == "wargear_loadouts"
    ]
    assert loadouts == [
        (1, "The Sister Superior", None, "bolt pistol; boltgun"),
        (2, "6 Battle Sisters", 6, "boltgun; close combat weapon"),
    ]
    assert [f.detail for f in flags(result, "loadout_note")] == ["Designer’s Note: Place a token."]
    sections = {
        a.name: (a.kind, a.parameter, a.text) for a in result.records if a.__table__ == "abilities"
    }
    assert sections == {
        "Transport": ("other", None, "This model has a transport capacity of 6 INFANTRY models."),
        "Damaged": (
            "other",
            "1-5",
            "While this model has 1-5 wounds remaining, subtract 1 from the Hit roll.",
        ),
    }


def test_datasheet_abilities_join_the_abilities_table():
    result = parse(
        Factions=FACTIONS,
        Datasheets=datasheets(ds("000000001", "Unit")),
        Abilities=table(
            "id|name|legend|faction_id|description|",
            '000008338|Feel No Pain|Fluff.||<div class="abName">FEEL NO PAIN</div>'
            '<p class="ShowFluff">Fluff.</p>Each time a model would lose a wound, roll one D6.|',
        ),
        Datasheets_abilities=table(
            "datasheet_id|line|ability_id|model|name|description|type|parameter|",
            "000000001|1|000008338||||Core|5+|",
            "000000001|2|||Shield|Each time <b>x</b>.|Datasheet||",
            "000000001|3|||Orders|Issue orders.|Special (правая колонка)||",
            "000000001|4|000009999||||Core||",
            "000000001|5|||Thing|Text.|Mystery||",
        ),
    )
    abilities = [
        (a.kind, a.name, a.parameter, a.text) for a in result.records if a.__table__ == "abilities"
    ]
    assert abilities == [
        ("core", "Feel No Pain", "5+", None),
        ("datasheet", "Shield", None, "Each time x."),
        ("other", "Orders", None, "Issue orders."),
    ]
    (rule,) = of(result, RuleText)
    assert (rule.rule_key, rule.title, rule.text) == (
        "feel-no-pain",
        "Feel No Pain",
        "Each time a model would lose a wound, roll one D6.",
    )
    assert [r.reason for r in result.rejects] == [
        "ability 000009999 is not in Abilities.csv",
        "unknown ability type 'Mystery' (known: Core, Faction, Datasheet, Primarch, Wargear, Wargear profile, "
        "Special (правая колонка), Fortification (левая колонка), Без заголовка)",
    ]


def test_is_support_and_virtual_columns_are_read():
    header = "id|name|faction_id|source_id|legend|role|loadout|transport|virtual|is_support|link|"
    result = parse(
        Factions=FACTIONS,
        Datasheets=table(
            header,
            "000000001|A|SM|1|||||false|true||",
            "000000002|B|SM|1|||||true|false||",
            "000000003|C|SM|1|||||false|yes||",
        ),
    )
    assert len(of(result, Datasheet)) == 3
    assert sorted((f.entity_key, f.flag) for f in of(result, DataFlag)) == [
        ("10e/space-marines/a", "support_unit"),
        ("10e/space-marines/b", "virtual_datasheet"),
        ("10e/space-marines/c", "bad_boolean"),
    ]


# ---- tables, columns, accounting --------------------------------------------------------------


def test_missing_required_column_rejects_the_table_and_an_unknown_table_is_rejected():
    result = parse(
        Factions=FACTIONS,
        Datasheets_leader=table("leader|attached_id|", "000000001|000000002|"),
        Wargear=table("id|name|", "1|Bolter|"),
    )
    assert [(r.table_name, r.reason) for r in result.rejects] == [
        (
            "Datasheets_leader",
            "the header of Datasheets_leader.csv lacks the column(s) leader_id (header: leader|attached_id)",
        ),
        ("Wargear", "unknown table 'Wargear': not part of the export"),
    ]


def test_spec_column_names_of_the_leader_table_are_accepted_and_unknown_columns_flagged():
    result = parse(
        Factions=FACTIONS,
        Datasheets=datasheets(ds("000000001", "Captain"), ds("000000002", "Squad")),
        Datasheets_leader=table(
            "datasheet_id|attached_datasheet_id|", "000000001|000000002|", "000000001|000000002|"
        ),
        Detachments=table("id|faction_id|name|legend|type|colour|", "000000765|SM|Gladius|||red|"),
    )
    links = [
        (r.leader_datasheet_id, r.bodyguard_datasheet_id, r.leader_name, r.bodyguard_name)
        for r in result.records
        if r.__table__ == "leader_links"
    ]
    assert links == [("10e/space-marines/captain", "10e/space-marines/squad", "Captain", "Squad")]
    assert result.exact_duplicates["Datasheets_leader"] == 1
    assert [f.detail for f in flags(result, "unknown_column")] == [
        "Detachments.csv has column(s) this parser does not read: colour"
    ]


def test_accounting_rows_add_up_per_table():
    result = weapons(
        "000000001|1|1||Bolter||24|Ranged|1|3|4|0|1|",
        "000000001|1|1||Bolter||24|Ranged|1|3|4|0|1|",
        "000000009|1|1||Bolter||24|Ranged|1|3|4|0|1|",
        "bad|row|",
    )
    rows = {
        a.table_name: (a.input_rows, a.loaded, a.duplicates, a.rejected)
        for a in accounting(result, "s")
    }
    assert rows == {
        "Datasheets": (1, 1, 0, 0),
        "Datasheets_wargear": (4, 1, 1, 2),
        "Factions": (3, 3, 0, 0),
    }


def test_enhancements_costs_and_links():
    result = parse(
        Factions=FACTIONS,
        Datasheets=datasheets(ds("000000001", "Canoness", "AS")),
        Enhancements=table(
            "faction_id|id|name|cost|detachment|detachment_id|legend|description|",
            "AS|000008395002|Blade of Saint Ellynor|15|Hallowed Martyrs|000000001||Add 1 to &lt;b&gt;A&lt;/b&gt;.|",
            "AS|000008395003|Upgrade|+40|Hallowed Martyrs|000000001||Text.|",
            "AS|000008395004|Bad|fifteen|Hallowed Martyrs|000000001||Text.|",
        ),
        Datasheets_enhancements=table(
            "datasheet_id|enhancement_id|", "000000001|000008395002|", "000000001|000008395004|"
        ),
    )
    costs = [
        (e.name, e.cost_points, e.text) for e in result.records if e.__table__ == "enhancements"
    ]
    assert costs == [("Blade of Saint Ellynor", 15, "Add 1 to A."), ("Upgrade", 40, "Text.")]
    assert [f.detail for f in flags(result, "addon_cost")] == ["cost printed as '+40'"]
    assert [
        p.enhancement_id for p in result.records if p.__table__ == "datasheet_enhancements"
    ] == ["10e/wahapedia/000008395002"]
    assert [r.reason for r in result.rejects] == [
        "not a points cost: 'fifteen'",
        "orphan: enhancement 000008395004 is not in Enhancements.csv",
    ]


def test_last_update_is_read_and_compared_with_the_manifest():
    result = parse(Last_update=table("last_update|", "2025-11-15 01:00:00|"))
    assert result.last_update == dt.datetime(2025, 11, 15, 1, 0)
    assert [f.detail for f in flags(result, "last_update_differs")] == [
        "Last_update.csv says 2025-11-15 01:00:00; the manifest says 2025-11-14"
    ]


def test_edition_is_required():
    with pytest.raises(ManifestError, match="needs its edition"):
        parse_export({}, source(edition=None))


def test_11th_edition_ids():
    result = parse_export(
        {"Factions": FACTIONS, "Datasheets": datasheets(ds("000000001", "Warboss"))}, source(11)
    )
    assert [d.datasheet_id for d in of(result, Datasheet)] == ["11e/space-marines/warboss"]


# ---- the ListBrewer re-save -----------------------------------------------------------------


def test_restore_listbrewer_resave_gives_back_the_pipe_lines():
    resaved = (
        BOM + '"datasheet_id|line|name|description|range|"\n'
        '"000000001|2|Kombi-rokkit - Shoota|LETHAL HITS: non-MONSTER/VEHICLE"|" Rapid Fire 1|18""|"\n'
        '"000000002|1|Slugga||12|"\n'
    )
    restored = restore_listbrewer_resave(resaved)
    assert restored == (
        BOM + "datasheet_id|line|name|description|range|\n"
        '000000001|2|Kombi-rokkit - Shoota|LETHAL HITS: non-MONSTER/VEHICLE, Rapid Fire 1|18"|\n'
        "000000002|1|Slugga||12|\n"
    )
    assert restore_listbrewer_resave('"a|"\r\n"1|"\r\n') == "a|\r\n1|\r\n"
