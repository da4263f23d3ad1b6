"""Errata as wordings: the wording before a mechanical erratum, derived from the one in force.

The sources print the amended wording (the core rules and the faction files already carry every
erratum); an errata document says what changed ("Change 9\\" to 8\\".", "Add 'FRAME'.",
"Remove 'Leader', add 'Support'."). Where the change is mechanical and its new words are found
once in the wording in force, undoing it gives the wording before: ``derive`` stores it as an
earlier ``RuleText`` of the same rule (undated: the wording of the publication before the
erratum) beside the amended one (dated by the errata document), both with the erratum's
``erratum_id`` and the errata source. Every other erratum is kept as text only, with the reason
in ``Erratum.derivation_note``.

Targets are found by name (the errata file's own ids are not the ids of the faction files):
a core rule by its rule key, a stratagem or enhancement by its name, a datasheet's keywords
(an erratum whose header names the Keywords section) or one of its abilities named in the
header, among the 11th-edition rows.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Iterable

from pipeline.normalise.text import slug
from schemas.records import (
    Ability, Datasheet, Enhancement, Erratum, ErratumTarget, Keyword, Record, RuleText, Source, Stratagem,
)

#: Quotes and dashes folded when the new words of an erratum are looked for (one character for
#: one, so that positions are kept).
_FOLD = str.maketrans({"”": '"', "“": '"', "″": '"', "’": "'", "‘": "'", "‑": "-", "–": "-"})


#: A characteristic named by an erratum that sets it ("Change S to '9'", "Change the Range
#: characteristic of demolition charges to '8\"'"): the value it replaces is not printed.
_CHARACTERISTIC = re.compile(
    r"(?i)^(?:the )?(?:M|T|Sv|W|Ld|OC|A|BS|WS|S|AP|D|Range|Move|Toughness|Save|Wounds|Leadership|"
    r"Objective Control|Attacks|Ballistic Skill|Weapon Skill|Strength|Armour Penetration|Damage)"
    r"(?: characteristic)?(?: of .+)?(?: and .+)?$")


@dataclass(frozen=True)
class Current:
    """A wording in force that an erratum may target: its rule key, title, section and text;
    ``keywords`` True when the wording is a keyword list (", "-joined)."""

    rule_key: str
    title: str
    section: str | None
    text: str
    language: str = "en"
    keywords: bool = False


def _keyword_list(text: str) -> tuple[list[str], list[str]]:
    """The keywords of a ", "-joined list as printed, and the same folded for comparison.

    >>> _keyword_list("Vehicle, FRAME,  ")
    (['Vehicle', 'FRAME'], ['VEHICLE', 'FRAME'])
    """
    words = [w.strip() for w in text.split(",") if w.strip()]
    return words, [_fold_keyword(w) for w in words]


def _fold_keyword(word: str | None) -> str:
    return (word or "").translate(_FOLD).upper()


def _whole_words(folded: str) -> str:
    """The pattern of a folded wording found as whole words (when it starts with a letter or a
    digit) or as printed (a quote mark, a dash)."""
    return rf"(?<!\w){re.escape(folded)}(?!\w)" if folded[:1].isalnum() else re.escape(folded)


def undo(form: str, old: str | None, new: str | None, current: Current) -> tuple[str | None, str | None]:
    """The wording before an erratum of ``form`` (``change_form``) applied to ``current``, or
    None and why not.

    >>> undo("replace", '9"', '8"', Current("k", "K", None, 'within 8” of it'))
    ('within 9" of it', None)
    >>> undo("add", None, "FRAME", Current("k", "K", None, "VEHICLE, FRAME, TRANSPORT", keywords=True))
    ('VEHICLE, TRANSPORT', None)
    >>> undo("replace", "S", "9", Current("k", "K", None, "S 9"))[1]
    "sets a characteristic (S to '9'): the value before is in no source"
    >>> undo("replace", "3", "6", Current("k", "K", None, "roll 6, or 6"))
    (None, "the new wording '6' is 2 times in the wording in force: which one changed is not known")
    """
    if form == "change-to":
        return None, "replaces the whole wording: the wording before it is in no source"
    if current.keywords:
        words, folded = _keyword_list(current.text)
        if form in ("add", "remove-add"):
            want = _fold_keyword(new)
            if want not in folded:
                return None, f"the added keyword {new!r} is not among the keywords in force"
            index = folded.index(want)
            if form == "add":
                del words[index]
            else:
                words[index] = old or ""
            return ", ".join(words), None
        if form == "remove":
            return ", ".join([*words, old or ""]), None
        return None, f"a {form} change of a keyword list"
    if form == "replace" and old and _CHARACTERISTIC.match(old):
        return None, f"sets a characteristic ({old} to {new!r}): the value before is in no source"
    if form == "remove":
        return None, "deletes words: where they stood is not known"
    if form not in ("replace", "add", "remove-add") or not new:
        return None, f"a {form} change"
    text = current.text.translate(_FOLD)
    want = new.translate(_FOLD)
    found = list(re.finditer(_whole_words(want), text))
    if not found:
        return None, f"the new wording {new!r} is not in the wording in force"
    if len(found) > 1:
        return None, (f"the new wording {new!r} is {len(found)} times in the wording in force: which one changed "
                      "is not known")
    start = found[0].start()
    replacement = "" if form == "add" else (old or "")
    before = current.text[:start] + replacement + current.text[start + len(want):]
    return re.sub(r" +([.,;:])", r"\1", re.sub(r"  +", " ", before)).strip(), None


def apply(form: str, old: str | None, new: str | None, current: Current) -> tuple[str | None, str | None]:
    """The wording after an erratum of ``form`` applied to ``current`` (a source that predates
    the erratum: its old words are found once and its new words are not), or None and why not.

    >>> apply("remove-add", "Leader", "Support", Current("k", "K", None, "Deep Strike, Leader", keywords=True))
    ('Deep Strike, Support', None)
    >>> apply("replace", '9"', '8"', Current("k", "K", None, 'within 9" of it'))
    ('within 8" of it', None)
    >>> apply("add", None, "FRAME", Current("k", "K", None, "VEHICLE", keywords=True))
    ('VEHICLE, FRAME', None)
    """
    if current.keywords:
        words, folded = _keyword_list(current.text)
        want, gone = _fold_keyword(new), _fold_keyword(old)
        if want and want in folded:
            return None, f"{new!r} is already in force"
        if form == "add" and new:
            return ", ".join([*words, new]), None
        if form in ("remove-add", "remove") and gone in folded:
            index = folded.index(gone)
            if form == "remove":
                del words[index]
            else:
                words[index] = new or ""
            return ", ".join(words), None
        return None, f"neither {old!r} nor {new!r} is in the list in force"
    if form != "replace" or not old or not new:
        return None, f"a {form} change cannot be applied to free text"
    text = current.text.translate(_FOLD)
    want = old.translate(_FOLD)
    found = list(re.finditer(_whole_words(want), text))
    if len(found) != 1:
        return None, f"the old wording {old!r} is {len(found)} times in the wording in force"
    start = found[0].start()
    return current.text[:start] + new + current.text[start + len(want):], None


def _same_change(form: str, old: str | None, new: str | None) -> tuple:
    """The key under which one change published in several documents counts once."""
    fold = lambda t: re.sub(r"\s+", " ", (t or "").translate(_FOLD)).strip(" .:").upper()  # noqa: E731
    return form, fold(old), fold(new)


class _Index:
    """The wordings in force of the 11th edition, by what errata name them."""

    def __init__(self, records: list[Record], sources: dict[str, Source]) -> None:
        def edition(r: Record) -> int | None:
            return getattr(sources.get(getattr(r, "source_id", "")), "edition", None)

        self.rules: dict[tuple[str, str], list[RuleText]] = defaultdict(list)
        self.stratagems: dict[str, list[Stratagem]] = defaultdict(list)
        self.enhancements: dict[str, list[Enhancement]] = defaultdict(list)
        self.datasheets: dict[str, list[Datasheet]] = defaultdict(list)
        self.keywords: dict[str, list[Keyword]] = defaultdict(list)
        self.abilities: dict[str, list[Ability]] = defaultdict(list)
        for r in records:
            if isinstance(r, RuleText) and r.edition == 11 and r.erratum_id is None:
                self.rules[(r.rule_key, r.language)].append(r)
            elif edition(r) != 11:
                continue
            elif isinstance(r, Stratagem):
                self.stratagems[slug(r.name)].append(r)
            elif isinstance(r, Enhancement):
                self.enhancements[slug(r.name)].append(r)
            elif isinstance(r, Datasheet):
                self.datasheets[slug(r.name)].append(r)
            elif isinstance(r, Keyword):
                self.keywords[r.datasheet_id].append(r)
            elif isinstance(r, Ability):
                self.abilities[r.datasheet_id].append(r)
        rank = {sid: (s.version_date.toordinal() if s.version_date else 0) for sid, s in sources.items()}
        for rows in self.rules.values():
            rows.sort(key=lambda r: (-rank.get(r.source_id, 0), r.source_id, r.locator))

    def current(self, target: ErratumTarget, header: str, language: str, publication: str = "",
                words: frozenset[str] = frozenset()) -> tuple[list[Current], str | None]:
        """The wordings in force the erratum targets (one per row found), or none and why.

        A datasheet name shared by several datasheets (a Codex Supplement's own version of a unit)
        is the one of the erratum's publication: the supplement's (``--black-templars``) for
        "Codex Supplement: Black Templars", else the one without a supplement suffix. A
        datasheet's ability is keyed by datasheet and ability (``terminator-squad-teleport-homer``,
        title ``Terminator Squad: Teleport Homer``): the same ability name on two datasheets is
        two wordings. An erratum of the Core Abilities section (``Remove 'Leader', add
        'Support'``: ``words`` are the erratum's old and new words, upper case) targets the list of
        the datasheet's core abilities."""
        kind, key = target.target_type, target.target_key
        if kind == "ruleContainer":
            rows = self.rules.get((key, language)) or []
            if not rows:
                return [], f"no {language} wording of the core rule {target.target_name!r} is stored"
            r = rows[0]
            return [Current(r.rule_key, r.title, r.section, r.text, language)], None
        if language != "en":
            return [], "the faction files are in English only"
        if kind == "stratagem":
            rows = self.stratagems.get(key) or []
            found = [Current(key, s.name, None, "\n".join(p for p in (s.when, s.target, s.effect) if p)) for s in rows[:1]]
            return found, None if found else f"no 11th-edition stratagem named {target.target_name!r} is stored"
        if kind == "enhancement":
            rows = self.enhancements.get(key) or []
            found = [Current(key, e.name, None, e.text) for e in rows[:1]]
            return found, None if found else f"no 11th-edition enhancement named {target.target_name!r} is stored"
        if kind == "datasheet":
            sheets = self.datasheets.get(key) or []
            if not sheets:
                return [], f"no 11th-edition datasheet named {target.target_name!r} is stored"
            sheet = _of_publication(sheets, publication)
            # a name several factions' datasheets share is one wording per faction
            shared = len({s.faction_id for s in sheets}) > 1
            name = f"{slug(sheet.faction_id)}-{slug(sheet.name)}" if shared else slug(sheet.name)
            suffix = f" ({sheet.faction_id})" if shared else ""
            lowered = header.lower()
            abilities = self.abilities.get(sheet.datasheet_id, [])
            core = [f"{a.name} {a.parameter}" if a.parameter else a.name for a in abilities if a.kind == "core"]
            if "core abilit" in lowered or (words and words <= {"LEADER", "SUPPORT"} and core):
                if not core:
                    return [], f"no core abilities of {sheet.name!r} are stored"
                return [Current(f"{name}-core-abilities", f"{sheet.name}: core abilities{suffix}", None,
                                ", ".join(core), keywords=True)], None
            if "keyword" in lowered:
                found = [k.keyword for k in self.keywords.get(sheet.datasheet_id, [])]
                if not found:
                    return [], f"no keywords of {sheet.name!r} are stored"
                return [Current(f"{name}-keywords", f"{sheet.name} keywords{suffix}", None, ", ".join(found),
                                keywords=True)], None
            for ability in abilities:
                if ability.text and len(ability.name) > 3 and ability.name.lower() in lowered:
                    return [Current(f"{name}-{slug(ability.name)}", f"{sheet.name}: {ability.name}{suffix}", None,
                                    ability.text)], None
            return [], "the header names no keyword section or stored ability of the datasheet"
        return [], f"no wording of the {kind} targets is stored (army rules and detachments are not rows of their own)"


def _of_publication(sheets: list[Datasheet], publication: str) -> Datasheet:
    """Of the datasheets sharing a name, the one an erratum of ``publication`` amends: a Codex
    Supplement's own version (its id ends with the supplement's slug), else the plain one of
    the publication's faction ("Codex: Imperial Agents": faction ``imperial-agents``), else the
    first plain one.

    >>> def sheet(i): return Datasheet(source_id="s", locator="l", datasheet_id=i, faction_id="f",
    ...     name="Gladiator Lancer", edition=11, game_mode=None, role=None, legend=None, starting_strength=1)
    >>> pair = [sheet("11e/f/gladiator-lancer--black-templars"), sheet("11e/f/gladiator-lancer")]
    >>> _of_publication(pair, "Codex Supplement: Black Templars").datasheet_id
    '11e/f/gladiator-lancer--black-templars'
    >>> _of_publication(pair, "Codex: Space Marines").datasheet_id
    '11e/f/gladiator-lancer'
    >>> _of_publication([sheet("11e/f/priest"), sheet("11e/imperial-agents/priest").model_copy(
    ...     update={"faction_id": "imperial-agents"})], "Codex: Imperial Agents").datasheet_id
    '11e/imperial-agents/priest'
    """
    if len(sheets) == 1:
        return sheets[0]
    own = slug(publication.split(":", 1)[1]) if ":" in publication else ""
    if own:
        for sheet in sheets:
            if sheet.datasheet_id.endswith(f"--{own}"):
                return sheet
    plain = [s for s in sheets if "--" not in s.datasheet_id.rsplit("/", 1)[-1]] or sheets
    return next((s for s in plain if s.faction_id == own), plain[0])


@dataclass
class _Change:
    """One erratum on one wording in force: its form, old and new words and where it is cited."""

    erratum: Erratum
    target: ErratumTarget
    form: str
    old: str | None
    new: str | None
    also: list[Erratum]  # the other errata that print the same change on the same wording


def derive(records: list[Record], sources: dict[str, Source]) -> tuple[list[Record], list[RuleText]]:
    """Undo each mechanical erratum on the wording it targets, chaining several on one wording.

    Returns the records with each ``Erratum`` given its ``derivation`` (``derived`` or
    ``text-only``, FAQs ``faq``) and ``derivation_note``, and the new ``RuleText`` rows: per
    wording in force (rule key and language) that errata change, the chain of wordings from the
    original to the one in force, keyed by the target's rule key, each with the id of the
    erratum that gives it, the errata source and a locator naming both (``...: before`` for the
    original, ``...: after`` between, ``...: in force`` for the last, with ``change i of k``
    when several errata chain). Only the last is dated (the errata source's ``version_date``):
    the errata file dates no entry, so the changes are taken in the file's order.

    The same change printed by several publications on one wording (``Add 'FRAME'`` in a Codex
    and its Supplement) counts once; the others are named in the note. Where a source predates
    an erratum (its wording still has the old words and not the new ones: a faction file that
    still lists ``Leader`` where the erratum says ``Support``), the erratum is applied forward:
    the source's wording is the one before, the one in force is derived, and the note says so.
    """
    errata = [r for r in records if isinstance(r, Erratum)]
    if not errata:
        return records, []
    from pipeline.extractors.gdc_rules import change_form  # the form as the parser reads it (imported only for errata)
    index = _Index(records, sources)
    targets: dict[str, list[ErratumTarget]] = defaultdict(list)
    for r in records:
        if isinstance(r, ErratumTarget):
            targets[r.erratum_id].append(r)
    english = {e.erratum_id: e for e in errata if e.language == "en"}
    reasons: dict[tuple[str, str], list[str]] = defaultdict(list)
    chains: dict[tuple[str, str], tuple[Current, list[_Change]]] = {}
    for e in errata:
        if e.kind != "erratum" or e.change is None or not e.text:
            continue
        form, old, new = change_form(e.text)
        if form is None:  # the translation reads otherwise: the English form holds
            continue
        header = (english.get(e.erratum_id) or e).heading or ""
        if form == "replace" and old and _CHARACTERISTIC.match(old):  # the old value is not printed
            reasons[(e.erratum_id, e.language)].append(undo(form, old, new, Current("", "", None, ""))[1] or "")
            continue
        words = frozenset(w.translate(_FOLD).strip().upper() for w in (old, new) if w)
        for target in sorted(targets.get(e.erratum_id, []), key=lambda t: t.position):
            found, why = index.current(target, header, e.language, e.publication or "", words)
            if why:
                reasons[(e.erratum_id, e.language)].append(why)
            for current in found:
                _, changes = chains.setdefault((current.rule_key, e.language), (current, []))
                same = next((c for c in changes if _same_change(c.form, c.old, c.new) == _same_change(form, old, new)), None)
                if same is not None:
                    same.also.append(e)
                    continue
                changes.append(_Change(e, target, form, old, new, []))

    derived: list[RuleText] = []
    given: dict[tuple[str, str], str | None] = {}  # (erratum, language) -> note, for each one derived
    for (rule_key, language), (current, changes) in chains.items():
        wordings, steps = _chain(current, changes, reasons)
        if not steps:
            continue
        k = len(steps)
        for i, text in enumerate(wordings):
            change, forward = steps[max(i - 1, 0)]
            e = change.erratum
            source = sources.get(e.source_id)
            where = f"erratum {e.position} ({e.publication}) on {change.target.target_name} [{language}]"
            if k > 1:
                where += f", change {max(i, 1)} of {k}"
            label = "before" if i == 0 else ("in force" if i == k else "after")
            derived.append(RuleText(
                source_id=e.source_id, rule_key=current.rule_key, title=current.title, section=current.section,
                edition=11, game_mode=None, language=language, erratum_id=e.erratum_id,
                locator=f"{where}: {label}", text=text,
                effective_date=(source.version_date if source else None) if i == k else None))
        for change, forward in steps:
            notes = []
            if forward:
                notes.append(f"{current.title}: the source predates the erratum; the wording in force is derived by applying it")
            if change.also:
                notes.append("the same change is also printed by "
                             + ", ".join(f"erratum {o.position} ({o.publication})" for o in change.also))
            given[(change.erratum.erratum_id, language)] = "; ".join(notes) or None
            first = change.erratum
            for other in change.also:
                given.setdefault((other.erratum_id, language),
                                 f"{current.title}: the same change as erratum {first.position} ({first.publication}),"
                                 " whose wordings it shares")

    outcome: dict[str, tuple[str, str | None]] = {}
    for e in errata:
        if e.kind != "erratum" or e.change is None or not e.text or change_form(e.text)[0] is None:
            continue
        if e.language != "en" and e.erratum_id in outcome:
            continue
        key = (e.erratum_id, e.language)
        if key in given:
            outcome[e.erratum_id] = ("derived", given[key])
        else:
            why = reasons.get(key) or []
            outcome[e.erratum_id] = ("text-only", why[0] if why else "no target to derive from")
    if not outcome:
        return records, derived
    out: list[Record] = []
    for r in records:
        if isinstance(r, Erratum) and r.erratum_id in outcome:
            status, note = outcome[r.erratum_id]
            r = r.model_copy(update={"derivation": status, "derivation_note": note})
        out.append(r)
    return out, derived


def _chain(current: Current, changes: list[_Change], reasons: dict) -> tuple[list[str], list[tuple[_Change, bool]]]:
    """The wordings from the original to the one in force, and the changes between them (each
    with True when applied forward): the changes the source carries are undone from its wording,
    the file's last first; those it predates are applied forward after it, in the file's order.
    A change that reads neither way is left out, its reason added to ``reasons``."""
    texts = [current.text]
    back: list[_Change] = []
    ahead: list[_Change] = []
    for change in reversed(changes):
        before, why = undo(change.form, change.old, change.new, replace(current, text=texts[-1]))
        if before is not None:
            texts.append(before)
            back.append(change)
            continue
        after, why_ahead = apply(change.form, change.old, change.new, current)
        if after is not None:
            ahead.insert(0, change)
        else:
            reasons[(change.erratum.erratum_id, change.erratum.language)].append(why or why_ahead or "")
    wordings = texts[::-1]
    steps = [(change, False) for change in reversed(back)]
    for change in ahead:
        after, why = apply(change.form, change.old, change.new, replace(current, text=wordings[-1]))
        if after is None:
            reasons[(change.erratum.erratum_id, change.erratum.language)].append(why or "")
            continue
        wordings.append(after)
        steps.append((change, True))
    return wordings, steps


def erratum_counts(rows: Iterable[Erratum]) -> dict[str, int]:
    """Per derivation outcome, the errata (English rows) that have it."""
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        if r.language == "en":
            counts[r.derivation] += 1
    return dict(counts)
