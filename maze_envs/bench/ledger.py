"""Per-run caps on model tokens and cost: one budget for the whole run, whatever runs its games.

A run's cap is one budget shared by every game and every worker of the run, held by a *ledger*
the runner owns: a plain object when games run in this process, shared memory that every worker
process of the process pool inherits, an actor on Ray.

**Reserve before sending, settle after.** A policy that takes the run's budget
(:func:`maze_envs.policies.run.bind_run_budget`: the language-model policies do) gets a
:class:`LedgerBudget` for its game: before each request it *holds* what the request may cost in
the ledger (refused, so the request is not sent, when the tokens used and held by every game of
the run plus this request would pass the cap), and after the reply it charges what it really
cost and gives the hold back. So however many games and workers ask at once, a run never
spends more than its cap plus what replies write beyond their reservation (a reservation is
the prompt's count plus the game's longest reply so far: ``llm_policies.guard``). The decisions
of other policies (no such hook) are charged after each turn, as before. Each game also reads
back, once per turn, whether a cap is reached. When it is:

* the games in progress stop after their turn: status ``stopped``, ``stop_reason`` ``"run cap:
  <which cap, what was used>"`` (recorded in the journal as an aborted game,
  ``"stopped": "run_cap"``);
* no other game starts: the runner dispatches none, and a worker that finds the cap reached
  before a game starts reports it as stopped without playing it (a row, no journal game);
* ``--resume`` counts the run's spend so far (the tokens and cost of the rows already there) and
  plays the games the cap stopped again, so raising the cap and resuming completes the run.

A cap is reached when the total reaches it (``>=``), or once a request was refused because it
would not fit in what is left (the rest of the run could only send smaller ones). Decisions
charged after the turn (policies that do not reserve) may overshoot it by the turn each game in
flight was playing.

The caps of a run (:class:`CapTable`) come from two places:

* the run: ``RunOptions(max_tokens_per_run=..., max_cost_per_run=...)``,
  ``maze-envs bench --max-tokens-per-run N --max-cost-per-run USD``: every game counts;
* the policy specs: an LLM policy's options ``max_tokens_per_run`` / ``max_cost_per_run`` (with
  ``run=NAME``, default ``default``) name one budget per (name, caps), shared by every agent
  whose spec names it, as in :mod:`llm_policies.registry`, but across every worker of the run.

A cost cap cannot be checked against a model whose price is unknown (``cost_status ==
"unknown"``): such a call stops the run, with the reason (set a token cap instead).

Example:
    >>> from maze_envs.policies.interface import Usage
    >>> table = CapTable((Cap("run", max_tokens=1000),))
    >>> ledger = LocalLedger(table)
    >>> ledger.update({0: charge_of(Usage(input_tokens=600, output_tokens=100))}, (0,)) is None
    True
    >>> ledger.update({0: charge_of(Usage(input_tokens=300))}, (0,))
    'token cap of the run reached: 1000 tokens used by all its games, cap 1000'
    >>> held = LocalLedger(table)
    >>> held.hold((0,), 800, 0.0) is None, held.hold((0,), 300, 0.0)
    (True, 'token cap of the run reached: 0 tokens used and 800 held by its games; the next request needs up to 300, cap 1000')
"""  # noqa: E501

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from maze_envs.bench.spec import GameTask
from maze_envs.policies.interface import Usage

#: A charge: (tokens, known cost in USD, calls of unknown price).
Charge = tuple[int, float, int]
#: The ``stop_reason`` prefix of games a run cap stopped (played again by ``--resume``).
RUN_CAP_PREFIX = "run cap: "
#: Spec options naming a policy's run budget (as the LLM policies read them).
SPEC_TOKENS, SPEC_COST, SPEC_NAME = "max_tokens_per_run", "max_cost_per_run", "run"
# values per budget in a ledger: tokens, known cost, unknown-price calls (charged); tokens and
# cost held for requests in flight; requests refused for want of room
_FIELDS = 6
_UNKNOWN, _HELD_TOKENS, _HELD_COST, _REFUSED = 2, 3, 4, 5


@dataclass(frozen=True)
class Cap:
    """One budget of a run: a name for messages and its caps (``None``: no cap)."""

    name: str
    max_tokens: int | None = None
    max_cost_usd: float | None = None

    def __post_init__(self) -> None:
        if self.max_tokens is not None and self.max_tokens <= 0:
            raise ValueError(f"a token cap must be positive, got {self.max_tokens}")
        if self.max_cost_usd is not None and not self.max_cost_usd > 0:
            raise ValueError(f"a cost cap must be positive, got {self.max_cost_usd}")

    def exceeded(self, tokens: float, cost: float, unknown: float, *state: float) -> str | None:
        """Why games must stop with these totals, or ``None``."""
        refused = state[_REFUSED - 3] if len(state) > _REFUSED - 3 else 0
        if self.max_tokens is not None and (tokens >= self.max_tokens or refused):
            left = "" if tokens >= self.max_tokens else "; the next request did not fit"
            return (
                f"token cap of the {self.name} reached: {int(tokens)} tokens used by all its "
                f"games, cap {self.max_tokens}{left}"
            )
        if self.max_cost_usd is not None:
            if unknown:
                return (
                    f"cost cap of the {self.name} cannot be checked: {int(unknown)} call(s) of "
                    "a model whose price is unknown (set a token cap instead)"
                )
            if cost >= self.max_cost_usd or refused:
                return (
                    f"cost cap of the {self.name} reached: ${cost:.4f} spent by all its games, "
                    f"cap ${self.max_cost_usd:.4f}"
                )
        return None

    def holds(self, values: Sequence[float], tokens: int, cost: float | None) -> str | None:
        """Why a request of ``tokens`` and ``cost`` (``None``: unknown) must not be sent with
        this budget's ``values`` (used and held), or ``None``."""
        used, spent, _, held, held_cost = values[:5]
        if self.max_tokens is not None and used + held + tokens > self.max_tokens:
            return (
                f"token cap of the {self.name} reached: {int(used)} tokens used and {int(held)} "
                f"held by its games; the next request needs up to {tokens}, cap {self.max_tokens}"
            )
        if self.max_cost_usd is not None:
            if cost is None:
                return (
                    f"cost cap of the {self.name} cannot be checked: the price of the model is "
                    "unknown (set a token cap instead)"
                )
            if spent + held_cost + cost > self.max_cost_usd:
                return (
                    f"cost cap of the {self.name} reached: ${spent:.6f} spent and "
                    f"${held_cost:.6f} held by its games; the next request may cost up to "
                    f"${cost:.6f}, cap ${self.max_cost_usd:.6f}"
                )
        return None


def charge_of(usage: Usage) -> Charge:
    """What ``usage`` charges a budget: tokens (input + output), known cost, unknown-price calls."""
    unknown = usage.cost_status == "unknown"
    cost = 0.0 if unknown else (usage.cost_usd or 0.0)
    return usage.input_tokens + usage.output_tokens, cost, int(unknown)


def _number(value: Any, kind: type[int] | type[float], what: str) -> Any:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {value!r}") from None


@dataclass(frozen=True)
class CapTable:
    """The budgets of a run, and which of them each agent's usage charges."""

    caps: tuple[Cap, ...]
    #: Index of the run-wide cap (every agent of every game), if there is one.
    run_wide: int | None = None
    #: Spec budget key (name, tokens, cost) -> index.
    by_spec: tuple[tuple[tuple[str, int | None, float | None], int], ...] = ()

    @classmethod
    def build(
        cls,
        tasks: Iterable[GameTask],
        max_tokens: int | None = None,
        max_cost_usd: float | None = None,
    ) -> CapTable | None:
        """The caps of a run of ``tasks`` (see the module docstring); ``None`` when it has none."""
        caps: list[Cap] = []
        run_wide = None
        if max_tokens is not None or max_cost_usd is not None:
            caps.append(Cap("run", max_tokens, max_cost_usd))
            run_wide = 0
        keys: dict[tuple[str, int | None, float | None], int] = {}
        for task in tasks:
            for spec in task.policy.specs:
                key = _spec_key(spec.options)
                if key is not None and key not in keys:
                    keys[key] = len(caps)
                    caps.append(Cap(f"run {key[0]}", key[1], key[2]))
        if not caps:
            return None
        return cls(tuple(caps), run_wide, tuple(keys.items()))

    def budgets(self, task: GameTask) -> dict[str, tuple[int, ...]]:
        """The budgets each agent of ``task`` charges."""
        specs = dict(self.by_spec)
        out: dict[str, tuple[int, ...]] = {}
        for agent, spec in zip(task.agents, task.policy.members(task.agents), strict=True):
            indexes = [] if self.run_wide is None else [self.run_wide]
            key = _spec_key(spec.options)
            if key is not None:
                indexes.append(specs[key])
            out[agent] = tuple(indexes)
        return out

    def watched(self, task: GameTask) -> tuple[int, ...]:
        """Every budget ``task`` charges (a cap reached in any of them stops the game)."""
        return tuple(sorted({i for indexes in self.budgets(task).values() for i in indexes}))

    def reason(self, values: Sequence[float], watch: Iterable[int]) -> str | None:
        """Why a game watching ``watch`` must stop, given a ledger's ``values``."""
        for index in watch:
            base = _FIELDS * index
            reason = self.caps[index].exceeded(*values[base : base + _FIELDS])
            if reason is not None:
                return reason
        return None

    def hold(
        self, values: Any, indexes: Sequence[int], tokens: int, cost: float | None
    ) -> str | None:
        """Hold ``tokens`` and ``cost`` in the budgets ``indexes`` of a ledger's ``values``
        (changed in place), or say why not (and mark the budget that refused: no room left)."""
        for index in indexes:
            base = _FIELDS * index
            reason = self.caps[index].holds(values[base : base + _FIELDS], tokens, cost)
            if reason is not None:
                # no room for it: the budget is spent as far as this run can tell (an unknown
                # price: a call that cannot be checked)
                unchecked = reason.startswith("cost cap") and cost is None
                values[base + (_UNKNOWN if unchecked else _REFUSED)] += 1
                return reason
        for index in indexes:
            base = _FIELDS * index
            values[base + _HELD_TOKENS] += tokens
            values[base + _HELD_COST] += cost or 0.0
        return None

    def unhold(self, values: Any, indexes: Sequence[int], tokens: int, cost: float) -> None:
        """Give back what :meth:`hold` set aside."""
        for index in indexes:
            base = _FIELDS * index
            values[base + _HELD_TOKENS] -= tokens
            values[base + _HELD_COST] -= cost

    def spent(self, rows: Iterable[Mapping[str, Any]], tasks: Iterable[GameTask]) -> list[float]:
        """Ledger values for what the rows of a resumed run already spent (each row's totals
        charged to every budget of its game)."""
        values = [0.0] * (_FIELDS * len(self.caps))
        by_key = {task.run_key: task for task in tasks}
        for row in rows:
            task = by_key.get(str(row.get("run_key")))
            if task is None:
                continue
            tokens = (row.get("input_tokens") or 0) + (row.get("output_tokens") or 0)
            unknown = row.get("cost_status") == "unknown"
            cost = 0.0 if unknown else float(row.get("cost_usd") or 0.0)
            for index in self.watched(task):
                _add(values, index, (int(tokens), cost, int(unknown)))
        return values


def _spec_key(options: Mapping[str, Any]) -> tuple[str, int | None, float | None] | None:
    if options.get(SPEC_TOKENS) is None and options.get(SPEC_COST) is None:
        return None
    tokens = _number(options.get(SPEC_TOKENS), int, SPEC_TOKENS)
    cost = _number(options.get(SPEC_COST), float, SPEC_COST)
    if tokens is None and cost is None:
        return None
    return str(options.get(SPEC_NAME, "default")), tokens, cost


def _add(values: Any, index: int, charge: Charge) -> None:
    base = _FIELDS * index
    for offset, amount in enumerate(charge):
        values[base + offset] += amount


class RunLedger(Protocol):
    """What games and executors need of a ledger: charge, hold, and learn whether to stop."""

    def update(self, charges: Mapping[int, Charge], watch: Sequence[int]) -> str | None:
        """Add ``charges`` (budget index -> charge) and return why a game watching the budgets
        ``watch`` must stop (a cap reached), or ``None``."""
        ...

    def hold(self, indexes: Sequence[int], tokens: int, cost: float | None) -> str | None:
        """Hold what one request may cost in the budgets ``indexes``, or say why it must not
        be sent."""
        ...

    def unhold(self, indexes: Sequence[int], tokens: int, cost: float) -> None:
        """Give back a hold."""
        ...


class LocalLedger:
    """A ledger in this process (inline runs; the state behind a Ray ledger actor)."""

    def __init__(self, table: CapTable, spent: Sequence[float] | None = None) -> None:
        self.table = table
        self.values = list(spent) if spent is not None else [0.0] * (_FIELDS * len(table.caps))
        self._lock = threading.Lock()

    def update(self, charges: Mapping[int, Charge], watch: Sequence[int]) -> str | None:
        with self._lock:
            for index, charge in charges.items():
                _add(self.values, index, charge)
            return self.table.reason(self.values, watch)

    def hold(self, indexes: Sequence[int], tokens: int, cost: float | None) -> str | None:
        with self._lock:
            return self.table.hold(self.values, indexes, tokens, cost)

    def unhold(self, indexes: Sequence[int], tokens: int, cost: float) -> None:
        with self._lock:
            self.table.unhold(self.values, indexes, tokens, cost)


class SharedLedger:
    """A ledger in shared memory, for the workers of a process pool.

    Made from the pool's multiprocessing context and handed to each worker when it starts (the
    pool's ``initializer``): shared memory cannot travel in a task's arguments.
    """

    def __init__(self, table: CapTable, context: Any, spent: Sequence[float] | None = None) -> None:
        self.table = table
        self.values = context.Array("d", _FIELDS * len(table.caps))
        if spent is not None:
            self.values[:] = list(spent)

    def update(self, charges: Mapping[int, Charge], watch: Sequence[int]) -> str | None:
        with self.values.get_lock():
            for index, charge in charges.items():
                _add(self.values, index, charge)
            return self.table.reason(self.values[:], watch)

    def hold(self, indexes: Sequence[int], tokens: int, cost: float | None) -> str | None:
        with self.values.get_lock():
            return self.table.hold(self.values, indexes, tokens, cost)

    def unhold(self, indexes: Sequence[int], tokens: int, cost: float) -> None:
        with self.values.get_lock():
            self.table.unhold(self.values, indexes, tokens, cost)


class LedgerBudget:
    """The run's budgets ``indexes`` as one policy's requests see them (a
    :class:`maze_envs.policies.run.RunBudget`): holds, charges and stop checks go to the ledger
    at once, each stop reason prefixed with :data:`RUN_CAP_PREFIX`."""

    parent: Any = None

    def __init__(self, ledger: RunLedger, indexes: tuple[int, ...]) -> None:
        self.ledger = ledger
        self.indexes = indexes

    def hold(self, tokens: int, cost_usd: float | None) -> str | None:
        reason = self.ledger.hold(self.indexes, tokens, cost_usd)
        return None if reason is None else RUN_CAP_PREFIX + reason

    def unhold(self, tokens: int, cost_usd: float) -> None:
        self.ledger.unhold(self.indexes, tokens, cost_usd)

    def charge(self, usage: Usage | None) -> None:
        if usage is not None:
            charge = charge_of(usage)
            self.ledger.update(dict.fromkeys(self.indexes, charge), ())

    def exceeded(self) -> str | None:
        reason = self.ledger.update({}, self.indexes)
        return None if reason is None else RUN_CAP_PREFIX + reason


class GameBudget:
    """One game's view of the run's ledger: a :class:`LedgerBudget` per group of agents that
    charge the same budgets (handed to policies that reserve their requests), and the turn's
    charges of the other agents, sent once a turn."""

    def __init__(self, ledger: RunLedger, table: CapTable, task: GameTask) -> None:
        self.ledger = ledger
        self.agents = table.budgets(task)
        self.watch = table.watched(task)
        self._turn: dict[int, Charge] = {}
        self._budgets: dict[tuple[int, ...], LedgerBudget] = {}
        #: agents whose policies reserve and charge their requests themselves
        self.bound: set[str] = set()

    def budget(self, agent: str) -> LedgerBudget:
        """The budget ``agent``'s policy reserves in (the same object for the agents of the
        game that charge the same budgets: a game's policies share it)."""
        indexes = self.agents.get(agent, ())
        if indexes not in self._budgets:
            self._budgets[indexes] = LedgerBudget(self.ledger, indexes)
        return self._budgets[indexes]

    def charge(self, agent: str, usage: Usage | None) -> None:
        """Note what one decision of ``agent`` cost (sent with the turn's :meth:`check`), unless
        its policy charged the ledger itself."""
        if usage is None or agent in self.bound:
            return
        tokens, cost, unknown = charge_of(usage)
        for index in self.agents.get(agent, ()):
            before = self._turn.get(index, (0, 0.0, 0))
            self._turn[index] = (before[0] + tokens, before[1] + cost, before[2] + unknown)

    def check(self) -> str | None:
        """Send this turn's charges; the stop reason (``"run cap: ..."``) or ``None``."""
        charges, self._turn = self._turn, {}
        reason = self.ledger.update(charges, self.watch)
        return None if reason is None else RUN_CAP_PREFIX + reason
