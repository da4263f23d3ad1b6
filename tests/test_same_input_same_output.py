"""Same input, same output: one printed weapon or model line through every extractor that can
carry it gives the same stored values, flags, data gaps and rejects.

Each case below is a printed weapon profile or model line, as data. For each extractor that can
carry it, the smallest input of that extractor's real shape is built around it (an export table
row, a saved datasheet page, a page-text weapon table, a BattleScribe catalogue in XML and in
JSON) and parsed with the registered parser. Compared, across extractors:

- the ``WeaponProfile`` / ``WeaponAbility`` (weapon cases) or ``ModelProfile`` (model cases)
  content, without ``source_id``, ``locator`` and ``datasheet_id``;
- the flags and data gaps about those tables: table, code (field), entity key with the datasheet
  id replaced by ``<ds>``, and detail (reason). On these inputs every one of them is built by the
  assembly (``pipeline.assemble``); a flag an extractor raises itself shows as a difference;
- the reasons of the rejects of the weapon or model table.

The values printed are the same in every shape; only the wrapping differs, as each source
wraps them: where a shape prints "nothing" its own way (BattleScribe's ``-`` keyword cell, the
export's ``-`` invulnerable save) the builder writes it so; the datasheet page stars the
invulnerable save box's label (``INVULNERABLE SAVE*``); the 10th-edition BattleScribe catalogue
(XML) prints the invulnerable save as an ``Invulnerable Save`` ability (``4+``; with a note, the
value in its name and the note as its text), the 11th-edition one (JSON) on the model line
(``InSv``) with the note of a starred one in that ability. An extractor that cannot carry a case is named in the case's ``cannot`` with the
reason. Each case also states a few expected values, so that the extractors cannot all agree on
a wrong reading. Made-up inputs only: no corpus needed.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from html import escape

import pytest

from pipeline.extractors import ParseResult, get_extractor
from schemas.records import DataFlag, DataGap, ModelProfile, Source, WeaponAbility, WeaponProfile

# ---- the printed values -----------------------------------------------------------------------


@dataclass(frozen=True)
class Weapon:
    """A weapon profile line as printed; ``abilities`` is the keyword list without brackets."""

    name: str
    range: str
    attacks: str
    skill: str
    strength: str
    ap: str
    damage: str
    abilities: str = ""
    melee: bool = False


@dataclass(frozen=True)
class Model:
    """A model line as printed; ``invulnerable`` None when the line has no invulnerable save,
    ``note`` the ``*`` note printed with it."""

    name: str
    move: str
    toughness: str
    save: str
    wounds: str
    leadership: str
    oc: str
    invulnerable: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Case:
    """A printed item, what it must give, and the extractors that cannot carry it (with why).

    ``expect``: field -> value of the first record (the profile), ``flags``: the flag codes
    raised, ``reject``: a text the reject's reason holds (the item is rejected).
    """

    id: str
    item: Weapon | Model
    expect: dict = field(default_factory=dict)
    flags: tuple[str, ...] = ()
    reject: str | None = None
    cannot: dict[str, str] = field(default_factory=dict)


EXTRACTORS = (
    "wahapedia-csv", "wahapedia-html", "wahapedia-text-10e", "bsdata-cat-xml", "bsdata-cat-json",
)
NO_MODELS = {"wahapedia-text-10e": "the page text prints no model characteristics"}
#: The 10th-edition catalogues print an invulnerable save as an ``Invulnerable Save`` ability, not
#: on the model line: a plain one (``4+``) gives the line the same value, but a note is the
#: ability's text, read by ``pipeline.assemble.protection`` (value and scope, no
#: ``invulnerable_save_note`` flag as a model line's ``*`` note gets).

BOLTGUN = Weapon("Boltgun", '24"', "2", "3+", "4", "0", "1", "RAPID FIRE 1")
PLAIN = Model("Battle Sister", '6"', "3", "3+", "1", "7+", "1")

CASES = [
    Case("plain-boltgun", BOLTGUN,
         {"range_inches": 24, "attacks": "2", "skill": 3, "strength": 4, "armour_penetration": 0,
          "damage": "1", "abilities_text": "RAPID FIRE 1"}),
    Case("dice-attacks-and-damage",
         Weapon("Heavy flamer", '12"', "D6+1", "3+", "5", "-1", "D3", "SUSTAINED HITS D3"),
         {"attacks": "D6+1", "damage": "D3", "armour_penetration": -1,
          "abilities_text": "SUSTAINED HITS D3"}),
    Case("torrent-bs-na", Weapon("Flamer", '12"', "D6", "N/A", "4", "0", "1", "IGNORES COVER, TORRENT"),
         {"skill": None, "abilities_text": "IGNORES COVER, TORRENT"}),
    Case("bs-dash", Weapon("Odd gun", '18"', "1", "-", "4", "0", "1"),
         {"skill": None}, flags=("no_hit_roll_without_torrent",)),
    Case("range-na-on-a-ranged-weapon", Weapon("Warp bolt", "N/A", "1", "3+", "6", "-1", "2"),
         {"range_inches": None, "is_melee": False}, flags=("range_not_applicable",)),
    Case("strength-2d6", Weapon("Zzap gun", '36"', "1", "5+", "2D6", "-3", "3", "DEVASTATING WOUNDS"),
         {"strength": None}, flags=("strength_not_fixed",)),
    Case("ap-unicode-minus", Weapon("Lascannon", '48"', "1", "3+", "12", "\u22123", "D6+1"),
         {"armour_penetration": -3, "damage": "D6+1"}),
    Case("anti-infantry-and-devastating-wounds",
         Weapon("Kombi-weapon", '24"', "1", "4+", "4", "0", "1", "ANTI-INFANTRY 4+, DEVASTATING WOUNDS"),
         {"abilities_text": "ANTI-INFANTRY 4+, DEVASTATING WOUNDS"}),
    Case("anti-without-threshold", Weapon("Hunter gun", '24"', "1", "4+", "4", "0", "1", "ANTI-INFANTRY"),
         {"abilities_text": "ANTI-INFANTRY"}, flags=("anti_missing_threshold",)),
    Case("multi-profile-supercharge",
         Weapon("\u27a4 Plasma gun - supercharge", '24"', "1", "3+", "8", "-3", "2",
                "HAZARDOUS, RAPID FIRE 1"),
         {"weapon_name": "Plasma gun", "profile_name": "supercharge", "strength": 8}),
    Case("unknown-ability", Weapon("Odd rifle", '30"', "1", "4+", "5", "-1", "2", "HEAVY, FROBNICATE"),
         {"abilities_text": "HEAVY, FROBNICATE"}, flags=("unknown_weapon_ability",)),
    Case("melee-weapon-with-apostrophe",
         Weapon("Gaunt\u2019s chainsword", "Melee", "3", "3+", "4", "0", "1", melee=True),
         {"weapon_name": "Gaunt\u2019s chainsword", "is_melee": True, "range_inches": None, "skill": 3}),
    Case("unreadable-attacks", Weapon("Odd cannon", '24"', "X", "3+", "4", "0", "1"),
         reject="not a dice expression: 'X'"),
    Case("model-plain", PLAIN,
         {"move_inches": 6, "toughness": 3, "save": 3, "wounds": 1, "leadership": 7,
          "objective_control": 1, "invulnerable_save": None}, cannot=NO_MODELS),
    Case("model-invulnerable-4", Model("Battle Sister", '6"', "3", "3+", "1", "7+", "1", "4+"),
         {"invulnerable_save": 4, "invulnerable_save_scope": None}, cannot=NO_MODELS),
    Case("model-invulnerable-starred-with-note",
         Model("Battle Sister", '6"', "3", "3+", "1", "7+", "1", "4+*", "* Ranged attacks only"),
         {"invulnerable_save": 4, "invulnerable_save_scope": "ranged"},
         flags=("invulnerable_save_note",), cannot=NO_MODELS),
    Case("model-starred-toughness", Model("Daemon Prince", '8"', "5*", "3+", "10", "6+", "3"),
         {"toughness": 5}, flags=("starred_characteristic",), cannot=NO_MODELS),
    Case("model-characteristic-dash", Model("Drone", '10"', "3", "4+", "1", "-", "-"),
         {"leadership": None, "objective_control": None}, cannot=NO_MODELS),
]

# ---- the smallest input of each extractor's shape --------------------------------------------

DATASHEET = "Test Squad"


def _source(fmt: str, edition: int = 10) -> Source:
    return Source(source_id=f"same-{fmt}", title="made-up input", file=f"same/{fmt}", format=fmt,
                  publisher="test", edition=edition, kind="export", game_mode=None, version=None,
                  version_date=dt.date(2025, 1, 1), origin="made up")


def _csv_table(*lines: str) -> str:
    """A table as the Wahapedia export writes it: BOM, CRLF, a closing line break."""
    return "\ufeff" + "\r\n".join(lines) + "\r\n"


def wahapedia_csv(item: Weapon | Model) -> ParseResult:
    tables = {
        "Factions": _csv_table("id|name|link|", "SM|Space Marines||"),
        "Datasheets": _csv_table("id|name|faction_id|source_id|legend|role|loadout|transport|virtual|link|",
                                 f"000000001|{DATASHEET}|SM|000000139||Battleline|||false||"),
    }
    if isinstance(item, Weapon):
        w = item
        tables["Datasheets_wargear"] = _csv_table(
            "datasheet_id|line|line_in_wargear|dice|name|description|range|type|A|BS_WS|S|AP|D|",
            f"000000001|1|1||{w.name}|{escape(w.abilities)}|{w.range}|{'Melee' if w.melee else 'Ranged'}|"
            f"{w.attacks}|{w.skill}|{w.strength}|{w.ap}|{w.damage}|")
    else:
        m = item
        tables["Datasheets_models"] = _csv_table(
            "datasheet_id|line|name|M|T|Sv|inv_sv|inv_sv_descr|W|Ld|OC|base_size|base_size_descr|",
            f"000000001|1|{m.name}|{m.move}|{m.toughness}|{m.save}|{m.invulnerable or '-'}|"
            f"{escape(m.note or '')}|{m.wounds}|{m.leadership}|{m.oc}|||")
    return get_extractor("wahapedia-csv")(tables, _source("wahapedia-csv"))


_CHAR = ('<div class="dsCharWrap"><div class="dsCharName">{label}</div><div class="dsCharFrame">'
         '<div class="dsCharFrameBack"><div class="dsCharValue">{value}</div></div></div></div>')


def _html_model(m: Model) -> str:
    values = [("M", m.move), ("T", m.toughness), ("Sv", m.save), ("W", m.wounds), ("Ld", m.leadership),
              ("OC", m.oc)]
    cells = "".join(_CHAR.format(label=label, value=escape(value)) for label, value in values)
    html = (f'<div class="dsProfileBaseWrap"><div class="dsProfileWrapLeft"><div class="dsProfileWrap">'
            f'{cells}</div></div><div class="dsProfileWrapRight"><span class="dsModelName">{escape(m.name)}'
            f"</span></div></div>")
    if m.invulnerable is not None:  # the site stars the box's label, not its value
        star = "*" if m.invulnerable.endswith("*") else ""
        html += (f'<div class="dsInvulWrap"><div class="dsCharInvulText">INVULNERABLE SAVE{star}</div>'
                 f'<div class="dsCharInvul"><div class="dsCharInvulBack"><div class="dsCharInvulValue">'
                 f'{escape(m.invulnerable.rstrip("*"))}</div></div></div></div>')
    if m.note:
        html += f'<div class="dsInvulComment">{escape(m.note)}</div>'
    return html


def _html_weapon(w: Weapon) -> str:
    header = "".join(f'<td><div class="ct dsHeader">{label}</div></td>'
                     for label in ("RANGE", "A", "WS" if w.melee else "BS", "S", "AP", "D"))
    spans = " ".join(f'<span class="kwb2 kwbw"><span class="tt kwbu">{escape(a.strip())}</span></span>'
                     for a in w.abilities.split(",") if a.strip())
    values = "".join(f'<td><div class="ct">{escape(v)}</div></td>'
                     for v in (w.range, w.attacks, w.skill, w.strength, w.ap, w.damage))
    return (f'<table class="wTable"><tbody><tr><td class="dsHeader"></td><td class="wTable_WEAPON">'
            f'<div class="dsHeader">{"MELEE" if w.melee else "RANGED"} WEAPONS</div></td>{header}</tr></tbody>'
            f'<tbody class="bkg"><tr><td></td><td class="wTable2_short pad2626"><span>{escape(w.name)} {spans}'
            f"</span></td>{values}</tr></tbody></table>")


def wahapedia_html(item: Weapon | Model) -> ParseResult:
    banner = _html_model(item) if isinstance(item, Model) else ""
    weapons = _html_weapon(item) if isinstance(item, Weapon) else ""
    page = f"""<html><head><title>{DATASHEET}</title>
<link rel='canonical' href='https://wahapedia.ru/wh40k10ed/factions/space-marines/Test-Squad' /></head><body>
<h1 class="page_header2"><span class="page_header_span2">Space Marines</span>
<span class="page_header_span2"> \u2013 {DATASHEET}</span></h1>
<div class="dsOuterFrame datasheet"><div class="dsBannerWrap"><div class="dsH2Header"><div>{DATASHEET}</div></div>
{banner}</div>
<div class="ds2col"><div class="dsLeft\u0421ol">{weapons}</div><div class="dsRight\u0421ol"></div></div>
</div></body></html>"""
    return get_extractor("wahapedia-html")(page, _source("wahapedia-html"))


def wahapedia_text_10e(item: Weapon | Model) -> ParseResult:
    w = item
    assert isinstance(w, Weapon)
    table = "MELEE WEAPONS | RANGE | A | WS" if w.melee else "RANGED WEAPONS | RANGE | A | BS"
    name = f"{w.name} [{w.abilities}]" if w.abilities else w.name
    weapon = w.name.split(" - ")[0].replace("\u27a4", "").strip().lower()  # its loadout names it so
    text = (f"Made-up Patrol\nBooks\n{DATASHEET.upper()} (5 MODELS)\n"
            f"- Every model is equipped with: {weapon}.\nDatasheets\n"
            f"{table} | S | AP | D | |\n"
            f"| {name} | {w.range} | {w.attacks} | {w.skill} | {w.strength} | {w.ap} | {w.damage} | |\n"
            f"KEYWORDS: INFANTRY, {DATASHEET.upper()}\n")
    return get_extractor("wahapedia-text-10e")(text, _source("wahapedia-text-10e"))


def _bs_profile(ident: str, name: str, type_name: str, chars: list[tuple[str, str]]) -> dict:
    return {"id": ident, "name": name, "typeName": type_name,
            "characteristics": [{"name": k, "$text": v} for k, v in chars]}


def _bs_unit(item: Weapon | Model, edition: int) -> dict:
    """The unit entry of a catalogue (the JSON shape; the XML is written from it)."""
    unit: dict = {"type": "unit", "id": "u-1", "name": DATASHEET,
                  "categoryLinks": [{"id": "c-1", "name": "Faction: Adeptus Astartes", "targetId": "f-1"}]}
    if isinstance(item, Weapon):
        w = item
        skill = "WS" if w.melee else "BS"
        chars = [("Range", w.range), ("A", w.attacks), (skill, w.skill), ("S", w.strength), ("AP", w.ap),
                 ("D", w.damage), ("Keywords", w.abilities or "-")]
        unit["selectionEntries"] = [{"type": "upgrade", "id": "e-1", "name": w.name, "profiles": [
            _bs_profile("p-1", w.name, "Melee Weapons" if w.melee else "Ranged Weapons", chars)]}]
        return unit
    m = item
    chars = [("M", m.move), ("T", m.toughness), ("SV", m.save), ("W", m.wounds), ("LD", m.leadership),
             ("OC", m.oc)]
    profiles = []
    if edition == 11:  # the 11th-edition catalogues print the save on the line (InSv) ...
        chars.append(("InSv", m.invulnerable or ""))
        if m.note:  # ... and its note in the Invulnerable Save ability
            profiles.append(_bs_profile("p-2", f"Invulnerable Save ({m.invulnerable})", "Abilities",
                                        [("Description", m.note)]))
    elif m.note:  # the 10th-edition ones in the ability alone: the value in its name, the note its text
        profiles.append(_bs_profile("p-2", f"Invulnerable Save ({m.invulnerable})", "Abilities",
                                    [("Description", m.note)]))
    elif m.invulnerable is not None:
        profiles.append(_bs_profile("p-2", "Invulnerable Save", "Abilities", [("Description", m.invulnerable)]))
    unit["profiles"] = [_bs_profile("p-1", m.name, "Unit", chars), *profiles]
    return unit


def _xml(node: dict, tag: str) -> str:
    attrs = "".join(f' {k}="{escape(str(v))}"' for k, v in node.items() if not isinstance(v, list) and k != "$text")
    children = "".join(f"<{k}>" + "".join(_xml(c, k[:-1]) for c in v) + f"</{k}>"
                       for k, v in node.items() if isinstance(v, list))
    return f"<{tag}{attrs}>{escape(node.get('$text', ''), quote=False)}{children}</{tag}>"


def bsdata_cat_xml(item: Weapon | Model) -> ParseResult:
    unit = _xml(_bs_unit(item, 10), "selectionEntry")
    text = ('<?xml version="1.0"?><catalogue xmlns="http://www.battlescribe.net/schema/catalogueSchema" '
            f'id="cat" name="Test"><selectionEntries>{unit}</selectionEntries></catalogue>')
    return get_extractor("bsdata-cat-xml")(text, _source("bsdata-cat-xml"))


def bsdata_cat_json(item: Weapon | Model) -> ParseResult:
    tree = {"catalogue": {"id": "cat", "name": "Test", "selectionEntries": [_bs_unit(item, 11)]}}
    return get_extractor("bsdata-cat-json")(json.dumps(tree, ensure_ascii=False), _source("bsdata-cat-json", 11))


BUILDERS = {
    "wahapedia-csv": wahapedia_csv,
    "wahapedia-html": wahapedia_html,
    "wahapedia-text-10e": wahapedia_text_10e,
    "bsdata-cat-xml": bsdata_cat_xml,
    "bsdata-cat-json": bsdata_cat_json,
}

# ---- what is compared -------------------------------------------------------------------------

#: The tables of a weapon and of a model line (the export's rejects are filed under its input
#: table, ``Datasheets_wargear``, the other sources' under the record table).
_WEAPON_TABLES = {"weapon_profiles", "weapon_abilities", "Datasheets_wargear"}
_MODEL_TABLES = {"model_profiles", "Datasheets_models"}


def _datasheet_id(result: ParseResult) -> str:
    """The id of the input's one datasheet (every source builds its own)."""
    (ds,) = {r.datasheet_id for r in result.records if hasattr(r, "datasheet_id")}
    return ds


def stored(result: ParseResult, item: Weapon | Model) -> dict:
    """What the extractor stored of the item, comparable across extractors."""
    kinds = (WeaponProfile, WeaponAbility) if isinstance(item, Weapon) else (ModelProfile,)
    tables = _WEAPON_TABLES if isinstance(item, Weapon) else _MODEL_TABLES
    rejects = [r.reason for r in result.rejects if r.table_name in tables]
    others = [(r.table_name, r.reason) for r in result.rejects if r.table_name not in tables]
    assert others == [], "the input has rejects besides the item's"
    ds = _datasheet_id(result)
    records = [r.model_dump(exclude={"source_id", "locator", "datasheet_id"})
               for r in result.records if isinstance(r, kinds)]
    flags = sorted((f.table_name, f.flag, f.entity_key.replace(ds, "<ds>"), f.detail)
                   for f in result.records if isinstance(f, DataFlag) and f.table_name in tables)
    gaps = sorted((g.table_name, g.field, g.entity_key.replace(ds, "<ds>"), g.reason)
                  for g in result.records if isinstance(g, DataGap) and g.table_name in tables)
    return {"records": records, "flags": flags, "gaps": gaps, "rejects": rejects}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_same_printed_item_gives_the_same_records_flags_and_rejects(case: Case):
    carriers = [name for name in EXTRACTORS if name not in case.cannot]
    assert set(case.cannot) <= set(EXTRACTORS) and len(carriers) >= 2
    out = {name: stored(BUILDERS[name](case.item), case.item) for name in carriers}
    first = carriers[0]
    reference = out[first]
    # what the case says it gives
    if case.reject is not None:
        assert reference["records"] == [] and len(reference["rejects"]) == 1
        assert case.reject in reference["rejects"][0]
    else:
        profile = reference["records"][0]
        got = {k: (profile[k]["text"] if isinstance(profile[k], dict) else profile[k]) for k in case.expect}
        assert got == case.expect
        assert reference["rejects"] == []
    assert sorted({code for _, code, _, _ in reference["flags"]}) == sorted(case.flags)
    # and every other extractor gives the same (a difference names the extractor)
    assert out == dict.fromkeys(carriers, reference), f"compared with {first}"


def test_a_note_naming_another_roll_target_keeps_the_save_unconditional_from_every_source():
    # "6+ ... improved to 4+ against melee attacks": the 6+ is for every attack and the 4+ stays in
    # the note (the attack engine reads it from the invulnerable_save_note flag), as the export reads it.
    from pipeline.assemble.models import read_invulnerable
    from pipeline.assemble.protection import read_invulnerable_ability

    note = "This model has a 6+ invulnerable save. This invulnerable save is improved to 4+ against melee attacks."
    line = read_invulnerable("6+*", note)
    ability = read_invulnerable_ability("Invulnerable Save (6+*)", note)
    assert (line.value, line.scope) == (ability.value, ability.scope) == (6, None)
    assert ability.note == note
