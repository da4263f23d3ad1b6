"""The rules of a build whose wording the reader reads, and the ``effects`` rows it gives.

A rule is a stratagem (its EFFECT), a datasheet ability with a text (kinds ``datasheet``,
``wargear``, ``other``), a detachment rule, an enhancement, an Astra Militarum Order (each
Order of a Voice of Command wording in ``rule_texts``: its name line, then its effect), or an army
rule: a wording in ``rule_texts`` whose title is the name of a faction ability of datasheets
(``abilities`` of kind ``faction``: Oath of Moment, Acts of Faith), of the faction of those
datasheets when they are all of one faction, else of none (Oath of Moment is the army rule of
several Space Marines chapters). Each is
linked to its row: table and key (``Rule.table``, ``Rule.rule_id``), with its faction (a
stratagem's and an enhancement's through the detachment of that name; core stratagems have none).
A detachment name that two factions share (the 10th edition's Infestation Swarm) is resolved by
the datasheets the rule is listed on (``datasheet_stratagems``, ``datasheet_enhancements``): the
one of those factions whose datasheets list it; when the links name none or both, no faction.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping

from pipeline.effects.reader import ReadEffect, normalise, read_text, read_wording

if TYPE_CHECKING:
    from pipeline.extractors import LinkColumns
from schemas.records import (
    Ability, Datasheet, DatasheetEnhancement, DatasheetStratagem, Detachment, DetachmentAbility, Effect, Enhancement,
    Record, RuleText, Source, Stratagem,
)

RULE_KINDS = ("stratagem", "datasheet-ability", "detachment-rule", "enhancement", "order", "army-rule")
#: The rule key of the rule whose wording lists the Orders (Astra Militarum).
ORDERS_RULE = "voice-of-command"


@dataclass(frozen=True)
class Rule:
    """One rule to read: where its row is, what it is, its wording and provenance."""

    table: str
    rule_id: str
    kind: str
    name: str
    edition: int | None
    faction_id: str | None
    source_id: str
    locator: str
    text: str


def orders(text: str) -> list[tuple[str, str]]:
    """The (name, effect wording) of each Order in a Voice of Command wording: after the sentence
    "Only ASTRA MILITARUM models gain the benefit ...", each line ending in ``!`` names an Order;
    the lines up to the next name are its effect, without the short characteristic lines
    (``BS``, ``+1``) that the export prints between them.

    >>> orders("Only ASTRA MILITARUM models gain the benefit of an Order.\\nTake Aim!\\nBS\\n+1\\n"
    ...        "Improve the Ballistic Skill characteristic of ranged weapons by 1.\\nFix Bayonets!\\nWS")
    [('Take Aim!', 'Improve the Ballistic Skill characteristic of ranged weapons by 1.'), ('Fix Bayonets!', '')]
    """
    head, sep, rest = text.partition("gain the benefit of an Order")
    if not sep:
        return []
    lines = [line.strip() for line in rest.splitlines()[1:] if line.strip()]
    found: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.endswith("!") and len(line) < 60:
            found.append((line, []))
        elif found and not re.fullmatch(r"[A-Z]{1,2}|[+-]\d+\"?|\+\d+\"", line):
            found[-1][1].append(line)
    return [(name, " ".join(body)) for name, body in found]


def rules_of(records: Iterable[Record], sources: dict[str, Source], links: Iterable[LinkColumns] = ()) -> list[Rule]:
    """Every rule of a build's records that the reader reads, in a stable order (table, id).

    The records are sorted by class once (one pass), so that each rule kind looks only at its own.
    ``links``: rows of link tables kept as columns (``LinkColumns``), read as their records are.
    """
    of_type: dict[type, list[Record]] = defaultdict(list)  # the records by class, each in build order
    for r in records:
        of_type[type(r)].append(r)
    factions_of_detachment: dict[str, set[str]] = defaultdict(set)
    listed_on: dict[tuple[str, str], set[str]] = defaultdict(set)  # (table, rule id) -> datasheet ids
    for d in of_type[Detachment]:
        if d.faction_id:
            factions_of_detachment[d.name.strip().lower()].add(d.faction_id)
    sheets: dict[str, Datasheet] = {r.datasheet_id: r for r in of_type[Datasheet]}
    for r in of_type[DatasheetStratagem]:
        listed_on[("stratagems", r.stratagem_id)].add(r.datasheet_id)
    for r in of_type[DatasheetEnhancement]:
        listed_on[("enhancements", r.enhancement_id)].add(r.datasheet_id)
    listing = {DatasheetStratagem: "stratagems", DatasheetEnhancement: "enhancements"}
    for link in links:
        if link.record_type in listing:
            table = listing[link.record_type]
            for sheet, rule_id in zip(link.datasheet_ids, link.targets):
                listed_on[(table, rule_id)].add(sheet)

    def faction_of(detachment: str | None, table: str = "", rule_id: str = "") -> str | None:
        found = factions_of_detachment.get((detachment or "").strip().lower(), set())
        if len(found) > 1:  # a name two factions share: the faction of the datasheets listing the rule
            found = found & {sheets[d].faction_id for d in listed_on.get((table, rule_id), ()) if d in sheets}
        return next(iter(found)) if len(found) == 1 else None

    def edition_of(source_id: str) -> int | None:
        source = sources.get(source_id)
        return source.edition if source else None

    army: dict[str, Counter[str | None]] = defaultdict(Counter)  # faction ability name -> factions of its datasheets
    for r in of_type[Ability]:
        if r.kind == "faction" and r.datasheet_id in sheets:
            army[army_rule_key(r.name)][sheets[r.datasheet_id].faction_id] += 1

    rules: list[Rule] = []
    for r in of_type[Stratagem]:
        if r.effect:
            faction = None if r.group.strip().lower() == "core" else faction_of(r.group, "stratagems", r.stratagem_id)
            rules.append(Rule("stratagems", r.stratagem_id, "stratagem", r.name, r.edition or edition_of(r.source_id),
                              faction, r.source_id, r.locator, r.effect))
    for r in of_type[Ability]:
        if r.text and r.kind in ("datasheet", "wargear", "other"):
            sheet = sheets.get(r.datasheet_id)
            rules.append(Rule("abilities", f"{r.datasheet_id}|{r.kind}|{r.name}", "datasheet-ability", r.name,
                              (sheet.edition if sheet else None) or edition_of(r.source_id),
                              sheet.faction_id if sheet else None, r.source_id, r.locator, r.text))
    for r in of_type[DetachmentAbility]:
        rules.append(Rule("detachment_abilities", r.detachment_ability_id, "detachment-rule", r.name,
                          edition_of(r.source_id), r.faction_id or faction_of(r.detachment), r.source_id,
                          r.locator, r.text))
    for r in of_type[Enhancement]:
        rules.append(Rule("enhancements", r.enhancement_id, "enhancement", r.name, edition_of(r.source_id),
                          faction_of(r.detachment, "enhancements", r.enhancement_id), r.source_id, r.locator,
                          r.text))
    for r in of_type[RuleText]:
        if r.rule_key == ORDERS_RULE and r.language == "en":
            for name, wording in orders(r.text):
                rules.append(Rule("rule_texts", f"{r.rule_key}|{r.source_id}|{r.locator}|{name}", "order", name,
                                  r.edition or edition_of(r.source_id), "astra-militarum", r.source_id, r.locator,
                                  wording))
        elif r.language == "en" and r.text and r.erratum_id is None and army_rule_key(r.title) in army:
            factions = army[army_rule_key(r.title)]
            rules.append(Rule("rule_texts", f"{r.rule_key}|{r.source_id}|{r.locator}", "army-rule", r.title,
                              r.edition or edition_of(r.source_id), next(iter(factions)) if len(factions) == 1 else None,
                              r.source_id, r.locator, r.text))
    return sorted(rules, key=lambda rule: (rule.table, rule.rule_id))


def army_rule_key(name: str) -> str:
    """A faction ability's name as compared with a wording's title: lower case, one space,
    straight apostrophes.

    >>> army_rule_key("Oath of  Moment"), army_rule_key("Acts of Faith ")
    ('oath of moment', 'acts of faith')
    """
    return re.sub(r"\s+", " ", name.replace("\u2019", "'")).strip().lower()


def read_rule(rule: Rule, start: int = 0, readings: Mapping[str, tuple[ReadEffect, ...]] | None = None) -> list[Effect]:
    """The reader's effects of one rule, numbered from ``start``.

    ``readings``: wordings already read (``read_wordings``), by text; a wording not in it is read here.
    """
    read = readings.get(rule.text) if readings else None
    return [
        Effect(source_id=rule.source_id, locator=rule.locator, rule_table=rule.table, rule_id=rule.rule_id,
               rule_kind=rule.kind, rule_name=rule.name, edition=rule.edition, faction_id=rule.faction_id,
               position=start + i, side=e.side, effect=e.effect, roll=e.roll, characteristic=e.characteristic,
               value=e.value, parameter=e.parameter, weapon_type=e.weapon_type, conditions=e.conditions,
               wording=e.wording, origin="reader")
        for i, e in enumerate(read_text(rule.text) if read is None else read)
    ]


def read_wordings(records: Iterable[Record], sources: dict[str, Source],
                  links: Iterable[LinkColumns] = (), read: Iterable[Record] = ()) -> dict[str, tuple[ReadEffect, ...]]:
    """The reader's effects of the wording of every rule of ``records`` (``rules_of``), by text:
    what ``effect_rows`` reads, read ahead (the build does it in a second process while it merges
    the sources: ``pipeline.forked``). Pure: the reading of a text depends on the text alone.
    ``read``: records whose rules' wordings are read already (by another process): left out."""
    done = {rule.text for rule in rules_of(read, sources)} if read else set()
    return {rule.text: read_wording(rule.text or "") for rule in rules_of(records, sources, links)
            if rule.text not in done}


def effect_rows(
    records: Iterable[Record], sources: dict[str, Source],
    readings: Mapping[str, tuple[ReadEffect, ...]] | None = None, links: Iterable[LinkColumns] = (),
) -> list[Effect]:
    """The ``effects`` rows of a build: the reader's for every rule (``rules_of``), and the
    hand-kept entries (``pipeline.effects.hand_kept``) for the rules the reader does not read,
    each linked to every rule row of its kind, edition and name whose wording holds its words.

    ``readings``: wordings read ahead (``read_wordings``, of these records or others); the rows
    are the same with or without them. ``links``: rows of link tables kept as columns."""
    from pipeline.effects.hand_kept import hand_kept_effects

    rows: list[Effect] = []
    for rule in rules_of(records, sources, links):
        read = read_rule(rule, readings=readings)
        rows.extend(read)
        rows.extend(hand_kept_effects(rule, start=len(read)))
    return rows


def wording_key(text: str) -> str:
    """A wording as compared with a hand-kept entry's: normalised, lower case, one space.

    >>> wording_key("Until the  end of the phase,\\n**your** unit’s")
    "until the end of the phase, your unit's"
    """
    return re.sub(r"\s+", " ", normalise(text)).lower()
