"""Numeric observations of Maze Escape for reinforcement learning (SB3 ``MultiInputPolicy`` or
``MlpPolicy``).

:class:`EscapeNumericObservation` turns each agent's observation (text fields, nested dicts)
into a flat ``Dict`` of ``Box`` / ``MultiBinary`` / ``Discrete`` / ``MultiDiscrete`` spaces, the
same space for every agent (it needs ``maze_escape_v1``), or (``flatten=True``) one
``Box(float32)`` for ``MlpPolicy``. The keys, their order and their values are defined once, in
:mod:`maze_envs.escape.numeric` (the table of keys is there), and encoded by
:class:`~maze_envs.escape.numeric_encoder.NumericEncoder`, which the batched engine
(``maze_escape_v1.vector_env``) matches exactly: its rows are this wrapper's flattened
observations. Free text is dropped (``text="drop"``, the default) or hashed (``text="hash"``).
Every observation is a member of the declared space and new (shared with no other observation).
``feature_names()`` names every entry of the flattened vector. The wrapper reads the integers
the environment exposes (:meth:`~maze_envs.escape.env.MazeEscapeEnv.observation_arrays`), not
the Dict observation.

Example:
    >>> from maze_envs import maze_escape_v1
    >>> from wrappers.escape_numeric import EscapeNumericObservation
    >>> base = maze_escape_v1.parallel_env(preset="full", width=7, height=7)
    >>> env = EscapeNumericObservation(base)
    >>> observations, infos = env.reset(seed=2)
    >>> observations["A"]["edges"].reshape(4, 3).argmax(axis=1).tolist()  # back to edge codes
    [2, 0, 0, 0]
    >>> env.observation_space("A").contains(observations["A"])
    True
    >>> flat = EscapeNumericObservation(maze_escape_v1.parallel_env(preset="sparse"), flatten=True)
    >>> flat.observation_space("B").shape
    (64,)
"""

from __future__ import annotations

from typing import Any

from gymnasium import spaces
from pettingzoo.utils.env import ParallelEnv

from maze_envs.escape.numeric import EdgeMode, TextMode, hash_text
from maze_envs.escape.numeric_encoder import NumericEncoder
from wrappers.escape_base import EscapeWrapper, require_v1

__all__ = ["EscapeNumericObservation", "hash_text"]


class EscapeNumericObservation(EscapeWrapper):
    """Maze Escape observations as numeric arrays (see the module docstring for the keys)."""

    def __init__(
        self,
        env: ParallelEnv[str, Any, Any],
        *,
        text: TextMode = "drop",
        hash_buckets: int = 32,
        flatten: bool = False,
        edges: EdgeMode = "onehot",
    ) -> None:
        super().__init__(env)
        require_v1(env, "EscapeNumericObservation")
        below = env.observation_space(env.possible_agents[0])
        if not isinstance(below, spaces.Dict) or "action_mask" in below.spaces:
            raise ValueError(
                "EscapeNumericObservation needs the env's own observations below it: apply it "
                "directly to the env (or over MoveOnlyActions), and EscapeActionMasks outside it"
            )
        self.encoder = NumericEncoder(
            self.config, text=text, hash_buckets=hash_buckets, flatten=flatten, edges=edges
        )
        layout = self.encoder.layout
        self.text, self.hash_buckets, self.flatten, self.edge_mode = (
            text,
            hash_buckets,
            flatten,
            edges,
        )
        self.n = self.config.num_agents
        self.slots = self.config.agents
        self.numeric_fields = layout.fields
        self.fields: dict[str, spaces.Space[Any]] = {f.key: f.space for f in layout.fields}
        self._plan = self.encoder.plan
        self._spaces = {a: self.encoder.space for a in env.possible_agents}
        self._agent_rows = {a: i for i, a in enumerate(env.possible_agents)}

    # --- the transform --------------------------------------------------------------------------
    def observation(self, agent: str, obs: Any, raw: Any) -> Any:
        arrays = self._arrays_of(raw, agent)
        if arrays is not None:
            return self._plan.encode_arrays(arrays, [self._agent_rows[agent]])[0]
        return self.encode([raw])[0]

    def observations(self, observations: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
        names = list(observations)
        arrays = self._arrays_of(raw[names[0]], names[0]) if names else None
        if arrays is not None and names == self.base_env.possible_agents:
            encoded = self._plan.encode_arrays(arrays)
        else:
            encoded = self.encode([raw[a] for a in names])
        return dict(zip(names, encoded, strict=True))

    def _arrays_of(self, raw: Any, agent: str) -> Any:
        """The env's observation arrays when ``raw`` is its latest observation of ``agent``."""
        try:
            arrays = self.base_env.observation_arrays()
        except (RuntimeError, ValueError):
            return None
        return arrays if arrays.observations[self._agent_rows[agent]] is raw else None

    def encode(self, raws: list[Any]) -> list[Any]:
        """The numeric observations of a list of the env's observation dicts (one pass)."""
        return self._plan.encode(raws)

    def feature_names(self) -> list[str]:
        """A name per entry of the flattened vector (``edges[N=open]``, ``time[0]``, ...):
        binary and one-hot features first, then the continuous ones.

        Example:
            >>> from maze_envs import maze_escape_v1
            >>> env = EscapeNumericObservation(maze_escape_v1.parallel_env(width=7, height=7))
            >>> env.feature_names()[:4]
            ['edges[N=open]', 'edges[N=interior_wall]', 'edges[N=outer_brick]', 'edges[E=open]']
            >>> len(env.feature_names()) == env._plan.width
            True
        """
        return list(self.encoder.layout.names)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._spaces[agent]
