"""The build's ``effects`` rows of the seed snapshots, for a few named rules."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipeline.build import build
from tests.conftest import RAW


@pytest.fixture(scope="module")
def seed_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("effects") / "seed.duckdb"
    build(RAW, db)
    return db


def _rows(db: Path, sql: str, params=()) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def test_the_orders_of_seed_004_are_effects_linked_to_voice_of_command(seed_db):
    rows = _rows(seed_db, "SELECT rule_name, rule_table, rule_id, edition, side, effect, characteristic, value, "
                          "parameter, weapon_type, conditions, origin FROM effects WHERE rule_kind = 'order' "
                          "ORDER BY rule_name")
    prefix = "voice-of-command|wahapedia-11e-rules-astra-militarum|line 41|"
    assert rows == [
        ("First Rank, Fire! Second Rank, Fire!", "rule_texts", prefix + "First Rank, Fire! Second Rank, Fire!", 11,
         "attacker", "modify-characteristic", "A", 1, None, None, "weapon:RAPID FIRE", "reader"),
        ("Fix Bayonets!", "rule_texts", prefix + "Fix Bayonets!", 11, "attacker", "modify-characteristic", "WS", 1,
         None, "melee", None, "reader"),
        ("Take Aim!", "rule_texts", prefix + "Take Aim!", 11, "attacker", "modify-characteristic", "BS", 1, None,
         "ranged", None, "reader"),
        ("Take Cover!", "rule_texts", prefix + "Take Cover!", 11, "target", "modify-characteristic", "Sv", 1, "3+",
         None, None, "reader"),
    ]


def test_a_stratagem_s_effects_keep_its_row_and_wording(seed_db):
    rows = _rows(seed_db, "SELECT e.rule_id, e.source_id, e.locator, e.effect, e.roll, e.value, e.parameter, e.wording "
                          "FROM effects e JOIN stratagems s ON s.stratagem_id = e.rule_id "
                          "WHERE e.rule_table = 'stratagems' AND e.rule_name = 'HOLY RADIANCE' ORDER BY e.position")
    assert [r[3:7] for r in rows] == [("modify-roll", "hit", -1, None), ("feel-no-pain", None, 5, "all")]
    assert rows[0][1] == "wahapedia-10e-cp-sanctuary-guardians"
    assert rows[0][7].startswith("Until the end of the phase, each time an attack targets your unit, subtract 1")


def test_hand_kept_effects_are_named_as_such(seed_db):
    rows = _rows(seed_db, "SELECT rule_name, edition, effect, value, origin, note IS NOT NULL FROM effects "
                          "WHERE origin = 'hand-kept' ORDER BY rule_name, edition")
    assert rows == [("COMMAND RE-ROLL", 10, "reroll", None, "hand-kept", True),
                    ("COMMAND RE-ROLL", 10, "reroll", None, "hand-kept", True),
                    ("FIRE OVERWATCH", 10, "hit-on", 6, "hand-kept", True),
                    ("FIRE OVERWATCH", 11, "hit-on", 6, "hand-kept", True)]


def test_a_detachment_name_of_two_factions_takes_the_faction_of_the_datasheets_listing_the_rule():
    # the 10th edition's Infestation Swarm is a Tyranids and a Genestealer Cults detachment: each
    # faction's Hyperadrenal Reflexes is listed on that faction's datasheets
    from pipeline.effects.rules import rules_of
    from schemas.records import Datasheet, DatasheetStratagem, Detachment, Enhancement, Stratagem

    at = {"source_id": "s", "locator": "l"}
    records = [Detachment(**at, detachment_id=f"d-{f}", faction_id=f, name="Infestation Swarm", legend=None, type=None)
               for f in ("tyranids", "genestealer-cults")]
    records += [Datasheet(**at, datasheet_id=f"10e/{f}/sheet", name="Sheet", faction_id=f, edition=10,
                          game_mode="matched", starting_strength=1) for f in ("tyranids", "genestealer-cults")]
    records += [Stratagem(**at, stratagem_id=f"st-{f}", name="HYPERADRENAL REFLEXES", cp_cost=1,
                          group="Infestation Swarm", type="Battle Tactic", edition=10, legend=None, when=None,
                          target=None, effect="Add 1 to the Hit roll.", restrictions=None)
                for f in ("tyranids", "genestealer-cults", "unlisted")]
    records += [DatasheetStratagem(**at, datasheet_id=f"10e/{f}/sheet", stratagem_id=f"st-{f}")
                for f in ("tyranids", "genestealer-cults")]
    records += [Enhancement(**at, enhancement_id="en", name="Adaptive", detachment="Infestation Swarm",
                            is_default=None, cost_points=10, legend=None, text="Add 1 to the Wound roll.")]
    found = {rule.rule_id: rule.faction_id for rule in rules_of(records, {})}
    assert found == {"st-tyranids": "tyranids", "st-genestealer-cults": "genestealer-cults", "st-unlisted": None,
                     "en": None}
