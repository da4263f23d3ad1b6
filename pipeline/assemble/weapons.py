"""A printed weapon profile -> ``WeaponProfile`` and its ``WeaponAbility`` rows, for every source.

The one reading of a weapon line (``PrintedWeapon``):

- name: ``➤`` dropped, the profile name after the last spaced dash (``split_weapon_name``);
- melee or ranged: the table or type the source files it under; a range of ``Melee`` when the
  source files it under none. A melee line with a range is loaded as melee with the flag
  ``melee_weapon_with_range``; a ranged line whose range is ``Melee`` is loaded as ranged, no
  range, flag ``ranged_weapon_with_melee_range``;
- range: inches; ``N/A``, ``-`` or empty on a ranged line is no range, flag ``range_not_applicable``;
- A, D: dice expressions; BS/WS: a roll target, None for Torrent (``skill``), with its flags, and
  ``no_hit_roll_without_torrent`` for a ``N/A`` skill without Torrent;
- S: a whole number; a dice roll (``2D6``) is not stored, flag ``strength_not_fixed``;
- AP: ``armour_penetration`` with its flags (``positive_ap``);
- abilities: the keyword cell split at commas (and at full stops that end an item), each read by
  ``pipeline.normalise.weapon_abilities.parse_ability``; each ability's flags go on its row;
- a D6 roll that picks the profile: flag ``profile_chosen_by_roll``.

A value that cannot be read raises ``NormaliseError`` with the reason: the caller rejects the
line with its raw text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.assemble.collector import Collector, entity_key
from pipeline.assemble.printed import PrintedWeapon
from pipeline.errors import NormaliseError
from pipeline.normalise import characteristics as ch
from pipeline.normalise.text import clean_line
from pipeline.normalise.weapon_abilities import ParsedWeaponAbility, parse_ability, weapon_ability_record
from schemas.records import Record, WeaponProfile

_PROFILE = re.compile(r"^(?P<weapon>.*\S)\s+[-–—]\s+(?P<profile>\S.*)$")
_ITEM_END = re.compile(r"\.(?=\s|$)")
_NO_RANGE = frozenset({"N/A", "NA", "-", ""})


def split_weapon_name(printed: str) -> tuple[str, str]:
    """(weapon name, profile name) of a printed weapon name; ``➤`` is dropped.

    The profile is the part after the last spaced dash (`` - ``, `` – ``, `` — ``); a hyphen inside
    a word (``Kombi-rokkit``) never splits.

    >>> split_weapon_name("➤ Plasma storm battery - standard")
    ('Plasma storm battery', 'standard')
    >>> split_weapon_name("Bubblechukka – big bubble"), split_weapon_name("Twin-linked lascannon")
    (('Bubblechukka', 'big bubble'), ('Twin-linked lascannon', ''))
    """
    name = clean_line(printed.replace("➤", " "))
    m = _PROFILE.match(name)
    if not m:
        return name, ""
    return m.group("weapon").strip(), m.group("profile").strip()


def ability_items(printed: str) -> list[str]:
    """The items of a printed keyword cell: brackets dropped, split at commas and at a full
    stop that ends an item (``one shot. psychic``); ``-`` is none.

    >>> ability_items("[ANTI-INFANTRY 4+, DEVASTATING WOUNDS]"), ability_items("one shot. psychic")
    (['ANTI-INFANTRY 4+', 'DEVASTATING WOUNDS'], ['one shot', 'psychic'])
    >>> ability_items("-"), ability_items("")
    ([], [])
    """
    text = clean_line(_ITEM_END.sub(",", printed.replace("\n", " "))).strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if text.strip() in ("", "-"):
        return []
    items = (clean_line(item).strip("[] ") for item in text.split(","))
    return [item for item in items if item and item != "-"]


@dataclass(frozen=True, slots=True)
class Note:
    """A flag the assembly raises about a record: its table, entity key, code and detail; its
    locator when it is not the printed item's."""

    table: str
    entity: str
    code: str
    detail: str
    locator: str | None = None


@dataclass(frozen=True, slots=True)
class Gap:
    """A value the source lost: its table, entity key, field and why."""

    table: str
    entity: str
    field: str
    reason: str


@dataclass
class Assembled:
    """What the assembly read from one printed item: the records, and the flags and data gaps
    about them."""

    records: list[Record] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)

    def into(self, collector: Collector, locator: str) -> bool:
        """Add the records and flags to ``collector``; False when the first record is not kept
        (a duplicate or a key conflict: then nothing else is added)."""
        if not self.records:
            return False
        head, *rest = self.records
        if collector.add(head).name != "NEW":
            return False
        for record in rest:
            collector.add(record)
        for note in self.notes:
            collector.flag(note.table, note.entity, note.code, note.detail, note.locator or locator)
        for gap in self.gaps:
            collector.gap(gap.table, gap.entity, gap.field, gap.reason, locator)
        return True


def _same_ability(a: ParsedWeaponAbility, link: ParsedWeaponAbility) -> bool:
    """The cell's ``a`` is the ability ``link`` names; a link to the rule ``Anti-`` names any Anti."""
    return a.name == link.name and (a.name != "ANTI" or link.target_keyword in (None, a.target_keyword))


def reconcile_linked(
    cell: list[ParsedWeaponAbility], linked: list[ParsedWeaponAbility]
) -> tuple[list[ParsedWeaponAbility], list[tuple[str, str]]]:
    """The abilities of a weapon that a source gives both in its keyword cell and as links to
    rules (BattleScribe), reconciled: the cell's, in print order, then each linked one the cell
    lacks (flag ``ability_from_link_only``). A cell item without the threshold or value its link's
    name carries (``Anti-infantry`` and a link ``Anti-Infantry 4+``) takes it (flag
    ``value_from_linked_rule``); where both give one and they differ the cell's is kept (flag
    ``cell_and_link_differ``). A link that gives nothing of its own (the rule ``Anti-`` or
    ``Sustained Hits`` with no parameter, an unknown name) names the cell's ability if it has one,
    and is otherwise only flagged (``linked_rule_not_read``).

    >>> a, notes = reconcile_linked([parse_ability("Anti-infantry")], [parse_ability("Anti-Infantry 4+"),
    ...                                                              parse_ability("Hazardous")])
    >>> [(x.name, x.threshold) for x in a], [code for code, _ in notes]
    ([('ANTI', 4), ('HAZARDOUS', None)], ['value_from_linked_rule', 'ability_from_link_only'])
    >>> reconcile_linked([parse_ability("Anti-vehicle 4+")], [parse_ability("Anti-")])[1]
    []
    
    """
    out = list(cell)
    notes: list[tuple[str, str]] = []
    for link in linked:
        match = next((i for i, a in enumerate(out) if _same_ability(a, link)), None)
        if match is None and link.flags:
            # the rule itself (Anti-, Sustained Hits) with no parameter, or a name not known:
            # nothing to give the weapon
            notes.append(("linked_rule_not_read", f"{link.raw_text!r} is linked as a rule; it gives no "
                          f"ability of its own ({', '.join(link.flags)})"))
            continue
        if match is None:
            out.append(link)
            notes.append(("ability_from_link_only", f"{link.raw_text!r} is linked as a rule, not in the keyword cell"))
            continue
        have = out[match]
        mine = (have.threshold, have.value)
        theirs = (link.threshold, link.value)
        if mine == theirs or theirs == (None, None):
            continue
        if mine == (None, None):
            flags = tuple(f for f in have.flags if not f.endswith(("_missing_threshold", "_missing_value")))
            out[match] = have._replace(threshold=link.threshold, value=link.value, flags=flags)
            notes.append(("value_from_linked_rule", f"{have.raw_text!r} takes the value of the linked rule {link.raw_text!r}"))
        else:
            notes.append(("cell_and_link_differ", f"cell {have.raw_text!r}, linked rule {link.raw_text!r}: the cell's is kept"))
    return out, notes


def _strength(text: str) -> tuple[int | None, tuple[str, str] | None]:
    t = clean_line(text)
    try:
        return ch.characteristic_int(t, "S"), None
    except NormaliseError:
        ch.dice(t)  # a dice roll is a real value: flagged; anything else is an error
        return None, ("strength_not_fixed", f"S={t!r} (a dice roll; not stored)")


def assemble_weapon(printed: PrintedWeapon, source_id: str, datasheet_id: str) -> Assembled:
    """Read one printed weapon line of a datasheet (see the module docstring for the rules).

    Returns the ``WeaponProfile`` first, then its ``WeaponAbility`` rows (positions from 1), and
    the flags. Raises ``NormaliseError`` naming the value that cannot be read.

    >>> a = assemble_weapon(PrintedWeapon("line 3", "Boltgun", '24"', "2", "3+", "4", "0", "1",
    ...                                   "[RAPID FIRE 1]", is_melee=False), "s", "10e/x/y")
    >>> p = a.records[0]; (p.range_inches, p.attacks.text, p.skill, p.strength, a.records[1].name)
    (24, '2', 3, 4, 'RAPID FIRE')
    """
    if printed.profile_name is not None:
        weapon, profile = clean_line(printed.name.replace("➤", " ")), clean_line(printed.profile_name)
    else:
        weapon, profile = split_weapon_name(printed.name)
    if not weapon:
        raise NormaliseError("weapon line without a name")
    notes: list[tuple[str, str]] = []
    range_text = clean_line(printed.range)
    says_melee = range_text.lower() == "melee"
    is_melee = printed.is_melee if printed.is_melee is not None else says_melee
    range_inches: int | None = None
    if is_melee:
        if not says_melee:
            notes.append(("melee_weapon_with_range", f"range={range_text!r}"))
    elif says_melee:
        notes.append(("ranged_weapon_with_melee_range", f"range={range_text!r} in a ranged weapon line"))
    elif range_text.upper() in _NO_RANGE:
        notes.append(("range_not_applicable", f"range={range_text!r}"))
    else:
        range_inches = ch.weapon_range(range_text).inches
    abilities: list[ParsedWeaponAbility] = [parse_ability(item) for item in ability_items(printed.abilities)]
    abilities, link_notes = reconcile_linked(abilities, [parse_ability(clean_line(n)) for n in
                                                         printed.linked_abilities if clean_line(n)])
    torrent = any(a.name == "TORRENT" for a in abilities)
    skill_name = "WS" if is_melee else "BS"
    skill_text = clean_line(printed.skill)
    skill = ch.skill(skill_text, torrent=torrent)
    notes += [(code, f"{skill_name}={skill_text!r}") for code in skill.flags]
    if skill.value is None and not torrent:
        notes.append(("no_hit_roll_without_torrent", f"{skill_name}={skill_text!r}"))
    strength, strength_note = _strength(printed.strength)
    if strength_note:
        notes.append(strength_note)
    ap_text = clean_line(printed.armour_penetration)
    ap = ch.armour_penetration(ap_text)
    notes += [(code, f"AP={ap_text!r}") for code in ap.flags]
    notes += link_notes
    roll = clean_line(printed.roll)
    if roll:
        notes.append(("profile_chosen_by_roll", f"this profile is used on a D6 roll of {roll}"))
    record = WeaponProfile(
        source_id=source_id, locator=printed.locator, datasheet_id=datasheet_id,
        weapon_name=weapon, profile_name=profile, is_melee=is_melee, range_inches=range_inches,
        attacks=ch.dice(printed.attacks), skill=skill.value, strength=strength,
        armour_penetration=ap.value, damage=ch.dice(printed.damage),
        abilities_text=", ".join(a.raw_text for a in abilities),
    )
    entity = entity_key(record) if notes else ""  # for the notes alone
    out = Assembled([record], [Note("weapon_profiles", entity, c, d) for c, d in notes])
    for position, ability in enumerate(abilities, start=1):
        row = weapon_ability_record(
            ability, source_id=source_id, locator=printed.locator, datasheet_id=datasheet_id,
            weapon_name=weapon, profile_name=profile, is_melee=is_melee, position=position,
        )
        out.records.append(row)
        out.notes += [Note("weapon_abilities", entity_key(row), code, repr(ability.raw_text))
                      for code in ability.flags]
    return out


def raw_weapon_text(printed: PrintedWeapon) -> str:
    """A printed weapon line as one text, for a reject's ``raw_text``.

    >>> raw_weapon_text(PrintedWeapon("l", "Boltgun", '24"', "2", "3+", "4", "0", "1", "rapid fire 1"))
    'Boltgun | 24" | 2 | 3+ | 4 | 0 | 1 | rapid fire 1'
    """
    cells = [printed.name, printed.range, printed.attacks, printed.skill, printed.strength,
             printed.armour_penetration, printed.damage, printed.abilities]
    return " | ".join(cells)
