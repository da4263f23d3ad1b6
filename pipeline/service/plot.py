"""Charts for people: ``wh40k attack|rule-diff|matchups ... --plot FILE.png|FILE.svg``.

matplotlib (its Agg backend, no display needed) is imported only when a chart is drawn; an SVG
names its parts (``gid``) and keeps its words as text, so a program can read a chart back.

- ``plot_attack``: two panels, models destroyed and damage: a bar per k of P(exactly k) and a
  line of P(at least k), for k from 0 to the last k whose P(at least k) is 1e-6 or more. Each
  bar is a group with the id ``<stage>-exact-<k>``, each line ``<stage>-at-least``.
- ``plot_rule_diff``: the new wording, word-wrapped, with the words removed (red, struck
  through) and added (green) where they changed: each run of words a text with the id
  ``diff-<n>-<equal|removed|added>``.
- ``plot_rule_changes``: ``rule-diff --all``: a bar per rule that changed, its length the
  count of changed word runs (``change-<rule key>``), and the added and removed rules named.
- ``plot_matchups`` (``wh40k matchups``) and ``plot_list_matchup`` (``wh40k matchup``): a
  heatmap of expected models destroyed, attackers (weapon profiles; units and phases) by
  targets; each cell is a text with its value and the id ``cell-<row>-<column>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from pipeline.errors import InputError

#: The formats ``--plot`` writes, by file suffix.
FORMATS = (".png", ".svg")
#: The stages drawn, with their titles.
PANELS = (("models_destroyed", "Models destroyed"), ("damage", "Damage"))
#: Pixels per inch of a PNG (the figure is 11 x 4.2 inches: 1100 x 420 pixels).
DPI = 100
FIGURE_INCHES = (11.0, 4.2)


def check_plot_path(path: Path) -> None:
    """Raise ``InputError`` unless ``path`` ends in ``.png`` or ``.svg`` and its folder exists
    (checked before the attack is resolved).

    >>> check_plot_path(Path("chart.svg"))
    >>> check_plot_path(Path("chart.pdf"))
    Traceback (most recent call last):
    ...
    pipeline.errors.InputError: --plot chart.pdf: give a file ending in .png or .svg
    """
    if path.suffix.lower() not in FORMATS:
        raise InputError(f"--plot {path}: give a file ending in {' or '.join(FORMATS)}")
    if not path.parent.is_dir():
        raise InputError(f"--plot {path}: the folder {path.parent} does not exist; create it or give another file")


def shown_range(pmf: Sequence[float]) -> int:
    """How many k a chart shows: up to the last k with P(at least k) >= 1e-6 (at least 1).

    >>> shown_range([0.5, 0.4999999, 1e-7]), shown_range([1.0]), shown_range([0.0, 0.0, 1.0])
    (2, 1, 3)
    """
    tail, last = 0.0, 0
    for k in range(len(pmf) - 1, -1, -1):
        tail += pmf[k]
        if tail >= 1e-6:
            last = k
            break
    return last + 1


def at_least(pmf: Sequence[float]) -> list[float]:
    """P(at least k) for each k from P(exactly k) (capped at 1 against rounding).

    >>> at_least([0.25, 0.5, 0.25])
    [1.0, 0.75, 0.25]
    """
    out, tail = [0.0] * len(pmf), 0.0
    for k in range(len(pmf) - 1, -1, -1):
        tail += pmf[k]
        out[k] = min(1.0, tail)
    return out


def plot_attack(answer: dict, path: Path) -> None:
    """Draw the distributions of ``answer`` (``wh40k attack --format json``: a dict with
    ``models_destroyed`` and ``damage``, each with ``pmf``, and ``attacker`` and ``target``)
    into ``path`` (PNG, 1100 x 420 pixels, or SVG by its suffix). Raises ``InputError`` for
    another suffix, a missing folder or a file that cannot be written."""
    check_plot_path(path)
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=FIGURE_INCHES, dpi=DPI, layout="constrained")
    target = answer["target"]
    figure.suptitle(f"{answer['attacker']} attacks {target['name']}")
    for axes, (stage, title) in zip(figure.subplots(1, len(PANELS)), PANELS):
        pmf = answer[stage]["pmf"]
        n = shown_range(pmf)
        ks = list(range(n))
        bars = axes.bar(ks, pmf[:n], color="#4a72c4", label="P(exactly k)")
        for k, bar in zip(ks, bars):
            bar.set_gid(f"{stage}-exact-{k}")
        (line,) = axes.plot(ks, at_least(pmf)[:n], color="#d0612a", marker="o", markersize=3,
                            label="P(at least k)")
        line.set_gid(f"{stage}-at-least")
        axes.set_title(f"{title} (mean {answer[stage]['mean']:.2f})")
        axes.set_xlabel("k")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_ylabel("probability")
        axes.set_ylim(0, 1.05)
        axes.legend(loc="upper right")
    try:
        figure.savefig(path, format=path.suffix.lower().lstrip("."), metadata=_metadata(path))
    except OSError as exc:
        raise InputError(f"--plot {path}: cannot write it ({exc.strerror}); give another file") from None


def _metadata(path: Path) -> dict:
    """No date in a chart's file, so the same attack gives the same file."""
    return {"Date": None} if path.suffix.lower() == ".svg" else {}


def _figure(inches: tuple[float, float], layout: str | None = "constrained"):
    """A new matplotlib ``Figure`` (Agg backend; SVG text kept as text, not paths)."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"
    from matplotlib.figure import Figure

    return Figure(figsize=inches, dpi=DPI, layout=layout)


def _save(figure, path: Path) -> None:
    try:
        figure.savefig(path, format=path.suffix.lower().lstrip("."), metadata=_metadata(path))
    except OSError as exc:
        raise InputError(f"--plot {path}: cannot write it ({exc.strerror}); give another file") from None


#: A word-diff picture: its width and font (monospace: each character 0.602 of the font size
#: wide, DejaVu Sans Mono's advance), the characters per line that fill it, the height of a line.
DIFF_INCHES = 11.0
DIFF_FONT_POINTS = 8.5
DIFF_COLUMNS = int(0.98 * DIFF_INCHES * 72 / (0.602 * DIFF_FONT_POINTS)) - 1
DIFF_LINE_INCHES = 0.22
#: The colour and style of each kind of run in a word-diff picture.
DIFF_STYLES = {"equal": {"color": "#222222"},
               "removed": {"color": "#b3261e", "fontweight": "bold"},
               "added": {"color": "#1a7f37", "fontweight": "bold"}}


def diff_runs(changes_ops: Sequence[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """The runs a word-diff picture draws, in reading order: ``(kind, text)`` with kind
    ``equal``, ``removed`` or ``added`` (a replacement is its removed then its added words).

    >>> diff_runs([("equal", "a Critical Hit ", "a Critical Hit "), ("replace", "automatically", "can")])
    [('equal', 'a Critical Hit '), ('removed', 'automatically'), ('added', 'can')]
    """
    runs = []
    for tag, old, new in changes_ops:
        if tag == "equal":
            runs.append(("equal", old))
            continue
        if old:
            runs.append(("removed", old))
        if new:
            runs.append(("added", new))
    return runs


def wrap_runs(runs: Sequence[tuple[str, str]], columns: int = DIFF_COLUMNS) -> list[list[tuple[int, str, str]]]:
    """The runs laid out in lines of at most ``columns`` characters (a word longer than a line
    is a line of its own): each line a list of ``(column, kind, text)``; a newline in a run
    starts a new line.

    >>> wrap_runs([("equal", "one two "), ("added", "three")], columns=8)
    [[(0, 'equal', 'one two')], [(0, 'added', 'three')]]
    >>> wrap_runs([("equal", "a "), ("removed", "weapon,"), ("added", "critical")])
    [[(0, 'equal', 'a'), (2, 'removed', 'weapon,'), (10, 'added', 'critical')]]
    """
    import re

    lines: list[list[tuple[int, str, str]]] = [[]]
    column = 0
    for kind, text in runs:
        for token in re.findall(r"\n|[^\S\n]+|\S+", text):
            if token == "\n":
                lines.append([])
                column = 0
                continue
            if token.isspace():
                column += len(token) if column else 0
                continue
            line = lines[-1]
            if line and column == line[-1][0] + len(line[-1][2]):
                column += 1  # a space between the words of two runs (a removed word, then its replacement)
            if column and column + len(token) > columns:
                lines.append([])
                column = 0
            line = lines[-1]
            if line and line[-1][1] == kind and line[-1][0] + len(line[-1][2]) + 1 == column:
                line[-1] = (line[-1][0], kind, line[-1][2] + " " + token)  # the same run goes on
            else:
                line.append((column, kind, token))
            column += len(token)
    return [line for line in lines if line] or [[]]


def plot_rule_diff(diff: dict, path: Path) -> None:
    """Draw ``wh40k rule-diff --format json`` (``diff``: ``from`` and ``to`` rulings and the
    word-level ``ops``, as ``RuleDiff.as_dict`` with ``"ops"``) as the new wording with its
    changes marked (see the module) into ``path`` (PNG or SVG by its suffix). Raises
    ``InputError`` for another suffix, a missing folder or a file that cannot be written."""
    check_plot_path(path)
    lines = wrap_runs(diff_runs(diff["ops"]))
    height = 0.5 + DIFF_LINE_INCHES * (len(lines) + 1)
    figure = _figure((DIFF_INCHES, height), layout=None)
    old, new = diff["from"], diff["to"]
    changed = sum(1 for tag, _, _ in diff["ops"] if tag != "equal")
    figure.suptitle(f"{new['title']}: edition {old['edition']} ({old['source_id']}) -> edition {new['edition']} "
                    f"({new['source_id']}): {changed} change{'' if changed == 1 else 's'}", y=1 - 0.08 / height)
    axes = figure.add_axes((0.01, 0.02, 0.98, 1 - 0.42 / height))
    axes.set_axis_off()
    axes.set_xlim(0, 0.98 * DIFF_INCHES * 72 / (0.602 * DIFF_FONT_POINTS))  # one unit: one character
    axes.set_ylim(len(lines), -1)  # one unit: one line, the first at the top
    font = {"family": "monospace", "fontsize": DIFF_FONT_POINTS, "va": "top", "ha": "left"}
    n = 0
    for row, line in enumerate(lines):
        for column, kind, text in line:
            artist = axes.text(column, row, text, **font, **DIFF_STYLES[kind])
            artist.set_gid(f"diff-{n}-{kind}")
            if kind == "removed":  # struck through
                axes.plot([column, column + len(text)], [row + 0.28, row + 0.28], color=DIFF_STYLES[kind]["color"],
                          linewidth=0.8)
            n += 1
    axes.text(0, -0.9, "removed", **font, **DIFF_STYLES["removed"])
    axes.text(9, -0.9, "added", **font, **DIFF_STYLES["added"])
    _save(figure, path)


def plot_rule_changes(rows: Sequence[dict], path: Path, from_edition: int, to_edition: int) -> None:
    """Draw ``wh40k rule-diff --all`` (``rows``: rule_key, title, status, changes) into ``path``:
    a horizontal bar per changed rule (its changed word runs), the added and removed rules
    listed beside. Raises what ``plot_rule_diff`` raises."""
    check_plot_path(path)
    changed = [r for r in rows if r["status"] == "changed"]
    others = {status: [r["title"] for r in rows if r["status"] == status] for status in ("added", "removed")}
    figure = _figure((11.0, 1.5 + 0.22 * max(len(changed), 4)))
    figure.suptitle(f"Core rules, edition {from_edition} -> {to_edition}: {len(changed)} changed, "
                    f"{len(others['added'])} added, {len(others['removed'])} removed")
    bars_axes, list_axes = figure.subplots(1, 2, width_ratios=(3, 1))
    ys = list(range(len(changed)))
    bars = bars_axes.barh(ys, [r["changes"] for r in changed], color="#4a72c4")
    for row, bar in zip(changed, bars):
        bar.set_gid(f"change-{row['rule_key']}")
    bars_axes.set_yticks(ys, [r["title"] for r in changed], fontsize=7)
    bars_axes.invert_yaxis()
    bars_axes.set_xlabel("changed word runs")
    list_axes.set_axis_off()
    text = "\n".join([f"added ({len(others['added'])}):", *others["added"][:40], "",
                       f"removed ({len(others['removed'])}):", *others["removed"][:40]])
    list_axes.text(0, 1, text, va="top", ha="left", fontsize=7, transform=list_axes.transAxes)
    _save(figure, path)


def plot_matchups(rows: Sequence[dict], path: Path, title: str) -> None:
    """Draw matchup rows (``answers.matchup_rows``: attacker, weapon_name, profile_name,
    target_name, expected_models_destroyed) as a heatmap of expected models destroyed into
    ``path``: a row per weapon profile (in the order of ``rows``), a column per target; a cell
    with no figure (the exact engine refused the pair) is blank. Raises what
    ``plot_rule_diff`` raises, and ``InputError`` for no rows."""
    heatmap([(matchup_label(r), r["target_name"], r["expected_models_destroyed"]) for r in rows], path, title,
            "no matchups to draw; fill the table with `wh40k matchups`")


def plot_list_matchup(rows: Sequence[dict], path: Path, title: str) -> None:
    """Draw ``wh40k matchup`` rows (attacker, target, phase, expected_models_destroyed) as a
    heatmap of expected models destroyed: a row per attacking unit and phase, a column per
    target unit (a pair the engines refused is blank). Raises what ``plot_matchups`` raises."""
    import math

    heatmap([(f"{r['attacker']} ({r['phase']})", r["target"],
              None if r["expected_models_destroyed"] is None or math.isnan(r["expected_models_destroyed"])
              else r["expected_models_destroyed"]) for r in rows], path, title, "the lists give no pair to draw")


def heatmap(cells: Sequence[tuple[str, str, float | None]], path: Path, title: str, empty: str) -> None:
    """A heatmap of expected models destroyed into ``path``: ``cells`` are (row label, column
    label, value or None), rows and columns in the order they first come; a cell is a text with
    its value and the id ``cell-<row>-<column>``, a None blank. ``empty``: the error's reason
    when there are no cells."""
    check_plot_path(path)
    if not cells:
        raise InputError(f"--plot {path}: {empty}")
    import numpy as np

    rows = list(dict.fromkeys(c[0] for c in cells))
    columns = list(dict.fromkeys(c[1] for c in cells))
    values = np.full((len(rows), len(columns)), np.nan)
    for row, column, value in cells:
        if value is not None:
            values[rows.index(row), columns.index(column)] = value
    figure = _figure((max(9.0, 4.0 + 1.0 * len(columns)), 1.5 + 0.28 * len(rows)))
    figure.suptitle(title)
    axes = figure.add_subplot()
    image = axes.imshow(np.ma.masked_invalid(values), cmap="viridis", aspect="auto")
    figure.colorbar(image, ax=axes, label="expected models destroyed")
    axes.set_xticks(range(len(columns)), columns, rotation=30, ha="right", fontsize=8)
    axes.set_yticks(range(len(rows)), rows, fontsize=7)
    top = np.nanmax(values) if np.isfinite(values).any() else 1.0
    for i in range(len(rows)):
        for j in range(len(columns)):
            if np.isfinite(values[i, j]):
                cell = axes.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=7,
                                 color="black" if values[i, j] > 0.6 * top else "white")
                cell.set_gid(f"cell-{i}-{j}")
    _save(figure, path)


def matchup_label(row: dict) -> str:
    """A weapon profile as a heatmap row names it.

    >>> matchup_label({"attacker": "Canoness", "weapon_name": "Blessed blade", "profile_name": ""})
    'Canoness: Blessed blade'
    """
    profile = f" ({row['profile_name']})" if row.get("profile_name") else ""
    return f"{row['attacker']}: {row['weapon_name']}{profile}{' [melee]' if row.get('is_melee') else ''}"
