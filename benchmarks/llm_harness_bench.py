"""The LLM harness's own costs, in one run: time per decision without the model, and how much
of each prompt a provider's prefix cache can reuse.

Measures:

* **prompt building + reply parsing per decision** (goal: under 1 ms). Maze Escape: a 17x17
  ``navigator`` game (own coordinates, 30-cell trail, meeting alert, rolling log) at turn 60 with
  a 4 KB notebook; AGI Maze: a ``planning`` history 60 steps long on a TRAINING labyrinth. Each is
  timed as the prompt alone, the parse alone (a clean tool call and a quirky prompted reply), and
  a whole ``aact`` against a backend that answers at once (so everything but the model: prompt,
  request, parse, record, caps). Medians of interleaved windows.
* **prefix share**: for each prompt, the share of its bytes equal to the start of the same
  agent's previous prompt (what a prefix cache can reuse), per notebook mode, on a recorded
  120-turn game: 3 agents on a 17x17 maze, played by a scripted model that reads its cell from
  the prompt, follows the right-hand wall and writes a ~70-byte note every turn (as the study's
  models did). Modes: ``rolling_log`` (appends), ``splice`` appending at the end, and ``splice``
  that also rewrites a summary line at the top every 10 turns (an edit inside the notebook).
  Reported: the mean over all turns, the mean over turns without a teammate on the cell (a
  colocated teammate's notebook follows the agent's own, whose growth ends the shared prefix),
  and the minimum. Goal: >= 90% with the rolling log.

Usage: ``python benchmarks/llm_harness_bench.py [--windows 7] [--json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym

import maze_envs  # noqa: F401  (registers the environments)
from llm_policies.backends.base import ModelReply, ModelRequest
from llm_policies.harness import prefix_share, prompt_text
from llm_policies.parsing import parse_reply
from llm_policies.policy import AgiMazeLLMPolicy, EscapeLLMPolicy
from maze_envs import maze_escape_v0
from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.escape.convert import observation_to_model
from maze_envs.policies.episodes import agimaze_episode, escape_episode
from maze_envs.policies.interface import Usage

GOAL_MS = 1.0
GOAL_SHARE = 0.90
_RIGHT_HAND = {"N": "ENWS", "E": "SENW", "S": "WSEN", "W": "NWSE"}


class InstantBackend:
    """Answers at once from a function of the request (local: cost 0)."""

    spec = "scripted:bench"
    local = True
    output_modes = ("tool", "native", "prompted")

    def __init__(self, reply: Callable[[ModelRequest], str]) -> None:
        self.reply = reply
        self.requests: list[ModelRequest] = []
        self.keep = False

    async def complete(self, request: ModelRequest) -> ModelReply:
        if self.keep:
            self.requests.append(request)
        text = self.reply(request)
        tool = request.output_mode == "tool"
        usage = Usage(100, 20, requests=1, cost_usd=0.0, cost_status="local")
        return ModelReply(None if tool else text, text if tool else None, usage, "bench", 0.0, {})

    async def aclose(self) -> None:
        return None


def wall_follower(mode_edit: str) -> Callable[[ModelRequest], str]:
    """A scripted model: right-hand rule from the prompt's cell, a note every turn."""
    turns = {"n": 0}

    def reply(request: ModelRequest) -> str:
        user = request.messages[-1].content
        cell = re.search(r"^Cell: N (\w+), E (\w+), S (\w+), W (\w+)\.$", user, re.M)
        assert cell is not None
        edges = dict(zip("NESW", cell.groups(), strict=True))
        start = user.index("<<<notebook\n") + len("<<<notebook\n")
        body = user[start : user.index("\nnotebook>>>", start - 1)]
        notebook = "" if body == "(empty)" else body + "\n"
        heading = (re.findall(r"heading ([NESW])", notebook) or ["N"])[-1]
        move = next(d for d in _RIGHT_HAND[heading] if edges[d] == "open")
        turn = re.search(r"^Turn: (\d+) ", user, re.M)
        note = (
            f"t{turn.group(1) if turn else '?'}: N {edges['N']}, E {edges['E']}, "
            f"S {edges['S']}, W {edges['W']}; heading {move}"
        )
        turns["n"] += 1
        edit: Any
        if mode_edit == "rolling_log":
            edit = note
        elif mode_edit == "splice_rewrite" and turns["n"] % 10 == 0 and notebook:
            first = notebook.index("\n") + 1
            edit = {"start": 0, "end": first, "text": f"summary after {turns['n']} notes\n"}
        else:
            edit = {"start": len(notebook), "end": len(notebook), "text": note + "\n"}
        reply: dict[str, Any] = {"move": move, "notebook": edit, "radio": None}
        if "check" in request.schema["properties"]:
            reply = {"check": f"{note}; going {move} by the right-hand rule", **reply}
        return json.dumps(reply)

    return reply


def _median_ms(fn: Callable[[], Any], windows: int, reps: int) -> float:
    samples = []
    for _ in range(windows):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        samples.append((time.perf_counter() - start) / reps * 1000)
    return statistics.median(samples)


def escape_decision_costs(windows: int) -> dict[str, float]:
    env = maze_escape_v0.parallel_env(preset="navigator", width=17, height=17)
    backend = InstantBackend(wall_follower("rolling_log"))
    policy = EscapeLLMPolicy(backend, output_mode="tool", check="required")
    observations, _ = env.reset(seed=0)
    policy.reset("A", 0, escape_episode(env, "A"))
    others = {a: EscapeLLMPolicy(InstantBackend(wall_follower("rolling_log"))) for a in "BC"}
    for agent, other in others.items():
        other.reset(agent, 0, escape_episode(env, agent))
    loop = asyncio.new_event_loop()
    for _ in range(60):  # a game 60 turns in: notebooks and trails filled
        decisions = {
            a: loop.run_until_complete(p.aact(observation_to_model(observations[a], env.config, a)))
            for a, p in {"A": policy, **others}.items()
        }
        observations, *_ = env.step({a: d.action for a, d in decisions.items()})
    obs = observation_to_model(observations["A"], env.config, "A")
    schema = policy.schema
    assert schema is not None
    clean = json.dumps(
        {"check": "N open, E wall; going N", "move": "N", "notebook": "x", "radio": None}
    )
    quirky = (
        "```json\n"
        + json.dumps(
            {"move": "north", "radio": "null", "type": "object", "notebook": "None", "check": "c"}
        )
        + "\n```\nDone."
    )
    return {
        "prompt_bytes": len(
            prompt_text(
                ModelRequest(
                    policy.system,
                    tuple(policy.prompt(obs)),
                    "tool",
                    schema.json_schema,
                    schema.name,
                    policy.settings,
                )
            )
        ),
        "prompt_ms": _median_ms(lambda: policy.prompt(obs), windows, 300),
        "parse_tool_ms": _median_ms(
            lambda: parse_reply(None, clean, schema, "tool"), windows, 2000
        ),
        "parse_quirky_ms": _median_ms(
            lambda: parse_reply(quirky, None, schema, "prompted"), windows, 2000
        ),
        "decision_ms": _median_ms(lambda: loop.run_until_complete(policy.aact(obs)), windows, 300),
    }


def agimaze_decision_costs(windows: int) -> dict[str, float]:
    path = "TRAINING/S3-full/STAGE-06/0005.json"
    env = gym.make("maze_envs/AgiMaze-v0", path=path)
    obs, info = env.reset(seed=0)
    # wander without solving, so the history reaches 60 steps
    steps = iter(["up", "left", "down", "right", "right", "down", "left", "up"] * 10_000)

    def reply_to(request: ModelRequest) -> str:
        return json.dumps({"plan": "map the west side first", "action": next(steps)})

    policy = AgiMazeLLMPolicy(InstantBackend(reply_to), history="planning", output_mode="tool")
    policy.reset("player", 0, agimaze_episode(env, info))
    loop = asyncio.new_event_loop()
    observation = AgiMazeObservation.from_env(obs, info, env=env)
    for _ in range(60):
        decision = loop.run_until_complete(policy.aact(observation))
        obs, _, term, trunc, info = env.unwrapped.step_name(decision.action)
        observation = AgiMazeObservation.from_env(obs, info, last_action=decision.action, env=env)
        if term or trunc:
            break
    schema = policy.schema
    assert schema is not None
    reply = json.dumps({"plan": "to the key", "action": "left"})

    def one_step() -> None:
        # a decision at this history length (the step it adds is taken back: all alike)
        loop.run_until_complete(policy.aact(observation))
        policy.history.steps.pop()

    return {
        "history_steps": len(policy.history.steps),
        "prompt_ms": _median_ms(lambda: policy.prompt(observation), windows, 300),
        "parse_tool_ms": _median_ms(
            lambda: parse_reply(None, reply, schema, "tool"), windows, 2000
        ),
        "decision_ms": _median_ms(one_step, windows, 300),
    }


def prefix_shares(mode: str, seed: int = 7, turns: int = 120) -> dict[str, float]:
    notebook_mode = "rolling_log" if mode == "rolling_log" else "splice"
    env = maze_escape_v0.parallel_env(
        preset="navigator", width=17, height=17, max_turns=turns, notebook_mode=notebook_mode
    )
    backends = {a: InstantBackend(wall_follower(mode)) for a in env.possible_agents}
    policies = {a: EscapeLLMPolicy(b) for a, b in backends.items()}
    observations, _ = env.reset(seed=seed)
    for agent, policy in policies.items():
        backends[agent].keep = True
        policy.reset(agent, seed, escape_episode(env, agent))
    loop = asyncio.new_event_loop()
    while env.agents:
        decisions = {
            a: loop.run_until_complete(
                policies[a].aact(observation_to_model(observations[a], env.config, a))
            )
            for a in env.agents
        }
        observations, *_ = env.step({a: d.action for a, d in decisions.items()})
    every, alone = [], []
    for backend in backends.values():
        texts = [prompt_text(r) for r in backend.requests]
        colocated = [
            "<<<" in r.messages[-1].content.split("notebook>>>")[1] for r in backend.requests
        ]
        for i in range(1, len(texts)):
            share = prefix_share(texts[i - 1], texts[i])
            every.append(share)
            if not (colocated[i] or colocated[i - 1]):
                alone.append(share)
    return {
        "turns": env.outcome()["turns"],
        "mean": statistics.fmean(every),
        "mean_alone": statistics.fmean(alone) if alone else float("nan"),
        "min": min(every),
        "median": statistics.median(every),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {
        "escape": escape_decision_costs(args.windows),
        "agimaze": agimaze_decision_costs(args.windows),
        "prefix_share": {m: prefix_shares(m) for m in ("rolling_log", "splice", "splice_rewrite")},
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    e, a = results["escape"], results["agimaze"]
    print(
        f"Maze Escape decision (prompt {e['prompt_bytes']} bytes): prompt {e['prompt_ms']:.3f} ms, "
        f"parse tool {e['parse_tool_ms']:.3f} ms, parse quirky {e['parse_quirky_ms']:.3f} ms, "
        f"whole aact {e['decision_ms']:.3f} ms (goal < {GOAL_MS} ms)"
    )
    print(
        f"AGI Maze decision ({a['history_steps']} steps of history): "
        f"prompt {a['prompt_ms']:.3f} ms, "
        f"parse {a['parse_tool_ms']:.3f} ms, whole aact {a['decision_ms']:.3f} ms"
    )
    print("Prefix share of each prompt equal to the previous prompt's start (3 agents, 17x17):")
    for mode, s in results["prefix_share"].items():
        print(
            f"  {mode:15} {s['turns']} turns: mean {s['mean']:.1%}, without a colocated teammate "
            f"{s['mean_alone']:.1%}, median {s['median']:.1%}, min {s['min']:.1%}"
        )
    ok = e["decision_ms"] < GOAL_MS and results["prefix_share"]["rolling_log"]["mean"] >= GOAL_SHARE
    print("goals met" if ok else "a goal was missed")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
