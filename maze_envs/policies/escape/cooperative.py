"""The cooperative explorer team: search apart, tell the route, help the others out."""

from __future__ import annotations

from maze_envs.escape.types import (
    Action,
    AppendEdit,
    Direction,
    MoveName,
    Observation,
    SpliceEdit,
)
from maze_envs.policies.escape.explorer import TremauxExplorer
from maze_envs.policies.escape.geometry import DIRECTIONS, step
from maze_envs.policies.escape.notebook import NotebookKeeper
from maze_envs.policies.escape.routes import exit_message, here_line, parse_here, parse_routes
from maze_envs.policies.interface import EscapeEpisode


class CooperativeExplorer(TremauxExplorer):
    """One member of a cooperative explorer team (give every agent one).

    Knows: what a :class:`~maze_envs.policies.escape.explorer.TremauxExplorer` knows, plus the
    routes teammates announce on the radio and the notebooks of teammates on its cell. All
    messages follow :mod:`maze_envs.policies.escape.routes`: routes run from *landmarks*, whose
    names mean the same to every agent, so no shared coordinate frame is needed.

    Does:

    * **Split the search.** Until it knows a way out it explores depth first; unvisited
      neighbours are ordered by the distance sensor when the game has one, and otherwise (and on
      ties) by a direction preference rotated by the agent's number (A north first, B east, C
      south, ...), so teammates fan out in different directions.
    * **When told, go.** It keeps every route heard (radio) or read (a colocated teammate's
      notebook). As soon as it knows the position of a route's landmark (it has stood on it) or
      reads a ``HERE:`` route on its own cell, it walks the shortest known way to the exit: from
      the landmark that is exactly the route (in a perfect maze the route between two cells is
      unique), so an agent standing on the landmark reaches the exit in the route's length.
    * **Tell.** Once it has found the exit it radios ``EXIT`` with routes to the exit from the
      landmarks it knows, shortest first, as many as fit the radio's size limit, when the
      cooldown allows (again whenever it learns a new landmark). It writes the same routes in its
      notebook, with a ``HERE:`` line: the route from the cell it is on.
    * **Help.** Then it goes back into the maze, exploring what it has not seen (new landmarks
      mean new routes to announce) while its notebook shows every teammate it meets the way out.
      With nothing left to explore it stays. A teammate's claim that proves wrong (the exit is
      not where a route said) is dropped; what the agent sees always wins over claims.

    Args:
        heuristic: order unvisited neighbours by the distance sensor (when the game has it).
        radio: use the radio (when the game has it switched on).
        notebook: write routes in the notebook for colocated teammates.
        help: after finding the exit, keep exploring to find and share more; else stay on it.
    """

    def __init__(
        self, heuristic: bool = True, radio: bool = True, notebook: bool = True, help: bool = True
    ) -> None:
        super().__init__(heuristic=heuristic)
        self.use_radio = radio
        self.use_notebook = notebook
        self.help = help
        self.heard: dict[str, list[Direction]] = {}
        self.sent: str | None = None
        self._sending: str | None = None
        self._depth_first = True
        self._keeper: NotebookKeeper | None = None

    def reset(
        self, agent: str, seed: int | None = None, episode: EscapeEpisode | None = None
    ) -> None:
        super().reset(agent, seed, episode)
        self.heard = {}
        self.sent = None
        self._sending = None
        self._depth_first = True
        self._keeper = NotebookKeeper(self.config)

    # --- listening ---------------------------------------------------------------------------
    def after_observe(self, observation: Observation, tried: Direction | None, moved: bool) -> None:
        super().after_observe(observation, tried, moved)
        if self._sending is not None:
            if observation.last_action.radio == "sent":
                self.sent = self._sending
            self._sending = None
        messages = [*observation.radio.values(), *observation.teammate_notebooks.values()]
        for text in messages:
            for name, moves in parse_routes(text).items():
                if name not in self.heard or len(moves) < len(self.heard[name]):
                    self.heard[name] = moves
        for text in observation.teammate_notebooks.values():
            here = parse_here(text)
            if here is not None:
                self.map.claim_route(self.position, here)
        for name, moves in self.heard.items():
            landmark = self.map.landmarks.get(name)
            if landmark is not None:
                self.map.claim_route(landmark, moves)

    def known_routes(self) -> list[tuple[str, list[Direction]]]:
        """Routes to the exit from every landmark this agent can place on its map."""
        routes = []
        for name, cell in self.map.landmarks.items():
            moves = self.map.path_to_exit(cell)
            if moves is not None:
                routes.append((name, moves))
        return routes

    # --- acting ------------------------------------------------------------------------------
    def preference(self, direction: Direction) -> tuple[float, float]:
        guess, _ = super().preference(direction)
        rank = (DIRECTIONS.index(direction) - self.index) % 4
        return (guess, float(rank))

    def choose(self, observation: Observation) -> Action:
        move = self._move(observation)
        radio = self._radio(observation)
        notebook = self._notebook(observation, move)
        if radio is not None:
            self._sending = radio
        return Action(move=move, notebook=notebook, radio=radio)

    def _move(self, observation: Observation) -> MoveName:
        here = self.position
        if not self.reached_exit:
            route = self.map.path_to_exit(here)
            if route:
                self._depth_first = False
                return route[0]
            if self._depth_first:
                return self.explore(observation).move
        elif not self.help:
            return "STAY"
        self._depth_first = False
        frontier = self.map.frontier_path(here)
        return frontier[0] if frontier else "STAY"

    def _radio(self, observation: Observation) -> str | None:
        if not (self.reached_exit and self.use_radio and self.config.radio):
            return None
        if observation.last_action.radio_cooldown > 0:
            return None
        message = exit_message(self.known_routes(), self.config.radio_max_bytes)
        return message if message is not None and message != self.sent else None

    def _notebook(self, observation: Observation, move: MoveName) -> SpliceEdit | AppendEdit | None:
        if not self.use_notebook or self._keeper is None:
            return None
        lines = []
        routes = self.known_routes() if self.reached_exit else list(self.heard.items())
        exit_line = exit_message(routes, self._keeper.budget // 2)
        if exit_line is not None:
            lines.append(exit_line)
        if self.reached_exit:
            lines.append(here_line(self._route_after(move)))
        if not lines:
            return None
        return self._keeper.edit(observation.notebook, lines)

    def _route_after(self, move: MoveName) -> list[Direction] | None:
        """The route to the exit from where this turn's move will leave the agent.

        ``None`` when that is uncertain: a step from the exit cell into a cell not yet seen may be
        the doorway, which leaves the agent where it is.
        """
        here = self.position
        if move == "STAY":
            return self.map.path_to_exit(here)
        there = step(here, move)
        if here == self.map.exit and there not in self.map.visited:
            return None
        return self.map.path_to_exit(there)
