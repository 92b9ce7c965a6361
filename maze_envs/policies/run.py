"""What a run shares with the policies it plays: its budget, and what they learnt before it began.

Optional hooks, duck-typed: a policy that has none plays the same. ``maze-envs bench``
(:mod:`maze_envs.bench`) calls them; the language-model policies (``llm_policies``) answer them.

* ``policy.prepare_run() -> RunShared | None``: called once per distinct policy spec in the
  runner's process, before the first game. A model policy asks its server what it needs (does
  it answer, its context window, how many requests it serves at once, which model it serves,
  the output mode ``auto`` chooses) and returns it as a :class:`RunShared`, which every worker
  process of the run installs before its first game, so agents, games and workers share one
  discovery. A server that cannot be reached at all is part of what it learnt: its decisions
  are then outages at once, without a request or a retry, so the run ends within seconds
  (``maze-envs bench`` exit status 4, the outage message naming model and endpoint) instead of
  playing every decision into the retry budget.
* ``policy.bind_run_budget(budget: RunBudget) -> bool``: called before the policy's ``reset``
  for a game, when the run has caps (``--max-tokens-per-run``...). A policy that returns True
  reserves what each request may cost in ``budget`` before sending it and settles it after, so
  the run's cap holds across every worker: the runner then no longer charges that policy's
  decisions itself (it would count them twice).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from maze_envs.policies.interface import Usage

__all__ = ["RunBudget", "RunShared", "bind_run_budget", "prepare_run"]


@runtime_checkable
class RunShared(Protocol):
    """What a policy learnt for the whole run (picklable); ``install`` puts it in place in a
    process that plays the run's games. ``processes``: how many processes play them at once
    (a server's slots are shared between them)."""

    def install(self, processes: int) -> None: ...


@runtime_checkable
class RunBudget(Protocol):
    """A run's budget as a policy's requests see it (shared by every worker of the run).

    ``hold`` sets aside what one request may cost (tokens, dollars or ``None`` when unknown),
    or returns why it must not be sent; ``unhold`` gives it back after the reply was charged;
    ``charge`` counts what a request cost; ``exceeded`` says why play must stop (a cap
    reached), or ``None``. ``parent`` is ``None``: the run is the top.
    """

    parent: Any

    def hold(self, tokens: int, cost_usd: float | None) -> str | None: ...

    def unhold(self, tokens: int, cost_usd: float) -> None: ...

    def charge(self, usage: Usage | None) -> None: ...

    def exceeded(self) -> str | None: ...


def prepare_run(policy: object) -> RunShared | None:
    """``policy.prepare_run()`` when it has one (see the module docstring), else ``None``."""
    prepare = getattr(policy, "prepare_run", None)
    if not callable(prepare):
        return None
    shared = prepare()
    return shared if isinstance(shared, RunShared) else None


def bind_run_budget(policy: object, budget: RunBudget) -> bool:
    """Whether ``policy`` took ``budget`` to reserve its requests in (see the module docstring)."""
    bind = getattr(policy, "bind_run_budget", None)
    return bool(bind(budget)) if callable(bind) else False
