"""The limits on what one request or one input may ask of the project, declared once.

Each limit is far above anything a real game has (a unit of a few dozen models, a few hundred
attacks, Damage 24 at most in the 10th-edition data) and low enough that the work of one request
stays bounded: the worst attack at these limits takes a few seconds (``benchmarks/bench_limits.py``
prints the figures). A value over a limit is an error that names the limit and the value given
(``limit_error``), never a hang or a traceback. The README's "Limits" section lists them.
"""

from __future__ import annotations

from pipeline.errors import InputError

#: Models that fire one weapon: ``--models``, the count of ``--weapon "2 heavy bolters"``, a
#: ``Weapon``'s ``models`` (the largest real unit has 20 to 30 models).
MAX_MODELS_PER_WEAPON = 1_000

#: Attacks one weapon makes at most: its models times the most attacks one model makes (the
#: Attacks characteristic with Rapid Fire and Blast), and the hits it can score with Sustained
#: Hits (a real unit makes a few hundred at most). Bounds the engine's distributions.
MAX_ATTACKS_PER_WEAPON = 1_000

#: Attacks of one weapon with both Lethal Hits and Devastating Wounds (the engine applies them
#: one attack at a time to its chain, linear in the attacks but the slowest path against a large
#: target; a real unit makes some 60).
MAX_ATTACKS_LETHAL_DEVASTATING = 500

#: The highest Damage one attack can have (the Damage characteristic, Melta included; the
#: real maximum is 24).
MAX_DAMAGE_PER_ATTACK = 100

#: Damage one weapon can do at most: its hits times the highest Damage of one attack (1,000
#: attacks of Damage 20, or 200 of Damage 100; a real unit does a few hundred at most). Bounds
#: the engine's damage distributions.
MAX_DAMAGE_PER_WEAPON = 20_000

#: Dice in one dice expression (``4D6``: 4; real data has at most 4).
MAX_DICE_COUNT = 10

#: Sides of one die (real data has D3 and D6; a die has at least 2 sides).
MAX_DICE_SIDES = 20

#: Wounds of the whole target unit, models times Wounds (the states of the engine's allocation
#: chain; a real unit has at most some 100: 20 models of W3, or one Titan of W100).
MAX_TARGET_WOUNDS = 500

#: Weapon profiles resolved in one attack (a real unit fires at most some 15).
MAX_WEAPONS_PER_ATTACK = 100

#: Work of the exact engine's allocation chain for one attack, in multiply-adds of its main
#: chain's matrix products (``exact.chain_work``: estimated from the weapons' event counts and the
#: target's size before the work starts, linear in each weapon's attacks; the kill counts of
#: several Devastating Wounds weapons, ``pipeline.engine.kill_counts``, counted in the same unit of
#: time, about 0.7 ns on this project's machine). One weapon of 1,000 attacks against 500 wounds
#: needs 1e6; four Devastating Wounds weapons of 1,000 attacks, Damage 1, 2, 3 and D6, against
#: 20 x W25 with Feel No Pain 5e9 (among the heaviest accepted: some 4 s). Every target of the
#: database (108 distinct Wounds at their unit's largest size, up to 1 x W100 and 20 x W4) against
#: six such weapons of 400 attacks each is under it (``benchmarks/bench_engine.py``); three of 400
#: attacks against 5 x W100 need 1.5e10, over it (no datasheet has several models of so many
#: Wounds: the kill counts' tensor has W^3 x models cells, the main chain carries a product of
#: pending counts, ``pipeline.engine.last_expanded`` takes two such weapons only).
MAX_ENGINE_WORK = 6_000_000_000

#: Rows that a command prints as a table (``pipeline.cli.output.render_rows``): rich lays a table
#: out whole, some 0.7 ms a row (74,000 rows: 50 s); the rest is counted in a note, and
#: ``--format csv`` or ``json`` prints every row.
MAX_TABLE_ROWS = 2_000

#: Characters in a name typed by a user: a unit, weapon or rule name, a target profile, a filter
#: (the longest real unit name has 54). Close-name suggestions are not searched for a longer one.
MAX_NAME_LENGTH = 200

#: Digits of an integer typed in a target profile (``T4``, ``x10``) or read from a JSON source
#: file: 18 always fit a 64-bit integer column (real values have at most 4).
MAX_NUMBER_DIGITS = 18

#: Nesting depth of a JSON or XML source file (libxml2's own default; real BattleScribe files
#: nest some 20 deep).
MAX_NESTING_DEPTH = 256

#: Bytes of one raw source file (the largest real one, a BattleScribe catalogue, has 3 MB).
MAX_FILE_BYTES = 64 * 1024 * 1024

#: Seconds one ``wh40k sql`` call may run (its statements and the fetch of its rows): a query
#: over the whole database takes well under a second; a crafted one (a cross join of two huge
#: ranges) is stopped, not left to hang.
MAX_SQL_SECONDS = 60

#: DuckDB's ``memory_limit`` on every connection that reads a database (``SANDBOX_CONFIG``): a
#: crafted query (a cross join of two huge ranges, an ORDER BY of millions of long strings) fails
#: with DuckDB's "Out of Memory" error instead of taking the machine's memory. The whole database
#: is some 50 MB; no command of the project needs more than a few hundred MB. DuckDB does not
#: count one huge value (``repeat('x', 2000000000)``) against it: ``MAX_SQL_ADDRESS_SPACE`` does.
MAX_SQL_MEMORY = "1.0 GiB"

#: Bytes of address space one statement of a ``wh40k sql`` call (DuckDB's ``run_sql``) may add to
#: the process while it runs, over what the process holds when it starts: the operating system's
#: limit (``RLIMIT_AS``), for what ``MAX_SQL_MEMORY`` does not count (one huge value:
#: ``repeat('x', 2000000000)`` fails with "Out of Memory" in 0.1 s, where it took 16 s and 4 GB).
#: One and a half times ``MAX_SQL_MEMORY``: DuckDB's buffers and its threads' stacks fit. The rows
#: are fetched after it (``MAX_SQL_ROWS`` bounds them): DuckDB aborts the process when it cannot
#: allocate the Python objects of a fetch.
MAX_SQL_ADDRESS_SPACE = 3 << 29

#: DuckDB's ``threads`` on every connection that reads a database (the machine may be shared).
MAX_SQL_THREADS = 2

#: Bytes of the values one ``wh40k sql`` call renders (text as characters, a blob at 4 per byte,
#: as it is printed): the rows past it are cut, and the output says so; a first row over it is an
#: error (select a part of the value: ``substr(x, 1, 1000)``, ``length(x)``). Every real table
#: is under 16 MB.
MAX_SQL_OUTPUT_BYTES = 64 * 1024 * 1024

#: Rows one ``wh40k sql`` query may return (the largest table has some 75,000).
MAX_SQL_ROWS = 1_000_000


def limit_error(given: str, limit: str, hint: str) -> InputError:
    """The error for a value over a limit: what was given, the limit, and how to fix it.

    >>> str(limit_error("--models 1000000", "at most 1000 models fire one weapon",
    ...                 "give a smaller --models"))
    '--models 1000000: at most 1000 models fire one weapon; give a smaller --models'
    """
    return InputError(f"{given}: {limit}; {hint}")


def check_name(value: str, what: str) -> str:
    """``value`` if it has at most ``MAX_NAME_LENGTH`` characters, else an ``InputError`` naming
    ``what`` it is (``"unit name"``) and its length.

    >>> check_name("Boltgun", "weapon name")
    'Boltgun'
    >>> check_name("x" * 300, "unit name")
    Traceback (most recent call last):
    ...
    pipeline.errors.InputError: a unit name of 300 characters: at most 200 characters; shorten it
    """
    if len(value) > MAX_NAME_LENGTH:
        raise limit_error(f"a {what} of {len(value)} characters", f"at most {MAX_NAME_LENGTH} characters",
                          "shorten it")
    return value

#: Bytes of one army list file, and of the roster inside a ``.rosz`` once unzipped (a real
#: 2,000-point BattleScribe roster has some 200 KB; a text list a few KB).
MAX_LIST_BYTES = 8 * 1024 * 1024

#: Bytes of one rules text ``wh40k detect-edition`` reads (the longest real rules page has some
#: 400 KB of text).
MAX_RULES_TEXT_BYTES = 8 * 1024 * 1024

#: Units in one army list (a real 3,000-point list has some 30; a list of every datasheet of a
#: faction some 150).
MAX_LIST_UNITS = 500

#: The largest points value or model count a list may state (a real list has 3,000 points and
#: units of at most some 30 models).
MAX_LIST_NUMBER = 100_000


def read_bounded(path, limit: int, what: str) -> bytes:
    """The bytes of the regular file at ``path`` (a ``Path`` or ``str``), at most ``limit`` of
    them: the file is read up to ``limit + 1`` bytes, whatever its size says (``/dev/zero`` has
    size 0), and a FIFO, a device or a folder is refused before it is opened for reading (a
    FIFO would block). ``what`` names the file in the messages (``"army list"``).

    Raises ``InputError`` (naming the path) for a missing file, one that is not a regular file,
    one that cannot be read, or one over ``limit`` bytes.

    >>> read_bounded("/dev/null", 10, "army list")
    Traceback (most recent call last):
    ...
    pipeline.errors.InputError: /dev/null: not a regular file (a device, a FIFO or a socket); give the path of an army list
    """
    import os
    import stat

    article = "an" if what[:1] in ("a", "e", "i", "o", "u") else "a"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError(f"{path}: no such file; give the path of {article} {what}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the file ({exc.strerror})") from None
    if stat.S_ISDIR(mode):
        raise InputError(f"{path}: a folder, not {article} {what}")
    if not stat.S_ISREG(mode):
        raise InputError(f"{path}: not a regular file (a device, a FIFO or a socket); give the path of "
                         f"{article} {what}")
    try:
        # O_NONBLOCK: a file swapped for a FIFO between the stat and the open does not block
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise InputError(f"{path}: not a regular file; give the path of {article} {what}")
            data = file.read(limit + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the file ({exc.strerror})") from None
    if len(data) > limit:
        raise limit_error(f"{path}: more than {limit:,} bytes", f"at most {limit:,} bytes in one {what}",
                          f"this is no {what}")
    return data
