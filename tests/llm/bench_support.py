"""Helpers of the runner integration tests: scripted models that play like the oracle,
runs, prices from genai-prices, decision records read back from the journal."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

from maze_envs.bench.runner import RunOptions, RunResult, run_experiment
from maze_envs.bench.spec import EscapeCase, Experiment
from maze_envs.journal import Journal
from tests.llm.servers import LoopbackServer, RecordedRequest, Reply, serve

ESCAPE_SIZE = 5
ESCAPE_TURNS = 30
TUTORIAL = "TUTORIAL/STAGE-01/0002.json"
IN_TOKENS, OUT_TOKENS = 120, 18  # the loopback server's default usage per reply


@pytest.fixture(scope="module")
def module_server() -> Iterator[LoopbackServer]:
    with serve() as running:
        yield running


@pytest.fixture
def server(module_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> LoopbackServer:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    module_server.reset()
    return module_server


# --- scripted models that play well: the oracle's moves, read off each request ---------------


def escape_experiment(policy: str, *, turns: int = ESCAPE_TURNS, seeds: str = "0") -> Experiment:
    return Experiment.model_validate(
        {
            "name": "llm-bench",
            "seeds": seeds,
            "escape": [
                {
                    "preset": "navigator",
                    "sizes": [ESCAPE_SIZE],
                    "max_turns": turns,
                    "policies": [policy],
                }
            ],
        }
    )


def escape_plans(experiment: Experiment) -> dict[tuple[int, str], list[str]]:
    """(seed, agent) -> the oracle's moves of that game (a shortest path to the exit)."""
    from maze_envs import maze_escape_v1
    from maze_envs.policies.episodes import escape_episode
    from maze_envs.policies.escape.oracle import shortest_moves

    plans: dict[tuple[int, str], list[str]] = {}
    for task in experiment.tasks():
        assert isinstance(task.case, EscapeCase)
        env = maze_escape_v1.parallel_env(config=task.case.game_config)
        env.reset(seed=task.seed)
        for index, agent in enumerate(env.agents):
            truth = escape_episode(env, agent, privileged=True).ground_truth
            assert truth is not None
            plans[(task.seed, agent)] = list(shortest_moves(truth, truth.starts[index]))
        env.close()
    return plans


def _schema_fields(body: dict[str, Any]) -> list[str]:
    tools = body.get("tools") or []
    if tools:
        tool = tools[0]
        schema = tool.get("input_schema") or tool.get("function", {}).get("parameters") or {}
    else:
        schema = body.get("format") if isinstance(body.get("format"), dict) else {}
    return list((schema or {}).get("properties") or {})


def request_text(request: RecordedRequest) -> str:
    return request.raw.decode("utf-8")


def escape_model(
    plans: dict[tuple[int, str], list[str]],
    seed_of: Callable[[str], int] = lambda text: 0,
    quirks: dict[tuple[str, int], str] | None = None,
) -> Callable[[RecordedRequest], Reply]:
    """A responder playing the oracle's moves; ``quirks[(agent, turn)]`` bends one reply."""

    def respond(request: RecordedRequest) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        text = request_text(request)
        agent = re.search(r"You are agent (\w)", text)
        turn = re.search(r"Turn: (\d+) \(", text)
        assert agent and turn, "not a Maze Escape request"
        name, t = agent.group(1), int(turn.group(1))
        plan = plans[(seed_of(text), name)]
        move = plan[t] if t < len(plan) else "STAY"
        fields = _schema_fields(body) or ["move", "notebook", "radio"]
        values: dict[str, Any] = {f: None for f in fields}
        values["move"] = move
        quirk = (quirks or {}).get((name, t))
        if quirk == "move_case":
            values["move"] = move.lower()
        payload = json.dumps(values)
        if quirk == "json_as_text" or not body.get("tools"):
            return Reply(text=payload)
        return Reply(tool_arguments=payload)

    return respond


def with_probes(respond: Callable[[RecordedRequest], Reply]) -> Callable[[RecordedRequest], Reply]:
    """``respond``, answering the harness's capability probes ("Say hello.") with ``{"ok": true}``
    as a model that honours the mode would."""

    def answer(request: RecordedRequest) -> Reply:
        messages = request.body.get("messages") if isinstance(request.body, dict) else None
        if messages and messages[-1].get("content") == "Say hello.":
            return Reply(text='{"ok": true}', input_tokens=40, output_tokens=5)
        return respond(request)

    return answer


def stay_model(request: RecordedRequest) -> Reply:
    """A responder whose agents always STAY (a game that never ends by itself)."""
    body = request.body if isinstance(request.body, dict) else {}
    values: dict[str, Any] = {f: None for f in _schema_fields(body) or ["notebook", "radio"]}
    values["move"] = "STAY"
    payload = json.dumps(values)
    return Reply(tool_arguments=payload) if body.get("tools") else Reply(text=payload)


def agimaze_plan(pack: str) -> list[str]:
    """The oracle's actions on ``pack`` (the model the AGI Maze tests script)."""
    from maze_envs.agimaze.env import AgiMazeEnv
    from maze_envs.agimaze.observation import AgiMazeObservation
    from maze_envs.policies.episodes import agimaze_episode
    from maze_envs.policies.registry import make_policy

    env = AgiMazeEnv(path=pack)
    obs, info = env.reset(seed=0)
    oracle = make_policy("oracle", "agimaze")
    oracle.reset("player", 0, agimaze_episode(env, info, privileged=True))
    actions: list[str] = []
    typed = AgiMazeObservation.from_env(obs, info, env=env)
    while True:
        action = str(oracle.act(typed))
        actions.append(action)
        obs, _, terminated, truncated, info = env.step_name(action)
        typed = AgiMazeObservation.from_env(obs, info, env=env, last_action=action)
        if terminated or truncated:
            break
    env.close()
    return actions


def agimaze_experiment(policy: str) -> Experiment:
    return Experiment.model_validate(
        {
            "name": "llm-agimaze",
            "seeds": "0",
            "agimaze": [{"packs": [TUTORIAL], "policies": [policy]}],
        }
    )


def run(experiment: Experiment, out: Path, **options: Any) -> RunResult:
    options.setdefault("verify", True)
    options.setdefault("quiet", True)
    options.setdefault("plots", False)
    return run_experiment(experiment, out, RunOptions(**options))


def price_of(model: str, provider: str, **tokens: int) -> float:
    """genai-prices' own price of ``tokens`` on ``model`` (the reference the results must match)."""
    return float(
        calc_price(PriceUsage(**tokens), model_ref=model, provider_id=provider).total_price
    )


def decisions_of(journal: Journal, game_id: int) -> list[dict[str, Any]]:
    """Every decision record of a game, blobs resolved, with its turn."""
    out = []
    for turn in journal.turns(game_id):
        for agent, record in journal.resolve(turn.decisions).items():
            out.append({"turn_index": turn.turn, "agent_name": agent, **record})
    return out


def escape_observation() -> Any:
    """A Maze Escape observation of turn 3 (for calling a policy outside a game)."""
    from maze_envs.escape.types import LastActionResult, Observation

    return Observation(
        edges={"N": "open", "E": "open", "S": "interior_wall", "W": "outer_brick"},
        on_exit=False,
        landmark="fountain",
        turn=3,
        turns_left=597,
        notebook="",
        radio={},
        teammate_notebooks={},
        last_action=LastActionResult(
            move="moved",
            notebook="none",
            notebook_reason="",
            radio="none",
            radio_reason="",
            radio_cooldown=0,
        ),
        position=(0, 2),
        trail=[(0, 0), (0, 1)],
        colocated_with=[],
    )
