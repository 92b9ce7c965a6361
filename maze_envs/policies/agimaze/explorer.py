"""The systematic AGI Maze explorer: maps what it meets, then collects and leaves."""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from maze_envs.agimaze.mapfmt import MapFormatError, parse_map
from maze_envs.agimaze.narration import read_ride
from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.agimaze.set_env import START_ACTION
from maze_envs.agimaze.types import DIRECTIONS
from maze_envs.policies.agimaze.telling import telling_move
from maze_envs.policies.agimaze.world import (
    Cell,
    Frame,
    consistent,
    frame_from_labyrinth,
    lost_view,
    merge,
    neighbour,
    plan,
)
from maze_envs.policies.interface import AgiMazeEpisode, PolicyBase

#: Lost with at most this many places left, it tells them apart before exploring on.
FEW_PLACES: Final = 6
#: After this many teleports out of one pit without finding out where it leads, stop using it.
MAX_LOST_TRIPS = 4


@dataclass
class Lost:
    """The player climbed out of a pit it cannot place: a frame relative to that pit.

    ``entry`` is the main-frame pit where the chain of teleports began and ``hops`` how many
    teleports round that pit's cycle the player has made since, each by stepping back into the
    pit it had just climbed out of; after as many hops as the cycle has pits it is back at
    ``entry``. ``entry`` is ``None`` once the chain is broken (it fell into another pit).
    """

    frame: Frame
    entry: Cell | None
    hops: int
    candidates: list[Cell] = field(default_factory=list)  # main-frame cells the origin may be


#: Stands for "back in the main frame" in a lost frame's plan.
_RETURN: Final = (1_000_000, 1_000_000)


class AgiMazeExplorer(PolicyBase[AgiMazeEpisode, AgiMazeObservation, str]):
    """Explores a labyrinth systematically, learning its rules from what happens to it.

    Knows: the task info (board size, start, whether there is an exit key and, when given, the
    pit cycles' sizes) and, on open maps, the map. Nothing else: on hidden maps it learns every
    wall by bumping into it, since nothing else reveals one.

    Does, each step:

    1. *Learns* from the last step (:mod:`~maze_envs.policies.agimaze.world`): the edge it tried
       (open, wall, monolith or the exit gap, which it remembers), the tile kind it stepped on
       (key, chest, exit key, river arrow or mouth, pit, ...), the flow of every river arrow a
       ride carried it over (the narration names the ride's directions), and pit destinations.
    2. *Collects* in a valid order: the key, then the chest (opening it takes the key), the exit
       key (when the labyrinth has one) and the boat; then walks out through the exit gap. Each
       goal is reached by the shortest way its model predicts, rides and known pits included.
    3. Otherwise *explores*: the nearest unknown that may reveal a new cell or the exit (an
       untried edge, an unvisited neighbour, a ride whose end is unknown); pits whose far end
       is unknown come after every such walkable unknown; unknown edges between known cells
       last. Ties are broken by a move order drawn from its seeded generator. *Risk-aware*
       (``frame_edges_first``, on by default): once it holds everything and lacks only the
       exit, it probes the frame edges of the cells it knows before stepping into any unknown
       cell, which could be a river that carries it into a trap in packs that still have one
       (earlier pack versions, packs of your own); ``benchmarks/agimaze_explorer.py rules``
       measures the rule on paired seeds (``docs/policies.md``).
    4. After a pit whose far end it cannot place, it is *lost*: its map is still valid, only its
       position is not. It maps a frame relative to that pit (kept per pit, so a second trip
       goes on with the same map) and keeps every place on the map consistent with what it sees
       (board edges, walls, tiles, flows, what the map says there); it first makes the moves
       that tell those places apart best by what the map predicts there (walking back through
       what it saw since to a cell where such a move exists), and when one place is left it
       merges the two maps and knows where the pit leads. Falling into another pit while lost,
       it keeps only the places that pit may lead to (its far end where the map knows it).
       Knowing the cycle's size (task info or the open map), it gets back by stepping into the
       pit it climbed out of, round the cycle, when walkable work is left at home.

    With grenades and nothing left to explore it blows up a wall next to an unvisited cell. In a
    labyrinth set it answers ``start`` while the set waits; reset it for each labyrinth.

    On the default packs, which have no reachable dead state, it solves every TUTORIAL,
    TRAINING, CLASSIC and EXTENDED bundle within the 5x budget on 20 seeds, but for the few
    pit episodes ``tests/policies/test_agimaze_baselines.py`` names (``docs/policies.md``).
    """

    def __init__(self, frame_edges_first: bool = True) -> None:
        self.frame_edges_first = frame_edges_first
        self.main = Frame()
        self.frame = self.main
        self.pos: Cell = (0, 0)
        self.lost: Lost | None = None
        self.held: dict[str, bool | int] = {}
        self.last: str | None = None
        self.won = False
        self.exit_key_required: bool | None = None
        self.cycle_size: int | None = None
        self.single_pair = False
        self.actions: tuple[str, ...] = DIRECTIONS
        self._lost_trips: Counter[Cell] = Counter()
        self.rng = np.random.default_rng(0)
        #: lost frames by (entry pit, hops): where a known pit leads, mapped but not yet placed
        self.pockets: dict[tuple[Cell, int], Lost] = {}

    def reset(self, agent: str, seed: int | None, episode: AgiMazeEpisode) -> None:
        super().reset(agent, seed, episode)
        task = episode.task
        board = task.get("board") or {}
        rows, cols = board.get("rows"), board.get("cols")
        start = task.get("start") or (0, 0)
        self.main = Frame(rows=rows, cols=cols)
        if episode.open_map and episode.public_map:
            with contextlib.suppress(MapFormatError):  # unreadable: play as on a hidden map
                self.main = frame_from_labyrinth(parse_map(episode.public_map).labyrinth)
        self.main.note_content((int(start[0]), int(start[1])), "empty")
        self.frame = self.main
        self.pos = (int(start[0]), int(start[1]))
        self.lost = None
        self.held = {}
        self.last = None
        self.won = False
        exit_key = task.get("exit_key")
        self.exit_key_required = exit_key if isinstance(exit_key, bool) else None
        sizes = task.get("pits_per_cycle")
        self.cycle_size = sizes[0] if sizes and len(set(sizes)) == 1 else None
        self.single_pair = list(sizes or ()) == [2]
        self.actions = tuple(a for a in episode.action_names if a != START_ACTION) or DIRECTIONS
        self._lost_trips = Counter()
        self.rng = np.random.default_rng(seed)
        self.pockets = {}

    # --- acting ------------------------------------------------------------------------------
    def act(self, observation: AgiMazeObservation) -> str:
        if observation.waiting:
            self.last = None
            return START_ACTION
        self.held = dict(observation.inventory)
        if self.last is not None and observation.error is None:
            self._learn(self.last, observation)
            if self.lost is None and self.pockets:
                self._resolve_pockets()
        action = self._decide()
        self.last = action
        return action

    @property
    def can_win(self) -> bool:
        if not self.held.get("treasure"):
            return False
        return bool(self.held.get("exit_key")) or not self.exit_key_required

    def wanted(self, frame: Frame) -> list[Cell]:
        """Cells of ``frame`` whose item the player should take now."""
        kinds = set()
        if not self.held.get("key") and not self.held.get("treasure"):
            kinds.add("key")
        if self.held.get("key") and not self.held.get("treasure"):
            kinds.add("treasure")
        if not self.held.get("exit_key") and self.exit_key_required is not False:
            kinds.add("exit_key")
        if not self.held.get("boat"):
            kinds.add("boat")
        return [cell for cell, kind in frame.content.items() if kind in kinds]

    def _decide(self) -> str:
        boat = bool(self.held.get("boat"))
        frame, goals = self.frame, self.wanted(self.frame)
        if self.lost is not None:
            frame = lost_view(self.lost.frame, self.lost.candidates, self.main)
            goals = self.wanted(frame)
            if self._worth_returning(boat):
                frame.pit_dest[(0, 0)] = _RETURN
                goals = [*goals, _RETURN]
        # a seeded order of moves breaks ties, so no situation repeats forever the same way
        order = [DIRECTIONS[i] for i in self.rng.permutation(len(DIRECTIONS))]
        only_exit = self.can_win and self.main.exit is None  # everything held, exit unknown
        found = plan(
            frame,
            self.pos,
            boat=boat,
            can_win=self.can_win,
            goals=goals,
            order=order,
            frame_edges_first=only_exit and self.frame_edges_first,
            pits_last=self.lost is not None,
        )
        lost = self.lost
        if lost is not None and (
            found is None or found.aim == "pit" or len(lost.candidates) <= FEW_PLACES
        ):
            # lost, with few places left or next into a pit of unknown far end (which would
            # lose them): first tell the places apart by the map, if a move can
            telling = telling_move(
                lost.frame, lost.candidates, self.pos, self.main, self.held, boat, self.rng
            )
            if telling is not None:
                return telling
        if found is not None:
            return found.action
        bomb = self._bomb()
        if bomb is not None:
            return bomb
        # nothing known is worth doing: a random step may still change something
        moves = [a for a in self.actions if a in DIRECTIONS]
        return moves[int(self.rng.integers(len(moves)))]

    def _bomb(self) -> str | None:
        """A grenade at a wall of the current cell beside a cell never entered."""
        if not self.held.get("grenades"):
            return None
        for direction in DIRECTIONS:
            name = f"bomb_{direction}"
            if name not in self.actions:
                continue
            there = neighbour(self.pos, direction)
            if self.frame.edges.get((self.pos, direction)) == "wall" and (
                there not in self.frame.content
            ):
                return name
        return None

    # --- learning ----------------------------------------------------------------------------
    def _learn(self, action: str, observation: AgiMazeObservation) -> None:
        formal = observation.formal
        events = list(formal.get("events", ()))
        frame, here = self.frame, self.pos
        if action.startswith("bomb_"):
            self._learn_bomb(action.removeprefix("bomb_"), events, formal)
            return
        if action not in DIRECTIONS:
            return  # look_*: the player does not move
        if "exited" in events:
            frame.set_edge(here, action, "exit")
            self.won = True
            return
        if "exit_blocked" in events or "exit_locked" in events:
            frame.set_edge(here, action, "exit")
            if "exit_locked" in events:
                self.exit_key_required = True
            return
        if "bumped_wall" in events or "bumped_monolith" in events:
            frame.set_edge(here, action, "wall" if "bumped_wall" in events else "monolith")
            if "river_carried" in events:
                frame.note_content(here, "river")
                self._ride(here, observation.text)
            self._check_lost()
            return
        if "moved" not in events:
            return
        there = neighbour(here, action)
        frame.set_edge(here, action, "open")
        frame.note_content(there, str(formal.get("observe", "empty")))
        if "river_carried" in events:
            frame.note_content(there, "river")
            self._ride(there, observation.text)
        elif "pit_teleport" in events:
            frame.note_content(there, "pit")
            self._pair_up()
            self._teleport(there)
        else:
            self.pos = there
        self._check_lost()

    def _learn_bomb(self, direction: str, events: list[str], formal: dict[str, object]) -> None:
        if "bomb_success" in events:
            self.frame.set_edge(self.pos, direction, "open")
        elif "bomb_failed" in events:
            target = formal.get("observe")
            if target in ("monolith", "exit"):
                self.frame.set_edge(self.pos, direction, target)
            elif target == "empty":
                self.frame.set_edge(self.pos, direction, "open")

    def _ride(self, start: Cell, text: str) -> None:
        ride = read_ride(text)
        if ride is None:  # cannot happen with the engine's narration; be lost rather than wrong
            self._teleport(None)
            return
        cell = start
        for i, move in enumerate(ride.moves):
            self.frame.flow[cell] = move
            self.frame.set_edge(cell, move, "open")
            cell = neighbour(cell, move)
            last = i == len(ride.moves) - 1
            self.frame.note_content(cell, "river_mouth" if last and ride.to_mouth else "river")
        self.pos = cell

    def _pair_up(self) -> None:
        """With a single cycle of two pits, the two pits known lead to each other."""
        pits = [cell for cell, kind in self.main.content.items() if kind == "pit"]
        if self.single_pair and len(pits) == 2:
            a, b = pits
            self.main.pit_dest[a], self.main.pit_dest[b] = b, a

    def _worth_returning(self, boat: bool) -> bool:
        """Lost one hop short of ``entry``, with walkable work left in the main frame."""
        lost = self.lost
        if lost is None or lost.entry is None or self._cycle_of(lost.entry) != lost.hops + 1:
            return False
        found = plan(
            self.main, lost.entry, boat=boat, can_win=self.can_win, goals=self.wanted(self.main)
        )
        return found is not None and found.aim in ("win", "goal", "probe")

    def _cycle_of(self, pit: Cell) -> int | None:
        """How many pits ``pit``'s cycle has, when known (task info or the open map)."""
        cycle = self.main.pit_cycle.get(pit)
        if cycle is not None:
            return list(self.main.pit_cycle.values()).count(cycle)
        return self.cycle_size

    def _teleport(self, pit: Cell | None) -> None:
        if pit is not None and pit in self.frame.pit_dest:
            self.pos = self.frame.pit_dest[pit]
            return
        lost = self.lost
        entry: Cell | None
        if lost is None:
            entry, hops = pit, 1
        elif lost.entry is not None and pit == (0, 0):
            entry, hops = lost.entry, lost.hops + 1  # back into the pit it came out of
        else:  # another pit: where it was may follow from where a pit can be
            entry, hops = self._placed_pit(lost, pit), 1
            if entry is None:
                hops = 0
            elif entry in self.main.pit_dest:
                self.frame, self.pos, self.lost = self.main, self.main.pit_dest[entry], None
                self._resolve_pockets()
                return
        landings = self._landings(lost, pit) if entry is None else None
        if lost is not None and lost.entry is not None:
            self._lost_trips[lost.entry] += 1  # left without finding out where it was
            if self._lost_trips[lost.entry] >= MAX_LOST_TRIPS * (self._cycle_of(lost.entry) or 2):
                self.main.dead_pits.add(lost.entry)
        if entry is not None and hops == self._cycle_of(entry):
            self.frame, self.pos, self.lost = self.main, entry, None  # round the cycle
            self._resolve_pockets()
            return
        # the same pit reached the same way is the same place: go on mapping it
        pocket = self.pockets.get((entry, hops)) if entry is not None else None
        if pocket is None:
            frame = Frame()
            frame.content[(0, 0)] = "pit"
            candidates = self._candidates(entry) if landings is None else landings
            pocket = Lost(frame, entry, hops, candidates)
            if entry is not None:
                self.pockets[(entry, hops)] = pocket
        self.lost = pocket
        self.frame = pocket.frame
        self.pos = (0, 0)
        self._check_lost()

    def _resolve_pockets(self) -> None:
        """Place every pocket the main frame's facts now pin down to one position."""
        for key, pocket in list(self.pockets.items()):
            entry, hops = key  # pockets are kept only for a known entry pit
            known = self.main.pit_dest.get(entry) if hops == 1 else None
            if known is not None:  # learned since: the pit it fell into leads there
                pocket.candidates = [known]
            pocket.candidates = [
                c for c in pocket.candidates if consistent(pocket.frame, c, self.main, self.held)
            ]
            if len(pocket.candidates) == 1:
                self._place(pocket, pocket.candidates[0])
                del self.pockets[key]

    def _placed_pit(self, lost: Lost, pit: Cell | None) -> Cell | None:
        """Lost and fallen into the pit ``pit`` of its lost frame: when that leaves one place for
        the lost frame (the cell entered is a pit there), merge it into the map and return the
        pit's cell on the map; else None."""
        if pit is None:
            return None
        lost.candidates = [
            c for c in lost.candidates if consistent(lost.frame, c, self.main, self.held)
        ]
        if len(lost.candidates) != 1:
            return None
        origin = lost.candidates[0]
        self._place(lost, origin)
        self.pockets = {k: p for k, p in self.pockets.items() if p is not lost}
        return (origin[0] + pit[0], origin[1] + pit[1])

    def _landings(self, lost: Lost | None, pit: Cell | None) -> list[Cell]:
        """Where a lost player that fell into ``pit`` (a cell of its lost frame) may be now.

        The map is still valid, only the position is unknown: for every place the lost frame
        may lie at, the pit is a known cell of the map, whose far end is known or is one of the
        places a pit may be. Without a lost frame to place, anywhere a pit may be.
        """
        if lost is None or pit is None or not lost.candidates:
            return self._candidates(None)
        out: set[Cell] = set()
        for origin in lost.candidates:
            here = (origin[0] + pit[0], origin[1] + pit[1])  # the pit fallen into, on the map
            dest = self.main.pit_dest.get(here)
            out.update([dest] if dest is not None else self._candidates(here))
        return sorted(out)

    def _candidates(self, entry: Cell | None) -> list[Cell]:
        main = self.main
        if not main.bounded:
            return []
        assert main.rows is not None and main.cols is not None
        cycle = main.pit_cycle.get(entry) if entry is not None else None
        out = []
        for r in range(main.rows):
            for c in range(main.cols):
                cell = (r, c)
                if cell == entry or main.content.get(cell) not in (None, "pit"):
                    continue
                if cycle is not None and main.pit_cycle.get(cell, cycle) != cycle:
                    continue
                out.append(cell)
        return out

    def _check_lost(self) -> None:
        lost = self.lost
        if lost is None:
            return
        lost.candidates = [
            c for c in lost.candidates if consistent(lost.frame, c, self.main, self.held)
        ]
        if len(lost.candidates) != 1:
            return
        origin = lost.candidates[0]
        self._place(lost, origin)
        self.pockets = {k: p for k, p in self.pockets.items() if p is not lost}
        self.pos = (self.pos[0] + origin[0], self.pos[1] + origin[1])
        self.frame = self.main
        self.lost = None
        self._resolve_pockets()

    def _place(self, lost: Lost, origin: Cell) -> None:
        """Merge a lost frame into the main frame with its origin on ``origin``."""
        merge(lost.frame, origin, self.main)
        if lost.entry is not None and lost.hops == 1:
            self.main.pit_dest[lost.entry] = origin
            if self._cycle_of(lost.entry) == 2:
                self.main.pit_dest[origin] = lost.entry
        self._pair_up()
