"""``attack --list`` / ``--target-list`` and ``wh40k matchup``: listed units as built, with figures
derived by hand for two tiny lists, and the same army in two formats giving the same matchup."""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb

import pytest

from pipeline.cli import run
from pipeline.engine.profiles import Context
from pipeline.lists import parse_list
from pipeline.lists.attack import UnitBuilder, pick_unit, table_units
from pipeline.lists.match import match_list
from pipeline.lists.matchup import matchup, unit_figures
from tests.lists.conftest import LISTS

HEADER = "{name} (500 points)\n\n{faction}\n{detachment} (1 Detachment Points)\nPurge the Foe\nStrike Force (2000 points)\n\n"

#: Five Berzerkers: five Bolt pistols (A1 BS4+ S4 AP0 D1), five Chainblades (A4 WS3+ S4 AP-1 D1).
BERZERKERS = HEADER.format(name="Five", faction="World Eaters", detachment="Berzerker Warband") + """BATTLELINE

Khorne Berzerkers (90 points)
  • 1x Khorne Berzerker Champion
    • 1x Bolt pistol
      1x Chainblade
  • 4x Khorne Berzerker
    • 4x Bolt pistol
      4x Chainblade
"""

#: Ten Kroot Carnivores (T3 Sv6+ W1, Stealth); the Long-quill's Kroot pistol is not fired beside its rifle.
KROOT = HEADER.format(name="Ten", faction="T’au Empire", detachment="Retaliation Cadre") + """BATTLELINE

Kroot Carnivores (65 points)
  • 1x Long-quill
    • 1x Close combat weapon
      1x Kroot pistol
      1x Kroot rifle
  • 9x Kroot Carnivore
    • 9x Close combat weapon
      9x Kroot rifle
"""


@pytest.fixture(scope="module")
def con(lists_db):
    """The database opened as the command line opens it (so both can be open in one process)."""
    from pipeline.query import open_database

    connection = open_database(lists_db)
    yield connection
    connection.close()


def _matched(con, text: str):
    return match_list(con, parse_list(text.encode("utf-8")), 11)


def _run(capsys, *args):
    status = run(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def _lists(tmp_path):
    mine, theirs = tmp_path / "five.txt", tmp_path / "ten.txt"
    mine.write_text(BERZERKERS, encoding="utf-8")
    theirs.write_text(KROOT, encoding="utf-8")
    return mine, theirs


def test_attack_with_and_against_listed_units_by_hand(lists_db, capsys, tmp_path):
    mine, theirs = _lists(tmp_path)
    status, out, err = _run(capsys, "attack", "--list", str(mine), "Khorne Berzerkers", "--target-list", str(theirs),
                            "Kroot Carnivores", "--db", str(lists_db), "--format", "json", "--edition", "11")
    assert status == 0, err
    data = json.loads(out)
    assert [(w["name"], w["models"]) for w in data["weapons"]] == [("Bolt pistol", 5)]
    # each pistol: hit 4+ and -1 for the Kroot's Stealth (1/3), wound S4 vs T3 on 3+ (2/3), save 6+
    # failed 5/6: a Kroot destroyed 5/27
    assert data["models_destroyed"]["mean"] == pytest.approx(5 * 5 / 27, abs=1e-12)
    assert data["target"]["models"] == 10
    assert data["listed"]["target"]["members"][0]["models"][0] == {
        "model": "Long-quill", "count": 1, "wargear": ["1x Close combat weapon", "1x Kroot pistol", "1x Kroot rifle"]}
    # the other way round: 10 Kroot rifles (A1 BS4+ S4 AP0 D1) at T4 Sv3+ W2: an unsaved wound 1/2 x 1/2 x 1/3
    status, out, err = _run(capsys, "attack", "--list", str(theirs), "Kroot Carnivores", "--target-list", str(mine),
                            "Khorne Berzerkers", "--db", str(lists_db), "--format", "json", "--edition", "11")
    assert status == 0, err
    data = json.loads(out)
    assert [(w["name"], w["models"]) for w in data["weapons"]] == [("Kroot rifle", 10)]
    assert data["damage"]["mean"] == pytest.approx(10 / 12, abs=1e-12)
    p = Fraction(1, 12)  # models destroyed: floor(unsaved / 2), the wounded model first
    expected = sum(Fraction(comb(10, u)) * p ** u * (1 - p) ** (10 - u) * min(u // 2, 5) for u in range(11))
    assert data["models_destroyed"]["mean"] == pytest.approx(float(expected), abs=1e-12)


def test_matchup_of_two_tiny_lists_by_hand(con):
    result = matchup(con, _matched(con, BERZERKERS), _matched(con, KROOT), edition=11)
    rows = {(r["attacker"], r["phase"]): r for r in result.rows}
    assert len(result.rows) == 2 and result.counts["pairs"] == 2
    shooting, fight = rows["Khorne Berzerkers", "shooting"], rows["Khorne Berzerkers", "fight"]
    assert (shooting["weapons"], shooting["method"]) == (5, "batch")  # one weapon profile: the batch engine
    # 1/3 (4+, -1 for Stealth) x 2/3 x 5/6 per pistol, as in the attack above
    assert shooting["expected_models_destroyed"] == pytest.approx(25 / 27, abs=1e-12)
    assert shooting["expected_damage"] == pytest.approx(25 / 27, abs=1e-12)
    assert shooting["p_unit_destroyed"] == 0.0
    # 20 Chainblade attacks: hit 3+ (2/3), wound 3+ (2/3), AP-1 leaves no save: X ~ Binomial(20, 4/9)
    p = Fraction(4, 9)
    pmf = [Fraction(comb(20, k)) * p ** k * (1 - p) ** (20 - k) for k in range(21)]
    assert fight["expected_damage"] == pytest.approx(80 / 9, abs=1e-12)
    assert fight["expected_models_destroyed"] == pytest.approx(float(sum(min(k, 10) * q for k, q in enumerate(pmf))),
                                                               abs=1e-12)
    assert fight["p_unit_destroyed"] == pytest.approx(float(sum(pmf[10:])), abs=1e-12)


def test_a_line_with_two_melee_weapons_fights_with_the_best_one_per_model(con):
    text = BERZERKERS.replace("4x Chainblade", "4x Chainblade\n      4x Khornate eviscerator").replace(
        "1x Chainblade", "1x Chainblade\n      1x Khornate eviscerator")
    mine, theirs = _matched(con, text), _matched(con, KROOT)
    builder = UnitBuilder(con, 11)
    target = builder.target(theirs, table_units(theirs)[0], "fight", [])
    notes: list[str] = []
    weapons = builder.weapons(mine, table_units(mine)[0], "fight", target.lines[0].as_target(target),
                              Context(edition=11), notes)
    # Khornate eviscerator: 3 attacks x 2/3 x 5/6 = 5/3 Kroot each, a Chainblade 4 x 4/9 = 16/9
    # damage points: 2 x 5/3 = 10/3 against 16/9, so the eviscerator
    assert [(w.name, w.models) for w in weapons] == [("Khornate eviscerator", 5)]
    assert any("fight with one melee weapon each" in n for n in notes)


def test_a_unit_is_picked_by_name_or_place_and_an_unknown_one_lists_the_units(lists_db, con, capsys, tmp_path):
    we = _matched(con, (LISTS / "11e" / "Test-WE-GWAPP-English").read_text(encoding="utf-8"))
    assert pick_unit(we, "Khorne Berzerkers#2", "x").label == "Lord Invocatus + Khorne Berzerkers#2"
    assert pick_unit(we, "Lord Invocatus", "x").label == "Lord Invocatus + Khorne Berzerkers#2"
    assert pick_unit(we, "maulerfiend", "x").label == "Maulerfiend"
    _, theirs = _lists(tmp_path)
    path = LISTS / "11e" / "Test-WE-GWAPP-English"
    status, _, err = _run(capsys, "attack", "--list", str(path), "Khorne Berzerkers", "--target-list", str(theirs),
                          "Kroot Carnivores", "--db", str(lists_db))
    assert status == 1
    assert err.count("\n") == 1 and err.startswith(f"Error: --list {path}: 3 units are named 'Khorne Berzerkers'")
    assert "'Khorne Berzerkers#1', 'Khorne Berzerkers#2', 'Khorne Berzerkers#3'" in err
    status, _, err = _run(capsys, "attack", "--list", str(path), "Land Raider", "--target", "MEQ", "--db", str(lists_db))
    assert status == 1
    assert err == (f"Error: --list {path}: no unit 'Land Raider'; the list's units: Khârn the Betrayer + Khorne "
                   "Berzerkers#1; Slaughterbound + Exalted Eightbound; Lord Invocatus + Khorne Berzerkers#2; Master of "
                   "Executions + Khorne Berzerkers#3; Chaos Rhino#1; Chaos Rhino#2; Chaos Predator Destructor#1; "
                   "Chaos Predator Destructor#2; Chaos Spawn#1; Chaos Spawn#2; Eightbound; Jakhals; Maulerfiend\n")
    status, _, err = _run(capsys, "attack", "--list", str(path), "Maulerfiend", "--target", "MEQ", "--models", "2",
                          "--db", str(lists_db))
    assert (status, err.split(":")[0:2]) == (1, ["Error", " --models cannot be used with --list"])


def test_the_same_army_in_two_formats_gives_the_same_matchup(con):
    theirs = _matched(con, KROOT)
    figures = []
    # the War Organ export lists its units in another order and prints no Leader / Bodyguard roles
    for name in ("Test-TAU-GWAPP-English", "Test-TAU-WARORGAN-English"):
        mine = _matched(con, (LISTS / "11e" / name).read_text(encoding="utf-8"))
        result = matchup(con, mine, theirs, edition=11)
        figures.append(sorted((r["phase"], r["weapons"], r["target_models"], round(r["expected_models_destroyed"], 12),
                               round(r["p_unit_destroyed"], 12), round(r["expected_damage"], 12))
                              for r in result.rows))
    assert len(figures[0]) == 28  # 14 units on the table (5 Attached units), two phases, one target
    assert figures[0] == figures[1]


@pytest.mark.parametrize("edition", [10, 11])
def test_unit_figures_equal_the_unit_engine(con, edition):
    """The matchup's one-run figures (models at z = 1, damage by the complex step) against
    ``resolve_unit``'s whole distributions, on a listed Attached unit."""
    from pipeline.engine.units import resolve_unit

    we, kroot = (_matched(con, (LISTS / "11e" / "Test-WE-GWAPP-English").read_text(encoding="utf-8")),
                 _matched(con, KROOT))
    builder = UnitBuilder(con, edition)
    unit = builder.target(we, pick_unit(we, "Khârn the Betrayer", "x"), "shooting", [])
    assert [(ln.name, ln.count, ln.role) for ln in unit.lines] == [
        ("Khorne Berzerker", 10, "bodyguard"), ("Khârn the Betrayer", 1, "leader")]
    context = Context(edition=edition)
    weapons = builder.weapons(kroot, table_units(kroot)[0], "shooting", unit.lines[0].as_target(unit), context, [])
    figures = unit_figures(weapons, unit, context)
    result = resolve_unit(weapons, unit, context, objective="models").result
    assert figures["method"] == "unit"
    assert figures["expected_models_destroyed"] == pytest.approx(result.models_destroyed.mean, abs=1e-12)
    assert figures["p_unit_destroyed"] == pytest.approx(result.target_destroyed, abs=1e-12)
    assert figures["expected_damage"] == pytest.approx(result.damage.mean, abs=1e-9)


def test_the_service_takes_listed_units_as_the_command_does(con, lists_db, capsys, tmp_path):
    from pipeline.engine.service import AttackRequest, attack_with
    from pipeline.lists.attack_input import ListUnit

    request = AttackRequest(attacker=None, target="", phase="fight", edition=11,
                            attacker_list=ListUnit(BERZERKERS, "Khorne Berzerkers", "five"),
                            target_list=ListUnit(KROOT.encode("utf-8"), "Kroot Carnivores", "ten"))
    outcome = attack_with(con, request, explain=False)
    assert [(w.name, w.models) for w in outcome.weapons] == [("Chainblade", 5)]
    assert outcome.result.damage.mean == pytest.approx(80 / 9, abs=1e-12)
    assert outcome.listed["attacker"]["unit"] == "Khorne Berzerkers"


def test_matchup_command_json_and_its_errors(lists_db, capsys, tmp_path):
    mine, theirs = _lists(tmp_path)
    status, out, err = _run(capsys, "matchup", str(mine), str(theirs), "--db", str(lists_db), "--format", "json",
                            "--phase", "shooting")
    assert status == 0, err
    data = json.loads(out)
    assert [(r["attacker"], r["target"], r["phase"], r["method"]) for r in data["rows"]] == [
        ("Khorne Berzerkers", "Kroot Carnivores", "shooting", "batch")]
    assert data["rows"][0]["expected_models_destroyed"] == pytest.approx(25 / 27, abs=1e-12)
    assert (data["summary"]["pairs"], data["summary"]["distinct"]) == (1, 1)
    assert "[1/1] Khorne Berzerkers" in err
    status, _, err = _run(capsys, "matchup", str(mine), str(tmp_path / "none.txt"), "--db", str(lists_db))
    assert (status, err) == (1, f"Error: {tmp_path / 'none.txt'}: no such file; give the path of an exported army "
                                "list\n")
    status, _, err = _run(capsys, "attack", "--list", str(mine), "Khorne Berzerkers", "--db", str(lists_db))
    assert (status, err) == (1, "Error: no target: give it with --target or --target-list THEIRS UNIT\n")


#: A Hospitaller (Medicus Ministorum: "While this model is leading a unit, models in that unit have
#: the Feel No Pain 5+ ability.") attached to ten Battle Sisters (T3 Sv3+ inv6+ W1).
TENDED = HEADER.format(name="Tended", faction="Adepta Sororitas", detachment="Hallowed Martyrs") + """Attached Units
Attached Unit 1

Hospitaller (75 points)
• Attached as: Leader (Character)
  • 1x Bolt pistol
    1x Chirurgeon’s tools

Battle Sisters Squad (100 points)
• Attached as: Bodyguard (Battleline)
  • 1x Sister Superior
    • 1x Bolt pistol
      1x Boltgun
      1x Close combat weapon
  • 9x Battle Sister
    • 9x Bolt pistol
      9x Boltgun
      9x Close combat weapon
"""


def test_a_listed_attached_target_gets_its_leaders_protective_rule(con):
    """The rules of a listed Attached unit's datasheets reach its model lines, as for
    ``--target NAME --target-leader LEADER``. One attack A1 S4 AP-3 D1 [TORRENT] (no hit roll):
    wounds T3 on 3+ (2/3); Sv3+ with AP-3 is 6+, the invulnerable save 6+: unsaved 5/6; Feel No
    Pain 5+ lets the wound through with 2/3. P(a Battle Sister destroyed) = 2/3 x 5/6 x 2/3 = 10/27
    with the Hospitaller's rule, 2/3 x 5/6 = 5/9 without it (``--without``)."""
    from pipeline.engine.service import AttackRequest, attack_with
    from pipeline.lists.attack_input import ListUnit

    shot = ("A1 S4 AP-3 D1 [TORRENT]",)
    listed = ListUnit(TENDED.encode("utf-8"), "Hospitaller", "tended")

    def outcome(**kw):
        return attack_with(con, AttackRequest(attacker=None, weapon_profiles=shot, edition=11, phase="shooting",
                                              **kw), explain=False)

    tended = outcome(target="", target_list=listed)
    named = outcome(target="Battle Sisters Squad", target_leaders=("Hospitaller",))
    bare = outcome(target="", target_list=listed, without_effects=("Medicus Ministorum",))
    assert tended.result.models_destroyed.pmf[1] == pytest.approx(10 / 27, abs=1e-12)
    assert named.result.models_destroyed.pmf[1] == pytest.approx(10 / 27, abs=1e-12)
    assert bare.result.models_destroyed.pmf[1] == pytest.approx(5 / 9, abs=1e-12)
    assert [(e.rule_name, e.applied) for e in tended.effects] == [("Medicus Ministorum", True)]
    assert tended.unit.profiles == {"Battle Sister": "T3 Sv3+ W1 inv6+ fnp5+", "Hospitaller": "T3 Sv3+ W3 inv6+ fnp5+"}
    assert not any("only when" in n for n in tended.notes)  # the Leader's condition holds: not said "not applied"


def test_the_matchup_gives_a_listed_attached_target_its_leaders_protective_rule(con):
    """Five Bolt pistols (A1 BS4+ S4 AP0 D1) at the Hospitaller's Battle Sisters (T3 Sv3+ W1, Feel No
    Pain 5+ from Medicus Ministorum): per pistol 1/2 x 2/3 x 1/3 x 2/3 = 2/27, one W1 Bodyguard model
    for each: E[models destroyed] = 10/27 (5/9 without the Hospitaller's rule), as
    ``attack --target-list`` gives it."""
    result = matchup(con, _matched(con, BERZERKERS), _matched(con, TENDED), phases=("shooting",), edition=11)
    (row,) = result.rows
    assert row["method"] == "unit"
    assert row["expected_models_destroyed"] == pytest.approx(10 / 27, abs=1e-12)
    assert row["expected_damage"] == pytest.approx(10 / 27, abs=1e-9)
