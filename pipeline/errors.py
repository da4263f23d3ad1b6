"""The project's small error hierarchy.

Every error the CLI expects is a ``Wh40kError``; it prints ``Error: <message>`` and exits 1.
Anything else reaching the CLI is a bug and keeps its traceback.
"""

from __future__ import annotations


class Wh40kError(Exception):
    """Base of every expected error: the message says what, where, and how to fix it."""


class NormaliseError(Wh40kError, ValueError):
    """A printed value that cannot be read (``"3++"`` as a roll target). Becomes a reject."""


class RawFileError(Wh40kError):
    """A raw file listed in the manifest is missing or unreadable."""


class ManifestError(Wh40kError):
    """The raw manifest is malformed: names the file, the entry and the field."""


class BuildError(Wh40kError):
    """The build could not complete; the previous database is left as it was."""


class DatabaseError(Wh40kError):
    """The database is missing, or a query failed or tried to write."""


class NotFoundError(Wh40kError):
    """A unit, weapon or rule name that matches nothing; the message suggests close names."""


class InputError(Wh40kError):
    """A command-line value that cannot be read, e.g. an inline target profile."""
