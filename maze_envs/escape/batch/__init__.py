"""Maze Escape at reinforcement-learning scale: N games as arrays, one step for all of them.

The package follows Jumanji's shape: ``types`` (the state, arrays with a leading game axis),
``generator`` (new boards, mazes sampled in batches), ``engine`` (one turn of every game),
``observe`` (the numeric observations, written into buffers allocated once), ``vector`` (the
Gymnasium ``VectorEnv``, built by ``maze_escape_v1.vector_env``) and ``export`` (one game as a
layout the scalar env plays). It shares the rules' vocabulary (:mod:`maze_envs.grid`,
:mod:`maze_envs.escape.vocab`) and the numeric layout (:mod:`maze_envs.escape.numeric`) with
the scalar game, never its per-game objects.
"""
