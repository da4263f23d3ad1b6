"""Normalisers: cases P06-P10 and P14 of the shared cases, and their neighbours."""

from fractions import Fraction

import pytest

from pipeline.errors import NormaliseError
from pipeline.normalise import characteristics as ch
from pipeline.normalise.text import clean_line, html_to_text, slug, strip_battlescribe_markup
from pipeline.normalise.weapon_abilities import parse_abilities, parse_ability


def test_p06_dice_d6_plus_2():
    d = ch.dice("D6+2")
    assert (d.dice_count, d.dice_sides, d.modifier) == (1, 6, 2)
    assert (d.mean, d.minimum, d.maximum) == (Fraction(11, 2), 3, 8)


@pytest.mark.parametrize(
    "text, mean, low, high",
    [
        ("2D6+3", Fraction(10), 5, 15),
        ("2d6+3", Fraction(10), 5, 15),
        ("D6+3", Fraction(13, 2), 4, 9),
        ("D3", Fraction(2), 1, 3),
        ("3", Fraction(3), 3, 3),
        ("D3+1", Fraction(3), 2, 4),
        ("2D6", Fraction(7), 2, 12),
        ("d6 - 1", Fraction(5, 2), 0, 5),
    ],
)
def test_p07_dice_means_and_ranges(text, mean, low, high):
    d = ch.dice(text)
    assert (d.mean, d.minimum, d.maximum) == (mean, low, high)
    assert sum(d.distribution().values()) == 1
    assert sum(v * p for v, p in d.distribution().items()) == mean


def test_p07_dice_text_is_canonical():
    assert ch.dice("2d6+3").text == "2D6+3"
    assert ch.dice(" d3 ").text == "D3"


@pytest.mark.parametrize("bad", ["-", "N/A", "D", "", "D1", "2X6", "D6+"])
def test_dice_rejects_unreadable_values(bad):
    with pytest.raises(NormaliseError, match="not a dice expression"):
        ch.dice(bad)


@pytest.mark.parametrize(
    "text, add, expected, mean, maximum",
    [("D6", 1, "D6+1", Fraction(9, 2), 7), ("D3", 1, "D3+1", Fraction(3), 4), ("D6+1", 1, "D6+2", Fraction(11, 2), 8)],
)
def test_p08_adding_to_dice_never_changes_the_die(text, add, expected, mean, maximum):
    d = ch.add_to_dice(ch.dice(text), add)
    assert d.text == expected
    assert (d.mean, d.maximum, d.dice_sides) == (mean, maximum, ch.dice(text).dice_sides)


def test_p09_torrent_skill_is_null_and_flagged_when_printed():
    assert ch.skill("N/A", torrent=True) == ch.Skill(None, ())
    assert ch.skill("2+", torrent=True) == ch.Skill(None, ("torrent_with_bs",))
    assert ch.skill("2+") == ch.Skill(2, ())
    assert ch.skill("3") == ch.Skill(3, ())


@pytest.mark.parametrize(
    "text, value", [("-1", -1), ("\u22121", -1), ("\u20131", -1), ("AP-3", -3), ("0", 0), ("-0", 0), ("\u20112", -2)]
)
def test_p10_armour_penetration(text, value):
    assert ch.armour_penetration(text) == ch.AP(value, ())


def test_p10_positive_ap_is_flagged_not_stored_positive():
    assert ch.armour_penetration("1") == ch.AP(-1, ("positive_ap",))


@pytest.mark.parametrize("text, inches, melee", [('18&quot;', 18, False), ('18"', 18, False), ("Melee", None, True), ("melee", None, True), ("24", 24, False)])
def test_p10_ranges(text, inches, melee):
    assert ch.weapon_range(text) == ch.Range(inches, melee)


def test_range_rejects_garbage():
    with pytest.raises(NormaliseError, match="not a weapon range"):
        ch.weapon_range("far")


def test_roll_targets():
    assert [ch.roll_target(x) for x in ("2+", "3+", "6+", "4")] == [2, 3, 6, 4]
    with pytest.raises(NormaliseError):
        ch.roll_target("1+")


def test_p12_invulnerable_saves():
    assert ch.invulnerable_save("-") == ch.InvulnerableSave(None, None)
    assert ch.invulnerable_save("4+") == ch.InvulnerableSave(4, None)
    assert ch.invulnerable_save("3+*", "* Ranged attacks only") == ch.InvulnerableSave(3, "ranged")
    assert ch.invulnerable_save("4*", "* Melee attacks only") == ch.InvulnerableSave(4, "melee")
    assert ch.invulnerable_save("5+*").scope == "conditional (no note)"


def test_distances():
    assert [ch.distance(x) for x in ('6"', '20+"', "-", "12")] == [6, 20, None, 12]


def test_p14_html_entities_decoded_once_then_tags_handled():
    text = html_to_text(
        "&lt;ul&gt;&lt;li&gt;&lt;b&gt;Litany A&lt;/b&gt; Re-roll 1s.&lt;/li&gt;"
        "&lt;li&gt;&lt;b&gt;Litany B&lt;/b&gt; +1 S.&lt;/li&gt;&lt;/ul&gt;"
    )
    assert text.split("\n") == ["Litany A Re-roll 1s.", "Litany B +1 S."]
    assert html_to_text("Line one<br/>Line two").split("\n") == ["Line one", "Line two"]
    for out in (text, html_to_text("a &amp;amp; b<br>c")):
        assert "<" not in out and "&lt;" not in out
    assert html_to_text("Fish &amp; chips") == "Fish & chips"


def test_hyphens_and_names():
    assert clean_line("Arco\u2011flagellants") == "Arco-flagellants"
    assert slug("Combi\u2011weapon") == "combi-weapon"
    assert slug("T’au Empire") == slug("T'au Empire") == "tau-empire"


def test_battlescribe_markup_all_forms():
    assert strip_battlescribe_markup("^^Adepta Sororitas^^ and ^^**KW**^^ and **^^KW2^^**") == (
        "Adepta Sororitas and KW and KW2"
    )


@pytest.mark.parametrize(
    "item, expected",
    [
        ("anti-psyker 2+", ("ANTI", "PSYKER", 2, None)),
        ("ANTI\u2011INFANTRY 4+", ("ANTI", "INFANTRY", 4, None)),
        ("RAPID FIRE 1", ("RAPID FIRE", None, None, "1")),
        ("sustained hits 1", ("SUSTAINED HITS", None, None, "1")),
        ("Sustained Hits D3", ("SUSTAINED HITS", None, None, "D3")),
        ("ignores cover", ("IGNORES COVER", None, None, None)),
        ("torrent", ("TORRENT", None, None, None)),
        ("precision", ("PRECISION", None, None, None)),
        ("devastating wounds", ("DEVASTATING WOUNDS", None, None, None)),
        ("pistol", ("PISTOL", None, None, None)),
        ("lethal hits", ("LETHAL HITS", None, None, None)),
        ("hazardous", ("HAZARDOUS", None, None, None)),
        ("Melta 2", ("MELTA", None, None, "2")),
        ("blast", ("BLAST", None, None, None)),
        ("twin\u2011linked", ("TWIN-LINKED", None, None, None)),
    ],
)
def test_weapon_abilities_parse_to_name_and_parameters(item, expected):
    a = parse_ability(item)
    assert (a.name, a.target_keyword, a.threshold, a.value.text if a.value else None) == expected
    assert a.flags == ()


def test_p01_anti_without_threshold_is_flagged_not_defaulted():
    a = parse_abilities("Pistol, Anti-infantry, Precision")
    assert [x.name for x in a] == ["PISTOL", "ANTI", "PRECISION"]
    assert (a[1].target_keyword, a[1].threshold, a[1].flags) == ("INFANTRY", None, ("anti_missing_threshold",))
    b = parse_abilities("[ANTI-INFANTRY 4+, DEVASTATING WOUNDS]")
    assert [(x.name, x.target_keyword, x.threshold) for x in b] == [("ANTI", "INFANTRY", 4), ("DEVASTATING WOUNDS", None, None)]


def test_p03_sustained_hits_value_never_defaults_to_one():
    a = parse_abilities("Sustained Hits, Twin-linked")
    assert (a[0].name, a[0].value, a[0].flags) == ("SUSTAINED HITS", None, ("sustained_hits_missing_value",))
    d3 = parse_ability("[SUSTAINED HITS D3]").value
    assert (d3.text, d3.mean) == ("D3", 2)
    assert parse_ability("Sustained Hits 2").value.mean == 2


def test_unknown_ability_is_kept_and_flagged():
    a = parse_ability("dead choppy")
    assert (a.name, a.flags) == ("DEAD CHOPPY", ("unknown_weapon_ability",))


def test_eleventh_edition_conditional_ability_keeps_condition():
    a = parse_ability("LETHAL HITS: non-MONSTER/VEHICLE")
    assert (a.name, a.condition) == ("LETHAL HITS", "non-MONSTER/VEHICLE")
