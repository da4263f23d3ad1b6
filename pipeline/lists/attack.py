"""Listed units as they stand on the table, ready for the engine: ``wh40k attack --list`` and
``--target-list``, and the matchup of two lists (``pipeline.lists.matchup``).

A list's units on the table (``table_units``) are its Attached units (a Bodyguard unit and the
Leader / Support units the list attaches to it, each attachment allowed by the datasheets' leader
links) and every other unit. Each is picked by name (``pick_unit``): a unit's printed name, or
``NAME#N`` for the N-th unit of a name that repeats; a Leader's name picks its Attached unit.

As an attacker a listed unit fires what the list gives each model line (``UnitBuilder.weapons``):
every weapon profile of the datasheet the list names, as many as the line carries. Shooting phase
(Pistol, 10th edition, as ``from_db.read_loadout`` reads it): a line's Pistols are fired only by
its models that carry no other ranged weapon (each other ranged weapon taken to be on its own
model). Fight phase (10th edition, Making Attacks: one melee weapon per model, plus [EXTRA
ATTACKS] weapons): a line that carries more of its other melee weapons than it has models fights
with the best of them (the highest expected damage against the target), one per model. A weapon
of several profiles fires its first, as ``attack`` does, said in a note. An Attached unit fires
its Leaders' weapons with its Bodyguard's (``"<Leader>: <weapon>"``).

As a target it is a ``units.UnitTarget`` (``UnitBuilder.target``) of ``from_db.unit_from_datasheets``
with the list's model counts: each listed model goes to the model line of its name, else to the
line of its profile (T, Sv, W).

Enhancements (``UnitBuilder.enhancement_effects``): an Enhancement whose effects the ``effects``
table holds is applied as ``--with`` would apply it, its attacker effects when its bearer's unit
attacks, its target effects when it is attacked; one the table has no effects for is named as
not applied.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import duckdb

from pipeline import query
from pipeline.engine import exact
from pipeline.engine.from_db import Phase, _abilities, _weapon, unit_from_datasheets
from pipeline.engine.profiles import Context, Target, Weapon
from pipeline.errors import InputError, NotFoundError
from pipeline.lists.attack_input import ListUnit
from pipeline.lists.match import MatchedList, MatchedUnit, match_list
from pipeline.normalise.names import name_key


@dataclass(frozen=True)
class TableUnit:
    """A unit as it stands on the table: ``bodyguard`` (an index into ``MatchedList.units``) and the
    ``leaders`` attached to it (indexes; none for a unit on its own). ``label``: how it is picked
    and shown (``"Khorne Berzerkers#2"``; an Attached unit ``"Khârn the Betrayer + Khorne
    Berzerkers"``)."""

    label: str
    bodyguard: int
    leaders: tuple[int, ...] = ()

    @property
    def members(self) -> tuple[int, ...]:
        """The units of it, the Bodyguard first."""
        return (self.bodyguard, *self.leaders)


def unit_labels(matched: MatchedList) -> list[str]:
    """Each listed unit's label: its printed name, with ``#N`` (its place among the units of that
    name) when the name repeats."""
    keys = [name_key(u.unit.name) for u in matched.units]
    seen: dict[str, int] = {}
    out = []
    for u, key in zip(matched.units, keys):
        seen[key] = seen.get(key, 0) + 1
        out.append(u.unit.name + (f"#{seen[key]}" if keys.count(key) > 1 else ""))
    return out


def table_units(matched: MatchedList, notes: list[str] | None = None) -> list[TableUnit]:
    """The list's units as they stand on the table, in list order (an Attached unit where its
    Bodyguard is listed). A Leader whose attachment the datasheets do not allow (or cannot tell:
    a unit unmatched) stands on its own, said in ``notes``; a unit matched to no datasheet is left
    out, said in ``notes``."""
    notes = notes if notes is not None else []
    labels = unit_labels(matched)
    leaders_of: dict[int, list[int]] = {}
    attached: set[int] = set()
    for a in matched.attachments:
        if a.allowed:
            leaders_of.setdefault(a.bodyguard, []).append(a.leader)
            attached.add(a.leader)
        else:
            why = ("its datasheet cannot lead that unit" + (f" (it can lead: {', '.join(a.can_lead)})" if a.can_lead
                                                             else "") if a.allowed is False
                   else "the database cannot tell whether it can lead that unit")
            notes.append(f"{labels[a.leader]} is attached to {labels[a.bodyguard]} in the list, but {why}: "
                         "it stands on its own")
    out = []
    for i, unit in enumerate(matched.units):
        if i in attached:
            continue
        if unit.datasheet_id is None:
            notes.append(f"{labels[i]} (line {unit.unit.line}) matches no datasheet: left out")
            continue
        leaders = tuple(j for j in leaders_of.get(i, []) if matched.units[j].datasheet_id is not None)
        label = " + ".join([labels[j] for j in leaders] + [labels[i]])
        out.append(TableUnit(label, i, leaders))
    return out


def pick_unit(matched: MatchedList, text: str, where: str) -> TableUnit:
    """The unit on the table that ``text`` names in the list ``where`` (for messages): a listed
    unit's label (``"Intercessor Squad#2"``) or its name when only one unit has it, a Leader's
    picking its Attached unit. Raises ``NotFoundError`` for a name no unit has and ``InputError``
    for a name several units have, each listing the list's units."""
    labels = unit_labels(matched)
    units = table_units(matched)
    listed = "; ".join(u.label for u in units)
    wanted = name_key(text)
    hits = [i for i, label in enumerate(labels) if name_key(label) == wanted]
    if not hits:
        hits = [i for i, u in enumerate(matched.units) if name_key(u.unit.name) == wanted]
        if len(hits) > 1:
            raise InputError(f"{where}: {len(hits)} units are named {text!r}: pick one by its place, "
                             + ", ".join(repr(labels[i]) for i in hits) + f"; the list's units: {listed}")
    if not hits:
        raise NotFoundError(f"{where}: no unit {text!r}; the list's units: {listed}")
    for unit in units:
        if hits[0] in unit.members:
            return unit
    raise InputError(f"{where}: unit {labels[hits[0]]!r} matches no datasheet of the database, so it cannot "
                     f"attack or be attacked; the list's units: {listed}")


def read_listed(con: duckdb.DuckDBPyConnection, listed: ListUnit, edition: int | None) -> MatchedList:
    """The list of ``listed`` read (``pipeline.lists.parse_list``) and matched to the datasheets of
    ``edition`` (None: the edition the list shows, else the latest of the database). Raises
    ``ArmyListError`` naming the list for one that cannot be read."""
    from pipeline.lists import ArmyListError, parse_list

    data = listed.data.encode("utf-8") if isinstance(listed.data, str) else listed.data
    try:
        army = parse_list(data)
    except ArmyListError as exc:
        raise ArmyListError(f"{listed.source}, {exc}") from None
    return match_list(con, army, edition or army.edition or query.latest_edition(con))


@dataclass(frozen=True)
class _Sheet:
    """What a datasheet's weapons need of the database: its row, weapon profiles (weapon name ->
    profiles, per phase), weapon abilities, Pistols and [EXTRA ATTACKS] weapons."""

    row: dict
    profiles: dict[bool, dict[str, list[dict]]]
    abilities: dict
    pistols: frozenset[str]
    extra_attacks: frozenset[str]


class UnitBuilder:
    """Engine inputs of listed units, reading each datasheet once (module docstring)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, edition: int):
        self.con, self.edition = con, edition
        self._sheets: dict[str, _Sheet] = {}
        self._targets: dict[tuple, tuple] = {}
        self._enhancements: dict[tuple, tuple] = {}

    def sheet(self, datasheet_id: str) -> _Sheet:
        """The datasheet's ``_Sheet`` (read once)."""
        if datasheet_id not in self._sheets:
            con = self.con
            cur = con.execute("SELECT * FROM datasheets WHERE datasheet_id = ?", [datasheet_id])
            row = dict(zip([d[0] for d in cur.description], cur.fetchone()))
            profiles: dict[bool, dict[str, list[dict]]] = {False: {}, True: {}}
            cur = con.execute("SELECT * FROM weapon_profiles WHERE datasheet_id = ? ORDER BY weapon_name, profile_name",
                              [datasheet_id])
            names = [d[0] for d in cur.description]
            for r in cur.fetchall():
                p = dict(zip(names, r))
                profiles[bool(p["is_melee"])].setdefault(p["weapon_name"], []).append(p)
            tagged = lambda tag: frozenset(n for (n,) in con.execute(  # noqa: E731
                "SELECT DISTINCT weapon_name FROM weapon_abilities WHERE datasheet_id = ? AND name = ?",
                [datasheet_id, tag]).fetchall())
            self._sheets[datasheet_id] = _Sheet(row, profiles, _abilities(con, datasheet_id), tagged("PISTOL"),
                                                tagged("EXTRA ATTACKS"))
        return self._sheets[datasheet_id]

    def weapons(self, matched: MatchedList, unit: TableUnit, phase: Phase, target: Target | None,
                context: Context, notes: list[str]) -> list[Weapon]:
        """The weapons the unit fires in ``phase`` (``Weapon.models``: how many of each), its
        Bodyguard's then each Leader's (named ``"<Leader>: <weapon>"``); ``target`` and
        ``context`` decide a line's melee weapon (module docstring). Empty when it has no weapon
        of the phase."""
        labels = unit_labels(matched)
        out: list[Weapon] = []
        for k, index in enumerate(unit.members):
            member = matched.units[index]
            fired = self._member_weapons(member, labels[index], phase, target, context, notes)
            if k > 0:
                fired = [dataclasses.replace(w, name=f"{member.datasheet_name}: {w.name}") for w in fired]
            out += fired
        return out

    def _member_weapons(self, member: MatchedUnit, label: str, phase: Phase, target: Target | None,
                        context: Context, notes: list[str]) -> list[Weapon]:
        sheet = self.sheet(member.datasheet_id)
        melee = phase == "fight"
        profiles = sheet.profiles[melee]
        counts: dict[str, int] = {}
        for model in member.models:
            carried: dict[str, int] = {}
            other_ranged = 0
            for w in model.wargear:
                if w.kind != "weapon" or w.matched is None:
                    continue
                if w.matched in profiles:
                    carried[w.matched] = carried.get(w.matched, 0) + w.count
                elif not melee and w.matched in sheet.profiles[True]:
                    continue
                if not melee and w.matched in profiles and w.matched not in sheet.pistols:
                    other_ranged += w.count
            if not melee:
                bare = max(0, model.count - min(model.count, other_ranged))  # models with no other ranged weapon
                for name in [n for n in carried if n in sheet.pistols]:
                    fired = min(carried[name], bare)
                    if fired < carried[name]:
                        notes.append(f"{label}: {carried[name] - fired} of {carried[name]} {name} not fired: their "
                                     "bearers fire their other ranged weapons (Pistol)")
                    carried[name] = fired
            else:
                carried = self._one_melee_weapon(sheet, label, model.printed, model.count, carried, target, context,
                                                 notes)
            for name, n in carried.items():
                if n > 0:
                    counts[name] = counts.get(name, 0) + n
        out = []
        for name, n in counts.items():
            options = [p for p in profiles[name] if p["strength"]]
            if not options:
                notes.append(f"{label}: {name} has no fixed Strength in the database: not fired")
                continue
            if len(profiles[name]) > 1:
                notes.append(f"{label}: {name} fired with its {options[0]['profile_name']!r} profile (of "
                             + ", ".join(repr(p["profile_name"]) for p in profiles[name]) + ")")
            out.append(_weapon(options[0], n, sheet.abilities))
        return out

    def _one_melee_weapon(self, sheet: _Sheet, label: str, line: str, models: int, carried: dict[str, int],
                          target: Target | None, context: Context, notes: list[str]) -> dict[str, int]:
        """The melee weapons a list line fights with: all of them when it carries no more than one
        (other than [EXTRA ATTACKS]) per model, else its models' best weapons, one per model."""
        one_of = {n: c for n, c in carried.items() if n not in sheet.extra_attacks}
        if sum(one_of.values()) <= models:
            return carried
        def expected(name: str) -> float:
            p = next((p for p in sheet.profiles[True][name] if p["strength"]), None)
            if p is None or target is None:
                return 0.0
            return exact.resolve([_weapon(p, 1, sheet.abilities)], target, context).damage.mean
        ranked = sorted(one_of, key=lambda n: -expected(n))
        left, kept = models, {n: c for n, c in carried.items() if n in sheet.extra_attacks}
        for name in ranked:
            kept[name] = min(one_of[name], left)
            left -= kept[name]
        notes.append(f"{label}: the {models} {line} fight with one melee weapon each (Making Attacks): "
                     + ", ".join(f"{kept[n]} {n}" for n in ranked if kept[n])
                     + (f", the best against {target.name}" if target is not None else ""))
        return {n: c for n, c in kept.items() if c}

    def target(self, matched: MatchedList, unit: TableUnit, phase: Phase, notes: list[str]):
        """The unit as a ``units.UnitTarget`` with the list's model counts (module docstring).
        Raises ``InputError`` as ``from_db.unit_from_datasheets`` does."""
        key = (id(matched), unit, phase)
        if key not in self._targets:
            own: list[str] = []
            sheets = [self.sheet(matched.units[i].datasheet_id).row for i in unit.members]
            bodyguard = matched.units[unit.bodyguard]
            built = unit_from_datasheets(self.con, sheets[0], sheets[1:], bodyguard.unit.model_count or None, phase,
                                         own)
            from pipeline.engine.unit_effects import SheetPart

            lines: list = []
            parts = []
            for k, index in enumerate(unit.members):
                member = matched.units[index]
                mine = [ln for ln in built.lines if ln.unit == sheets[k]["name"] and (ln.role == "bodyguard") == (k == 0)]
                start = len(lines)
                lines += self._listed_counts(member, sheets[k], mine, own)
                role = "bodyguard" if k == 0 else next((ln.role for ln in mine), "leader")
                parts.append(SheetPart(sheets[k], role, self._keywords(sheets[k]["datasheet_id"]),
                                       tuple(range(start, len(lines)))))
            self._targets[key] = (dataclasses.replace(built, name=unit.label, lines=tuple(lines)), tuple(own),
                                  tuple(parts))
        target, own, _ = self._targets[key]
        notes.extend(own)
        return target

    def target_parts(self, matched: MatchedList, unit: TableUnit, phase: Phase) -> list:
        """The ``unit_effects.SheetPart`` of each datasheet of the unit ``target`` built (Bodyguard
        first): which of its model lines are whose, for the rules of its datasheets."""
        self.target(matched, unit, phase, [])
        return list(self._targets[(id(matched), unit, phase)][2])

    def _keywords(self, datasheet_id: str) -> frozenset[str]:
        return frozenset(k for (k,) in self.con.execute(
            "SELECT upper(keyword) FROM keywords WHERE datasheet_id = ?", [datasheet_id]).fetchall())

    def _listed_counts(self, member: MatchedUnit, sheet: dict, lines: list, notes: list[str]) -> list:
        """``lines`` (one datasheet's model lines) with the counts the list gives its models."""
        if not lines:
            return lines
        profiles = {name_key(n, ignore_plural=True): (t, sv, w) for n, t, sv, w in self.con.execute(
            "SELECT model_name, toughness, save, wounds FROM model_profiles WHERE datasheet_id = ?",
            [sheet["datasheet_id"]]).fetchall()}
        counts = [0] * len(lines)
        for model in member.models:
            key = name_key(model.matched or model.printed, ignore_plural=True)
            at = next((i for i, ln in enumerate(lines) if name_key(ln.name, ignore_plural=True) == key), None)
            if at is None and key in profiles:
                at = next((i for i, ln in enumerate(lines)
                           if (ln.toughness, ln.save, ln.wounds) == profiles[key]), None)
            if at is None and len(lines) == 1:
                at = 0
            if at is None:
                notes.append(f"target {member.unit.name}: model {model.printed!r} matches no model line of "
                             f"{sheet['name']}; the datasheet's model counts are used")
                return lines
            counts[at] += model.count
        return [dataclasses.replace(ln, count=n) for ln, n in zip(lines, counts) if n > 0]

    def target_defaults(self, datasheet_id: str) -> tuple:
        """The effects of the target's own rules applied by default
        (``pipeline.effects.named.target_defaults``), read once per datasheet."""
        key = ("defaults", datasheet_id)
        if key not in self._enhancements:
            from pipeline.effects.named import target_defaults

            self._enhancements[key] = tuple(e for rule in target_defaults(self.con, datasheet_id, self.edition)
                                            for e in rule.effects)
        return self._enhancements[key]

    def enhancements(self, matched: MatchedList, unit: TableUnit) -> list[tuple[str, str]]:
        """(Enhancement as matched, bearer's label) of every member of the unit."""
        labels = unit_labels(matched)
        return [(found or printed, labels[i]) for i in unit.members
                for printed, found, _ in matched.units[i].enhancements]

    def enhancement_effects(self, name: str, faction_id: str | None, side: str) -> tuple[tuple, str | None]:
        """The effects of Enhancement ``name`` on ``side`` (``attacker``: its bearer's unit
        attacks; ``target``: it is attacked), and why none applies (None: some do)."""
        key = (name, faction_id, side)
        if key not in self._enhancements:
            from pipeline.effects.named import find_named

            try:
                rule = find_named(self.con, name, self.edition, [faction_id] if faction_id else [], [])
            except NotFoundError:
                self._enhancements[key] = ((), "not applied: the effects table has no effects for it "
                                               "(`wh40k effects unread` lists the rules the reader could not read)")
            except InputError as exc:
                self._enhancements[key] = ((), f"not applied: {exc}")
            else:
                effects = tuple(e for e in rule.effects if e.side == side)
                self._enhancements[key] = (effects, None if effects else
                                           f"not applied: its effects are for its unit as the "
                                           f"{'target' if side == 'attacker' else 'attacker'}")
        return self._enhancements[key]


def listed_enhancement_effects(builder: UnitBuilder, matched: MatchedList, unit: TableUnit, side: str,
                               notes: list[str]) -> tuple[list, list[dict]]:
    """The effects of the unit's Enhancements on ``side`` and one row per Enhancement (name,
    bearer, ``applied`` or why not), the reasons also in ``notes``."""
    effects: list = []
    rows: list[dict] = []
    for name, bearer in builder.enhancements(matched, unit):
        found, why = builder.enhancement_effects(name, matched.faction_id, side)
        effects += found
        rows.append({"enhancement": name, "bearer": bearer, "applied": why is None, "note": why})
        if why:
            notes.append(f"enhancement {name!r} ({bearer}): {why}")
    return effects, rows


def listed_attack(con: duckdb.DuckDBPyConnection, request, explain: bool = True):
    """``service.attack`` of a request with ``attacker_list`` and/or ``target_list``
    (``pipeline.engine.service.AttackRequest``): the listed units as built (module docstring),
    the other side as the request names it. Returns an ``AttackOutcome`` whose ``listed`` says
    the units picked and their Enhancements. Raises ``ArmyListError`` (a list that cannot be
    read), ``NotFoundError`` / ``InputError`` (a unit the list does not have, or several),
    ``InputError`` for options the list replaces (``--weapon``, ``--models``, ``--leader`` with
    ``--list``; ``--target-models``, ``--target-leader`` with ``--target-list``), and what
    ``attack`` raises."""
    from pipeline.effects.apply import apply_effects
    from pipeline.engine import service

    _check_options(request)
    notes: list[str] = []
    mine = theirs = None
    if request.attacker_list is not None:
        mine = read_listed(con, request.attacker_list, request.edition)
    edition = request.edition or (mine.edition if mine else None)
    if mine is not None and request.detachment is None and len(mine.army.detachments) == 1:
        request = dataclasses.replace(request, detachment=mine.army.detachments[0])  # the list's, for --with
    if request.target_list is not None:
        theirs = read_listed(con, request.target_list, edition)
    edition = edition or (theirs.edition if theirs else None) or query.latest_edition(con)
    builder = UnitBuilder(con, edition)
    listed: dict = {}
    context = dataclasses.replace(request.context, edition=edition)
    # the attacker: a listed unit, or the request's datasheet
    sheet = None
    if mine is not None:
        attacker = pick_unit(mine, request.attacker_list.unit, f"--list {request.attacker_list.source}")
        table_notes: list[str] = []
        table_units(mine, table_notes)
        labels = unit_labels(mine)
        notes += [n for n in table_notes if any(n.startswith(labels[i] + " ") for i in attacker.members)]
        sheet = builder.sheet(mine.units[attacker.bodyguard].datasheet_id).row
        listed["attacker"] = _listed_unit(mine, attacker, request.attacker_list.source)
        name = attacker.label
        phase = request.phase or "shooting"
    else:
        from pipeline.engine.inputs import parse_weapon_profile

        if request.attacker is not None:
            sheet, _ = query.find_datasheet_preferring(con, request.attacker, edition)
        custom = [parse_weapon_profile(text, request.models or 1, edition) for text in request.weapon_profiles]
        name = sheet["name"] if sheet is not None else "custom weapon profile" + ("s" if len(custom) > 1 else "")
        phase = request.phase or service._phase(con, sheet, request.weapons, custom, notes)
        service._check_custom_phase(custom, phase)
    if sheet is not None:
        context = dataclasses.replace(context, attacker_keywords=context.attacker_keywords | frozenset(
            k for (k,) in con.execute("SELECT upper(keyword) FROM keywords WHERE datasheet_id = ?",
                                      [sheet["datasheet_id"]]).fetchall()))
    if phase == "fight" and context.cover:
        context = dataclasses.replace(context, cover=False)
    # the target: a listed unit, or the request's target
    unit = None
    if theirs is not None:
        picked = pick_unit(theirs, request.target_list.unit, f"--target-list {request.target_list.source}")
        unit = builder.target(theirs, picked, phase, notes)
        target = dataclasses.replace(unit.lines[0].as_target(unit), name=unit.name)
        listed["target"] = _listed_unit(theirs, picked, request.target_list.source)
        target_id = theirs.units[picked.bodyguard].datasheet_id
    else:
        target = service.resolve_target(con, request.target, request.target_models, notes, phase, edition)
        if request.feel_no_pain is not None:
            target = dataclasses.replace(target, feel_no_pain=request.feel_no_pain)
        unit = service._target_unit(con, dataclasses.replace(request, phase=phase), edition, notes)
        target_id = request.target
    if unit is not None and request.feel_no_pain is not None:
        unit = dataclasses.replace(unit, lines=tuple(dataclasses.replace(ln, feel_no_pain=request.feel_no_pain)
                                                     for ln in unit.lines))
    if mine is not None:
        weapons = builder.weapons(mine, attacker, phase, target, context, notes)
        if not weapons:
            raise InputError(f"--list {request.attacker_list.source}: {attacker.label} has no "
                             f"{'melee' if phase == 'fight' else 'ranged'} weapon in the list: attack in the "
                             f"{'shooting' if phase == 'fight' else 'fight'} phase (--phase)")
    else:
        weapons = [] if sheet is None or (custom and not request.weapons) else service.attacker_weapons(
            con, sheet, phase, request.weapons, request.models, notes, target=target, context=context)
        weapons += custom
        request = dataclasses.replace(request, phase=phase)
        for leader in request.leaders:
            weapons += service._leader_weapons(con, leader, sheet, request, edition, notes, target, context)
        if request.leaders:
            name = " + ".join([name, *request.leaders])
    from pipeline.effects.named import effects_for

    request = dataclasses.replace(request, phase=phase, target=target_id,
                                  attacker=sheet["datasheet_id"] if sheet is not None else None)
    if theirs is not None and (len(unit.lines) > 1 or unit.attached):
        # an Attached or mixed listed unit: the rules of its datasheets on the model lines they are
        # for, as for a unit target named by its datasheets
        weapons, unit, context, applied, effect_notes = service._unit_effects(
            con, request, sheet, edition, weapons, unit, context, builder.target_parts(theirs, picked, phase))
        held = {f"({a.rule_name}) only when:" for a in applied}  # a Leader's condition that holds now
        notes = [n for n in notes if not any(h in n for h in held)]
    else:
        weapons, target, context, applied, effect_notes = effects_for(con, request, sheet, edition, weapons, target,
                                                                      context)
    notes += effect_notes
    extra: list = []
    if mine is not None:
        found, listed["attacker"]["enhancements"] = listed_enhancement_effects(builder, mine, attacker, "attacker",
                                                                               notes)
        extra += found
    if theirs is not None:
        found, listed["target"]["enhancements"] = listed_enhancement_effects(builder, theirs, picked, "target", notes)
        extra += found
    if extra:
        weapons, target, context, more = apply_effects(extra, weapons, target, context, phase)
        applied = tuple(applied) + tuple(more)
        notes += [f"enhancement {a.rule_name!r}: {a.did}" for a in more]
    if unit is None or len(unit.lines) == 1 and not unit.attached:
        result = exact.resolve(weapons, target, context)
        outcome_unit = None
    else:
        from pipeline.engine.units import resolve_unit

        outcome_unit = resolve_unit(weapons, unit, context, policy=request.allocation, objective=request.objective)
        result = outcome_unit.result
    steps = service.explain_steps(con, result, edition) if explain else service.unexplained_steps(result, edition)
    return service.AttackOutcome(name, tuple(weapons), target, result, steps, tuple(notes), tuple(applied),
                                 outcome_unit, listed)


def _listed_unit(matched: MatchedList, unit: TableUnit, source: str) -> dict:
    """JSON-ready: the list, the unit picked, its members with datasheets and model lines."""
    labels = unit_labels(matched)
    return {"list": source, "unit": unit.label, "members": [
        {"unit": labels[i], "datasheet_id": matched.units[i].datasheet_id,
         "role": "bodyguard" if k == 0 else "leader",
         "models": [{"model": m.matched or m.printed, "count": m.count,
                     "wargear": [f"{w.count}x {w.matched or w.printed}" for w in m.wargear]}
                    for m in matched.units[i].models]}
        for k, i in enumerate(unit.members)], "enhancements": []}


def _check_options(request) -> None:
    """Raise ``InputError`` for options a listed unit replaces."""
    if request.attacker_list is not None:
        given = [opt for opt, value in (("--weapon", request.weapons), ("--weapon-profile", request.weapon_profiles),
                                        ("--models", request.models), ("--leader", request.leaders)) if value]
        if given:
            raise InputError(f"{given[0]} cannot be used with --list: the list gives the unit's models, weapons and "
                             "Leaders; leave it out, or name the attacker as a datasheet instead of --list")
    if request.target_list is not None:
        given = [opt for opt, value in (("--target-models", request.target_models),
                                        ("--target-leader", request.target_leaders)) if value]
        if given:
            raise InputError(f"{given[0]} cannot be used with --target-list: the list gives the unit's models and "
                             "Leaders; leave it out, or give the target with --target instead")
