"""Fuzzing every registered parser: any input gives a result or the project's own error, in bounded time.

Each parser of ``pipeline.extractors.EXTRACTORS`` is called through ``get_extractor`` with a made-up
``Source`` (folder formats with a dict of files) on two kinds of input: real small inputs mutated
(the seed snapshots of ``raw/`` and the markup snippets of the parser tests, with slices
deleted, repeated or cut off, lines swapped, numbers made huge, hostile snippets inserted: deep
nesting, odd unicode, entities, separators), and random text. The property: the parser returns a
``ParseResult`` (whatever it rejects is a reject row) or raises a ``Wh40kError``; never another
exception, and never longer than the deadline. Hypothesis runs derandomized (a fixed seed) with
``EXAMPLES`` mutated and ``RANDOM_EXAMPLES`` random inputs per parser.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.errors import Wh40kError
from pipeline.extractors import FOLDER_FILES, EXTRACTORS, ParseResult, get_extractor
from pipeline.extractors.bsdata_catalogue import read_xml
from schemas.records import Source
from tests.conftest import GOLDEN, seed_source
from tests.test_parser_bsdata_catalogue import catalogue, squad
from tests.test_parser_wahapedia_csv import FACTIONS, MODELS_HEADER, WARGEAR_HEADER, datasheets, ds, table
from tests.test_parser_wahapedia_html import _RIGHT, _snippet

#: Inputs tried per parser: mutated real inputs, and random text (the README's figures).
EXAMPLES = 120
RANDOM_EXAMPLES = 40

FUZZ = settings(
    max_examples=EXAMPLES, derandomize=True, database=None, deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)

GST_XML = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<gameSystem id="sys" name="Warhammer 40,000 10th Edition" '
    'revision="1" xmlns="http://www.battlescribe.net/schema/gameSystemSchema">\n<sharedRules>\n'
    '<rule id="r-lh" name="Lethal Hits"><description>Each time an attack is made with such a weapon, '
    'a Critical Hit automatically wounds the target.</description></rule>\n'
    '<rule id="r-sh" name="Sustained Hits"><description>Each Critical Hit scores [X] additional hits.'
    '</description></rule>\n</sharedRules>\n</gameSystem>\n'
)
GST_JSON = json.dumps({"gameSystem": {"id": "sys", "name": "Warhammer 40,000 11th Edition", "revision": 3,
                                      "sharedRules": [
                                          {"id": "r-lh", "name": "Lethal Hits",
                                           "description": "A Critical Hit automatically wounds the target."},
                                          {"id": "r-dw", "name": "Devastating Wounds",
                                           "description": {"$text": "A Critical Wound inflicts mortal wounds."}},
                                      ]}}, indent=1)
CATALOGUE = catalogue(squad())
EXPORT = {
    "Factions": FACTIONS,
    "Datasheets": datasheets(ds("000000001", "Battle Sisters Squad", "AS"), ds("000000002", "Captain")),
    "Datasheets_models": table(MODELS_HEADER, '000000001|1|Battle Sister|6"|3|3+|||1|7+|1|32mm||'),
    "Datasheets_wargear": table(WARGEAR_HEADER, '000000001|1|1||Boltgun||24"|Ranged|2|3+|4|0|1|',
                                '000000002|1|1||Plasma pistol - supercharge|[HAZARDOUS], [PISTOL]|12"|Ranged|1|2+|8|-3|D3|'),
}


def _seed(source_id: str) -> str:
    return seed_source(source_id)[0]


#: Real small inputs per format: a text, or for a folder format the files of the folder.
SEEDS: dict[str, str | dict[str, str]] = {
    "wahapedia-text-10e": _seed("wahapedia-10e-cp-sanctuary-guardians"),
    "wahapedia-rules-11e": _seed("wahapedia-11e-rules-astra-militarum"),
    "battlescribe-rule-descriptions": _seed("bsdata-10e-rule-descriptions"),
    "bsdata-gst-xml": GST_XML,
    "bsdata-gst-json": GST_JSON,
    "bsdata-cat-xml": CATALOGUE,
    "bsdata-cat-json": json.dumps(read_xml(CATALOGUE), indent=1),
    "bsdata-cat-set-xml": {"Test.cat": CATALOGUE, "Warhammer 40,000.gst": GST_XML},
    # the golden input's three files: a faction, its library and the game system (11th edition)
    "bsdata-cat-set-json": {p.name: p.read_text(encoding="utf-8")
                            for p in sorted((GOLDEN / "inputs" / "bsdata_cat_set_json_11e").glob("*.json"))},
    "wahapedia-html": _snippet("", _RIGHT),
    "wahapedia-csv": EXPORT,
    "gdc-core-rules": (GOLDEN / "inputs" / "gdc_core_rules_11e.json").read_text(encoding="utf-8"),
    "gdc-faqs": (GOLDEN / "inputs" / "gdc_faqs_11e.json").read_text(encoding="utf-8"),
    "gdc-json": (GOLDEN / "inputs" / "gdc_10e_combat_patrol.json").read_text(encoding="utf-8"),
    "gdc-json-folder": {"sororitas.json": (GOLDEN / "inputs" / "gdc_11e" / "sororitas.json").read_text(encoding="utf-8"),
                        "faqs.json": (GOLDEN / "inputs" / "gdc_11e" / "faqs.json").read_text(encoding="utf-8")},
}

#: Snippets that have broken parsers or could: deep nesting, numbers past int()'s 4,300 digits
#: and past 64 bits, odd unicode, entities, separators, markup of the formats, bad dice.
HOSTILE = [
    "9" * 5000, "9" * 19, "-" + "9" * 4400, "1e999", "NaN", "<a>" * 1000, "</a>" * 3, "[" * 1000, '{"a":' * 1000,
    "\x00", "\ufeff", "\u202e", "e\u0301", "\U0001F480", "\u2028", "\r", "\r\n", "\n" * 3000, "|" * 40, "||\n|",
    "&amp;", "&#1114112;", "&#x0;", "&nbsp;", "]]>", "<!--", "<![CDATA[x", '<!DOCTYPE x [<!ENTITY a "aaaa">]>&a;',
    '<!ENTITY e SYSTEM "file:///etc/passwd">&e;', "<td class=\"wTable2_short\"><td class=\"wTable2_short\">x</td></td>",
    '<tr><td><td class="wTable_WEAPON">RANGED WEAPONS</td></td></tr>', '<div class="dsOuterFrame">',
    "D0", "D1000000", "0D6", "99D99+99", "-", "N/A", "*", '"', "'", "\\", "\t", "\x85", "{}", "[]", "null",
    "RANGED WEAPONS", "KEYWORDS:", "| Book |", "01.02 ", "24.23", "Faction: ", "x" * 20000,
]


@st.composite
def mutated_text(draw, seed: str) -> str:
    """``seed`` with one to four mutations."""
    text = seed
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "repeat", "insert", "truncate", "swap lines", "huge number"]))
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 3000)))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "repeat":
            text = text[:j] + text[i:j] * draw(st.integers(1, 3)) + text[j:]
        elif kind == "insert":
            snippet = draw(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=40)))
            text = text[:i] + snippet + text[i:]
        elif kind == "truncate":
            text = text[:i]
        elif kind == "swap lines":
            lines = text.split("\n")
            a, b = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
        else:
            digits = draw(st.sampled_from(["9" * 19, "9" * 5000, "0" * 30 + "1"]))
            text = text[:i] + re.sub(r"\d+", digits, text[i:], count=1)
    return text


@st.composite
def mutated_files(draw, seed: dict[str, str]) -> dict[str, str]:
    """The files of a folder ``seed`` with one file mutated, dropped or added."""
    files = dict(seed)
    name = draw(st.sampled_from(sorted(files)))
    action = draw(st.sampled_from(["mutate", "mutate", "drop", "add"]))
    if action == "mutate":
        files[name] = draw(mutated_text(files[name]))
    elif action == "drop":
        del files[name]
    else:
        extra = draw(st.sampled_from(["Unknown", "Datasheets_abilities", "Stratagems", "Other.cat", "Bad.gst"]))
        files[extra] = draw(st.one_of(mutated_text(next(iter(seed.values()))), st.text(max_size=200)))
    return files


def source(fmt: str) -> Source:
    """A made-up manifest entry of format ``fmt`` (edition 10, as every seed)."""
    return Source(source_id="fuzz", title="fuzzed input", file="fuzz/" if fmt in FOLDER_FILES else "fuzz.txt",
                  format=fmt, publisher="fuzz", edition=10, kind="export", game_mode=None, version=None,
                  version_date=None, origin="made up by the fuzz test")


def parse_or_own_error(fmt: str, content: str | dict[str, str]) -> None:
    """The property: a ``ParseResult``, or a ``Wh40kError``; anything else fails the test."""
    try:
        result = get_extractor(fmt)(content, source(fmt))  # type: ignore[arg-type]
    except Wh40kError:
        return
    assert isinstance(result, ParseResult)


def test_every_registered_parser_has_a_seed():
    assert sorted(SEEDS) == sorted(EXTRACTORS)


@pytest.mark.parametrize("fmt", sorted(EXTRACTORS))
@FUZZ
@given(data=st.data())
def test_mutated_real_inputs_give_a_result_or_the_projects_error(fmt, data):
    seed = SEEDS[fmt]
    content = data.draw(mutated_files(seed) if isinstance(seed, dict) else mutated_text(seed))
    parse_or_own_error(fmt, content)


@pytest.mark.parametrize("fmt", sorted(EXTRACTORS))
@settings(FUZZ, max_examples=RANDOM_EXAMPLES)
@given(text=st.text(max_size=2000))
def test_random_text_gives_a_result_or_the_projects_error(fmt, text):
    if fmt in FOLDER_FILES:
        parse_or_own_error(fmt, {name: text for name in SEEDS[fmt]})  # type: ignore[union-attr]
    else:
        parse_or_own_error(fmt, text)
