"""The Wahapedia CSV export parser on the real exports in ``../shared/corpus``.

- wahapedia-10e: the full 10th-edition export (20 tables, 2025-11-14), exact counts.
- wahapedia-11e: the ListBrewer 11th-edition excerpts, restored from their comma re-save in the
  set-up here (``restore_listbrewer_resave``), never by the parser itself.

The golden files of this format are of made-up exports (``tests/golden/inputs/wahapedia_csv_*``,
``tests/test_golden.py``), so they run without the corpus.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from pipeline.extractors.wahapedia_csv import (
    TABLES,
    ExportParseResult,
    accounting,
    check_accounting,
    parse_export,
    restore_listbrewer_resave,
)
from schemas.records import (
    DataFlag,
    Datasheet,
    Keyword,
    ModelProfile,
    RuleText,
    Source,
    Stratagem,
    UnitComposition,
    WeaponAbility,
    WeaponProfile,
)
from tests.conftest import CORPUS

W10 = CORPUS / "wahapedia-10e"
W11 = CORPUS / "wahapedia-11e"

pytestmark = pytest.mark.skipif(
    not W10.is_dir() or not W11.is_dir(),
    reason=f"the corpus of real exports is not at {CORPUS} (it sits beside the checkout, "
    "never committed)",
)


def source(edition: int, version_date: dt.date) -> Source:
    return Source(
        source_id=f"wahapedia-{edition}e-export",
        title=f"Wahapedia CSV export, {edition}th edition",
        file=f"wahapedia-{edition}e",
        format="wahapedia-csv",
        publisher="Wahapedia",
        edition=edition,  # type: ignore[arg-type]
        kind="export",
        game_mode=None,
        version=None,
        version_date=version_date,
        origin="corpus",
    )


def read_tables(folder: Path) -> dict[str, str]:
    """Each ``.csv`` file's text, as the build reads it (bytes decoded as UTF-8, BOM kept)."""
    return {
        p.name[: -len(".csv")]: p.read_bytes().decode("utf-8") for p in sorted(folder.glob("*.csv"))
    }


@pytest.fixture(scope="module")
def files10() -> dict[str, str]:
    return read_tables(W10)


@pytest.fixture(scope="module")
def export10(files10) -> ExportParseResult:
    return parse_export(files10, source(10, dt.date(2025, 11, 14)))


def of(result: ExportParseResult, cls: type) -> list:
    return [r for r in result.records if isinstance(r, cls)]


# ---- the full 10th-edition export -------------------------------------------------------------

#: table: (input rows, loaded, duplicates, rejected)
ACCOUNTING_10E = {
    "Abilities": (90, 90, 0, 0),
    "Datasheets": (1676, 1675, 0, 1),
    "Datasheets_abilities": (6974, 6973, 0, 1),
    "Datasheets_detachment_abilities": (13254, 13254, 0, 0),
    "Datasheets_enhancements": (9092, 9092, 0, 0),
    "Datasheets_keywords": (15583, 11408, 3846, 329),
    "Datasheets_leader": (1862, 1846, 16, 0),
    "Datasheets_models": (1780, 1776, 0, 4),
    "Datasheets_models_cost": (2091, 2091, 0, 0),
    "Datasheets_options": (2757, 2757, 0, 0),
    "Datasheets_stratagems": (74102, 74099, 0, 3),
    "Datasheets_unit_composition": (2116, 2112, 0, 4),
    "Datasheets_wargear": (9139, 8954, 16, 169),
    "Detachment_abilities": (244, 244, 0, 0),
    "Detachments": (228, 228, 0, 0),
    "Enhancements": (797, 797, 0, 0),
    "Factions": (26, 26, 0, 0),
    "Last_update": (1, 1, 0, 0),
    "Source": (70, 70, 0, 0),
    "Stratagems": (1290, 1290, 0, 0),
}


def test_all_20_tables_are_read_and_every_row_is_accounted_for(export10, files10):
    assert sorted(files10) == sorted(TABLES)
    rows = accounting(export10, "wahapedia-10e-export")
    check_accounting(rows)
    assert {
        a.table_name: (a.input_rows, a.loaded, a.duplicates, a.rejected) for a in rows
    } == ACCOUNTING_10E
    # Input rows are the data rows of each file (MANIFEST.md), one record per line.
    for name, text in files10.items():
        assert export10.input_rows[name] == text.count("\r\n") - 1, name


def test_duplicates_match_the_manifest(export10):
    assert export10.exact_duplicates == Counter(
        {"Datasheets_keywords": 3843, "Datasheets_wargear": 16, "Datasheets_leader": 16}
    )
    # 3 more keyword rows repeat a keyword of the unit for another model (the schema has no model).
    assert export10.duplicates["Datasheets_keywords"] == 3846


def test_rejects_by_reason(export10):
    def kind(reason: str) -> str:
        return re.sub(r"\d{9}", "N", reason.split(" (")[0])

    assert Counter((r.table_name, kind(r.reason)) for r in export10.rejects) == Counter(
        {
            (
                "Datasheets",
                "test row: 'Example Wargear' is virtual and has no source publication",
            ): 1,
            ("Datasheets_abilities", "orphan: datasheet N is not in Datasheets.csv"): 1,
            ("Datasheets_keywords", "blank keyword"): 304,
            ("Datasheets_keywords", "datasheet N was rejected"): 1,
            ("Datasheets_keywords", "orphan: datasheet N is not in Datasheets.csv"): 24,
            ("Datasheets_models", "orphan: datasheet N is not in Datasheets.csv"): 4,
            ("Datasheets_stratagems", "orphan: datasheet N is not in Datasheets.csv"): 3,
            ("Datasheets_unit_composition", "orphan: datasheet N is not in Datasheets.csv"): 4,
            ("Datasheets_wargear", "blank wargear placeholder row"): 28,
            ("Datasheets_wargear", "datasheet N was rejected"): 2,
            ("Datasheets_wargear", "orphan: datasheet N is not in Datasheets.csv"): 139,
        }
    )
    first = next(r for r in export10.rejects if r.table_name == "Datasheets_models")
    assert (first.locator, first.reason) == (
        "Datasheets_models.csv line 1741",
        "orphan: datasheet 000004150 is not in Datasheets.csv",
    )
    assert first.raw_text.startswith("000004150|1|Greater Daemon|")


def test_orphan_datasheet_ids_per_table(export10):
    orphans: dict[str, set[str]] = {}
    for r in export10.rejects:
        m = re.fullmatch(r"orphan: datasheet (\d{9}) is not in Datasheets.csv", r.reason)
        if m:
            orphans.setdefault(r.table_name, set()).add(m.group(1))
    daemons = {"000004150", "000004151", "000004152", "000004153"}
    assert len(orphans["Datasheets_wargear"]) == 68
    assert orphans["Datasheets_models"] == daemons
    assert orphans["Datasheets_keywords"] == daemons
    assert orphans["Datasheets_unit_composition"] == daemons


def test_record_counts(export10):
    assert Counter(r.__table__ for r in export10.records) == Counter(
        {
            "datasheet_stratagems": 74099,
            "keywords": 11410,
            "weapon_abilities": 9698,
            "weapon_profiles": 8954,
            "abilities": 7561,
            "unit_composition": 2140,  # 2112 rows; 22 lines of several model groups give 28 more
            "wargear_loadouts": 1925,
            "leader_links": 1846,
            "model_profiles": 1776,
            "datasheets": 1675,
            "stratagems": 1284,
            "enhancements": 797,
            "data_flags": 329,  # 14 model lines that print no name: model_name_from_datasheet
            "rule_texts": 96,
            "factions": 26,
            "datasheet_detachment_abilities": 13254,
            "datasheet_enhancements": 9092,
            "wargear_options": 2757,
            "unit_costs": 2091,
            "detachment_abilities": 244,
            "detachments": 228,
            "publications": 70,
        }
    )
    assert export10.last_update == dt.datetime(2025, 11, 14, 19, 35, 22)


def test_flags(export10):
    assert Counter(f.flag for f in of(export10, DataFlag)) == Counter(
        {
            "model_specific_keyword": 120,
            "invulnerable_save_note": 68,
            "loadout_note": 22,
            "repeated_datasheet_name": 22,
            "unknown_weapon_ability": 20,
            "composition_text_line": 23,  # 11 OR, 8 size caps, 4 other text lines
            "stratagem_group_differs": 9,
            "composition_footnote_marker": 6,
            "not_a_stratagem": 6,
            "missing_faction_keyword": 4,
            "addon_cost": 4,
            "strength_not_fixed": 3,
            "profile_chosen_by_roll": 3,
            "range_not_applicable": 2,
            "starred_characteristic": 1,
            "torrent_with_bs": 1,
            "markup_left_in_text": 1,
            "model_name_from_datasheet": 14,
        }
    )


def test_datasheets(export10):
    sheets = {d.datasheet_id: d for d in of(export10, Datasheet)}
    assert len(sheets) == 1676 - 1  # minus the test row "Example Wargear"
    bss = sheets["10e/adepta-sororitas/battle-sisters-squad"]
    assert (bss.name, bss.external_id, bss.role, bss.faction_id, bss.starting_strength) == (
        "Battle Sisters Squad",
        "000000903",
        "Battleline",
        "adepta-sororitas",
        10,
    )
    assert bss.legend.startswith(
        "Battle Sisters of the Orders Militant are skilled and devout warriors."
    )
    assert sheets["10e/orks/boyz"].starting_strength is None  # 10-20 models
    factions = {f.faction_id for f in export10.records if f.__table__ == "factions"}
    assert factions - {d.faction_id for d in sheets.values()} == {
        "unbound-adversaries"
    }  # no datasheets


def test_composition_lines_are_model_groups_with_or_rows(export10):
    def rows(datasheet_id: str) -> list[tuple]:
        return [
            (c.line, c.model_name, c.min_models, c.max_models, c.locator)
            for c in of(export10, UnitComposition)
            if c.datasheet_id == datasheet_id
        ]

    # three export rows (line 1, OR, line 3) -> five rows: one per model group, the OR kept
    assert rows("10e/astra-militarum/cadian-shock-troops") == [
        (1, "Shock Trooper Sergeant", 1, 1, "Datasheets_unit_composition.csv line 1268"),
        (2, "Shock Troopers", 9, 9, "Datasheets_unit_composition.csv line 1268"),
        (3, "", None, None, "Datasheets_unit_composition.csv line 1269"),
        (4, "Shock Trooper Sergeants", 2, 2, "Datasheets_unit_composition.csv line 1270"),
        (5, "Shock Troopers", 18, 18, "Datasheets_unit_composition.csv line 1270"),
    ]
    # groups separated by commas too; the closing full stop is not part of the name
    assert [r[1:4] for r in rows("10e/astra-militarum/regimental-attaches")] == [
        ("Master of Ordnance", 1, 1),
        ("Officer of the Fleet", 1, 1),
        ("Astropath", 1, 1),
    ]
    assert [r[1:4] for r in rows("10e/world-eaters/jakhals")] == [
        ("Jakhal Pack Leader", 1, 1),
        ("Dishonoured", 1, 1),
        ("Jakhals", 8, 8),
        ("", None, None),  # "or:"
        ("Jakhal Pack Leader", 1, 1),
        ("Dishonoured", 2, 2),
        ("Jakhals", 17, 17),
    ]
    # a size cap is not a model line (it was read as 10 models named "MODELS MAXIMUM")
    assert rows("10e/space-marines/spectrus-kill-team")[:2] == [
        (1, "", None, None, "Datasheets_unit_composition.csv line 1426"),
        (2, "Kill Team Infiltrators", 3, 10, "Datasheets_unit_composition.csv line 1427"),
    ]
    sheets = {d.datasheet_id: d.starting_strength for d in of(export10, Datasheet)}
    assert sheets["10e/astra-militarum/regimental-attaches"] == 3
    assert sheets["10e/astra-militarum/cadian-shock-troops"] is None  # two alternatives
    assert not [f for f in of(export10, DataFlag) if f.flag == "composition_line_order"]


def test_repeated_names_get_distinct_ids(export10):
    suffixed = sorted(d.datasheet_id for d in of(export10, Datasheet) if "--" in d.datasheet_id)
    assert suffixed == [
        "10e/chaos-daemons/karanak--chaos-daemons-warhammer-legends",
        "10e/space-marines/gladiator-lancer--black-templars",
        "10e/space-marines/gladiator-reaper--black-templars",
        "10e/space-marines/gladiator-valiant--black-templars",
        "10e/space-marines/impulsor--black-templars",
        "10e/space-marines/land-raider-crusader--black-templars",
        "10e/space-marines/repulsor--black-templars",
        "10e/space-marines/repulsor-executioner--black-templars",
        "10e/space-marines/sternguard-veteran-squad--black-templars",
        "10e/space-marines/terminator-squad--black-templars",
        "10e/space-marines/wolf-scouts--space-wolves",  # the Legends row keeps the plain id
    ]
    ids = {d.external_id: d.datasheet_id for d in of(export10, Datasheet)}
    assert ids["000000310"] == "10e/space-marines/wolf-scouts"
    assert ids["000004102"] == "10e/chaos-daemons/karanak--chaos-daemons-warhammer-legends"


def profile(
    export10, datasheet_id: str, weapon: str, is_melee: bool = False, profile_name: str = ""
):
    (p,) = [
        w
        for w in of(export10, WeaponProfile)
        if (w.datasheet_id, w.weapon_name, w.is_melee, w.profile_name)
        == (datasheet_id, weapon, is_melee, profile_name)
    ]
    abilities = [
        (a.name, a.target_keyword, a.threshold, a.value.text if a.value else None)
        for a in of(export10, WeaponAbility)
        if (a.datasheet_id, a.weapon_name, a.is_melee, a.profile_name)
        == (datasheet_id, weapon, is_melee, profile_name)
    ]
    stats = (
        p.range_inches,
        p.attacks.text,
        p.skill,
        p.strength,
        p.armour_penetration,
        p.damage.text,
    )
    return stats, abilities


def test_known_weapons(export10):
    bss = "10e/adepta-sororitas/battle-sisters-squad"
    assert profile(export10, bss, "Boltgun") == (
        (24, "1", 3, 4, 0, "1"),
        [("RAPID FIRE", None, None, "1")],
    )
    assert profile(export10, bss, "Ministorum heavy flamer") == (
        (12, "D6", None, 6, -1, "1"),
        [("IGNORES COVER", None, None, None), ("TORRENT", None, None, None)],
    )
    assert profile(export10, bss, "Condemnor boltgun")[1] == [
        ("ANTI", "PSYKER", 2, None),
        ("DEVASTATING WOUNDS", None, None, None),
        ("PRECISION", None, None, None),
        ("RAPID FIRE", None, None, "1"),
    ]
    assert profile(export10, bss, "Power weapon", is_melee=True) == ((None, "2", 4, 4, -2, "1"), [])
    canoness = "10e/adepta-sororitas/canoness"
    assert profile(export10, canoness, "Plasma pistol", profile_name="supercharge") == (
        (12, "1", 2, 8, -3, "2"),
        [("HAZARDOUS", None, None, None), ("PISTOL", None, None, None)],
    )
    # Bubblechukka: three profiles chosen by a D6 roll.
    mek = "10e/orks/mek-gunz"
    assert [
        profile(export10, mek, "Bubblechukka", profile_name=n)[0]
        for n in ("big bubble", "wobbly bubble", "dense bubble")
    ] == [
        (48, "2D6", 4, 6, -1, "1"),
        (48, "D6", 4, 9, -2, "3"),
        (48, "D3", 4, 12, -3, "D6+3"),
    ]
    # AP "-0" is 0; the Flamer is a Torrent weapon with BS N/A.
    assert profile(export10, "10e/space-marines/bike-squad", "Flamer")[0] == (
        12,
        "D6",
        None,
        4,
        0,
        "1",
    )
    # Strength as a dice roll is flagged and not stored; range N/A of the Deathstrike missile.
    assert profile(export10, "10e/orks/big-gunz", "Zzap gun")[0] == (36, "1", 6, None, -3, "3")
    assert profile(export10, "10e/astra-militarum/deathstrike", "Deathstrike missile") == (
        (None, "2D6", 2, 16, -4, "1"),
        [
            ("BLAST", None, None, None),
            ("ONE SHOT", None, None, None),
            ("PLASMA WARHEAD", None, None, None),
        ],
    )
    assert profile(export10, "10e/orks/warboss", "Kombi-weapon")[1] == [
        ("ANTI", "INFANTRY", 4, None),
        ("DEVASTATING WOUNDS", None, None, None),
        ("RAPID FIRE", None, None, "1"),
    ]


def test_model_profiles(export10):
    models = {(m.datasheet_id, m.line): m for m in of(export10, ModelProfile)}

    def stats(ds: str, line: int = 1) -> tuple:
        m = models[(f"10e/{ds}", line)]
        return (
            m.model_name,
            m.move_inches,
            m.move_text,
            m.toughness,
            m.save,
            m.invulnerable_save,
            m.invulnerable_save_scope,
            m.wounds,
            m.leadership,
            m.objective_control,
        )

    assert stats("adepta-sororitas/battle-sisters-squad") == (
        "Battle Sisters Squad",
        6,
        '6"',
        3,
        3,
        6,
        None,
        1,
        7,
        2,
    )
    assert stats("aeldari/vampire-raider") == (
        "Vampire Raider",
        20,
        '20+"',
        12,
        3,
        4,
        "ranged",
        30,
        6,
        0,
    )
    assert stats("drukhari/wyches")[5:7] == (6, None)  # 4+ against melee is an improvement
    assert stats("drukhari/archon")[5:7] == (2, "See Shadowfield ability (below)")
    assert stats("orks/gretchin", 2) == ("RUNTHERD", 6, '6"', 5, 5, None, None, 2, 7, 1)  # T 5*
    assert stats("orks/gretchin")[8] == 8  # Leadership 8+ (a 2D6 roll target)


def test_keywords_abilities_and_leaders(export10):
    kws = {
        (k.keyword, k.is_faction_keyword)
        for k in of(export10, Keyword)
        if k.datasheet_id == "10e/adepta-sororitas/battle-sisters-squad"
    }
    assert kws == {
        ("ADEPTA SORORITAS", True),
        ("GRENADES", False),
        ("INFANTRY", False),
        ("BATTLE SISTERS SQUAD", False),
        ("IMPERIUM", False),
        ("BATTLELINE", False),
    }
    celestine = {
        (k.keyword, k.locator.split(" ")[0])
        for k in of(export10, Keyword)
        if k.datasheet_id == "10e/adepta-sororitas/saint-celestine" and k.keyword == "EPIC HERO"
    }
    assert celestine == {("EPIC HERO", "Datasheets_keywords.csv")}
    fnp = [
        a
        for a in export10.records
        if a.__table__ == "abilities"
        and a.name == "Feel No Pain"
        and a.datasheet_id == "10e/adepta-sororitas/saint-celestine"
    ]
    assert [(a.kind, a.parameter) for a in fnp] == [] or all(a.kind == "core" for a in fnp)
    deadly = {
        (a.datasheet_id, a.parameter)
        for a in export10.records
        if a.__table__ == "abilities"
        and a.name == "Deadly Demise"
        and a.datasheet_id.endswith("/exorcist")
    }
    assert deadly == {("10e/adepta-sororitas/exorcist", "D3")}
    leaders = {
        (l.leader_datasheet_id, l.bodyguard_datasheet_id)
        for l in export10.records
        if l.__table__ == "leader_links"
    }
    assert ("10e/adepta-sororitas/canoness", "10e/adepta-sororitas/battle-sisters-squad") in leaders


def test_stratagems_and_rules(export10):
    stratagems = {s.stratagem_id: s for s in of(export10, Stratagem)}
    assert len(stratagems) == 1284
    grenade = stratagems["10e/wahapedia/000008335006"]
    assert (grenade.name, grenade.group, grenade.type, grenade.cp_cost) == (
        "GRENADE",
        "Core",
        "Wargear",
        1,
    )
    assert grenade.when == "Your Shooting phase."
    assert grenade.target.startswith("One GRENADES unit from your army")
    assert Counter(s.group for s in stratagems.values())["Core"] == 14
    rules = {r.title for r in of(export10, RuleText) if r.locator.startswith("Stratagems.csv")}
    assert rules == {
        "FADE BACK",
        "FLITTING SHADOWS",
        "STAR ENGINES",
        "OPPORTUNITY SEIZED",
        "SUDDEN STRIKE",
        "SWIFT AS THE WIND",
    }
    fnp = [r for r in of(export10, RuleText) if r.rule_key == "feel-no-pain"]
    assert len(fnp) == 1 and fnp[0].text.startswith(
        "Some models have ‘Feel No Pain x+’ listed in their abilities."
    )


def test_no_tags_or_entities_left_in_text(export10):
    texts = [
        getattr(r, name)
        for r in export10.records
        for name in ("text", "legend", "when", "target", "effect", "restrictions", "abilities_text")
        if isinstance(getattr(r, name, None), str)
    ]
    left = [t for t in texts if re.search(r"<\s*/?\s*[a-z]+[ >]|&(lt|gt|amp|nbsp|emsp);", t)]
    assert left == []  # the one upper-cased escaped tag is flagged (markup_left_in_text)


# ---- the 11th-edition excerpts ----------------------------------------------------------------


@pytest.fixture(scope="module")
def files11() -> dict[str, str]:
    """The ListBrewer files, restored from their comma re-save (here, in the test set-up)."""
    return {
        name.replace(".excerpt", ""): restore_listbrewer_resave(text)
        for name, text in read_tables(W11).items()
    }


def test_11e_restore_gives_the_header_column_count_on_every_line(files11):
    for name, text in files11.items():
        lines = text.lstrip("\ufeff").splitlines()
        pipes = {line.count("|") for line in lines}
        assert len(pipes) == 1, name


def test_11e_files_load_with_is_support(files11):
    result = parse_export(files11, source(11, dt.date(2026, 9, 13)))
    rows = accounting(result, "wahapedia-11e-export")
    check_accounting(rows)
    assert {a.table_name: (a.input_rows, a.loaded, a.duplicates, a.rejected) for a in rows} == {
        "Datasheets": (3, 3, 0, 0),
        "Datasheets_models": (46, 0, 0, 46),  # the excerpts do not join the Datasheets excerpt
        "Datasheets_wargear": (207, 0, 0, 207),
        "Factions": (25, 25, 0, 0),
        "Last_update": (1, 1, 0, 0),
        "Source": (66, 66, 0, 0),
    }
    assert [d.datasheet_id for d in of(result, Datasheet)] == [
        "11e/adeptus-custodes/custodian-guard",
        "11e/adeptus-custodes/venerable-contemptor-dreadnought",
        "11e/adeptus-custodes/venerable-land-raider",
    ]
    assert not [
        f
        for f in of(result, DataFlag)
        if f.flag in ("unknown_column", "bad_boolean", "support_unit")
    ]
    assert {r.reason for r in result.rejects if r.table_name == "Datasheets_wargear"} >= {
        "orphan: datasheet 000000001 is not in Datasheets.csv"
    }


@pytest.fixture(scope="module")
def export11_joined(files11, files10) -> ExportParseResult:
    """The 11e models and wargear excerpts, with a Datasheets table for their ids.

    Datasheet ids are stable across editions (MANIFEST.md), so the 10th-edition Datasheets rows
    of those ids, given the 11th-edition ``is_support`` column, stand in for the rows the
    excerpt lacks.
    """
    header11 = files11["Datasheets"].lstrip("\ufeff").splitlines()[0]
    wanted = {
        line.split("|")[0]
        for name in ("Datasheets_models", "Datasheets_wargear")
        for line in files11[name].splitlines()[1:]
    }
    rows = []
    for line in files10["Datasheets"].lstrip("\ufeff").split("\r\n")[1:]:
        fields = line.split("|")
        if fields[0] in wanted:
            rows.append(
                "|".join(
                    fields[:9] + ["true" if fields[0] == "000000001" else "false"] + fields[9:]
                )
            )
    files = dict(files11, Datasheets="\n".join([header11, *rows]) + "\n")
    return parse_export(files, source(11, dt.date(2026, 9, 13)))


def test_11e_models_and_wargear(export11_joined):
    result = export11_joined
    rows = accounting(result, "wahapedia-11e-export")
    check_accounting(rows)
    counts = {a.table_name: (a.input_rows, a.loaded, a.duplicates, a.rejected) for a in rows}
    assert counts["Datasheets_models"] == (46, 46, 0, 0)
    assert counts["Datasheets_wargear"] == (207, 207, 0, 0)
    warboss = [m for m in of(result, ModelProfile) if m.datasheet_id == "11e/orks/warboss"]
    assert [(m.toughness, m.wounds, m.leadership) for m in warboss] == [
        (6, 6, 6)
    ]  # T 5 -> 6 in 11e
    ghaz = [m for m in of(result, ModelProfile) if m.datasheet_id == "11e/orks/ghazghkull-thraka"][
        0
    ]
    assert (ghaz.move_inches, ghaz.toughness, ghaz.wounds) == (8, 10, 16)
    shoota = [
        a
        for a in of(result, WeaponAbility)
        if (a.datasheet_id, a.weapon_name, a.profile_name)
        == ("11e/orks/warboss", "Kombi-rokkit", "Shoota")
    ]
    assert [(a.name, a.condition, a.value.text if a.value else None) for a in shoota] == [
        ("LETHAL HITS", "non-MONSTER/VEHICLE", None),
        ("RAPID FIRE", None, "1"),
    ]
    assert [f.entity_key for f in of(result, DataFlag) if f.flag == "support_unit"] == [
        "11e/orks/warboss"
    ]
    cleave = [a for a in of(result, WeaponAbility) if a.name == "CLEAVE"]
    assert cleave and all(a.value is not None for a in cleave)


def test_the_shared_html_cleaning_changes_nothing(files10, export10, monkeypatch):
    """The full export parsed in the calling process alone gives the very same records."""
    monkeypatch.setenv("WH40K_JOBS", "1")
    alone = parse_export(files10, source(10, dt.date(2025, 11, 14)))
    assert len(alone.records) == len(export10.records)
    assert alone.records == export10.records
    assert alone.rejects == export10.rejects


def test_prepare_starts_the_html_worker_only_for_a_large_export(files10, monkeypatch):
    from pipeline.normalise.text import SharedHtmlCleaning
    from pipeline.extractors.wahapedia_csv import prepare_export

    src = source(10, dt.date(2025, 11, 14))
    monkeypatch.delenv("WH40K_JOBS", raising=False)
    small = {name: files10[name] for name in ("Factions", "Source", "Last_update")}
    assert prepare_export(small, src) is None
    shared = prepare_export(files10, src)
    try:
        assert isinstance(shared, SharedHtmlCleaning) or (os.cpu_count() or 1) < 2
    finally:
        if shared is not None:
            shared.close()
    monkeypatch.setenv("WH40K_JOBS", "1")
    assert prepare_export(files10, src) is None
