"""The studies end to end with the stand-in model: list, show, run, report, rerun, dry run.

Every shipped study runs through the real harness (prompts built, replies parsed, notebooks
and radio written) and the benchmark runner, on one small maze, and writes a report naming
every arm; a rerun against the same response cache sends nothing and reproduces every figure.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from llm_policies.apps.study_run import main as run_main
from maze_envs.bench.rowstore import RowStore
from maze_envs.cli import main as cli_main
from maze_envs.studies import Study, find, shipped
from maze_envs.studies.cli import list_main, report_main, show_main

STUDIES = (
    "ladder",
    "radio",
    "coordinates",
    "meeting-alert",
    "notebook",
    "check-and-exits",
    "temperature",
    "output-mode",
    "models",
)
SMALL = ["--seeds", "0", "--size", "7", "--max-turns", "16", "--quiet"]
STAND_IN = "stand-in:wall-follower"


def _rows(folder: Path) -> list[dict]:
    return list(RowStore(folder / "rows.jsonl").load().values())


def test_the_nine_studies_ship_with_their_questions(capsys: pytest.CaptureFixture[str]) -> None:
    assert [study.name for study, _ in shipped()] == list(STUDIES)
    assert list_main([]) == 0
    printed = capsys.readouterr().out
    for study, _ in shipped():
        assert f"{study.number}. {study.name}:" in printed
        assert study.question.split()[0] in printed
    # sizes in numeric order (as text, 11x11 came before 9x9)
    assert "(9x9, 11x11, 13x13, 15x15, 17x17)" in " ".join(printed.split())


@pytest.mark.parametrize("name", STUDIES)
def test_each_study_pairs_at_least_20_mazes_per_arm_by_default(name: str) -> None:
    study, _, _ = find(name)
    for arm in study.arms:
        mazes = len(study.seeds) * len(study.setup_of(arm).sizes)
        assert mazes >= 20, (name, arm.name, mazes)
    assert study.compare or study.compare_models
    assert study.tokens.source and study.tokens.input > 1 and study.tokens.output > 1


def test_show_prints_the_file_and_a_copy_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert show_main(["radio"]) == 0
    text = capsys.readouterr().out
    assert Study.from_toml(text).name == "radio"
    mine = tmp_path / "my-radio.toml"
    mine.write_text(text.replace('seeds = "0-19"', 'seeds = "3"'), "utf-8")
    out = tmp_path / "run"
    assert run_main([str(mine), "--model", STAND_IN, "--out", str(out), *SMALL[2:]]) == 0
    assert {row["seed"] for row in _rows(out)} == {3}
    assert (out / "study.toml").read_text("utf-8") == mine.read_text("utf-8")


def test_unknown_studies_and_folders_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert show_main(["radoi"]) == 2
    assert "did you mean 'radio'" in capsys.readouterr().err
    assert report_main([str(tmp_path)]) == 2
    assert "holds no study run" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        run_main(["radio", "--model", STAND_IN, "--arms", "radio up"])
    assert exit_.value.code == 2
    assert "no arm 'radio up'" in capsys.readouterr().err


@pytest.mark.parametrize("name", STUDIES)
def test_each_study_runs_offline_and_reports_every_arm(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    assert run_main([name, "--model", STAND_IN, "--out", str(out), *SMALL]) == 0
    study, _, _ = find(name)
    report = orjson.loads((out / "report.json").read_bytes())
    markdown = (out / "report.md").read_text("utf-8")
    page = (out / "report.html").read_text("utf-8")
    assert [arm["arm"] for arm in report["arms"]] == [arm.name for arm in study.arms]
    for arm in report["arms"]:
        assert arm["games"] == 1 and arm["excluded"] == 0
        assert f"| {arm['arm']} ({arm['policy']}) |" in markdown
        if arm["model"]:  # the stand-in played through the harness: tokens, no cost
            assert arm["input_tokens"] > 0 and arm["cost_status"] == "local"
    pairs = report["comparisons"]
    assert pairs and all(p["pairs"] == 1 for p in pairs)
    for key in study.metrics:
        assert key in report["arms"][0]["measures"]
    assert "<table>" in page and "Paired comparisons" in page
    assert ("data:image/png;base64" in page) or ("plots need matplotlib" in page)
    rows = _rows(out)
    mazes = {(r["setup"], r["seed"]): r["fastest"] for r in rows}
    assert len(set(mazes.values())) == 1  # every arm played the same maze (same fastest finish)


def test_temperature_replays_recorded_decisions_beside_full_games(tmp_path: Path) -> None:
    out = tmp_path / "t"
    assert run_main(["temperature", "--model", STAND_IN, "--out", str(out), *SMALL]) == 0
    replay = json.loads((out / "replay.json").read_text("utf-8"))[STAND_IN]
    assert replay["settings"] == {"temperature": 0.2}
    assert replay["recorded_arm"] == "T=1.0" and replay["full_arm"] == "T=0.2"
    assert 0 < replay["decisions"] <= 60
    assert replay["full_games"]["games"] == 1
    # the stand-in ignores the temperature: the re-asked prompts get the recorded replies
    assert replay["agreement"] == 1.0
    assert "Decision replay beside full games" in (out / "report.md").read_text("utf-8")


def test_models_study_puts_the_classical_team_beside_every_model(tmp_path: Path) -> None:
    out = tmp_path / "m"
    models = ["--model", STAND_IN, "--model", "stand-in:wall-follower-left"]
    assert run_main(["models", *models, "--out", str(out), *SMALL]) == 0
    report = orjson.loads((out / "report.json").read_bytes())
    arms = [(a["arm"], a["policy"]) for a in report["arms"]]
    assert arms == [
        ("last setting", STAND_IN),
        ("last setting", "stand-in:wall-follower-left"),
        ("classical team", "cooperative"),
    ]
    names = {p["name"] for p in report["comparisons"]}
    assert f"last setting ({STAND_IN}) vs classical team (cooperative)" in names
    assert f"last setting ({STAND_IN}) vs last setting (stand-in:wall-follower-left)" in names
    assert all(a["fastest"]["mean"] > 0 for a in report["arms"])
    assert "fastest possible finish" in (out / "report.md").read_text("utf-8")


def test_a_rerun_is_free_and_exact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "radio"
    args = ["radio", "--model", STAND_IN, "--out", str(out), *SMALL]
    assert run_main(args) == 0
    first = sorted(_rows(out), key=lambda r: r["run_key"])
    assert sum(r["requests"] for r in first) > 0
    assert run_main(args) == 2  # the folder holds the run: never overwritten silently
    assert "--resume" in capsys.readouterr().err
    assert run_main([*args, "--fresh"]) == 0
    again = sorted(_rows(out), key=lambda r: r["run_key"])
    assert sum(r["requests"] for r in again) == 0  # every reply came from the cache
    for one, other in zip(first, again, strict=True):
        for column in ("success", "finish_turn", "input_tokens", "output_tokens", "decisions"):
            assert one[column] == other[column]
    elsewhere = tmp_path / "elsewhere"
    cache = ["--cache", str(out / "responses.sqlite")]
    assert run_main([*args[:3], "--out", str(elsewhere), *SMALL, *cache]) == 0
    assert sum(r["requests"] for r in _rows(elsewhere)) == 0


def test_report_is_rewritten_from_the_folder(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert run_main(["notebook", "--model", STAND_IN, "--out", str(out), *SMALL]) == 0
    before = (out / "report.md").read_text("utf-8")
    (out / "report.md").unlink()
    (out / "report.html").unlink()
    assert cli_main(["study", "report", str(out)]) == 0
    assert (out / "report.md").read_text("utf-8") == before
    assert (out / "report.html").is_file()


def test_dry_run_prints_games_calls_and_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "dry"
    args = ["radio", "--model", "anthropic:claude-haiku-4-5", "--out", str(out), "--dry-run"]
    assert run_main([*args, "--seeds", "0-4"]) == 0
    printed = capsys.readouterr().out
    study, _, _ = find("radio")
    calls = 5 * 3 * 80  # 5 mazes x 3 agents x 80 turns, per arm
    expected = round(calls * study.tokens.turn_share)
    tokens = f"{expected * study.tokens.input:,} / {expected * study.tokens.output:,}"
    line = (
        f"| radio on | anthropic:claude-haiku-4-5 | 12x12 | 5 | {expected} ({calls}) | {tokens} |"
    )
    assert line in printed
    assert f"{2 * expected} model calls expected, {2 * calls} at most" in printed
    assert "cost estimate: $" in printed and study.tokens.source in printed
    assert not out.exists()  # nothing played, nothing written
    assert run_main(["models", "--model", STAND_IN, "--dry-run", "--seeds", "0"]) == 0
    assert "– (classical)" in capsys.readouterr().out


def test_the_dry_run_estimate_is_within_one_and_a_half_times_a_stand_in_run(
    tmp_path: Path,
) -> None:
    # the [tokens] tables are the stand-in's own spend per call: an estimate that assumed 150
    # output tokens a call was 4-6x high on output (benchmarks/dry_run_calibration.py)
    from llm_policies.apps.study_plan import study_plan

    study, _, _ = find("radio")
    lines = study_plan(study, [STAND_IN], seeds=[0])
    estimated_in = sum(line.input_tokens for line in lines)
    estimated_out = sum(line.output_tokens for line in lines)
    out = tmp_path / "run"
    assert (
        run_main(["radio", "--model", STAND_IN, "--seeds", "0", "--out", str(out), "--quiet"]) == 0
    )
    rows = _rows(out)
    spent_in = sum(int(r["input_tokens"]) for r in rows)
    spent_out = sum(int(r["output_tokens"]) for r in rows)
    assert 1 / 1.5 <= estimated_out / spent_out <= 1.5
    assert 1 / 1.5 <= (estimated_in + estimated_out) / (spent_in + spent_out) <= 1.5


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("scripted", "'scripted' names a model provider"),
        ("scripted", "as scripted:<model>; offline, with no model at all: stand-in:wall-follower"),
        ("explorer", "'explorer' is not a language model"),
        ("antropic:x", "did you mean 'anthropic'?"),
    ],
)
def test_a_model_that_is_not_one_is_one_clear_line(
    model: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 23: `--model scripted` said "unknown escape policy 'scripted'" while listing
    `scripted` as a known prefix."""
    with pytest.raises(SystemExit) as exit_:
        run_main(["radio", "--model", model, "--dry-run"])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith(f"maze-envs study run: error: --model {model}: ")
    assert message in error and error.count("\n") == 1
    assert "unknown escape policy" not in error


def test_arms_that_would_play_different_mazes_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = find("radio")[1].replace(
        "set = { radio = false }", "set = { radio = false, landmark_count = 2 }"
    )
    mine = tmp_path / "unpaired.toml"
    mine.write_text(text, "utf-8")
    with pytest.raises(SystemExit) as exit_:
        run_main([str(mine), "--model", STAND_IN, "--out", str(tmp_path / "o"), *SMALL])
    assert exit_.value.code == 2
    assert "play different mazes" in capsys.readouterr().err


def test_arms_that_differ_only_in_a_setting_the_model_drops_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # pydantic-ai sends Anthropic requests without a temperature: the temperature study's two
    # arms would be one arm under two names, so the run is refused before anything is played
    out = tmp_path / "o"
    with pytest.raises(SystemExit) as exit_:
        run_main(["temperature", "--model", "anthropic:claude-sonnet-5-5", "--out", str(out)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "arms 'T=0.2' and 'T=1.0' differ only in temperature" in err
    assert "anthropic:claude-sonnet-5-5 drops" in err
    assert not out.exists()
    # a model whose requests carry the temperature plays the study
    chat = ["--model", "openai-chat:gpt-4o-mini", "--seeds", "0", "--dry-run"]
    assert run_main(["temperature", *chat]) == 0
