"""``attack --with NAME`` / ``--without NAME`` on the seed database: exact values derived by hand."""

from __future__ import annotations

from fractions import Fraction

import duckdb
import pytest

from pipeline.effects.apply import apply_effects, effect_from_row
from pipeline.effects.named import check_sides, find_named
from pipeline.engine import exact
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.engine.service import AttackRequest, attack
from pipeline.errors import InputError, NotFoundError
from pipeline.normalise.characteristics import dice
from tests.editions_db import editions_db
from tests.effects.test_build_effects import seed_db  # noqa: F401  (the module's database fixture)
from tests.test_build_and_cli import wh40k

SISTERS = "cp-sanctuary-guardians/battle-sisters-squad"  # 7 boltguns: A1 BS3+ S4 AP0 D1 (Rapid Fire 1)


def _close(value: float, fraction: Fraction) -> bool:
    return abs(value - float(fraction)) < 1e-9


def _attack(db, target: str, *, with_=(), without=(), edition=10):
    return attack(AttackRequest(attacker=SISTERS, target=target, weapons=("boltgun",), edition=edition,
                                with_effects=tuple(with_), without_effects=tuple(without)), db)


def test_go_to_ground_gives_the_target_cover_and_a_6_invulnerable_save(seed_db):
    # 10th edition, GEQ (T3 Sv5+): 7 attacks, hit on 3+ (2/3), S4 vs T3 wound on 3+ (2/3); Sv5+ fails
    # 2/3 of the time; with the Benefit of Cover (+1 to the armour save: 4+) it fails 1/2.
    plain = _attack(seed_db, "GEQ")
    assert _close(plain.result.unsaved.mean, 7 * Fraction(2, 3) * Fraction(2, 3) * Fraction(2, 3))
    covered = _attack(seed_db, "GEQ", with_=["Go to Ground"])
    assert _close(covered.result.unsaved.mean, 7 * Fraction(2, 3) * Fraction(2, 3) * Fraction(1, 2))
    assert covered.target.invulnerable_save == 6
    assert [(a.rule_name, a.applied) for a in covered.effects] == [("GO TO GROUND", True), ("GO TO GROUND", True)]
    assert covered.effects[0].wording.startswith("Until the end of the phase, all models in your unit have a 6+")


def test_holy_radiance_on_the_target_subtracts_1_to_hit_and_gives_feel_no_pain_5(seed_db):
    # MEQ (T4 Sv3+): hit on 3+ -1 = 4+ (1/2), wound on 4+ (1/2), save 3+ fails 1/3: 7/12 unsaved;
    # each damage point ignored on a 5+ (1/3): 7/12 x 2/3 = 7/18 damage.
    out = _attack(seed_db, "MEQ", with_=["holy radiance"])
    assert _close(out.result.unsaved.mean, Fraction(7, 12))
    assert _close(out.result.damage.mean, Fraction(7, 18))
    assert out.target.feel_no_pain == 5


def test_an_order_changes_the_exact_value_by_the_hand_derived_amount(seed_db):
    # Take Aim! (seed 004, 11th edition): BS 4+ improved to 3+. 10 lasguns (A1 S3 AP0 D1) against
    # MEQ: hits 10 x 1/2 -> 10 x 2/3; wound on 5+ (1/3), save 3+ fails 1/3.
    con = duckdb.connect(str(seed_db), read_only=True)
    try:
        cur = con.execute("SELECT * FROM effects WHERE rule_kind = 'order' AND rule_name = 'Take Aim!'")
        names = [d[0] for d in cur.description]
        effects = [effect_from_row(dict(zip(names, row))) for row in cur.fetchall()]
    finally:
        con.close()
    lasgun = Weapon(name="Lasgun", attacks=dice("1"), skill=4, strength=3, armour_penetration=0, damage=dice("1"),
                    models=10)
    meq = Target(toughness=4, save=3, wounds=2, models=10, keywords=frozenset({"INFANTRY"}))
    context = Context(edition=11)
    before = exact.resolve([lasgun], meq, context)
    weapons, target, context2, applied = apply_effects(effects, [lasgun], meq, context, "shooting")
    after = exact.resolve(weapons, target, context2)
    assert weapons[0].skill == 3 and applied[0].applied
    assert _close(before.unsaved.mean, 10 * Fraction(1, 2) * Fraction(1, 3) * Fraction(1, 3))
    assert _close(after.unsaved.mean - before.unsaved.mean, 10 * (Fraction(2, 3) - Fraction(1, 2)) / 9)


def test_the_target_s_own_abilities_apply_by_default_and_without_turns_one_off():
    # the test database of both editions: its 11th-edition Canoness has Null Rod (Feel No Pain 4+
    # against mortal wounds) and a 4+ invulnerable save, both applied by default
    db = editions_db()
    target = "11e/adepta-sororitas/canoness"

    def run(*without):
        return attack(AttackRequest(attacker="Battle Sisters Squad", target=target, edition=11,
                                    without_effects=without), db)

    out = run()
    assert (out.target.feel_no_pain_mortal, out.target.invulnerable_save) == (4, 4)
    assert "target ability 'Null Rod' applied by default (--without 'Null Rod' turns it off)" in out.notes
    off = run("null rod")
    assert off.target.feel_no_pain_mortal is None
    assert "target ability 'Null Rod' turned off (--without)" in off.notes
    with pytest.raises(InputError, match=r"--without 'Stealth': not one of the target's rules applied by default "
                                         r"\(those: 'Invulnerable Save \(4\+\*\)', 'Null Rod'\)"):
        run("Stealth")


def test_a_situational_effect_is_listed_not_applied(seed_db):
    # Ascetic Discipline: improve AP by 2 on a Critical Wound only
    out = _attack(seed_db, "MEQ", with_=["Ascetic Discipline"])
    assert [a.applied for a in out.effects] == [False]
    assert "critical wound only is not modelled" in out.effects[0].did
    assert out.weapons[0].armour_penetration == 0


def test_an_unknown_name_is_one_error_line_with_close_names(seed_db):
    with pytest.raises(NotFoundError, match="close names: GO TO GROUND"):
        _attack(seed_db, "MEQ", with_=["Go to Grund"])
    done = wh40k("attack", SISTERS, "--target", "MEQ", "--weapon", "boltgun", "--with", "Holy Radience",
                 "--db", str(seed_db))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith(
        "Error: --with 'Holy Radience': no stratagem, order, ability, detachment rule, enhancement or army rule with "
        "effects of that name for any faction in edition 10; close names: HOLY RADIANCE")  # MEQ has no faction
    assert "Traceback" not in done.stderr


def _effect(effect: str, *, roll=None, characteristic=None, value=None, parameter=None, weapon_type=None,
            conditions=None, name="Made-up rule") -> "Effect":
    from schemas.records import Effect

    return Effect(source_id="s", locator="l", rule_table="stratagems", rule_id="x", rule_kind="stratagem",
                  rule_name=name, edition=10, faction_id=None, position=0, side="attacker", effect=effect, roll=roll,
                  characteristic=characteristic, value=value, parameter=parameter, weapon_type=weapon_type,
                  conditions=conditions, wording="made up", origin="reader")


SIX_BOLTS = Weapon(name="Boltgun", attacks=dice("6"), skill=3, strength=4, armour_penetration=0, damage=dice("1"))
MEQ = Target(toughness=4, save=3, wounds=2, models=5, keywords=frozenset({"INFANTRY"}))


def test_a_granted_ability_is_read_by_the_declaration_with_its_keyword_condition():
    # SUSTAINED HITS 2 (10th edition): a 6 (1/6) scores 1 + 2 hits, a 3-5 (1/2) one hit:
    # E[hits] = 6 x (1/2 + 3/6) = 6
    weapons, *_ , applied = apply_effects([_effect("grant-ability", parameter="SUSTAINED HITS 2")], [SIX_BOLTS],
                                          MEQ, Context(), "shooting")
    assert _close(exact.resolve(weapons, MEQ, Context()).hits.mean, Fraction(6))
    # the declaration's grant keeps the keyword the ability is restricted to (11th edition: 24.02)
    weapons, *_ = apply_effects([_effect("grant-ability", parameter="LETHAL HITS: VEHICLE")], [SIX_BOLTS], MEQ,
                                Context(edition=11), "shooting")
    assert (weapons[0].lethal_hits, weapons[0].conditions) == (True, (("lethal_hits", "VEHICLE"),))
    *_, applied = apply_effects([_effect("grant-ability", parameter="ASSAULT")], [SIX_BOLTS], MEQ, Context(), "shooting")
    assert applied[0].did == "[ASSAULT]: not applied: [ASSAULT] does not change an attack the engine resolves"


def _apply_and_resolve(effects, weapon=SIX_BOLTS, context=Context(), phase="shooting"):
    weapons, target, context2, applied = apply_effects(effects, [weapon], MEQ, context, phase)
    return exact.resolve(weapons, target, context2), applied


def test_critical_hits_on_5_plus_add_a_sustained_hit_on_a_5():
    # "a successful unmodified Hit roll of 5+ scores a Critical Hit" -> Context.critical_hit_on = 5.
    # 6 attacks BS3+ [SUSTAINED HITS 1]: a 3-6 hits (2/3), a 5-6 (1/3) adds one hit:
    # E[hits] = 6 x (2/3 + 1/3) = 6 (6 x (2/3 + 1/6) = 5 on 6s only)
    sustained = Weapon(**{**SIX_BOLTS.__dict__, "sustained_hits": dice("1")})
    plain, _ = _apply_and_resolve([], sustained)
    out, applied = _apply_and_resolve([_effect("critical-on", roll="hit", value=5)], sustained)
    assert _close(plain.hits.mean, Fraction(5)) and _close(out.hits.mean, Fraction(6)) and applied[0].applied


def test_critical_wounds_on_5_plus_double_the_devastating_wounds():
    # 10th edition [DEVASTATING WOUNDS]: a Critical Wound inflicts mortal wounds equal to Damage (1).
    # E[hits] = 6 x 2/3 = 4; a Critical Wound on a 5+ (1/3) instead of a 6 (1/6):
    # E[mortal wounds] = 4 x 1/3 = 4/3 (4 x 1/6 = 2/3)
    dev = Weapon(**{**SIX_BOLTS.__dict__, "devastating_wounds": True})
    plain, _ = _apply_and_resolve([], dev)
    out, _ = _apply_and_resolve([_effect("critical-on", roll="wound", value=5)], dev)
    assert _close(plain.mortal_wounds.mean, Fraction(2, 3)) and _close(out.mortal_wounds.mean, Fraction(4, 3))


def test_lethal_hits_given_on_a_critical_hit_is_lethal_hits():
    # "on a Critical Hit, that attack has [LETHAL HITS]": Lethal Hits acts on Critical Hits only, so
    # it is applied. 6 attacks BS3+: 3-5 hit (1/2) and wound on 4+ (1/2), a 6 (1/6) wounds
    # automatically: E[wounds] = 6 x (1/2 x 1/2 + 1/6) = 5/2 (2 without)
    out, applied = _apply_and_resolve([_effect("grant-ability", parameter="LETHAL HITS", conditions="critical-hit")])
    assert _close(out.wounds.mean, Fraction(5, 2)) and applied[0].applied
    _, applied = _apply_and_resolve([_effect("modify-characteristic", characteristic="AP", value=1,
                                             conditions="critical-wound")])
    assert applied[0].did.endswith("not applied: an effect on a critical wound only is not modelled by the engine")


def test_ignoring_modifiers_to_the_hit_roll_drops_those_that_hurt():
    # 10th edition, -1 to hit (Stealth, a rule): BS3+ hits on 4+ (1/2): E[hits] = 3; ignoring the
    # modifiers to the Hit roll, on 3+ (2/3): 4. 11th edition, the Benefit of Cover worsens BS3+ to
    # 4+ (13.08); the attack ignores that modifier to its BS too: 4.
    ignore = _effect("ignore-modifiers", parameter="that attack's Ballistic Skill characteristic and/or any or "
                                                    "all modifiers to the Hit roll")
    plain, _ = _apply_and_resolve([], context=Context(hit_modifier=-1))
    out, applied = _apply_and_resolve([ignore], context=Context(hit_modifier=-1))
    assert _close(plain.hits.mean, Fraction(3)) and _close(out.hits.mean, Fraction(4)) and applied[0].applied
    covered, _ = _apply_and_resolve([], context=Context(edition=11, cover=True))
    out, _ = _apply_and_resolve([ignore], context=Context(edition=11, cover=True))
    assert _close(covered.hits.mean, Fraction(3)) and _close(out.hits.mean, Fraction(4))
    # a helping modifier stays: +1 to hit, BS3+ hits on 2+ (5/6): 5
    out, _ = _apply_and_resolve([ignore], context=Context(hit_modifier=1))
    assert _close(out.hits.mean, Fraction(5))


def test_a_re_roll_of_the_damage_roll_needs_a_random_damage():
    _, applied = _apply_and_resolve([_effect("reroll", roll="damage", parameter="all")])
    assert not applied[0].applied and "no weapon of the attack has a random Damage" in applied[0].did


def test_a_rule_of_another_faction_is_refused_on_the_side_it_acts_for(seed_db):
    # Take Aim! is an Astra Militarum Order acting for the attacker: the Battle Sisters are not
    # Astra Militarum, so it cannot improve their boltguns (QA report item 6)
    with pytest.raises(InputError, match=r"order 'Take Aim!' is a rule of astra-militarum and acts for the "
                                         r"attacker, whose faction is adepta-sororitas"):
        _attack(seed_db, "MEQ", with_=["Take Aim!"], edition=11)
    # Take Cover! acts for the target: refused for a target of another faction ...
    con = duckdb.connect(str(seed_db), read_only=True)
    try:
        take_cover = find_named(con, "Take Cover!", 11, None, [])
    finally:
        con.close()
    with pytest.raises(InputError, match=r"order 'Take Cover!' is a rule of astra-militarum and acts for the "
                                         r"target, whose faction is adepta-sororitas"):
        check_sides(take_cover, "Take Cover!", None, ["adepta-sororitas"])
    check_sides(take_cover, "Take Cover!", ["adepta-sororitas"], ["astra-militarum"])
    # ... and taken for a standard profile, which has no faction
    out = _attack(seed_db, "MEQ", with_=["Take Cover!"], edition=11)
    assert [a.rule_name for a in out.effects if a.applied] == ["Take Cover!"]


def test_a_rule_of_the_wrong_side_is_one_error_line_on_the_command_line(seed_db):
    r = wh40k("attack", SISTERS, "--target", "MEQ", "--with", "Take Aim!", "--edition", "11", "--db", str(seed_db))
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        "Error: --with 'Take Aim!': order 'Take Aim!' is a rule of astra-militarum and acts for the attacker, whose "
        "faction is adepta-sororitas; name a rule of the attacker's faction, of the target's for an effect on the "
        "target, or a core rule"]
