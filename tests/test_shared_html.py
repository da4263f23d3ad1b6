"""``SharedHtmlCleaning``: the HTML clean-up shared between the caller and a forked worker.

Whatever the split, every text must be the one ``html_to_text`` gives in the calling process.
"""

from __future__ import annotations

import os
from pathlib import Path
import sys
import time

import pytest

from pipeline.errors import InputError
from pipeline.normalise.text import SharedHtmlCleaning, background_jobs, html_to_text

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or (os.cpu_count() or 1) < 2,
    reason="the worker is forked, on Linux with two CPUs or more",
)

FRAGMENTS = [
    f'<p>Rule {i}: <b>{i % 7}+</b> <span class="kwb">INFANTRY</span></p><ul><li>a{i}</li><li>b</li></ul>'
    for i in range(300)
]


def _wait_until_worker_claims(shared: SharedHtmlCleaning, k: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while shared._claims[k] != 2:  # the worker's mark
        assert time.monotonic() < deadline, f"the worker never claimed chunk {k}"
        time.sleep(0.01)


def test_every_text_is_html_to_text_and_the_worker_takes_the_first_chunks(monkeypatch):
    monkeypatch.delenv("WH40K_JOBS", raising=False)
    shared = SharedHtmlCleaning.start(lambda: list(FRAGMENTS), capacity=100, chunk_size=10)
    assert shared is not None
    try:
        shared.expect(list(FRAGMENTS))
        _wait_until_worker_claims(shared, 0)  # 300 fragments in chunks of 10: the worker starts at 0
        texts = [shared.get(f) for f in FRAGMENTS]
    finally:
        shared.close()
    assert texts == [html_to_text(f) for f in FRAGMENTS]
    assert texts[0] == "Rule 0: 0+ INFANTRY\na0\nb"
    assert 1 <= shared.chunks_by_worker <= 30


def test_a_worker_list_that_differs_still_gives_the_right_texts(monkeypatch):
    monkeypatch.delenv("WH40K_JOBS", raising=False)
    # The worker lists the fragments in reverse: its chunk k holds other fragments than the
    # caller's chunk k. The texts are keyed by fragment, so only the split suffers.
    shared = SharedHtmlCleaning.start(lambda: FRAGMENTS[::-1], capacity=100, chunk_size=10)
    assert shared is not None
    try:
        shared.expect(list(FRAGMENTS))
        _wait_until_worker_claims(shared, 0)
        texts = {f: shared.get(f) for f in FRAGMENTS}
    finally:
        shared.close()
    assert texts == {f: html_to_text(f) for f in FRAGMENTS}


def test_a_dead_worker_leaves_the_work_to_the_caller(monkeypatch):
    monkeypatch.delenv("WH40K_JOBS", raising=False)

    def list_and_die() -> list[str]:
        os._exit(3)  # the worker dies before it sends anything

    shared = SharedHtmlCleaning.start(list_and_die, capacity=100, chunk_size=10)
    assert shared is not None
    shared.expect(list(FRAGMENTS))
    shared._claims[0] = 2  # as if the worker had claimed the first chunk before it died
    try:
        texts = [shared.get(f) for f in FRAGMENTS]
    finally:
        shared.close()
    assert texts == [html_to_text(f) for f in FRAGMENTS]
    assert shared.chunks_by_worker == 0


def test_wh40k_jobs_setting(monkeypatch):
    monkeypatch.setenv("WH40K_JOBS", "1")
    assert background_jobs() == 1
    assert SharedHtmlCleaning.start(lambda: list(FRAGMENTS), capacity=100) is None
    monkeypatch.setenv("WH40K_JOBS", "3")
    assert background_jobs() == 3
    monkeypatch.setenv("WH40K_JOBS", "two")
    with pytest.raises(InputError, match="WH40K_JOBS='two'"):
        background_jobs()
    monkeypatch.setenv("WH40K_JOBS", "0")
    with pytest.raises(InputError, match="1 or more"):
        background_jobs()


def test_abort_stops_the_worker_at_once(monkeypatch):
    monkeypatch.delenv("WH40K_JOBS", raising=False)
    shared = SharedHtmlCleaning.start(lambda: list(FRAGMENTS) * 1, capacity=100, chunk_size=10)
    assert shared is not None
    shared.expect(list(FRAGMENTS))
    shared.abort()
    assert not shared._worker.is_alive()
    shared.close()  # closing after an abort does nothing more


def test_the_worker_exits_when_its_caller_is_killed(tmp_path):
    # A build killed with SIGKILL during the parse must not leave its HTML worker behind.
    import os
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import sys, time\n"
        "from pipeline.normalise.text import SharedHtmlCleaning\n"
        "fragments = [f'<p>fragment <b>{i}</b></p>' * 50 for i in range(20000)]\n"
        "shared = SharedHtmlCleaning(lambda: fragments, capacity=1000, chunk_size=20)\n"
        "print(shared._worker.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    env = {**os.environ, "WH40K_JOBS": "2"}
    caller = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env,
                              cwd=str(Path(__file__).resolve().parent.parent))
    worker = int(caller.stdout.readline())
    caller.send_signal(signal.SIGKILL)
    caller.wait(timeout=10)
    for _ in range(200):  # at most 20 s
        try:
            with open(f"/proc/{worker}/stat") as stat:
                if stat.read().split()[2] == "Z":
                    break  # exited (a zombie until init reaps it)
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        os.kill(worker, signal.SIGKILL)
        raise AssertionError("the worker still runs 20 s after its caller was killed")



def test_the_worker_lists_the_fragments_one_table_at_a_time(monkeypatch):
    # the worker cleans the first chunks while the later tables wait to be read (its first
    # texts come before the parser needs them); the whole list is the parser's
    import pipeline.extractors.wahapedia_csv as export

    files = {
        "Abilities": "id|name|legend|faction_id|description|\n1|A|l|SM|<b>one</b> x|\n2|B|l|SM|<i>two</i>|\n",
        "Stratagems": "faction_id|name|id|type|cp_cost|legend|turn|phase|detachment|detachment_id|description|\n"
                      "SM|<b>S</b>|9|t|1|l|t|p|d|7|<p>three</p>|\n",
    }
    read: list[str] = []
    real_read = export._read
    monkeypatch.setattr(export, "_read", lambda text, name: (read.append(name), real_read(text, name))[1])
    listing = export._fragments_of_files(files)
    assert next(listing) == "<b>one</b> x" and read == ["Abilities"]
    rest = list(listing)
    assert read == ["Abilities", "Stratagems"]
    assert ["<b>one</b> x", *rest] == export.html_fragments({n: real_read(t, n) for n, t in files.items()})
    assert rest == ["<i>two</i>", "<b>S</b>", "<p>three</p>"]
