"""The journal schema versions this library reads but no longer writes: 3 (every turn stored whole,
as JSON text) and 4 (observations and events stored as what changed since the turn before,
:mod:`.changes`, rebuilt by :mod:`.rebuild`). Files of these versions open read-only; they read
and verify as they always did (:class:`LegacyRowDecoder`)."""

from __future__ import annotations

from maze_envs.journal.legacy.rows import LegacyRowDecoder

__all__ = ["LegacyRowDecoder"]
