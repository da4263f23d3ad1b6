"""Same input, same output: one printed weapon or model line, ability or unit-composition line
through every extractor that can carry it gives the same stored values, flags, data gaps and rejects.

Each case below is a printed weapon profile, model line, core ability or composition line, as data. For each extractor that can
carry it, the smallest input of that extractor's real shape is built around it (an export table
row, a saved datasheet page, a page-text weapon table, a BattleScribe catalogue in XML and in
JSON) and parsed with the registered parser. Compared, across extractors:

- the ``WeaponProfile`` / ``WeaponAbility`` (weapon cases), ``ModelProfile`` (model cases),
  ``Ability`` and the ``FeelNoPain`` rows the build derives from it (ability cases), or
  ``UnitComposition`` and the datasheet's Starting Strength (composition cases) content, without
  ``source_id``, ``locator`` and ``datasheet_id``;
- the flags and data gaps about those tables: table, code (field), entity key with the datasheet
  id replaced by ``<ds>``, and detail (reason). On these inputs every one of them is built by the
  assembly (``pipeline.assemble``); a flag an extractor raises itself shows as a difference;
- the reasons of the rejects of the item's table.

The values printed are the same in every shape; only the wrapping differs, as each source
wraps them: where a shape prints "nothing" its own way (BattleScribe's ``-`` keyword cell, the
export's ``-`` invulnerable save) the builder writes it so; the datasheet page stars the
invulnerable save box's label (``INVULNERABLE SAVE*``); the 10th-edition BattleScribe catalogue
(XML) prints the invulnerable save as an ``Invulnerable Save`` ability (``4+``; with a note, the
value in its name and the note as its text), the 11th-edition one (JSON) on the model line
(``InSv``) with the note of a starred one in that ability. An extractor that cannot carry a case is named in the case's ``cannot`` with the
reason. Each case also states a few expected values, so that the extractors cannot all agree on
a wrong reading. A Stratagem card (``STRATAGEM``) goes through the four extractors that carry
Stratagems (export, page text, 11th-edition rules page, Game Datacards) the same way. Made-up
inputs only: no corpus needed.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from html import escape

import pytest

from pipeline.assemble.protection import feel_no_pain_rows
from pipeline.extractors import ParseResult, get_extractor
from schemas.records import (
    Ability, DataFlag, DataGap, Datasheet, ModelProfile, Source, Stratagem, UnitComposition, WeaponAbility,
    WeaponProfile,
)

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
class CoreAbility:
    """A core ability as a datasheet names it: ``Deadly Demise D3`` (``parameter`` the part a
    source may print apart: the export's ``parameter`` column, a BattleScribe name modifier)."""

    name: str
    parameter: str = ""

    @property
    def printed(self) -> str:
        return f"{self.name} {self.parameter}".strip()


@dataclass(frozen=True)
class Composition:
    """A unit-composition line as printed; ``keywords`` printed after it (``– EPIC HERO``);
    ``rows``: the (min, max, model name) it gives, one per model group."""

    text: str
    rows: tuple[tuple[int | None, int | None, str], ...]
    keywords: str = ""


Item = Weapon | Model | CoreAbility | Composition


@dataclass(frozen=True)
class Case:
    """A printed item, what it must give, and the extractors that cannot carry it (with why).

    ``expect``: field -> value of the first record (the profile), ``derived``: of the last (the
    Feel No Pain row of an ability, the Starting Strength with a composition line), ``flags``: the
    flag codes raised, ``reject``: a text the reject's reason holds (the item is rejected).
    """

    id: str
    item: Item
    expect: dict = field(default_factory=dict)
    derived: dict = field(default_factory=dict)
    flags: tuple[str, ...] = ()
    reject: str | None = None
    cannot: dict[str, str] = field(default_factory=dict)


EXTRACTORS = (
    "wahapedia-csv", "wahapedia-html", "wahapedia-text-10e", "bsdata-cat-xml", "bsdata-cat-json", "gdc-json-folder",
)
NO_MODELS = {"wahapedia-text-10e": "the page text prints no model characteristics"}
#: Core abilities are rules of the game system: a catalogue read alone (the 11th-edition JSON
#: files are) links to one it does not hold (kind ``other``, with a data gap); the 10th-edition
#: catalogues are read as a set with their game system (``bsdata-cat-xml`` here builds that set).
NO_CORE_RULES = {"bsdata-cat-json": "a catalogue read alone does not hold the game system's core rules"}
NO_COMPOSITION = {"wahapedia-text-10e": "the page text prints no unit composition"}
#: BattleScribe gives each model entry its counts; it prints no line of several groups, nor keywords on one.
NO_LINES = {**NO_COMPOSITION, "bsdata-cat-xml": "BattleScribe gives model entries, not printed lines",
            "bsdata-cat-json": "BattleScribe gives model entries, not printed lines"}
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
    Case("ability-plain", CoreAbility("Deep Strike"),
         {"kind": "core", "name": "Deep Strike", "parameter": None, "text": None}, cannot=NO_CORE_RULES),
    Case("ability-with-a-parameter", CoreAbility("Deadly Demise", "D3"),
         {"kind": "core", "name": "Deadly Demise", "parameter": "D3"}, cannot=NO_CORE_RULES),
    Case("ability-feel-no-pain", CoreAbility("Feel No Pain", "5+"),
         {"name": "Feel No Pain", "parameter": "5+"},
         derived={"ability_name": "Feel No Pain", "threshold": 5, "scope": "all", "condition": None},
         cannot=NO_CORE_RULES),
    Case("composition-one-model", Composition("1 Sister Superior", ((1, 1, "Sister Superior"),)),
         {"line": 1, "model_name": "Sister Superior", "min_models": 1, "max_models": 1,
          "text": "1 Sister Superior"}, derived={"starting_strength": 1}, cannot=NO_COMPOSITION),
    Case("composition-a-range", Composition("4-9 Battle Sisters", ((4, 9, "Battle Sisters"),)),
         {"model_name": "Battle Sisters", "min_models": 4, "max_models": 9}, derived={"starting_strength": None},
         cannot=NO_COMPOSITION),
    Case("composition-two-groups",
         Composition("1 Shock Trooper Sergeant and 9 Shock Troopers",
                     ((1, 1, "Shock Trooper Sergeant"), (9, 9, "Shock Troopers"))),
         {"model_name": "Shock Trooper Sergeant", "text": "1 Shock Trooper Sergeant and 9 Shock Troopers"},
         derived={"starting_strength": 10}, cannot=NO_LINES),
    Case("composition-keyword-tag", Composition("1 Lord Solar Leontus", ((1, 1, "Lord Solar Leontus"),), "EPIC HERO"),
         {"model_name": "Lord Solar Leontus", "min_models": 1}, cannot=NO_LINES),
    Case("composition-footnote-marker", Composition("1-2 Atalan Wolfquads*", ((1, 2, "Atalan Wolfquads"),)),
         {"model_name": "Atalan Wolfquads", "max_models": 2}, flags=("composition_footnote_marker",),
         cannot=NO_LINES),
    Case("composition-text-line", Composition("OR", ((None, None, ""),)),
         {"model_name": "", "min_models": None, "text": "OR"}, flags=("composition_text_line",), cannot=NO_LINES),
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


def _kwb(keywords: str) -> str:
    """Keywords printed after a composition line, as the site marks them up."""
    return " \u2013 " + " ".join(f'<span class="kwb">{k}</span>' for k in keywords.split()) if keywords else ""


def wahapedia_csv(item: Item) -> ParseResult:
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
    elif isinstance(item, CoreAbility):
        tables["Abilities"] = _csv_table("id|name|legend|faction_id|description|",
                                         f"000008339|{item.name}|||The rule's text.|")
        tables["Datasheets_abilities"] = _csv_table("datasheet_id|line|ability_id|model|name|description|type|parameter|",
                                                    f"000000001|1|000008339||||Core|{item.parameter}|")
    elif isinstance(item, Composition):
        tables["Datasheets_unit_composition"] = _csv_table("datasheet_id|line|description|",
                                                           f"000000001|1|{escape(item.text)}{_kwb(item.keywords)}|")
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


def _html_right(item: Item) -> str:
    if isinstance(item, CoreAbility):
        return f'<div class="dsHeader">ABILITIES</div><div class="dsAbility">CORE: <b>{escape(item.printed)}</b></div>'
    if isinstance(item, Composition):
        return ('<div class="dsHeader">UNIT COMPOSITION</div><div class="dsAbility"><ul class="dsUl"><li><b>'
                f"{escape(item.text)}{_kwb(item.keywords)}</b></li></ul></div>")
    return ""


def wahapedia_html(item: Item) -> ParseResult:
    banner = _html_model(item) if isinstance(item, Model) else ""
    weapons = _html_weapon(item) if isinstance(item, Weapon) else ""
    page = f"""<html><head><title>{DATASHEET}</title>
<link rel='canonical' href='https://wahapedia.ru/wh40k10ed/factions/space-marines/Test-Squad' /></head><body>
<h1 class="page_header2"><span class="page_header_span2">Space Marines</span>
<span class="page_header_span2"> \u2013 {DATASHEET}</span></h1>
<div class="dsOuterFrame datasheet"><div class="dsBannerWrap"><div class="dsH2Header"><div>{DATASHEET}</div></div>
{banner}</div>
<div class="ds2col"><div class="dsLeft\u0421ol">{weapons}</div><div class="dsRight\u0421ol">{_html_right(item)}</div></div>
</div></body></html>"""
    return get_extractor("wahapedia-html")(page, _source("wahapedia-html"))


def wahapedia_text_10e(item: Item) -> ParseResult:
    w = item if isinstance(item, Weapon) else Weapon("Boltgun", "", "", "", "", "", "")
    assert isinstance(item, (Weapon, CoreAbility))
    table = "MELEE WEAPONS | RANGE | A | WS" if w.melee else "RANGED WEAPONS | RANGE | A | BS"
    name = f"{w.name} [{w.abilities}]" if w.abilities else w.name
    weapon = w.name.split(" - ")[0].replace("\u27a4", "").strip().lower()  # its loadout names it so
    row = f"| {name} | {w.range} | {w.attacks} | {w.skill} | {w.strength} | {w.ap} | {w.damage} | |\n"
    text = (f"Made-up Patrol\nBooks\n{DATASHEET.upper()} (5 MODELS)\n"
            f"- Every model is equipped with: {weapon}.\nDatasheets\n"
            f"{table} | S | AP | D | |\n"
            + (row if isinstance(item, Weapon) else f"ABILITIES\nCORE: {item.printed}\n")
            + f"KEYWORDS: INFANTRY, {DATASHEET.upper()}\n")
    return get_extractor("wahapedia-text-10e")(text, _source("wahapedia-text-10e"))


def _bs_profile(ident: str, name: str, type_name: str, chars: list[tuple[str, str]]) -> dict:
    return {"id": ident, "name": name, "typeName": type_name,
            "characteristics": [{"name": k, "$text": v} for k, v in chars]}


def _bs_unit(item: Item, edition: int) -> dict:
    """The unit entry of a catalogue (the JSON shape; the XML is written from it)."""
    unit: dict = {"type": "unit", "id": "u-1", "name": DATASHEET,
                  "categoryLinks": [{"id": "c-1", "name": "Faction: Adeptus Astartes", "targetId": "f-1"}]}
    if isinstance(item, CoreAbility):  # a link to the game system's rule, its parameter a name modifier
        modifier = [{"type": "append", "field": "name", "value": item.parameter}] if item.parameter else []
        unit["infoLinks"] = [{"id": "l-1", "name": item.name, "type": "rule", "targetId": "r-1", "modifiers": modifier}]
        return unit
    if isinstance(item, Composition):  # a model entry with its counts (one row only: see NO_LINES)
        ((least, most, name),) = item.rows
        unit["selectionEntries"] = [{"type": "model", "id": "m-1", "name": name, "constraints": [
            {"id": "k-1", "type": "min", "value": str(least), "field": "selections", "scope": "parent"},
            {"id": "k-2", "type": "max", "value": str(most), "field": "selections", "scope": "parent"}]}]
        return unit
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


#: The game system the 10th-edition catalogues are read with (its core rules).
_GST = ('<?xml version="1.0"?><gameSystem xmlns="http://www.battlescribe.net/schema/gameSystemSchema" id="gs" '
        'name="Warhammer 40,000"><sharedRules><rule id="r-1" name="{name}"><description>The rule.</description>'
        "</rule></sharedRules></gameSystem>")


def bsdata_cat_xml(item: Item) -> ParseResult:
    """A catalogue read with its game system, as the build reads the 10th-edition catalogues."""
    unit = _xml(_bs_unit(item, 10), "selectionEntry")
    text = ('<?xml version="1.0"?><catalogue xmlns="http://www.battlescribe.net/schema/catalogueSchema" '
            f'id="cat" name="Test"><selectionEntries>{unit}</selectionEntries></catalogue>')
    files = {"Test.cat": text, "Warhammer 40,000.gst": _GST.format(name=escape(getattr(item, "name", "")))}
    return get_extractor("bsdata-cat-set-xml")(files, _source("bsdata-cat-set-xml"))


def bsdata_cat_json(item: Item) -> ParseResult:
    tree = {"catalogue": {"id": "cat", "name": "Test", "selectionEntries": [_bs_unit(item, 11)]}}
    return get_extractor("bsdata-cat-json")(json.dumps(tree, ensure_ascii=False), _source("bsdata-cat-json", 11))


def gdc_json_folder(item: Item) -> ParseResult:
    sheet: dict = {"id": "g-1", "name": {"en": DATASHEET}, "factions": ["Adeptus Astartes"], "stats": [],
                   "rangedWeapons": [], "meleeWeapons": [], "abilities": {}}
    if isinstance(item, Weapon):
        profile = {"name": {"en": item.name}, "range": item.range, "attacks": item.attacks, "skill": item.skill,
                   "strength": item.strength, "ap": item.ap, "damage": item.damage,
                   "keywords": [{"en": k.strip()} for k in item.abilities.split(",") if k.strip()]}
        sheet["meleeWeapons" if item.melee else "rangedWeapons"] = [{"profiles": [profile]}]
    elif isinstance(item, CoreAbility):
        sheet["abilities"] = {"core": [{"name": {"en": item.printed}}]}
    elif isinstance(item, Composition):  # a line as printed in bold, its keywords after a dash
        sheet["composition"] = [f"**{item.text}{' – ' + item.keywords if item.keywords else ''}**"]
    else:
        sheet["stats"] = [{"name": {"en": item.name}, "m": item.move, "t": item.toughness, "sv": item.save,
                           "w": item.wounds, "ld": item.leadership, "oc": item.oc}]
        if item.invulnerable is not None:
            sheet["abilities"] = {"invul": {"value": item.invulnerable, "info": {"en": item.note or ""}}}
    files = {"f.json": json.dumps({"name": "Adeptus Astartes", "datasheets": [sheet]}, ensure_ascii=False)}
    return get_extractor("gdc-json-folder")(files, _source("gdc-json-folder", 11))


BUILDERS = {
    "wahapedia-csv": wahapedia_csv,
    "wahapedia-html": wahapedia_html,
    "wahapedia-text-10e": wahapedia_text_10e,
    "bsdata-cat-xml": bsdata_cat_xml,  # read as a set with its game system
    "bsdata-cat-json": bsdata_cat_json,
    "gdc-json-folder": gdc_json_folder,
}

# ---- what is compared -------------------------------------------------------------------------

#: The records and the tables of each kind of item (the export's rejects are filed under its
#: input table, ``Datasheets_wargear``, the other sources' under the record table).
_KINDS: dict[type, tuple[tuple[type, ...], set[str]]] = {
    Weapon: ((WeaponProfile, WeaponAbility), {"weapon_profiles", "weapon_abilities", "Datasheets_wargear"}),
    Model: ((ModelProfile,), {"model_profiles", "Datasheets_models"}),
    CoreAbility: ((Ability,), {"abilities", "feel_no_pain", "Datasheets_abilities"}),
    Composition: ((UnitComposition,), {"unit_composition", "Datasheets_unit_composition"}),
}


def _datasheet_id(result: ParseResult) -> str:
    """The id of the input's one datasheet (every source builds its own)."""
    (ds,) = {r.datasheet_id for r in result.records if hasattr(r, "datasheet_id")}
    return ds


def stored(result: ParseResult, item: Item) -> dict:
    """What the extractor stored of the item, comparable across extractors (with what the build
    derives of it: the Feel No Pain rows of an ability, the datasheet's Starting Strength)."""
    kinds, tables = _KINDS[type(item)]
    rejects = [r.reason for r in result.rejects if r.table_name in tables]
    others = [(r.table_name, r.reason) for r in result.rejects if r.table_name not in tables]
    assert others == [], "the input has rejects besides the item's"
    ds = _datasheet_id(result)
    records = [r.model_dump(exclude={"source_id", "locator", "datasheet_id"})
               for r in result.records if isinstance(r, kinds)]
    if isinstance(item, CoreAbility):
        records += [r.model_dump(exclude={"source_id", "locator", "datasheet_id"}) for r in feel_no_pain_rows(result.records)]
    if isinstance(item, Composition):
        records += [{"starting_strength": r.starting_strength} for r in result.records if isinstance(r, Datasheet)]
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
        assert {k: reference["records"][-1][k] for k in case.derived} == case.derived
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


# ---- a Stratagem -------------------------------------------------------------------------------

#: A Core Stratagem card as printed: name, cost, category (group and type), legend, sections.
#: Core, so that the 11th-edition rules page (which prints only the Core Stratagems) carries it.
STRATAGEM = {"name": "HOLD FAST", "cost": "1CP", "group": "Core", "type": "Battle Tactic",
             "legend": "Stand firm.", "when": "Your opponent's Shooting phase.",
             "target": "One unit from your army.", "effect": "Until the end of the phase, it holds."}


def _stratagem_inputs() -> dict[str, ParseResult]:
    """The card in each shape that carries Stratagems: the export's row (bare digits, the
    category with the word ``Stratagem``, the sections as one HTML text), the 10th-edition page
    text and the 11th-edition rules page (``1CP``, the category line), a Game Datacards file
    (the cost a number, group and type apart, each section its own field)."""
    s = STRATAGEM
    cp = s["cost"].removesuffix("CP")
    description = (f"<b>WHEN:</b> {escape(s['when'])}<br><br><b>TARGET:</b> {escape(s['target'])}<br><br>"
                   f"<b>EFFECT:</b> {escape(s['effect'])}")
    tables = {
        "Factions": _csv_table("id|name|link|", "SM|Space Marines||"),
        "Stratagems": _csv_table(
            "faction_id|name|id|type|cp_cost|legend|turn|phase|detachment|detachment_id|description|",
            f"|{s['name']}|000008335001|{s['group']} – {s['type']} Stratagem|{cp}|{s['legend']}|Either player’s"
            f"|Shooting phase|||{description}|"),
    }
    card = [s["name"], s["cost"], f"{s['group']} – {s['type']} Stratagem", s["legend"],
            f"WHEN: {s['when']}", f"TARGET: {s['target']}", f"EFFECT: {s['effect']}"]
    page_10e = "Made-up Patrol\nDatasheets\n" + "\n".join(card) + "\n"
    page_11e = "\n\n".join(["Made-up Page Title", f"{s['name']}15.20", *card[1:]]) + "\n"
    gdc = {"name": "Adeptus Astartes", "datasheets": [], "stratagems": [
        {"id": "st-1", "name": s["name"], "cost": int(cp), "type": s["type"], "detachment": s["group"],
         "fluff": s["legend"], "when": s["when"], "target": s["target"], "effect": s["effect"]}]}
    return {
        "wahapedia-csv": get_extractor("wahapedia-csv")(tables, _source("wahapedia-csv")),
        "wahapedia-text-10e": get_extractor("wahapedia-text-10e")(page_10e, _source("wahapedia-text-10e")),
        "wahapedia-rules-11e": get_extractor("wahapedia-rules-11e")(page_11e, _source("wahapedia-rules-11e")),
        "gdc-json-folder": get_extractor("gdc-json-folder")({"f.json": json.dumps(gdc)}, _source("gdc-json-folder")),
    }


def test_same_printed_stratagem_gives_the_same_record_and_flags_from_every_source():
    """The stored Stratagem (without ``source_id``, ``locator`` and ``stratagem_id``: each
    source has its own id scheme; every input is given edition 10) and its flags and rejects."""
    out = {}
    for name, result in _stratagem_inputs().items():
        records = [r.model_dump(exclude={"source_id", "locator", "stratagem_id"})
                   for r in result.records if isinstance(r, Stratagem)]
        flags = sorted((f.flag, f.detail) for f in result.records
                       if isinstance(f, DataFlag) and f.table_name == "stratagems")
        rejects = [r.reason for r in result.rejects if r.table_name in {"stratagems", "Stratagems"}]
        out[name] = {"records": records, "flags": flags, "rejects": rejects}
    s = STRATAGEM
    reference = {"records": [{"name": s["name"], "cp_cost": 1, "group": "Core", "type": "Battle Tactic",
                              "edition": 10, "legend": s["legend"], "when": s["when"], "target": s["target"],
                              "effect": s["effect"], "restrictions": None}], "flags": [], "rejects": []}
    assert out == dict.fromkeys(out, reference)
