"""Intervals, per-game metrics, aggregates and the written results, with known values."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from maze_envs.bench.metrics import EscapeTally, UsageTally, agimaze_scores
from maze_envs.bench.plots import write_plots
from maze_envs.bench.progress import make_progress
from maze_envs.bench.report import csv_text, markdown, write_results
from maze_envs.bench.results import agimaze_summary, escape_summary, paired_difference, summarize
from maze_envs.bench.stats import bootstrap_mean, wilson_interval
from maze_envs.policies.interface import Decision, Usage

# --- intervals -------------------------------------------------------------------------------


def test_wilson_interval_known_values() -> None:
    # Textbook values (Newcombe 1998, table I): 81/263 -> 0.2553..0.3662
    low, high = wilson_interval(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and round(high, 4) == 0.2775
    low, high = wilson_interval(10, 10)
    assert round(low, 4) == 0.7225 and high == 1.0
    with pytest.raises(ValueError, match="successes <= trials"):
        wilson_interval(3, 2)


def test_bootstrap_is_seeded_and_covers_the_mean() -> None:
    values = list(np.random.default_rng(5).normal(10.0, 2.0, size=200))
    first, again = bootstrap_mean(values, seed=1), bootstrap_mean(values, seed=1)
    assert first == again  # the same results always print the same interval
    assert first.low is not None and first.high is not None and first.mean is not None
    assert first.low < first.mean < first.high
    # close to the normal-theory interval of the mean: +-1.96 s / sqrt(n)
    half = 1.96 * float(np.std(values, ddof=1)) / math.sqrt(len(values))
    assert abs((first.high - first.low) / 2 - half) < 0.15 * half
    # no zero-width interval from a sample without spread (issue 13): the mean and its n only
    constant = bootstrap_mean([3.0, 3.0, 3.0])
    assert (constant.mean, constant.low, constant.high, constant.n) == (3.0, None, None, 3)
    single = bootstrap_mean([73.71])
    assert (single.mean, single.low, single.high, single.n) == (73.71, None, None, 1)


# --- per-game metrics ------------------------------------------------------------------------


def test_escape_tally_counts_every_kind_of_move() -> None:
    tally = EscapeTally(("A", "B", "C"))
    tally.add_turn(
        {
            "A": {"move": "moved", "radio": "sent"},
            "B": {"move": "bumped_outer_brick", "radio": "refused"},
            "C": {"move": "doorway", "radio": "none"},
        }
    )
    tally.add_turn(
        {
            "A": {"move": "stayed", "radio": "none"},
            "B": {"move": "bumped_interior_wall", "radio": "sent"},
            "C": {"move": "stayed", "radio": "none"},
        }
    )
    outcome = {
        "success": False,
        "turns": 2,
        "first_visit_turn": {"A": None, "B": None, "C": 1},
        "fastest_possible_finish": 4,
    }
    row = tally.finish(outcome, {"A": "é", "B": "ab", "C": ""}, max_turns=10)
    assert row == {
        "success": False,
        "finish_turn": None,
        "turns": 2,
        "first_out": 1,
        "agents_out": 1,
        "exit_turns": {"A": None, "B": None, "C": 1},
        "fastest": 4,
        "finish_ratio": None,
        "finish_ratio_censored": 2.5,
        "wall_moves": 2,
        "wall_move_rate": 0.5,
        "stays": 2,
        "radio_messages": 2,
        "notebook_bytes": 4,
    }


@pytest.mark.parametrize(
    ("steps", "solved", "expected"),
    [
        (30, True, {"success": True, "good": True, "late": False, "x1_solved": True}),
        (36, True, {"success": True, "good": False, "late": True, "x1_solved": True}),
        (71, True, {"success": False, "good": False, "late": False, "x1_solved": False}),
        (350, False, {"success": False, "good": False, "late": False, "x1_solved": False}),
    ],
)
def test_agimaze_scores_follow_the_benchmarks_convention(
    steps: int, solved: bool, expected: dict[str, bool]
) -> None:
    scores = agimaze_scores(
        steps=steps, solved=solved, max_steps=70, soft_good_steps=35, budget=350
    )
    assert {k: scores[k] for k in expected} == expected
    assert scores["step_fraction"] == steps / 70
    if solved:
        assert scores["rhae70"] == min(1.0, (0.7 * 70 / steps) ** 2)
        assert scores["rhae60"] == min(1.0, (0.6 * 70 / steps) ** 2)
        assert scores["rhae80"] == min(1.0, (0.8 * 70 / steps) ** 2)
    else:
        assert scores["rhae70"] == 0.0


def test_soft_budget_defaults_to_half_of_max_steps() -> None:
    scores = agimaze_scores(steps=50, solved=True, max_steps=100, soft_good_steps=None, budget=500)
    assert scores["soft_good_steps"] == 50 and scores["good"] is True


def test_usage_tally_sums_tokens_cost_statuses_and_quirks() -> None:
    tally = UsageTally()
    priced = Usage(
        input_tokens=100, output_tokens=10, requests=1, cost_usd=0.01, cost_status="priced"
    )
    tally.add("A", Decision("N", record={"quirks": {"code_fence": 2}}, usage=priced))
    tally.add(
        "A", Decision("N", record={"quirks": ["null_string"]}, usage=priced, status="fallback")
    )
    tally.add("B", Decision("STAY", status="outage"))
    row = tally.row()
    assert (row["decisions"], row["fallbacks"], row["outages"]) == (3, 1, 1)
    assert (row["input_tokens"], row["output_tokens"], row["requests"]) == (200, 20, 2)
    assert row["cost_usd"] == pytest.approx(0.02) and row["cost_status"] == "priced"
    assert row["quirks"] == {"code_fence": 2, "null_string": 1}
    tally.add("B", Decision("N", usage=Usage(input_tokens=5, cost_status="unknown")))
    row = tally.row()
    assert row["cost_usd"] is None and row["cost_status"] == "unknown"  # never counted as 0


def test_games_without_reported_usage_have_no_token_columns() -> None:
    tally = UsageTally()
    tally.add("A", Decision("N"))
    row = tally.row()
    assert row["input_tokens"] is None and row["cost_usd"] is None and row["cost_status"] == "none"


# --- aggregates ------------------------------------------------------------------------------


def escape_row(
    setup: str, policy: str, seed: int, success: bool, ratio: float, **extra: Any
) -> dict[str, Any]:
    return {
        "env": "escape",
        "setup": setup,
        "size": "9x9",
        "policy": policy,
        "seed": seed,
        "status": "ok",
        "privileged": False,
        "success": success,
        "finish_turn": 10 * ratio if success else None,
        "finish_ratio": ratio if success else None,
        "finish_ratio_censored": ratio if success else 20.0,
        **extra,
    }


def test_escape_summary_counts_rates_and_cost_per_success() -> None:
    rows = [
        escape_row(
            "s",
            "p",
            0,
            True,
            2.0,
            cost_usd=0.5,
            cost_status="priced",
            input_tokens=10,
            output_tokens=1,
        ),
        escape_row(
            "s",
            "p",
            1,
            True,
            4.0,
            cost_usd=0.25,
            cost_status="priced",
            input_tokens=10,
            output_tokens=1,
        ),
        escape_row(
            "s",
            "p",
            2,
            False,
            0.0,
            cost_usd=0.75,
            cost_status="priced",
            input_tokens=10,
            output_tokens=1,
        ),
        escape_row("s", "q", 0, False, 0.0),
    ]
    p, q = escape_summary(rows)
    assert (p["games"], p["successes"], p["success_rate"]) == (3, 2, 2 / 3)
    assert (p["success_low"], p["success_high"]) == wilson_interval(2, 3)
    assert p["finish_ratio"]["mean"] == 3.0 and p["finish_ratio"]["n"] == 2
    assert p["finish_ratio_censored"]["mean"] == pytest.approx(26 / 3)
    assert p["cost_usd"] == 1.5 and p["cost_per_success"] == 0.75  # failures' cost included
    assert (p["input_tokens"], p["output_tokens"]) == (30, 3)
    assert (
        q["successes"] == 0 and q["cost_per_success"] is None and q["finish_ratio"]["mean"] is None
    )


def agimaze_row(policy: str, stage: str, steps: int, solved: bool) -> dict[str, Any]:
    return {
        "env": "agimaze",
        "setup": "packs",
        "policy": policy,
        "seed": 0,
        "status": "ok",
        "privileged": policy == "oracle",
        "group": "TRAINING",
        "family": "S0-keys",
        "stage": stage,
        "size": "3x3",
        **agimaze_scores(steps=steps, solved=solved, max_steps=70, soft_good_steps=35, budget=350),
    }


def test_agimaze_summary_by_stage_family_group() -> None:
    rows = [
        agimaze_row("random", "STAGE-01", 20, True),  # good
        agimaze_row("random", "STAGE-01", 50, True),  # late
        agimaze_row("random", "STAGE-01", 200, True),  # solved in budget, not a success
        agimaze_row("random", "STAGE-01", 350, False),
        agimaze_row("random", "STAGE-02", 10, True),
        agimaze_row("oracle", "STAGE-01", 9, True),
    ]
    stages = agimaze_summary(rows, "stage")
    first = stages[0]
    assert (first["policy"], first["stage"], first["episodes"]) == ("random", "STAGE-01", 4)
    assert (first["success_pct"], first["good_pct"], first["late_pct"]) == (50.0, 25.0, 25.0)
    assert (first["solved"], first["x1_solved"]) == (3, 2)
    assert first["real_random_success_pct"] == 24.3  # the real table's S0-keys STAGE-01
    assert first["rhae70"]["mean"] == pytest.approx((1 + (49 / 50) ** 2 + (49 / 200) ** 2) / 4)
    assert [s["privileged"] for s in stages] == [False, False, True]
    (family_random, family_oracle) = agimaze_summary(rows, "family")
    assert family_random["episodes"] == 5 and family_oracle["rhae70"]["mean"] == 1.0
    overall = agimaze_summary(rows, "overall")
    assert [o["episodes"] for o in overall] == [5, 1]
    with pytest.raises(ValueError, match="unknown level"):
        agimaze_summary(rows, "planet")


def test_paired_differences_pair_games_by_size_and_seed() -> None:
    rows = [escape_row("on", "coop", s, True, 2.0 + s) for s in range(4)]
    rows += [escape_row("off", "coop", s, True, 3.0 + 2 * s) for s in range(3)]  # seed 3 missing
    diff = paired_difference(rows, ("on", "coop"), ("off", "coop"), "finish_ratio")
    estimate = diff["9x9"]
    assert estimate.n == 3 and estimate.mean == pytest.approx(-2.0)


# --- outputs ---------------------------------------------------------------------------------


def test_results_files(tmp_path: Path) -> None:
    rows = [
        {
            **escape_row("s", "p", 0, True, 2.0),
            "exit_turns": {"A": 3, "B": None},
            "quirks": {"x": 1},
        },
        agimaze_row("random", "STAGE-01", 20, True),
    ]
    summary = summarize(rows)
    paths = write_results(tmp_path, {"name": "tiny"}, rows, summary)
    table = list(csv.DictReader(io.StringIO(paths["csv"].read_text())))
    assert len(table) == 2
    assert table[0]["exit_turn_A"] == "3" and table[0]["exit_turn_B"] == ""
    assert orjson.loads(table[0]["quirks"]) == {"x": 1}
    assert table[1]["rhae70"] == "1.0" and table[1]["good"] == "True"
    data = orjson.loads(paths["json"].read_bytes())
    assert data["games"] == rows and data["summary"]["escape"][0]["successes"] == 1
    text = paths["markdown"].read_text()
    assert text.startswith("# tiny")
    assert "| Family | Stage | Size | soft/hard |" in text
    assert "| S0-keys | STAGE-01 | 3x3 | 35/70 | random | 1 | 100.0 | 100.0 | 0.0 |" in text
    assert "| s | 9x9 | p | 1/1 = 100% [20.7, 100.0] |" in text
    assert csv_text([]) == "\n"


def test_markdown_shows_tokens_and_cost_only_when_reported() -> None:
    plain = markdown({"name": "x"}, summarize([escape_row("s", "p", 0, True, 2.0)]))
    assert "cost / success" not in plain
    paid = escape_row("s", "p", 0, True, 2.0, input_tokens=1200, output_tokens=80, cost_usd=0.02)
    paid |= {"cost_status": "priced", "quirks": {"code_fence": 3}}
    text = markdown({"name": "x"}, summarize([paid]))
    assert "1,200/80" in text and "$0.0200" in text and "code_fence 3" in text


def test_plots_are_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    rows = [escape_row("s", "p", s, s % 2 == 0, 2.0 + s) for s in range(6)]
    rows += [{**r, "size": "13x13"} for r in rows]
    rows += [agimaze_row("random", "STAGE-01", 20 + s, True) for s in range(3)]
    paths, notes = write_plots(tmp_path, summarize(rows))
    assert notes == []
    assert [p.name for p in paths] == ["escape_by_size.png", "agimaze_rhae70.png"]
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000


def test_cost_per_success_is_plotted_when_known(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    rows = [
        escape_row("s", "llm", s, s < 2, 2.0, cost_usd=0.1, cost_status="priced") for s in range(4)
    ]
    paths, _ = write_plots(tmp_path, summarize(rows))
    assert [p.name for p in paths] == ["escape_by_size.png", "cost_per_success.png"]


def test_progress_lines_and_quiet() -> None:
    stream = io.StringIO()
    progress = make_progress(4, 1, stream=stream)
    for row in ({"env": "escape", "success": True}, {"env": "escape", "success": False}):
        progress.update(row)
    progress.update({"env": "agimaze", "solved": True, "success": False})
    progress.close()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "bench: 1 of 4 games already done (resumed)"
    assert lines[-1].startswith("bench: 4/4 games (100%), 2 successes, ")
    quiet = io.StringIO()
    silent = make_progress(4, quiet=True, stream=quiet)
    silent.update({"env": "escape", "success": True})
    silent.close()
    assert quiet.getvalue() == ""


def test_every_count_column_says_its_unit_and_no_heading_says_per_overall() -> None:
    """Issue 23: `first out`, `STAY`, `radio`, `notebook B` had no unit; "per overall"."""
    rows = [escape_row("s", "p", 0, True, 2.0)]
    rows += [agimaze_row("random", "STAGE-01", 20, True)]
    text = markdown({"name": "x"}, summarize(rows))
    header = next(line for line in text.splitlines() if line.startswith("| setup | size |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    for name in ("first out (turn)", "STAYs / game", "radio msgs / game", "notebook bytes (end)"):
        assert name in columns
    assert not {"first out", "STAY", "radio", "notebook B"} & set(columns)
    assert "### packs: overall" in text and "per overall" not in text
    assert "### packs: per family" in text and "### packs: per group" in text
