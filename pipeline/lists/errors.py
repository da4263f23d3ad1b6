"""The error of an army list that cannot be read."""

from __future__ import annotations

from pipeline.errors import InputError


class ArmyListError(InputError):
    """An army list that cannot be read: the message names the line (the caller adds the file)."""
