"""Saved Wahapedia 10th-edition datasheet pages (whole HTML pages): extracts what a page prints.

What it hands to the assembly (``pipeline.assemble``), as the text the page shows: the datasheet
(``PrintedDatasheet``), each profile (``PrintedModel``, with its invulnerable save box), each
weapon row (``PrintedWeapon``), each ability, box and CORE / FACTION name (``PrintedAbility``),
each UNIT COMPOSITION line (``PrintedComposition``, a keyword tag cut off), each loadout line and
the keywords.

Input: one page of ``wahapedia.ru/wh40k10ed/factions/<faction>/<Datasheet>`` as served (ads,
scripts, site navigation, rules tooltips and all). Output, per ``div.dsOuterFrame`` on the page
(a datasheet page has one; a collated ``datasheets.html`` page has many), the records the
assembly builds of what it hands over, and the others it builds itself:

- ``Faction`` (once per page) from the page header (``<h1>``: ``Tyranids – Termagants``);
- ``Datasheet``: name (``.dsH2Header``), faction, role (the ``Army List`` menu heading above the
  page's own link), legend (the fluff in the ``picLegend`` title), ``external_id`` (the path of
  the page's canonical URL);
- ``ModelProfile`` per ``.dsProfileBaseWrap`` (M, T, Sv, W, Ld, OC from ``dsCharName`` /
  ``dsCharValue``; the model name from ``.dsModelName`` when shown, else the datasheet name),
  with the invulnerable save of the ``.dsInvulWrap`` box that follows it and, when the box is
  starred, the condition from ``.dsInvulComment``;
- ``WeaponProfile`` and ``WeaponAbility`` per weapon row of the RANGED / MELEE tables
  (``Plasma gun – supercharge`` is weapon ``Plasma gun``, profile ``supercharge``);
- ``Ability`` for CORE / FACTION names, datasheet abilities (``<b>Name:</b> text``), wargear
  abilities, the DAMAGED box and special boxes (``SUPREME COMMANDER``, ``ORDERS``: kind ``other``)
  and the text of an invulnerable save box (name ``Invulnerable Save``);
- ``Keyword`` (keywords and faction keywords), ``WargearLoadout`` (``Every model is equipped
  with: ...``), ``UnitComposition`` read as ``pipeline.assemble.composition`` says, as the
  export is: one row per model group (``1 Shock Trooper Sergeant and 9 Shock Troopers`` gives
  two), an ``OR`` between alternative compositions and any other line without a model count
  (``10 MODELS MAXIMUM``) a row with no counts, and an ``alternative_compositions`` flag naming
  the lines of each alternative;
- ``LeaderLink`` from ``LEADER`` (``This model can be attached to the following units:``) and
  ``LED BY`` (``This unit can be led by the following units:``). The linked datasheet's id is
  built like this page's (faction from the link's URL, name slug from the link text); the names
  as printed (this datasheet's header, the link's text) are ``leader_name`` and
  ``bodyguard_name``, and the linked name is in the locator too.
- ``WargearOption`` per item of the ``WARGEAR OPTIONS`` list (``<li>``; a nested list of choices
  is one line per choice in the text) and per note under it (``div.dsOptionsComment``:
  ``is_footnote``, text kept with its ``*``), numbered from 1 in page order, as the export's
  Datasheets_options rows are;
- ``UnitCost`` per row of the points table (the ``dsAbility`` box with ``div.PriceTag``):
  ``10 models`` | ``65`` -> description ``10 models``, ``cost_points`` 65; a ``+55`` price is
  an add-on (``is_addon``). Numbered from 1 in page order, as Datasheets_models_cost is.

Content with no column or table in ``schemas/records.py`` is kept as a ``Reject`` whose reason
names the missing column: base sizes, the publication line (``Faction Pack. Tyranids (10th
edition, version 1.0)``), notes under the unit composition or the leader list. The site's own
cross-references under the datasheet (``STRATAGEMS``, ``DETACHMENT ABILITY``, ``ENHANCEMENTS``
lists) and the narrow-layout copy of each weapon name row are counted in ``result.boilerplate``.
Anything else inside the frame that no rule here recognises is a ``Reject`` ("unrecognised
..."), never dropped.

A page without ``div.dsOuterFrame`` (a faction page) gives a single ``Reject`` and no records.

Labels are matched through the maps below (data, not code): ``CHARACTERISTIC_LABELS`` (case
insensitive: ``Ld`` and ``LD``), ``WEAPON_COLUMNS`` and ``WEAPON_TABLES`` (shared with the page-text
parser, in ``pipeline.normalise.characteristics``), ``SECTIONS``,
``FEATURE_SECTIONS``, ``ABILITY_LABELS``. An unknown characteristic or weapon-column label is a
``Reject`` with the label; an unknown section header followed by ability boxes is a special box
(Wahapedia's "Special" abilities, e.g. ``SUPREME COMMANDER``) and is loaded as an ``Ability``
of kind ``other``.

Ids: ``datasheet_id`` = ``f"{edition}e/{faction slug}/{name slug}"`` (``10e/tyranids/termagants``)
with the edition of the source (or, if the source states none, of the URL ``/wh40k10ed/``).
The faction slug is the slug of the faction name in the page header (``Astra Militarum`` ->
``astra-militarum``), checked against the URL.

Locators: ``line N: <what>`` where N is the 1-based line of the element in the saved HTML file
(``html.parser`` keeps source lines; ``lxml`` does not), e.g. ``line 906: weapon 'Lasgun'``.
The page is parsed with ``html.parser`` restricted to the parts read (the datasheet frames, the
header, the canonical link, the menu), which also keeps a 3.4 MB page fast (about 0.4 s).

Requires beautifulsoup4 >= 4.13 (``bs4.filter.ElementFilter``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlparse

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.filter import ElementFilter

from pipeline.assemble.abilities import assemble_ability
from pipeline.assemble.collector import Collector
from pipeline.assemble.composition import assemble_composition
from pipeline.assemble.datasheets import assemble_datasheet
from pipeline.assemble.ids import datasheet_id
from pipeline.assemble.keywords import read_keywords
from pipeline.assemble.loadouts import assemble_loadout
from pipeline.assemble.models import assemble_model
from pipeline.assemble.printed import PrintedAbility, PrintedComposition, PrintedDatasheet, PrintedModel, PrintedWeapon
from pipeline.assemble.weapons import assemble_weapon
from pipeline.errors import NormaliseError
from pipeline.normalise.characteristics import WEAPON_COLUMNS, WEAPON_TABLES
from pipeline.normalise.composition import is_alternative
from pipeline.normalise.text import clean_line, free_parse_trees, html_to_text, slug
from pipeline.extractors import ParseResult, source_rule_text
from schemas.records import (
    Faction,
    Keyword,
    LeaderLink,
    ModelProfile,
    Record,
    RuleText,
    Source,
    UnitComposition,
    UnitCost,
    WargearLoadout,
    WargearOption,
    WeaponProfile,
)

# --- label maps (data) --------------------------------------------------------------------------

#: ``dsCharName`` label (case-folded) -> ``ModelProfile`` characteristic.
CHARACTERISTIC_LABELS: dict[str, str] = {
    "m": "move",
    "t": "toughness",
    "sv": "save",
    "w": "wounds",
    "ld": "leadership",
    "oc": "objective_control",
}

#: Weapon table column header (case-folded) -> weapon characteristic.
#: Section header of the datasheet's two columns (case-folded; ``DAMAGED: 1-8 WOUNDS REMAINING``
#: is matched on the part before the colon) -> what reads it.
SECTIONS: dict[str, str] = {
    "abilities": "abilities",
    "wargear abilities": "wargear-abilities",
    "unit composition": "composition",
    "leader": "leader",
    "transport": "transport",
    "damaged": "damaged",
    "wargear options": "wargear-options",
}

#: Section header under the keywords bar (``ShowDatasheetFeatures``): the site's cross references
#: (counted as boilerplate, by the class of their items) or the bodyguard's list of Leaders.
FEATURE_SECTIONS: dict[str, str] = {
    "stratagems": "s10Wrap",
    "detachment ability": "s10EnhWrap",
    "enhancements": "s10EnhWrap",
    "led by": "led-by",
}

#: Label of an ability box that only names abilities (``CORE: Deep Strike, Leader``) -> kind.
ABILITY_LABELS: dict[str, str] = {"core": "core", "faction": "faction"}

#: Intro sentences of the leader lists (case-folded, without the colon).
LEADER_INTROS: tuple[str, ...] = (
    "this model can be attached to the following units",
    "this model can be attached to the following unit",
    "this unit can be led by the following units",
    "this unit can be led by the following unit",
)

#: Classes of banner and header elements that are site chrome (icons, pictures, colour bars).
_CHROME_CLASSES = frozenset(
    {"dsIconsNarrow", "dsPicNarrow", "dsBanner", "dsPicWide", "dsIconsWide", "dsLineHor"}
)

_FRAME_CLASS = "dsOuterFrame"
_WHITESPACE = re.compile(r"\s+")
_CYRILLIC_C = str.maketrans({"\u0421": "C", "\u0441": "c"})  # Wahapedia writes "dsLeftСol"
_EDITION_IN_PATH = re.compile(r"/wh40k(\d+)ed/")
_KEYWORD_TAG = re.compile(r"\s+[–—-]\s+[A-Z][A-Z '’\-]*$")
_EQUIPPED = re.compile(r"^(?P<models>.+?)\s+(?:is|are)\s+equipped\s+with:?$", re.IGNORECASE)
_PRICE = re.compile(r"^(?P<addon>\+?)\s*(?P<points>\d+)(?:\s*(?:pts|points))?$", re.IGNORECASE)
_DAMAGED = re.compile(r"^damaged\s*:\s*(?P<param>.*?)\s*(?:wounds?\s+remaining)?$", re.IGNORECASE)


# --- small pure helpers -------------------------------------------------------------------------


def classes(tag: Tag) -> set[str]:
    """The classes of a tag, with Wahapedia's Cyrillic ``С`` read as a Latin ``C``.

    >>> sorted(classes(BeautifulSoup('<div class="dsLeft\u0421ol x"></div>', "html.parser").div))
    ['dsLeftCol', 'x']
    """
    value = tag.get("class") or []
    if isinstance(value, str):
        value = value.split()
    return {c.translate(_CYRILLIC_C) for c in value}


def fold(text: str) -> str:
    """One clean line: every run of white space (newlines too) is one space, hyphens plain.

    >>> fold(" ASTRA\\n MILITARUM ")
    'ASTRA MILITARUM'
    """
    return clean_line(_WHITESPACE.sub(" ", text))


def block_text(fragment: str) -> str:
    """Text of an HTML fragment, one line per ``<br>``, ``<li>`` or block element.

    Line breaks in the HTML source are white space, as a browser shows them (``html_to_text``
    alone keeps them as line breaks).

    >>> block_text("it must be your\\n<b>WARLORD</b>.<ul><li>A</li><li>B</li></ul>")
    'it must be your WARLORD.\\nA\\nB'
    """
    return html_to_text(_WHITESPACE.sub(" ", fragment))


def text_of(node: Tag | NavigableString | None) -> str:
    """The clean one-line text of an element (spaces folded, plain hyphens).

    >>> text_of(BeautifulSoup("<b> Fall\u00a0\\n <i>Back</i> </b>", "html.parser").b)
    'Fall Back'
    """
    if node is None:
        return ""
    return fold(str(node) if isinstance(node, NavigableString) else node.get_text())


def split_ability_items(printed: str) -> list[str]:
    """Items of a weapon's ability list as printed: ``[assault, pistol]`` -> two items.

    >>> split_ability_items("[ assault , devastating wounds ]"), split_ability_items("torrent")
    (['assault', 'devastating wounds'], ['torrent'])
    """
    body = fold(printed).strip().strip("[]")
    return [fold(x) for x in body.split(",") if fold(x).strip("[] ")]


def path_parts(url: str | None) -> tuple[str | None, int | None, str | None]:
    """(URL path, edition, faction slug) of a Wahapedia URL.

    >>> path_parts("https://wahapedia.ru/wh40k10ed/factions/tyranids/Termagants")
    ('/wh40k10ed/factions/tyranids/Termagants', 10, 'tyranids')
    >>> path_parts(None)
    (None, None, None)
    """
    if not url:
        return None, None, None
    path = urlparse(url).path or None
    if path is None:
        return None, None, None
    m = _EDITION_IN_PATH.search(path)
    edition = int(m.group(1)) if m else None
    segments = [s for s in path.split("/") if s]
    faction = segments[2] if len(segments) > 2 and segments[1] == "factions" else None
    return path, edition, faction


# --- the page -----------------------------------------------------------------------------------


class _PageParts(ElementFilter):
    """Build only the page parts this parser reads; everything else is skipped while parsing."""

    @property
    def includes_everything(self) -> bool:
        return False

    def allow_tag_creation(self, nsprefix, name, attrs) -> bool:  # bs4's signature
        attrs = attrs or {}
        cls = attrs.get("class") or ""
        cls = cls.split() if isinstance(cls, str) else list(cls)
        if name == "div":
            return _FRAME_CLASS in cls or "NavDropdown-content_P" in cls
        if name == "link":
            rel = attrs.get("rel") or ""
            return "canonical" in (rel.split() if isinstance(rel, str) else list(rel))
        if name in ("h1", "title"):
            return True
        if name == "a":
            return bool(attrs.get("name"))
        return False

    def allow_string_creation(self, string: str) -> bool:
        return False


@dataclass
class _Page:
    soup: BeautifulSoup
    url: str | None
    path: str | None
    url_edition: int | None
    url_faction: str | None
    title: str
    faction_name: str | None
    faction_line: str | None
    nav: Tag | None


def _read_page(text: str) -> _Page:
    soup = BeautifulSoup(text, "html.parser", parse_only=_PageParts())
    link = soup.find("link", rel="canonical")
    url = str(link.get("href")) if isinstance(link, Tag) and link.get("href") else None
    path, edition, faction = path_parts(url)
    h1 = soup.find("h1")
    faction_name, faction_line = None, None
    if isinstance(h1, Tag):
        span = h1.find(attrs={"data-tooltip-content": "#tooltip_contentFactionRules"}) or h1.find(
            "span"
        )
        if isinstance(span, Tag) and text_of(span):
            faction_name, faction_line = text_of(span), _line(span)
    nav = soup.find("div", class_="NavDropdown-content_P")
    return _Page(
        soup=soup,
        url=url,
        path=path,
        url_edition=edition,
        url_faction=faction,
        title=text_of(soup.find("title")),
        faction_name=faction_name,
        faction_line=faction_line,
        nav=nav if isinstance(nav, Tag) else None,
    )


def _index(cells: list, cell: object) -> int | None:
    """Position of a cell by identity (``list.index`` compares tags by content), or None when it
    is not one of ``cells`` (a cell nested in another cell of a malformed table)."""
    return next((i for i, c in enumerate(cells) if c is cell), None)


def _inside(node: NavigableString, containers: list[Tag]) -> bool:
    """Whether a string sits inside one of the given elements (by identity)."""
    ids = {id(c) for c in containers}
    return any(id(parent) in ids for parent in node.parents)


def _line(node: Tag | NavigableString | None) -> str:
    while node is not None and not isinstance(node, Tag):
        node = node.parent
    if node is None or node.sourceline is None:
        return "line ?"
    return f"line {node.sourceline} col {(node.sourcepos or 0) + 1}"


# --- record collection --------------------------------------------------------------------------


class _Out(Collector):
    """Records of one page under the shared rules (``pipeline.assemble.collector``).

    ``result`` shares the collector's lists, so it is the page's ``ParseResult``; ``flag`` and
    ``gap`` take (table, entity, flag or field, detail, locator) as the collector does.
    """

    def __init__(self, source: Source) -> None:
        super().__init__(source.source_id)
        self.source = source
        self.result = ParseResult(records=self.records, rejects=self.rejects, duplicates=self.duplicates)


# --- one datasheet ------------------------------------------------------------------------------


@dataclass
class _Profile:
    wrap: Tag
    values: list[tuple[str | None, str, Tag]]  # (label or None, value text, value element)
    model_name: str | None
    base: Tag | None
    invul: Tag | None = None
    invul_comment: Tag | None = None


class _Sheet:
    """Reads one ``div.dsOuterFrame`` into records (see the module docstring)."""

    def __init__(
        self, frame: Tag, page: _Page, out: _Out, edition: int, faction_id: str, anchor: str | None
    ) -> None:
        self.frame, self.page, self.out = frame, page, out
        self.source = out.source
        self.edition, self.faction_id, self.anchor = edition, faction_id, anchor
        self.name = ""
        self.ds_id = ""
        self.composition: list[UnitComposition] = []  # this datasheet's rows
        self.alternatives = False
        self.option_line = 0  # last WargearOption.line of this datasheet
        self.cost_line = 0  # last UnitCost.line of this datasheet

    # records ---------------------------------------------------------------------------------

    def _p(self) -> dict:
        return {"source_id": self.source.source_id}

    def _ds_ref(self, name: str, faction: str | None) -> str:
        return datasheet_id(self.edition, faction or self.faction_id, name)

    # entry -----------------------------------------------------------------------------------

    def read(self) -> None:
        banner = self.frame.find("div", class_="dsBannerWrap", recursive=False)
        header = banner.find("div", class_="dsH2Header") if isinstance(banner, Tag) else None
        name_div = None
        if isinstance(header, Tag):
            name_div = next(
                (c for c in header.find_all("div", recursive=False) if not classes(c)), None
            )
        self.name = text_of(name_div)
        if not self.name:
            self.out.reject(
                "datasheets",
                f"{_line(self.frame)}: div.dsOuterFrame",
                text_of(self.frame)[:500],
                "datasheet without a name (no .dsH2Header > div)",
            )
            return
        self.ds_id = self._ds_ref(self.name, None)
        for child in self.frame.children:
            if isinstance(child, NavigableString):
                self._stray_text(child, "datasheets")
                continue
            if not isinstance(child, Tag):
                continue
            cls = classes(child)
            if "dsBannerWrap" in cls:
                self._banner(child)
            elif "ShowDatasheetFeatures" in cls:
                self._features(child)
            elif "ds2colKW" in cls:
                self._keywords(child)
            elif "ds2col" in cls:
                self._columns(child)
            else:
                self._unrecognised(child, "datasheets", "block in div.dsOuterFrame")
        self._datasheet(banner)

    def _datasheet(self, banner: Tag | None) -> None:
        role = self._role()
        legend_tag = banner.find(class_="picLegend") if isinstance(banner, Tag) else None
        legend = fold(str(legend_tag.get("title") or "")) if isinstance(legend_tag, Tag) else ""
        external = self.page.path
        if external and self.anchor:
            external = f"{external}#{self.anchor}"
        printed = PrintedDatasheet(f"{_line(self.frame)}: div.dsOuterFrame '{self.name}'", self.name, self.faction_id,
                                   self.source.edition or self.edition, self.source.game_mode, role, legend, external)
        self.out.add(assemble_datasheet(printed, self.source.source_id, self.ds_id, self.composition))
        logo = banner.find("img", class_="logo3") if isinstance(banner, Tag) else None
        if isinstance(logo, Tag) and logo.get("title"):
            self.out.reject(
                "datasheets",
                f"{_line(logo)}: publication of '{self.name}'",
                fold(str(logo.get("title"))),
                "publication has no column (proposed: datasheets.publication)",
            )

    def _role(self) -> str | None:
        nav, path = self.page.nav, self.page.path
        if nav is None or not path:
            return None
        target = f"{path}#{self.anchor}" if self.anchor else path
        link = nav.find("a", href=target)
        if not isinstance(link, Tag):
            return None
        heading = link.find_previous("b", class_="BatRole")
        return text_of(heading) or None

    # generic checks ---------------------------------------------------------------------------

    def _stray_text(self, node: NavigableString, table: str) -> None:
        if text_of(node):
            self.out.reject(
                table,
                f"{_line(node.parent)}: text",
                text_of(node),
                "unrecognised text in the datasheet",
            )

    def _unrecognised(self, tag: Tag, table: str, what: str) -> None:
        if not text_of(tag):
            return  # an empty layout element (clear:both, spacer)
        self.out.reject(
            table,
            f"{_line(tag)}: {tag.name}.{'.'.join(sorted(classes(tag))) or '-'}",
            block_text(str(tag))[:2000],
            f"unrecognised {what}",
        )

    # banner: name, profiles, invulnerable saves -------------------------------------------------

    def _banner(self, banner: Tag) -> None:
        profiles: list[_Profile] = []
        header_base = None
        for child in banner.children:
            if isinstance(child, NavigableString):
                self._stray_text(child, "model_profiles")
                continue
            if not isinstance(child, Tag):
                continue
            cls = classes(child)
            if "dsH2Header" in cls:
                header_base = child.find(class_="dsModelBase2")
                name_div = next(
                    (c for c in child.find_all("div", recursive=False) if not classes(c)), None
                )
                for sub in child.children:
                    if isinstance(sub, NavigableString):
                        self._stray_text(sub, "datasheets")
                    elif isinstance(sub, Tag) and sub is not name_div and sub is not header_base:
                        if not classes(sub) & _CHROME_CLASSES:
                            self._unrecognised(sub, "datasheets", "element in the datasheet header")
            elif "dsProfileBaseWrap" in cls:
                profiles.append(self._profile_values(child))
            elif "dsInvulWrap" in cls:
                if profiles:
                    profiles[-1].invul = child
                else:
                    self._unrecognised(
                        child, "model_profiles", "invulnerable save before a profile"
                    )
            elif "dsInvulComment" in cls:
                if profiles and profiles[-1].invul is not None:
                    profiles[-1].invul_comment = child
                else:
                    self._unrecognised(
                        child, "model_profiles", "invulnerable save note without a box"
                    )
            elif not cls & _CHROME_CLASSES:
                self._unrecognised(child, "datasheets", "element in the datasheet banner")
        if not profiles:
            self.out.gap(
                "model_profiles", self.ds_id, "*", "no characteristics on the page", _line(banner)
            )
            return
        if isinstance(header_base, Tag) and text_of(header_base):
            if len(profiles) == 1 and profiles[0].base is None:
                profiles[0].base = header_base
            else:
                self.out.reject(
                    "model_profiles",
                    f"{_line(header_base)}: base size of '{self.name}'",
                    text_of(header_base),
                    "base size has no column (proposed: model_profiles.base_size)",
                )
        labels = [label for label, _, _ in profiles[0].values]
        for number, profile in enumerate(profiles, start=1):
            self._profile(number, profile, labels, len(profiles))
        boxes = [p for p in profiles if p.invul is not None]
        if len(profiles) > 1 and 0 < len(boxes) < len(profiles):
            for p in boxes:
                assert p.invul is not None
                if "*" not in text_of(p.invul):
                    self.out.flag(
                        "model_profiles",
                        self.ds_id,
                        "invulnerable_save_attribution",
                        f"{len(boxes)} invulnerable save box(es) for {len(profiles)} profiles: "
                        "each applied to the profile it follows only",
                        _line(p.invul),
                    )
                    break

    def _profile_values(self, wrap: Tag) -> _Profile:
        values = []
        for char in wrap.find_all("div", class_=re.compile(r"^dsCharWrap")):
            name_tag = char.find("div", class_="dsCharName")
            value_tag = char.find("div", class_="dsCharValue")
            if not isinstance(value_tag, Tag):
                self._unrecognised(char, "model_profiles", "characteristic without a value")
                continue
            label = text_of(name_tag) if isinstance(name_tag, Tag) else None
            values.append((label or None, text_of(value_tag), value_tag))
        model = wrap.find("span", class_="dsModelName")
        base = wrap.find("span", class_="dsModelBase")
        return _Profile(
            wrap=wrap,
            values=values,
            model_name=text_of(model) or None if isinstance(model, Tag) else None,
            base=base if isinstance(base, Tag) else None,
        )

    def _profile(self, number: int, profile: _Profile, first_labels: list, count: int) -> None:
        model_name = profile.model_name or self.name
        where = f"{_line(profile.wrap)}: profile {number} '{model_name}'"
        raw: dict[str, str] = {}
        for index, (label, value, tag) in enumerate(profile.values):
            if label is None:
                label = first_labels[index] if index < len(first_labels) else None
            if label is None:
                self.out.reject(
                    "model_profiles",
                    f"{_line(tag)}: profile {number} value {index + 1}",
                    value,
                    "characteristic without a label (and no label at this position in profile 1)",
                )
                continue
            name = CHARACTERISTIC_LABELS.get(label.casefold())
            if name is None:
                self.out.reject(
                    "model_profiles",
                    f"{_line(tag)}: profile {number} {label}",
                    f"{label}: {value}",
                    f"unknown characteristic label {label!r} "
                    f"(known: {', '.join(sorted(CHARACTERISTIC_LABELS))})",
                )
                continue
            if name in raw:
                self.out.reject(
                    "model_profiles",
                    f"{_line(tag)}: profile {number} {label}",
                    f"{label}: {value}",
                    f"characteristic {label!r} printed twice in one profile",
                )
                continue
            raw[name] = value
        invul, note = self._invulnerable(profile, model_name, count) if profile.invul is not None else (None, None)
        printed = PrintedModel(
            locator=where, line=number, name=model_name, move=raw.get("move"),
            toughness=raw.get("toughness"), save=raw.get("save"), wounds=raw.get("wounds"),
            leadership=raw.get("leadership"), objective_control=raw.get("objective_control"),
            invulnerable_save=invul, invulnerable_save_note=note,
        )
        assemble_model(printed, self.source.source_id, self.ds_id).into(self.out, where)
        if profile.base is not None and text_of(profile.base):
            self.out.reject(
                "model_profiles",
                f"{_line(profile.base)}: base size of profile {number} '{model_name}'",
                text_of(profile.base),
                "base size has no column (proposed: model_profiles.base_size)",
            )

    def _invulnerable(self, profile: _Profile, model_name: str, count: int) -> tuple[str, str | None]:
        """The invulnerable save box of a profile as printed: (value with its ``*``, note). A
        note is also kept as an ability of the datasheet, as the page prints it."""
        box = profile.invul
        assert box is not None
        label = text_of(box.find(class_="dsCharInvulText"))
        value_tag = box.find(class_="dsCharInvulValue")
        if isinstance(value_tag, Tag):
            value = text_of(value_tag)
        else:
            value = text_of(box).replace(label, "").strip()
        note = text_of(profile.invul_comment) or None
        starred = "*" in label or "*" in value
        printed = value if "*" in value or not starred else f"{value}*"
        if note:
            name = "Invulnerable Save" if count == 1 else f"Invulnerable Save ({model_name})"
            self._ability(f"{_line(profile.invul_comment)}: invulnerable save note", "datasheet", name, note,
                          value.rstrip("*"))
        return printed, note

    # columns: weapons, sections ------------------------------------------------------------------

    def _columns(self, block: Tag) -> None:
        for child in block.children:
            if isinstance(child, NavigableString):
                self._stray_text(child, "datasheets")
            elif isinstance(child, Tag):
                cls = classes(child)
                if cls & {"dsLeftCol", "dsRightCol", "dsLeftColFlat", "dsRightColFlat"}:
                    self._column(child)
                else:
                    self._unrecognised(child, "datasheets", "block in div.ds2col")

    def _column(self, column: Tag) -> None:
        section: tuple[str, str, Tag] | None = None  # (kind, printed title, header tag)
        for child in self._flatten(column):
            if isinstance(child, NavigableString):
                self._stray_text(child, "datasheets")
                continue
            cls = classes(child)
            if child.name == "table" and "wTable" in cls:
                self._weapons(child)
            elif "dsHeader" in cls:
                section = self._section_kind(child)
            elif child.name == "br" or "dsLineHor" in cls:
                continue
            elif section is None:
                self._unrecognised(child, "datasheets", "element before any section header")
            else:
                self._section_item(section, child)

    def _flatten(self, container: Tag):
        """Children of a column; a plain ``<div>`` wrapping a header and its boxes is opened."""
        for child in container.children:
            if isinstance(child, Tag) and child.name == "div" and not classes(child):
                if child.find(class_="dsHeader", recursive=False) is not None:
                    yield from self._flatten(child)
                    continue
            if isinstance(child, (Tag, NavigableString)):
                yield child

    @staticmethod
    def _section_kind(header: Tag) -> tuple[str, str, Tag]:
        title = text_of(header)
        key = title.casefold().split(":", 1)[0].strip()
        return SECTIONS.get(key, "special"), title, header

    def _section_item(self, section: tuple[str, str, Tag], item: Tag) -> None:
        kind, title, header = section
        cls = classes(item)
        if kind == "wargear-options":
            self._wargear_option(item)
            return
        if "dsAbility" not in cls:
            self._unrecognised(item, "abilities", f"element in section {title!r}")
            return
        if item.find("div", class_="PriceTag") is not None:
            self._costs(item)
        elif kind == "abilities":
            self._abilities(item, "datasheet")
        elif kind == "wargear-abilities":
            self._abilities(item, "wargear")
        elif kind == "composition":
            self._composition(item)
        elif kind == "leader":
            self._leaders(item, "leader", title)
        elif kind == "damaged":
            m = _DAMAGED.match(title)
            self._box(item, "other", "Damaged", (m.group("param") if m else title) or None)
        elif kind == "transport":
            self._box(item, "other", "Transport", None)
        else:  # a special box: SUPREME COMMANDER, ORDERS, ...
            self._box(item, "other", title, None)

    def _box(self, item: Tag, kind: str, name: str, parameter: str | None) -> None:
        self._ability(f"{_line(item)}: {name}", kind, name, block_text(item.decode_contents()), parameter)

    def _ability(self, locator: str, kind: str, name: str, text: str | None, parameter: str | None = None) -> None:
        printed = PrintedAbility(locator, kind, name, text, parameter)
        self.out.add(assemble_ability(printed, self.source.source_id, self.ds_id))

    # weapons -----------------------------------------------------------------------------------

    def _weapons(self, table: Tag) -> None:
        is_melee: bool | None = None
        columns: list[str] | None = None
        for row in table.find_all("tr"):
            if row.find("td", class_="wTable_WEAPON") is not None:
                is_melee, columns = self._weapon_header(row)
            elif "wTable2_long" in classes(row):
                self.out.result.boilerplate["weapon name row (narrow-layout copy)"] += 1
            elif row.find("td", class_="wTable2_short") is not None:
                if is_melee is None or columns is None:
                    self.out.reject(
                        "weapon_profiles",
                        f"{_line(row)}: weapon row",
                        " | ".join(text_of(c) for c in row.find_all("td")),
                        "weapon row under a table header that was not understood",
                    )
                    continue
                self._weapon(row, is_melee, columns)
            else:
                self._unrecognised(row, "weapon_profiles", "weapon table row")

    def _weapon_header(self, row: Tag) -> tuple[bool | None, list[str] | None]:
        cells = row.find_all("td", recursive=False)
        title_cell = row.find("td", class_="wTable_WEAPON")
        title = text_of(title_cell)
        at = _index(cells, title_cell)
        if at is None:
            self.out.reject("weapon_profiles", f"{_line(row)}: weapon table header", title,
                            "the weapon table's title cell is inside another cell, not a cell of its row")
            return None, None
        labels = [text_of(c) for c in cells[at + 1 :]]
        is_melee = WEAPON_TABLES.get(title.casefold())
        columns = [WEAPON_COLUMNS.get(label.casefold()) for label in labels]
        problem = None
        if is_melee is None:
            problem = f"unknown weapon table title {title!r} (known: {', '.join(WEAPON_TABLES)})"
        elif None in columns:
            unknown = [lab for lab, col in zip(labels, columns) if col is None]
            known = ", ".join(WEAPON_COLUMNS)
            problem = f"unknown weapon column label(s) {unknown} (known: {known})"
        elif sorted(columns) != sorted(set(WEAPON_COLUMNS.values())):  # type: ignore[type-var]
            problem = f"weapon columns {labels} are not RANGE, A, BS/WS, S, AP, D once each"
        if problem:
            where = f"{_line(row)}: weapon table header"
            self.out.reject("weapon_profiles", where, f"{title} | {labels}", problem)
            return None, None
        return is_melee, columns  # type: ignore[return-value]

    def _weapon(self, row: Tag, section_melee: bool, columns: list[str]) -> None:
        cells = row.find_all("td", recursive=False)
        name_cell = row.find("td", class_="wTable2_short")
        at = _index(cells, name_cell)
        if at is None:
            self.out.reject("weapon_profiles", f"{_line(row)}: weapon row", text_of(row)[:500],
                            "the weapon's name cell is inside another cell, not a cell of its row")
            return
        values = [text_of(c) for c in cells[at + 1 :]]
        ability_spans = name_cell.find_all("span", class_="kwbw")
        items = [item for span in ability_spans for item in split_ability_items(text_of(span))]
        name_strings = name_cell.find_all(string=True)
        printed = fold("".join(str(s) for s in name_strings if not _inside(s, ability_spans)))
        abilities_text = ", ".join(items)
        raw_row = f"{printed} [{abilities_text}] | " + " | ".join(values)
        where = f"{_line(row)}: weapon '{printed}'"
        if len(values) != len(columns) or not printed.strip("➤ "):
            self.out.reject(
                "weapon_profiles", where, raw_row, f"expected {len(columns)} values and a name"
            )
            return
        by_column = dict(zip(columns, values))
        line = PrintedWeapon(
            locator=where, name=printed, range=by_column["range"], attacks=by_column["attacks"],
            skill=by_column["skill"], strength=by_column["strength"],
            armour_penetration=by_column["armour_penetration"], damage=by_column["damage"],
            abilities=abilities_text, is_melee=section_melee,
        )
        try:
            assembled = assemble_weapon(line, self.source.source_id, self.ds_id)
        except NormaliseError as err:
            self.out.reject("weapon_profiles", where, raw_row, str(err))
            return
        assembled.into(self.out, where)

    def _wargear_option(self, item: Tag) -> None:
        """One element of the WARGEAR OPTIONS section: a list of options or a note under it."""
        if item.name == "ul":
            for li in item.find_all("li", recursive=False):
                self._option_line(li, footnote=False)
        elif "dsOptionsComment" in classes(item):
            self._option_line(item, footnote=True)
        else:
            self._unrecognised(item, "wargear_options", "element in section 'WARGEAR OPTIONS'")

    def _option_line(self, item: Tag, footnote: bool) -> None:
        text = block_text(item.decode_contents())
        if not text:
            return  # an empty list item or note: nothing printed
        self.option_line += 1
        what = "wargear options footnote" if footnote else "wargear option"
        self.out.add(
            WargearOption(
                **self._p(),
                locator=f"{_line(item)}: {what} {self.option_line}",
                datasheet_id=self.ds_id,
                line=self.option_line,
                text=text,
                is_footnote=footnote,
            )
        )

    # abilities ---------------------------------------------------------------------------------

    def _abilities(self, box: Tag, kind: str) -> None:
        full = text_of(box)
        label, _, rest = full.partition(":")
        named_kind = ABILITY_LABELS.get(label.strip().casefold())
        if named_kind is not None and rest.strip():
            for item in (fold(x) for x in rest.split(",")):
                if item:
                    self._ability(f"{_line(box)}: {label.strip()} {item}", named_kind, item, None)
            return
        segments: list[tuple[str | None, Tag | None, list]] = []
        for child in box.children:
            if isinstance(child, Tag) and child.name in ("b", "strong"):
                heading = text_of(child)
                if heading.endswith(":") and len(heading) > 1:
                    segments.append((heading[:-1].strip(), child, []))
                    continue
            if isinstance(child, Tag) and "dsLineHor" in classes(child):
                continue
            if not segments:
                segments.append((None, None, []))
            segments[-1][2].append(child)
        for name, heading, parts in segments:
            body = block_text("".join(str(p) for p in parts))
            if name is None:
                if body:
                    self.out.reject(
                        "abilities",
                        f"{_line(box)}: ability text",
                        body,
                        "ability text without a bold name",
                    )
                continue
            self._ability(f"{_line(heading)}: ability '{name}'", kind, name, body)

    # composition, loadout, points ---------------------------------------------------------------

    def _composition(self, box: Tag) -> None:
        line = 0
        loadout_line = 0
        option_starts: list[int] = [1]
        loadout: tuple[Tag, list] | None = None

        def close_loadout() -> None:
            nonlocal loadout, loadout_line
            if loadout is None:
                return
            heading, parts = loadout
            loadout = None
            equipment = fold(" ".join(text_of(p) for p in parts)).rstrip(".").strip()
            printed = fold(f"{text_of(heading)} {equipment}.")
            loadout_line += 1
            where = f"{_line(heading)}: loadout {loadout_line}"
            record = assemble_loadout(printed, source_id=self.source.source_id, locator=where,
                                      datasheet_id=self.ds_id, line=loadout_line, printed=printed)
            if record is None:
                self.out.reject("wargear_loadouts", where, printed,
                                "not a loadout line ('<models> is/are equipped with: <equipment>')")
                return
            self.out.add(record)

        for child in box.children:
            if isinstance(child, Tag) and child.name == "ul":
                close_loadout()
                for li in child.find_all("li", recursive=False):  # a keyword tag is not part of the name
                    line = self._composition_line(li, line, _KEYWORD_TAG.sub("", text_of(li)))
                continue
            if isinstance(child, Tag) and child.name in ("b", "strong"):
                heading = text_of(child)
                if is_alternative(heading):
                    close_loadout()
                    self.alternatives = True
                    line = self._composition_line(child, line)
                    option_starts.append(line + 1)
                    continue
                if _EQUIPPED.match(heading):
                    close_loadout()
                    loadout = (child, [])
                    continue
            if isinstance(child, Tag) and child.name == "br":
                close_loadout()
                continue
            if loadout is not None:
                loadout[1].append(child)
                continue
            if isinstance(child, NavigableString):
                self._stray_text(child, "unit_composition")
            elif isinstance(child, Tag) and text_of(child):
                self.out.reject(
                    "datasheets",
                    f"{_line(child)}: unit composition note",
                    block_text(str(child)),
                    "note under the unit composition has no column "
                    "(proposed: datasheets.composition_note)",
                )
        close_loadout()
        if self.alternatives:
            # each alternative ends on the line before the next one's OR row
            ranges = [
                f"lines {start}-{end}" if end > start else f"line {start}"
                for start, end in zip(option_starts, [s - 2 for s in option_starts[1:]] + [line])
            ]
            self.out.flag(
                "unit_composition",
                self.ds_id,
                "alternative_compositions",
                " OR ".join(ranges),
                f"{_line(box)}: unit composition",
            )

    def _composition_line(self, tag: Tag, line: int, models: str | None = None) -> int:
        """One composition line after row ``line`` (``pipeline.assemble.composition``: a line that
        is no model line, ``OR``, is a row too); returns the number of its last row."""
        printed = PrintedComposition(f"{_line(tag)}: composition line {{line}}", text_of(tag), models)
        assembled = assemble_composition(printed, self.source.source_id, self.ds_id, line + 1)
        for record in assembled.records:
            self.out.add(record)
        for note in assembled.notes:
            self.out.flag(note.table, note.entity, note.code, note.detail, note.locator or printed.locator)
        self.composition += assembled.records  # type: ignore[arg-type]
        return line + len(assembled.records)

    def _costs(self, box: Tag) -> None:
        """The points table: one ``UnitCost`` per row (``10 models`` | ``PriceTag 65``)."""
        for row in box.find_all("tr"):
            cells = row.find_all("td", recursive=False)
            printed = " | ".join(text_of(c) for c in cells if text_of(c))
            if not printed:
                continue
            prices = [c for c in cells if c.find("div", class_="PriceTag") is not None]
            described = [c for c in cells if all(c is not p for p in prices) and text_of(c)]
            if len(prices) != 1 or not described:
                self.out.reject(
                    "unit_costs",
                    f"{_line(row)}: points",
                    printed,
                    "points row is not one description and one price",
                )
                continue
            price = text_of(prices[0])
            m = _PRICE.match(price)
            if not m:
                self.out.reject(
                    "unit_costs", f"{_line(row)}: points", printed, f"not a points cost: {price!r}"
                )
                continue
            self.cost_line += 1
            self.out.add(
                UnitCost(
                    **self._p(),
                    locator=f"{_line(row)}: points line {self.cost_line}",
                    datasheet_id=self.ds_id,
                    line=self.cost_line,
                    description="\n".join(block_text(c.decode_contents()) for c in described),
                    cost_points=int(m.group("points")),
                    is_addon=bool(m.group("addon")),
                )
            )

    # leaders -------------------------------------------------------------------------------------

    def _leaders(self, box: Tag, side: str, title: str) -> None:
        intro_parts = []
        for child in box.children:
            if isinstance(child, Tag) and child.name == "ul":
                for li in child.find_all("li", recursive=False):
                    self._leader_link(li, side, title)
            elif isinstance(child, NavigableString) or isinstance(child, Tag):
                if text_of(child):
                    intro_parts.append(child)
        rest = fold(" ".join(text_of(p) for p in intro_parts))
        for known in sorted(LEADER_INTROS, key=len, reverse=True):
            if rest.casefold().startswith(known):
                rest = rest[len(known) :].lstrip(": ").strip()
                break
        if rest:
            self.out.reject(
                "leader_links",
                f"{_line(box)}: {title} note",
                rest,
                "text in the leader list has no column (proposed: datasheets.leader_note)",
            )

    def _leader_link(self, li: Tag, side: str, title: str) -> None:
        link = li.find("a")
        name = text_of(link) if isinstance(link, Tag) else text_of(li)
        if not name:
            return
        _, _, faction = path_parts(
            f"https://x{link.get('href')}" if isinstance(link, Tag) and link.get("href") else None
        )
        other = self._ds_ref(name, faction)
        leader, bodyguard = (self.ds_id, other) if side == "leader" else (other, self.ds_id)
        leader_name, bodyguard_name = (self.name, name) if side == "leader" else (name, self.name)
        self.out.add(
            LeaderLink(
                **self._p(),
                locator=f"{_line(li)}: {title} '{name}'",
                leader_datasheet_id=leader,
                bodyguard_datasheet_id=bodyguard,
                leader_name=leader_name,
                bodyguard_name=bodyguard_name,
            )
        )

    # keywords ----------------------------------------------------------------------------------

    def _keywords(self, block: Tag) -> None:
        for child in block.children:
            if isinstance(child, NavigableString):
                self._stray_text(child, "keywords")
            elif isinstance(child, Tag):
                cls = classes(child)
                if cls & {"dsLeftColKW"}:
                    self._keyword_column(child, False)
                elif cls & {"dsRightColKW"}:
                    self._keyword_column(child, True)
                else:
                    self._unrecognised(child, "keywords", "block in the keywords bar")

    def _keyword_column(self, column: Tag, faction: bool) -> None:
        groups: list[tuple[str, list[str]]] = []
        label = ""
        pending: list[str] = []
        for child in column.children:
            if isinstance(child, Tag) and "dsVertLine" in classes(child):
                groups.append((label, pending))
                label, pending = "", []
                continue
            piece = str(child) if isinstance(child, NavigableString) else child.get_text()
            if isinstance(child, NavigableString) and ":" in piece:
                before, _, after = piece.partition(":")
                if pending and fold(" ".join(pending)):
                    groups.append((label, pending))
                    pending = []
                label = fold(before)
                piece = after
            pending.append(piece)
        groups.append((label, pending))
        for label, pieces in groups:
            scope = re.sub(r"^(?:FACTION\s+)?KEYWORDS\s*(?:[-–—]\s*)?", "", label, flags=re.I)
            scope = "" if scope.casefold() in ("", "all models") else scope
            for keyword in read_keywords("".join(pieces)):
                if not keyword:
                    continue
                where = f"{_line(column)}: {'faction keyword' if faction else 'keyword'} {keyword}"
                self.out.add(
                    Keyword(
                        **self._p(),
                        locator=where,
                        datasheet_id=self.ds_id,
                        keyword=keyword,
                        is_faction_keyword=faction,
                    )
                )
                if scope:
                    self.out.flag(
                        "keywords",
                        f"{self.ds_id}/{keyword}",
                        "keyword_model_scope",
                        f"{keyword}: {scope} only",
                        where,
                    )

    # features below the keywords bar ----------------------------------------------------------

    def _features(self, block: Tag) -> None:
        for column in block.children:
            if isinstance(column, NavigableString):
                self._stray_text(column, "datasheets")
                continue
            if not isinstance(column, Tag):
                continue
            section: str | None = None
            title = ""
            for child in self._flatten(column):
                if isinstance(child, NavigableString):
                    self._stray_text(child, "datasheets")
                    continue
                cls = classes(child)
                if "dsHeader" in cls:
                    title = text_of(child)
                    section = FEATURE_SECTIONS.get(title.casefold())
                    if section is None:
                        self._unrecognised(child, "datasheets", "section under the keywords bar")
                elif section == "led-by" and "dsAbility" in cls:
                    self._leaders(child, "led-by", title)
                elif section is not None and section != "led-by":
                    items = child.find_all(class_=section)
                    self.out.result.boilerplate[f"datasheet features: {title.casefold()}"] += len(
                        items
                    )
                elif child.name != "br" and "dsLineHor" not in cls:
                    self._unrecognised(child, "datasheets", "element under the keywords bar")


# --- core-rule tooltips -------------------------------------------------------------------------

_TOOLTIP = re.compile(
    r'<div class="tooltip_templates"><span id="tooltip_content\w+"><div class="tooltip_header">([^<]+)</div>'
    r'<a href="/wh40k10ed/the-rules/core-rules/[^"]*"><div class="tooltip_link"></div></a>'
    r'(?:<div style="clear:both"></div>)?')
_SPAN_TAG = re.compile(r"<span\b|</span>")


def _tooltip_body(text: str, start: int) -> str:
    """The HTML from ``start`` to the ``</span>`` closing the tooltip's span (nested spans kept).

    >>> _tooltip_body('a <span class="k">[X]</span> b</span></div>', 0)
    'a <span class="k">[X]</span> b'
    """
    depth = 0
    for m in _SPAN_TAG.finditer(text, start):
        if m.group() == "</span>":
            if depth == 0:
                return text[start:m.start()]
            depth -= 1
        else:
            depth += 1
    return text[start:]


def core_rule_tooltip_count(text: str) -> int:
    """How many core-rule tooltips a saved page holds (repeats included)."""
    return sum(1 for _ in _TOOLTIP.finditer(text))


def core_rule_tooltips(text: str, source: Source) -> list[RuleText]:
    """The core rules a saved Wahapedia 10th-edition page holds in its tooltips
    (``div.tooltip_templates`` whose link goes to ``/wh40k10ed/the-rules/core-rules/``: Hit
    Roll, Wound Roll, Saving Throw, Mortal Wounds, Devastating Wounds, ...), one ``RuleText``
    per rule (the first of repeats), keyed as the other sources' rules are
    (``aliases.rule_key_from_name``), located ``line N: tooltip 'Hit Roll'``. The faction's
    own rules (Oath of Moment) link elsewhere and are left to the datasheet's abilities."""
    from pipeline.aliases import rule_key_from_name

    out: list[RuleText] = []
    seen: set[str] = set()
    for m in _TOOLTIP.finditer(text):
        title = clean_line(m.group(1))
        try:
            key = rule_key_from_name(title)
        except (NormaliseError, ValueError):
            continue
        body = html_to_text(_tooltip_body(text, m.end()))
        if key in seen or not body:
            continue
        seen.add(key)
        line = text.count("\n", 0, m.start()) + 1
        out.append(source_rule_text(source, f"line {line}: tooltip {title!r}", key, title, body))
    return out


# --- entry point --------------------------------------------------------------------------------


def parse(text: str, source: Source) -> ParseResult:
    """Parse one saved Wahapedia 10th-edition page into datasheet records.

    ``text`` is the whole HTML page; ``source`` gives ``source_id``, edition and game mode.
    Returns a ``ParseResult`` with the records listed in the module docstring; a page with no
    ``div.dsOuterFrame`` returns only a ``Reject`` (``not a datasheet page``). Never raises for
    page content: what cannot be read becomes a ``Reject`` or ``DataGap`` with its reason.
    """
    page = _read_page(text)
    try:
        result = _parse_page(page, source)
        if result.records:  # a datasheet page: its core-rule tooltips too
            tooltips = core_rule_tooltips(text, source)
            result.records.extend(tooltips)
            if core_rule_tooltip_count(text) > len(tooltips):
                result.duplicates["rule_texts"] += core_rule_tooltip_count(text) - len(tooltips)
        return result
    finally:  # the page's tree holds reference cycles: free it now, not at the end of the build
        page.soup.decompose()
        free_parse_trees()


def _parse_page(page: _Page, source: Source) -> ParseResult:
    out = _Out(source)
    frames = page.soup.find_all("div", class_=_FRAME_CLASS)
    page_raw = f"{page.title or '(no <title>)'} | {page.url or '(no canonical link)'}"
    if not frames:
        out.reject("datasheets", "page", page_raw, "not a datasheet page: no div.dsOuterFrame")
        return out.result
    edition = source.edition or page.url_edition
    if edition is None:
        reason = "no edition: the source states none and the URL has none"
        out.reject("datasheets", "page", page_raw, reason)
        return out.result
    if source.edition and page.url_edition and source.edition != page.url_edition:
        out.flag(
            "datasheets",
            page.path or "page",
            "edition_differs_from_url",
            f"source edition {source.edition}, URL edition {page.url_edition}",
            "page: canonical link",
        )
    faction_id = slug(page.faction_name) if page.faction_name else page.url_faction
    if not faction_id:
        out.reject("datasheets", "page", page_raw, "no faction: no page header and no faction URL")
        return out.result
    faction_where = f"{page.faction_line}: page header" if page.faction_line else "page header"
    if page.faction_name:
        out.add(
            Faction(
                source_id=source.source_id,
                locator=faction_where,
                faction_id=faction_id,
                name=page.faction_name,
            )
        )
        if page.url_faction and page.url_faction != faction_id:
            out.flag(
                "factions",
                faction_id,
                "faction_differs_from_url",
                f"header {page.faction_name!r}, URL faction {page.url_faction!r}",
                faction_where,
            )
    else:
        out.gap("factions", faction_id, "name", "no faction name in the page header", "page")
    anchors = [
        a for a in page.soup.find_all("a", recursive=False) if isinstance(a, Tag) and a.get("name")
    ]
    for frame in frames:
        anchor = None
        if len(frames) > 1:
            before = [a for a in anchors if (a.sourceline or 0) <= (frame.sourceline or 0)]
            anchor = str(before[-1].get("name")) if before else None
        _Sheet(frame, page, out, edition, faction_id, anchor).read()
    return out.result
