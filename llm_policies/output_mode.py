"""Which output mode a policy's requests go out in: one object owns that choice (issue 26).

:class:`OutputModeChoice` holds the mode asked for (the harness setting ``output_mode``: one of
:data:`~llm_policies.settings.OUTPUT_MODES` or ``"auto"``; when none is asked, the backend's
default, :func:`default_output_mode`) and the mode in force (``current``: the asked one, or for
``auto`` the one the endpoint's probes chose,
:meth:`~llm_policies.capabilities.Endpoint.pick_mode`).
The policy asks it before each decision (:meth:`OutputModeChoice.ready`) and the harness sends
what it says (:meth:`OutputModeChoice.fixed` when a caller gives no choice). What is recorded per
game is unchanged: ``output_mode`` (asked) and ``output_mode_chosen`` (in force) in the harness
report.

Example:
    >>> from llm_policies.backends.scripted import ScriptedBackend
    >>> choice = OutputModeChoice.of(ScriptedBackend(['{"move": "N"}']), None)
    >>> choice.asked, choice.current
    ('tool', 'tool')
    >>> OutputModeChoice.of(ScriptedBackend([]), "auto").current is None
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from llm_policies.backends.base import ModelBackend
from llm_policies.capabilities import Endpoint
from llm_policies.outcome import mode_rejected_message
from llm_policies.settings import HarnessOutputMode, ModelSettings, OutputMode

__all__ = ["OutputModeChoice", "default_output_mode"]

#: Pydantic-ai prefixes whose servers are OpenAI-compatible ones of the user's when local.
_COMPATIBLE_PREFIXES: Final = frozenset({"openai-chat"})


def default_output_mode(backend: ModelBackend) -> HarnessOutputMode:
    """The output mode a policy uses when none is asked for.

    ``auto`` for an OpenAI-compatible server declared local (llama.cpp, vLLM, LM Studio: they
    differ in what they honour), the backend's first mode when it has no ``tool`` mode (Ollama:
    ``native``), else ``tool``.
    """
    served = tuple(getattr(backend, "output_modes", ()) or ())
    if backend.local and backend.spec.partition(":")[0] in _COMPATIBLE_PREFIXES:
        return "auto"
    if served and "tool" not in served:
        return served[0]
    return "tool"


@dataclass
class OutputModeChoice:
    """The output mode asked for (``asked``) and the one requests go out in (``current``,
    ``None`` until ``auto`` has chosen); see the module docstring."""

    asked: HarnessOutputMode
    current: OutputMode | None

    @classmethod
    def of(cls, backend: ModelBackend, asked: HarnessOutputMode | None) -> OutputModeChoice:
        """The choice of a policy on ``backend`` asked for ``asked`` (``None``: the default).

        Raises ValueError when the backend does not serve the asked mode.
        """
        served = tuple(getattr(backend, "output_modes", ()) or ())
        if asked is None:
            asked = default_output_mode(backend)
        elif served and asked not in (*served, "auto"):
            raise ValueError(
                f"output mode {asked!r} is not served by {backend.spec}; use "
                f"one of {', '.join(served)} or auto"
            )
        return cls(asked, None if asked == "auto" else asked)

    @classmethod
    def fixed(cls, asked: HarnessOutputMode, current: OutputMode | None = None) -> OutputMode:
        """The mode a request goes out in when the caller holds no choice: ``current`` (what
        ``auto`` chose), else ``asked``, which may then not be ``auto``."""
        if current is not None:
            return current
        if asked == "auto":
            raise ValueError("decide() needs the output mode that 'auto' chose (mode=...)")
        return asked

    @property
    def auto(self) -> bool:
        """Whether the mode is the probes' choice (it may then be chosen again)."""
        return self.asked == "auto"

    async def ready(
        self, endpoint: Endpoint, backend: ModelBackend, settings: ModelSettings
    ) -> str | None:
        """Settle :attr:`current` before a request: ``None`` when ready, or why the asked mode
        cannot be sent (the server rejects it). For ``auto``, a rejected mode is dropped and the
        endpoint chooses again (its probes may raise
        :class:`~llm_policies.backends.base.ModelError`: nothing is chosen then)."""
        if self.current is not None:
            rejected = endpoint.rejected(self.current)
            if rejected is None:
                return None
            if not self.auto:
                return mode_rejected_message(self.current, rejected)
            self.current = None  # auto: choose again without the rejected mode
            endpoint.choice = None
        choice = await endpoint.pick_mode(backend, settings)
        self.current = choice.mode
        return None
