"""End to end on real data: every source of the manifest (fetched from the corpus mirror) built
into one database, as `wh40k fetch --mirror DIR` then `make build-db` would do."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.build import build
from pipeline.database import open_database
from pipeline.engine.from_db import model_count
from pipeline.fetch import fetch_sources, read_folder_files
from pipeline.manifest import read_manifest
from pipeline.query import _rows
from tests.conftest import CORPUS, RAW
from tests.test_build_and_cli import wh40k

pytestmark = pytest.mark.skipif(not CORPUS.exists(), reason="the shared corpus is not beside the checkout")


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    work = tmp_path_factory.mktemp("work")
    raw = work / "raw"
    shutil.copytree(RAW, raw)
    # as the README says: `wh40k fetch --mirror DIR` with the default, relative --raw
    out = subprocess.run([sys.executable, "-m", "pipeline.cli", "fetch", "--raw", "raw", "--mirror", str(CORPUS),
                          "--delay", "0"], cwd=work, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    again = fetch_sources([s for s in read_manifest(raw) if s.fetch_only], raw, mirror=str(CORPUS),
                          folder_files=read_folder_files(raw), delay_seconds=0)
    assert {r.status.value for r in again.results} == {"not modified"}
    db = raw / "full.duckdb"
    report = build(raw, db)
    return db, report


@pytest.fixture(scope="module")
def con(full):
    # the readers' own connection (open_database): attack() opens the same file in this
    # process, and DuckDB joins connections to one file only when their settings agree
    return open_database(full[0])


def test_every_fetched_source_is_built(full):
    db, report = full
    assert report.skipped == []
    assert report.inconsistent == []


def test_full_export_datasheets_less_the_rejected_test_row(con):
    # (the BattleScribe catalogues add the datasheets Wahapedia does not have: tests/test_bsdata_build.py)
    assert con.execute(
        "SELECT count(*) FROM datasheets WHERE datasheet_id LIKE '10e/%' AND source_id NOT LIKE 'bsdata-%'"
    ).fetchone()[0] == 1675
    (reason,) = con.execute(
        "SELECT reason FROM rejects WHERE source_id = 'wahapedia-10e-export' AND table_name = 'Datasheets'"
    ).fetchone()
    assert reason.startswith("test row")
    row = con.execute(
        "SELECT input_rows, loaded, duplicates, rejected FROM build_accounting "
        "WHERE source_id = 'wahapedia-10e-export' AND stage = 'parse' AND table_name = 'Datasheets'"
    ).fetchone()
    assert row == (1676, 1675, 0, 1)


def test_accounting_adds_up_for_every_table_of_every_source(con):
    rows = con.execute("SELECT * FROM build_accounting").fetchall()
    assert len(rows) > 40
    bad = con.execute(
        "SELECT * FROM build_accounting WHERE input_rows <> loaded + duplicates + rejected"
    ).fetchall()
    assert bad == []
    keywords = con.execute(
        "SELECT input_rows, duplicates FROM build_accounting WHERE source_id = 'wahapedia-10e-export' "
        "AND stage = 'parse' AND table_name = 'Datasheets_keywords'"
    ).fetchone()
    assert keywords[0] == 15583 and keywords[1] >= 3843


def test_same_datasheet_from_two_sources_is_one_with_each_sources_own_id(con):
    assert con.execute(
        "SELECT count(*), min(source_id) FROM datasheets WHERE datasheet_id = '10e/tyranids/termagants'"
    ).fetchone() == (1, "wahapedia-10e-page-termagants")
    conflicts = con.execute(
        "SELECT field, value_a, value_b, chosen_source_id FROM conflicts "
        "WHERE entity_key = '10e/tyranids/termagants' ORDER BY field"
    ).fetchall()
    # each source's own id is not a disagreement: one row per source in external_ids
    assert conflicts == []
    assert con.execute(
        "SELECT source_id, external_id FROM external_ids WHERE datasheet_id = '10e/tyranids/termagants' ORDER BY 1"
    ).fetchall() == [("bsdata-10e-catalogues", "359c-db2c-681a-8d62"), ("wahapedia-10e-export", "000000468"),
                     ("wahapedia-10e-page-termagants", "/wh40k10ed/factions/tyranids/Termagants")]
    # the page and the export agree on the characteristics: no conflict there
    assert con.execute(
        "SELECT count(*) FROM conflicts WHERE table_name = 'model_profiles' AND entity_key LIKE '10e/tyranids/termagants%'"
    ).fetchone()[0] == 0


def test_page_and_export_read_compositions_alike(con):
    # the pages and the export split a composition the same way (one row per model group, the
    # OR a row of its own): no composition conflicts, and none at all between them (their own
    # ids of the three datasheets are in external_ids)
    # (conflicts with the BattleScribe catalogues: tests/test_bsdata_build.py)
    assert con.execute(
        "SELECT table_name, field, count(*) FROM conflicts WHERE source_id_b NOT LIKE 'bsdata-%' "
        "AND source_id_b NOT LIKE 'gdc-%' GROUP BY ALL"
    ).fetchall() == []
    rows = con.execute(
        "SELECT line, model_name, min_models, max_models, text, source_id FROM unit_composition "
        "WHERE datasheet_id = '10e/astra-militarum/cadian-shock-troops' ORDER BY line"
    ).fetchall()
    one, two = "1 Shock Trooper Sergeant and 9 Shock Troopers", "2 Shock Trooper Sergeants and 18 Shock Troopers"
    page = "wahapedia-10e-page-cadian-shock-troops"
    assert rows == [
        (1, "Shock Trooper Sergeant", 1, 1, one, page),
        (2, "Shock Troopers", 9, 9, one, page),
        (3, "", None, None, "OR", page),
        (4, "Shock Trooper Sergeants", 2, 2, two, page),
        (5, "Shock Troopers", 18, 18, two, page),
    ]
    # the export's rows of the three page datasheets (5 + 1 + 2) collapse into the pages' rows
    assert con.execute(
        "SELECT input_rows, loaded, duplicates, rejected FROM build_accounting WHERE stage = 'validate' "
        "AND source_id = 'wahapedia-10e-export' AND table_name = 'unit_composition'"
    ).fetchone() == (2140, 2132, 8, 0)


def test_combat_patrol_characteristics_come_from_the_game_datacards_combat_patrol(con):
    # the seed page lost them; gdc-10e-combatpatrol/sanctuary_guardians.json is the same Combat
    # Patrol with them, under the same ids: one datasheet per unit, each value with its source
    rows = con.execute(
        "SELECT datasheet_id, move_inches, toughness, save, wounds, leadership, objective_control, source_id "
        "FROM model_profiles WHERE datasheet_id LIKE 'cp-sanctuary-guardians/%' ORDER BY datasheet_id"
    ).fetchall()
    gdc = "gdc-10e-combat-patrol"
    assert rows == [
        ("cp-sanctuary-guardians/arco-flagellants", 7, 3, 7, 2, 8, 1, gdc),
        ("cp-sanctuary-guardians/battle-sisters-squad", 6, 3, 3, 1, 7, 2, gdc),
        ("cp-sanctuary-guardians/canoness-adalya", 6, 3, 3, 4, 7, 1, gdc),
        ("cp-sanctuary-guardians/celestian-sacresants", 6, 3, 3, 1, 7, 1, gdc),
    ]
    assert con.execute("SELECT count(*) FROM datasheets WHERE datasheet_id LIKE 'cp-sanctuary-guardians/%'"
                       ).fetchone()[0] == 4
    # the seed's gaps that Game Datacards fills are gone (counted as duplicates of the seed)
    assert con.execute(
        "SELECT count(*) FROM data_gaps WHERE entity_key LIKE 'cp-sanctuary-guardians/%'").fetchone()[0] == 0


def test_readme_queries_over_the_full_data(con):
    # the two queries of the README, verbatim
    tough = con.execute(
        "SELECT DISTINCT datasheet_name, toughness FROM units "
        "WHERE toughness >= 5 AND invulnerable_save = 4 AND invulnerable_save_scope IS NULL ORDER BY 1"
    ).fetchall()
    assert ("Allarus Custodians", 7) in tough and len(tough) > 100
    assert all(t >= 5 for _, t in tough)
    both = con.execute(
        "SELECT datasheet_name, weapon_name, ability_names FROM weapons "
        "WHERE list_contains(ability_names, 'ANTI-INFANTRY') AND list_contains(ability_names, 'DEVASTATING WOUNDS') "
        "ORDER BY 1, 2"
    ).fetchall()
    assert ("Battle Sisters Squad", "Combi-weapon", ["ANTI-INFANTRY", "DEVASTATING WOUNDS", "RAPID FIRE"]) in both
    assert len(both) > 100


def test_cli_over_the_full_data(full):
    db = str(full[0])
    out = wh40k("unit", "--db", db, "--format", "json", "Termagants")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    (profile,) = data["model_profiles"]
    assert (profile["toughness"], profile["save"], profile["wounds"], profile["leadership"]) == (3, 5, 1, 8)
    out = wh40k("weapons", "--db", db, "--ability", "anti-infantry 4+", "--name", "combi", "--format", "json")
    assert out.returncode == 0 and len(json.loads(out.stdout)) > 5
    out = wh40k("attack", "Termagants", "--target", "Battle Sisters Squad", "--db", db, "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["target"]["toughness"] == 3


def test_attack_uses_the_smallest_unit_size_and_one_profile_per_weapon(full):
    from pipeline.engine.service import AttackRequest, attack

    db = full[0]
    out = attack(AttackRequest(attacker="Termagants", target="Termagants"), db)
    assert [(w.name, w.models) for w in out.weapons] == [("Fleshborer", 10)]
    assert out.target.models == 10  # "10 models" is its smallest size in its points
    assert any("smallest unit size" in n for n in out.notes)
    # a weapon with two profiles fires one of them (they are exclusive for each attack, P18)
    # (the 10th-edition sheet: the latest edition, the default, is the 11th, whose source prints "(Standard)")
    out = attack(AttackRequest(attacker="Intercessor Squad", target="MEQ", weapons=("plasma pistol",), edition=10), db)
    assert [w.name for w in out.weapons] == ["Plasma pistol (standard)"]
    out = attack(AttackRequest(attacker="Intercessor Squad", target="MEQ",
                               weapons=("Plasma pistol (supercharge)",), models=1, edition=10), db)
    ((name, models, hazardous),) = [(w.name, w.models, w.hazardous) for w in out.weapons]
    assert (name, models, hazardous) == ("Plasma pistol (supercharge)", 1, True)
    # --models scales the loadout: every model's boltgun, not every weapon on the datasheet
    out = attack(AttackRequest(attacker="10e/adepta-sororitas/battle-sisters-squad", target="GEQ", models=10), db)
    assert [(w.name, w.models) for w in out.weapons] == [("Boltgun", 10)]


def test_loadout_lines_count_their_models_from_the_composition(full):
    from pipeline.engine.service import AttackRequest, attack
    from pipeline.errors import InputError

    db = full[0]
    fired = lambda unit: {w.name: w.models for w in attack(AttackRequest(attacker=unit, target="GEQ"), db).weapons}  # noqa: E731
    # "The Kasrkin Sergeant" is one model, "Every Kasrkin Trooper" the 9 of the composition
    assert fired("10e/astra-militarum/kasrkin") == {"Hot-shot lasgun": 9, "Hot-shot laspistol": 1}
    # "Each Retributor": 4; the Superior fires her boltgun rather than her pistol
    assert fired("Retributor Squad") == {"Boltgun": 1, "Heavy bolter": 4}
    assert fired("10e/astra-militarum/cadian-shock-troops") == {"Lasgun": 9, "Laspistol": 1}
    with pytest.raises(InputError, match="different models different weapons"):
        attack(AttackRequest(attacker="10e/astra-militarum/kasrkin", target="GEQ", models=5), db)
    with pytest.raises(InputError, match="at least 1 model"):
        attack(AttackRequest(attacker="Termagants", target="GEQ", models=0), db)
    out = attack(AttackRequest(attacker="10e/astra-militarum/kasrkin", target="GEQ",
                               weapons=("hot-shot lasgun",), models=5), db)
    assert [(w.name, w.models) for w in out.weapons] == [("Hot-shot lasgun", 5)]


def test_names_are_compared_as_a_reader_compares_them(con):
    # no two weapon profiles of a datasheet differ only in the case of their names
    assert con.execute(
        "SELECT count(*) FROM weapon_profiles a JOIN weapon_profiles b ON a.datasheet_id = b.datasheet_id "
        "AND a.is_melee = b.is_melee AND lower(a.weapon_name) = lower(b.weapon_name) "
        "AND lower(a.profile_name) = lower(b.profile_name) "
        "AND (a.weapon_name < b.weapon_name OR a.profile_name < b.profile_name)"
    ).fetchone()[0] == 0
    # Armour/Armor and Defence/Defense twins are one datasheet, with the first source's printed name
    assert con.execute(
        "SELECT datasheet_id, name FROM datasheets WHERE edition = 10 AND (name ILIKE 'Ancient in Terminator Armo%' "
        "OR name ILIKE 'Tarantula Air Defe%') ORDER BY 1"
    ).fetchall() == [
        ("10e/space-marines/ancient-in-terminator-armour", "Ancient In Terminator Armour"),
        ("10e/space-marines/tarantula-air-defence-battery", "Tarantula Air Defence Battery"),
    ]
    # where the merged profiles differ, one conflict row with both values and sources
    assert con.execute(
        "SELECT field, value_a, source_id_a, value_b, source_id_b FROM conflicts "
        "WHERE entity_key = '10e/space-marines/terminator-assault-squad|Thunder hammer|melee|'"
    ).fetchall() == [("skill", "4", "wahapedia-10e-export", "3", "bsdata-10e-catalogues")]


def test_conflicts_hold_disagreements_only(con):
    assert con.execute("SELECT count(*) FROM conflicts WHERE field = 'external_id'").fetchone()[0] == 0
    # every datasheet has its own id in each source that gives one: the export's 1,675, the 465
    # of the catalogues (432 of them merged into the export's), the three saved pages, the Game
    # Datacards folders' 899 + 95 + 293
    assert con.execute(
        "SELECT source_id, count(*) FROM external_ids GROUP BY ALL ORDER BY 1"
    ).fetchall() == [
        ("bsdata-10e-catalogues", 465),
        ("bsdata-11e-catalogues", 815),
        ("gdc-10e-combat-patrol", 293),
        ("gdc-11e", 899),
        ("gdc-11e-combat-patrol", 95),
        ("wahapedia-10e-export", 1675),
        ("wahapedia-10e-page-cadian-shock-troops", 1),
        ("wahapedia-10e-page-intercessor-squad", 1),
        ("wahapedia-10e-page-termagants", 1),
    ]
    assert con.execute(
        "SELECT count(*) FROM external_ids e LEFT JOIN datasheets d USING (datasheet_id) WHERE d.datasheet_id IS NULL"
    ).fetchone()[0] == 0


def test_readme_query_of_the_most_frequent_disagreements(con):
    # the README's query, verbatim: 20 groups, the most frequent first, none of them an id
    rows = con.execute(
        "SELECT table_name, field, count(*) AS n FROM conflicts GROUP BY ALL ORDER BY n DESC, table_name, field LIMIT 20"
    ).fetchall()
    assert len(rows) == 20
    assert [n for _, _, n in rows] == sorted((n for _, _, n in rows), reverse=True)
    assert ("weapon_profiles", "skill") in {(t, f) for t, f, _ in rows}
    assert all(f != "external_id" for _, f, _ in rows)


def test_readme_agreement_of_the_tenth_edition_sources(con):
    # the README's table of `wh40k sources-agree --edition 10`, per pair of sources
    from pipeline.sources_agree import agreement_by_pair

    pairs = {(p["source_id_a"], p["source_id_b"]): (p["datasheets"], p["fields_compared"], p["agreed"],
                                                    p["disagreed"], p["only_a"], p["only_b"])
             for p in agreement_by_pair(con, 10)}
    assert pairs[("wahapedia-10e-export", "bsdata-10e-catalogues")] == (429, 30081, 29767, 314, 785, 8)  # 19 of them: invulnerable_save_note wordings
    assert pairs[("wahapedia-10e-page-cadian-shock-troops", "bsdata-10e-catalogues")] == (1, 125, 124, 1, 2, 0)
    # the page's core rules (its tooltips) are rule wordings the export prints too: all compared, all agreeing
    assert pairs[("wahapedia-10e-page-intercessor-squad", "wahapedia-10e-export")] == (1, 258, 258, 0, 0, 0)
    # the 10th-edition Combat Patrol file of Game Datacards fills the seed Combat Patrol page
    assert pairs[("gdc-10e-combat-patrol", "wahapedia-10e-cp-sanctuary-guardians")] == (4, 151, 151, 0, 0, 4)
    assert len(pairs) == 12
    # every disagreement counted is a conflicts row, and the other way round (both editions)
    assert con.execute("SELECT (SELECT sum(disagreed) FROM source_agreement), (SELECT count(*) FROM conflicts)"
                       ).fetchone() == (1456, 1456)
    eleventh = {(p["source_id_a"], p["source_id_b"]): (p["datasheets"], p["fields_compared"], p["agreed"],
                                                       p["disagreed"], p["only_a"], p["only_b"])
                for p in agreement_by_pair(con, 11)}
    assert eleventh == {("gdc-11e", "bsdata-11e-catalogues"): (586, 39344, 38203, 1141, 617, 17)}
    # points rows are compared size for size (merge.align_with_earlier), not line for line
    assert con.execute("SELECT count(*) FROM conflicts WHERE table_name = 'unit_costs' AND field = 'model_count'"
                       ).fetchone() == (0,)


def test_every_datasheet_has_a_model_count_and_one_source_per_composition(con):
    # units that print no model count and that no other source fills: two Game Datacards Combat
    # Patrol units (the loadout names the models only: "Captain Kevarax", "The Dire Avenger Exarch is
    # equipped with ...") and the second Wolf Guard Headtakers entry of the 11th-edition catalogues
    # (its model groups have no minimum; the first one and the Sydonian Skatros take their size
    # from Game Datacards, the same datasheet)
    no_count = ["11e/space-marines/wolf-guard-headtakers--0f93-6850-8f14-a351",
                "cp-kygharils-protectors/dire-avengers", "cp-shadow-claw-kevarax/captain-kevarax"]
    assert sorted(r[0] for r in con.execute(
        "SELECT entity_key FROM data_gaps WHERE table_name = 'datasheets' AND field = 'starting_strength'").fetchall()
    ) == no_count
    sheets = _rows(con.execute("SELECT * FROM datasheets"))
    # the seed's four merge with Game Datacards'; 586 of the 815 datasheets of the 11th-edition
    # catalogues are the same datasheet as a Game Datacards one (one datasheet each)
    assert len(sheets) == 1712 + 899 + 95 + 293 - 4 + 815 - 586
    assert sorted(s["datasheet_id"] for s in sheets if model_count(con, s)[0] is None) == sorted(no_count)
    for table in ("unit_composition", "wargear_loadouts"):
        assert con.execute(
            f"SELECT datasheet_id FROM {table} GROUP BY 1 HAVING count(DISTINCT source_id) > 1").fetchall() == [], table


def test_errata_on_datasheets_over_the_full_data(con, full):
    """Issue 11: errata on a datasheet's own wordings over the whole corpus: the Leader-to-Support
    errata on core abilities, a chain of two keyword errata, and a name four datasheets share."""
    counts = dict(con.execute(
        "SELECT derivation, count(*) FROM errata WHERE language = 'en' GROUP BY 1").fetchall())
    assert counts == {"derived": 88, "text-only": 575, "faq": 174}
    support = con.execute(
        "SELECT count(*) FROM errata WHERE language = 'en' AND text ILIKE 'Remove%Leader%Support%' "
        "AND derivation = 'derived'").fetchone()[0]
    assert support == 13
    chain = [t for (t,) in con.execute(
        "SELECT text FROM rule_texts WHERE rule_key = 'space-marines-land-raider-crusader-keywords' "
        "AND language = 'en' ORDER BY effective_date NULLS FIRST, locator LIKE '%: before' DESC").fetchall()]
    assert len(chain) == 3  # the original, after the first erratum, in force after the second
    assert ["FRAME" in t.split(", ") for t in chain] == [False, True, True]
    assert ["LAND RAIDER" in t.split(", ") for t in chain] == [False, False, True]
    db = str(full[0])
    out = wh40k("rule", "--db", db, "Castellan: core abilities", "--history", "--format", "json")
    assert out.returncode == 0, out.stderr
    texts = [w["text"] for w in json.loads(out.stdout)["wordings"]]
    assert texts == ["Leader", "Support"]
    out = wh40k("rule", "--db", db, "Teleport Homer", "--edition", "11")
    assert out.returncode == 1
    assert "names 4 datasheet wordings that errata change" in out.stderr and "Terminator Squad: Teleport Homer" in out.stderr


@pytest.mark.parametrize("edition", [10, 11])
def test_an_army_rule_applies_by_name(full, edition):
    """Oath of Moment, the Space Marines army rule (a faction ability of their datasheets; its
    wording: the 10th-edition export's Abilities, the 11th edition's Game Datacards `rules.army`):
    "Each time a model with this ability makes an attack that targets your Oath of Moment target,
    you can re-roll the Hit roll." BS3+: P(hit) 2/3 becomes 2/3 + 1/3 x 2/3 = 8/9, so E[hits]
    grows by 4/3. The 11th edition's "add 1 to the Wound roll as well" holds only for a Codex:
    Space Marines Detachment in an army without the chapters' units, which the request cannot
    state: listed, not applied."""
    from pipeline.engine.service import AttackRequest, attack

    db = full[0]
    base = attack(AttackRequest(attacker="Intercessor Squad", target="MEQ", weapons=("bolt rifle",), edition=edition),
                  db)
    oath = attack(AttackRequest(attacker="Intercessor Squad", target="MEQ", weapons=("bolt rifle",), edition=edition,
                                with_effects=("Oath of Moment",)), db)
    assert oath.result.hits.mean == pytest.approx(base.result.hits.mean * 4 / 3, abs=1e-12)
    applied = [(e.rule_kind, e.did) for e in oath.effects if e.applied]
    assert applied == [("army-rule", "re-roll all hit rolls: applied")]
    if edition == 11:
        assert any(not e.applied and "+1 to the wound roll" in e.did for e in oath.effects)
