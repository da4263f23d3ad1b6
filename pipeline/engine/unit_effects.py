"""The rules of a target unit's datasheets, and the rules named with ``--with``, on its model lines.

A target of several model lines (an Attached unit, a mixed unit: ``units.UnitTarget``) is
protected by the abilities of each of its datasheets, read from the ``effects`` table
(``pipeline.effects``): a Leader's "While this model is leading a unit, models in that unit have
the Feel No Pain 5+ ability", a Bodyguard's "While a CHARACTER model is leading this unit, that
CHARACTER model has the Feel No Pain 4+ ability", a unit's own "This model has a 4+ invulnerable
save". ``unit_effects`` applies them by default, each to the model lines it is for, lists them,
and turns one off by name (``--without NAME``); the rules named with ``--with`` apply to every
line of the target (a stratagem or an order on the unit) and to the attacker's weapons (its
Leader's included), as ``pipeline.effects.named.effects_for`` does for one profile.

Which rules hold (the ``situational:`` conditions the effects reader left, read here):

- "While this model / this unit / the bearer is leading a unit" holds for the abilities of a
  Leader (or Support) datasheet attached to the unit; "While a CHARACTER (model) is leading this
  unit" (with any keywords: "an ADEPTA SORORITAS CHARACTER", "a CAPTAIN or CHAPTER MASTER
  model") holds for the Bodyguard's abilities when an attached Leader has those keywords. The
  clause's "that unit" goes with it. Any other ``situational:`` condition is listed, never
  applied (``pipeline.effects.apply``).
- A protective effect (what ``named.DEFAULT_TARGET_EFFECTS`` names, the Benefit of Cover, a
  negative hit or wound modifier, a characteristic changed on the target's side: a Save of 2+,
  an attack's AP worsened) of such a rule, or of a rule without a situational condition, applies
  by default.

Which model lines a rule is for (read from its wording; the reading this module takes):

- a Leader's "models in that unit", "the bearer's unit", "each time an attack targets that unit":
  every line of the Attached unit, the Leader's own included; "other CHARACTER models attached to
  that unit": the other CHARACTER lines; "KEYWORD models in that unit": the lines with that
  keyword; "Bodyguard models": the Bodyguard lines; "this model" / "it" / "the bearer": its own lines;
- a Bodyguard's "While a CHARACTER ... is leading this unit, that CHARACTER model has": the lines of
  the Leaders it names; otherwise every line;
- an ability without a Leader clause: the lines of its own datasheet ("models in this unit", "this
  model"), or every line when it speaks of attacks that target the unit.

An effect on one model (Feel No Pain, an invulnerable save, a Save or Toughness, -1 Damage) goes to
each line the rule is for; an effect on the attack (a hit or wound modifier, Stealth, the Benefit
of Cover, a weapon's characteristic) goes to the whole attack when the rule is for every line of
the unit, else it is listed and not applied (the hit and wound rolls are made for the whole unit).
"""

from __future__ import annotations

import dataclasses
import re
import weakref
from dataclasses import dataclass

from pipeline.effects.apply import AppliedEffect, apply_effects, effect_from_row
from pipeline.effects.named import DEFAULT_TARGET_EFFECTS, NamedRule, check_sides, find_named, name_key
from pipeline.effects.vocabulary import split_conditions
from pipeline.engine.profiles import Context, Weapon
from pipeline.engine.units import ModelLine, UnitTarget
from pipeline.errors import InputError
from schemas.records import Effect

#: Effects on one model: applied line by line.
_LINE_KINDS = frozenset({"feel-no-pain", "invulnerable-save", "damage-reduction"})
_LEADS = re.compile(r"(?i)^while (?:this model|this unit|the bearer) is leading a unit$")
_LED_BY = re.compile(r"(?i)^while an? (?P<who>.+?) is leading (?:this unit|this model's unit)$")
_CLAUSE_REST = frozenset({"that unit", "this unit"})


@dataclass(frozen=True)
class SheetPart:
    """One datasheet of a target (or attacking) unit: its row, role (``bodyguard``, ``leader``,
    ``support``), keywords (upper case) and the indexes of its model lines in the unit."""

    sheet: dict
    role: str
    keywords: frozenset[str]
    lines: tuple[int, ...]


@dataclass(frozen=True)
class LineRule:
    """A rule applied to some model lines: the rule (its effects with the Leader clause taken
    away), the datasheet it is of, and the indexes of the lines it is for."""

    rule: NamedRule
    sheet_name: str
    lines: tuple[int, ...]


def has_keywords(who: str, keywords: frozenset[str]) -> bool:
    """Whether a unit with ``keywords`` is ``who`` as a Leader clause names it: keywords one
    after the other, alternatives joined by "or", a trailing "model" ignored.

    >>> kw = frozenset({"CHARACTER", "ADEPTA SORORITAS", "CANONESS"})
    >>> has_keywords("ADEPTA SORORITAS CHARACTER", kw), has_keywords("CAPTAIN or CANONESS model", kw)
    (True, True)
    >>> has_keywords("TECH-PRIEST model", kw)
    False
    """
    upper = {k.upper() for k in keywords}
    for alternative in re.split(r"(?i)\s+or\s+", who.strip()):
        words = re.sub(r"(?i)\s+models?$", "", alternative.strip()).upper().split()
        reach = {0}
        for i in range(len(words) + 1):
            if i in reach:
                reach |= {j for j in range(i + 1, len(words) + 1) if " ".join(words[i:j]) in upper}
        if words and len(words) in reach:
            return True
    return False


def _clause(effects: list[Effect], part: SheetPart, leaders: list[SheetPart]) -> tuple[bool, list[SheetPart], bool]:
    """(the rule's Leader clause holds or there is none, the Leaders it names, it had one)."""
    named: list[SheetPart] = []
    had = False
    for name, value in split_conditions(effects[0].conditions):
        if name != "situational" or "leading" not in value.lower():
            continue
        had = True
        if _LEADS.match(value.strip()):
            if part.role == "bodyguard":
                return False, [], True
        elif m := _LED_BY.match(value.strip()):
            named = [lp for lp in leaders if has_keywords(m.group("who"), lp.keywords)]
            if part.role != "bodyguard" or not named:
                return False, [], True
        else:
            return False, [], True  # "leading a unit that contains ...": not read
    return True, named, had


def _without_clause(e: Effect) -> Effect:
    terms = [(n, v) for n, v in split_conditions(e.conditions)
             if not (n == "situational" and ("leading" in v.lower() or v.strip().lower() in _CLAUSE_REST))]
    text = ";".join(f"{n}:{v}" if v is not None else n for n, v in terms) or None
    return e.model_copy(update={"conditions": text})


def _protective(e: Effect) -> bool:
    """An effect of the target's side that protects it (what applies by default)."""
    if e.side != "target":
        return False
    if e.effect in DEFAULT_TARGET_EFFECTS or e.effect == "benefit-of-cover":
        return True
    if e.effect == "modify-roll":
        return e.roll in ("hit", "wound") and (e.value or 0) < 0
    return e.effect in ("modify-characteristic", "set-characteristic")


def _lines_for(wording: str, part: SheetPart, unit: UnitTarget, named: list[SheetPart], had: bool) -> tuple[int, ...]:
    """The lines of ``unit`` a rule of ``part`` worded ``wording`` is for (module docstring); ``had``:
    the rule has a Leader clause, ``named``: the Leaders a Bodyguard's clause names.

    >>> u = UnitTarget("u", (ModelLine("Sister", 2, 3, 3, 1), ModelLine("Canoness", 1, 3, 3, 4, character=True,
    ...                      role="leader")))
    >>> guard, lead = SheetPart({}, "bodyguard", frozenset(), (0,)), SheetPart({}, "leader", frozenset(), (1,))
    >>> _lines_for("While this model is leading a unit, models in that unit have the Feel No Pain 5+ ability.",
    ...            lead, u, [], True)
    (0, 1)
    >>> _lines_for("While a CHARACTER model is leading this unit, that CHARACTER model has the Feel No Pain 4+ "
    ...            "ability.", guard, u, [lead], True), _lines_for("This model has a 4+ invulnerable save.", lead, u,
    ...                                                            [], False)
    ((1,), (1,))
    """
    every = tuple(range(len(unit.lines)))
    text = wording.lower()
    rest = text.split(",", 1)[1] if had and "," in text else text
    targets_unit = bool(re.search(r"attack (?:targets|is made against|is allocated to a model in) (?:this|that) unit",
                                  text))
    if part.role != "bodyguard" and had:
        if re.search(r"\bother character models?\b", rest):
            return tuple(i for i in every if unit.lines[i].character and i not in part.lines)
        if re.search(r"\bbodyguard models?\b", rest):
            return tuple(i for i in every if unit.lines[i].role == "bodyguard")
        m = re.search(r"\b([A-Z][A-Z\-]+(?: [A-Z][A-Z\-]+)*) models? in that unit", wording.split(",", 1)[-1])
        if m and m.group(1) not in ("CHARACTER",):
            return tuple(i for i in every if m.group(1) in unit.lines[i].keywords)
        if re.match(r"\s*(?:it|this model|the bearer) (?:has|have)\b", rest):
            return part.lines
        return every
    if part.role == "bodyguard" and had:
        if re.match(r"\s*that\b[^,]*\b(?:model|character) has\b|\s*that [\w\- ]+ has\b", rest):
            return tuple(i for lp in named for i in lp.lines)
        return every
    if "bearer's unit" in text or targets_unit:
        return every
    return part.lines


#: The effects of each datasheet's abilities, per open (read-only) connection: a matchup asks for
#: the same datasheets' rules once per pair.
_READ: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _ability_effects(con, datasheet_id: str) -> dict[tuple[str, str], list[Effect]]:
    """The ``effects`` rows of the abilities of one datasheet, by (table, rule id), in order
    (read once per connection)."""
    try:
        kept = _READ.setdefault(con, {})
    except TypeError:  # a connection that cannot be weakly referenced: read each time
        kept = {}
    if datasheet_id not in kept:
        cols = ", ".join(Effect.model_fields)
        cur = con.execute(f"SELECT {cols} FROM effects WHERE rule_table = 'abilities' AND starts_with(rule_id, ?) "
                          "ORDER BY rule_id, position", [datasheet_id + "|"])
        names = [d[0] for d in cur.description]
        grouped: dict[tuple[str, str], list[Effect]] = {}
        for row in cur.fetchall():
            e = effect_from_row(dict(zip(names, row)))
            grouped.setdefault((e.rule_table, e.rule_id), []).append(e)
        kept[datasheet_id] = grouped
    return kept[datasheet_id]


def unit_rules(con, unit: UnitTarget, parts: list[SheetPart]) -> list[LineRule]:
    """The protective rules of the datasheets of ``unit`` that apply by default, each with the
    lines it is for (module docstring), in the order of ``parts``."""
    leaders = [p for p in parts if p.role != "bodyguard"]
    out: list[LineRule] = []
    for part in parts:
        for (table, rule_id), effects in _ability_effects(con, part.sheet["datasheet_id"]).items():
            holds, named, had = _clause(effects, part, leaders)
            if not holds:
                continue
            kept = tuple(_without_clause(e) if had else e for e in effects if _protective(e))
            if not kept or any(n == "choice" for e in kept for n, _ in split_conditions(e.conditions)):
                continue
            if not had and any(e.conditions for e in kept):
                continue  # a rule of the unit's own with a condition: as named.target_defaults
            if not had and len(part.lines) > 1 and "bearer's unit" not in (kept[0].wording or "").lower():
                # a datasheet of several model lines: its lines have their Feel No Pain (the
                # feel_no_pain table's model line) and invulnerable saves (the model profiles)
                # already, and an effects row does not say which line "this model" is
                kept = tuple(e for e in kept if e.effect not in ("feel-no-pain", "invulnerable-save"))
                if not kept:
                    continue
            lines = _lines_for(kept[0].wording, part, unit, named, had)
            if lines:
                rule = NamedRule(kept[0].rule_name, kept[0].rule_kind, table, rule_id, kept)
                out.append(LineRule(rule, part.sheet["name"], lines))
    return out


def _line_fields(line: ModelLine, target, context: Context) -> ModelLine:
    """``line`` with the characteristics an application of effects gave its ``Target`` and the
    damage reduction it gave the context."""
    return dataclasses.replace(
        line, toughness=target.toughness, save=target.save, invulnerable_save=target.invulnerable_save,
        feel_no_pain=target.feel_no_pain, feel_no_pain_mortal=target.feel_no_pain_mortal,
        feel_no_pain_psychic=target.feel_no_pain_psychic,
        damage_reduction=context.damage_reduction or line.damage_reduction)


def _on_one_model(e: Effect) -> bool:
    return e.effect in _LINE_KINDS or (e.effect in ("modify-characteristic", "set-characteristic")
                                       and e.characteristic in ("T", "Sv"))


def unit_effects(con, request, edition: int, weapons: list[Weapon], unit: UnitTarget, context: Context,
                 parts: list[SheetPart], attacker_parts: list[SheetPart], factions: list[str]):
    """The attack of ``request`` (``service.AttackRequest``) on the unit target ``unit`` with its
    datasheets' protective rules (``unit_rules``, less ``request.without_effects``) on the lines
    they are for and the rules of ``request.with_effects`` (``find_named``, the datasheets of
    both units, Leaders included, searched first) on every line and on the attacker's weapons.
    A named rule of a Leader attached to the attacker holds "while this model is leading a unit".

    Returns (weapons, unit, context, applied effects, notes). Raises ``NotFoundError`` and
    ``InputError`` as ``find_named`` does, and ``InputError`` for a ``--without`` name that is
    not one of the unit's rules applied by default (listing them).
    """
    notes: list[str] = []
    own = [p.sheet["datasheet_id"] for p in [*attacker_parts, *parts]]
    named = [find_named(con, name, edition, factions, own) for name in request.with_effects]
    attacking_factions = [f for f in dict.fromkeys(p.sheet.get("faction_id") for p in attacker_parts) if f] or None
    for rule, name in zip(named, request.with_effects):
        check_sides(rule, name, attacking_factions,
                    [f for f in dict.fromkeys(p.sheet.get("faction_id") for p in parts) if f] or None)
    defaults = unit_rules(con, unit, parts)
    off = {name_key(n) for n in request.without_effects}
    names = {key for d in defaults for key in _keys(d)}
    unknown = [n for n in request.without_effects if name_key(n) not in names]
    if unknown:
        listed = ", ".join(dict.fromkeys(repr(d.rule.name) for d in defaults)) or "none"
        raise InputError(f"--without {unknown[0]!r}: not one of the target unit's rules applied by default "
                         f"(those: {listed}; 'DATASHEET: NAME' names the rule of one datasheet)")
    every = tuple(range(len(unit.lines)))
    kept: list[LineRule] = []
    for d in defaults:
        where = ", ".join(unit.lines[i].name for i in d.lines)
        if off & set(_keys(d)):
            notes.append(f"target ability {d.rule.name!r} ({d.sheet_name}) turned off (--without)")
        else:
            notes.append(f"target ability {d.rule.name!r} ({d.sheet_name}) applied by default to {where} "
                         f"(--without {d.rule.name!r} turns it off)")
            kept.append(d)
    for rule in named:
        kept.append(LineRule(_held(rule, attacker_parts, parts), "", _named_lines(rule, unit, parts)))
    choices = [rule.choice for rule in named if rule.choice]
    # the effects on the attack: once, for the rules of every line; the others listed
    on_attack: list[Effect] = []
    applied: list[AppliedEffect] = []
    for r in kept:
        for e in r.rule.effects:
            if _on_one_model(e) and e.side == "target":
                continue
            if r.lines == every:
                on_attack.append(e)
            else:
                applied.append(_not_for_all(e, unit, r.lines))
    first = unit.lines[0].as_target(unit)
    keyed = [e for e in on_attack if _by_attacking_sheet(e)] if len(attacker_parts) > 1 else []
    on_attack = [e for e in on_attack if not any(e is k for k in keyed)]
    weapons, target, context, did = apply_effects(on_attack, weapons, first, context, request.phase, choices)
    applied = did + applied + _per_attacking_sheet(keyed, weapons, first, context, request.phase, choices,
                                                   attacker_parts)
    if target.stealth and not unit.stealth:
        unit = dataclasses.replace(unit, stealth=True)
    # the effects on one model: line by line, each listed once with the lines it changed
    by_effect: dict[tuple, tuple[AppliedEffect, list[str]]] = {}
    lines = list(unit.lines)
    for i, line in enumerate(unit.lines):
        effects = [e for r in kept if i in r.lines for e in r.rule.effects if _on_one_model(e) and e.side == "target"]
        if not effects:
            continue
        bare = dataclasses.replace(context, damage_reduction=None)
        _, t, c, results = apply_effects(effects, weapons, line.as_target(unit), bare, request.phase, choices)
        lines[i] = _line_fields(line, t, c)
        for e, a in zip(_distinct(effects), results):
            key = (e.rule_table, e.rule_id, a.did)
            entry = by_effect.setdefault(key, (a, []))
            entry[1].append(line.name)
    for a, names in by_effect.values():
        did = a.did + (f" (model lines: {', '.join(names)})" if a.applied else "")
        applied.append(dataclasses.replace(a, did=did))
    unit = dataclasses.replace(unit, lines=tuple(lines))
    for a in applied:
        notes.append(f"{a.rule_kind.replace('datasheet-ability', 'ability')} {a.rule_name!r}: {a.did}")
    return weapons, unit, context, tuple(applied), notes


def _by_attacking_sheet(e: Effect) -> bool:
    """An effect on the attacker's weapons whose ``attacker:`` condition is read per datasheet of
    an attacking Attached unit ("each time a CHARACTER model in your unit makes an attack")."""
    on_weapons = e.effect in ("grant-ability", "extra-hits", "auto-wound") or (
        e.effect in ("modify-characteristic", "set-characteristic") and e.characteristic not in ("T", "Sv"))
    return e.side == "attacker" and on_weapons and any(n == "attacker" for n, _ in split_conditions(e.conditions))


def _per_attacking_sheet(effects: list[Effect], weapons: list[Weapon], target, context: Context, phase: str,
                         choices: list[str], attacker_parts: list[SheetPart]) -> list[AppliedEffect]:
    """Apply ``effects`` to the weapons of each datasheet of the attacking unit (a Leader's are
    named ``"<Leader>: <weapon>"``) with that datasheet's keywords as the attacker's; ``weapons``
    is changed in place. One ``AppliedEffect`` per effect and datasheet, naming the datasheet."""
    if not effects:
        return []
    leaders = [p for p in attacker_parts if p.role != "bodyguard"]
    out: list[AppliedEffect] = []
    for part in attacker_parts:
        prefix = f"{part.sheet['name']}: "
        idx = [i for i, w in enumerate(weapons)
               if (w.name.startswith(prefix) if part.role != "bodyguard"
                   else not any(w.name.startswith(f"{lp.sheet['name']}: ") for lp in leaders))]
        if not idx:
            continue
        own = dataclasses.replace(context, attacker_keywords=part.keywords)
        changed, _, _, did = apply_effects(effects, [weapons[i] for i in idx], target, own, phase, choices)
        for i, w in zip(idx, changed):
            weapons[i] = w
        out += [dataclasses.replace(a, did=f"{a.did} ({part.sheet['name']}'s weapons)") for a in did]
    return out


def _keys(rule: LineRule) -> tuple[str, str]:
    """The names ``--without`` turns a rule off by: its own, or ``"DATASHEET: NAME"``.

    >>> _keys(LineRule(NamedRule("Invulnerable Save", "datasheet-ability", "abilities", "i", ()), "Hospitaller", ()))
    ('invulnerablesave', 'hospitallerinvulnerablesave')
    """
    return name_key(rule.rule.name), name_key(f"{rule.sheet_name}: {rule.rule.name}")


def _named_lines(rule: NamedRule, unit: UnitTarget, parts: list[SheetPart]) -> tuple[int, ...]:
    """The lines a rule named with ``--with`` is for: "The bearer has" / "This model has" (an
    Enhancement, a Leader's ability): the Leader lines of an Attached unit; otherwise every line
    (a stratagem or an order on the unit).

    >>> u = UnitTarget("u", (ModelLine("Sister", 2, 3, 3, 1), ModelLine("Canoness", 1, 3, 3, 4, role="leader")))
    >>> parts = [SheetPart({}, "bodyguard", frozenset(), (0,)), SheetPart({}, "leader", frozenset(), (1,))]
    >>> e = Effect(source_id="s", locator="l", rule_table="enhancements", rule_id="i", rule_kind="enhancement",
    ...     rule_name="Mantle", edition=10, faction_id=None, position=0, side="target", effect="feel-no-pain",
    ...     roll=None, characteristic=None, value=5, parameter="all", weapon_type=None, conditions=None,
    ...     wording="The bearer has the Feel No Pain 5+ ability.", origin="reader")
    >>> _named_lines(NamedRule("Mantle", "enhancement", "enhancements", "i", (e,)), u, parts)
    (1,)
    """
    every = tuple(range(len(unit.lines)))
    leaders = tuple(i for p in parts if p.role != "bodyguard" for i in p.lines)
    if leaders and re.match(r"(?i)\s*(?:the bearer|this model) has\b", rule.effects[0].wording or ""):
        return leaders
    return every


def _distinct(effects: list[Effect]) -> list[Effect]:
    """The effects as ``apply_effects`` applies them: the same effect of one rule once."""
    seen, out = set(), []
    for e in effects:
        same = (e.rule_table, e.rule_id, e.effect, e.roll, e.characteristic, e.value, e.parameter, e.weapon_type,
                e.conditions)
        if same not in seen:
            seen.add(same)
            out.append(e)
    return out


def _not_for_all(e: Effect, unit: UnitTarget, lines: tuple[int, ...]) -> AppliedEffect:
    from pipeline.effects.apply import _describe

    names = ", ".join(unit.lines[i].name for i in lines)
    return AppliedEffect(e.rule_kind, e.rule_name, e.origin, e.source_id, e.locator, e.wording,
                         f"{_describe(e)}: not applied: it is for {names} only, and the hit and wound rolls "
                         "are made for the whole unit", False)


def _held(rule: NamedRule, attacker_parts: list[SheetPart], parts: list[SheetPart]) -> NamedRule:
    """A rule named with ``--with`` with its Leader clause taken away where it holds: an effect on
    the attacker's side when the rule is an ability of a Leader attached to the attacking unit
    (or of its Bodyguard, led by a Leader it names), an effect on the target's side likewise for
    the target unit."""
    if rule.rule_table != "abilities":
        return rule
    sheet_id = rule.rule_id.split("|", 1)[0]
    effects = []
    for e in rule.effects:
        side = attacker_parts if e.side == "attacker" else parts
        part = next((p for p in side if p.sheet["datasheet_id"] == sheet_id), None)
        if part is not None:
            holds, _, had = _clause([e], part, [p for p in side if p.role != "bodyguard"])
            if holds and had:
                e = _without_clause(e)
        effects.append(e)
    return dataclasses.replace(rule, effects=tuple(effects))
