"""Tests of the benchmark runner (``maze_envs.bench``)."""

#: The Maze Escape version the runner tests play (the runner's default).
ESCAPE_VERSION = 1
