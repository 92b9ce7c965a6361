"""Observations of both environments as the text a model reads.

One renderer, shared by the LLM policies (:mod:`llm_policies`) and the text observation wrapper:
:func:`render_escape` / :func:`escape_legend` for Maze Escape and :func:`render_agimaze` /
:func:`agimaze_description` for AGI Maze. The wording lives in versioned data files
(:mod:`maze_envs.text.wording`); this package holds no model code.
"""

from __future__ import annotations

from maze_envs.text.agimaze import agimaze_description, render_agimaze
from maze_envs.text.escape import escape_legend, render_escape
from maze_envs.text.wording import Wording, available_versions, load_wording

__all__ = [
    "Wording",
    "agimaze_description",
    "available_versions",
    "escape_legend",
    "load_wording",
    "render_agimaze",
    "render_escape",
]
