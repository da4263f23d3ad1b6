"""BattleScribe catalogues -> datasheets: links, invulnerable saves, multi-profile weapons, counts,
the two readers, two real units and exact counts over the corpus (the golden file of this format
is of a made-up catalogue: ``tests/golden/inputs/bsdata_cat_set_rosters_10e``)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from pipeline.fetch import read_folder_files
from pipeline.manifest import read_manifest
from pipeline.extractors.bsdata_catalogue import parse_cat_json, parse_cat_xml, parse_catalogue_set, read_xml
from schemas.records import (
    Ability, DataFlag, DataGap, Datasheet, Keyword, ModelProfile, Source, UnitComposition, WargearLoadout, WeaponAbility,
    WeaponProfile,
)
from tests.conftest import CORPUS, RAW, records_as_json

NS = 'xmlns="http://www.battlescribe.net/schema/catalogueSchema"'


def source(name: str = "Test.cat", edition: int = 10) -> Source:
    return Source(source_id=f"t-{name}", title=name, file=f"bsdata-10e/{name}", format="bsdata-cat-xml",
                  publisher="BSData", edition=edition, kind="export", game_mode=None, version=None,
                  version_date=None, origin="test")


def chars(**values: str) -> str:
    return "".join(f'<characteristic name="{k}">{v}</characteristic>' for k, v in values.items())


UNIT = chars(M='6"', T="3", SV="3+", W="1", LD="6+", OC="2")
SHARED = f"""
<sharedProfiles>
  <profile id="p-unit" name="Battle Sister" typeName="Unit"><characteristics>{UNIT}</characteristics></profile>
</sharedProfiles>
<sharedRules><rule id="r-aof" name="Acts of Faith"><description>Gain Miracle dice.</description></rule></sharedRules>
<sharedSelectionEntries>
  <selectionEntry type="upgrade" id="w-pp" name="Plasma pistol">
    <profiles>
      <profile id="pp1" name="➤ Plasma pistol - standard" typeName="Ranged Weapons"><characteristics>
        {chars(Range='12"', A="1", BS="3+", S="7", AP="-2", D="1", Keywords="Pistol")}</characteristics></profile>
      <profile id="pp2" name="➤ Plasma pistol - supercharge" typeName="Ranged Weapons"><characteristics>
        {chars(Range='12"', A="1", BS="3+", S="8", AP="-3", D="2", Keywords="Hazardous, Pistol")}</characteristics></profile>
    </profiles>
    <infoLinks><infoLink id="l-haz" name="Hazardous" type="rule" targetId="r-haz-in-gst"/></infoLinks>
  </selectionEntry>
</sharedSelectionEntries>"""


def catalogue(unit: str, shared: str = SHARED) -> str:
    return f'<?xml version="1.0"?><catalogue {NS} id="cat" name="Test"><selectionEntries>{unit}</selectionEntries>{shared}</catalogue>'


def squad(extra_profiles: str = "", extra_links: str = "") -> str:
    return f"""
<selectionEntry type="unit" id="u-bss" name="Battle Sisters Squad">
  <categoryLinks>
    <categoryLink id="c1" name="Infantry" targetId="x1"/>
    <categoryLink id="c2" name="Faction: Adepta Sororitas" targetId="x2"/>
    <categoryLink id="c3" name="Imperium" targetId="x3"/>
  </categoryLinks>
  <selectionEntries>
    <selectionEntry type="model" id="m-sup" name="Sister Superior">
      <constraints><constraint type="min" value="1" field="selections" scope="parent"/>
                   <constraint type="max" value="1" field="selections" scope="parent"/></constraints>
      <infoLinks><infoLink id="il1" name="Battle Sister" type="profile" targetId="p-unit"/></infoLinks>
      <entryLinks><entryLink id="el1" name="Plasma pistol" type="selectionEntry" targetId="w-pp"/></entryLinks>
    </selectionEntry>
  </selectionEntries>
  <selectionEntryGroups>
    <selectionEntryGroup id="g-bs" name="Battle Sisters">
      <constraints><constraint type="min" value="9" field="selections" scope="parent"/>
                   <constraint type="max" value="9" field="selections" scope="parent"/></constraints>
      <selectionEntries>
        <selectionEntry type="model" id="m-bs" name="Battle Sister">
          <infoLinks><infoLink id="il2" name="Battle Sister" type="profile" targetId="p-unit"/></infoLinks>
          <entryLinks><entryLink id="el2" name="Plasma pistol" type="selectionEntry" targetId="w-pp"/></entryLinks>
        </selectionEntry>
      </selectionEntries>
    </selectionEntryGroup>
  </selectionEntryGroups>
  <profiles>{extra_profiles}</profiles>
  <infoLinks>
    <infoLink id="l-aof" name="Acts of Faith" type="rule" targetId="r-aof"/>
    <infoLink id="l-ds" name="Deep Strike" type="rule" targetId="r-ds-in-gst"/>
    {extra_links}
  </infoLinks>
</selectionEntry>"""


def of(result, kind):
    return [r for r in result.records if isinstance(r, kind)]


def invuln(description: str, name: str = "Invulnerable Save") -> str:
    return (f'<profile id="inv" name="{name}" typeName="Abilities"><characteristics>'
            f'<characteristic name="Description">{description}</characteristic></characteristics></profile>')


def test_a_unit_with_its_datasheet_id_faction_keywords_and_model_line():
    result = parse_cat_xml(catalogue(squad()), source())
    (sheet,) = of(result, Datasheet)
    assert (sheet.datasheet_id, sheet.name, sheet.faction_id, sheet.external_id) == (
        "10e/adepta-sororitas/battle-sisters-squad", "Battle Sisters Squad", "adepta-sororitas", "u-bss")
    assert sheet.locator == "Test.cat selectionEntry[@id='u-bss']"
    assert sheet.starting_strength == 10  # 1 Sister Superior + the group of 9
    assert {(k.keyword, k.is_faction_keyword) for k in of(result, Keyword)} == {
        ("ADEPTA SORORITAS", True), ("INFANTRY", False), ("IMPERIUM", False)}
    (model,) = of(result, ModelProfile)  # one profile linked from two model entries: one line
    assert (model.line, model.model_name, model.move_inches, model.toughness, model.save, model.wounds,
            model.leadership, model.objective_control, model.invulnerable_save) == (
        1, "Battle Sister", 6, 3, 3, 1, 6, 2, None)
    assert model.locator == "Test.cat profile[@id='p-unit']"


def test_links_resolve_in_the_file_and_unresolved_ones_are_gaps_never_guesses():
    result = parse_cat_xml(catalogue(squad(extra_links='<infoLink id="l-x" name="Lost" type="profile" targetId="nowhere"/>')), source())
    abilities = {(a.kind, a.name): a for a in of(result, Ability)}
    assert abilities[("faction", "Acts of Faith")].text is None  # a rule of the catalogue: named, text elsewhere
    # Deep Strike is a rule of the game system, not in this file: named as the link names it, kind unknown
    assert abilities[("other", "Deep Strike")].locator == "Test.cat infoLink[@id='l-ds']"
    gaps = {(g.table_name, g.entity_key, g.field) for g in of(result, DataGap)}
    assert ("abilities", "10e/adepta-sororitas/battle-sisters-squad|other|Deep Strike", "kind") in gaps
    assert ("datasheets", "10e/adepta-sororitas/battle-sisters-squad|nowhere", "profile") in gaps
    # the weapon's rule link (Hazardous) is read as a weapon ability, not as a datasheet ability
    assert ("other", "Hazardous") not in abilities and ("core", "Hazardous") not in abilities


def test_with_the_game_system_in_the_set_core_rules_resolve():
    gst = (f'<gameSystem {NS} id="sys" name="Warhammer 40,000 10th Edition"><sharedRules>'
           '<rule id="r-ds-in-gst" name="Deep Strike"><description>Set up in reserve.</description></rule>'
           '</sharedRules><categoryEntries><categoryEntry id="f" name="Faction: Adepta Sororitas"/></categoryEntries></gameSystem>')
    result = parse_catalogue_set({"Test.cat": catalogue(squad()), "W.gst": gst},
                                 {"Test.cat": source(), "W.gst": source("W.gst")})
    names = {(a.kind, a.name) for a in of(result, Ability)}
    assert ("core", "Deep Strike") in names and ("other", "Deep Strike") not in names
    assert not [g for g in of(result, DataGap) if g.field == "kind"]


def test_a_multi_profile_weapon_is_one_weapon_with_two_profiles_and_its_abilities():
    result = parse_cat_xml(catalogue(squad()), source())
    profiles = sorted(of(result, WeaponProfile), key=lambda p: p.profile_name)
    assert [(p.weapon_name, p.profile_name, p.strength, p.armour_penetration, p.damage.text, p.skill) for p in profiles] == [
        ("Plasma pistol", "standard", 7, -2, "1", 3), ("Plasma pistol", "supercharge", 8, -3, "2", 3)]
    assert result.duplicates == Counter()  # the weapon linked twice is read once (same profile ids)
    assert sorted((a.profile_name, a.name) for a in of(result, WeaponAbility)) == [
        ("standard", "PISTOL"), ("supercharge", "HAZARDOUS"), ("supercharge", "PISTOL")]


@pytest.mark.parametrize(("profile", "expected"), [
    (invuln("This model has an invulnerable save of 6+"), (6, None)),
    (invuln("Models in this unit have a 4+ invulnerable save."), (4, None)),
    (invuln("This model has a 5+ invulnerable save against ranged attacks only."), (5, "ranged")),
    (invuln("4+"), (4, None)),
    (invuln("This model has a 5+ invulnerable save against ranged attacks.", "Invulnerable Save (5+*)"), (5, "ranged")),
    (invuln("", "Invulnerable Save (4+)"), (4, None)),
    (invuln("While this model is leading a unit, models in that unit have a 4+ invulnerable save."), (None, None)),
])
def test_invulnerable_save_from_an_abilities_profile(profile, expected):
    result = parse_cat_xml(catalogue(squad(extra_profiles=profile)), source())
    (model,) = of(result, ModelProfile)
    assert (model.invulnerable_save, model.invulnerable_save_scope) == expected
    if expected == (None, None):
        assert [f.flag for f in of(result, DataFlag)] == ["invulnerable_save_conditional"]


@pytest.mark.parametrize(("insv", "profile", "expected", "flags"), [
    ("", "", (None, None), []),
    ("", invuln("4+"), (4, None), []),  # a line that prints none takes the unit's ability
    ("5+", invuln("4+"), (5, None), []),  # the line's own is used
    ("5+ (Ranged)", "", (5, "ranged"), [("invulnerable_save_note", "Ranged")]),
    ("4+*", invuln("This model has a 4+ invulnerable save against melee attacks.", "Invulnerable Save (4+*)"),
     (4, "melee"), [("invulnerable_save_note", "This model has a 4+ invulnerable save against melee attacks.")]),
])
def test_invulnerable_save_printed_on_the_model_line_insv(insv, profile, expected, flags):
    # the 11th-edition catalogues print it on the Unit profile (InSv), a starred one's note in
    # the unit's Invulnerable Save ability: the line is read with both by the shared assembly
    shared = SHARED.replace(UNIT, UNIT + chars(InSv=insv))
    result = parse_cat_xml(catalogue(squad(extra_profiles=profile), shared), source())
    (model,) = of(result, ModelProfile)
    assert (model.invulnerable_save, model.invulnerable_save_scope) == expected
    assert [(f.flag, f.detail) for f in of(result, DataFlag)] == flags


def test_invulnerable_save_from_a_link_to_the_game_system_is_read_from_the_link_name_and_flagged():
    link = '<infoLink id="l-inv" name="Invulnerable Save (4+)" type="profile" targetId="gst-inv"/>'
    result = parse_cat_xml(catalogue(squad(extra_links=link)), source())
    (model,) = of(result, ModelProfile)
    assert model.invulnerable_save == 4
    assert "invulnerable_save_from_link_name" in {f.flag for f in of(result, DataFlag)}


def test_composition_counts_from_constraints_and_a_group_left_to_the_player():
    result = parse_cat_xml(catalogue(squad()), source())
    rows = [(c.line, c.model_name, c.min_models, c.max_models, c.text) for c in of(result, UnitComposition)]
    assert rows == [(1, "Sister Superior", 1, 1, "1 Sister Superior"), (2, "Battle Sisters", 9, 9, "9 Battle Sisters")]
    assert of(result, Datasheet)[0].starting_strength == 10
    # the group of 9 names no default and its entry no minimum: which 9 models is the player's choice
    gaps = [(g.table_name, g.entity_key, g.reason) for g in of(result, DataGap) if g.field == "default selection"]
    assert gaps == [("unit_composition", "10e/adepta-sororitas/battle-sisters-squad|g-bs",
                     "group 'Battle Sisters' asks for 9 selection(s), its entries' minimums give 0 and it names no "
                     "default: the choice is the player's")]
    # so the default loadout is the Sister Superior's alone (her plasma pistol has no minimum either)
    assert [(w.models, w.model_count, w.equipment) for w in of(result, WargearLoadout)] == []


def test_a_unit_without_faction_is_rejected_and_a_bad_value_rejects_the_profile_only():
    no_faction = squad().replace('name="Faction: Adepta Sororitas"', 'name="Battleline"')
    result = parse_cat_xml(catalogue(no_faction), source())
    assert [r.reason for r in result.rejects] == ["unit entry without a 'Faction: X' category: no faction to file it under"]
    bad = SHARED.replace('AP">-2<', 'AP">-<')
    result = parse_cat_xml(catalogue(squad(), bad), source())
    (reject,) = result.rejects
    assert reject.table_name == "weapon_profiles" and "not an Armour Penetration value: '-'" in reject.reason
    assert reject.reason == "not an Armour Penetration value: '-' (expected e.g. -1 or 0)"
    assert reject.locator == "Test.cat profile[@id='pp1'] (unit 10e/adepta-sororitas/battle-sisters-squad)"
    assert len(of(result, WeaponProfile)) == 1 and len(of(result, Datasheet)) == 1


def test_not_a_catalogue_is_one_reject():
    result = parse_cat_xml("<catalogue", source())
    assert len(result.rejects) == 1 and result.rejects[0].reason.startswith("not a readable catalogue")


def test_the_json_reader_gives_the_same_records_as_the_xml_reader():
    tree = read_xml(catalogue(squad(extra_profiles=invuln("This model has a 4+ invulnerable save."))))
    xml = parse_cat_xml(catalogue(squad(extra_profiles=invuln("This model has a 4+ invulnerable save."))), source())
    from_json = parse_cat_json(json.dumps(tree), source())
    assert records_as_json(from_json.records) == records_as_json(xml.records)


# ---- real data -------------------------------------------------------------------------------

needs_corpus = pytest.mark.skipif(not CORPUS.exists(), reason="the shared corpus is not beside the checkout")
BSDATA = CORPUS / "bsdata-10e"
#: The build's folder source of the catalogues and the file names it lists.
SET_SOURCE = next(s for s in read_manifest(RAW) if s.source_id == "bsdata-10e-catalogues")
FILES = read_folder_files(RAW)["bsdata-10e-catalogues"]


@needs_corpus
def test_battle_sisters_squad_and_canoness_of_the_real_catalogue():
    sources = dict.fromkeys(FILES, SET_SOURCE)
    names = ["Imperium - Adepta Sororitas.cat", "Warhammer 40,000.gst"]
    files = {n: (BSDATA / n).read_text(encoding="utf-8") for n in names}
    result = parse_catalogue_set(files, sources, emit=[names[0]])
    wanted = {"10e/adepta-sororitas/battle-sisters-squad", "10e/adepta-sororitas/canoness"}
    rows = [r for r in records_as_json(result.records)
            if r.get("datasheet_id") in wanted or r.get("entity_key", "").split("|")[0] in wanted]
    assert len({r["datasheet_id"] for r in rows if r["table"] == "datasheets"}) == 2
    canoness = [r for r in rows if r["table"] == "model_profiles" and r["datasheet_id"].endswith("canoness")]
    assert [(r["toughness"], r["save"], r["invulnerable_save"], r["wounds"], r["leadership"]) for r in canoness] == [(3, 3, 4, 4, 7)]


#: Per catalogue, as the build parses it (one file): datasheets, model profiles, weapon profiles,
#: rejects by reason.
CORPUS_COUNTS = {
    "Imperium - Adepta Sororitas.cat": (41, 50, 284, {"duplicate_key_conflict": 6}),
    # the Sisters of Battle Squad's two boltgun entries: one links the rule Ignores Cover, the other not
    "Imperium - Agents of the Imperium.cat": (43, 59, 349, {"duplicate_key_conflict": 17, "no faction": 6,
                                                            "duplicate_profile_conflict": 4}),
    "Imperium - Astra Militarum - Library.cat": (136, 147, 955, {}),
    "Imperium - Astra Militarum.cat": (0, 0, 0, {}),
    "Imperium - Imperial Knights - Library.cat": (22, 23, 152, {}),
    "Imperium - Space Marines.cat": (128, 166, 949, {"duplicate_profile_conflict": 2}),
    "Library - Astartes Heresy Legends.cat": (10, 10, 41, {}),
    "Library - Titans.cat": (0, 0, 0, {}),
    "Library - Tyranids.cat": (19, 20, 128, {"not an Armour Penetration value": 1}),
    "Tyranids.cat": (44, 48, 98, {}),
    "Unaligned Forces.cat": (22, 22, 60, {}),
}


def _reason(reason: str) -> str:
    for code in ("duplicate_key_conflict", "duplicate_profile_conflict", "not an Armour Penetration value"):
        if code in reason:
            return code
    return "no faction" if "Faction: X" in reason else reason


@needs_corpus
def test_every_catalogue_of_the_corpus_exact_counts():
    assert {n for n in FILES if n.endswith(".cat")} == set(CORPUS_COUNTS)
    for name, (sheets, models, weapons, rejects) in CORPUS_COUNTS.items():
        result = parse_cat_xml((BSDATA / name).read_text(encoding="utf-8"), SET_SOURCE.model_copy(update={"file": f"bsdata-10e/{name}"}))
        kinds = Counter(type(r).__name__ for r in result.records)
        got = (kinds["Datasheet"], kinds["ModelProfile"], kinds["WeaponProfile"], dict(Counter(_reason(r.reason) for r in result.rejects)))
        assert got == (sheets, models, weapons, rejects), name


def _two_profiles(profile: str) -> str:
    """The squad with a Sister Superior profile of her own (Ld 5+) and ``profile`` on the unit."""
    superior = chars(M='6"', T="3", SV="3+", W="1", LD="5+", OC="2")
    shared = SHARED.replace("</sharedProfiles>", f'<profile id="p-sup" name="Sister Superior" typeName="Unit">'
                                                 f"<characteristics>{superior}</characteristics></profile></sharedProfiles>")
    unit = squad(extra_profiles=profile).replace(
        '<infoLink id="il1" name="Battle Sister" type="profile" targetId="p-unit"/>',
        '<infoLink id="il1" name="Sister Superior" type="profile" targetId="p-sup"/>')
    return catalogue(unit, shared)


@pytest.mark.parametrize(("profile", "superior", "sisters"), [
    # the model named in the ability's name, or as the subject of its text, has it; the others not
    (invuln("", "Invulnerable Save (4+) [Sister Superior]"), 4, None),
    (invuln("The Sister Superior has a 5+ invulnerable save."), 5, None),
    (invuln("Models in this unit have a 6+ invulnerable save."), 6, 6),
])
def test_an_invulnerable_save_named_for_one_model_applies_to_that_model_line_only(profile, superior, sisters):
    result = parse_cat_xml(_two_profiles(profile), source())
    saves = {m.model_name: m.invulnerable_save for m in of(result, ModelProfile)}
    assert saves == {"Sister Superior": superior, "Battle Sister": sisters}


def test_weapon_abilities_from_the_keyword_cell_and_the_linked_rules_are_reconciled():
    # The plasma pistol entry links the rule Hazardous: its supercharge profile's cell has it, so
    # the standard profile does not get it; a link no profile's cell has goes to every profile.
    link = '<infoLink id="l-lh" name="Lethal Hits" type="rule" targetId="r-lh-in-gst"/>'
    shared = SHARED.replace('<infoLinks><infoLink id="l-haz"', f'<infoLinks>{link}<infoLink id="l-haz"')
    result = parse_cat_xml(catalogue(squad(), shared), source())
    got = sorted((a.profile_name, a.position, a.name) for a in of(result, WeaponAbility))
    assert got == [("standard", 1, "PISTOL"), ("standard", 2, "LETHAL HITS"),
                   ("supercharge", 1, "HAZARDOUS"), ("supercharge", 2, "PISTOL"), ("supercharge", 3, "LETHAL HITS")]
    flags = sorted((f.entity_key, f.flag) for f in of(result, DataFlag) if f.flag == "ability_from_link_only")
    assert flags == [("10e/adepta-sororitas/battle-sisters-squad|Plasma pistol|ranged|standard", "ability_from_link_only"),
                     ("10e/adepta-sororitas/battle-sisters-squad|Plasma pistol|ranged|supercharge", "ability_from_link_only")]


def test_a_threshold_only_the_linked_rule_s_name_carries_is_taken_with_a_flag():
    cell = '{chars(Range=\'12"\', A="1", BS="3+", S="7", AP="-2", D="1", Keywords="Pistol")}'
    shared = SHARED.replace('Keywords="Pistol")', 'Keywords="Pistol, Anti-infantry")', 1)
    shared = shared.replace('Keywords">Pistol<', 'Keywords">Pistol, Anti-infantry<', 1)
    shared = shared.replace('<infoLinks><infoLink id="l-haz"',
                            '<infoLinks><infoLink id="l-anti" name="Anti-Infantry 4+" type="rule" targetId="r-a"/><infoLink id="l-haz"')
    result = parse_cat_xml(catalogue(squad(), shared), source())
    anti = [a for a in of(result, WeaponAbility) if a.name == "ANTI"]
    assert {(a.profile_name, a.target_keyword, a.threshold) for a in anti} == {("standard", "INFANTRY", 4)}
    assert [f.flag for f in of(result, DataFlag) if f.flag in ("value_from_linked_rule", "anti_missing_threshold")] == [
        "value_from_linked_rule"]
