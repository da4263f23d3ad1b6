"""The reader of rule text on real wordings (quoted from the data, both editions)."""

from __future__ import annotations

import pytest

from pipeline.effects.hand_kept import entries
from pipeline.effects.reader import changes_an_attack, read_text
from pipeline.effects.rules import orders
from pipeline.effects.vocabulary import EFFECT_KINDS, split_conditions


def _read(text: str) -> list[tuple]:
    return [(e.side, e.effect, e.roll, e.characteristic, e.value, e.parameter, e.weapon_type, e.conditions)
            for e in read_text(text)]


# (wording as printed, edition it is quoted from, the effects expected)
CASES = [
    # Take Aim! (Voice of Command, both editions' wording)
    ("Improve the Ballistic Skill characteristic of ranged weapons equipped by models in this unit by 1.", 10,
     [("attacker", "modify-characteristic", None, "BS", 1, None, "ranged", None)]),
    # Prayer of Precision (Adepta Sororitas, 10th)
    ("You can discard 1 Miracle dice. Until the end of the phase, each time a model in your unit makes an attack, "
     "re-roll a Hit roll of 1. If you discarded a Miracle dice, you can re-roll the Hit roll instead.", 10,
     [("attacker", "reroll", "hit", None, None, "ones", None, None),
      ("attacker", "reroll", "hit", None, None, "all", None, "situational:If you discarded a Miracle dice")]),
    # Accuracy Under Pressure (Astra Militarum, 11th)
    ("Until the end of the phase, each time a model in your unit makes an attack, you can re-roll the Hit roll.", 11,
     [("attacker", "reroll", "hit", None, None, "all", None, None)]),
    # Rites of Fire (both editions): add 1 to the Wound roll, at a distance the request does not state
    ("Until the end of the phase, each time a model in your unit makes a ranged attack that targets an enemy unit "
     "within 6\" that is also within range of an objective marker, add 1 to the Wound roll.", 11,
     [("attacker", "modify-roll", "wound", None, 1, None, "ranged",
       'situational:within 6" that is also within range of an objective marker')]),
    # Holy Cleansing (Adepta Sororitas, 10th)
    ("Until the end of the phase, weapons equipped by models in your unit have the [LETHAL HITS] ability.", 10,
     [("attacker", "grant-ability", None, None, None, "LETHAL HITS", None, None)]),
    # Cleansing Flames: Torrent weapons only
    ("Until the end of the phase, Torrent weapons equipped by models in your unit have the [DEVASTATING WOUNDS] "
     "ability.", 11, [("attacker", "grant-ability", None, None, None, "DEVASTATING WOUNDS", None, "weapon:TORRENT")]),
    # Holy Radiance (10th): the target's rule
    ("Until the end of the phase, each time an attack targets your unit, subtract 1 from the Hit roll and models in "
     "your unit have the Feel No Pain 5+ ability against that attack.", 10,
     [("target", "modify-roll", "hit", None, -1, None, None, None),
      ("target", "feel-no-pain", None, None, 5, "all", None, None)]),
    # Shield of Aversion (both editions)
    ("Until the attacking unit has finished making its attacks, each time an attack targets your unit, worsen the "
     "Armour Penetration characteristic of that attack by 1.", 11,
     [("target", "modify-characteristic", None, "AP", -1, None, None, None)]),
    # Ablative Plating (Astra Militarum): damage reduction
    ("Until the end of the phase, each time an attack is allocated to your unit, subtract 1 from the Damage "
     "characteristic of that attack", 11, [("target", "damage-reduction", None, None, None, "one", None, None)]),
    # Divine Protection (10th): the 4+ only for two units
    ("Until the end of the phase, models in your unit have a 5+ invulnerable save, or a 4+ invulnerable save instead "
     "if your unit is a BATTLE SISTERS SQUAD or a SERAPHIM SQUAD.", 10,
     [("target", "invulnerable-save", None, None, 5, None, None, None),
      ("target", "invulnerable-save", None, None, 4, None, None,
       "situational:if your unit is a BATTLE SISTERS SQUAD or a SERAPHIM SQUAD")]),
    # Shield of Faith: Feel No Pain against mortal wounds
    ("Until the end of the phase, models in your unit have the Feel No Pain 5+ ability against mortal wounds.", 10,
     [("target", "feel-no-pain", None, None, 5, "mortal-wounds", None, None)]),
    # Born Soldiers (Astra Militarum detachment rule, 10th): keyword conditions
    ("Each time a model in a SQUADRON unit from your army makes a ranged attack that targets a visible MONSTER or "
     "VEHICLE unit, that attack has the [LETHAL HITS] ability.", 10,
     [("attacker", "grant-ability", None, None, None, "LETHAL HITS", "ranged",
       "target:MONSTER/VEHICLE;attacker:SQUADRON")]),
    ("Each time a model in a REGIMENT unit from your army makes a ranged attack that targets a visible unit "
     "(excluding MONSTERS and VEHICLES), that attack has the [LETHAL HITS] ability.", 10,
     [("attacker", "grant-ability", None, None, None, "LETHAL HITS", "ranged",
       "target:non-MONSTER/VEHICLE;attacker:REGIMENT")]),
    # Passion of the Penitent: Critical Hits on 5+, PENITENT models only
    ("Until the end of the phase, each time a PENITENT model in your unit makes a melee attack, a successful "
     "unmodified Hit roll of 5+ scores a Critical Hit.", 11,
     [("attacker", "critical-on", "hit", None, 5, None, "melee", "attacker:PENITENT")]),
    # Against the Odds (Astra Militarum, 10th): two characteristics
    ("Until the end of the phase, add 1 to the Attacks and Strength characteristics of melee weapons equipped by "
     "models in your unit.", 10,
     [("attacker", "modify-characteristic", None, "A", 1, None, "melee", None),
      ("attacker", "modify-characteristic", None, "S", 1, None, "melee", None)]),
    # Sanctified Blows, Take Cover, Harmonised Exorcism, Fires of Damnation (11th-edition compact wording)
    ("Your unit’s melee attacks have +1 A and S.", 11,
     [("attacker", "modify-characteristic", None, "A", 1, None, "melee", None),
      ("attacker", "modify-characteristic", None, "S", 1, None, "melee", None)]),
    ("Your unit has +1 Sv.", 11, [("target", "modify-characteristic", None, "Sv", 1, None, None, None)]),
    ("Select one unit visible to and within 9\" of a friendly Adepta Sororitas Infantry Fly unit. Your unit’s "
     "ranged attacks that target that unit have +1 to hit rolls.", 11,
     [("attacker", "modify-roll", "hit", None, 1, None, "ranged", "situational:that unit")]),
    ("Your unit's Torrent weapons have 6 A.", 11,
     [("attacker", "set-characteristic", None, "A", 6, None, None, "weapon:TORRENT")]),
    # Grizzled Killers (11th): a list of options
    ("Your unit's melee attacks have:\n[Sustained Hits 1].\nOr: [Lethal Hits].", 11,
     [("attacker", "grant-ability", None, None, None, "SUSTAINED HITS 1", "melee", "choice:SUSTAINED HITS 1"),
      ("attacker", "grant-ability", None, None, None, "LETHAL HITS", "melee", "choice:LETHAL HITS")]),
    # Suffer Not the Unfaithful (both editions): a choice of abilities
    ("Select either the [LETHAL HITS] or [SUSTAINED HITS 1] ability. Until the end of the phase, weapons equipped "
     "by models in your unit have the selected ability.", 10,
     [("attacker", "grant-ability", None, None, None, "LETHAL HITS", None, "choice:LETHAL HITS"),
      ("attacker", "grant-ability", None, None, None, "SUSTAINED HITS 1", None, "choice:SUSTAINED HITS 1")]),
    # Smokescreen and Go to Ground (core, 10th)
    ("Until the end of the phase, all models in your unit have the Benefit of Cover and the Stealth ability.", 10,
     [("target", "benefit-of-cover", None, None, None, None, None, None),
      ("target", "stealth", None, None, None, None, None, None)]),
    ("Until the end of the phase, all models in your unit have a 6+ invulnerable save and have the Benefit of "
     "Cover.", 10, [("target", "invulnerable-save", None, None, 6, None, None, None),
                    ("target", "benefit-of-cover", None, None, None, None, None, None)]),
    # Ascetic Discipline: on a Critical Wound
    ("Until the end of the phase, each time a model in your unit makes an attack, on a Critical Wound, improve the "
     "Armour Penetration characteristic of that attack by 2.", 10,
     [("attacker", "modify-characteristic", None, "AP", 2, None, None, "critical-wound")]),
    # Take Cover! (Order): a bound
    ("Improve the Save characteristic of models in this unit by 1 (this cannot improve a model’s Save to better "
     "than 3+).", 11, [("target", "modify-characteristic", None, "Sv", 1, "3+", None, None)]),
    # half range, and the target's keyword
    ("Each time a model in this unit makes an attack that targets a unit within half range, add 1 to the Wound "
     "roll.", 10, [("attacker", "modify-roll", "wound", None, 1, None, None, "half-range")]),
    ("Each time this model makes a ranged attack that targets a MONSTER or VEHICLE unit, you can re-roll the Wound "
     "roll.", 10, [("attacker", "reroll", "wound", None, None, "all", "ranged", "target:MONSTER/VEHICLE")]),
]


@pytest.mark.parametrize("text, edition, expected", CASES, ids=[f"{c[1]}e-{c[0][:40]}" for c in CASES])
def test_the_reader_reads_each_phrasing(text, edition, expected):
    assert _read(text) == expected


def test_words_that_do_not_change_an_attack_give_no_effect():
    # Move! Move! Move! and Duty and Honour! (Orders), Command Re-roll (hand-kept instead)
    assert read_text('Add 3" to the Move characteristic of models in this unit.') == []
    assert read_text("Improve the Leadership and Objective Control characteristics of models in this unit by 1.") == []
    assert read_text("You re-roll that roll, test or saving throw.") == []


def test_attack_changing_wording_as_the_coverage_counts_it():
    assert changes_an_attack("Your unit has +1 Sv.")
    assert changes_an_attack("models in your unit have the Feel No Pain 5+ ability")
    assert not changes_an_attack("Remove your unit from the battlefield and place it into Strategic Reserves.")
    assert not changes_an_attack(None)


def test_orders_are_split_from_voice_of_command():
    text = ("Only ASTRA MILITARUM models gain the benefit of an Order issued to their unit.\nMove! Move! Move!\nM\n"
            "+3\"\nAdd 3\" to the Move characteristic of models in this unit.\nTake Aim!\nBS\n+1\nImprove the Ballistic "
            "Skill characteristic of ranged weapons equipped by models in this unit by 1.")
    assert orders(text) == [
        ("Move! Move! Move!", 'Add 3" to the Move characteristic of models in this unit.'),
        ("Take Aim!", "Improve the Ballistic Skill characteristic of ranged weapons equipped by models in this unit by 1."),
    ]


def test_hand_kept_entries_are_in_the_vocabulary_and_say_why():
    kept = entries()
    assert {e["rule_name"] for e in kept} >= {"Fire Overwatch", "Command Re-roll"}
    for entry in kept:
        assert entry["effect"] in EFFECT_KINDS and entry["why"] and entry["wording"]
        split_conditions(entry.get("conditions"))
