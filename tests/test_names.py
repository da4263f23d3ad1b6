"""Names compared as a reader compares them: ``pipeline.normalise.names.name_key``."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.normalise.names import SPELLINGS_FILE, british_american, name_key


@pytest.mark.parametrize("a, b", [
    ("Thunder Hammer", "Thunder hammer"),  # case
    ("Captain  in\tTerminator Armour ", "Captain in Terminator Armour"),  # spacing
    ("Von Ryan’s Leapers", "Von Ryan's Leapers"),  # apostrophes
    ("Von Ryan‘s Leapers", "Von Ryan`s Leapers"),
    ("“Iron Father” Feirros", '"Iron Father" Feirros'),  # quotes
    ("Ironclad Dreadnought.", "Ironclad Dreadnought"),  # a trailing full stop
    ("Ancient In Terminator Armour", "Ancient in Terminator Armor"),  # British and American
    ("Tarantula Air Defence Battery", "Tarantula Air Defense Battery"),
    ("Armoured Sentinels", "Armored Sentinels"),  # a word beginning with a British form
    ("Colour Sergeant", "Color Sergeant"),
    ("Arco-flagellants", "Arco flagellants"),  # a hyphen read as a space
    ("Kâhl", "Kahl"),  # accents
])
def test_names_a_reader_reads_as_one_have_one_key(a, b):
    assert name_key(a) == name_key(b)


@pytest.mark.parametrize("plural, singular", [
    ("Boyz", "Boy"),
    ("Battle Sisters", "Battle Sister"),
    ("Termagants", "Termagant"),
    ("SISTERS REPENTIA", "Sister Repentia"),
    ("Carnifexes", "Carnifex"),
    ("Ripper Swarms", "Ripper Swarm"),
    ("Twin power fists", "Twin power fist"),
])
def test_the_plural_is_the_singular_only_when_asked(plural, singular):
    assert name_key(plural, ignore_plural=True) == name_key(singular, ignore_plural=True)
    assert name_key(plural) != name_key(singular)


@pytest.mark.parametrize("a, b", [
    ("Hellflayer", "Hellflayers"),  # two units of one source: unit names keep their number
    ("Lightning claw", "Twin lightning claws"),
    ("Bioweapons", "Bio-weapons"),
    ("Chaos Lord", "Chaos Lord in Terminator Armour"),
    ("Sister Superior", "Sister Dialogus"),
])
def test_different_names_keep_different_keys(a, b):
    assert name_key(a) != name_key(b)
    if a != "Hellflayer":
        assert name_key(a, ignore_plural=True) != name_key(b, ignore_plural=True)


def test_words_ending_like_a_plural_but_singular_are_kept():
    assert name_key("Canoness Vadicus", ignore_plural=True) == "canoness vadicus"
    assert name_key("Boss Nob", ignore_plural=True) == "boss nob"


def test_the_spelling_table_is_data_read_once():
    table = tomllib.loads(SPELLINGS_FILE.read_text(encoding="utf-8"))["british_american"]
    assert british_american() is british_american()  # read once
    assert dict(british_american()) == table
    assert {"armour": "armor", "defence": "defense", "colour": "color"}.items() <= table.items()
    for british, american in table.items():
        assert british == british.lower() and american == american.lower() and " " not in british
        assert british != american
        assert name_key(british.title()) == name_key(american)


WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(words=st.lists(WORD, min_size=1, max_size=5), data=st.data())
def test_case_spacing_quotes_and_a_full_stop_never_change_the_key(words, data):
    plain = " ".join(words)
    printed = ""
    for word in words:
        letters = "".join(c.upper() if data.draw(st.booleans()) else c for c in word)
        quote = data.draw(st.sampled_from(["", "’", "'", "‘", "`", "“", "”", '"']))
        space = data.draw(st.sampled_from([" ", "  ", "\t", " \u00a0"]))
        printed += f"{space}{quote}{letters}{quote}"
    if data.draw(st.booleans()):
        printed += "."
    for ignore_plural in (False, True):
        assert name_key(printed, ignore_plural=ignore_plural) == name_key(plain, ignore_plural=ignore_plural)
