"""Train the shipped Maze Escape team: shared-parameter PPO on the batched engine.

One command reproduces ``maze_envs/policies/learned/data/escape-ppo.npz`` (``--policy
learned:escape-ppo``) from a seed:

    python examples/train_escape_ppo.py --seed 0 --out out/escape-ppo

One network (Stable-Baselines3 ``MlpPolicy`` PPO) acts for every agent of every game of
``maze_escape_v1.vector_env`` (the rows of the vector env are the agents of all games), reading the
flattened numeric observation of the ``full`` preset. The training reward is the game's plus the
shaping of :class:`wrappers.escape_vector_shaping.EscapeVectorShaping` (progress along the maze
towards the exit, the first visit of each cell, a cost per turn until the agent is out; the rules
are unchanged). Every
``--eval-every`` agent-steps the greedy policy plays ``--eval-games`` held-out games of the
batched engine (first game of each slot, unshaped) and the script prints the team success and
finish / fastest possible finish; the random and explorer baselines play the same mazes in the
scalar env (each game exported from the batched engine), once, for the plot's level lines.

Writes to ``--out``: ``escape-ppo.npz`` (the weights and their trained settings, for
``--policy learned:path/escape-ppo.npz``), ``model.zip`` (the SB3 model with the same settings,
for ``--policy sb3:path/model.zip``), ``curve.json`` and ``curve.png`` (team success and mean
finish / fastest over agent-steps, the random and explorer levels as lines), and says whether
the network equals the shipped one (value for value).

Seeds: training games come from the batched engine's maze stream seeded with ``--seed``; the
curve's evaluation games from the stream seeded with ``EVAL_SEED_OFFSET + seed`` (another
stream); the published tables (``docs/policies.md``) are ``maze-envs bench`` runs on scalar-env
seeds (another generator again). Needs ``pip install 'maze-envs[rl]'``.

Run: ``python examples/train_escape_ppo.py [--seed 0] [--out DIR] [--agent-steps N] [--quick]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from maze_envs import maze_escape_v1
from maze_envs.escape.config import Config
from maze_envs.escape.convert import observation_to_model
from maze_envs.escape.numeric import NumericLayout
from maze_envs.policies import as_decision, escape_episode, make_team
from maze_envs.policies.learned import (
    TrainedSettings,
    network_from_sb3,
    read_weights,
    save_weights,
    shipped_weights,
)
from maze_envs.policies.learned.policy import OBSERVATION_FIELDS
from maze_envs.policies.learned.sb3 import save_sb3_settings
from wrappers.escape_learned_inputs import EscapeLearnedInputs
from wrappers.escape_vector_shaping import EscapeVectorShaping, exit_distances

DEFAULT_OUT = Path("out/escape-ppo")
INSTALL_HINT = "this example needs Stable-Baselines3 and torch: pip install 'maze-envs[rl]'"
#: The curve's evaluation games come from the batched maze stream of this seed (+ the seed).
EVAL_SEED_OFFSET = 1_000_000
#: Choose actions for a batch of observations (rows x width) -> move codes.
Chooser = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Recipe:
    """Everything that decides the trained weights, besides the seed (the shipped run's values)."""

    preset: str = "full"
    size: int = 7
    max_turns: int = 120
    num_agents: int = 3
    games: int = 128  # batched games: 384 rows of experience per step
    agent_steps: int = 3_000_000
    # what the network reads (maze_envs.policies.learned.inputs): the observation without the raw
    # trail coordinates, its own previous move, and what the trail says about the neighbours
    raw_trail: bool = False
    additions: tuple[str, ...] = ("previous_move", "trail_neighbours")
    frame_stack: int = 1
    progress: float = 0.1  # shaping: per move towards the exit (EscapeVectorShaping)
    novelty: float = 0.05  # shaping: per first visit of a cell
    step_cost: float = 0.05  # shaping: per turn before the agent's first exit visit
    net_arch: tuple[int, ...] = (128, 128)
    learning_rate: float = 1e-3
    n_steps: int = 64
    batch_size: int = 1024
    n_epochs: int = 8
    gamma: float = 0.98
    gae_lambda: float = 0.95
    ent_coef: float = 0.005
    eval_games: int = 400
    eval_every: int = 250_000
    # the full preset, with absolute coordinates and a trail as long as the game
    overrides: dict[str, Any] = field(
        default_factory=lambda: {"coordinates": "absolute", "trail_length": 120}
    )

    def feature_names(self) -> tuple[str, ...]:
        """The observation entries the network reads."""
        names = NumericLayout(self.config()).names
        return tuple(n for n in names if self.raw_trail or not n.startswith("trail"))

    def inputs(self, vec: Any) -> Any:
        """``vec`` with the network's frames as observations."""
        return EscapeLearnedInputs(vec, self.feature_names(), self.additions)

    def config(self, size: int | None = None) -> Config:
        side = size or self.size
        return Config.from_preset(
            self.preset,
            width=side,
            height=side,
            max_turns=self.max_turns,
            num_agents=self.num_agents,
            **self.overrides,
        )


#: A run of seconds: what the test suite and ``--quick`` train.
QUICK = Recipe(games=32, agent_steps=12_288, n_steps=64, batch_size=512, eval_games=24,
               eval_every=6_144)  # fmt: skip


@dataclass
class Curve:
    """The learning curve: per evaluation, agent-steps, team success, mean finish / fastest."""

    agent_steps: list[int] = field(default_factory=list)
    success: list[float] = field(default_factory=list)
    agents_out: list[float] = field(default_factory=list)
    finish_ratio: list[float | None] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    levels: dict[str, dict[str, float | None]] = field(default_factory=dict)


def _rl() -> tuple[Any, Any, Any]:
    try:
        import torch
        from stable_baselines3 import PPO
        from stable_baselines3.common.callbacks import BaseCallback
    except ImportError as error:
        raise SystemExit(f"{INSTALL_HINT} ({error})") from None
    return torch, PPO, BaseCallback


def training_env(recipe: Recipe, seed: int) -> Any:
    """The SB3 vector env of the training games: batched engine, shaping, frame stack."""
    from wrappers.sb3_vector import EscapeSB3VecEnv

    vec: Any = maze_escape_v1.vector_env(num_games=recipe.games, config=recipe.config())
    vec = recipe.inputs(EscapeVectorShaping(vec, recipe.progress, recipe.novelty, recipe.step_cost))
    venv: Any = EscapeSB3VecEnv(vec)
    venv.seed(seed)
    if recipe.frame_stack > 1:
        from stable_baselines3.common.vec_env import VecFrameStack

        venv = VecFrameStack(venv, recipe.frame_stack)
    return venv


@dataclass(frozen=True)
class Played:
    """Each game's first episode: success, finish turn, fastest possible finish."""

    success: np.ndarray
    turns: np.ndarray
    fastest: np.ndarray
    agents_out: np.ndarray  # per game, the share of its agents that visited the exit

    @property
    def success_rate(self) -> float:
        return float(self.success.mean())

    @property
    def agents_out_rate(self) -> float:
        return float(self.agents_out.mean())

    @property
    def finish_ratio(self) -> float | None:
        """Finish / fastest over the successful games (ratio of means, as the bench's table)."""
        won = self.success
        return float(self.turns[won].sum() / self.fastest[won].sum()) if won.any() else None


def play_batched(choose: Chooser, recipe: Recipe, config: Config, games: int, seed: int) -> Played:
    """The first game of each of ``games`` slots of the batched engine (maze stream ``seed``),
    every agent played by ``choose`` reading what training read (unshaped)."""
    frames = recipe.frame_stack
    env = recipe.inputs(maze_escape_v1.vector_env(num_games=games, config=config))
    observations, _ = env.reset(seed=seed)
    n = config.num_agents
    state = env.unwrapped.state
    distance = exit_distances(state.board, state.exit_cell, config.width)
    fastest = distance[np.arange(games)[:, None], state.starts].max(axis=1)
    done = np.zeros(games, np.bool_)
    success = np.zeros(games, np.bool_)
    turns = np.zeros(games, np.int64)
    out = np.zeros((games, n), np.bool_)
    stack = np.zeros((env.num_envs, frames, observations.shape[1]), np.float32)
    turn = 0
    while not done.all():
        stack[:, :-1] = stack[:, 1:]
        stack[:, -1] = observations
        actions = np.asarray(choose(stack.reshape(env.num_envs, -1)), np.int64)
        visited = state.visited.copy()
        observations, rewards, terminations, truncations, _ = env.step(actions)
        turn += 1
        # out: visited before, or paid this turn (a first visit or the team bonus)
        out[~done] |= (visited | (rewards.reshape(games, n) > 0))[~done]
        ended = (terminations | truncations).reshape(games, n)[:, 0]
        new = ended & ~done
        success[new] = terminations.reshape(games, n)[new, 0]
        turns[new] = turn
        done |= ended
        stack[np.repeat(ended, n)] = 0.0  # the next game starts with empty frames
    return Played(success, turns, fastest, out.mean(axis=1))


def play_levels(config: Config, games: int, seed: int, policies: Sequence[str]) -> dict[str, Any]:
    """Each baseline policy on the same mazes as :func:`play_batched` (each game exported from
    the batched engine into the scalar env): its success rate and finish / fastest."""
    env = maze_escape_v1.vector_env(num_games=games, config=config)
    env.reset(seed=seed)
    exported = [env.export(g) for g in range(games)]
    levels: dict[str, Any] = {}
    for spec in policies:
        success, turns, fastest, out = [], [], [], []
        for index, game in enumerate(exported):
            scalar = maze_escape_v1.parallel_env(config=game.config, generator=game.generator)
            observations, _ = scalar.reset(seed=index)
            team = make_team(spec, scalar.possible_agents)
            for agent, policy in team.items():
                policy.reset(agent, index, escape_episode(scalar, agent))
            while scalar.agents:
                actions = {
                    a: as_decision(
                        team[a].act(observation_to_model(observations[a], config, a))
                    ).action
                    for a in scalar.agents
                }
                observations, *_ = scalar.step(actions)
            outcome = scalar.outcome()
            success.append(outcome["success"])
            turns.append(outcome["turns"])
            fastest.append(outcome["fastest_possible_finish"])
            visits = outcome["first_visit_turn"].values()
            out.append(np.mean([turn is not None for turn in visits]))
        played = Played(np.array(success), np.array(turns), np.array(fastest), np.array(out))
        levels[spec] = {"success": played.success_rate, "finish_ratio": played.finish_ratio}
    return levels


def trained_settings(recipe: Recipe, seed: int, agent_steps: int, command: str) -> TrainedSettings:
    """What the weights were trained on, stored with them."""
    config = recipe.config()
    return TrainedSettings(
        config=config.model_dump(mode="json"),
        required=tuple(name for name in OBSERVATION_FIELDS if name in Config.model_fields),
        feature_names=recipe.feature_names(),
        additions=recipe.additions,
        frame_stack=recipe.frame_stack,
        radio_symbols=int(getattr(config, "radio_symbols", 0)),
        training={
            "algorithm": "PPO (Stable-Baselines3), one network shared by every agent",
            "engine": "maze_escape_v1.vector_env",
            "seed": seed,
            "agent_steps": agent_steps,
            "preset": recipe.preset,
            "recipe": {k: v for k, v in asdict(recipe).items() if k != "overrides"}
            | {"overrides": dict(recipe.overrides)},
            "command": command,
        },
    )


def train(
    recipe: Recipe, seed: int, report: Callable[[str], None] = print
) -> tuple[Any, Curve, float]:
    """PPO for ``recipe.agent_steps`` agent-steps: the model, the learning curve and the seconds
    spent training (evaluations excluded)."""
    torch, PPO, BaseCallback = _rl()
    torch.set_num_threads(1)  # a small network: threads cost more than they give
    torch.manual_seed(seed)
    venv = training_env(recipe, seed)
    model = PPO(
        "MlpPolicy",
        venv,
        learning_rate=recipe.learning_rate,
        n_steps=recipe.n_steps,
        batch_size=recipe.batch_size,
        n_epochs=recipe.n_epochs,
        gamma=recipe.gamma,
        gae_lambda=recipe.gae_lambda,
        ent_coef=recipe.ent_coef,
        policy_kwargs={"net_arch": list(recipe.net_arch)},
        seed=seed,
        device="cpu",
        verbose=0,
    )
    curve = Curve()
    config = recipe.config()
    eval_seed = EVAL_SEED_OFFSET + seed
    clock = {"training": 0.0, "since": time.perf_counter()}

    def greedy(observations: np.ndarray) -> np.ndarray:
        return model.predict(observations, deterministic=True)[0]

    def evaluate(steps: int) -> None:
        clock["training"] += time.perf_counter() - clock["since"]
        played = play_batched(greedy, recipe, config, recipe.eval_games, eval_seed)
        curve.agent_steps.append(steps)
        curve.success.append(played.success_rate)
        curve.agents_out.append(played.agents_out_rate)
        curve.finish_ratio.append(played.finish_ratio)
        curve.seconds.append(clock["training"])
        ratio = f"{played.finish_ratio:.2f}" if played.finish_ratio is not None else "-"
        rate = steps / clock["training"] if clock["training"] else 0.0
        report(
            f"{steps:>10,} agent-steps {clock['training']:7.0f} s  team success "
            f"{played.success_rate:6.1%}  agents out {played.agents_out_rate:6.1%}  finish/fastest "
            f"{ratio:>5}  ({rate:,.0f} agent-steps/s)"
        )
        clock["since"] = time.perf_counter()

    class Evaluations(BaseCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.next = recipe.eval_every

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next:
                evaluate(self.num_timesteps)
                self.next += recipe.eval_every
            return True

    evaluate(0)
    model.learn(total_timesteps=recipe.agent_steps, callback=Evaluations())
    if curve.agent_steps[-1] != model.num_timesteps:
        evaluate(model.num_timesteps)
    venv.close()
    return model, curve, clock["training"]


def plot_curve(curve: Curve, path: Path, title: str) -> Path | None:
    """Team success and finish / fastest over agent-steps, with the baselines' levels."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return None
    figure = Figure(figsize=(10, 4), layout="constrained")
    success_axis, ratio_axis = figure.subplots(1, 2)
    x = np.array(curve.agent_steps) / 1e6
    success_axis.plot(x, np.array(curve.success) * 100, marker="o", ms=3, label="PPO (greedy)")
    ratios = [np.nan if r is None else r for r in curve.finish_ratio]
    ratio_axis.plot(x, ratios, marker="o", ms=3, label="PPO (greedy)")
    styles = {"random": ("tab:gray", ":"), "explorer": ("tab:green", "--")}
    for name, level in curve.levels.items():
        colour, style = styles.get(name, ("tab:red", "-."))
        success_axis.axhline(
            100 * float(level["success"] or 0.0), color=colour, ls=style, label=name
        )
        if level["finish_ratio"] is not None:
            ratio_axis.axhline(float(level["finish_ratio"]), color=colour, ls=style, label=name)
    success_axis.set(xlabel="agent-steps (millions)", ylabel="team success (%)", ylim=(0, 103))
    ratio_axis.set(xlabel="agent-steps (millions)", ylabel="finish / fastest (successes)")
    for axis in (success_axis, ratio_axis):
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    figure.suptitle(title, fontsize=10)
    figure.savefig(path, dpi=110)
    return path


def export(model: Any, settings: TrainedSettings, out: Path) -> tuple[Path, Path]:
    """The weight file and the SB3 model file (both with the trained settings)."""
    weights = save_weights(out / "escape-ppo.npz", network_from_sb3(model.policy), settings)
    model_path = out / "model.zip"
    model.save(model_path)
    save_sb3_settings(model_path, settings)
    return weights, model_path


def same_network(weights: Path, shipped: str) -> bool:
    """Whether the weight file holds the shipped network's layers, value for value (the files
    differ in the command line they record, so their bytes are not compared)."""
    try:
        reference = read_weights(shipped_weights(shipped), shipped).network
    except FileNotFoundError:  # a checkout before the weights were shipped
        return False
    mine = read_weights(weights.read_bytes(), str(weights)).network
    return len(mine.layers) == len(reference.layers) and all(
        np.array_equal(a, b)
        for pair, other in zip(mine.layers, reference.layers, strict=True)
        for a, b in zip(pair, other, strict=True)
    )


def with_changes(recipe: Recipe, changes: Sequence[str]) -> Recipe:
    """``recipe`` with ``FIELD=VALUE`` changes (values as JSON, else strings)."""
    fields = {f for f in Recipe.__dataclass_fields__}
    updates: dict[str, Any] = {}
    for change in changes:
        name, sep, text = change.partition("=")
        if not sep or name not in fields:
            raise SystemExit(
                f"--recipe {change!r}: give FIELD=VALUE with a field of {sorted(fields)}"
            )
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        updates[name] = tuple(value) if isinstance(value, list) else value
    return replace(recipe, **updates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="train_escape_ppo.py",
        description="Shared-parameter PPO on the batched Maze Escape; reproduces escape-ppo.npz.",
    )
    parser.add_argument("--seed", type=int, default=0, help="training seed (shipped: 0)")
    parser.add_argument(
        "--out", type=Path, help="output folder (default: out/escape-ppo; --quick: a temporary one)"
    )
    parser.add_argument("--agent-steps", type=int, help="override the recipe's agent-steps")
    parser.add_argument("--quick", action="store_true", help="seconds: a smoke test")
    parser.add_argument("--no-levels", action="store_true", help="skip the baselines' levels")
    parser.add_argument(
        "--recipe",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="change a field of the recipe (JSON values), e.g. novelty=0.01 or "
        'overrides=\'{"coordinates": "own"}\' (the shipped weights use none)',
    )
    args = parser.parse_args(argv)
    recipe = QUICK if args.quick else Recipe()
    if args.agent_steps:
        recipe = replace(recipe, agent_steps=args.agent_steps)
    recipe = with_changes(recipe, args.recipe)
    _rl()
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="escape-ppo-")) if args.quick else DEFAULT_OUT
    args.out.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    print(
        f"Maze Escape {recipe.size}x{recipe.size}, {recipe.num_agents} agents, preset "
        f"{recipe.preset}, {recipe.max_turns} turns; {recipe.games} batched games, "
        f"{recipe.agent_steps:,} agent-steps, seed {args.seed}; load {load[0]:.1f} "
        f"on {os.cpu_count()} cores",
        flush=True,
    )
    model, curve, seconds = train(recipe, args.seed, lambda line: print(line, flush=True))
    config = recipe.config()
    if not args.no_levels:
        curve.levels = play_levels(
            config, recipe.eval_games, EVAL_SEED_OFFSET + args.seed, ["random", "explorer"]
        )
        for name, level in curve.levels.items():
            ratio = "-" if level["finish_ratio"] is None else f"{level['finish_ratio']:.2f}"
            print(
                f"level of {name:<8} on the same {recipe.eval_games} mazes: team success "
                f"{level['success']:6.1%}  finish/fastest {ratio}"
            )
    command = "python examples/train_escape_ppo.py " + " ".join(argv or sys.argv[1:])
    settings = trained_settings(recipe, args.seed, int(model.num_timesteps), command.strip())
    weights, model_path = export(model, settings, args.out)
    (args.out / "curve.json").write_text(json.dumps(asdict(curve), indent=1))
    title = (
        f"shared PPO, Maze Escape {recipe.size}x{recipe.size} {recipe.preset}, "
        f"{recipe.num_agents} agents, seed {args.seed}: {recipe.eval_games} held-out mazes"
    )
    plot = plot_curve(curve, args.out / "curve.png", title)
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    load = os.getloadavg()
    print(
        f"trained {model.num_timesteps:,} agent-steps in {seconds:.0f} s (load now {load[0]:.1f})"
    )
    print(f"wrote {weights} (sha256 {digest[:16]}...), {model_path}, {args.out / 'curve.json'}")
    if plot is not None:
        print(f"wrote {plot}")
    same = "yes" if same_network(weights, "escape-ppo") else "no"
    print(f"identical to the shipped learned:escape-ppo weights: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
