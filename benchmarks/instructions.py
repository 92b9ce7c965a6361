"""Instructions per step of the step paths issue 16 measures, counted by callgrind (load-proof).

Wall-clock ratios on a shared machine swing by tens of percent between runs; the number of
instructions a step executes does not move with the load. Each case is run twice under
``valgrind --tool=callgrind`` in a child process, once with ``N`` steps and once with none
(the same set-up, warm-up included); the difference divided by ``N`` is the cost of one step.
Valgrind starts with instrumentation off (``--instr-atstart=no``: start-up and imports run
about five times faster) and the child turns it on with ``callgrind_control`` after its set-up;
it leaves with ``os._exit`` (no interpreter finalization in the count).

Cases (the loops of ``wrappers_bench.py`` and ``escape_bench.py``):

* ``turn9``: ``maze_escape_v1`` ``full`` 9x9, 3 agents, random moves as dict actions (the bare
  env of the numeric rows); ``numeric``, ``numeric_flat``, ``numeric_hash``: the same under
  ``EscapeNumericObservation`` (Dict, ``flatten=True``, ``text="hash"``);
* ``turn17``: ``escape_bench.py``'s game (``maze_escape_v0``, 3 agents, 17x17, ``full``, random
  moves with notebook splices and radio) and ``minigrid``: MiniGrid-Empty-8x8-v0 through
  ``gymnasium.make``, random actions (its peer; the ratio of the two is the goal's ratio in
  instructions); ``turn17_observe``, ``turn17_infos``, ``turn17_accept``, ``turn17_resolve``:
  one part of that turn (every agent's observation dict; the infos; the three actions checked;
  the rules applied), repeated on the game 200 turns in, each against ``turn17``;
* ``from_space``: ``Observation.from_space`` of observation-space samples (v1, 17x17 ``full``)
  and ``dict_copy``: a plain copy of the same samples (each nested dict and array copied), its peer;
* ``agimaze``, ``agimaze_numeric``, ``agimaze_local``: ``AgiMaze-v0`` on
  ``TRAINING/S1-rivers/STAGE-06/0000.json``, random actions, bare / under
  ``AgiMazeNumericObservation()`` / ``(local_map=2)``.

Usage: ``python benchmarks/instructions.py [CASE ...] [--steps 2000]`` (needs valgrind; a case
takes 1-3 minutes). ``--child CASE N`` is the measured process.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the other benchmark scripts

#: case -> (make(steps) -> run()); the set-up runs in both processes, ``run`` only does steps
CASES: dict[str, Callable[[int], Callable[[], None]]] = {}
PEERS: dict[str, tuple[str, ...]] = {  # case: the cases it is compared with
    "numeric": ("turn9",),
    "numeric_flat": ("turn9",),
    "numeric_hash": ("turn9",),
    "turn17": ("minigrid",),
    "from_space": ("dict_copy", "minigrid"),
    "agimaze_numeric": ("agimaze",),
    "agimaze_local": ("agimaze",),
}


def goal_line(name: str, peer: str, counts: dict[str, float]) -> str:
    """The ratio of ``name`` against ``peer`` in instructions, in the direction of issue 16's
    goal for the pair (a step path's overhead; MiniGrid steps per Maze Escape turn; a typed
    observation as a fraction of a MiniGrid step)."""
    ratio = counts[name] / counts[peer]
    if peer in ("turn9", "agimaze"):
        return f"  {name} / {peer}: {ratio:.3f}x ({ratio - 1:+.0%} overhead; goal <= +30%)"
    if (name, peer) == ("turn17", "minigrid"):
        return f"  minigrid / turn17: {1 / ratio:.2f}x (a MiniGrid step in turns; goal >= 4x)"
    if (name, peer) == ("from_space", "minigrid"):
        return f"  from_space / minigrid: {ratio:.3f} (of a MiniGrid step; goal <= 0.035)"
    return f"  {name} / {peer}: {ratio:.3f}x"


def case(name: str) -> Callable[[Callable[[int], Callable[[], None]]], Any]:
    def register(make: Callable[[int], Callable[[], None]]) -> Any:
        CASES[name] = make
        return make

    return register


def _escape9(wrap: Callable[[Any], Any] | None) -> Callable[[int], Callable[[], None]]:
    def make(steps: int) -> Callable[[], None]:
        from wrappers_bench import ESCAPE, dict_actions, play_parallel

        from maze_envs import maze_escape_v1

        env: Any = maze_escape_v1.parallel_env(**ESCAPE)
        if wrap is not None:
            env = wrap(env)
        actions = dict_actions(max(steps, 200))
        play_parallel(env, actions, 200)  # warm-up: caches, templates
        return lambda: play_parallel(env, actions, steps)

    return make


@case("turn9")
def turn9(steps: int) -> Callable[[], None]:
    return _escape9(None)(steps)


@case("numeric")
def numeric(steps: int) -> Callable[[], None]:
    from wrappers.escape_numeric import EscapeNumericObservation

    return _escape9(EscapeNumericObservation)(steps)


@case("numeric_flat")
def numeric_flat(steps: int) -> Callable[[], None]:
    from wrappers.escape_numeric import EscapeNumericObservation

    return _escape9(lambda env: EscapeNumericObservation(env, flatten=True))(steps)


@case("numeric_hash")
def numeric_hash(steps: int) -> Callable[[], None]:
    from wrappers.escape_numeric import EscapeNumericObservation

    return _escape9(lambda env: EscapeNumericObservation(env, text="hash"))(steps)


@case("turn17")
def turn17(steps: int) -> Callable[[], None]:
    from escape_bench import EscapeRunner, escape_actions

    runner = EscapeRunner(escape_actions(4096, seed=1), None)
    runner.run(200)
    return lambda: runner.run(steps) and None


def _turn17_part(part: str) -> Callable[[int], Callable[[], None]]:
    """``steps`` repetitions of one part of ``turn17``'s turn, on a game 200 turns in."""

    def make(steps: int) -> Callable[[], None]:
        from escape_bench import EscapeRunner, escape_actions

        from maze_envs.escape.actions import accept
        from maze_envs.escape.engine import resolve_turn

        runner = EscapeRunner(escape_actions(4096, seed=1), None)
        runner.run(200)
        env: Any = runner.env
        observer, state, board, config = env._observer, env._state, env._board, env.config
        actions = runner.actions[5]
        accepted = [accept(agent, actions[agent], True) for agent in "ABC"]
        moves = [a[0] for a in accepted]
        edits = [a[1] for a in accepted]
        radios = [a[2] for a in accepted]

        def run() -> None:
            for _ in range(steps):
                if part == "observe":
                    observer.observe_all(state)
                elif part == "infos":
                    env._infos(None)
                elif part == "accept":
                    for agent in "ABC":
                        accept(agent, actions[agent], True)
                else:  # resolve: the same turn again (the turn counter held)
                    state.turn = 200
                    resolve_turn(state, board, config, moves, edits, radios)

        return run

    return make


for _part in ("observe", "infos", "accept", "resolve"):
    CASES[f"turn17_{_part}"] = _turn17_part(_part)
    PEERS[f"turn17_{_part}"] = ("turn17",)


@case("minigrid")
def minigrid(steps: int) -> Callable[[], None]:
    from escape_bench import MiniGridRunner

    runner = MiniGridRunner(8192, seed=1)
    runner.run(200)
    return lambda: runner.run(steps) and None


@case("from_space")
def from_space(steps: int) -> Callable[[], None]:
    from escape_bench import FromSpaceRunner

    runner = FromSpaceRunner(1000, seed=1)
    runner.run(200)
    return lambda: runner.run(steps) and None


@case("dict_copy")
def dict_copy(steps: int) -> Callable[[], None]:
    from escape_bench import DictCopyRunner

    runner = DictCopyRunner(1000, seed=1)
    runner.run(200)
    return lambda: runner.run(steps) and None


def _agimaze(options: dict[str, Any] | None) -> Callable[[int], Callable[[], None]]:
    def make(steps: int) -> Callable[[], None]:
        import gymnasium as gym
        import numpy as np
        from wrappers_bench import LABYRINTH, play_gym

        import maze_envs  # noqa: F401  (registers the environments)

        env: Any = gym.make("maze_envs/AgiMaze-v0", path=LABYRINTH)
        if options is not None:
            from wrappers.agimaze_numeric import AgiMazeNumericObservation

            env = AgiMazeNumericObservation(env, **options)
        n = int(env.action_space.n)
        actions = np.random.default_rng(0).integers(n, size=max(steps, 200)).tolist()
        play_gym(env, actions, 200)
        return lambda: play_gym(env, actions, steps)

    return make


@case("agimaze")
def agimaze(steps: int) -> Callable[[], None]:
    return _agimaze(None)(steps)


@case("agimaze_numeric")
def agimaze_numeric(steps: int) -> Callable[[], None]:
    return _agimaze({})(steps)


@case("agimaze_local")
def agimaze_local(steps: int) -> Callable[[], None]:
    return _agimaze({"local_map": 2})(steps)


def instructions(name: str, steps: int) -> int:
    """Instructions (callgrind ``Ir``) of a child process running ``steps`` steps of ``name``."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "callgrind.out"
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--child",
                name,
                str(steps),
            ],
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        summary = re.search(r"^summary:\s*(\d+)", out.read_text(), re.MULTILINE)
        if summary is None:  # pragma: no cover (callgrind always writes one)
            raise RuntimeError(f"no summary line in callgrind's output of {name}")
        return int(summary.group(1))


def per_step(name: str, steps: int) -> float:
    """Instructions of one step of ``name`` (a run of ``steps`` minus one of none, / steps)."""
    return (instructions(name, steps) - instructions(name, 0)) / steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("names", nargs="*", help=f"cases (default: all of {list(CASES)})")
    parser.add_argument("--steps", type=int, default=2000, help="steps of the measured run")
    parser.add_argument("--child", nargs=2, metavar=("CASE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        name, steps = args.child[0], int(args.child[1])
        run = CASES[name](steps)
        subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True)
        if steps:
            run()
        sys.stdout.flush()
        os._exit(0)
    unknown = sorted(set(args.names) - set(CASES))
    if unknown:
        parser.error(f"unknown case(s) {unknown}; choose from {list(CASES)}")
    names = args.names or list(CASES)
    wanted = list(names)
    for name in names:
        wanted += [peer for peer in PEERS.get(name, ()) if peer not in wanted]
    counts: dict[str, float] = {}
    print(
        f"instructions per step (callgrind; {args.steps} steps minus none); "
        f"load average {os.getloadavg()[0]:.2f} (instruction counts do not depend on it)"
    )
    for name in wanted:
        counts[name] = per_step(name, args.steps)
        print(f"  {name:<16} {counts[name]:>12,.0f}", flush=True)
    print("ratios (instructions)")
    for name in names:
        for peer in PEERS.get(name, ()):
            print(goal_line(name, peer, counts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
