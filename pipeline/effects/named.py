"""Rules named by ``attack --with NAME`` / ``--without NAME``, and the target's own rules applied
by default, found in the ``effects`` table of a database.

``--with NAME`` names a stratagem, order, datasheet ability, detachment rule, enhancement or army
rule of the attacker's faction, the target's faction or the core rules, of the attack's edition; a rule that
offers a choice is named with the option picked: ``"Suffer Not the Unfaithful: LETHAL HITS"``.
A datasheet ability is looked for first on the two units' own datasheets, then on the faction's.
A name matching rules whose effects differ is narrowed down, in this order: a rule of the
attacker's faction acts for the attacker and one of the target's faction for the target (a rule
with no effect on that side is dropped); the request's detachment (``--detachment``), where it
names one, keeps the rules of that detachment; the same wording printed by two rows (one rule in
two tables or sources) is one rule. Only a real choice stays ambiguous: the error lists the
candidates with their detachments (pass ``--detachment`` or the rule id of one:
``stratagems:10e/wahapedia/000008468002``). The target's own datasheet abilities whose
effects protect it (Feel No Pain, damage reduction, Stealth, an invulnerable save, -1 to be hit
or wounded) and hold without a situational condition apply by default; ``--without NAME`` turns
one off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline import query
from pipeline.effects.apply import effect_from_row
from pipeline.errors import InputError, NotFoundError
from schemas.records import Effect

#: Effects of a target's own abilities that apply by default (what protects it from attacks).
DEFAULT_TARGET_EFFECTS = frozenset({"feel-no-pain", "damage-reduction", "stealth", "invulnerable-save"})
_KIND_WORDS = {"stratagem": "stratagem", "datasheet-ability": "ability", "detachment-rule": "detachment rule",
               "enhancement": "enhancement", "order": "order", "army-rule": "army rule"}


@dataclass(frozen=True)
class NamedRule:
    """A rule found by name, with its effects (in order) and the option picked, if any."""

    name: str
    kind: str
    rule_table: str
    rule_id: str
    effects: tuple[Effect, ...]
    choice: str | None = None


def name_key(name: str) -> str:
    """A rule name as compared: lower case, letters and digits only.

    >>> name_key("Take Aim!") == name_key("take aim"), name_key("First Rank, Fire! Second Rank, Fire!")
    (True, 'firstrankfiresecondrankfire')
    """
    return re.sub(r"[^0-9a-z]+", "", name.lower().replace("’", "'"))


def _rows(con, edition: int, factions: list[str] | None) -> list[dict]:
    cols = ", ".join(Effect.model_fields)
    marks = ", ".join("?" for _ in factions or ()) or "NULL"
    where = "" if factions is None else f"AND (faction_id IS NULL OR faction_id IN ({marks})) "
    cur = con.execute(f"SELECT {cols} FROM effects WHERE (edition = ? OR edition IS NULL) {where}"
                      "ORDER BY rule_table, rule_id, position", [edition, *(factions or ())])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def _group(rows: list[dict]) -> dict[tuple[str, str], list[Effect]]:
    rules: dict[tuple[str, str], list[Effect]] = {}
    for row in rows:
        rules.setdefault((row["rule_table"], row["rule_id"]), []).append(effect_from_row(row))
    return rules


def _content(effects: list[Effect]) -> tuple:
    return tuple((e.side, e.effect, e.roll, e.characteristic, e.value, e.parameter, e.weapon_type, e.conditions)
                 for e in effects)


def _label(effects: list[Effect]) -> str:
    e = effects[0]
    return f"{_KIND_WORDS.get(e.rule_kind, e.rule_kind)} {e.rule_name!r} ({e.rule_table}:{e.rule_id})"


_DETACHMENT_SQL = {
    "stratagems": 'SELECT "group" FROM stratagems WHERE stratagem_id = ?',
    "detachment_abilities": "SELECT detachment FROM detachment_abilities WHERE detachment_ability_id = ?",
    "enhancements": "SELECT detachment FROM enhancements WHERE enhancement_id = ?",
}


def _detachment(con, table: str, rule_id: str) -> str | None:
    """The detachment a stratagem, detachment rule or enhancement belongs to (None: another table,
    or none printed)."""
    sql = _DETACHMENT_SQL.get(table)
    if sql is None:
        return None
    row = con.execute(sql, [rule_id]).fetchone()
    return row[0] if row and row[0] else None


def _acts_for_its_side(effects: list[Effect], attacker_faction: str | None, target_faction: str | None) -> bool:
    """Whether a rule can act in this attack from its faction: a core rule (no faction) always; a
    rule of the attacker's faction when it has an effect for the attacker; of the target's faction
    when it has one for the target."""
    faction = effects[0].faction_id
    if faction is None:
        return True
    sides = {e.side for e in effects}
    return (faction == attacker_faction and "attacker" in sides) or (faction == target_faction and "target" in sides)


def _wording_key(effects: list[Effect]) -> tuple:
    return tuple(dict.fromkeys(name_key(e.wording) for e in effects))


def _narrowed(con, candidates: list[list[Effect]], detachment: str | None, attacker_faction: str | None,
              target_faction: str | None) -> list[list[Effect]]:
    """The candidates left after the narrowing of the module's docstring (each step only when it
    leaves at least one)."""
    steps = [
        lambda es: _acts_for_its_side(es, attacker_faction, target_faction),
        lambda es: detachment is not None and name_key(_detachment(con, es[0].rule_table, es[0].rule_id) or "")
        == name_key(detachment),
    ]
    for keep in steps:
        if len(candidates) > 1:
            kept = [es for es in candidates if keep(es)]
            candidates = kept or candidates
    if len(candidates) > 1:
        by_wording: dict[tuple, list[Effect]] = {}
        for es in candidates:
            by_wording.setdefault(_wording_key(es), es)
        candidates = list(by_wording.values())
    return candidates


def find_named(con, name: str, edition: int, factions: list[str] | None, own_sheets: list[str], *,
               detachment: str | None = None, attacker_faction: str | None = None,
               target_faction: str | None = None) -> NamedRule:
    """The rule ``name`` (or ``table:rule_id``) of ``factions`` (None: any faction) or the core
    rules in ``edition``;
    of several rules of that name with other effects, the one left by the narrowing of the
    module's docstring (the ``attacker_faction`` and ``target_faction``, the request's
    ``detachment``, one wording printed twice).

    Raises ``NotFoundError`` (an unknown name, with close names) and ``InputError`` (a real
    choice, listing the candidates with their detachments and ``TABLE:ID``).
    """
    rules = _group(_rows(con, edition, factions))
    choice = None
    wanted = name.strip()
    if ":" in wanted and not any(f"{t}:{i}" == wanted for t, i in rules):
        head, _, option = wanted.rpartition(":")
        if any(name_key(es[0].rule_name) == name_key(head) for es in rules.values()):
            wanted, choice = head.strip(), option.strip().upper()
    found = [es for (t, i), es in rules.items() if f"{t}:{i}" == wanted]
    if not found:
        found = [es for es in rules.values() if name_key(es[0].rule_name) == name_key(wanted)]
    own = [es for es in found if es[0].rule_table != "abilities"
           or any(es[0].rule_id.startswith(sheet + "|") for sheet in own_sheets)]
    if own:
        found = own
    where = "any faction" if factions is None else " or ".join([*(repr(f) for f in factions), "the core rules"])
    if not found:
        close = query._close(wanted, sorted({es[0].rule_name for es in rules.values()}))[:5]
        raise NotFoundError(
            f"--with {name!r}: no stratagem, order, ability, detachment rule, enhancement or army rule with effects "
            f"of that name for {where} in edition {edition}" + (f"; close names: {', '.join(close)}" if close else "")
            + " (`wh40k effects unread` lists the rules the reader could not read)")
    distinct: dict[tuple, list[Effect]] = {}
    for es in found:
        distinct.setdefault(_content(es), es)
    left = _narrowed(con, list(distinct.values()), detachment, attacker_faction, target_faction)
    if len(left) > 1:
        def label(es: list[Effect]) -> str:
            of = _detachment(con, es[0].rule_table, es[0].rule_id)
            return _label(es) + (f" of the detachment {of!r}" if of else "")

        listed = "; ".join(label(es) for es in left[:8])
        raise InputError(f"--with {name!r} is ambiguous: {len(left)} rules of that name have other effects: "
                         f"{listed}; give the detachment (--detachment NAME) or one rule as TABLE:ID")
    effects = left[0]
    options = {(e.conditions or "").split("choice:", 1)[1].split(";")[0] for e in effects
               if e.conditions and "choice:" in e.conditions}
    if choice is not None and choice not in {o.upper() for o in options}:
        raise InputError(f"--with {name!r}: {effects[0].rule_name!r} offers no option {choice!r}; its options: "
                         + (", ".join(sorted(options)) or "none"))
    e = effects[0]
    return NamedRule(e.rule_name, e.rule_kind, e.rule_table, e.rule_id, tuple(effects), choice)


def check_sides(rule: NamedRule, name: str, attacker_factions, target_factions) -> None:
    """Refuse a named rule that acts for a side of another faction: an attacker-side effect only
    from a rule of one of ``attacker_factions`` (faction ids), a target-side one only from one of
    ``target_factions``; a core rule (no faction) acts for either. None for a side means that side
    has no faction (custom weapons, a standard or inline target profile): any faction's rule acts
    for it. Raises ``InputError`` naming the rule's faction and the side.

    >>> e = Effect.model_construct(faction_id="astra-militarum", side="attacker")
    >>> r = NamedRule("Take Aim!", "order", "orders", "x", (e,))
    >>> check_sides(r, "Take Aim!", ["astra-militarum"], ["space-marines"]) is None
    True
    >>> check_sides(r, "Take Aim!", ["space-marines"], None)
    Traceback (most recent call last):
    ...
    pipeline.errors.InputError: --with 'Take Aim!': order 'Take Aim!' is a rule of astra-militarum and acts for the attacker, whose faction is space-marines; name a rule of the attacker's faction, of the target's for an effect on the target, or a core rule
    """
    for e in rule.effects:
        if e.faction_id is None:
            continue
        allowed = attacker_factions if e.side == "attacker" else target_factions
        if allowed is None or e.faction_id in allowed:
            continue
        whose = "the attacker" if e.side == "attacker" else "the target"
        raise InputError(
            f"--with {name!r}: {_KIND_WORDS.get(rule.kind, rule.kind)} {rule.name!r} is a rule of {e.faction_id} "
            f"and acts for {whose}, whose faction is {', '.join(allowed) or 'none'}; name a rule of the attacker's "
            "faction, of the target's for an effect on the target, or a core rule")


def target_defaults(con, sheet_id: str, edition: int) -> list[NamedRule]:
    """The target's own abilities that protect it and apply by default (``DEFAULT_TARGET_EFFECTS``,
    and a negative hit or wound modifier), without a situational condition or a choice."""
    cols = ", ".join(Effect.model_fields)
    cur = con.execute(f"SELECT {cols} FROM effects WHERE rule_table = 'abilities' AND starts_with(rule_id, ?) "
                      "AND side = 'target' ORDER BY rule_id, position", [sheet_id + "|"])
    names = [d[0] for d in cur.description]
    out = []
    for (table, rule_id), effects in _group([dict(zip(names, r)) for r in cur.fetchall()]).items():
        kept = tuple(e for e in effects if not e.conditions and (
            e.effect in DEFAULT_TARGET_EFFECTS or e.effect == "modify-roll" and e.roll in ("hit", "wound")
            and (e.value or 0) < 0))
        if kept:
            out.append(NamedRule(kept[0].rule_name, kept[0].rule_kind, table, rule_id, kept))
    return out


def target_sheet(con, text: str, edition: int) -> dict | None:
    """The target's datasheet when the target is a unit of the database, else None (a standard or
    inline profile), found as ``pipeline.engine.service.resolve_target`` finds it."""
    from pipeline.engine.inputs import STANDARD_PROFILES
    from pipeline.engine.service import _INLINE

    if text.strip().upper() in STANDARD_PROFILES or _INLINE.search(text):
        return None
    try:
        return query.find_datasheet_preferring(con, text, edition)[0]
    except NotFoundError:
        return None


def effects_for(con, request, sheet: dict | None, edition: int, weapons, target, context):
    """The attack of ``request`` (``pipeline.engine.service.AttackRequest``) with its named rules
    (``request.with_effects``) and the target's default ones (less ``request.without_effects``)
    applied: (weapons, target, context, applied effects, notes). Raises ``NotFoundError`` and
    ``InputError`` as ``find_named`` does, and ``InputError`` for a ``--without`` name that is not
    one of the target's default rules (listing them)."""
    from dataclasses import replace

    from pipeline.effects.apply import apply_effects

    notes: list[str] = []
    if not request.with_effects and not request.without_effects and not _has_effects(con):
        return weapons, target, context, (), notes
    target_sheet_row = target_sheet(con, request.target, edition)
    factions = [f for f in dict.fromkeys([sheet.get("faction_id") if sheet else None,  # None: custom weapons only
                                          target_sheet_row.get("faction_id") if target_sheet_row else None]) if f]
    own = ([sheet["datasheet_id"]] if sheet else []) + ([target_sheet_row["datasheet_id"]] if target_sheet_row else [])
    # a standard or inline target has no faction: a rule of any faction may act for it
    searched = factions if target_sheet_row is not None else None
    named = [find_named(con, name, edition, searched, own, detachment=getattr(request, "detachment", None),
                        attacker_faction=sheet.get("faction_id") if sheet else None,
                        target_faction=target_sheet_row.get("faction_id") if target_sheet_row else None)
             for name in request.with_effects]
    for rule, name in zip(named, request.with_effects):
        check_sides(rule, name, [sheet["faction_id"]] if sheet and sheet.get("faction_id") else None,
                    [target_sheet_row["faction_id"]] if target_sheet_row and target_sheet_row.get("faction_id")
                    else None)
    defaults = target_defaults(con, target_sheet_row["datasheet_id"], edition) if target_sheet_row else []
    off = {name_key(n) for n in request.without_effects}
    unknown = [n for n in request.without_effects if name_key(n) not in {name_key(d.name) for d in defaults}]
    if unknown:
        listed = ", ".join(repr(d.name) for d in defaults) or "none"
        raise InputError(f"--without {unknown[0]!r}: not one of the target's rules applied by default "
                         f"(those: {listed})")
    for d in defaults:
        if name_key(d.name) in off:
            if any(e.effect == "feel-no-pain" for e in d.effects):
                target = replace(target, feel_no_pain=None, feel_no_pain_mortal=None, feel_no_pain_psychic=None)
            notes.append(f"target ability {d.name!r} turned off (--without)")
        else:
            notes.append(f"target ability {d.name!r} applied by default (--without {d.name!r} turns it off)")
    kept = [d for d in defaults if name_key(d.name) not in off]
    effects = [e for rule in [*kept, *named] for e in rule.effects]
    choices = [rule.choice for rule in named if rule.choice]
    weapons, target, context, applied = apply_effects(effects, weapons, target, context, request.phase, choices)
    for a in applied:
        notes.append(f"{_KIND_WORDS.get(a.rule_kind, a.rule_kind)} {a.rule_name!r}: {a.did}")
    return weapons, target, context, tuple(applied), notes


def _has_effects(con) -> bool:
    return con.execute("SELECT count(*) FROM effects LIMIT 1").fetchone()[0] > 0
