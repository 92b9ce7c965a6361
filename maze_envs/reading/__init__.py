"""Reading journaled games: what the viewer and the analysis both need, owned by neither.

Like Inspect AI's ``log/`` serves its viewer and its scorers, this floor serves
:mod:`maze_envs.view` (the pages) and :mod:`maze_envs.bench.analysis` (the behavioural metrics).
It sits above the journal (:mod:`maze_envs.journal`: the file, its rows, verification) and the
environments, whose boards and engines it uses to rebuild where the agents stood, and below view
and bench. The rest of :mod:`maze_envs.journal` never imports it (nor any environment).

Modules: :mod:`.turns` (a game's readable turns), :mod:`.tracks` (Maze Escape: every agent's
cell, move and result, turn by turn), :mod:`.agimaze` (AGI Maze: the recorded steps replayed on
the engine, with the player's position), :mod:`.text` (how one text changed into the next).
"""
