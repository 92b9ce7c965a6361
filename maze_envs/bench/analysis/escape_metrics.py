"""The behavioural metrics of one Maze Escape game, per agent and for the team.

Each metric is computed from the journal alone (what each agent saw, sent and was told), with the
agents' true cells rebuilt by :func:`maze_envs.journal.read.tracks.escape_track`. Definitions
(turn ``t`` holds the action chosen after seeing turn ``t - 1``):

``decisions``
    Turns the agent acted (turns 1 to the last).
``wall_moves``, ``wall_move_rate``
    Moves into an interior wall or the outer brick; per decision.
``reversals``
    Successful moves straight back to the cell the agent left with its previous successful move
    (STAYs and bumps in between do not break the pair).
``reversals_after_rise``
    Reversals whose previous successful move raised the distance reading to the exit (the
    straight-line sensor); empty (None) when the game had no distance sensor.
``stays``
    Decisions whose move was STAY.
``exit_turns_after_reaching``
    Turns after its first exit visit that the agent ended on the exit cell (camping).
``colocated_turns``, ``copied_passages``, ``copied_chars``
    Turns at which it was shown a teammate's notebook (it shared the teammate's cell); passages of
    40+ characters copied from such a notebook into its own next turn
    (:func:`~maze_envs.bench.analysis.patterns.copied_passages`), and their total length.
``radio_sent``, ``radio_with_coordinates``, ``radio_frame_named``
    Messages delivered; those carrying a coordinate pair; of those, the ones naming whose frame
    (:mod:`~maze_envs.bench.analysis.patterns`).
``cells_visited``, ``coverage``, ``revisits``
    Distinct cells it stood on (start included), as a share of the maze's cells; successful
    moves into a cell it had stood on before.
``first_exit_turn``, ``turns_to_team_success``
    Turn of its first exit visit; turns from it to team success (None without either).

The team row sums the counts, recomputes the rates from the sums, takes the union of the cells
for coverage, and the earliest first exit visit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Final

from maze_envs.bench.analysis.patterns import copied_passages, has_coordinates, names_frame
from maze_envs.journal.read.tracks import EscapeTrack

_OPPOSITE: Final = {"N": "S", "S": "N", "E": "W", "W": "E"}
_WALLS: Final = frozenset({"bumped_interior_wall", "bumped_outer_brick"})
TEAM: Final = "team"


@dataclass(frozen=True)
class AgentMetrics:
    """One agent's (or the team's) behaviour in one game (see the module docstring)."""

    game: int
    env_id: str
    seed: int | None
    size: str
    agent: str
    turns: int
    team_success: bool
    decisions: int
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


def agent_metrics(track: EscapeTrack, agent: str, success_turn: int | None) -> AgentMetrics:
    """The metrics of one agent of a game."""
    turns = track.turns
    cells, moves, results = track.cells[agent], track.moves[agent], track.results[agent]
    exit_cell = track.board.exit_cell
    last_dir: str | None = None
    last_rise = False
    wall = reversals = after_rise = stays = camping = colocated = 0
    copies: list[str] = []
    sent = with_xy = framed = revisits = 0
    seen = {cells[0]} if cells else set()
    first_exit: int | None = None
    sensor = track.config.distance_sensor
    for t in range(1, len(turns)):
        move, result = moves[t], results[t]
        if result in _WALLS:
            wall += 1
        if move == "STAY":
            stays += 1
        if result == "moved" and move is not None:
            if last_dir is not None and _OPPOSITE.get(last_dir) == move:
                reversals += 1
                after_rise += last_rise
            before = _distance(turns[t - 1].observations.get(agent))
            after = _distance(turns[t].observations.get(agent))
            last_dir = move
            last_rise = before is not None and after is not None and after > before
            if cells[t] in seen:
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
        events = turns[t].events.get(agent)
        message = action.get("radio") if isinstance(action, dict) else None
        if isinstance(events, dict) and events.get("radio") == "sent" and message:
            sent += 1
            if has_coordinates(message):
                with_xy += 1
                framed += names_frame(message)
    decisions = max(len(turns) - 1, 0)
    cells_total = track.board.width * track.board.height
    return AgentMetrics(
        game=track.info.id,
        env_id=track.info.env_id,
        seed=track.info.seed,
        size=f"{track.board.width}x{track.board.height}",
        agent=agent,
        turns=decisions,
        team_success=success_turn is not None,
        decisions=decisions,
        wall_moves=wall,
        wall_move_rate=wall / decisions if decisions else None,
        reversals=reversals,
        reversals_after_rise=after_rise if sensor else None,
        stays=stays,
        exit_turns_after_reaching=camping,
        colocated_turns=colocated,
        copied_passages=len(copies),
        copied_chars=sum(map(len, copies)),
        radio_sent=sent,
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
    )


def team_metrics(track: EscapeTrack, agents: list[AgentMetrics]) -> AgentMetrics:
    """The team row of a game from its agents' rows."""
    first = agents[0]
    total = {
        name: sum(getattr(a, name) for a in agents)
        for name in (
            "decisions",
            "wall_moves",
            "reversals",
            "stays",
            "exit_turns_after_reaching",
            "colocated_turns",
            "copied_passages",
            "copied_chars",
            "radio_sent",
            "radio_with_coordinates",
            "radio_frame_named",
            "revisits",
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
        size=first.size,
        agent=TEAM,
        turns=first.turns,
        team_success=first.team_success,
        wall_move_rate=total["wall_moves"] / total["decisions"] if total["decisions"] else None,
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
    rows = [agent_metrics(track, agent, success_turn) for agent in track.agents]
    return [*rows, team_metrics(track, rows)] if rows else []
