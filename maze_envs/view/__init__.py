"""Self-contained HTML viewers generated from journals (no server, no network)."""

from __future__ import annotations

from maze_envs.view.escape_page import escape_game_data, escape_game_html, main

__all__ = ["escape_game_data", "escape_game_html", "main"]
