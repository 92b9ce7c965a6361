"""The Inspect tasks end to end, offline: Inspect's mock model scripted, whole games per sample,
scored, and journaled so that ``maze-envs verify``, ``view`` and ``analyze`` work on them."""

from __future__ import annotations

import asyncio
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.model._call_tools import parse_tool_call  # the parser Inspect's providers use

from llm_policies.apps.inspect import tasks
from maze_envs.agimaze.scoring import rhae
from maze_envs.agimaze.set_env import TUTORIAL_PATHS
from maze_envs.journal import Journal
from tests.inspect.support import (
    agimaze_player,
    decisions,
    mock_model,
    run,
    text_output,
    wall_follower,
    with_usage,
)
from tests.llm.bench_support import agimaze_plan

ESCAPE = {"preset": "navigator", "sizes": 5, "max_turns": 60}


def maze_envs_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "maze_envs", *args], capture_output=True, text=True, check=False
    )


def score_of(log: Any, index: int = 0) -> Any:
    assert log.samples is not None
    (score,) = log.samples[index].scores.values()
    return score


def test_escape_games_are_played_scored_and_journaled(tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"
    mock = mock_model(wall_follower)
    task = tasks.escape(**ESCAPE, seeds="0-1", journal=str(journal))
    log = run(task, mock.model, tmp_path / "logs")
    assert log.status == "success" and log.samples is not None
    assert [s.id for s in log.samples] == ["5x5/seed=0", "5x5/seed=1"]
    with Journal(journal, readonly=True) as opened:
        games = {g.seed: g for g in opened.games()}
    assert sorted(games) == [0, 1]
    decided = 0
    for index, sample in enumerate(log.samples):
        score = score_of(log, index)
        row = score.metadata
        game = games[sample.metadata["seed"]]
        assert row["game_id"] == game.id and row["journal"] == str(journal)
        assert score.value["team_success"] == 1.0 and game.outcome["success"] is True
        assert score.value["finish_ratio"] == pytest.approx(row["finish_turn"] / row["fastest"])
        assert row["fastest"] == game.outcome["fastest_possible_finish"]
        assert row["radio_messages"] > 0 and row["notebook_bytes"] > 0  # the model wrote both
        assert sample.output.completion.startswith("team success at turn")
        meta = game.meta
        assert meta["experiment"] == "inspect:escape" and meta["task"]["seed"] == game.seed
        harness = meta["harness"]["A"]
        assert harness["model"] == "inspect:mockllm/model" and harness["output_mode"] == "tool"
        assert harness["inspect"]["model"] == "mockllm/model"
        records = decisions(journal, game.id)
        assert {r["status"] for r in records} == {"ok"} and len(records) == row["decisions"]
        sent = {c.input[0].text for c in mock.calls}
        assert {r["system"] for r in records} <= sent  # the journal holds what Inspect sent
        decided += len(records)
    assert decided == len(mock.calls)  # one Inspect generate per decision, nothing else
    for metric, value in (("mean", 1.0), ("wilson_high", 1.0)):
        assert log.results is not None
        assert log.results.scores[0].metrics[metric].value == value
    assert 0 < log.results.scores[0].metrics["wilson_low"].value < 1
    verified = maze_envs_cli("verify", str(journal))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "2 of 2 game(s) verified" in verified.stdout
    page = tmp_path / "game.html"
    shown = maze_envs_cli("view", str(journal), "--game", "1", "--out", str(page))
    assert shown.returncode == 0 and page.stat().st_size > 10_000
    analysed = maze_envs_cli("analyze", str(journal), "--csv", str(tmp_path / "a.csv"))
    assert analysed.returncode == 0 and "wrote 8 rows" in analysed.stdout  # 3 agents + team, x2


def test_task_parameters_reach_the_game_and_the_requests(tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"
    mock = mock_model(wall_follower)
    task = tasks.escape(
        preset="navigator",
        sizes="5,6",  # -T sizes=5,6 arrives as text
        max_turns=4,
        seeds=3,
        radio=False,  # a config switch by name
        config={"trail_length": 5},
        prompt_version="v12",
        output_mode="native",
        check="required",
        temperature=0.2,
        journal=str(journal),
    )
    log = run(task, mock.model, tmp_path / "logs")
    assert log.status == "success"
    with Journal(journal, readonly=True) as opened:
        games = list(opened.games())
    assert [(g.config["width"], g.seed) for g in games] == [(5, 3), (6, 3)]
    for game in games:
        assert game.config["radio"] is False and game.config["trail_length"] == 5
        assert game.config["max_turns"] == 4
        harness = game.meta["harness"]["B"]
        assert (harness["prompt_version"], harness["output_mode"], harness["check"]) == (
            "v12", "native", "required"
        )  # fmt: skip
        assert harness["temperature"] == 0.2
    call = mock.calls[0]
    assert call.tools == [] and call.config.response_schema is not None
    assert call.config.temperature == 0.2
    assert list(call.config.response_schema.json_schema.model_dump()["properties"]) == [
        "check", "move", "notebook"  # the radio is off: no radio field
    ]  # fmt: skip


def test_quirky_replies_go_through_the_harness_rules(tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"
    literal = parse_tool_call("c1", "maze_action", "{'move': 'E', 'notebook': None, 'radio': None}")
    quirky = {
        # JSON in a code fence as text although the tool was forced
        "A": [text_output('```json\n{"move": "n", "notebook": null, "radio": "null"}\n```')],
        # a Python literal as tool arguments (Inspect could not parse them)
        "B": [with_usage(ModelOutput.from_message(_tool_message(literal)))],
        # nothing usable, then a good reply after the re-ask
        "C": [
            text_output("I think I will go west."),
            text_output('{"Move": "west", "notebook": null, "radio": null}'),
        ],
    }

    def respond(messages: list[Any], *_: Any) -> ModelOutput:
        # the agent's name is in the system prompt up to v13, in the user message from v14
        agent = re.search(r"You are agent (\w)", "\n".join(m.text for m in messages))
        assert agent is not None
        return quirky[agent.group(1)].pop(0)

    mock = mock_model(respond)
    task = tasks.escape(preset="navigator", sizes=5, max_turns=1, num_agents=3, seeds=0,
                        journal=str(journal))  # fmt: skip
    log = run(task, mock.model, tmp_path / "logs")
    assert log.status == "success"
    records = {r["agent"]: r for r in decisions(journal, 1)}
    assert records["A"]["action"]["move"] == "N" and records["A"]["status"] == "ok"
    assert {"json_as_text", "code_fence", "move_case", "null_string"} <= set(records["A"]["quirks"])
    assert records["B"]["action"]["move"] == "E" and "python_literal" in records["B"]["quirks"]
    assert records["C"]["action"]["move"] == "W" and records["C"]["retries"] == 1
    assert {"key_case", "move_spelled_out"} <= set(records["C"]["quirks"])
    assert score_of(log).metadata["quirks"]["python_literal"] == 1


def _tool_message(call: Any) -> Any:
    from inspect_ai.model import ChatMessageAssistant

    return ChatMessageAssistant(content="", tool_calls=[call], model="mockllm/model")


def test_unusable_replies_fall_back_and_the_game_stops_cleanly(tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"
    mock = mock_model(lambda *_: text_output("Default output from mockllm/model"))
    task = tasks.escape(**ESCAPE, seeds=0, max_consecutive_fallbacks=2, parse_retries=0,
                        journal=str(journal))  # fmt: skip
    log = run(task, mock.model, tmp_path / "logs")
    score = score_of(log)
    assert score.value["team_success"] == 0.0 and math.isnan(score.value["finish_ratio"])
    assert (
        score.metadata["status"] == "stopped" and "no usable reply" in score.metadata["stop_reason"]
    )
    assert score.metadata["fallbacks"] == 6 and "6 fallback decision(s)" in score.explanation
    assert {r["status"] for r in decisions(journal, 1)} == {"fallback"}
    with Journal(journal, readonly=True) as opened:
        (game,) = opened.games()
    assert game.outcome["aborted"] is True and game.outcome["stopped"] == "requested"
    assert maze_envs_cli("verify", str(journal)).returncode == 0


def test_outages_are_recorded_and_left_out_of_the_metrics(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class ProviderDown(Exception):
        status_code = 503

    def down(*_: Any) -> ModelOutput:
        raise ProviderDown("service unavailable")

    journal = tmp_path / "games.sqlite"
    task = tasks.escape(preset="navigator", sizes=5, max_turns=3, seeds=0, journal=str(journal))
    log = run(task, mock_model(down).model, tmp_path / "logs")
    assert log.status == "success"  # a model outage never crashes the eval
    score = score_of(log)
    assert math.isnan(score.value) and score.reason == "outage"  # type: ignore[arg-type]
    assert score.metadata["outages"] == 9 and "9 decision(s)" in score.explanation
    assert log.results is not None and log.results.scores[0].unscored_samples == 1
    records = decisions(journal, 1)
    assert {r["status"] for r in records} == {"outage"}
    assert records[0]["outage"]["kind"] == "server" and records[0]["outage"]["status"] == 503
    # the console names the game left out and why (issue 23: not a silent nan)
    (warning,) = [r.getMessage() for r in caplog.records if r.name.endswith("inspect.scorer")]
    assert "maze_envs: sample 5x5/seed=0 left out of the metrics: 9 of 9 decisions" in warning
    assert "got no reply from inspect:mockllm/model" in warning and "service unavailable" in warning


def test_an_inspect_token_limit_ends_the_game_which_is_still_scored(tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"
    mock = mock_model(wall_follower)
    task = tasks.escape(**ESCAPE, seeds=0, journal=str(journal))
    log = run(task, mock.model, tmp_path / "logs", token_limit=500)  # 110 tokens a call
    assert log.samples is not None
    (sample,) = log.samples
    assert sample.limit is not None and sample.limit.type == "token" and sample.error is None
    score = score_of(log)
    assert score.value["team_success"] == 0.0
    assert "Inspect token limit reached" in score.metadata["stop_reason"]
    assert len(mock.calls) == 5  # the fifth call went over the limit; none after it
    with Journal(journal, readonly=True) as opened:
        (game,) = opened.games()
    assert game.outcome["aborted"] is True and "token limit" in game.outcome["stop_reason"]
    assert maze_envs_cli("verify", str(journal)).returncode == 0


def test_agimaze_labyrinths_are_scored_by_solved_and_rhae70(tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"
    pack = "TUTORIAL/STAGE-01/0002.json"
    plan = agimaze_plan(pack)
    mock = mock_model(agimaze_player([plan]))
    task = tasks.agimaze(packs=pack, seeds=0, history="planning", journal=str(journal))
    log = run(task, mock.model, tmp_path / "logs")
    score = score_of(log)
    row = score.metadata
    assert score.value == {"solved": 1.0, "rhae70": rhae(len(plan), row["max_steps"], True, 0.7)}
    assert row["steps"] == len(plan) == len(mock.calls)
    with Journal(journal, readonly=True) as opened:
        (game,) = opened.games()
    assert game.env_id == "maze_envs/AgiMaze-v0" and game.meta["harness"]["player"]["history"] == (
        "planning"
    )
    assert maze_envs_cli("verify", str(journal)).returncode == 0


def test_a_labyrinth_set_is_one_game_scored_by_its_target(tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"
    paths = [TUTORIAL_PATHS[0], TUTORIAL_PATHS[1]]
    plans = [agimaze_plan(p) for p in paths]
    mock = mock_model(agimaze_player(plans))
    task = tasks.agimaze_set(paths=",".join(paths), seeds=0, journal=str(journal))
    log = run(task, mock.model, tmp_path / "logs")
    score = score_of(log)
    assert score.value["solved"] == 1.0 and score.value["labyrinths_solved"] == 1.0
    target = score.metadata["labyrinths"][-1]
    assert (
        score.value["rhae70"] == target["rhae70"] == rhae(len(plans[1]), target["max_steps"], True)
    )
    assert len(mock.calls) == 2 + sum(map(len, plans))  # two starts, then the plans
    # set_memory (on by default): the second labyrinth's requests carry the first's conversation
    last = mock.calls[-1].input
    assert sum(m.role == "assistant" for m in last) > len(plans[1])
    with Journal(journal, readonly=True) as opened:
        (game,) = opened.games()
    assert game.env_id == "maze_envs/AgiMazeSet-v0" and game.outcome["solved"] == 2
    assert game.meta["task"]["paths"] == paths
    assert maze_envs_cli("verify", str(journal)).returncode == 0
    page = tmp_path / "set.html"
    assert maze_envs_cli("view", str(journal), "--game", "1", "--out", str(page)).returncode == 0


def test_the_default_set_is_the_tutorials_then_the_target(tmp_path: Path) -> None:
    task = tasks.agimaze_set(seeds="0-1", journal=str(tmp_path / "j.sqlite"))
    assert [s.id for s in task.dataset] == [
        "CLASSIC/MEDIUM/keys/6x6/0005.json/seed=0", "CLASSIC/MEDIUM/keys/6x6/0005.json/seed=1"
    ]  # fmt: skip
    game = task.dataset[0].metadata["game"]  # type: ignore[index]
    assert game["paths"] == [*TUTORIAL_PATHS, "CLASSIC/MEDIUM/keys/6x6/0005.json"]


@pytest.mark.parametrize(
    ("make", "kwargs", "message"),
    [
        (tasks.escape, {"temprature": 0.2}, "did you mean 'temperature'"),
        (tasks.escape, {"retries": 3}, "--max-retries"),
        (tasks.escape, {"base_url": "http://h"}, "--model-base-url"),
        (tasks.escape, {"config": {"radoi": False}}, "unknown Maze Escape config field"),
        (tasks.escape, {"preset": "nope"}, "preset"),
        (tasks.escape, {"sizes": "3"}, "width"),
        (tasks.escape, {"prompt_version": "v99"}, "v99"),
        (tasks.escape, {"output_mode": "xml"}, "output_mode"),
        (tasks.escape, {"seeds": "9-1"}, "backwards"),
        (tasks.agimaze, {"packs": "NOPE/none.json"}, "NOPE"),
        (tasks.agimaze, {"history": "dreams"}, "history"),
        (tasks.agimaze_set, {"targets": "TUTORIAL"}, "pack directory"),
        (
            tasks.agimaze_set,
            {"targets": "CLASSIC/EASY/keys/4x4/0000.json", "paths": "x"},
            "not both",
        ),
    ],
)
def test_task_parameters_are_checked_before_any_model_call(
    make: Any, kwargs: dict[str, Any], message: str, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=message):
        make(**kwargs, journal=str(tmp_path / "j.sqlite"))


def test_the_tasks_are_registered_as_maze_envs_and_resolve_by_name(tmp_path: Path) -> None:
    from inspect_ai._util.registry import registry_info

    journal = tmp_path / "games.sqlite"
    for make, name in ((tasks.escape, "escape"), (tasks.agimaze, "agimaze"),
                       (tasks.agimaze_set, "agimaze_set")):  # fmt: skip
        assert registry_info(make(journal=str(journal))).name == f"maze_envs/{name}"
    mock = mock_model(wall_follower)
    log = run("maze_envs/escape", mock.model, tmp_path / "logs",
              task_args={**ESCAPE, "seeds": "0", "journal": str(journal)})  # fmt: skip
    assert log.eval.task == "maze_envs/escape" and log.status == "success"
    assert score_of(log).value["team_success"] == 1.0


def test_the_default_journal_sits_beside_inspects_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "inspect-logs"))
    task = tasks.escape(sizes=5, seeds=0)
    assert task.metadata is not None
    assert task.metadata["journal"] == str(tmp_path / "inspect-logs" / "maze_envs.sqlite")
    monkeypatch.setenv("INSPECT_LOG_DIR", "s3://bucket/logs")
    monkeypatch.chdir(tmp_path)
    assert tasks.default_journal() == Path("logs") / "maze_envs.sqlite"


def test_epochs_play_each_game_again(tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"
    task = tasks.escape(**ESCAPE, seeds=0, journal=str(journal))
    log = run(task, mock_model(wall_follower).model, tmp_path / "logs", epochs=2)
    with Journal(journal, readonly=True) as opened:
        games = list(opened.games())
    assert len(games) == 2 and games[0].meta["run_key"] == games[1].meta["run_key"]
    assert log.results is not None and log.results.scores[0].metrics["mean"].value == 1.0
    assert json.dumps(games[0].outcome) == json.dumps(games[1].outcome)  # same maze, same play


def test_a_game_cut_by_an_inspect_time_limit_is_journaled_as_aborted(tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"
    never = asyncio.Event()

    async def hang(*_: Any) -> ModelOutput:  # a model that never answers
        await never.wait()
        raise AssertionError("unreachable")

    model = get_model("mockllm/model", custom_outputs=hang, memoize=False)
    task = tasks.escape(**ESCAPE, seeds=0, journal=str(journal))
    log = run(task, model, tmp_path / "logs", time_limit=1)  # only the hang reaches it
    assert log.samples is not None
    (sample,) = log.samples
    assert sample.limit is not None and sample.limit.type == "time"
    score = score_of(log)
    assert score.value["team_success"] == 0.0 and score.answer == "interrupted"
    with Journal(journal, readonly=True) as opened:
        (game,) = opened.games()
    assert game.outcome is not None and game.outcome["aborted"] is True
    assert maze_envs_cli("verify", str(journal)).returncode == 0


def test_a_policy_failure_fails_the_sample_and_the_journal_keeps_the_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from llm_policies.apps.inspect.policy import InspectPolicy

    journal = tmp_path / "games.sqlite"
    real = InspectPolicy.aact
    calls = {"n": 0}

    async def breaks_on_turn_two(self: InspectPolicy, observation: Any) -> Any:
        calls["n"] += 1
        if calls["n"] > 6:  # two whole turns of three agents, then a bug
            raise RuntimeError("a bug in the policy")
        return await real(self, observation)

    monkeypatch.setattr(InspectPolicy, "aact", breaks_on_turn_two)
    task = tasks.escape(**ESCAPE, seeds=0, journal=str(journal))
    log = run(task, mock_model(wall_follower).model, tmp_path / "logs", fail_on_error=False)
    assert log.samples is not None
    (sample,) = log.samples
    assert sample.error is not None and "a bug in the policy" in sample.error.message
    with Journal(journal, readonly=True) as opened:
        (game,) = opened.games()
    assert game.outcome is not None and game.outcome["stopped"] == "error"
    assert game.turn_count == 3  # turn 0 and the two turns played
    assert maze_envs_cli("verify", str(journal)).returncode == 0


def test_a_labyrinth_set_stops_cleanly_when_the_model_never_answers_usably(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "games.sqlite"
    mock = mock_model(lambda *_: text_output("no idea"))
    task = tasks.agimaze_set(
        paths=TUTORIAL_PATHS[0], seeds=0, parse_retries=0, max_consecutive_fallbacks=3,
        journal=str(journal),
    )  # fmt: skip
    log = run(task, mock.model, tmp_path / "logs")
    score = score_of(log)
    assert score.value["solved"] == 0.0 and score.value["labyrinths_solved"] == 0.0
    row = score.metadata
    assert row["status"] == "stopped" and row["fallbacks"] == len(mock.calls) >= 3
    assert row["finished"] == 0
    with Journal(journal, readonly=True) as opened:
        (game,) = opened.games()
    assert game.outcome is not None and game.outcome["stopped"] == "requested"
    assert "no usable reply" in game.outcome["stop_reason"]
    assert maze_envs_cli("verify", str(journal)).returncode == 0


def test_singular_parameter_names_are_accepted(tmp_path: Path) -> None:
    journal = str(tmp_path / "j.sqlite")
    assert [s.id for s in tasks.escape(size=6, seeds=0, journal=journal).dataset] == ["6x6/seed=0"]
    pack = "TUTORIAL/STAGE-02/0001.json"
    assert tasks.agimaze(pack=pack, journal=journal).dataset[0].id == f"{pack}/seed=0"
    assert len(tasks.agimaze(journal=journal).dataset) == 21  # the tutorials by default
    target = "CLASSIC/EASY/keys/4x4/0000.json"
    assert tasks.agimaze_set(target=target, journal=journal).dataset[0].id == f"{target}/seed=0"
    with pytest.raises(ValueError, match="not both"):
        tasks.escape(size=6, sizes=7, journal=journal)


def test_inspects_plain_mock_model_plays_through_the_fallbacks(tmp_path: Path) -> None:
    # `inspect eval maze_envs/escape --model mockllm/model`: the mock's default reply is no
    # action, so every decision falls back to STAY, and the game runs to its turn limit
    journal = tmp_path / "games.sqlite"
    task = tasks.escape(preset="navigator", sizes=5, max_turns=3, seeds=0, journal=str(journal))
    log = run(task, get_model("mockllm/model", memoize=False), tmp_path / "logs")
    score = score_of(log)
    assert score.value["team_success"] == 0.0
    assert score.metadata["fallbacks"] == score.metadata["decisions"] == 9
    assert score.metadata["outages"] == 0 and score.metadata["status"] == "ok"
    assert maze_envs_cli("verify", str(journal)).returncode == 0
