"""Charts of an attack's distributions for people: ``wh40k attack ... --plot FILE.png|FILE.svg``.

Two panels, models destroyed and damage: a bar per k of P(exactly k) and a line of P(at least
k), for k from 0 to the last k whose P(at least k) is 1e-6 or more. matplotlib (its Agg
backend, no display needed) is imported only when a chart is drawn. In an SVG each bar is a
group with the id ``<stage>-exact-<k>`` and each line ``<stage>-at-least``, so a program can
read the bars back.
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
