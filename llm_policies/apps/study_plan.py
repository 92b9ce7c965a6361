"""What a study run will cost before it runs: its games, model calls and a price estimate.

``maze-envs study run NAME --model SPEC --dry-run`` prints, per arm, maze size and model: the
games, the model calls to expect and at most, and the cost that many calls of the study's
typical size would have (genai-prices, the same prices :mod:`llm_policies.accounting` charges
real calls at). The typical size of a call (input and output tokens, the share of the input a
provider's prompt cache reads) and the share of the turn limit a game typically lasts are the
study file's ``[tokens]`` table, which says where its figures come from: input and output are
what the offline stand-in model spent per call at the study's settings, so the estimate is
within 1.5x of a stand-in run's tokens (``benchmarks/dry_run_calibration.py``; it was 4-6x high
on output while the tables assumed 150 output tokens a call).

Calls: every agent makes one per turn of its game, so a game makes at most
``agents x max_turns`` calls; the expected number is that times ``turn_share``. Arms played by a
classical policy make none. A model the price list does not know is priced ``unknown``; a local
one (Ollama, the stand-ins) costs 0.

    >>> from maze_envs.studies import find
    >>> study = find("radio")[0]
    >>> plan = study_plan(study, ["anthropic:claude-haiku-4-5"], seeds=[0, 1])
    >>> [(line.arm, line.games, line.max_calls) for line in plan]
    [('radio on', 2, 480), ('radio off', 2, 480)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from llm_policies.accounting import price
from maze_envs.bench.policyspec import PolicySpec
from maze_envs.policies.interface import Usage
from maze_envs.studies.spec import Study


@dataclass(frozen=True)
class PlanLine:
    """The games of one arm at one maze size played by one policy, and what they cost."""

    arm: str
    policy: str
    size: str
    games: int
    max_calls: int
    expected_calls: int
    cost_usd: float | None
    cost_status: str
    input_tokens: int = 0
    output_tokens: int = 0


def study_plan(
    study: Study,
    models: Sequence[str],
    *,
    seeds: Sequence[int] | None = None,
    sizes: Sequence[tuple[int, int]] | None = None,
    max_turns: int | None = None,
    arms: Sequence[str] | None = None,
) -> list[PlanLine]:
    """One :class:`PlanLine` per arm, size and policy of the run (see the module docstring)."""
    specs = [PolicySpec.parse(m) for m in models]
    experiment = study.experiment(specs, seeds=seeds, sizes=sizes, max_turns=max_turns, arms=arms)
    games = len(experiment.seeds)
    lines = []
    for setup in experiment.escape:
        arm = study.arm(setup.name)
        tokens = study.tokens_of(arm)
        for case in setup.cases():
            config = case.game_config
            for entry in setup.policies:
                if not arm.uses_model:
                    lines.append(
                        PlanLine(arm.name, entry.name, case.size, games, 0, 0, 0.0, "none")
                    )
                    continue
                spec = entry.specs[0]
                most = games * len(config.agents) * config.max_turns
                expected = round(most * tokens.turn_share)
                cached = round(expected * tokens.input * tokens.cache_read_share)
                usage = price(
                    spec.spec,
                    Usage(
                        input_tokens=expected * tokens.input,
                        output_tokens=expected * tokens.output,
                        cache_read_tokens=cached,
                        requests=expected,
                    ),
                    local=bool(spec.options.get("local")),
                )
                lines.append(
                    PlanLine(
                        arm.name,
                        entry.name,
                        case.size,
                        games,
                        most,
                        expected,
                        usage.cost_usd,
                        usage.cost_status,
                        expected * tokens.input,
                        expected * tokens.output,
                    )
                )
    return lines


def plan_text(study: Study, lines: Sequence[PlanLine]) -> str:
    """The dry run's table and totals, as printed."""
    header = (
        "| arm | policy | size | games | model calls expected (at most) | tokens expected "
        "(in / out) | cost estimate |"
    )
    out = [header, "|---|---|---|---|---|---|---|"]
    for line in lines:
        out.append(
            f"| {line.arm} | {line.policy} | {line.size} | {line.games} | "
            f"{line.expected_calls} ({line.max_calls}) | "
            f"{line.input_tokens:,} / {line.output_tokens:,} | "
            f"{_money(line.cost_usd, line.cost_status)} |"
        )
    games = sum(line.games for line in lines)
    calls = sum(line.expected_calls for line in lines)
    most = sum(line.max_calls for line in lines)
    priced = [line for line in lines if line.cost_status in ("priced", "local", "none")]
    total = sum(line.cost_usd or 0.0 for line in priced)
    unknown = len(lines) - len(priced)
    tokens = study.tokens
    out += [
        "",
        f"{games} games; {calls} model calls expected, {most} at most (every agent, every turn).",
        f"cost estimate: ${total:.2f}"
        + (f" plus {unknown} row(s) of unknown price" if unknown else "")
        + " (genai-prices at today's prices).",
        f"per call: {tokens.input} input tokens ({100 * tokens.cache_read_share:.0f}% read from "
        f"the prompt cache), {tokens.output} output tokens; a game lasts "
        f"{100 * tokens.turn_share:.0f}% of its turn limit. Source: {tokens.source}",
    ]
    return "\n".join(out)


def _money(value: float | None, status: str) -> str:
    if status == "none":
        return "– (classical)"
    if status == "local":
        return "$0 (local)"
    if value is None:
        return "unknown (not in genai-prices)"
    return f"${value:.2f}"
