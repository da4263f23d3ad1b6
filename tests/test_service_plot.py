"""``wh40k attack|rule-diff|matchups --plot FILE.png|FILE.svg``: the charts' bars, words and
cells read back from the file, and the heavy libraries imported only by the commands that use
them."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pipeline.cli import run
from pipeline.service.plot import at_least, shown_range
from tests.editions_db import editions_db

ROOT = Path(__file__).resolve().parent.parent
ATTACK = ["attack", "Battle Sisters Squad", "--target", "MEQ", "--half-range"]
SVG = "{http://www.w3.org/2000/svg}"


def draw(capsys, path: Path) -> dict:
    capsys.readouterr()
    status = run([*ATTACK, "--db", str(editions_db()), "--format", "json", "--plot", str(path)])
    out = capsys.readouterr()
    assert status == 0, out.err
    assert out.err.strip().endswith(f"chart written to {path}")
    return json.loads(out.out)


def bar_heights(svg: ET.Element, stage: str) -> dict[int, float]:
    """The height of each bar ``<stage>-exact-<k>`` of the SVG (its path's vertical extent)."""
    heights = {}
    for group in svg.iter(f"{SVG}g"):
        found = re.fullmatch(rf"{stage}-exact-(\d+)", group.get("id", ""))
        if found:
            (path,) = group.iter(f"{SVG}path")
            ys = [float(y) for y in re.findall(r"[-\d.]+ ([-\d.]+)", path.get("d"))]
            heights[int(found.group(1))] = max(ys) - min(ys)
    return heights


def test_the_svg_has_one_bar_per_k_with_the_heights_of_the_probabilities(tmp_path, capsys):
    path = tmp_path / "attack.svg"
    answer = draw(capsys, path)
    svg = ET.parse(path).getroot()
    for stage in ("models_destroyed", "damage"):
        pmf = answer[stage]["pmf"]
        heights = bar_heights(svg, stage)
        assert sorted(heights) == list(range(shown_range(pmf)))
        assert len(heights) >= 3
        scale = max(heights.values()) / max(pmf)
        for k, height in heights.items():
            assert height == pytest.approx(pmf[k] * scale, abs=0.01)
        lines = [g for g in svg.iter(f"{SVG}g") if g.get("id") == f"{stage}-at-least"]
        assert len(lines) == 1
    # the tail line starts at P(at least 0) = 1
    assert at_least(answer["damage"]["pmf"])[0] == pytest.approx(1.0)


def test_the_png_is_a_png_of_the_stated_size_with_the_bars_drawn(tmp_path, capsys):
    path = tmp_path / "attack.png"
    draw(capsys, path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1100, 420)
    import matplotlib.image

    pixels = matplotlib.image.imread(path)
    bar = (abs(pixels[:, :, 0] - 0x4A / 255) < 0.02) & (abs(pixels[:, :, 1] - 0x72 / 255) < 0.02) & (
        abs(pixels[:, :, 2] - 0xC4 / 255) < 0.02)
    # bars in both panels, the left and the right half of the picture
    assert bar[:, : width // 2].sum() > 500 and bar[:, width // 2:].sum() > 500


def test_a_plot_file_of_another_kind_is_refused_before_the_attack(tmp_path, capsys):
    capsys.readouterr()
    assert run([*ATTACK, "--db", str(editions_db()), "--plot", str(tmp_path / "attack.pdf")]) == 1
    assert capsys.readouterr().err.strip() == f"Error: --plot {tmp_path / 'attack.pdf'}: give a file ending in .png or .svg"
    assert run([*ATTACK, "--db", str(editions_db()), "--plot", str(tmp_path / "no" / "attack.png")]) == 1
    assert capsys.readouterr().err.strip() == (
        f"Error: --plot {tmp_path / 'no' / 'attack.png'}: the folder {tmp_path / 'no'} does not exist; "
        "create it or give another file")
    assert list(tmp_path.iterdir()) == []


def test_the_web_and_chart_libraries_load_only_with_their_commands():
    code = ("import sys; from pipeline.cli import run; run(sys.argv[1:]); "
            "print(sorted(m for m in ('fastapi', 'uvicorn', 'matplotlib', 'starlette') if m in sys.modules))")
    for args, loaded in ((["--help"], "[]"), ([*ATTACK, "--db", str(editions_db())], "[]"),
                         (["serve", "--help"], "[]")):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT)
        assert out.stdout.strip().splitlines()[-1] == loaded, out.stderr


def svg_texts(svg: ET.Element, pattern: str) -> list[tuple[re.Match, str]]:
    """(id match, text) of each group of the SVG whose id matches ``pattern``, in document order."""
    found = []
    for group in svg.iter(f"{SVG}g"):
        match = re.fullmatch(pattern, group.get("id", ""))
        if match:
            found.append((match, "".join(t.text or "" for t in group.iter(f"{SVG}text"))))
    return found


def test_rule_diff_plot_shows_the_new_wording_with_the_removed_and_added_words(tmp_path, capsys):
    path = tmp_path / "lethal-hits.svg"
    capsys.readouterr()
    assert run(["rule-diff", "Lethal Hits", "--db", str(editions_db()), "--format", "json", "--plot", str(path)]) == 0
    out = capsys.readouterr()
    assert out.err.strip() == f"chart written to {path}"
    diff = json.loads(out.out)
    runs = svg_texts(ET.parse(path).getroot(), r"diff-(\d+)-(equal|removed|added)")
    assert [int(m.group(1)) for m, _ in runs] == list(range(len(runs)))
    # read back: the words kept and added are the new wording, the words kept and removed the old
    kept_and = lambda kind: " ".join(text for m, text in runs if m.group(2) in ("equal", kind)).split()  # noqa: E731
    assert kept_and("added") == diff["to"]["text"].split()
    assert kept_and("removed") == diff["from"]["text"].split()
    assert {m.group(2) for m, _ in runs} == {"equal", "removed", "added"}


def test_rule_diff_all_plot_has_a_bar_per_changed_rule_as_long_as_its_changes(tmp_path, capsys):
    path = tmp_path / "changes.svg"
    capsys.readouterr()
    assert run(["rule-diff", "--all", "--db", str(editions_db()), "--format", "json", "--plot", str(path)]) == 0
    rows = json.loads(capsys.readouterr().out)
    changed = {r["rule_key"]: r["changes"] for r in rows if r["status"] == "changed"}
    widths = {}
    for group in ET.parse(path).getroot().iter(f"{SVG}g"):
        found = re.fullmatch(r"change-(.+)", group.get("id", ""))
        if found:
            (bar,) = group.iter(f"{SVG}path")
            xs = [float(x) for x in re.findall(r"([-\d.]+) [-\d.]+", bar.get("d"))]
            widths[found.group(1)] = max(xs) - min(xs)
    assert set(widths) == set(changed) and len(changed) >= 2
    scale = max(widths.values()) / max(changed.values())
    for key, width in widths.items():
        assert width == pytest.approx(changed[key] * scale, abs=0.01)


def test_matchups_plot_is_a_heatmap_whose_cells_are_the_tables_figures(tmp_path, capsys):
    db = tmp_path / "editions.duckdb"
    shutil.copy(editions_db(), db)
    path = tmp_path / "matchups.svg"
    capsys.readouterr()
    assert run(["matchups", "--db", str(db), "--edition", "10", "--plot", str(path)]) == 0
    assert f"chart written to {path}" in capsys.readouterr().err.splitlines()
    from pipeline.query import open_database
    from pipeline.service.answers import top_matchups
    from pipeline.service.plot import matchup_label

    con = open_database(db)
    rows = top_matchups(con, 10)
    con.close()
    attackers = list(dict.fromkeys(matchup_label(r) for r in rows))
    targets = list(dict.fromkeys(r["target_name"] for r in rows))
    assert targets == ["GEQ", "MEQ", "TEQ", "VEHICLE", "MONSTER"] and 1 <= len(attackers) <= 30
    cells = {(int(m.group(1)), int(m.group(2))): text
             for m, text in svg_texts(ET.parse(path).getroot(), r"cell-(\d+)-(\d+)")}
    assert cells == {(attackers.index(matchup_label(r)), targets.index(r["target_name"])):
                     f"{r['expected_models_destroyed']:.2f}" for r in rows if r["expected_models_destroyed"] is not None}
    # the best weapon profile (the first row) destroys the most on average
    means = [sum(float(cells[(i, j)]) for j in range(5) if (i, j) in cells) for i in range(len(attackers))]
    assert means[0] == max(means)


def test_the_rule_diff_and_matchups_pngs_are_pngs(tmp_path, capsys):
    path = tmp_path / "lethal-hits.png"
    assert run(["rule-diff", "Lethal Hits", "--db", str(editions_db()), "--plot", str(path)]) == 0
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 1100 and height > 100
    capsys.readouterr()
    assert run(["rule-diff", "Lethal Hits", "--db", str(editions_db()), "--plot", str(tmp_path / "x.gif")]) == 1
    assert capsys.readouterr().err.strip() == f"Error: --plot {tmp_path / 'x.gif'}: give a file ending in .png or .svg"
