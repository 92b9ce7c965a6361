"""The Maze Escape LLM policy through the policy interface: full games, fallbacks, outages, caps,
records and prompt-prefix stability, with scripted models (no network)."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest

from llm_policies.harness import decode_messages, prefix_share, prompt_text
from llm_policies.policy import EscapeLLMPolicy
from maze_envs import maze_escape_v0
from maze_envs.escape.types import Config, LastActionResult, Observation
from maze_envs.policies.interface import EscapeEpisode, is_async
from tests.llm.harness_support import (
    FakeBackend,
    Raw,
    last_user,
    outage,
    play_escape,
    wall_follower_reply,
)


def _team(backend: Any, agents: tuple[str, ...], **options: Any) -> dict[str, EscapeLLMPolicy]:
    return {agent: EscapeLLMPolicy(backend, **options) for agent in agents}


def _episode(config: Config, agent: str = "A") -> EscapeEpisode:
    return EscapeEpisode("maze_envs/MazeEscape-v0", agent, config.agents, config)


def test_a_full_game_with_llm_agents_reaches_team_success() -> None:
    env = maze_escape_v0.parallel_env(preset="navigator", width=6, height=6, max_turns=400)
    backend = FakeBackend(wall_follower_reply)
    policies = _team(backend, env.config.agents, output_mode="tool")
    assert all(is_async(p) for p in policies.values())
    turns = asyncio.run(play_escape(env, policies, seed=4))
    assert env.outcome()["success"], "every agent reached the exit"
    assert not env.agents
    assert all(d.status == "ok" for turn in turns for d in turn.values())
    assert backend.max_in_flight == 3  # the agents of a turn were asked at the same time
    assert len(backend.requests) == sum(len(t) for t in turns)
    # the notebook the model wrote is what it reads back next turn
    assert "<<<notebook\nt0: N " in last_user(backend.requests[-1])


def test_system_prompt_is_byte_identical_and_the_rolling_log_prefix_is_shared() -> None:
    env = maze_escape_v0.parallel_env(preset="navigator", width=11, height=11, max_turns=60)
    backend = FakeBackend(wall_follower_reply)
    policies = _team(backend, env.config.agents)
    asyncio.run(play_escape(env, policies, seed=2))
    by_agent: dict[str, list[Any]] = {}
    for request in backend.requests:
        agent = last_user(request).split("You are agent ")[1][0]  # the user part names it
        by_agent.setdefault(agent, []).append(request)
    # one system prompt for every agent of the game: the shared part first
    assert len({r.system for r in backend.requests}) == 1
    for requests in by_agent.values():
        assert len({r.system for r in requests}) == 1
        # a teammate's notebook (shown while on the same cell) follows the agent's own
        # notebook, whose appends end the shared prefix: measure the turns without one
        alone = [
            prompt_text(r) for r in requests if "<<<" not in last_user(r).split("notebook>>>")[1]
        ]
        shares = [prefix_share(a, b) for a, b in itertools.pairwise(alone)]
        assert len(shares) >= 30
        assert min(shares) >= 0.85
        assert sum(shares) / len(shares) >= 0.9


def test_the_prompt_holds_every_part_of_the_turn() -> None:
    config = Config.from_preset("full")
    backend = FakeBackend([{"move": "N", "notebook": None, "radio": None}])
    policy = EscapeLLMPolicy(backend, prompt_version="v10")
    policy.reset("A", 0, _episode(config))
    observation = Observation(
        edges={"N": "open", "E": "open", "S": "interior_wall", "W": "outer_brick"},
        on_exit=False,
        landmark="clock",
        turn=12,
        turns_left=108,
        notebook="met B at the clock\n",
        radio={"C": "exit 2 N of the tree"},
        teammate_notebooks={"B": "B's map: tree at [1, 1]"},
        last_action=LastActionResult(
            move="moved",
            notebook="applied",
            notebook_reason="",
            radio="none",
            radio_reason="",
            radio_cooldown=0,
        ),
        distance_to_exit=31,
        distance_to_teammates={"B": 0, "C": 55},
        position=(2, 3),
        trail=[(2, 2)],
        colocated_with=["B"],
        used_exits=["S"],
    )
    policy.act(observation)
    request = backend.requests[0]
    system, user = request.system, last_user(request)
    assert system.startswith("Maze Escape. Prompt version v10;")
    assert "You are agent A, one of 3 agents (A, B, C) in a maze of 10 by 10" in system
    assert "Your own start cell is not a landmark" in system
    assert "How to read each turn's observation:" in system
    assert "Answer every turn by calling the tool maze_action exactly once" in system
    assert user.index("met B at the clock") < user.index("exit 2 N of the tree")
    assert user.index("exit 2 N of the tree") < user.index("B's map: tree at [1, 1]")
    assert user.index("B's map") < user.index("Turn: 12 (108 turns left).")
    for line in (
        "Landmark: clock.",
        "Distances: exit 3.1, B 0.0, C 5.5.",
        "Position: [2, 3].",
        "Trail (oldest first): [2, 2].",
        "Teammates here: B.",
        "Used exits: S.",
    ):
        assert line in user.splitlines()
    assert len(request.messages) == 1  # no conversation history in Maze Escape


def test_null_literals_never_reach_the_notebook_or_the_radio() -> None:
    env = maze_escape_v0.parallel_env(preset="sparse", width=6, height=6, max_turns=3)
    backend = FakeBackend(lambda r: {"move": "STAY", "notebook": "null", "radio": "None"})
    policies = _team(backend, env.config.agents, output_mode="native")
    turns = asyncio.run(play_escape(env, policies, seed=0))
    for request in backend.requests:  # nothing was ever written or sent
        assert "<<<notebook\n(empty)\nnotebook>>>" in last_user(request)
        assert "Radio from last turn: no messages." in last_user(request)
    assert all(
        d.action.notebook is None and d.action.radio is None for t in turns for d in t.values()
    )
    assert turns[0]["A"].record["quirks"] == {"null_string": 1}  # once per reply


def test_an_unusable_reply_is_retried_then_becomes_stay() -> None:
    config = Config()
    backend = FakeBackend(lambda r: Raw(text="I think I should go north."))
    policy = EscapeLLMPolicy(backend, output_mode="prompted", parse_retries=2)
    policy.reset("A", 0, _episode(config))
    decision = asyncio.run(policy.aact(_blank_observation()))
    assert decision.action.move == "STAY" and decision.action.notebook is None
    assert decision.status == "fallback"
    assert len(backend.requests) == 3  # one call and two retries
    retry = backend.requests[1].messages
    assert [m.role for m in retry] == ["user", "assistant", "user"]
    assert retry[1].content == "I think I should go north."
    assert retry[2].content.startswith("That reply could not be used: the reply holds no JSON")
    record = decision.record
    assert record["status"] == "fallback" and record["retries"] == 2
    assert record["error"] == "the reply holds no JSON object"
    assert [a["raw"]["text"] for a in record["attempts"]] == ["I think I should go north."] * 3
    assert decision.usage is not None and decision.usage.requests == 3


def test_a_retry_that_succeeds_is_ok_and_counts_the_retry() -> None:
    backend = FakeBackend([Raw(text="{oops"), {"move": "e", "notebook": None, "radio": None}])
    policy = EscapeLLMPolicy(backend, output_mode="native")
    policy.reset("A", 0, _episode(Config()))
    decision = policy.act(_blank_observation())
    assert decision.status == "ok" and decision.action.move == "E"
    assert decision.record["retries"] == 1 and decision.record["quirks"] == {"move_case": 1}


def test_an_outage_is_recorded_as_such_and_the_game_goes_on() -> None:
    env = maze_escape_v0.parallel_env(preset="sparse", width=6, height=6, max_turns=5)
    backend = FakeBackend(lambda r: outage())
    policies = _team(backend, env.config.agents)
    turns = asyncio.run(play_escape(env, policies, seed=0))
    assert len(turns) == 5 and env.outcome()["turns"] == 5
    for turn in turns:
        for decision in turn.values():
            assert decision.status == "outage" and decision.action.move == "STAY"
            assert decision.record["outage"]["kind"] == "server"
            assert decision.record["outage"]["status"] == 503
            assert decision.stop is None


def test_repeated_outages_stop_the_game_with_the_reason() -> None:
    backend = FakeBackend(lambda r: outage())
    policy = EscapeLLMPolicy(backend, max_consecutive_fallbacks=3)
    policy.reset("A", 0, _episode(Config()))
    stops = [policy.act(_blank_observation()).stop for _ in range(3)]
    assert stops[:2] == [None, None]
    assert stops[2] == "model unavailable in 3 decisions in a row: HTTP 503 five times"


def test_an_unexpected_backend_error_never_crashes_the_game() -> None:
    backend = FakeBackend(lambda r: RuntimeError("bug in a backend"))
    policy = EscapeLLMPolicy(backend)
    policy.reset("A", 0, _episode(Config()))
    decision = policy.act(_blank_observation())
    assert decision.status == "outage" and decision.action.move == "STAY"
    assert decision.record["outage"] == {"error": "RuntimeError", "message": "bug in a backend"}


def test_token_cap_stops_the_game_before_a_request_would_break_it() -> None:
    backend = FakeBackend(
        lambda r: {"move": "N", "notebook": None, "radio": None}, tokens=(None, 10)
    )
    policy = EscapeLLMPolicy(backend, max_tokens_per_game=3000)
    policy.reset("A", 0, _episode(Config()))
    decisions = [policy.act(_blank_observation()) for _ in range(3)]
    # each request reserves its prompt's tokens (about 1000 here) and the reply's share (256
    # without an output cap) before it is sent; the third would have taken the game over 3000
    # tokens: it was not sent
    assert [d.stop is None for d in decisions] == [True, True, False]
    assert len(backend.requests) == 2
    stop = decisions[2].stop or ""
    assert stop.startswith("token cap of the game reached") and "cap 3000" in stop
    assert decisions[2].status == "fallback" and decisions[2].action.move == "STAY"
    assert decisions[2].record["fallback_reason"] == "cap"
    used = sum(d.usage.input_tokens + d.usage.output_tokens for d in decisions if d.usage)
    assert 1500 < used <= 3000 and policy.caps.used.input_tokens + 20 == used
    policy.reset("A", 1, _episode(Config()))  # a new game starts with a fresh cap
    assert policy.act(_blank_observation()).stop is None


def test_the_agents_of_one_game_share_its_caps() -> None:
    env = maze_escape_v0.parallel_env(preset="sparse", width=6, height=6, max_turns=50)
    backend = FakeBackend(
        lambda r: {"move": "STAY", "notebook": None, "radio": None}, tokens=(None, 10)
    )
    policies = _team(backend, env.config.agents, max_tokens_per_game=5000)
    turns = asyncio.run(play_escape(env, policies, seed=0))
    used = sum(
        d.usage.input_tokens + d.usage.output_tokens for t in turns for d in t.values() if d.usage
    )
    # three agents, one budget: the game stops within the cap (not three times it)
    assert 0 < used <= 5000
    assert len({id(p.caps) for p in policies.values()}) == 1
    stops = [d.stop for t in turns for d in t.values() if d.stop]
    assert stops and all("token cap of the game reached" in s for s in stops)
    assert len(turns) < 50
    # the next game of the same env is another game, with a fresh budget
    again = asyncio.run(play_escape(env, policies, seed=1))
    assert sum(d.usage.requests for d in again[0].values() if d.usage) == 3


def test_cost_cap_with_an_unknown_price_stops_before_spending_and_says_why() -> None:
    backend = FakeBackend(
        lambda r: {"move": "N", "notebook": None, "radio": None},
        spec="openai:no-such-model-xyz",
        local=False,
    )
    policy = EscapeLLMPolicy(backend, max_cost_per_game=1.0)
    policy.reset("A", 0, _episode(Config()))
    decision = policy.act(_blank_observation())
    assert backend.requests == []  # a cap that cannot be checked is not risked
    assert decision.stop is not None and "cannot be checked" in decision.stop


def test_the_record_holds_prompt_reply_usage_and_harness() -> None:
    backend = FakeBackend(
        [{"move": "W", "notebook": {"start": 0, "end": 0, "text": "hi"}, "radio": "x"}]
    )
    policy = EscapeLLMPolicy(backend, output_mode="tool")
    policy.reset("B", 0, _episode(Config(), "B"))
    decision = policy.act(_blank_observation())
    record = decision.record
    assert record is not None
    system = record["system"]
    assert getattr(system, "text", system) == backend.requests[0].system
    messages = decode_messages(record["messages"], None)
    assert messages == backend.requests[0].messages
    assert record["attempts"][0]["raw"] == {
        "text": None,
        "tool_arguments": json.dumps(
            {"move": "W", "notebook": {"start": 0, "end": 0, "text": "hi"}, "radio": "x"}
        ),
    }
    assert record["action"] == {
        "move": "W",
        "notebook": {"start": 0, "end": 0, "text": "hi"},
        "radio": "x",
    }
    assert record["usage"]["input_tokens"] == 100 and record["usage"]["cost_status"] == "local"
    assert record["attempts"][0]["latency_s"] == 0.001
    assert record["model"] == "scripted:fake" and record["agent"] == "B" and record["turn"] == 0
    harness = policy.harness()
    assert harness["prompt_version"] == "v14" and harness["output_mode"] == "tool"
    assert harness["schema_order"] == ["move", "notebook", "radio"]
    assert harness["notebook_mode"] == "splice" and harness["model"] == "scripted:fake"
    assert harness["temperature"] is None and harness["history"] == "observations"
    json.dumps(harness)  # plain JSON for the game meta


def test_options_are_validated_with_clear_errors() -> None:
    with pytest.raises(ValueError, match="unknown prompt version 'v99'"):
        EscapeLLMPolicy(FakeBackend([]), prompt_version="v99")
    with pytest.raises(ValueError, match="output_mode"):
        EscapeLLMPolicy(FakeBackend([]), output_mode="xml")
    backend = FakeBackend([])
    backend.output_modes = ("native",)
    with pytest.raises(ValueError, match="output mode 'tool' is not served by scripted:fake"):
        EscapeLLMPolicy(backend, output_mode="tool")


def _blank_observation() -> Observation:
    return Observation(
        edges={"N": "open", "E": "open", "S": "open", "W": "open"},
        on_exit=False,
        landmark=None,
        turn=0,
        turns_left=120,
        notebook="",
        radio={},
        teammate_notebooks={},
        last_action=LastActionResult(
            move="none",
            notebook="none",
            notebook_reason="",
            radio="none",
            radio_reason="",
            radio_cooldown=0,
        ),
        distance_to_exit=30,
        distance_to_teammates={"B": 10, "C": 20},
    )


def test_close_closes_the_backend_inside_and_outside_an_event_loop() -> None:
    backend = FakeBackend([])
    EscapeLLMPolicy(backend).close()
    assert backend.closed

    async def inside() -> bool:
        other = FakeBackend([])
        EscapeLLMPolicy(other).close()
        await asyncio.sleep(0)
        return other.closed

    assert asyncio.run(inside())


def test_a_failed_attempts_quirks_are_counted_apart_and_a_long_reply_is_echoed_short() -> None:
    runaway = '```json\n{"move": "upward", "notebook": "x"}\n```\n' + "I ramble. " * 600
    replies = [Raw(text=runaway), {"move": "n", "notebook": None, "radio": None}]
    backend = FakeBackend(replies)
    policy = EscapeLLMPolicy(backend, output_mode="prompted", parse_retries=2)
    policy.reset("A", 0, _episode(Config(notebook_mode="rolling_log")))
    decision = policy.act(_blank_observation())
    assert decision.status == "ok" and decision.action.move == "N"
    record = decision.record
    assert record is not None
    # the results sum the reply that was played; the failed attempt's repairs are apart
    assert record["quirks"] == {"move_case": 1}
    assert record["failed_quirks"] == {
        "code_fence": 1,
        "trailing_prose": 1,
        "missing_field": 1,
    }
    echo = backend.requests[1].messages[1].content
    assert len(runaway) > 6000 and len(echo) < 400
    assert echo.startswith(runaway[:300]) and echo.endswith("more characters]")


def test_a_splice_beyond_the_action_space_keeps_the_move_and_rejects_the_edit() -> None:
    # seen from SmolLM2 under llama.cpp's grammar, which does not enforce "maximum": a valid
    # move with a position the action space cannot hold; the environment's own rule for a
    # splice it cannot apply is "move played, edit rejected with its reason", so the policy
    # does the same instead of losing the whole decision to a re-ask
    wild = {"move": "N", "notebook": {"start": 2, "end": 107654328946, "text": "x"}, "radio": None}
    fine = {"move": "E", "notebook": None, "radio": None}
    backend = FakeBackend([wild, fine])
    policy = EscapeLLMPolicy(backend, output_mode="prompted")
    policy.reset("A", 0, _episode(Config()))
    decision = policy.act(_blank_observation())
    assert decision.status == "ok" and decision.action.move == "N"
    assert decision.action.notebook is None and len(backend.requests) == 1
    record = decision.record
    assert record is not None and record["quirks"] == {"rejected_edit": 1}
    assert record["rejected_fields"] == {
        "notebook": "notebook.end: Input should be less than or equal to 65536"
    }
    schema = backend.requests[0].schema["properties"]["notebook"]["anyOf"][0]
    assert schema["properties"]["end"]["maximum"] == 65536  # a grammar that honours it
    # the next observation tells the model, as the environment tells of a rejected splice
    policy.act(_blank_observation())
    told = last_user(backend.requests[1])
    assert "Last notebook edit: rejected (notebook.end: Input should be less than" in told
