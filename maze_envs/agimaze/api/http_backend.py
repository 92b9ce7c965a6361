"""The env's HTTP backend: AGI Maze played on a server speaking the public API.

:class:`HttpBackend` is given to the env as ``backend=`` with its own options (base URL,
deadline, retries, agent name, action list), like pydantic-ai's ``provider=``::

    env = gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S0-keys/STAGE-01",
                   backend=HttpBackend("http://127.0.0.1:8000", timeout=10.0, retries=2))

It talks through :class:`~maze_envs.agimaze.api.client.AgiMazeClient` (standard library only).
"""

from __future__ import annotations

from collections.abc import Sequence
from http import HTTPStatus
from pathlib import Path
from typing import Any

import gymnasium as gym

from maze_envs.agimaze.api.client import (
    AgiMazeAPIError,
    AgiMazeClient,
    AgiMazeConnectionError,
    AgiMazeProtocolError,
    AgiMazeTimeoutError,
    str_list,
)
from maze_envs.agimaze.backends import (
    EpisodeStart,
    Source,
    StepOutcome,
    ordered_actions,
    rejected_action,
)
from maze_envs.agimaze.spaces import MAP_MAX_LENGTH, clean_text
from maze_envs.agimaze.types import BOMB_ACTIONS, DIRECTIONS, LOOK_ACTIONS


def _may_have_been_applied(exc: AgiMazeAPIError) -> bool:
    """Whether a failed step could still have been applied by the server.

    A definite error answer (4xx) means it was not; no answer, a broken answer or a server
    error (5xx) leaves it open.
    """
    if isinstance(exc, (AgiMazeTimeoutError, AgiMazeConnectionError, AgiMazeProtocolError)):
        return True
    return exc.status is None or exc.status >= HTTPStatus.INTERNAL_SERVER_ERROR


def expected_actions(path: str) -> list[str]:
    """The action names a pack path's labyrinths offer, as the public pack layout implies.

    The four moves everywhere; ``look_*`` under ``EXTENDED/flashlight`` and ``bomb_*`` under
    ``EXTENDED/grenades`` (both for ``EXTENDED`` itself, which spans every family).

    >>> expected_actions("TRAINING/S0-keys/STAGE-01")
    ['up', 'down', 'left', 'right']
    >>> expected_actions("EXTENDED/grenades/STAGE-01-4x4")[-1]
    'bomb_right'
    """
    norm = path.strip("/")
    names: list[str] = list(DIRECTIONS)
    for family, extra in (("flashlight", LOOK_ACTIONS), ("grenades", BOMB_ACTIONS)):
        below = f"EXTENDED/{family}"
        if norm == "EXTENDED" or norm == below or norm.startswith(below + "/"):
            names += extra
    return names


class HttpBackend:
    """The :class:`~maze_envs.agimaze.env.AgiMazeEnv` backend that plays over the HTTP API.

    Args:
        base_url: the server, ``http://host:port`` or ``https://host`` (the real service or
            ``maze-envs agimaze serve``).
        agent: the agent name sent with each start.
        timeout: the deadline of each HTTP call, in seconds (retries and a dripped reply
            included).
        retries: extra attempts of a call that may be retried (see
            :mod:`~maze_envs.agimaze.api.client`).
        backoff: seconds before the first retry, doubled for each further one.
        actions: the env's action names; default: those the pack path implies
            (:func:`expected_actions`).
        client: an :class:`~maze_envs.agimaze.api.client.AgiMazeClient` to use instead of one
            made from these options (then shared by every env the backend opens).

    The env calls :meth:`open` with its pack path (a labyrinth object or a ``pack_root`` cannot
    be sent to a server: ValueError) and plays through the opened copy, which has its own
    connection, so one ``HttpBackend`` can serve many envs. Nothing is sent before the first
    reset: each episode is one session, started by :meth:`start` (``POST /api/start`` with the
    pack path, the seed drawn from the env's reset seed, ``client="api"`` and the agent name),
    then one ``POST /api/step`` per action with ``seq`` 1, 2, 3, ... A ``bad_action`` answer
    becomes an observation (see the env's Action Space). Texts are passed through
    :func:`~maze_envs.agimaze.spaces.clean_text`.

    ``actions`` of an opened backend is the action list the env exposes (its action space is
    fixed before any session exists): ``actions=`` or :func:`expected_actions` of the path. The
    start reply's list is authoritative for what the server accepts; a name it offers that the
    env lacks is warned about once.

    A step that fails after it may have been applied (no answer, a broken answer, a 5xx) is
    remembered. The next :meth:`step` first resends it with the *same* ``seq`` (the server
    replays its reply if it was applied, or applies it now), so every step is applied exactly
    once and the env's step count always equals the server's: when the next action is the same
    one, that resend *is* the step; when it is another action, the resolved step is counted
    (``StepOutcome.steps_used``) and the new action is sent with the next ``seq`` (unless the
    resolved step won the game). Reward shaping does not see the events of such a lost step.
    """

    def __init__(
        self,
        base_url: str,
        *,
        agent: str = "maze-envs",
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.25,
        actions: Sequence[str] | None = None,
        client: AgiMazeClient | None = None,
    ) -> None:
        if actions is not None:
            if isinstance(actions, str) or not all(isinstance(a, str) and a for a in actions):
                raise ValueError(f"actions= is a list of action names, got {actions!r}")
            if not actions:
                raise ValueError("actions= needs at least one action name")
        if not isinstance(agent, str) or not agent:
            raise ValueError(f"agent= is a non-empty agent name, got {agent!r}")
        # validates base_url, timeout, retries and backoff now, not at the first reset
        self.client = client or AgiMazeClient(
            base_url, timeout=timeout, retries=retries, backoff=backoff
        )
        self.base_url = base_url
        self.agent = agent
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._chosen = None if actions is None else ordered_actions(actions)
        self._shared_client = client
        #: the pack path of an opened backend (None before)
        self.path: str | None = None
        #: action names of an opened backend (``actions=`` when given, before opening too)
        self.actions: list[str] = list(self._chosen or [])
        self.open_map = False
        self.session_id: str | None = None
        self._seq = 0
        #: (seq, action) of a step that failed after it may have been applied
        self._pending: tuple[int, str] | None = None
        #: steps the server applied that no outcome has reported yet
        self._unreported = 0
        self._warned: set[str] = set()
        self._map = ""
        self._inventory: dict[str, Any] = {}

    def __repr__(self) -> str:
        where = f", path={self.path!r}" if self.path is not None else ""
        return f"HttpBackend({self.base_url!r}, agent={self.agent!r}{where})"

    def open(self, source: Source, *, pack_root: str | Path | None = None) -> HttpBackend:
        """A new backend with these options bound to the pack path ``source``."""
        if not isinstance(source, str):
            raise ValueError(
                "an HTTP backend plays pack paths (path=...): a labyrinth object cannot be sent "
                "to a server; play it on the local backend"
            )
        if pack_root is not None:
            raise ValueError(
                "pack_root= is for the local backend; a server chooses its own pack root "
                "(maze-envs agimaze serve --pack-root)"
            )
        opened = HttpBackend(
            self.base_url,
            agent=self.agent,
            timeout=self.timeout,
            retries=self.retries,
            backoff=self.backoff,
            actions=self._chosen,
            client=self._shared_client,
        )
        opened.path = source
        opened.actions = list(self._chosen or expected_actions(source))
        opened.open_map = source.startswith("TUTORIAL")
        return opened

    def start(self, seed: int) -> EpisodeStart:
        if self.path is None:
            raise RuntimeError("open(path) the backend first (AgiMazeEnv does it)")
        body = self.client.start(self.path, seed, self.agent)
        self.session_id = str(body["id"])
        self._seq = 0
        self._pending = None
        self._unreported = 0
        offered = str_list(body.get("actions"))
        unknown = [a for a in offered if a not in self.actions and a not in self._warned]
        if unknown:
            self._warned.update(unknown)
            gym.logger.warn(
                f"the server offers actions {unknown} for {self.path!r} that this env's action "
                f"space ({self.actions}) lacks; pass actions=[...] to HttpBackend to use them"
            )
        meta = body.get("task_meta")
        max_steps = meta.get("max_steps") if isinstance(meta, dict) else None
        info = body.get("info")
        name = info.get("path") if isinstance(info, dict) else None
        formal = self._formal(body)
        return EpisodeStart(
            name=name if isinstance(name, str) else self.path,
            actions=offered,
            max_steps=max_steps if type(max_steps) is int and max_steps > 0 else None,
            open_map=self.open_map,
            text=clean_text(body.get("text")),
            formal=formal,
            map=self._remember_map(body),
        )

    def step(self, action: str) -> StepOutcome:
        if self.session_id is None:
            raise RuntimeError("HttpBackend.step before start")
        if self._pending is not None:
            seq, earlier = self._pending
            resolved = self._outcome(earlier, self._send(seq, earlier))
            self._pending = None
            if earlier == action or resolved.won:  # a retry of that step, or the game is over
                return self._report(resolved)
            self._unreported += resolved.steps_used
        self._seq += 1
        return self._report(self._outcome(action, self._send(self._seq, action)))

    def render(self) -> str:
        return self._map

    def close(self) -> None:
        self.client.close()

    # -- internals ------------------------------------------------------------------------------

    def _send(self, seq: int, action: str) -> dict[str, Any]:
        assert self.session_id is not None
        try:
            return self.client.step(self.session_id, action, seq)
        except AgiMazeAPIError as exc:
            if _may_have_been_applied(exc):
                self._pending = (seq, action)
            raise

    def _report(self, outcome: StepOutcome) -> StepOutcome:
        outcome.steps_used += self._unreported
        self._unreported = 0
        return outcome

    def _outcome(self, action: str, body: dict[str, Any]) -> StepOutcome:
        if body.get("error") == "bad_action":
            return rejected_action(action, str_list(body.get("allowed")), dict(self._inventory))
        return StepOutcome(
            clean_text(body.get("text")),
            self._formal(body),
            body.get("done") is True,
            self._remember_map(body),
        )

    def _remember_map(self, body: dict[str, Any]) -> str | None:
        self._map = clean_text(body.get("map"), MAP_MAX_LENGTH)
        return self._map if self.open_map else None

    def _formal(self, body: dict[str, Any]) -> dict[str, Any]:
        """The reply's formal dict with every field of the documented type (defaults if not)."""
        raw = body.get("formal")
        formal: dict[str, Any] = raw if isinstance(raw, dict) else {}
        inventory = body.get("inventory", formal.get("inventory"))
        self._inventory = inventory if isinstance(inventory, dict) else {}
        status, observe = formal.get("status"), formal.get("observe")
        details = formal.get("details")
        return {
            "status": status if isinstance(status, str) else "blocked",
            "observe": observe if isinstance(observe, str) else "other",
            "events": str_list(formal.get("events", body.get("events"))),
            "inventory": dict(self._inventory),
            "details": details if isinstance(details, dict) else {},
        }
