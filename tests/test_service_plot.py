"""``wh40k attack --plot FILE.png|FILE.svg``: the chart's bars read back from the file, and the
heavy libraries imported only by the commands that use them."""

from __future__ import annotations

import json
import re
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
