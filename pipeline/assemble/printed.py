"""What a source prints: the typed hand-off from an extractor to the assembly.

Every field is the text as printed (after the source's own markup is taken off: HTML tags,
BattleScribe's characteristic elements, table pipes), never a read value; ``None`` means the
source does not print that value at all (a data gap), ``""`` that it prints an empty cell.
Each record carries the locator of where the source prints it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PrintedWeapon:
    """One weapon profile line as printed.

    ``name`` may carry a profile name (``➤ Plasma pistol - supercharge``); ``profile_name`` is
    given only by a source that prints it apart. ``is_melee`` is the table or type the source
    files the line under (``Melee weapons``, type ``Melee``); None when it files it under none,
    and the range decides. ``abilities`` is the keyword cell (``[ANTI-INFANTRY 4+, PISTOL]``,
    ``anti-infantry 4+, pistol``); ``linked_abilities`` the abilities a source gives as links to
    rules instead (BattleScribe), each as its link's name. ``roll`` is a D6 result that picks
    this profile (``1-2``), if printed.
    """

    locator: str
    name: str
    range: str
    attacks: str
    skill: str
    strength: str
    armour_penetration: str
    damage: str
    abilities: str = ""
    is_melee: bool | None = None
    profile_name: str | None = None
    linked_abilities: tuple[str, ...] = ()
    roll: str = ""


@dataclass(frozen=True, slots=True)
class PrintedModel:
    """One model line's characteristics as printed (``6"``, ``3``, ``3+``, ``4+*``, ``6+``).

    ``invulnerable_save_note`` is the ``*`` note printed with the invulnerable save
    (``* Ranged attacks only``). A characteristic the source does not print is None.
    """

    locator: str
    line: int
    name: str
    move: str | None
    toughness: str | None
    save: str | None
    wounds: str | None
    leadership: str | None
    objective_control: str | None
    invulnerable_save: str | None = None
    invulnerable_save_note: str | None = None


@dataclass(frozen=True, slots=True)
class PrintedDatasheet:
    """A datasheet's own values as printed: its name, role (``Battleline``), legend (the fluff)
    and the model count printed with the name (``CANONESS ADALYA (1 MODEL)``: ``"1"``), if any.

    ``faction_id``, ``edition``, ``game_mode`` and ``external_id`` (the source's own id of the
    datasheet) are what the extractor found for it, not read again.
    """

    locator: str
    name: str
    faction_id: str | None
    edition: int | None
    game_mode: str | None = None
    role: str | None = None
    legend: str | None = None
    external_id: str | None = None
    model_count: str | None = None


@dataclass(frozen=True, slots=True)
class PrintedAbility:
    """One ability of a datasheet as printed: its kind (the box or label it is under: ``core``,
    ``faction``, ``datasheet``, ``wargear``, ``other``), its name, and its text (None: the
    datasheet only names it, as core and faction abilities).

    ``parameter`` is given only by a source that prints it apart from the name (the export's
    ``parameter`` column, a BattleScribe link's name modifier); otherwise a name printed alone
    carries it (``Deadly Demise D3``).
    """

    locator: str
    kind: str
    name: str
    text: str | None = None
    parameter: str | None = None


@dataclass(frozen=True, slots=True)
class PrintedComposition:
    """One unit-composition line as printed (``1 Sister Superior``, ``4-9 Battle Sisters``,
    ``1 Sergeant and 9 Troopers``, ``OR``, ``10 MODELS MAXIMUM``): its ``text`` is stored.

    ``models``: the part of the line that names the models when the source prints more on it (a
    keyword tag: ``1 Lord Solar Leontus – EPIC HERO``); None: the whole text. ``counts``: the
    ``(min, max, model name)`` of a source that gives them apart from any text (BattleScribe: an
    entry's name and constraints; max None: no maximum); then no text is read. A ``{line}`` in
    ``locator`` is replaced by each row's number.
    """

    locator: str
    text: str
    models: str | None = None
    counts: tuple[int, int | None, str] | None = None


@dataclass(frozen=True, slots=True)
class PrintedStratagem:
    """One Stratagem as printed: its name, its cost (``1``, ``1CP``; None: not printed), its type
    or category (``Battle Tactic``, ``Battle Tactic Stratagem``, ``Core – Battle Tactic
    Stratagem``: the part before a dash is a group), the group printed apart from it (a
    detachment column, a Combat Patrol's name; None: not printed apart), its legend, and its
    WHEN / TARGET / EFFECT / RESTRICTIONS texts.

    A source that prints the sections as one text (the export's ``description``) gives it as
    ``text``, to be split at its labels; then the four section fields are not read.
    """

    locator: str
    name: str
    cost: str | None
    type: str
    group: str | None = None
    legend: str | None = None
    when: str | None = None
    target: str | None = None
    effect: str | None = None
    restrictions: str | None = None
    text: str | None = None
