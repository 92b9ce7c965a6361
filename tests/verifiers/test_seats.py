"""What reaches the model through verifiers, and what happens when a seat cannot go on.

* The request the loopback server receives is the LLM policy's own, exactly: the system prompt
  and the conversation of the decision record in the journal, the reply schema in its key order
  (tool mode: the one forced function), verifiers' sampling (and the game records it);
* an AGI Maze history is what the history policy shows (its own assistant messages), not
  verifiers' transcript of raw replies;
* a call that fails after its retries is an outage: the seat's rollout fails, no reward is
  recorded (verifiers' ``--resume`` plays it again) and the journal keeps the stopped game;
* a verifiers limit (``--env.team.max-turns``) stops the game like a cap: scored as it stood.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "verifiers.v1",
    reason="the verifiers environments need the verifiers extra, installed in an environment of "
    "its own (scripts/test.sh runs these tests in .venv-verifiers)",
)

from maze_envs.journal import Journal
from tests.llm.servers import HttpError, LoopbackServer, RecordedRequest
from tests.verifiers.support import Player, vf_eval

BUNDLE = "TRAINING/S0-keys/STAGE-01/0000.json"
SMALL_ESCAPE = ("--env.taskset.sizes", '["5"]', "--env.taskset.seeds", "1000000")


def _decisions(journal: Path) -> list[dict[str, Any]]:
    """Every decision record of every game, blobs resolved, in order."""
    out = []
    with Journal(journal, readonly=True) as opened:
        for info in opened.games():
            for turn in opened.turns(info.id):
                for agent, record in opened.resolve(turn.decisions).items():
                    out.append({"agent": agent, **record})
    return out


def _verify(journal: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "maze_envs", "verify", str(journal)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_turn_sends_the_policys_request_exactly_and_records_verifiers_sampling(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "games.sqlite"
    player = Player()
    with LoopbackServer() as server:
        server.respond_with(player)
        run = vf_eval(
            "maze_envs_escape",
            server.openai_base_url,
            tmp_path,
            *SMALL_ESCAPE,
            *("--env.taskset.max-turns", "4", "--env.journal", str(journal)),
            *("--env.taskset.policy", '{"output_mode": "tool", "check": "required"}'),
            *("--sampling.temperature", "0.3"),
        )
        bodies = [r.body for r in server.requests]
    assert run.status == 0, run.output[-4000:]
    records = [d for d in _decisions(journal) if d.get("attempts")]
    assert len(bodies) == len(records) == 3 * 4  # three agents, four turns, no re-ask
    for body in bodies:
        function = body["tools"][0]["function"]
        assert list(function["parameters"]["properties"]) == ["check", "move", "notebook", "radio"]
        assert body["tool_choice"] == {"type": "function", "function": {"name": "maze_action"}}
        assert [m["role"] for m in body["messages"]] == ["system", "user"]  # no history
        assert body["temperature"] == 0.3
    sent = {(b["messages"][0]["content"], b["messages"][1]["content"]) for b in bodies}
    recorded = {(r["system"], r["messages"]["new"][0]["content"]) for r in records}
    assert sent == recorded
    assert all(
        r["schema"]
        == json.dumps(bodies[0]["tools"][0]["function"]["parameters"], ensure_ascii=False)
        for r in records
    )
    with Journal(journal, readonly=True) as opened:
        (info,) = list(opened.games())
    harness = info.meta["harness"]["A"]
    assert harness["temperature"] == 0.3 and harness["output_mode"] == "tool"
    assert harness["verifiers"]["sampling"]["temperature"] == 0.3
    assert harness["model"] == "verifiers:scripted-model"


def test_an_agimaze_history_is_the_history_policys_not_the_transcript(tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"

    class Chatty(Player):
        """The plan's action, with prose around it (a quirk the policy's parser accepts)."""

        def __call__(self, recorded: RecordedRequest) -> Any:
            reply = super().__call__(recorded)
            return type(reply)(text=f"Here is my move: {reply.text} Good luck.")

    player = Chatty(packs=(BUNDLE,))
    with LoopbackServer() as server:
        server.respond_with(player)
        run = vf_eval(
            "maze_envs_agimaze",
            server.openai_base_url,
            tmp_path,
            *("--env.taskset.packs", f'["{BUNDLE}"]', "--env.journal", str(journal)),
        )
        bodies = [r.body for r in server.requests]
    assert run.status == 0, run.output[-4000:]
    assert bodies and all("tools" not in b and "response_format" not in b for b in bodies)
    for step, body in enumerate(bodies):
        messages = body["messages"]
        assert len(messages) == 1 + 2 * step + 1  # system, every earlier step, this one
        for earlier in messages[2:-1:2]:  # the history keeps the parsed action, no prose
            assert earlier["role"] == "assistant"
            assert json.loads(earlier["content"]).keys() == {"action"}
    (trace,) = run.traces
    assert trace["rewards"]["solved"]["score"] == 1.0
    quirks = trace["info"]["maze_envs"]["row"]["quirks"]
    assert quirks.get("leading_prose") == quirks.get("trailing_prose") == len(bodies)


def test_a_failed_call_is_an_outage_without_a_reward(tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"
    with LoopbackServer() as server:
        server.respond_with(lambda request: HttpError(500, message="the GPU caught fire"))
        run = vf_eval(
            "maze_envs_agimaze",
            server.openai_base_url,
            tmp_path,
            *("--env.taskset.packs", f'["{BUNDLE}"]', "--env.journal", str(journal)),
        )
    (trace,) = run.traces
    assert not trace["ok"] and trace["errors"]
    assert trace["rewards"] == {}  # never a made-up 0: the rollout stands as failed
    row = trace["info"]["maze_envs"]["row"]
    assert row["status"] == "outage" and row["outages"] == 1
    assert "the verifiers rollout ended" in row["stop_reason"]
    assert "1 of 1 game(s) verified" in _verify(journal)


def test_a_verifiers_turn_limit_stops_the_game_like_a_cap(tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"
    player = Player()
    with LoopbackServer() as server:
        server.respond_with(player)
        run = vf_eval(
            "maze_envs_escape",
            server.openai_base_url,
            tmp_path,
            *SMALL_ESCAPE,
            *("--env.taskset.max-turns", "30", "--env.journal", str(journal)),
            *("--env.team.max-turns", "2"),
        )
    assert run.status == 0, run.output[-4000:]
    traces = run.traces
    assert len(traces) == 3
    row = traces[0]["info"]["maze_envs"]["row"]
    assert row["status"] == "stopped" and row["outages"] == 0
    assert "max_turns" in row["stop_reason"]
    assert row["turns"] == 3  # two answered turns; at the third the limit: STAY, and stop
    assert row["fallbacks"] == 3
    for trace in traces:
        assert trace["rewards"]["team_success"]["score"] == 0.0
    cap = [d for d in _decisions(journal) if d.get("fallback_reason") == "cap"]
    assert len(cap) == 3 and all("max_turns" in d["error"] for d in cap)
    _verify(journal)
