"""The one declaration of every record the pipeline produces.

Each class is a strict, frozen pydantic model. The SQL table of the same name is derived from it
(``schemas.tables``); nothing else declares columns. ``__table__`` names the table and
``__key__`` its natural primary key, chosen so that a rebuild from the same raw files gives the
same keys.

Every row carries its provenance: ``source_id`` (a row of ``sources``) and ``locator`` (where in
that source: ``line 120``, ``row 000000001``, ``section 24.23``).
"""

from __future__ import annotations

import datetime as dt
import operator
from functools import lru_cache
from typing import Callable, ClassVar

from pydantic import BaseModel, ConfigDict

from schemas.types import AbilityKind, ArmourPenetration, DiceExpr, Edition, GameMode, Leadership, RollTarget


class Record(BaseModel):
    """Base of every record: strict, frozen, no extra fields."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)

    __table__: ClassVar[str]
    __key__: ClassVar[tuple[str, ...]]

    def key(self) -> tuple:
        """The natural key of this row, as a tuple of field values."""
        return tuple(getattr(self, name) for name in self.__key__)


@lru_cache(maxsize=None)
def key_getter(record_type: type[Record]) -> Callable[[Record], tuple]:
    """A function that gives ``record.key()`` for the records of one class (same tuple, faster).

    >>> key_getter(Faction)(Faction(source_id="s", locator="l", faction_id="f", name="F"))
    ('f',)
    """
    names = record_type.__key__
    if len(names) == 1:
        get_one = operator.attrgetter(names[0])
        return lambda record: (get_one(record),)
    return operator.attrgetter(*names)  # type: ignore[return-value]


class Provenanced(Record):
    """A record that came from a source, with a locator inside it."""

    source_id: str
    locator: str


class Source(Record):
    """One raw snapshot: a page scrape, an export table, a game-system file."""

    __table__ = "sources"
    __key__ = ("source_id",)

    source_id: str
    title: str
    file: str  # path relative to the raw directory
    format: str  # a key of pipeline.extractors.EXTRACTORS
    publisher: str
    edition: Edition | None
    kind: str  # core-rules, index, codex, combat-patrol, export, rules-update, ...
    game_mode: GameMode | None  # None: applies to every game mode
    version: str | None
    version_date: dt.date | None
    origin: str
    url: str | None = None
    note: str | None = None
    sha256: str | None = None
    fetch_only: bool = False  # not kept in git: `wh40k fetch` brings it; the build skips it if absent


class Faction(Provenanced):
    __table__ = "factions"
    __key__ = ("faction_id",)

    faction_id: str
    name: str


class Datasheet(Provenanced):
    """A unit's datasheet as one source prints it.

    ``starting_strength`` is the model count the source states (``(10 MODELS)``); None when the
    source states a range instead (see ``unit_composition``).
    """

    __table__ = "datasheets"
    __key__ = ("datasheet_id",)

    datasheet_id: str
    name: str
    faction_id: str | None
    edition: Edition | None
    game_mode: GameMode | None
    starting_strength: int | None
    role: str | None = None
    legend: str | None = None
    external_id: str | None = None  # this row's source's own id (Wahapedia "000000001"), if any


class ExternalId(Provenanced):
    """A source's own id of a datasheet: Wahapedia's ``000000903``, a BattleScribe entry id
    (``f26d-450d-1c55-caeb``), a saved page's path.

    One row per datasheet and source that gives one: a datasheet merged from several sources has
    a row for each (``datasheets.external_id`` is the id in the source of that row only). The
    build derives the rows from the sources' datasheets; the ids differ by nature and are never a
    ``conflicts`` row.
    """

    __table__ = "external_ids"
    __key__ = ("datasheet_id", "source_id")

    datasheet_id: str
    external_id: str


class UnitComposition(Provenanced):
    """One row of a unit's composition, numbered from 1 in print order.

    A model group (``1 Sister Superior``, ``4-9 Battle Sisters``; a printed line ``1 Sergeant
    and 9 Troopers`` is two rows, each with the printed line as ``text``), or a line that is not
    a model line, with no model name and no counts (``OR`` between alternative compositions, a
    size cap). The reading is ``pipeline.assemble.composition``, the same for every source.
    """

    __table__ = "unit_composition"
    __key__ = ("datasheet_id", "line")

    datasheet_id: str
    line: int
    model_name: str
    min_models: int | None
    max_models: int | None
    text: str


class WargearLoadout(Provenanced):
    """One loadout line: ``6 Battle Sisters are equipped with: bolt pistol; boltgun; ...``.

    ``weapons`` is the semicolon-separated list of equipment names as printed.
    """

    __table__ = "wargear_loadouts"
    __key__ = ("datasheet_id", "line")

    datasheet_id: str
    line: int
    models: str  # "Every model", "The Sister Superior", "6 Battle Sisters"
    model_count: int | None
    equipment: str
    text: str


class ModelProfile(Provenanced):
    """The characteristics of one model line of a datasheet.

    Distances are in inches. A characteristic the source does not give is None and is listed in
    ``data_gaps``; a value is never invented.
    """

    __table__ = "model_profiles"
    __key__ = ("datasheet_id", "line")

    datasheet_id: str
    line: int
    model_name: str
    move_inches: int | None
    move_text: str | None
    toughness: int | None
    save: RollTarget | None
    invulnerable_save: RollTarget | None
    invulnerable_save_scope: str | None  # e.g. "ranged" when the InSv applies to ranged attacks only
    wounds: int | None
    leadership: Leadership | None
    objective_control: int | None
    invulnerable_save_note: str | None = None  # the note of a limited InSv ("4+*": "*Against ranged attacks only*")


class WeaponProfile(Provenanced):
    """One profile line of a weapon on a datasheet.

    Keyed by (datasheet, weapon name, melee or ranged, profile name): the same weapon name on two
    datasheets can have different values, and one weapon can have several profiles
    (``standard`` / ``supercharge``), mutually exclusive for each attack. ``skill`` is the
    Ballistic Skill (ranged) or Weapon Skill (melee) as a roll target; None for Torrent weapons
    (no hit roll). ``range_inches`` is None for melee weapons.
    """

    __table__ = "weapon_profiles"
    __key__ = ("datasheet_id", "weapon_name", "is_melee", "profile_name")

    datasheet_id: str
    weapon_name: str
    profile_name: str  # "" for a weapon with a single profile
    is_melee: bool
    range_inches: int | None
    attacks: DiceExpr
    skill: RollTarget | None
    strength: int | None
    armour_penetration: ArmourPenetration
    damage: DiceExpr
    abilities_text: str  # as printed, e.g. "anti-psyker 2+, devastating wounds"


class WeaponAbility(Provenanced):
    """One weapon ability with its parameters: ``RAPID FIRE 1``, ``ANTI-INFANTRY 4+``.

    ``name`` is the canonical upper-case name (``ANTI``, ``RAPID FIRE``, ``SUSTAINED HITS``);
    ``target_keyword`` the keyword of Anti-X; ``threshold`` the roll target of Anti-X;
    ``value`` the X of Rapid Fire, Sustained Hits, Melta, Blast (a dice expression).
    """

    __table__ = "weapon_abilities"
    __key__ = ("datasheet_id", "weapon_name", "is_melee", "profile_name", "position")

    datasheet_id: str
    weapon_name: str
    profile_name: str
    is_melee: bool
    position: int
    name: str
    target_keyword: str | None
    threshold: RollTarget | None
    value: DiceExpr | None
    raw_text: str
    condition: str | None = None  # 11th-edition forms such as "LETHAL HITS: non-MONSTER/VEHICLE"


class Ability(Provenanced):
    """An ability on a datasheet (core, faction, datasheet or wargear), with its text.

    ``parameter`` holds the value in names such as ``Feel No Pain 5+`` or ``Deadly Demise D3``.
    ``text`` is None when the datasheet only names the ability (core and faction abilities).
    """

    __table__ = "abilities"
    __key__ = ("datasheet_id", "kind", "name")

    datasheet_id: str
    kind: AbilityKind
    name: str
    parameter: str | None
    text: str | None


class FeelNoPain(Provenanced):
    """A Feel No Pain a datasheet's ability gives, read by ``pipeline.assemble.protection``.

    ``threshold``: the roll target (5 for ``5+``) of each damage point's roll. ``scope``: ``all``
    damage, ``mortal-wounds`` only or ``psychic`` attacks only. ``model_name``: the model line it
    is for, None for every model of the unit. ``condition``: the sentence when it applies only
    sometimes (a Leader's unit, an Aura, once per battle), None when always; the attack engine
    applies by default only those without one. Provenance: the ability's source and locator.
    """

    __table__ = "feel_no_pain"
    __key__ = ("datasheet_id", "ability_kind", "ability_name", "scope")

    datasheet_id: str
    ability_kind: AbilityKind
    ability_name: str
    scope: str
    threshold: RollTarget
    model_name: str | None
    condition: str | None


class Keyword(Provenanced):
    __table__ = "keywords"
    __key__ = ("datasheet_id", "keyword")

    datasheet_id: str
    keyword: str
    is_faction_keyword: bool


class LeaderLink(Provenanced):
    """A Leader that can be attached to a Bodyguard unit."""

    __table__ = "leader_links"
    __key__ = ("leader_datasheet_id", "bodyguard_datasheet_id")

    leader_datasheet_id: str
    bodyguard_datasheet_id: str
    leader_name: str | None = None  # as printed, so a link survives a renamed or missing datasheet
    bodyguard_name: str | None = None
    kind: str = "leader"  # "leader"; "support" for an 11th-edition Support unit (core rules, 19)


class Stratagem(Provenanced):
    """A Stratagem with its cost in Command points and its WHEN / TARGET / EFFECT text.

    ``category`` is printed as ``Core – Battle Tactic``: ``group`` is the part before the dash
    (``Core``, a detachment or Combat Patrol name) and ``type`` the part after it.
    """

    __table__ = "stratagems"
    __key__ = ("stratagem_id",)

    stratagem_id: str
    name: str
    cp_cost: int | None
    group: str
    type: str
    edition: Edition | None
    legend: str | None
    when: str | None
    target: str | None
    effect: str | None
    restrictions: str | None


class DatasheetStratagem(Provenanced):
    """A Stratagem listed on a datasheet."""

    __table__ = "datasheet_stratagems"
    __key__ = ("datasheet_id", "stratagem_id")

    datasheet_id: str
    stratagem_id: str


class Enhancement(Provenanced):
    __table__ = "enhancements"
    __key__ = ("enhancement_id",)

    enhancement_id: str
    name: str
    detachment: str | None
    is_default: bool | None
    cost_points: int | None
    legend: str | None
    text: str


class SecondaryObjective(Provenanced):
    __table__ = "secondary_objectives"
    __key__ = ("objective_id",)

    objective_id: str
    name: str
    group: str | None
    is_default: bool | None
    legend: str | None
    text: str


class Publication(Provenanced):
    """A Wahapedia publication (Source.csv): index, codex, faction pack, expansion, errata."""

    __table__ = "publications"
    __key__ = ("publication_id",)

    publication_id: str
    name: str
    type: str | None
    edition: Edition | None  # None for Wahapedia's "0" (no edition stated)
    version: str | None
    errata_date: dt.date | None  # None for Wahapedia's "01.01.0001" (no date)
    errata_url: str | None


class Detachment(Provenanced):
    __table__ = "detachments"
    __key__ = ("detachment_id",)

    detachment_id: str
    faction_id: str | None
    name: str
    legend: str | None
    type: str | None  # e.g. "Boarding Actions"
    detachment_points: int | None = None  # 11th edition: what the detachment costs of the army's Detachment Points
    force_disposition: str | None = None  # 11th edition, as printed


class DetachmentAbility(Provenanced):
    """A detachment rule (Detachment_abilities.csv) with its text."""

    __table__ = "detachment_abilities"
    __key__ = ("detachment_ability_id",)

    detachment_ability_id: str
    detachment_id: str | None
    detachment: str | None
    faction_id: str | None
    name: str
    legend: str | None
    text: str


class DatasheetDetachmentAbility(Provenanced):
    __table__ = "datasheet_detachment_abilities"
    __key__ = ("datasheet_id", "detachment_ability_id")

    datasheet_id: str
    detachment_ability_id: str


class DatasheetEnhancement(Provenanced):
    __table__ = "datasheet_enhancements"
    __key__ = ("datasheet_id", "enhancement_id")

    datasheet_id: str
    enhancement_id: str


class WargearOption(Provenanced):
    """One wargear option line: ``This model's big choppa can be replaced with 1 power klaw.``"""

    __table__ = "wargear_options"
    __key__ = ("datasheet_id", "line")

    datasheet_id: str
    line: int
    text: str
    is_footnote: bool  # printed with "*" instead of the bullet


class UnitCost(Provenanced):
    """The points cost of one unit size: ``5 models`` -> 110. ``is_addon`` for ``+55``.

    11th edition: a cost can hold from the Nth unit of the datasheet in an army on
    (``from_unit``: 1 for the 1st-2nd unit, 3 for the 3rd+ unit), and only with a keyword or
    detachment (``condition``, as printed: "IMPERIUM", "Veiled Blade Elimination Force").
    """

    __table__ = "unit_costs"
    __key__ = ("datasheet_id", "line")

    datasheet_id: str
    line: int
    description: str
    cost_points: int
    is_addon: bool
    model_count: int | None = None  # the unit size this cost is for, when the source gives it as a number
    from_unit: int = 1
    condition: str | None = None


class WargearCost(Provenanced):
    """The points a wargear choice adds to a unit (11th edition). Only choices that cost points:
    a free choice is no row, and a bracket header is never stored as a choice."""

    __table__ = "wargear_costs"
    __key__ = ("datasheet_id", "line")

    datasheet_id: str
    line: int
    option_text: str  # the wargear option as printed ("This model can be equipped with 1 ...")
    wargear: str  # the choice that costs points
    cost_points: int


class DamagedProfile(Provenanced):
    """A Damaged profile: while a model has ``min_wounds``-``max_wounds`` wounds remaining, its
    text applies (e.g. "subtract 1 from the Hit roll"). ``hit_roll_modifier`` and
    ``characteristic``/``change`` are what the text says as data where it is one plain change;
    None where it is not (the text stays)."""

    __table__ = "damaged_profiles"
    __key__ = ("datasheet_id", "line")

    datasheet_id: str
    line: int
    min_wounds: int | None
    max_wounds: int | None
    text: str
    hit_roll_modifier: int | None = None
    characteristic: str | None = None  # "A", "M", "OC", ... when the text changes one characteristic
    change: str | None = None  # the change as printed ("-1", "halve", "-2\"")


class SourceFile(Provenanced):
    """One file a source was read from, with its checksum (a folder source has one per file)."""

    __table__ = "source_files"
    __key__ = ("source_id", "file")

    file: str  # path relative to the source's folder (the file name for a one-file source)
    sha256: str
    bytes: int


class RuleText(Provenanced):
    """One wording of a rule, keyed by rule, edition, source, game mode and effective date.

    ``rule_key`` is the slug of the printed name with its parameter dropped (``lethal-hits``,
    ``feel-no-pain``); the same rule under another name in the other edition is joined through
    ``rule_aliases`` (``hazardous-test`` -> ``hazard-rolls``). ``section`` is the 11th-edition
    section number (``24.23``) or None; ``game_mode`` None means every game mode.
    """

    __table__ = "rule_texts"
    __key__ = ("rule_key", "source_id", "locator")

    rule_key: str
    title: str
    section: str | None
    edition: Edition | None
    game_mode: GameMode | None
    effective_date: dt.date | None
    text: str
    language: str = "en"  # the language of the wording (ISO 639-1: en, de, es, fr, it, ja, ko, zh)
    erratum_id: str | None = None  # a wording an erratum gives or one derived from it (errata table)


class RuleReference(Provenanced):
    """A cross reference from a rule section (``SEE ALSO``) to another section."""

    __table__ = "rule_references"
    __key__ = ("rule_key", "source_id", "referenced_section", "referenced_title")

    rule_key: str
    referenced_title: str
    referenced_section: str | None


class RuleAlias(Record):
    """A name by which a rule is also known, in one edition or across editions (kept as data)."""

    __table__ = "rule_aliases"
    __key__ = ("alias_key",)

    alias_key: str
    rule_key: str
    edition: Edition | None = None  # the edition whose wording uses this name; None: both
    note: str | None


class RulePart(Record):
    """In one edition, a rule has no wording of its own: it is worded as part of another rule.

    ``hazard-rolls`` in the 10th edition is worded in ``hazardous`` (the Hazardous ability says
    how to take a Hazardous test). Kept as data (``pipeline/rule_aliases.toml``, ``part_of``).
    """

    __table__ = "rule_parts"
    __key__ = ("rule_key", "edition")

    rule_key: str
    edition: Edition
    part_of_rule_key: str
    part_of_rule_name: str  # as printed: "Hazardous"
    note: str | None


class DataGap(Provenanced):
    """A value the source lost (e.g. characteristics missing from a page scrape): never invented."""

    __table__ = "data_gaps"
    __key__ = ("table_name", "entity_key", "field", "source_id")

    table_name: str
    entity_key: str
    field: str
    reason: str


class DataFlag(Provenanced):
    """A value that was loaded but looks wrong or incomplete, e.g. ``anti_missing_threshold``.

    ``flag`` is a stable code; ``detail`` says what was seen.
    """

    __table__ = "data_flags"
    __key__ = ("table_name", "entity_key", "flag", "source_id", "locator")

    table_name: str
    entity_key: str
    flag: str
    detail: str


class Reject(Provenanced):
    """An input row that could not be loaded, with its raw text and the reason."""

    __table__ = "rejects"
    __key__ = ("source_id", "table_name", "locator", "reason", "raw_text")

    table_name: str
    raw_text: str
    reason: str


class Conflict(Record):
    """Two sources disagree on a value: both values, both sources, and the pick."""

    __table__ = "conflicts"
    __key__ = ("table_name", "entity_key", "field", "source_id_a", "source_id_b")

    table_name: str
    entity_key: str
    field: str
    value_a: str | None
    source_id_a: str
    value_b: str | None
    source_id_b: str
    chosen_source_id: str
    reason: str


class Accounting(Record):
    """Per source, stage and table: input rows = loaded + duplicates + rejected.

    ``stage`` ``parse``: rows of an input table (tabular sources) or items of a record table
    (page text) as the parser read them; ``validate``: the parsed records of a table as the build
    merged, collapsed or rejected them.
    """

    __table__ = "build_accounting"
    __key__ = ("source_id", "stage", "table_name")

    source_id: str
    stage: str
    table_name: str
    input_rows: int
    loaded: int
    duplicates: int
    rejected: int


class SchemaInfo(Record):
    """What built the database: one row, written by the build's loader.

    ``schema_version``: ``schemas.catalog.schema_version()`` of the build (a hash of every
    table's declaration and of the views); a reader refuses a database of another version.
    ``project_version``: the version of wh40k-rules-db that built it.
    """

    __table__ = "schema_info"
    __key__ = ("schema_version",)

    schema_version: str
    project_version: str


class SourceAgreement(Record):
    """How two sources agree on one field of one table, as the build's merge compared them.

    When two sources give a row with the same key (the same datasheet, weapon profile, model
    line, ...), the merge compares the later source's row with the row kept (``source_id_a``:
    the first source in precedence that gave it; ``source_id_b``: the other). ``rows``: rows of
    the table both gave; ``compared``: of those, rows where both give the field a value;
    ``agreed`` + ``disagreed`` = ``compared`` (each disagreement is a ``conflicts`` row);
    ``only_a``, ``only_b``: rows where one source alone gives a value. The key fields are the
    match itself and are not counted. ``edition``: the edition of both sources (None when they
    differ: a table such as ``factions`` is shared by the editions).
    """

    __table__ = "source_agreement"
    __key__ = ("source_id_a", "source_id_b", "table_name", "field")

    edition: Edition | None
    source_id_a: str
    source_id_b: str
    table_name: str
    field: str
    rows: int
    compared: int
    agreed: int
    disagreed: int
    only_a: int
    only_b: int


class Erratum(Provenanced):
    """One entry of an errata and FAQ document, in one language: an erratum (``kind``
    ``erratum``: ``heading`` is the errata header, ``text`` the change, "Change 9\" to 8\".") or
    a question and its answer (``kind`` ``faq``: ``heading`` the question, ``text`` the answer,
    None when the document gives none). ``publication`` is the book it amends or answers for.

    ``change`` is the form of a mechanical erratum as the parser read it (``replace``: change
    one wording to another; ``add``, ``remove``: a word or keyword; ``remove-add``;
    ``change-to``: the whole wording replaced) or None (text only); ``derivation`` says what the
    build derived from it: ``derived`` (an earlier wording is stored in ``rule_texts`` with this
    ``erratum_id``), ``text-only`` or ``faq``; ``derivation_note`` why not, when not.
    """

    __table__ = "errata"
    __key__ = ("erratum_id", "language")

    erratum_id: str
    language: str
    kind: str  # erratum | faq
    edition: Edition | None
    publication_id: str | None
    publication: str
    heading: str | None
    text: str | None
    position: int  # the entry's place in the document (its order among the document's entries)
    change: str | None = None
    derivation: str = "text-only"
    derivation_note: str | None = None


class ErratumTarget(Provenanced):
    """What an erratum or FAQ entry targets: a datasheet, stratagem, enhancement, detachment,
    army rule, core rule section (``ruleContainer``) or publication, as the document names it.

    ``target_key``: the key the target's rows are found by (the slug of its English name; for a
    core rule its rule key, ``lethal-hits``); resolved to rows when queried (``pipeline.errata``).
    """

    __table__ = "erratum_targets"
    __key__ = ("erratum_id", "position")

    erratum_id: str
    position: int
    target_type: str
    target_id: str | None
    target_name: str
    target_key: str


class Effect(Provenanced):
    """One effect on an attack that a rule gives, read from its wording (``pipeline.effects``).

    The rule is the row ``rule_id`` (its key, ``|``-joined) of table ``rule_table``
    (``stratagems``, ``abilities``, ``detachment_abilities``, ``enhancements``; an Astra Militarum
    Order is a part of the ``rule_texts`` row of Voice of Command, ``rule_id`` naming the order;
    an army rule is a ``rule_texts`` row titled as a faction ability, such as Oath of Moment);
    ``rule_kind`` is ``stratagem``, ``datasheet-ability``, ``detachment-rule``, ``enhancement``,
    ``order`` or ``army-rule``. ``faction_id``: the faction whose rule it is (None: a core rule, or
    an army rule of several factions). ``side``:
    ``attacker`` (a rule of the attacking unit: "each time a model in your unit makes an attack")
    or ``target`` (one of the unit attacked: "each time an attack targets your unit", a Feel No
    Pain). ``effect``, ``roll``, ``characteristic``, ``value``, ``parameter``, ``weapon_type`` and
    ``conditions`` are the terms of ``pipeline.effects.vocabulary`` (``value`` of a characteristic
    change counts steps of improvement: +1 improves BS 3+ to 2+ and AP -1 to -2). ``wording``: the
    sentence of the rule read. ``origin``: ``reader`` or ``hand-kept``
    (``pipeline/effects/hand_kept.toml``); ``note`` says why an entry is hand-kept. Provenance:
    the rule row's source and locator.
    """

    __table__ = "effects"
    __key__ = ("rule_table", "rule_id", "position")

    rule_table: str
    rule_id: str
    rule_kind: str
    rule_name: str
    edition: Edition | None
    faction_id: str | None
    position: int
    side: str
    effect: str
    roll: str | None
    characteristic: str | None
    value: int | None
    parameter: str | None
    weapon_type: str | None
    conditions: str | None
    wording: str
    origin: str
    note: str | None = None


class MatchupWeapon(Record):
    """A weapon profile of the database as ``wh40k matchups`` fires it (``pipeline.matchups``):
    ``models`` models (its datasheet's smallest unit size) each firing the profile once, with no
    situational option. ``weapon_key``: its distinct weapon (``matchups.weapon_key``): profiles
    equal in everything the attack reads share one. Filled after the build by ``wh40k matchups``
    (empty until then)."""

    __table__ = "matchup_weapons"
    __key__ = ("edition", "datasheet_id", "weapon_name", "profile_name", "is_melee")

    edition: Edition
    datasheet_id: str
    weapon_name: str
    profile_name: str
    is_melee: bool
    faction_id: str | None
    models: int
    weapon_key: int


class MatchupTarget(Record):
    """A target of ``wh40k matchups``: a datasheet (``kind`` ``datasheet``, ``target_id`` its
    datasheet_id: its Bodyguard model line at the smallest unit size, as ``wh40k attack`` reads
    it) or a standard profile (``kind`` ``standard``, ``target_id`` GEQ, MEQ, TEQ, VEHICLE or
    MONSTER). ``target_key``: its distinct target (``matchups.target_key``)."""

    __table__ = "matchup_targets"
    __key__ = ("edition", "target_id")

    edition: Edition
    target_id: str
    target_name: str
    kind: str
    faction_id: str | None
    models: int  # the models of the target unit (its smallest size; 1 for a standard profile)
    target_key: int


class Matchup(Record):
    """One distinct weapon against one distinct target in one edition (``wh40k matchups``):
    the exact engine's figures (DOUBLE), under the defaults of ``pipeline.matchups``. Figures are
    None where the exact engine refuses the pair (``resolution`` ``refused``); otherwise
    ``resolution`` is ``batched`` (``pipeline.engine.batch``, equal to ``exact.resolve``).
    ``expected_damage``: damage points after Feel No Pain, before excess damage is lost."""

    __table__ = "matchups"
    __key__ = ("edition", "weapon_key", "target_key")

    edition: Edition
    weapon_key: int  # the distinct weapon (matchup_weapons.weapon_key)
    target_key: int  # the distinct target (matchup_targets.target_key)
    expected_damage: float | None
    expected_models_destroyed: float | None  # E[models destroyed] of the target unit
    p_any_destroyed: float | None  # P(at least one model destroyed)
    p_unit_destroyed: float | None  # P(every model of the target unit destroyed)
    resolution: str


#: Every record class whose rows go to the database, in load order.
ALL_RECORDS: tuple[type[Record], ...] = (
    Source,
    Faction,
    Datasheet,
    ExternalId,
    UnitComposition,
    WargearLoadout,
    ModelProfile,
    WeaponProfile,
    WeaponAbility,
    Ability,
    FeelNoPain,
    Keyword,
    LeaderLink,
    Stratagem,
    DatasheetStratagem,
    Enhancement,
    SecondaryObjective,
    Publication,
    Detachment,
    DetachmentAbility,
    DatasheetDetachmentAbility,
    DatasheetEnhancement,
    WargearOption,
    UnitCost,
    WargearCost,
    DamagedProfile,
    SourceFile,
    RuleText,
    RuleReference,
    RuleAlias,
    RulePart,
    DataGap,
    DataFlag,
    Reject,
    Conflict,
    Accounting,
    SchemaInfo,
    SourceAgreement,
    Erratum,
    ErratumTarget,
    Effect,
    MatchupWeapon,
    MatchupTarget,
    Matchup,
)

#: The record class of each table, in load order.
RECORD_OF_TABLE: dict[str, type[Record]] = {rec.__table__: rec for rec in ALL_RECORDS}
