"""Game Datacards rules documents and errata (issue 11): the extractor on the golden inputs, the
derivation of earlier wordings, and the real files (skipped without ../shared/corpus)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from pipeline import errata
from pipeline.extract import read_snapshot
from pipeline.extractors import get_extractor
from pipeline.extractors.gdc_rules import change_form
from pipeline.manifest import read_manifest
from schemas.records import Erratum, ErratumTarget, Keyword, Datasheet, RuleText
from tests.conftest import CORPUS, GOLDEN

INPUTS = GOLDEN / "inputs"


def _parsed(source_id: str):
    source = next(s for s in read_manifest(INPUTS) if s.source_id == source_id)
    snapshot = read_snapshot(INPUTS, source)
    return source, get_extractor(source.format)(snapshot.text, source)  # type: ignore[arg-type]


def test_core_rule_and_erratum_give_the_wording_before_it():
    core_source, core = _parsed("gdc_core_rules_11e")
    faq_source, faqs = _parsed("gdc_faqs_11e")
    out, derived = errata.derive(core.records + faqs.records,
                                 {core_source.source_id: core_source, faq_source.source_id: faq_source})
    before = [r for r in derived if r.locator.endswith(": before")]
    assert [(r.rule_key, r.language, r.section) for r in before] == [("hazard-rolls", "en", "06.03")]
    assert before[0].text.endswith('- Within 6" of it.\n\n06.03.01 - Hazardous Test\n'
                                   "The term 'Hazardous test' is the same as hazard roll.")
    assert before[0].effective_date is None and before[0].erratum_id == "e1"
    in_force = [r for r in derived if r.locator.endswith(": in force")]
    assert [r.effective_date.isoformat() for r in in_force] == ["2026-01-02"]
    status = {(r.erratum_id, r.language): (r.derivation, r.derivation_note) for r in out if isinstance(r, Erratum)}
    assert status[("e1", "en")] == ("derived", None)
    # the German text reads "Ändere 6" in 9"": no form the parser knows, so the English one holds
    assert status[("e1", "de")] == ("derived", None)
    assert status[("e3", "en")] == ("text-only", "no 11th-edition stratagem named 'Armour of Contempt' is stored")
    assert status[("e4", "en")] == ("text-only", "no target to derive from")
    assert status[("q1", "en")] == ("faq", None)


def test_keyword_erratum_is_undone_on_each_datasheet():
    faq_source, faqs = _parsed("gdc_faqs_11e")
    sheet_source = faq_source.model_copy(update={"source_id": "sheets", "kind": "export"})
    rows = [Datasheet(source_id="sheets", locator="l", datasheet_id="11e/x/gladiator-lancer", faction_id="x",
                      name="Gladiator Lancer", edition=11, game_mode=None, role=None, legend=None,
                      starting_strength=1)] + [
        Keyword(source_id="sheets", locator="l", datasheet_id="11e/x/gladiator-lancer", keyword=k,
                is_faction_keyword=False) for k in ("VEHICLE", "FRAME", "SMOKE")]
    out, derived = errata.derive(faqs.records + rows, {"gdc_faqs_11e": faq_source, "sheets": sheet_source})
    assert [(r.rule_key, r.text) for r in derived] == [
        ("gladiator-lancer-keywords", "VEHICLE, SMOKE"), ("gladiator-lancer-keywords", "VEHICLE, FRAME, SMOKE")]


@pytest.mark.parametrize("text, form", [
    ('Change 9" to 8".', ("replace", '9"', '8"')),
    ("Change Strength to ‘9’.", ("replace", "Strength", "9")),
    ("Remove 'Hover'.", ("remove", "Hover", None)),
    ("Add the following to the first sentence: '(excluding attacks made with [BLAST] weapons)'.",
     ("add", None, "(excluding attacks made with [BLAST] weapons)")),
    ("Change to ‘2CP’.", ("change-to", None, "‘2CP’.")),
    ("The Tank Shock Stratagem is the same as the Crushing Impact stratagem.", (None, None, None)),
])
def test_change_forms(text, form):
    assert change_form(text) == form


needs_corpus = pytest.mark.skipif(not CORPUS.exists(), reason="the shared corpus is not beside the checkout")


def _real(file: str, fmt: str):
    from schemas.records import Source
    import datetime as dt

    source = Source(source_id="real", title="t", file=file, format=fmt, publisher="Game Datacards", edition=11,
                    kind="errata" if fmt == "gdc-faqs" else "core-rules", game_mode=None, version=None,
                    version_date=dt.date(2026, 7, 23), origin="corpus")
    return source, get_extractor(fmt)((CORPUS / "gdc-11e" / file).read_text(encoding="utf-8"), source)


@needs_corpus
def test_real_core_rules_every_section_in_eight_languages():
    _, result = _real("core/core_rules.json", "gdc-core-rules")
    rules = [r for r in result.records if isinstance(r, RuleText)]
    assert not result.rejects
    by_lang = Counter(r.language for r in rules)
    assert set(by_lang) == {"en", "de", "es", "fr", "it", "ja", "ko", "zh"}
    chapters = {r.section[:2] for r in rules if r.section and r.language == "en"}
    assert chapters == {f"{n:02d}" for n in range(1, 26)}
    lethal = {r.language: r for r in rules if r.section == "24.23"}
    assert lethal["de"].title == "[TÖDLICHE TREFFER]"
    assert lethal["de"].text.startswith("Jedes Mal, wenn eine Attacke mit einer Waffe mit [TÖDLICHE TREFFER] "
                                        "einen kritischen Treffer erzielt, kannst du entscheiden")
    assert lethal["en"].rule_key == lethal["ja"].rule_key == "lethal-hits"
    # the ten core Stratagems of section 15 name a stratagem id only: data gaps, not texts
    assert sum(1 for r in result.records if type(r).__name__ == "DataGap") == 10


@needs_corpus
def test_real_faqs_837_entries():
    _, result = _real("faqs.json", "gdc-faqs")
    english = [r for r in result.records if isinstance(r, Erratum) and r.language == "en"]
    assert len(english) == 837 and not result.rejects
    assert Counter(r.kind for r in english) == {"erratum": 663, "faq": 174}
    with_targets = {t.erratum_id for t in result.records if isinstance(t, ErratumTarget)}
    assert sum(1 for r in english if r.kind == "erratum" and r.erratum_id in with_targets) == 646
    assert Counter(r.change for r in english if r.kind == "erratum") == {
        "change-to": 378, None: 152, "replace": 78, "add": 38, "remove-add": 14, "remove": 3}


@needs_corpus
def test_every_section_number_of_the_alias_table_is_the_section_of_its_rule():
    """Item 6: every 11th-edition section number in rule_aliases.toml names the rule the whole
    core rules number so, and every alias reaches a rule that exists in the core rules."""
    from pipeline.aliases import _table

    _, result = _real("core/core_rules.json", "gdc-core-rules")
    by_section = {r.section: r.rule_key for r in result.records if isinstance(r, RuleText) and r.section}
    keys = {r.rule_key for r in result.records if isinstance(r, RuleText)}
    # the core Stratagems are numbered but give no wording (data gaps): their numbers exist too
    gaps = {r.locator.split(" / ")[1].split(" ", 1)[0]: r.entity_key for r in result.records
            if type(r).__name__ == "DataGap"}
    table = _table(errata_aliases_file())
    wrong = {alias: (key, by_section.get(alias)) for alias, key in table.aliases.items()
             if alias[:1].isdigit() and by_section.get(alias) not in (key, None) and alias in by_section}
    missing_section = sorted(alias for alias in table.aliases
                             if alias[:1].isdigit() and alias not in by_section and alias not in gaps)
    assert wrong == {"06.03.01": ("hazard-rolls", "hazardous-test"), "01.07.02": ("battle-shock-rolls", "battle-shock-test")}
    assert missing_section == []
    # aliases whose target is no rule of the whole core rules (10th-edition-only names are fine
    # when the canonical key is an 11th-edition rule): listed, so a rename shows up here
    no_target = sorted({key for key in table.aliases.values() if key not in keys})
    # two core Stratagems: numbered in section 15 (15.04, 15.08) but worded nowhere in the file
    assert no_target == ["fire-overwatch", "insane-bravery"]
    assert (gaps["15.04"].split(" / ")[1], gaps["15.08"].split(" / ")[1]) == ("15.04 Insane Bravery", "15.08 Fire Overwatch")
    from pipeline.aliases import rule_key_from_name

    assert {alias: key for alias, key in table.aliases.items() if alias in gaps} == {
        alias: rule_key_from_name(gaps[alias].split(" / ")[1].split(" ", 1)[1]) for alias in table.aliases if alias in gaps}


def errata_aliases_file():
    from pipeline.aliases import ALIASES_FILE

    return ALIASES_FILE


def _erratum(position: int, text: str, heading: str, publication: str, *names: str) -> list:
    from pipeline.extractors.gdc_rules import change_form
    from pipeline.normalise.text import slug
    eid = f"e{position}"
    return [Erratum(source_id="faqs", locator=f"entry {position}", erratum_id=eid, language="en", kind="erratum",
                    edition=11, publication_id=None, publication=publication, heading=heading, text=text,
                    position=position, change=change_form(text)[0])] + [
        ErratumTarget(source_id="faqs", locator=f"entry {position}", erratum_id=eid, position=i,
                      target_type="datasheet", target_id=None, target_name=n, target_key=slug(n))
        for i, n in enumerate(names)]


def _sheet(datasheet_id: str, name: str, keywords=(), core=()) -> list:
    from schemas.records import Ability
    common = dict(source_id="sheets", locator="l", datasheet_id=datasheet_id)
    return [Datasheet(faction_id="x", name=name, edition=11, game_mode=None, role=None, legend=None,
                      starting_strength=1, **common)] + [
        Keyword(keyword=k, is_faction_keyword=False, **common) for k in keywords] + [
        Ability(kind="core", name=c, parameter=None, text=None, **common) for c in core]


def _sources():
    from schemas.records import Source
    import datetime as dt
    base = dict(format="gdc-faqs", publisher="p", edition=11, game_mode=None, version=None, origin="o",
                title="t", file="f.json")
    return {"faqs": Source(source_id="faqs", kind="errata", version_date=dt.date(2026, 7, 23), **base),
            "sheets": Source(source_id="sheets", kind="export", version_date=dt.date(2026, 6, 1), **base)}


def test_two_errata_on_one_keyword_list_chain_from_the_original():
    """Codex Supplement: Black Templars, errata 1 and 9: "Add 'FRAME'." and "Add 'LAND RAIDER'."
    on the Land Raider Crusader: the original has neither, the one in force both."""
    rows = (_sheet("11e/x/lrc", "Land Raider Crusader", ("VEHICLE", "LAND RAIDER", "FRAME"))
            + _erratum(1, "Add 'FRAME'.", "Land Raider Crusader – Keywords section", "Codex Supplement: BT",
                       "Land Raider Crusader")
            + _erratum(9, "Add 'LAND RAIDER'.", "Land Raider Crusader – Keywords section", "Codex Supplement: BT",
                       "Land Raider Crusader"))
    out, derived = errata.derive(rows, _sources())
    assert [(r.text, r.erratum_id, r.locator.rsplit(": ", 1)[1], r.effective_date) for r in derived] == [
        ("VEHICLE", "e1", "before", None),
        ("VEHICLE, FRAME", "e1", "after", None),
        ("VEHICLE, LAND RAIDER, FRAME", "e9", "in force", _sources()["faqs"].version_date)]
    assert {r.erratum_id: r.derivation for r in out if isinstance(r, Erratum)} == {"e1": "derived", "e9": "derived"}


def test_leader_to_support_is_undone_or_applied_forward_on_the_core_abilities():
    """"Remove 'Leader', add 'Support'." in a Core Abilities section: a faction file that carries
    it (Support) gives Leader before it; one that predates it (still Leader) gives Support in force."""
    rows = (_sheet("11e/x/castellan", "Castellan", core=("Deep Strike", "Support"))
            + _sheet("11e/x/priest", "Ministorum Priest", core=("Leader",))
            + _erratum(6, "Remove 'Leader', add 'Support'.", "Castellan – Core Abilities section", "Codex: X",
                       "Castellan")
            + _erratum(387, "Remove 'Leader', add 'Support'.", "Ministorum Priest, Core Abilities section",
                       "Codex: Y", "Ministorum Priest"))
    out, derived = errata.derive(rows, _sources())
    assert [(r.rule_key, r.title, r.text, r.locator.rsplit(": ", 1)[1]) for r in derived] == [
        ("castellan-core-abilities", "Castellan: core abilities", "Deep Strike, Leader", "before"),
        ("castellan-core-abilities", "Castellan: core abilities", "Deep Strike, Support", "in force"),
        ("ministorum-priest-core-abilities", "Ministorum Priest: core abilities", "Leader", "before"),
        ("ministorum-priest-core-abilities", "Ministorum Priest: core abilities", "Support", "in force")]
    notes = {r.erratum_id: r.derivation_note for r in out if isinstance(r, Erratum)}
    assert notes["e6"] is None
    assert notes["e387"] == ("Ministorum Priest: core abilities: the source predates the erratum; "
                             "the wording in force is derived by applying it")


def test_one_change_printed_by_two_publications_counts_once():
    """"Add 'FRAME'." printed by a Codex and its Supplement on the same datasheet is one change."""
    rows = (_sheet("11e/x/rhino", "Rhino", ("VEHICLE", "FRAME"))
            + _erratum(1, "Add 'FRAME'.", "Rhino – Keywords section", "Codex Supplement: Z", "Rhino")
            + _erratum(552, "Add 'FRAME'.", "Rhino – Keywords section", "Codex: Space Marines", "Rhino"))
    out, derived = errata.derive(rows, _sources())
    assert [r.text for r in derived] == ["VEHICLE", "VEHICLE, FRAME"]
    notes = {r.erratum_id: (r.derivation, r.derivation_note) for r in out if isinstance(r, Erratum)}
    assert notes["e1"] == ("derived", "the same change is also printed by erratum 552 (Codex: Space Marines)")
    assert notes["e552"] == ("derived", "Rhino keywords: the same change as erratum 1 (Codex Supplement: Z), "
                                        "whose wordings it shares")


def test_a_characteristic_set_by_an_erratum_is_text_only_with_its_reason():
    rows = _sheet("11e/x/exocrine", "Exocrine") + _erratum(
        3, "Change S to '9'.", "Exocrine, Ranged Weapons, bio-plasmic cannon", "Codex: Tyranids", "Exocrine")
    out, derived = errata.derive(rows, _sources())
    assert derived == []
    assert [(r.derivation, r.derivation_note) for r in out if isinstance(r, Erratum)] == [
        ("text-only", "sets a characteristic (S to '9'): the value before is in no source")]
