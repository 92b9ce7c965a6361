"""Policies the runner tests plug in by import path (``tests.bench.policies:Name``)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any, ClassVar

from maze_envs.escape.types import Action, Observation
from maze_envs.policies.interface import AsyncPolicyBase, Decision, PolicyBase, Usage


class Stay(PolicyBase[Any, Observation, Action]):
    """Stays put; remembers whether it was handed the ground truth."""

    def reset(self, agent: str, seed: int | None, episode: Any) -> None:
        super().reset(agent, seed, episode)
        if episode.ground_truth is not None:
            raise AssertionError("a policy that is not privileged got the ground truth")

    def act(self, observation: Observation) -> Action:
        return Action(move="STAY")


class RaiseOnTurn(PolicyBase[Any, Observation, Action]):
    """Stays, then raises on turn ``turn`` (an observation's turn number)."""

    def __init__(self, turn: int = 3) -> None:
        self.turn = turn

    def act(self, observation: Observation) -> Action:
        if observation.turn >= self.turn:
            raise RuntimeError(f"the policy broke on turn {observation.turn}")
        return Action(move="STAY")


class BadMove(PolicyBase[Any, Observation, Action]):
    """Returns something that is not an action."""

    def act(self, observation: Observation) -> Any:
        return {"move": 17}


class StopAfter(PolicyBase[Any, Observation, Action]):
    """Asks the runner to stop the game after ``turns`` turns (as a cost cap would)."""

    def __init__(self, turns: int = 2) -> None:
        self.turns = turns

    def act(self, observation: Observation) -> Decision[Action]:
        stop = "cost cap reached" if observation.turn + 1 >= self.turns else None
        return Decision(Action(move="STAY"), stop=stop)


class Recorded(PolicyBase[Any, Observation, Action]):
    """Every decision carries a record, usage (priced) and a quirk; reports harness settings."""

    def harness(self) -> dict[str, Any]:
        return {"prompt_version": "v-test", "temperature": 0.3}

    def act(self, observation: Observation) -> Decision[Action]:
        usage = Usage(
            input_tokens=100, output_tokens=7, requests=1, cost_usd=0.001, cost_status="priced"
        )
        record = {"turn": observation.turn, "quirks": ["code_fence"], "usage": usage.to_json()}
        move = next((d for d, kind in observation.edges.items() if kind == "open"), "STAY")
        return Decision(Action(move=move), record=record, usage=usage)


class SlowAsync(AsyncPolicyBase[Any, Observation, Action]):
    """An I/O-bound policy: each decision awaits ``delay`` seconds; counts calls in flight."""

    in_flight: ClassVar[int] = 0
    most_in_flight: ClassVar[int] = 0

    def __init__(self, delay: float = 0.02) -> None:
        self.delay = delay

    async def aact(self, observation: Observation) -> Action:
        cls = type(self)
        cls.in_flight += 1
        cls.most_in_flight = max(cls.most_in_flight, cls.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            cls.in_flight -= 1
        return Action(move="STAY")


class KillOnce(PolicyBase[Any, Observation, Action]):
    """Kills its own process (SIGKILL) mid-game the first time any game reaches ``turn``.

    ``marker`` is a file created just before the kill, so the retried game plays on.
    """

    def __init__(self, marker: str, turn: int = 3) -> None:
        self.marker = Path(marker)
        self.turn = turn

    def act(self, observation: Observation) -> Action:
        if observation.turn == self.turn and not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        move = next((d for d, kind in observation.edges.items() if kind == "open"), "STAY")
        return Action(move=move)


class KillAlways(PolicyBase[Any, Observation, Action]):
    """Kills its own process (SIGKILL) on turn ``turn`` of every game."""

    def __init__(self, turn: int = 1) -> None:
        self.turn = turn

    def act(self, observation: Observation) -> Action:
        if observation.turn == self.turn:
            os.kill(os.getpid(), signal.SIGKILL)
        return Action(move="STAY")


class KillLater(KillOnce):
    """Like :class:`KillOnce`, but only in the ``game``-th game its process plays (counted per
    process), so the kill falls inside a batch that has already finished some games."""

    played = 0

    def __init__(self, marker: str, turn: int = 3, game: int = 12) -> None:
        super().__init__(marker, turn)
        self.game = game

    def reset(self, agent: str, seed: int | None, episode: Any) -> None:
        super().reset(agent, seed, episode)
        if agent == "A":
            KillLater.played += 1

    def act(self, observation: Observation) -> Action:
        if KillLater.played < self.game:
            return super().act(observation.model_copy(update={"turn": -1}))
        return super().act(observation)


class BlockAfter(PolicyBase[Any, Observation, Action]):
    """Plays STAY; the first ``games`` games of the whole run (all processes) play normally, the
    others hang while ``folder/block`` exists (a game still running when the run is stopped).

    Each game claims a run-wide index by creating ``folder/slot-<i>`` exclusively (so exactly
    ``games`` games end however the workers interleave); each process writes ``folder/pid-<pid>``
    (whose processes played, for the tests that check none survives).
    """

    index: ClassVar[int] = 0

    def __init__(self, folder: str, games: int = 2) -> None:
        self.folder = Path(folder)
        self.games = games

    def reset(self, agent: str, seed: int | None, episode: Any) -> None:
        super().reset(agent, seed, episode)
        (self.folder / f"pid-{os.getpid()}").touch()
        if agent != "A":
            return
        slot = 0
        while True:
            try:
                (self.folder / f"slot-{slot}").open("x").close()
                break
            except FileExistsError:
                slot += 1
        BlockAfter.index = slot

    def act(self, observation: Observation) -> Action:
        if BlockAfter.index >= self.games:
            while (self.folder / "block").exists():
                time.sleep(0.01)  # a hung game: the test stops the run meanwhile
        return Action(move="STAY")


class Metered(PolicyBase[Any, Observation, Action]):
    """Plays the first open direction; every decision reports ``tokens`` input tokens and
    ``cost`` dollars. Takes the per-run cap options LLM policies take and, like them, keeps a
    budget of its own *per process* (stopping the game when it is spent): only the runner's
    shared ledger makes the cap hold across workers."""

    spent: ClassVar[dict[str, int]] = {}

    def __init__(
        self,
        tokens: int = 100,
        cost: float = 0.001,
        max_tokens_per_run: int | None = None,
        max_cost_per_run: float | None = None,
        run: str = "default",
    ) -> None:
        self.tokens = tokens
        self.cost = cost
        self.cap = max_tokens_per_run
        self.run = run

    def act(self, observation: Observation) -> Decision[Action]:
        usage = Usage(
            input_tokens=self.tokens, requests=1, cost_usd=self.cost, cost_status="priced"
        )
        used = Metered.spent[self.run] = Metered.spent.get(self.run, 0) + self.tokens
        stop = None
        if self.cap is not None and used >= self.cap:
            stop = f"token cap of this process reached: {used} tokens"
        record = {"usage": usage.to_json()}
        move = next((d for d, kind in observation.edges.items() if kind == "open"), "STAY")
        return Decision(Action(move=move), record=record, usage=usage, stop=stop)


class WaitForFiles(PolicyBase[Any, Observation, Action]):
    """Stays; its first decision waits until ``count`` files ``folder/done-*`` exist (a test
    creates one per other game it has received), or 120 s (a hang: the test then fails)."""

    def __init__(self, folder: str, count: int = 1) -> None:
        self.folder = Path(folder)
        self.count = count
        self.waited = False

    def act(self, observation: Observation) -> Action:
        if not self.waited:
            self.waited = True
            deadline = time.monotonic() + 120
            while len(list(self.folder.glob("done-*"))) < self.count:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.01)
        return Action(move="STAY")
