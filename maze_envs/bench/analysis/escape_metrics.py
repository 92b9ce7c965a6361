"""The behavioural metrics of one Maze Escape game, per agent and for the team.

Each metric is computed from the journal alone (what each agent saw, sent and was told, and the
status of each decision), with the agents' true cells rebuilt by
:func:`maze_envs.reading.tracks.escape_track`. The metrics the benchmark results also
report are the functions of :mod:`maze_envs.metrics` (the same numbers for the same game); only
the policy's own decisions (status ``ok``) count in behaviour metrics, never a fallback or an
outage.
Definitions (turn ``t`` holds the action chosen after seeing turn ``t - 1``):

``setup``, ``policy``, ``agent_policy``, ``run_key``, ``status``
    The benchmark arm of the game (:mod:`.labels`; None for games the runner did not play), the
    agent's own policy spec, and how the game ended (:func:`maze_envs.metrics.game_status`, or
    ``unfinished`` / ``aborted``).
``decisions``, ``fallbacks``, ``outages``
    Turns the agent acted (turns 1 to the last); of those, decisions that were fallbacks or
    outages (not the policy's play).
``moves_tried``, ``wall_moves``, ``wall_move_rate``
    Moves the policy tried (STAY excluded); moves into an interior wall or the outer brick;
    wall moves / moves tried (:func:`maze_envs.metrics.wall_move_rate`).
``reversals``
    Successful moves straight back to the cell the agent left with its previous successful move
    (STAYs and bumps in between do not break the pair), by the policy's own decisions.
``reversals_after_rise``
    Reversals whose previous successful move raised the distance reading to the exit (the
    straight-line sensor); empty (None) when the game had no distance sensor.
``stays``
    Decisions of the policy's play whose move was STAY (a fallback STAY is not one).
``exit_turns_after_reaching``
    Turns after its first exit visit that the agent ended on the exit cell (camping).
``colocated_turns``, ``copied_passages``, ``copied_chars``
    Turns at which it was shown a teammate's notebook (it shared the teammate's cell); passages of
    40+ characters copied from such a notebook into its own next turn
    (:func:`~maze_envs.bench.analysis.patterns.copied_passages`), and their total length.
``radio_sent``, ``radio_with_coordinates``, ``radio_frame_named``
    Messages delivered (:func:`maze_envs.metrics.radio_messages`); those carrying a coordinate
    pair; of those, the ones naming whose frame (:mod:`~maze_envs.bench.analysis.patterns`).
``cells_visited``, ``coverage``, ``revisits``
    Distinct cells it stood on (start included), as a share of the maze's cells; successful
    moves of the policy's play into a cell it had stood on before.
``first_exit_turn``, ``turns_to_team_success``
    Turn of its first exit visit; turns from it to team success (None without either).
``plays``, ``stays_while_searching``, ``self_positions``, ``self_positions_right``,
``notebook_compactions``, ``exit_choices``, ``untried_exit_moves``, ``exhausted_turns``,
``radio_landmark``, ``offset_notes``, ``trail_doubts``
    The metrics of the study's later questions (waiting, self-tracked positions, compactions,
    untried exits, landmark-relative radio, frame offsets, doubts about the trail): defined in
    :mod:`.study_metrics`.

The team row sums the counts, computes the wall-move rate over every agent's decisions (the
same function, so it equals the benchmark row's), takes the union of the cells for coverage, and
the earliest first exit visit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Final

from maze_envs.bench.analysis.labels import GameLabels, game_labels
from maze_envs.bench.analysis.patterns import copied_passages, has_coordinates, names_frame
from maze_envs.bench.analysis.study_metrics import FIELDS as STUDY_FIELDS
from maze_envs.bench.analysis.study_metrics import study_metrics
from maze_envs.bench.metrics import Step, decision_metrics, escape_step, status_from_outcome
from maze_envs.escape.vocab import OPPOSITE_DIRECTION
from maze_envs.reading.tracks import EscapeTrack

_OPPOSITE: Final[dict[str, str]] = dict(OPPOSITE_DIRECTION.items())
TEAM: Final = "team"
#: The observation keys the metrics read (the analysis reads only these from the journal).
OBSERVATION_KEYS: Final = ("distances", "notebook", "teammate_notebooks")
#: The event keys the metrics and the track read (the analysis reads only these).
EVENT_KEYS: Final = ("move", "radio", "first_exit_visit", "team_success")


@dataclass(frozen=True)
class AgentMetrics:
    """One agent's (or the team's) behaviour in one game (see the module docstring)."""

    game: int
    env_id: str
    seed: int | None
    setup: str | None
    policy: str | None
    agent_policy: str | None
    run_key: str | None
    status: str
    size: str
    agent: str
    turns: int
    team_success: bool
    decisions: int
    fallbacks: int
    outages: int
    moves_tried: int
    wall_moves: int
    wall_move_rate: float | None
    reversals: int
    reversals_after_rise: int | None
    stays: int
    exit_turns_after_reaching: int
    colocated_turns: int
    copied_passages: int
    copied_chars: int
    radio_sent: int
    radio_with_coordinates: int
    radio_frame_named: int
    cells_visited: int
    coverage: float
    revisits: int
    first_exit_turn: int | None
    turns_to_team_success: int | None
    plays: int
    stays_while_searching: int
    self_positions: int
    self_positions_right: int
    notebook_compactions: int
    exit_choices: int
    untried_exit_moves: int
    exhausted_turns: int
    radio_landmark: int
    offset_notes: int
    trail_doubts: int
    note: str = ""

    def row(self) -> dict[str, Any]:
        """The metrics as one table row (column name -> value)."""
        return asdict(self)


# Stored rows are decoded JSON: plain dicts and lists (isinstance on dict, not the Mapping ABC,
# keeps the per-turn loop fast).


def _distance(stored: Any) -> int | None:
    """The distance reading to the exit in a stored observation (None without the sensor)."""
    if not isinstance(stored, dict):
        return None
    distances = stored.get("distances")
    if isinstance(distances, list) and distances and isinstance(distances[0], int):
        return distances[0]
    return None


def _notebook(stored: Any) -> str:
    if isinstance(stored, dict) and isinstance(stored.get("notebook"), str):
        return str(stored["notebook"])
    return ""


def _shown(stored: Any, agent: str) -> list[str]:
    """Texts of the teammates' notebooks an observation showed (the v1 blank self-entry skipped)."""
    if not isinstance(stored, dict):
        return []
    entries = stored.get("teammate_notebooks")
    if not isinstance(entries, dict):
        return []
    return [
        str(entry.get("text", ""))
        for name, entry in entries.items()
        if name != agent and isinstance(entry, dict) and entry.get("shown")
    ]


def _success_turn(track: EscapeTrack) -> int | None:
    for record in track.turns[1:]:
        if any((e or {}).get("team_success") for e in record.events.values()):
            return record.turn
    return None


def escape_steps(track: EscapeTrack, agent: str) -> list[Step]:
    """One agent's decisions of a journaled game as the metrics count them (turns 1 to the
    last): the kind from the recorded move result, the status from the decision record."""
    turns, results = track.turns, track.results[agent]
    return [
        escape_step(results[t], turns[t].decisions.get(agent), turns[t].events.get(agent))
        for t in range(1, len(turns))
    ]


def _game_status(track: EscapeTrack, steps: list[Step]) -> str:
    """How the game ended (:func:`~maze_envs.bench.metrics.status_from_outcome`)."""
    return status_from_outcome(track.info.outcome, sum(s.status == "outage" for s in steps))


def agent_metrics(
    track: EscapeTrack,
    agent: str,
    success_turn: int | None,
    labels: GameLabels | None = None,
    status: str | None = None,
) -> AgentMetrics:
    """The metrics of one agent of a game."""
    turns = track.turns
    cells, moves, results = track.cells[agent], track.moves[agent], track.results[agent]
    steps = escape_steps(track, agent)
    labels = labels or game_labels(track.info.meta)
    exit_cell = track.board.exit_cell
    last_dir: str | None = None
    last_rise = False
    reversals = after_rise = camping = colocated = 0
    copies: list[str] = []
    with_xy = framed = revisits = 0
    seen = {cells[0]} if cells else set()
    first_exit: int | None = None
    sensor = track.config.distance_sensor
    for t in range(1, len(turns)):
        move, result = moves[t], results[t]
        own = steps[t - 1].status == "ok"  # the policy's play, not a fallback or an outage
        if result == "moved" and move is not None:
            if last_dir is not None and _OPPOSITE.get(last_dir) == move and own:
                reversals += 1
                after_rise += last_rise
            before = _distance(turns[t - 1].observations.get(agent))
            after = _distance(turns[t].observations.get(agent))
            last_dir = move
            last_rise = before is not None and after is not None and after > before
            if cells[t] in seen and own:
                revisits += 1
            seen.add(cells[t])
        if cells[t] == exit_cell:
            if first_exit is None:
                first_exit = t
            else:
                camping += 1
        previous = turns[t - 1].observations.get(agent)
        shown = _shown(previous, agent)
        if shown:
            colocated += 1
            now = _notebook(turns[t].observations.get(agent))
            copies += copied_passages(_notebook(previous), now, shown)
        action = turns[t].actions.get(agent)
        message = action.get("radio") if isinstance(action, dict) else None
        step = steps[t - 1]
        own_message = step.radio_sent and step.status == "ok" and isinstance(message, str)
        if own_message and has_coordinates(str(message)):
            with_xy += 1
            framed += names_frame(str(message))
    counts = decision_metrics(steps)
    cells_total = track.board.width * track.board.height
    return AgentMetrics(
        game=track.info.id,
        env_id=track.info.env_id,
        seed=track.info.seed,
        setup=labels.setup,
        policy=labels.policy,
        agent_policy=labels.agent_policy(agent),
        run_key=labels.run_key,
        status=status if status is not None else _game_status(track, steps),
        size=f"{track.board.width}x{track.board.height}",
        agent=agent,
        turns=max(len(turns) - 1, 0),
        team_success=success_turn is not None,
        decisions=counts["decisions"],
        fallbacks=counts["fallbacks"],
        outages=counts["outages"],
        moves_tried=counts["moves_tried"],
        wall_moves=counts["wall_moves"],
        wall_move_rate=counts["wall_move_rate"],
        reversals=reversals,
        reversals_after_rise=after_rise if sensor else None,
        stays=counts["stays"],
        exit_turns_after_reaching=camping,
        colocated_turns=colocated,
        copied_passages=len(copies),
        copied_chars=sum(map(len, copies)),
        radio_sent=counts["radio_messages"],
        radio_with_coordinates=with_xy,
        radio_frame_named=framed,
        cells_visited=len(seen),
        coverage=len(seen) / cells_total,
        revisits=revisits,
        first_exit_turn=first_exit,
        turns_to_team_success=(
            success_turn - first_exit
            if success_turn is not None and first_exit is not None
            else None
        ),
        note=track.problem or "",
        **study_metrics(track, agent, steps),
    )


def team_metrics(
    track: EscapeTrack, agents: list[AgentMetrics], steps: list[Step] | None = None
) -> AgentMetrics:
    """The team row of a game from its agents' rows (and all its agents' decisions)."""
    first = agents[0]
    if steps is None:
        steps = [step for agent in track.agents for step in escape_steps(track, agent)]
    counts = decision_metrics(steps)
    total = {
        name: sum(getattr(a, name) for a in agents)
        for name in (
            "reversals",
            "exit_turns_after_reaching",
            "colocated_turns",
            "copied_passages",
            "copied_chars",
            "radio_with_coordinates",
            "radio_frame_named",
            "revisits",
            *STUDY_FIELDS,
        )
    }
    union = {cell for a in track.agents for cell in track.cells[a]}
    firsts = [a.first_exit_turn for a in agents if a.first_exit_turn is not None]
    after_rise = [a.reversals_after_rise for a in agents]
    success_turn = _success_turn(track)
    return AgentMetrics(
        game=first.game,
        env_id=first.env_id,
        seed=first.seed,
        setup=first.setup,
        policy=first.policy,
        agent_policy=first.policy,
        run_key=first.run_key,
        status=first.status,
        size=first.size,
        agent=TEAM,
        turns=first.turns,
        team_success=first.team_success,
        decisions=counts["decisions"],
        fallbacks=counts["fallbacks"],
        outages=counts["outages"],
        moves_tried=counts["moves_tried"],
        wall_moves=counts["wall_moves"],
        wall_move_rate=counts["wall_move_rate"],
        stays=counts["stays"],
        radio_sent=counts["radio_messages"],
        reversals_after_rise=None if None in after_rise else sum(x or 0 for x in after_rise),
        cells_visited=len(union),
        coverage=len(union) / (track.board.width * track.board.height),
        first_exit_turn=min(firsts) if firsts else None,
        turns_to_team_success=(
            success_turn - min(firsts) if success_turn is not None and firsts else None
        ),
        note=first.note,
        **total,
    )


def game_metrics(track: EscapeTrack) -> list[AgentMetrics]:
    """One row per agent, then the team row."""
    success_turn = _success_turn(track)
    labels = game_labels(track.info.meta)
    steps = [step for agent in track.agents for step in escape_steps(track, agent)]
    status = _game_status(track, steps)
    rows = [agent_metrics(track, agent, success_turn, labels, status) for agent in track.agents]
    return [*rows, team_metrics(track, rows, steps)] if rows else []
