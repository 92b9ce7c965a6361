"""Studies: the questions of the Maze Escape write-up as ready, replicated, paired experiments.

The write-up behind this library asked its questions with mostly single games and said each
should be repeated before claiming an effect. A study makes one question an experiment that
runs with one command: its arms (the write-up's settings, changed one at a time) are played on
the same mazes and seeds, at least 20 mazes per arm, and its report compares them game by game,
with intervals. The parts:

* :mod:`.spec`: a study as data (a TOML file), and the benchmark experiment it becomes;
* :mod:`.catalog`: the nine studies shipped in ``data/`` and finding one by name or path;
* :mod:`.pairing`: the comparisons of a run, and the check that compared arms play the same
  mazes;
* :mod:`.measures`: how each behaviour metric (defined once, in :mod:`maze_envs.metrics` and
  the analysis) is aggregated over an arm;
* :mod:`.report`, :mod:`.document`, :mod:`.render`, :mod:`.plots`: the report as data, as
  sections, as Markdown and HTML, and its plots; :mod:`.folder`: a run's files;
* :mod:`.cli`: ``maze-envs study list``, ``show`` and ``report``. ``maze-envs study run``
  plays a study with a model and lives with the models (:mod:`llm_policies.apps.study_run`, with
  its dry run in :mod:`llm_policies.apps.study_plan`).

See docs/studies.md.
"""

from __future__ import annotations

from maze_envs.studies.catalog import find, shipped
from maze_envs.studies.spec import Study

__all__ = ["Study", "find", "shipped"]
