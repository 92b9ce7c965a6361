"""Policy seeds: how each agent's policy seed derives from its game seed (the runner, the
single-agent wrapper and the Inspect tasks all use these, so one seed gives one set of teammates
everywhere).

The game seed is the environment's reset seed. Each agent's policy gets its own seed
(``policy.reset(agent, seed, episode)``, the policy's only source of randomness):

    policy seed = :func:`agent_seed` (game seed, agent index, salt)

drawn from ``numpy.random.SeedSequence((game seed, agent index, salt))``, where ``salt``
(:func:`escape_salt`, :func:`agimaze_salt`, :func:`agimaze_set_salt`: the first 60 bits of a
SHA-256) tells the games of one arm apart beyond their seed: for Maze Escape the environment and
the maze size, for AGI Maze the bundle (path, pack root and pack version) or the set. So
teammates get independent streams; every game of an arm gets its own (another seed, another maze
size, another AGI Maze bundle: another policy seed, so a random agent never replays one action
sequence on every bundle); the same game always gets
the same ones, in any process; and arms that play the same maze or bundle with the same seed hand
their policies the same seeds even when their rules differ (the radio, the meeting alert, the
budget), so paired arms differ in the rule alone (common random numbers).

Unless asked: an arm with ``policy_seed = N`` (a policy entry field in an experiment file) hands
agent ``i`` the seed ``agent_seed(N, i)`` in *every* game (common random numbers across games).
The seeds each game's policies got are stored in its journal meta (``policy_seeds``).

Example:
    >>> agent_seed(0, 1) == agent_seed(0, 1) != agent_seed(0, 2)
    True
    >>> game = policy_seeds(0, ("A", "B"), salt=7)
    >>> game == policy_seeds(0, ("A", "B"), salt=7) != policy_seeds(0, ("A", "B"), salt=8)
    True
    >>> policy_seeds(0, ("A",), salt=7, fixed=3) == policy_seeds(5, ("A",), salt=9, fixed=3)
    True
    >>> escape_salt("maze_envs/MazeEscape-v1", 9, 9) == escape_salt("maze_envs/MazeEscape-v1", 9, 9)
    True
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import orjson


def stable_key(data: Any) -> str:
    """A stable identity of JSON data: the first 32 hex digits of the SHA-256 of its canonical
    JSON (keys sorted), the same in every process."""
    return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]


def _salt(data: Any) -> int:
    return int(stable_key(data)[:15], 16)


def escape_salt(env_id: str, width: int, height: int) -> int:
    """The salt of a Maze Escape game: its environment and maze size. Not the rules: setups that
    differ only in what agents may do (the radio, the meeting alert) hand their policies the same
    seeds on the same maze, so paired arms differ in that rule alone."""
    return _salt({"env": env_id, "size": f"{width}x{height}"})


def agimaze_salt(
    env_id: str, pack: str, pack_root: str | None = None, pack_version: str = ""
) -> int:
    """The salt of an AGI Maze game: the bundle (its path, pack root and pack version), so no two
    bundles hand a policy the same seed. Not the budget: the same bundle under another budget gets
    the same seeds."""
    return _salt({"env": env_id, "pack": pack, "pack_root": pack_root, "version": pack_version})


def agimaze_set_salt(
    env_id: str, paths: Sequence[str], pack_root: str | None = None, pack_version: str = ""
) -> int:
    """The salt of a labyrinth-set game: the set (its paths, pack root and pack version), as an
    AGI Maze game's bundle. Not the budget: the same set under another budget gets the same
    seeds."""
    return _salt(
        {"env": env_id, "paths": list(paths), "pack_root": pack_root, "version": pack_version}
    )


def agent_seed(game_seed: int, agent_index: int, salt: int = 0) -> int:
    """The seed of agent ``agent_index``'s policy in the game seeded ``game_seed``.

    Drawn from ``numpy.random.SeedSequence((game_seed, agent_index, salt))``, so teammates get
    independent streams and the same game always gets the same ones. ``salt`` tells games of
    different setups apart (:func:`escape_salt`, :func:`agimaze_salt`), so that, say,
    a random policy does not replay the same action sequence on every AGI Maze bundle.
    """
    state = np.random.SeedSequence((game_seed, agent_index, salt)).generate_state(2, np.uint32)
    return int(state[0]) << 31 | int(state[1]) >> 1


def policy_seeds(
    game_seed: int, agents: Sequence[str], salt: int, fixed: int | None = None
) -> dict[str, int]:
    """The seed of each agent's policy in one game (see the module docstring): from the game
    seed and the environment's ``salt``, or, when an arm asks for it, from its ``fixed``
    policy seed alone (the same in every game of the arm)."""
    if fixed is not None:
        return {agent: agent_seed(fixed, index) for index, agent in enumerate(agents)}
    return {agent: agent_seed(game_seed, index, salt) for index, agent in enumerate(agents)}


__all__ = [
    "agent_seed",
    "agimaze_salt",
    "agimaze_set_salt",
    "escape_salt",
    "policy_seeds",
    "stable_key",
]
