"""One case per row of the DESIGN table "Attack resolution differences (10th current -> 11th)".

For each rule that changes an attack, a case whose exact result differs between
``Context(edition=10)`` and ``Context(edition=11)``, with BOTH values computed by hand (``Fraction``
arithmetic in the comments and the assertions, checked within 1e-9). Where the current wordings
give the same numbers (Devastating Wounds, Saves of a unit of identical models, Anti in the usual
case), a test asserts the equality and says why. Engagement range (1" -> 2") does not enter an
attack's resolution and has no case here.
"""

from __future__ import annotations

from fractions import Fraction

from pipeline.engine.exact import resolve
from pipeline.engine.profiles import Anti, Context, Target, Weapon
from pipeline.engine.result import STAGES
from pipeline.normalise.characteristics import dice

EXACT = 1e-9
TENTH, ELEVENTH = 10, 11


def weapon(attacks="6", skill=3, strength=4, ap=0, damage="1", **kw) -> Weapon:
    return Weapon(name=kw.pop("name", "gun"), attacks=dice(attacks), skill=skill, strength=strength,
                  armour_penetration=ap, damage=dice(damage), **kw)


def target(toughness=4, save=3, wounds=1, models=10, **kw) -> Target:
    return Target(toughness=toughness, save=save, wounds=wounds, models=models, **kw)


def both(weapons, target_, **context):
    """(10th-edition result, 11th-edition result) of the same attack."""
    return tuple(resolve(weapons, target_, Context(edition=e, **context)) for e in (TENTH, ELEVENTH))


def close(value: float, exact) -> bool:
    return abs(value - float(exact)) <= EXACT


def identical(a, b) -> bool:
    return all(a.stage(s) == b.stage(s) for s in STAGES) and a.target_destroyed == b.target_destroyed


# --- Benefit of Cover: +1 save (10th) vs BS worsened by 1 (11th) -------------------------------


def test_cover_save_bonus_vs_worse_ballistic_skill():
    # 6 attacks BS3+ S4 AP0 D1 against T4 Sv4+ in cover.
    # 10th: hit 4/6, wound 3/6, save 4+ improved to 3+ -> unsaved 2/6: 6 x 4/6 x 3/6 x 2/6 = 2/3.
    # 11th: BS 4+ -> hit 3/6, wound 3/6, save 4+ -> unsaved 3/6:      6 x 3/6 x 3/6 x 3/6 = 3/4.
    r10, r11 = both([weapon()], target(save=4), cover=True)
    assert close(r10.unsaved.mean, Fraction(2, 3))
    assert close(r11.unsaved.mean, Fraction(3, 4))
    assert close(r10.hits.mean, 4) and close(r11.hits.mean, 3)


def test_cover_with_a_hit_penalty_goes_beyond_the_cap_only_in_the_11th():
    # BS3+ with -1 to hit, in cover, Sv3+ AP0 (no 10th-edition save bonus: Sv3+ vs AP0).
    # 10th: hit 4+ -> E[hits] = 6 x 3/6 = 3.  11th: BS 4+ and -1 -> 5+ -> 6 x 2/6 = 2.
    r10, r11 = both([weapon()], target(save=3), cover=True, hit_modifier=-1)
    assert close(r10.hits.mean, 3) and close(r11.hits.mean, 2)


# --- Stealth: -1 to hit (10th) vs the benefit of cover (11th) ----------------------------------


def test_stealth_against_an_ignores_cover_weapon():
    # 10th: Stealth is -1 to hit whatever IGNORES COVER: BS3+ -> 4+ -> 6 x 3/6 = 3 hits.
    # 11th: Stealth is cover and IGNORES COVER removes it: BS3+ -> 6 x 4/6 = 4 hits.
    r10, r11 = both([weapon(ignores_cover=True)], target(stealth=True))
    assert close(r10.hits.mean, 3) and close(r11.hits.mean, 4)


def test_stealth_with_a_hit_penalty():
    # -1 to hit from another rule. 10th: -1 (Stealth) -1 = -2, capped at -1: 4+ -> 3/6 x 6 = 3.
    # 11th: BS 4+ (cover from Stealth) with -1: 5+ -> 2/6 x 6 = 2.
    r10, r11 = both([weapon()], target(stealth=True), hit_modifier=-1)
    assert close(r10.hits.mean, 3) and close(r11.hits.mean, 2)


def test_stealth_in_cover():
    # Torrent (no hit roll), Sv4+ AP0, 6 attacks, wound 4+: 3 wounds.
    # 10th: cover +1 save (Stealth does nothing without a hit roll): unsaved 3 x 2/6 = 1.
    # 11th: cover worsens a BS it does not have: unsaved 3 x 3/6 = 3/2.
    r10, r11 = both([weapon(skill=None, torrent=True)], target(save=4, stealth=True), cover=True)
    assert close(r10.unsaved.mean, 1) and close(r11.unsaved.mean, Fraction(3, 2))


# --- Lethal Hits: automatic (10th) vs the attacker's choice (11th) -----------------------------


def test_lethal_hits_declined_with_devastating_wounds():
    # 6 attacks BS4+ S4 AP0 D1 [LETHAL HITS, DEVASTATING WOUNDS] against T4 Sv2+.
    # Per attack: normal hit 2/6, Critical Hit 1/6. A rolled wound roll (4+): normal wound 2/6,
    # unsaved 1/6 -> 2/36; Critical Wound 1/6 -> 1 mortal wound: E = 2/36 + 6/36 = 2/9.
    # 10th (auto-wound): 6 x (2/6 x 2/9 + 1/6 x 1/6) = 6 x (4/54 + 1/36) = 11/18.
    # 11th (declines):   6 x (3/6 x 2/9)             = 2/3.
    r10, r11 = both([weapon(skill=4, lethal_hits=True, devastating_wounds=True)], target(save=2))
    assert close(r10.damage.mean, Fraction(11, 18))
    assert close(r11.damage.mean, Fraction(2, 3))
    assert r11.choices["Lethal Hits: gun"].startswith("roll to wound")
    # Mortal wounds: 10th 6 x 2/6 x 1/6 = 1/3 (only normal hits roll); 11th 6 x 3/6 x 1/6 = 1/2.
    assert close(r10.mortal_wounds.mean, Fraction(1, 3)) and close(r11.mortal_wounds.mean, Fraction(1, 2))


# --- Blast: +1 per five models (10th) vs [BLAST X] (11th) --------------------------------------


def test_blast_x():
    # [BLAST 2], A3, against 12 models: 10th +1 x (12 // 5) = +2 -> 5; 11th +2 x 2 = +4 -> 7.
    r10, r11 = both([weapon("3", blast=2)], target(models=12))
    assert close(r10.attacks.mean, 5) and close(r11.attacks.mean, 7)
    # Hits (BS3+): 5 x 2/3 = 10/3 vs 7 x 2/3 = 14/3.
    assert close(r10.hits.mean, Fraction(10, 3)) and close(r11.hits.mean, Fraction(14, 3))


# --- Hazardous: test on a 1, 3 mortal wounds (10th) vs hazard roll on 1-2, 1 mortal wound (11th)


def test_hazardous_expected_mortal_wounds():
    # 4 models fire a [HAZARDOUS] weapon: 4 tests.
    # 10th: 4 x 1/6 failed x 3 mortal wounds = 2.  11th: 4 x 2/6 failed x 1 mortal wound = 4/3.
    r10, r11 = both([weapon(hazardous=True, models=4)], target())
    assert close(r10.hazardous_mortal_wounds, 2) and close(r11.hazardous_mortal_wounds, Fraction(4, 3))
    # A VEHICLE unit in the 11th edition: 4 x 2/6 x 3 = 4 (10th: still 2).
    r10, r11 = both([weapon(hazardous=True, models=4)], target(), attacker_keywords=frozenset({"VEHICLE"}))
    assert close(r10.hazardous_mortal_wounds, 2) and close(r11.hazardous_mortal_wounds, 4)


# --- Anti: all apply (10th) vs duplicates, one applies (11th) -----------------------------------


def test_anti_duplicates_the_same_in_the_usual_case():
    # The attacker picks the best Anti ability; without a Feel No Pain against mortal wounds the
    # lowest threshold is best, which is what the 10th edition gives (all apply: lowest counts).
    # Haywire-like: 8 attacks BS4+ S3 AP-1 D3 [ANTI-VEHICLE 4+, ANTI-MONSTER 5+, DEVASTATING
    # WOUNDS] against a VEHICLE MONSTER T11 Sv2+ W13: Critical Wounds on 4+ in both editions.
    # E[mortal wounds] = 8 x 1/2 x 1/2 x 3 = 6 (T07).
    w = weapon("8", skill=4, strength=3, ap=-1, damage="3", devastating_wounds=True,
               anti=(Anti("VEHICLE", 4), Anti("MONSTER", 5)))
    r10, r11 = both([w], target(toughness=11, save=2, wounds=13, models=1,
                                keywords=frozenset({"VEHICLE", "MONSTER"})))
    assert identical(r10, r11)
    assert close(r11.mortal_wounds.mean, 6)


def test_anti_duplicates_differ_with_feel_no_pain_against_mortal_wounds():
    # 1 Torrent attack S8 AP0 D1 [DEVASTATING WOUNDS, ANTI-INFANTRY 4+, ANTI-PSYKER 2+] against
    # an INFANTRY PSYKER with no save and Feel No Pain 4+ against mortal wounds only.
    # 10th: both apply, Critical Wounds on 2+: 5/6 mortal wounds x 1/2 (FNP) = 5/12.
    # 11th: one applies. ANTI-PSYKER 2+ gives 5/12; ANTI-INFANTRY 4+: wound roll 2+, faces 2-3
    # normal wounds, no save, no FNP: 2/6; faces 4-6 Critical Wounds: 3/6 x 1/2 = 1/4;
    # total 7/12 > 5/12, so the attacker picks ANTI-INFANTRY 4+.
    w = weapon("1", skill=None, torrent=True, strength=8, devastating_wounds=True,
               anti=(Anti("INFANTRY", 4), Anti("PSYKER", 2)))
    t = target(save=None, models=1, feel_no_pain_mortal=4, keywords=frozenset({"INFANTRY", "PSYKER"}))
    r10, r11 = both([w], t)
    assert close(r10.damage.mean, Fraction(5, 12))
    assert close(r11.damage.mean, Fraction(7, 12))
    assert r11.choices["Anti: gun"] == "Anti-INFANTRY 4+"


# --- Psychic: tag (10th) vs may ignore modifiers to BS and to the hit roll (11th) --------------


def test_psychic_ignores_a_hit_penalty_only_in_the_11th():
    # BS3+ with -1 to hit. 10th: 4+ -> 6 x 3/6 = 3 hits. 11th: -1 ignored: 6 x 4/6 = 4 hits.
    r10, r11 = both([weapon(psychic=True)], target(), hit_modifier=-1)
    assert close(r10.hits.mean, 3) and close(r11.hits.mean, 4)


# --- Fire Overwatch: re-rolls allowed (10th) vs snap shooting without re-rolls (11th) ----------


def test_overwatch_rerolls():
    # Re-roll failed hits. 10th: 1/6 + 5/6 x 1/6 = 11/36 per attack -> 6 x 11/36 = 11/6.
    # 11th: hit rolls cannot be re-rolled: 6 x 1/6 = 1.
    r10, r11 = both([weapon()], target(), overwatch=True, reroll_hits="failed")
    assert close(r10.hits.mean, Fraction(11, 6)) and close(r11.hits.mean, 1)


# --- Rows with no numerical difference in the current wordings ---------------------------------


def test_devastating_wounds_the_same_in_both_current_wordings():
    # 10th current: mortal wounds = D, no save, allocated after the unit's other attacks, one
    # model each, excess lost. 11th (24.10): the attack ends, mortal wounds = D after the normal
    # damage, at most one model per Critical Wound. Same numbers (the 10th edition's ORIGINAL
    # wording let mortal wounds spill over, which is not the current rule). Two weapons with
    # Devastating Wounds around a normal one, D2 and D3 against W2 models, Anti-INFANTRY 4+:
    ws = [weapon("3", damage="2", devastating_wounds=True, anti=(Anti("INFANTRY", 4),)),
          weapon("2", damage="1"),
          weapon("2", damage="D3", devastating_wounds=True, skill=None, torrent=True)]
    r10, r11 = both(ws, target(save=4, wounds=2, models=5, keywords=frozenset({"INFANTRY"})))
    assert identical(r10, r11)
    # P33: one Critical Wound with D3 against W1 models: 1 model destroyed, not 3.
    one = [weapon("1", skill=None, torrent=True, damage="3", devastating_wounds=True, anti=(Anti("INFANTRY", 2),))]
    r10, r11 = both(one, target(save=None, models=3, keywords=frozenset({"INFANTRY"})))
    assert identical(r10, r11) and r11.models_destroyed.maximum == 1


def test_saves_the_same_without_cover():
    # 10th: the defender picks armour or invulnerable; 11th: the better of armour (after AP) and
    # InSv. For a unit of identical models the defender picks the better one: the same numbers.
    # T18: 6 Torrent attacks S4 vs T4 Sv3+ InSv4+: AP-3 -> 4+ (InSv): unsaved 3 x 3/6 = 3/2.
    for ap, unsaved in [(-3, Fraction(3, 2)), (-1, Fraction(3, 2)), (0, Fraction(1))]:
        r10, r11 = both([weapon(skill=None, torrent=True, ap=ap)], target(invulnerable_save=4))
        assert identical(r10, r11)
        assert close(r11.unsaved.mean, unsaved)
