"""A scripted test backend of the harness tests, and small game loops for both environments.

The backend speaks the :class:`~llm_policies.backends.base.ModelBackend` protocol and records
every request it receives, so tests can assert on exactly what would be sent to a model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from llm_policies.backends.base import ModelReply, ModelRequest, ModelUnavailable
from llm_policies.settings import OutputMode
from maze_envs.policies.interface import Usage


@dataclass(frozen=True)
class Raw:
    """A reply exactly as a provider might send it: text and/or tool-call arguments."""

    text: str | None = None
    tool_arguments: str | None = None


Script = Callable[[ModelRequest], "Raw | str | dict[str, Any] | Exception"]


class FakeBackend:
    """Replies from a list (or a function of the request); a str goes where the mode expects it.

    In tool mode a str becomes the tool-call arguments, otherwise the text; a dict is sent as
    JSON the same way; a :class:`Raw` is sent as is; an exception is raised. ``tokens`` is the
    usage of each reply (input ``None``: the prompt's UTF-8 bytes / 4, as real tokenizers count).
    """

    def __init__(
        self,
        replies: Iterable[Raw | str | dict[str, Any] | Exception] | Script,
        *,
        spec: str = "scripted:fake",
        local: bool = True,
        tokens: tuple[int | None, int] = (100, 10),
    ) -> None:
        self.spec = spec
        self.local = local
        self.output_modes: tuple[OutputMode, ...] = ("tool", "native", "prompted")
        self.script: Script | None = replies if callable(replies) else None
        self.queue = [] if callable(replies) else list(replies)
        self.requests: list[ModelRequest] = []
        self.tokens = tokens
        self.closed = False
        self.in_flight = 0
        self.max_in_flight = 0

    async def complete(self, request: ModelRequest) -> ModelReply:
        import asyncio

        self.requests.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0)  # let the other agents of the turn start their calls
        finally:
            self.in_flight -= 1
        if self.script is not None:
            item = self.script(request)
        elif self.queue:
            item = self.queue.pop(0)
        else:
            raise AssertionError("the fake backend ran out of scripted replies")
        if isinstance(item, Exception):
            raise item
        if isinstance(item, dict):
            item = json.dumps(item)
        if isinstance(item, str):
            item = Raw(tool_arguments=item) if request.output_mode == "tool" else Raw(text=item)
        size = len(request.system.encode()) + sum(len(m.content.encode()) for m in request.messages)
        usage = Usage(
            # None: as many as a tokenizer would count (about a token per 4 bytes of prompt)
            input_tokens=size // 4 if self.tokens[0] is None else self.tokens[0],
            output_tokens=self.tokens[1],
            requests=1,
            latency_s=0.001,
            cost_usd=0.0 if self.local else None,
            cost_status="local" if self.local else "none",
        )
        return ModelReply(
            text=item.text,
            tool_arguments=item.tool_arguments,
            usage=usage,
            model=self.spec.partition(":")[2],
            latency_s=0.001,
            raw={"fake": True},
        )

    async def aclose(self) -> None:
        self.closed = True


def outage() -> ModelUnavailable:
    """What a backend raises after its retry budget."""
    return ModelUnavailable("HTTP 503 five times", kind="server", retryable=True, status=503)


def last_user(request: ModelRequest) -> str:
    return request.messages[-1].content


def moves(sequence: Sequence[str]) -> list[dict[str, Any]]:
    return [{"move": m} for m in sequence]


# --- a deterministic "model" that plays from the prompt text alone ---------------------------

_TURN_ORDER = {
    "N": ("E", "N", "W", "S"),
    "E": ("S", "E", "N", "W"),
    "S": ("W", "S", "E", "N"),
    "W": ("N", "W", "S", "E"),
}


def _notebook(text: str) -> str:
    start = text.index("<<<notebook\n") + len("<<<notebook\n")
    body = text[start : text.index("\nnotebook>>>", start - 1)]
    return "" if body == "(empty)" else body + "\n"


def wall_follower_reply(request: ModelRequest) -> dict[str, Any]:
    """A right-hand wall follower that reads its cell and its heading from the prompt.

    Its memory is the notebook: it appends ``heading X`` each turn (rolling log), or splices the
    same line onto the end (splice notebooks), so the game exercises the notebook path.
    """
    import re

    prompt = last_user(request)
    cell = re.search(r"^Cell: N (\w+), E (\w+), S (\w+), W (\w+)\.$", prompt, re.M)
    assert cell is not None, "the prompt shows the cell's edges"
    edges = dict(zip("NESW", cell.groups(), strict=True))
    notebook = _notebook(prompt)
    headings = re.findall(r"heading ([NESW])", notebook)
    heading = headings[-1] if headings else "N"
    move = next(d for d in _TURN_ORDER[heading] if edges[d] == "open")
    turn = re.search(r"^Turn: (\d+) ", prompt, re.M)
    # a note of the length models write (about 70 bytes), ending with the heading it keeps
    line = (
        f"t{turn.group(1) if turn else '?'}: N {edges['N']}, E {edges['E']}, "
        f"S {edges['S']}, W {edges['W']}; heading {move}"
    )
    props = request.schema["properties"]
    reply: dict[str, Any] = {"move": move}
    if props["notebook"]["anyOf"][0].get("type") == "object":
        reply["notebook"] = {"start": len(notebook), "end": len(notebook), "text": line + "\n"}
    else:
        reply["notebook"] = line
    if "radio" in props:
        reply["radio"] = None
    if "check" in props:
        reply["check"] = (
            f"N {edges['N']}, E {edges['E']}, S {edges['S']}, W {edges['W']}; going {move}"
        )
    return {k: reply[k] for k in props if k in reply}


# --- game loops through the policy interface ------------------------------------------------


async def play_escape(env: Any, policies: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """One Maze Escape game; the agents of a turn are awaited together. Returns the decisions."""
    import asyncio

    from maze_envs.escape.convert import observation_to_model
    from maze_envs.policies.episodes import escape_episode

    observations, _ = env.reset(seed=seed)
    for agent, policy in policies.items():
        policy.reset(agent, seed, escape_episode(env, agent))
    turns: list[dict[str, Any]] = []
    while env.agents:
        models = {a: observation_to_model(observations[a], env.config, a) for a in env.agents}
        agents = list(models)
        results = await asyncio.gather(*(policies[a].aact(models[a]) for a in agents))
        decisions = dict(zip(agents, results, strict=True))
        turns.append(decisions)
        if any(d.stop for d in decisions.values()):
            break
        observations, *_ = env.step({a: d.action for a, d in decisions.items()})
    return turns


async def play_agimaze(
    env: Any, policy: Any, seed: int, *, max_decisions: int = 2000
) -> tuple[list[Any], dict[str, Any]]:
    """One AGI Maze episode (single labyrinth or set) through the policy interface.

    In a labyrinth set the policy is reset after each ``start`` with the new labyrinth's
    episode, as :func:`maze_envs.policies.episodes.agimaze_episode` describes.
    """
    from maze_envs.agimaze.observation import AgiMazeObservation
    from maze_envs.policies.episodes import agimaze_episode

    obs, info = env.reset(seed=seed)
    policy.reset("player", seed, agimaze_episode(env, info))
    observation = AgiMazeObservation.from_env(obs, info, env=env)
    decisions = []
    for _ in range(max_decisions):
        decision = await policy.aact(observation)
        decisions.append(decision)
        if decision.stop:
            break
        was_waiting = observation.waiting
        obs, _, terminated, truncated, info = env.unwrapped.step_name(decision.action)
        if was_waiting and not obs.get("waiting", 0):
            policy.reset("player", seed, agimaze_episode(env, info))
        observation = AgiMazeObservation.from_env(obs, info, last_action=decision.action, env=env)
        if terminated or truncated:
            break
    return decisions, info


async def record_escape_game(
    path: Any, policies: dict[str, Any], seed: int, **env_options: Any
) -> Any:
    """Play one Maze Escape game and journal it with the policies' decision records."""
    import asyncio

    from maze_envs import maze_escape_v0
    from maze_envs.escape.convert import observation_to_model
    from maze_envs.journal import Journal
    from maze_envs.journal.recorder import Recorder
    from maze_envs.policies.episodes import escape_episode

    env = maze_escape_v0.parallel_env(**env_options)
    journal = Journal(path)
    recorder = Recorder(
        journal, env_id="maze_envs/MazeEscape-v0", config=env.config.model_dump(mode="json")
    )
    recorder.set_game_meta({"harness": {a: p.harness() for a, p in policies.items()}})
    observations, _ = env.reset(seed=seed)
    recorder.start(seed, observations, env.state_digest())
    for agent, policy in policies.items():
        policy.reset(agent, seed, escape_episode(env, agent))
    while env.agents:
        models = {a: observation_to_model(observations[a], env.config, a) for a in env.agents}
        results = await asyncio.gather(*(policies[a].aact(m) for a, m in models.items()))
        decisions = dict(zip(models, results, strict=True))
        for agent, decision in decisions.items():
            recorder.note(agent, decision.record)
        actions = {a: d.action for a, d in decisions.items()}
        observations, *_ = env.step(actions)
        stored = {a: action.to_space(env.config) for a, action in actions.items()}
        recorder.turn(env.outcome()["turns"], observations, stored, {}, env.state_digest())
    recorder.finish(env.outcome())
    journal.close()
    return env
