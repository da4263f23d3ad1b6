"""Game Datacards rules documents: the core rules and their companions, and the errata and FAQs.

Two formats, both JSON files of ``game-datacards/datasources`` (``11th/gdc/``):

- ``gdc-core-rules`` (``parse_core``): ``core/core_rules.json``, ``core/combat_patrol.json``,
  ``core/chapter_approved.json`` and ``core/event_companion.json``: ``sections[]`` of
  ``containers[]`` (a numbered rule: ``title``, ``subTitle`` the section number such as
  ``24.23``, ``components[]`` of texts, headers, images and accordions ``"01.01.01 - You"``).
  Every string is a mapping of language to text (``en``, ``de``, ``es``, ``fr``, ``it``, ``ja``,
  ``ko``, ``zh``). One ``RuleText`` per container and per numbered accordion, in each language
  the file has; its ``rule_key`` is the key of the English title in every language, so that a
  rule is one rule in all eight. Only the core rules' numbers are section numbers: the Combat
  Patrol file numbers its own sections (``01.01`` there is not the core rules' 01.01) and keeps
  them in the title.
- ``gdc-faqs`` (``parse_faqs``): ``faqs.json``: ``faqs[]``, each an erratum (``errataHeader``,
  ``errataText``) or a question (``question``, ``answer``), with its ``publication`` and the
  ``targets[]`` it changes. One ``Erratum`` per entry and language and one ``ErratumTarget`` per
  target; the form of a mechanical change is read here (``change_form``), the earlier wording
  is derived by the build, where the wording in force is known (``pipeline.errata``).

The texts are HTML-ish (``<b>``, ``<k>`` keywords, ``<ul><li>``, ``<table>``) or markdown-ish
(``**bold**``): stored as plain text, a list item or table row per line (``plain_text``).
"""

from __future__ import annotations

import html
import re
from typing import Any

from pipeline.aliases import rule_key_from_name
from pipeline.errors import NormaliseError
from pipeline.extractors import ParseResult, load_json, source_rule_text
from pipeline.normalise.text import slug
from schemas.records import DataGap, Erratum, ErratumTarget, Reject, RuleText, Source

#: The languages of the Game Datacards files, English first (the key of every rule).
LANGUAGES = ("en", "de", "es", "fr", "it", "ja", "ko", "zh")

_TAG = re.compile(r"</?(?:b|i|u|k|em|strong|span|br|p|ul|ol|li|table|tr|th|td|thead|tbody)\b[^>]*>", re.IGNORECASE)
_NUMBERED = re.compile(r"^(?P<number>\d{2}(?:\.\d{2}){1,2})\s*[-–]\s*(?P<title>.+)$")
_SECTION = re.compile(r"^\d{2}\.\d{2}(?:\.\d{2})?$")


def plain_text(text: str) -> str:
    """Plain text of a Game Datacards string: tags and ``**`` / ``^^`` marks dropped, each list
    item on a line of its own (``- item``), each table row a line of ``|``-joined cells,
    entities decoded, blank lines folded to one. Only markup tags are removed: the literal
    ``<move type>`` of a rule stays.

    >>> plain_text("Units <b>can</b> do:<ul><li>One.</li>\\n<li>Two **BOLD**.</li></ul>After")
    'Units can do:\\n- One.\\n- Two BOLD.\\nAfter'
    >>> plain_text("<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>")
    'A | B\\n1 | 2'
    >>> plain_text("make a stated <move type> of up to X&quot;")
    'make a stated <move type> of up to X"'
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = re.sub(r"<li\b[^>]*>\s*", "\n- ", text, flags=re.IGNORECASE)
    text = re.sub(r"</(?:ul|ol|table)>", "\n", text, flags=re.IGNORECASE)
    text = re.sub(r"<(?:ul|ol|table)\b[^>]*>", "\n", text, flags=re.IGNORECASE)
    text = re.sub(r"<tr\b[^>]*>", "\n", text, flags=re.IGNORECASE)
    text = re.sub(r"</t[hd]>\s*(?=<t[hd]\b)", " | ", text, flags=re.IGNORECASE)
    text = re.sub(r"<br\s*/?>", "\n", text, flags=re.IGNORECASE)
    text = _TAG.sub("", text)
    text = text.replace("**", "").replace("^^", "")
    text = html.unescape(text)
    lines = [re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if line.startswith("- ") and out and not out[-1]:
            out.pop()  # a list item follows the line before it
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def _lang(value: Any, language: str) -> str | None:
    """The text of ``value`` (a language mapping, or a plain string for English) in ``language``."""
    if isinstance(value, dict):
        got = value.get(language)
        return got if isinstance(got, str) and got.strip() else None
    if isinstance(value, str) and language == "en" and value.strip():
        return value
    return None


def _languages(*values: Any) -> list[str]:
    """The languages in which the first of ``values`` (a title) is given, English first."""
    head = values[0]
    if isinstance(head, dict):
        return [lang for lang in LANGUAGES if _lang(head, lang)] + sorted(
            lang for lang in head if lang not in LANGUAGES and _lang(head, lang))
    return ["en"] if _lang(head, "en") else []


def _key(title: str) -> str | None:
    try:
        return rule_key_from_name(title)
    except NormaliseError:
        return None


def _component_text(component: dict, language: str) -> str | None:
    kind = component.get("type")
    if kind in ("text", "header"):
        text = _lang(component.get("text"), language)
        return plain_text(text) if text else None
    if kind == "accordion":
        title = _lang(component.get("title"), language)
        text = _lang(component.get("text"), language)
        body = plain_text(text) if text else ""
        return "\n".join(part for part in (plain_text(title) if title else "", body) if part) or None
    return None  # images carry no wording


_BEHAVIOUR_FIELDS = (("effect", None), ("eligibleIf", "Eligible if"), ("maximumDistance", "Maximum distance"),
                     ("ruleReference", "Rule reference"))


def _behaviour_text(behaviour: dict, language: str) -> list[str]:
    parts = []
    for field, label in _BEHAVIOUR_FIELDS:
        value = _lang(behaviour.get(field), language) or _lang(behaviour.get(field), "en")
        if value is None and isinstance(behaviour.get(field), str):
            value = behaviour[field]
        if value:
            value = plain_text(value).strip("'")
            if value and value != "-":
                parts.append(f"{label}: {value}" if label else value)
    return parts


def parse_core(text: str, source: Source) -> ParseResult:
    """The rule texts of a Game Datacards rules document (``core_rules.json`` and its companions).

    One ``RuleText`` per container (a numbered rule section: ``24.23 [LETHAL HITS]``) and per
    numbered accordion in it (``01.01.01 You``), per language the container's title is given in;
    ``rule_key`` is the key of the English title, ``title`` the title in that language,
    ``language`` its code, ``locator`` ``<section> / <title> [<lang>]``. ``section`` is the
    number for the core rules (``isCombatPatrol`` false and a numbered ``subTitle``) and None
    for a document that numbers its own sections (the Combat Patrol mission sequence). A
    container with no wording (the core Stratagems of section 15 name a stratagem id only) is a
    ``DataGap``; a container that is no mapping, or has no English title, a ``Reject``.
    """
    result = ParseResult()
    sid = source.source_id
    try:
        doc = load_json(text)
    except ValueError as exc:
        result.rejects.append(Reject(source_id=sid, locator="whole file", table_name="rule_texts",
                                     raw_text=text[:200], reason=f"not JSON within the limits: {exc}"))
        return result
    if not isinstance(doc, dict) or not isinstance(doc.get("sections"), list):
        result.rejects.append(Reject(source_id=sid, locator="whole file", table_name="rule_texts",
                                     raw_text=text[:200], reason="no 'sections' list: not a Game Datacards rules document"))
        return result
    document = _lang(doc.get("name"), "en") or "rules"
    numbered = "core" in document.lower()
    for s_index, section in enumerate(doc["sections"]):
        if not isinstance(section, dict):
            result.rejects.append(Reject(source_id=sid, locator=f"sections[{s_index}]", table_name="rule_texts",
                                         raw_text=str(section)[:200], reason="a section that is no JSON object"))
            continue
        section_name = _lang(section.get("name"), "en") or f"section {s_index + 1}"
        for c_index, container in enumerate(section.get("containers") or []):
            where = f"{section_name} / container {c_index + 1}"
            if not isinstance(container, dict) or not _lang(container.get("title"), "en"):
                result.rejects.append(Reject(source_id=sid, locator=where, table_name="rule_texts",
                                             raw_text=str(container)[:200], reason="a container without an English title"))
                continue
            _container(result, source, container, section_name, numbered)
    return result


def _container(result: ParseResult, source: Source, container: dict, section_name: str, numbered: bool) -> None:
    title_en = plain_text(_lang(container["title"], "en") or "")
    number = (_lang(container.get("subTitle"), "en") or "").strip()
    section = number if numbered and _SECTION.match(number) else None
    key = _key(title_en) or (slug(number) if number else None)
    heading = f"{number} {title_en}".strip() if number else title_en
    if key is None:
        result.rejects.append(Reject(source_id=source.source_id, locator=f"{section_name} / {heading}",
                                     table_name="rule_texts", raw_text=title_en, reason="a title with no letters"))
        return
    components = [c for c in container.get("components") or [] if isinstance(c, dict)]
    components.sort(key=lambda c: c.get("order") if isinstance(c.get("order"), int) else 0)
    behaviour = container.get("behaviour") if isinstance(container.get("behaviour"), dict) else None
    wrote = False
    for language in _languages(container["title"]):
        title = plain_text(_lang(container["title"], language) or title_en)
        parts = _behaviour_text(behaviour, language) if behaviour else []
        parts += [t for c in components if (t := _component_text(c, language))]
        if not parts:
            continue
        shown = title if section or not number else f"{number} {title}"
        result.records.append(_rule(source, f"{section_name} / {heading} [{language}]", key, shown, section,
                                    "\n\n".join(parts), language))
        wrote = True
        for c in components:  # each numbered accordion is a rule of its own too: 01.01.01 You
            c_title = _lang(c.get("title"), language) if c.get("type") == "accordion" else None
            match = _NUMBERED.match(plain_text(c_title)) if c_title else None
            en_match = _NUMBERED.match(plain_text(_lang(c.get("title"), "en") or ""))
            body = _lang(c.get("text"), language)
            if not (match and en_match and body):
                continue
            sub_key = _key(en_match.group("title")) or slug(en_match.group("number"))
            result.records.append(_rule(
                source, f"{section_name} / {heading} / {en_match.group('number')} [{language}]", sub_key,
                match.group("title").strip(), en_match.group("number") if section else None, plain_text(body), language))
    if not wrote:
        result.records.append(DataGap(
            source_id=source.source_id, locator=f"{section_name} / {heading}", table_name="rule_texts",
            entity_key=f"{section_name} / {heading}", field="text",
            reason=f"{heading}: the document gives no wording, only its title"
                   + (" and a stratagem id" if container.get("stratagem_id") else "")))


def _rule(source: Source, locator: str, key: str, title: str, section: str | None, text: str, language: str) -> RuleText:
    base = source_rule_text(source, locator, key, title, text, section)
    return base.model_copy(update={"language": language})


# --- errata and FAQs ---------------------------------------------------------------------------

_Q = "['‘’\"“”]"
#: The forms of a mechanical erratum, tried in order on its (plain) text.
CHANGE_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("change-to", re.compile(r"^change(?: (?:it|this|the text))? to:?\s+(?P<new>.+)$", re.IGNORECASE | re.DOTALL)),
    ("replace", re.compile(r"^change (?P<old>\d+[\"”]) to:? (?P<new>\d+[\"”])\.?$", re.IGNORECASE)),
    ("replace", re.compile(rf"^change {_Q}?(?P<old>[^'‘’\"“”\n]+?){_Q}? to:? {_Q}?(?P<new>[^\n]+?){_Q}?\.?$", re.IGNORECASE)),
    ("remove-add", re.compile(rf"^remove {_Q}(?P<old>[^\n]+?){_Q},? (?:and )?add {_Q}(?P<new>[^\n]+?){_Q}\.?$", re.IGNORECASE)),
    ("add", re.compile(rf"^add {_Q}(?P<new>[^\n]+?){_Q}\.?$", re.IGNORECASE)),
    ("add", re.compile(rf"^add the following to the [^:'‘\n]+:\s*{_Q}(?P<new>[^\n]+?)\.?{_Q}\.?$", re.IGNORECASE)),
    ("remove", re.compile(rf"^(?:remove|delete) {_Q}(?P<old>[^\n]+?){_Q}\.?$", re.IGNORECASE)),
)


def change_form(text: str) -> tuple[str | None, str | None, str | None]:
    """The form of a mechanical erratum and its old and new wordings, or (None, None, None).

    >>> change_form('Change 9" to 8".')
    ('replace', '9"', '8"')
    >>> change_form("Add 'FRAME'.")
    ('add', None, 'FRAME')
    >>> change_form("Remove 'Leader', add 'Support'.")
    ('remove-add', 'Leader', 'Support')
    >>> change_form("Change to:\\n\\n- One.")[0], change_form("Change Strength to ‘9’.")
    ('change-to', ('replace', 'Strength', '9'))
    >>> change_form("■ Profile: Change Toughness to 7.\\n■ Keywords: add FRAME.")
    (None, None, None)
    """
    text = text.strip()
    for form, pattern in CHANGE_FORMS:
        match = pattern.match(text)
        if match:
            groups = match.groupdict()
            old, new = groups.get("old"), groups.get("new")
            return form, old.strip() if old else None, new.strip() if new else None
    return None, None, None


def parse_faqs(text: str, source: Source) -> ParseResult:
    """The entries of a Game Datacards errata and FAQ file (``faqs.json``).

    One ``Erratum`` per entry and language (``kind`` ``erratum`` with ``errataHeader`` and
    ``errataText``, ``faq`` with ``question`` and ``answer``; ``change`` the mechanical form
    ``change_form`` reads, None for a text-only erratum and for every FAQ) and one
    ``ErratumTarget`` per target (``target_key``: the rule key of a core rule, the slug of any
    other name). An entry that is neither, or has no id, is a ``Reject``.
    """
    result = ParseResult()
    sid = source.source_id
    try:
        doc = load_json(text)
    except ValueError as exc:
        result.rejects.append(Reject(source_id=sid, locator="whole file", table_name="errata",
                                     raw_text=text[:200], reason=f"not JSON within the limits: {exc}"))
        return result
    entries = doc.get("faqs") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        result.rejects.append(Reject(source_id=sid, locator="whole file", table_name="errata",
                                     raw_text=text[:200], reason="no 'faqs' list: not a Game Datacards FAQ file"))
        return result
    for position, entry in enumerate(entries, start=1):
        locator = f"faqs[{position - 1}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            result.rejects.append(Reject(source_id=sid, locator=locator, table_name="errata",
                                         raw_text=str(entry)[:200], reason="an entry without an id"))
            continue
        is_faq = "question" in entry
        head_field, text_field = ("question", "answer") if is_faq else ("errataHeader", "errataText")
        if not (_lang(entry.get(head_field), "en") or _lang(entry.get(text_field), "en")):
            result.rejects.append(Reject(source_id=sid, locator=locator, table_name="errata",
                                         raw_text=str(entry)[:200],
                                         reason="neither an erratum (errataHeader, errataText) nor a question"))
            continue
        publication = entry.get("publication") if isinstance(entry.get("publication"), dict) else {}
        pub_name = _lang(publication.get("name"), "en") or "unknown publication"
        languages = [lang for lang in LANGUAGES if _lang(entry.get(head_field), lang) or _lang(entry.get(text_field), lang)]
        en_text = plain_text(_lang(entry.get(text_field), "en") or "")
        form = None if is_faq else change_form(en_text)[0]
        for language in languages:
            head = _lang(entry.get(head_field), language)
            body = _lang(entry.get(text_field), language)
            result.records.append(Erratum(
                source_id=sid, locator=f"{locator} [{language}]", erratum_id=entry["id"], language=language,
                kind="faq" if is_faq else "erratum", edition=source.edition,
                publication_id=publication.get("id") if isinstance(publication.get("id"), str) else None,
                publication=_lang(publication.get("name"), language) or pub_name,
                heading=plain_text(head) if head else None, text=plain_text(body) if body else None,
                position=position, change=form,
                derivation="faq" if is_faq else "text-only",
                derivation_note=None if is_faq else (
                    "no target to derive from" if not entry.get("targets") else
                    None if form else "not a mechanical change: several edits or free text"),
            ))
        for t_index, target in enumerate(entry.get("targets") or [], start=1):
            if not isinstance(target, dict):
                continue
            name = plain_text(_lang(target.get("name"), "en") or "")
            kind = str(target.get("type") or "unknown")
            key = (_key(name) if kind == "ruleContainer" else slug(name)) or slug(name)
            result.records.append(ErratumTarget(
                source_id=sid, locator=f"{locator}.targets[{t_index - 1}]", erratum_id=entry["id"], position=t_index,
                target_type=kind, target_id=target.get("id") if isinstance(target.get("id"), str) else None,
                target_name=name, target_key=key))
    return result
