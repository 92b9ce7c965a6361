"""THE table of environments: each one's id, kind, version, entry points, replayer, budget rule.

Every other module reads environment ids from here (:data:`ENVIRONMENTS`, :func:`entry`,
:func:`env_ids`), so a new version of an environment is one row of this table (plus the code of
that version): registration with Gymnasium and PettingZoo, ``maze-envs verify``'s replayers, the
benchmark runner's setups, the policies' episode information and the journal readers all derive
from it. The table holds import strings only and imports nothing of the package, so every floor
may read it (``tests/test_registration.py`` checks that no other module writes an env id).

Example:
    >>> [e.id for e in ENVIRONMENTS]  # doctest: +NORMALIZE_WHITESPACE
    ['maze_envs/MazeEscape-v0', 'maze_envs/MazeEscape-v1', 'maze_envs/AgiMaze-v0',
     'maze_envs/AgiMazeSet-v0']
    >>> find_entry("maze_envs/MazeEscape-v1").kind, env_ids("escape")
    ('escape', ('maze_envs/MazeEscape-v0', 'maze_envs/MazeEscape-v1'))
    >>> latest("agimaze", labyrinth_set=True).name
    'AgiMazeSet-v0'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

import gymnasium
import pettingzoo

#: The environment kinds: which policies, wording and benchmark setups serve an environment.
EnvKind = Literal["escape", "agimaze"]
#: The kinds, in the order of ``EnvKind`` (written once, there).
ENV_KINDS: Final[tuple[EnvKind, ...]] = get_args(EnvKind)
#: The namespace of every id.
NAMESPACE: Final = "maze_envs"


def load(target: str) -> Any:
    """The object an import string ``"package.module:attribute"`` names (imported now)."""
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"an import string reads 'package.module:attribute', got {target!r}")
    loaded: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        loaded = getattr(loaded, part)
    return loaded


@dataclass(frozen=True)
class EnvEntry:
    """One environment of the table.

    ``entry_point`` is the Gymnasium env class, or a PettingZoo env's ``parallel_env`` (with its
    AEC form in ``aec_entry_point``); ``replayer`` builds the ``journal.Replayer`` that
    ``maze-envs verify`` replays its games with; ``budget`` is the function ``(budget_factor,
    max_steps) -> steps`` an episode is truncated at (None: the config's ``max_turns`` is the
    budget). ``labyrinth_set`` marks the AGI Maze env that plays an ordered set of labyrinths.
    ``setup`` is the benchmark runner's setup class of the environment
    (:class:`maze_envs.bench.specbase.SetupBase`): it supplies the environment's row in the
    runner, its word (``--env``, the experiment file's table, the results' ``env`` column), its
    cases, the adapter that plays them, the summary of their result rows and the report's tables.
    """

    id: str
    kind: EnvKind
    version: int
    entry_point: str
    replayer: str
    setup: str
    aec_entry_point: str | None = None
    budget: str | None = None
    labyrinth_set: bool = False

    @property
    def api(self) -> Literal["gymnasium", "pettingzoo"]:
        """The library the environment is registered with."""
        return "pettingzoo" if self.aec_entry_point is not None else "gymnasium"

    @property
    def name(self) -> str:
        """The id without its namespace (``"MazeEscape-v1"``)."""
        return self.id.partition("/")[2]

    @property
    def module(self) -> str:
        """The module of the entry point (``"maze_envs.maze_escape_v1"``)."""
        return self.entry_point.partition(":")[0]

    def make(self, **kwargs: Any) -> Any:
        """A new environment (PettingZoo: the parallel env) built by the entry point."""
        return load(self.entry_point)(**kwargs)

    def budget_rule(self) -> Callable[[float, int], int]:
        """The budget function (``ValueError`` for an environment whose budget is its config's
        ``max_turns``)."""
        if self.budget is None:
            raise ValueError(f"{self.id} has no budget rule: its budget is the config's max_turns")
        rule: Callable[[float, int], int] = load(self.budget)
        return rule


def _escape_row(env_id: str, version: int) -> EnvEntry:
    """Maze Escape version ``version``: entry module ``maze_envs.maze_escape_v<version>``."""
    module = f"maze_envs.maze_escape_v{version}"
    return EnvEntry(
        id=env_id,
        kind="escape",
        version=version,
        entry_point=f"{module}:parallel_env",
        aec_entry_point=f"{module}:env",
        replayer="maze_envs.escape.replay:EscapeReplayer",
        setup="maze_envs.bench.escape_spec:EscapeSetup",
    )


def _agimaze_row(env_id: str, entry_point: str, setup: str, labyrinth_set: bool) -> EnvEntry:
    """An AGI Maze environment: every one shares the replayer and the step budget."""
    return EnvEntry(
        id=env_id,
        kind="agimaze",
        version=0,
        entry_point=entry_point,
        replayer="maze_envs.agimaze.replay:AgiMazeReplayer",
        setup=setup,
        budget="maze_envs.agimaze.scoring:step_budget",
        labyrinth_set=labyrinth_set,
    )


#: Every environment of the library, oldest version first within a kind.
ENVIRONMENTS: Final[tuple[EnvEntry, ...]] = (
    _escape_row(f"{NAMESPACE}/MazeEscape-v0", 0),
    _escape_row(f"{NAMESPACE}/MazeEscape-v1", 1),
    _agimaze_row(
        f"{NAMESPACE}/AgiMaze-v0",
        "maze_envs.agimaze.env:AgiMazeEnv",
        "maze_envs.bench.agimaze_spec:AgiMazeSetup",
        labyrinth_set=False,
    ),
    _agimaze_row(
        f"{NAMESPACE}/AgiMazeSet-v0",
        "maze_envs.agimaze.set_env:AgiMazeSetEnv",
        "maze_envs.bench.agimaze_spec:AgiMazeSetSetup",
        labyrinth_set=True,
    ),
)


def find_entry(env_id: str) -> EnvEntry:
    """The table entry of ``env_id`` (``ValueError`` naming the known ids otherwise)."""
    for found in ENVIRONMENTS:
        if found.id == env_id:
            return found
    known = ", ".join(e.id for e in ENVIRONMENTS)
    raise ValueError(f"unknown environment id {env_id!r}; known: {known}")


def entries(kind: EnvKind, *, labyrinth_set: bool | None = False) -> tuple[EnvEntry, ...]:
    """The entries of one kind, oldest first; for AGI Maze the single-labyrinth env
    (``labyrinth_set=False``), the set (``True``) or both (``None``, in table order)."""
    if kind not in ENV_KINDS:
        raise ValueError(f"unknown environment kind {kind!r}; choose one of {list(ENV_KINDS)}")
    found = [e for e in ENVIRONMENTS if e.kind == kind and labyrinth_set in (None, e.labyrinth_set)]
    return tuple(found if labyrinth_set is None else sorted(found, key=lambda e: e.version))


def env_ids(kind: EnvKind, *, labyrinth_set: bool | None = False) -> tuple[str, ...]:
    """The ids of one kind (see :func:`entries`)."""
    return tuple(e.id for e in entries(kind, labyrinth_set=labyrinth_set))


def latest(kind: EnvKind, *, labyrinth_set: bool = False) -> EnvEntry:
    """The newest version of one kind."""
    return entries(kind, labyrinth_set=labyrinth_set)[-1]


def versions(kind: EnvKind, *, labyrinth_set: bool = False) -> dict[int, str]:
    """Version -> id of one kind (``{0: "maze_envs/MazeEscape-v0", 1: ...}``)."""
    return {e.version: e.id for e in entries(kind, labyrinth_set=labyrinth_set)}


def register_environments() -> None:
    """Register every environment of the table; calling it again is harmless."""
    for env in ENVIRONMENTS:
        if env.aec_entry_point is None:
            if env.id not in gymnasium.registry:
                gymnasium.register(id=env.id, entry_point=env.entry_point)
            continue
        if env.id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", env.id, entry_point=env.aec_entry_point)
        if env.id not in pettingzoo.parallel_registry:
            pettingzoo.register("parallel", env.id, entry_point=env.entry_point)


__all__ = [
    "ENVIRONMENTS",
    "ENV_KINDS",
    "NAMESPACE",
    "EnvEntry",
    "EnvKind",
    "entries",
    "env_ids",
    "find_entry",
    "latest",
    "load",
    "register_environments",
    "versions",
]
