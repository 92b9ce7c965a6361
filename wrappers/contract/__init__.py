"""The EnvTraverse interaction contract for the maze-envs environments.

An environment description, JSON actions in, named observation files out, and a terminal flag:
any of our environments (``AgiMaze-v0``, ``AgiMazeSet-v0``, Maze Escape as one agent or as every
agent) played through files in a workspace, so an environment-agnostic agent (a coding agent, a
script) can play it with ``maze-envs contract start|move|status``.

* :mod:`.session`: the games, their responses and the replay that restores a session;
* :mod:`.files`: the workspace layout (:func:`start_session`, :func:`move`, :func:`read_status`);
* :mod:`.description`: the environment descriptions and the interface note;
* :mod:`.cli`: the ``maze-envs contract`` commands.

Example:
    >>> import tempfile
    >>> workspace = tempfile.mkdtemp()
    >>> _ = start_session(workspace, SessionSpec(env="agimaze-set", paths=[
    ...     "TUTORIAL/STAGE-01/0000.json"]))
    >>> status = move(workspace, {"id": "start"})
    >>> status["files"]
    ['labyrinth_description.md', 'map.txt', 'message.md', 'state.txt']
"""

from __future__ import annotations

from wrappers.contract.files import load_session, move, read_status, start_session
from wrappers.contract.session import ContractError, Response, SessionSpec, open_game, replay

__all__ = [
    "ContractError",
    "Response",
    "SessionSpec",
    "load_session",
    "move",
    "open_game",
    "read_status",
    "replay",
    "start_session",
]
