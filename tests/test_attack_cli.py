"""``wh40k attack`` and the attack service over the database built from raw/."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from pipeline.build import build
from pipeline.engine.profiles import Context
from pipeline.engine.service import AttackRequest, attack
from pipeline.errors import InputError, NotFoundError
from tests.conftest import RAW
from tests.test_build_and_cli import wh40k


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("db") / "wh40k.duckdb"
    build(RAW, path)
    return path


def test_default_loadout_of_battle_sisters_in_the_shooting_phase(db):
    out = attack(AttackRequest(attacker="Battle Sisters Squad", target="MEQ"), db)
    fired = {w.name: w.models for w in out.weapons}
    # 6 + 1 (simulacrum) boltguns; the Sister Superior fires her combi-weapon, not her pistol
    assert fired == {"Boltgun": 7, "Combi-weapon": 1, "Ministorum flamer": 1, "Ministorum heavy flamer": 1}
    # attacks: 7 + 1 + D6 + D6 -> mean 15; hits: 7*2/3 + 1/2 + 7 (torrent)
    assert out.result.attacks.mean == pytest.approx(15.0, abs=1e-9)
    assert out.result.hits.mean == pytest.approx(float(Fraction(14, 3) + Fraction(1, 2) + 7), abs=1e-9)


def test_rapid_fire_at_half_range_adds_attacks(db):
    out = attack(AttackRequest(attacker="Battle Sisters Squad", target="MEQ", weapons=("boltgun",),
                               context=Context(half_range=True)), db)
    assert out.result.attacks.mean == pytest.approx(14.0, abs=1e-12)
    # 14 attacks, 2/3 hit, 1/2 wound (S4 v T4), 1/3 fail the 3+ save
    assert out.result.unsaved.mean == pytest.approx(14 * 2 / 3 * 1 / 2 * 1 / 3, abs=1e-12)


def test_melee_lethal_hits_of_sacresants_against_an_inline_target(db):
    out = attack(AttackRequest(attacker="Celestian Sacresants", target="T8 Sv- W1 x10", phase="fight"), db)
    (mace,) = out.weapons
    assert (mace.name, mace.models, mace.lethal_hits) == ("Hallowed mace", 5, True)
    # 15 attacks WS3+; S4 vs T8 wounds on 6+: per attack 1/6 (Lethal Hits) + 3/6 * 1/6
    assert out.result.wounds.mean == pytest.approx(15 * (1 / 6 + 3 / 6 * 1 / 6), abs=1e-12)


def test_target_without_characteristics_is_a_clear_error(db):
    with pytest.raises(InputError, match="no model characteristics.*inline profile"):
        attack(AttackRequest(attacker="Battle Sisters Squad", target="Celestian Sacresants"), db)


def test_unknown_weapon_suggests_the_units_weapons(db):
    with pytest.raises(NotFoundError, match="Boltgun"):
        attack(AttackRequest(attacker="Battle Sisters Squad", target="MEQ", weapons=("boltgn",)), db)


def test_cli_attack_json_has_every_stage_with_mean_and_pmf(db):
    out = wh40k("attack", "Arco-flagellants", "--phase", "fight", "--target", "GEQ", "--db", str(db),
                "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    for stage in ("attacks", "hits", "wounds", "unsaved", "mortal_wounds", "damage", "models_destroyed"):
        assert abs(sum(data[stage]["pmf"]) - 1) < 1e-9
        assert data[stage]["mean"] == pytest.approx(sum(i * p for i, p in enumerate(data[stage]["pmf"])))
    # 40 attacks WS4+ with SUSTAINED HITS 1: E[hits] = 40 * (1/2 + 1/6)
    assert data["hits"]["mean"] == pytest.approx(40 * (1 / 2 + 1 / 6), abs=1e-9)
    assert data["target"]["toughness"] == 3 and data["target"]["models"] == 10


def test_cli_attack_table_and_errors(db):
    out = wh40k("attack", "Canoness Adalya", "--target", "TEQ", "--db", str(db), "--half-range")
    assert out.returncode == 0, out.stderr
    assert "Models destroyed" in out.stdout and "P(target unit destroyed)" in out.stdout
    out = wh40k("attack", "Canoness Adalya", "--target", "T4 Q9", "--db", str(db))
    assert out.returncode == 1 and out.stderr.startswith("Error: ") and "Q9" in out.stderr
    out = wh40k("attack", "Arco-flagellants", "--target", "MEQ", "--db", str(db))
    assert out.returncode == 1 and "no ranged weapons" in out.stderr


def test_eleventh_edition_cover_worsens_bs_and_explain_names_the_rule(db):
    ten = attack(AttackRequest(attacker="Battle Sisters Squad", target="MEQ", weapons=("boltgun",),
                               context=Context(cover=True)), db)
    eleven = attack(AttackRequest(attacker="Battle Sisters Squad", target="MEQ", weapons=("boltgun",),
                                  context=Context(cover=True), edition=11), db)
    # 10th: 7 attacks, hit 2/3, wound 1/2, Sv3+ vs AP0 gets no cover: 1/3 unsaved
    assert ten.result.unsaved.mean == pytest.approx(7 * Fraction(2, 3) * Fraction(1, 2) * Fraction(1, 3), abs=1e-12)
    # 11th: BS3+ worsened to 4+: hit 1/2; the save is not improved
    assert eleven.result.unsaved.mean == pytest.approx(7 * Fraction(1, 2) * Fraction(1, 2) * Fraction(1, 3), abs=1e-12)
    cover = [e for e in eleven.explained if e.rule_key == "benefit-of-cover"]
    assert cover and cover[0].section == "13.08" and cover[0].source_id == "wahapedia-11e-rules-astra-militarum"
    assert "4+" in cover[0].summary


def test_cli_attack_edition_11_explain(db):
    out = wh40k("attack", "Battle Sisters Squad", "--weapon", "boltgun", "--target", "MEQ", "--cover",
                "--edition", "11", "--explain", "--db", str(db), "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    keys = [e["rule_key"] for e in data["explain"]]
    assert "benefit-of-cover" in keys and "hit-roll" in keys
    assert data["hits"]["mean"] == pytest.approx(3.5, abs=1e-12)


@pytest.mark.parametrize("option, value, allowed", [
    ("--crit-hits-on", "9", "use 2 to 6 (5 for Critical Hits on 5+)"),
    ("--crit-hits-on", "1", "use 2 to 6"),
    ("--edition", "9", "use 10 or 11"),
    ("--fnp", "1", "use 2 to 6 (5 for Feel No Pain 5+)"),
    ("--fnp", "7", "use 2 to 6"),
    ("--models", "0", "a unit has at least 1 model"),
    ("--target-models", "0", "a unit has at least 1 model"),
])
def test_cli_attack_option_errors_name_the_option_and_its_values(db, option, value, allowed):
    out = wh40k("attack", "Battle Sisters Squad", "--target", "MEQ", option, value, "--db", str(db))
    assert out.returncode == 2
    message = " ".join(out.stderr.replace("│", " ").split())
    assert f"Error: {option}: {value} is not allowed; {allowed}" in message and out.stderr.count("\n") == 1
    assert "context" not in message and "critical_hit_on" not in message and "feel_no_pain" not in message


def test_cli_attack_help_says_how_optional_weapons_are_counted():
    out = wh40k("attack", "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.replace("│", " ").split())
    assert "an optional weapon (not in the loadout) by 1 model" in text
    assert "'2 heavy bolters'" in text


def test_service_docstring_example_runs(db, tmp_path, monkeypatch):
    """The example of ``pipeline.engine.service`` (skipped by the doctest run: it needs the
    default database) gives what it shows, against the test database."""
    import doctest

    from pipeline.engine import service

    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "wh40k.duckdb").symlink_to(db)
    monkeypatch.chdir(tmp_path)
    test = doctest.DocTestParser().get_doctest(service.__doc__, {}, "service", None, 0)
    assert len(test.examples) == 5
    for example in test.examples:
        example.options = {}  # drop the +SKIP
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False) == doctest.TestResults(failed=0, attempted=5)


def test_table_output_is_never_cut_or_wrapped_in_a_narrow_pipe(db, monkeypatch):
    monkeypatch.setenv("COLUMNS", "50")
    out = wh40k("attack", "Battle Sisters Squad", "--target", "T4 Sv3+ W2 x10 [bold]", "--db", str(db))
    assert out.returncode == 1  # "[bold]" is not a keyword: the error quotes it literally
    assert "[bold]" in out.stderr
    out = wh40k("attack", "Battle Sisters Squad", "--target", "MEQ", "--db", str(db))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "Battle Sisters Squad attacks MEQ (T4 Sv3+ W2 x10)"
    assert "  7 x Boltgun: A 1, BS 3+, S 4, AP 0, D 1" in lines
    stage_names = [line.split("│")[1].strip() for line in lines if line.startswith("│ ") and "│" in line[2:]]
    assert {"mortal_wounds", "models_destroyed"} <= set(stage_names)


def test_an_attack_under_another_edition_than_the_datasheet_says_so(db):
    eleventh = attack(AttackRequest(attacker="Battle Sisters Squad", target="MEQ", edition=11), db)
    said = [n for n in eleventh.notes if "its datasheet is from the 10th edition" in n]
    assert said == [
        "attacker 'Battle Sisters Squad': its datasheet is from the 10th edition "
        "(cp-sanctuary-guardians/battle-sisters-squad); its profiles are used under the 11th edition's rules"
    ]
    tenth = attack(AttackRequest(attacker="Battle Sisters Squad", target="MEQ"), db)
    assert not [n for n in tenth.notes if "its datasheet is from" in n]


def test_damaged_attacker_has_minus_one_to_hit_with_a_note(db):
    # 24.39 Damaged: "While a model is damaged, that model's attacks have -1 to hit rolls":
    # 7 boltguns BS3+ -> 4+: 7 x 1/2 hits
    out = attack(AttackRequest(attacker="Battle Sisters Squad", target="MEQ", weapons=("boltgun",),
                               context=Context(damaged=True), edition=11), db)
    assert out.result.hits.mean == pytest.approx(7 * Fraction(1, 2), abs=1e-12)
    assert any(n.startswith("attacker Battle Sisters Squad: ") and "-1 to the hit roll" in n for n in out.notes)
    cli = wh40k("attack", "Battle Sisters Squad", "--weapon", "boltgun", "--target", "MEQ", "--damaged",
                "--edition", "11", "--format", "json", "--db", str(db))
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["hits"]["mean"] == pytest.approx(3.5, abs=1e-12)
    assert "-1 to the hit roll" in cli.stderr


def test_indirect_fire_option_reaches_the_engine(db):
    # without an [INDIRECT FIRE] weapon --indirect changes nothing: 7 x 2/3 hits
    out = attack(AttackRequest(attacker="Battle Sisters Squad", target="MEQ", weapons=("boltgun",),
                               context=Context(indirect=True), edition=11), db)
    assert out.result.hits.mean == pytest.approx(7 * Fraction(2, 3), abs=1e-12)
