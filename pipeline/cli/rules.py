"""``wh40k rule`` and ``wh40k rule-diff``: which wording of a rule applies, what changed."""

from __future__ import annotations

import datetime as dt
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from pipeline import query
from pipeline.cli import app
from pipeline.cli.output import Format, ModeChoice, note, render_rows, to_json
from pipeline.errors import InputError
from pipeline.rules import changed_rules, rule_diff, rule_history
from pipeline.service import answers


class DiffFormat(str, Enum):
    table = "table"
    json = "json"


def _date(text: Optional[str]) -> Optional[dt.date]:
    return answers.parse_date(text)


@app.command("rule")
def rule_command(
    name: str = typer.Argument(..., help="Rule name, alias (Hazardous test) or section number (24.23)."),
    edition: Optional[int] = typer.Option(None, "--edition", help=(
        "10 or 11, the editions of the database (default: the latest edition in the database; for a rule "
        "with no wording in it, the newest edition with one, said in a note).")),
    mode: ModeChoice = typer.Option(ModeChoice.matched, "--mode", help="matched or combat-patrol."),
    on: Optional[str] = typer.Option(None, "--on", help="Date the game is played, YYYY-MM-DD."),
    all_: bool = typer.Option(False, "--all", help="List every stored wording instead."),
    lang: Optional[str] = typer.Option(
        None, "--lang", help="Language of the wording: en de es fr it ja ko zh (default: en, or the language of the name given)."),
    history: bool = typer.Option(False, "--history", help="Every wording from the original to the one in force, with the errata."),
    db: str = typer.Option(str(query.DEFAULT_DB), "--db", help="Database: a DuckDB file, sqlite:///FILE or postgresql://USER@HOST/DB."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table, json or csv."),
) -> None:
    """The wording of a rule that applies, its source, and the precedence chain that picked it.

    A rule is found by its name in any of the stored languages (Tödliche Treffer), an alias or a
    section number; --lang gives its wording in that language, or the English one with a note.
    The errata and FAQ entries that target the rule follow the wording.

    --format csv: the governing wording as one row (rule_key, title, section, edition, game_mode,
    on, source_id, locator, text; the precedence chain is in table and json); with --all, one row
    per stored wording.

    Example: wh40k rule "Acts of Faith" --edition 10 --mode combat-patrol --on 2024-09-01
    """
    from pipeline.service.answers import rule_answer, rule_language

    con = query.open_database(db)
    query.check_edition(con, edition)
    language = rule_language(con, name, lang)
    if history:
        _print_history(con, name, edition, mode.value, language, fmt)
        return
    if all_:
        rows = query.rule_texts(con, name, edition=edition)
        if fmt is Format.table:
            for r in rows:
                print(f"== {(r['section'] + ' ') if r['section'] else ''}{r['title']}  (edition {r['edition']}, "
                      f"{r['game_mode'] or 'all game modes'}, source {r['source_id']}, {r['locator']})")
                print(r["text"] + "\n")
        else:
            render_rows(rows, fmt)
        return
    ruling, answer, notes = rule_answer(con, name, edition, mode.value, _date(on), lang)
    for line in notes:
        note(line)
    found = answer["errata"]
    if fmt is Format.json:
        print(to_json(answer))
        return
    if fmt is Format.csv:
        render_rows([{k: v for k, v in ruling.as_dict().items() if k != "chain"}], fmt)
        return
    head = f"{(ruling.section + ' ') if ruling.section else ''}{ruling.title}"
    print(f"== {head}  (edition {ruling.edition}, {ruling.game_mode} games"
          + (f", on {ruling.on}" if ruling.on else "") + ")")
    if ruling.part_of:
        print(f"({ruling.part_of})")
    if ruling.note:
        print(f"(note: {ruling.note})")
    print(ruling.text)
    print(f"\nSource: {ruling.source_id}, {ruling.locator}")
    print("Why (precedence walked, see pipeline/precedence.toml):")
    for step in ruling.chain:
        print(f"  - {step.source_id} [{step.kind}, {step.game_mode or 'all modes'}, "
              f"{step.effective_date or 'undated'}]: {step.verdict}")
    if found:
        print(f"\nErrata and FAQs ({len(found)}):")
        for e in found:
            print(f"  - [{e['kind']}] {e['publication']}: {e['heading']}" + (f"\n    {e['text']}" if e["text"] else ""))


#: The languages the rules documents give (Game Datacards core rules).
LANGUAGES = answers.LANGUAGES


def _print_history(con, name: str, edition: Optional[int], mode: str, language: str, fmt: Format) -> None:
    ruling, rows = rule_history(con, name, edition, mode, language)  # type: ignore[arg-type]
    if fmt is Format.json:
        print(to_json({"rule": ruling.as_dict(), "wordings": rows}))
        return
    if fmt is Format.csv:
        render_rows(rows, fmt)
        return
    print(f"== {(ruling.section + ' ') if ruling.section else ''}{ruling.title}  (edition {ruling.edition}, "
          f"{ruling.game_mode} games, {ruling.language}): {len(rows)} wordings, oldest first")
    if ruling.note:
        print(f"(note: {ruling.note})")
    for number, r in enumerate(rows, start=1):
        mark = "  <- in force" if r["in_force"] else ""
        print(f"\n{number}. {r['source_id']}, {r['locator']} [{r['effective_date'] or 'undated'}]{mark}")
        if r["erratum"]:
            print(f"   erratum: {r['erratum']}")
        print(r["text"])


@app.command("rule-diff")
def rule_diff_command(
    name: Optional[str] = typer.Argument(None, help="Rule name, alias or section number (or --all)."),
    all_: bool = typer.Option(False, "--all", help="List every core rule that changed, was added or removed."),
    from_edition: int = typer.Option(10, "--from", help="Edition to compare from."),
    to_edition: int = typer.Option(11, "--to", help="Edition to compare to."),
    mode: ModeChoice = typer.Option(ModeChoice.matched, "--mode"),
    on: Optional[str] = typer.Option(None, "--on", help="Date, YYYY-MM-DD."),
    db: str = typer.Option(str(query.DEFAULT_DB), "--db", help="Database: a DuckDB file, sqlite:///FILE or postgresql://USER@HOST/DB."),
    fmt: DiffFormat = typer.Option(DiffFormat.table, "--format", "-f", help="table or json."),
    plot: Optional[Path] = typer.Option(None, "--plot", help=(
        "Also draw it into FILE.png or FILE.svg: the new wording with the removed and added words marked; "
        "with --all, the changed word runs of each rule.")),
) -> None:
    """Word-level differences between a rule's governing wordings in two editions.

    With --all: every section and core ability of the core rules of either edition, with its
    status (changed, added, removed; the same ones are left out) and the count of changed word
    runs; `rule-diff NAME` gives the diff of one.

    Example: wh40k rule-diff "Lethal Hits" --from 10 --to 11 --plot lethal-hits.svg
    """
    if plot is not None:
        from pipeline.service.plot import check_plot_path

        check_plot_path(plot)
    con = query.open_database(db)
    query.check_edition(con, from_edition, "--from")
    query.check_edition(con, to_edition, "--to")
    if all_:
        rows = [r for r in changed_rules(con, from_edition, to_edition, mode.value) if r["status"] != "same"]
        if plot is not None:
            from pipeline.service.plot import plot_rule_changes

            plot_rule_changes(rows, plot, from_edition, to_edition)
            note(f"chart written to {plot}")
        if fmt is DiffFormat.json:
            print(to_json(rows))
        else:
            render_rows(rows, Format.table, title=f"Core rules: edition {from_edition} -> {to_edition}")
        return
    if name is None:
        raise InputError("rule-diff needs a rule name, or --all for every core rule; e.g. wh40k rule-diff \"Lethal Hits\"")
    diff = rule_diff(con, name, from_edition, to_edition, mode.value, _date(on))
    if plot is not None:
        from pipeline.service.plot import plot_rule_diff

        plot_rule_diff({**diff.as_dict(), "ops": diff.ops}, plot)
        note(f"chart written to {plot}")
    if fmt is DiffFormat.json:
        print(to_json(diff.as_dict()))
        return
    print(f"{diff.old.title}: edition {from_edition} ({diff.old.source_id}) -> "
          f"edition {to_edition} ({diff.new.source_id})")
    if not any(tag != "equal" for tag, _, _ in diff.ops):
        print("no differences")
        return
    print("[-removed-] {+added+}\n")
    print(diff.marked())


@app.command("detect-edition")
def detect_edition_command(
    file: Path = typer.Argument(..., help="A rules text file (UTF-8)."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table, json or csv."),
) -> None:
    """Detect the edition of a rules text from its wording, with the evidence.

    --format csv: one row per piece of evidence (evidence_edition, marker, count, first_line,
    excerpt), each with the verdict (file, edition, mixed, score_10, score_11); a text with no
    evidence gives one row with the verdict alone.

    Example: wh40k detect-edition raw/wahapedia-11e-core-rules-astra-militarum-page.txt
    """
    from pipeline.editions import detect_edition
    from pipeline.limits import MAX_RULES_TEXT_BYTES, read_bounded

    try:
        text = read_bounded(file, MAX_RULES_TEXT_BYTES, "rules text").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{file}: not UTF-8 at byte {exc.start}; re-save it as UTF-8") from None
    found = detect_edition(text)
    evidence = [{"edition": e.edition, "marker": e.marker, "count": e.count, "first_line": e.first_line,
                 "excerpt": e.excerpt} for e in found.evidence]
    if fmt is Format.json:
        print(to_json({"file": str(file), "edition": found.edition, "mixed": found.mixed,
                       "scores": found.scores, "evidence": evidence}))
        return
    if fmt is Format.csv:
        verdict = {"file": str(file), "edition": found.edition, "mixed": found.mixed,
                   "score_10": found.scores[10], "score_11": found.scores[11]}
        flat = [{**verdict, "evidence_edition": e.pop("edition"), **e} for e in evidence] or [verdict]
        render_rows(flat, fmt, columns=[*verdict, "evidence_edition", "marker", "count", "first_line", "excerpt"])
        return
    verdict = f"edition {found.edition}" if found.edition else "no edition detected"
    print(f"{file}: {verdict}" + (" (markers of both editions)" if found.mixed else "")
          + f"; scores 10th {found.scores[10]}, 11th {found.scores[11]}")
    render_rows(evidence, fmt, title="Evidence")


@app.command("search")
def search_command(
    text: str = typer.Argument(..., help="Words to find (every one must be in the wording)."),
    edition: Optional[int] = typer.Option(None, "--edition", help="10 or 11."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Language: en de es fr it ja ko zh (default: every one)."),
    limit: int = typer.Option(20, "--limit", help="How many hits, best first (1 to 500)."),
    db: str = typer.Option(str(query.DEFAULT_DB), "--db", help="Database: a DuckDB file, sqlite:///FILE or postgresql://USER@HOST/DB."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table, json or csv."),
) -> None:
    """Find rule texts, abilities, stratagems, enhancements and datasheets whose wording has the words.

    Ranked: occurrences of each word weighted by its rarity, a bonus for a word in the name; each
    hit with the matching passage and its source.

    Example: wh40k search "critical hit automatically wound" --edition 11
    """
    from pipeline.search import search

    if lang is not None and lang not in LANGUAGES:
        raise InputError(f"--lang {lang!r} is not a language of the rules; use one of {' '.join(LANGUAGES)}")
    if not 1 <= limit <= 500:
        raise InputError(f"--limit {limit}: give 1 to 500")
    con = query.open_database(db)
    query.check_edition(con, edition)
    hits = [h.__dict__ for h in search(con, text, edition, lang, limit)]
    if not hits:
        note(f"nothing has every word of {text!r}" + (f" in edition {edition}" if edition else "")
             + (f" in {lang}" if lang else ""))
    render_rows(hits, fmt, title="Search", columns=["kind", "name", "edition", "language", "score", "passage", "source_id", "locator"])
