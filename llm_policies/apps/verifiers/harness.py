"""The seats' harness: one Chat Completions call per turn, through verifiers' interception.

A verifiers harness is the program a seat's model runs in; verifiers records every model call
the program makes through the interception endpoint it is given (the trace: messages, usage,
timing, sampling). This one runs in-process, as verifiers allows ("the interception is the
contract, not the process"): each segment is one call of the OpenAI SDK to that endpoint,

* with exactly the turn's messages (:func:`~llm_policies.apps.verifiers.wire.turn_messages`):
  :meth:`MazeChatHarness.resume` does not prepend the trace's earlier turns, since each turn
  carries its whole request (verifiers' default relaunches a program on the whole conversation);
* with the Chat Completions options of the request's output mode
  (:func:`~llm_policies.apps.verifiers.wire.call_options`), the reply schema as a forced tool,
  ``response_format`` or nothing;
* sampling (``--sampling.*``) and the model (``-m``) are verifiers': its interception sets them
  on the call it sends upstream.

It runs no code, needs no container and no tools: the subprocess runtime is enough. A call that
still fails after the SDK's retries (``max_retries``) ends the seat's rollout with verifiers'
harness error, which the game records as an outage and stops on.
"""

from __future__ import annotations

from typing import Any

import openai
import verifiers.v1 as vf
from pydantic import Field

from llm_policies.apps.verifiers.wire import CURRENT, call_options


class MazeChatHarnessConfig(vf.HarnessConfig):
    """The harness's knobs (``--env.<seat>.harness.*``)."""

    max_retries: int = Field(2, ge=0, le=10)
    """The OpenAI SDK's retries of a failed call (verifiers relays provider errors as retryable)."""
    timeout_s: float = Field(600.0, gt=0)
    """The deadline of one call, retries included, in seconds."""


def _wire(message: Any) -> dict[str, Any]:
    return {"role": message.role, "content": message.content}


class MazeChatHarness(vf.Harness[MazeChatHarnessConfig]):
    """One chat completion per segment, in-process (see the module docstring)."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        system, prompt = self.resolve_prompt(data)
        # plain dicts: the SDK's typed message params differ between its majors (verifiers: 2.x)
        messages: list[Any] = [] if system is None else [{"role": "system", "content": system}]
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        elif prompt is not None:
            messages.extend(_wire(m) for m in prompt)
        request = CURRENT.get()
        options = call_options(request) if request is not None else {}
        client = openai.AsyncOpenAI(
            base_url=endpoint,
            api_key=secret,
            max_retries=self.config.max_retries,
            timeout=self.config.timeout_s,
        )
        try:
            await client.chat.completions.create(model=ctx.model, messages=messages, **options)
        finally:
            await client.close()
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")

    async def resume(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        messages: vf.Messages,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        """The next turn: exactly its messages (a whole request), not the trace's branch too."""
        turn = data.model_copy(update={"prompt": list(messages)})
        return await self.launch(ctx, trace, runtime, endpoint, secret, mcp_urls, turn)
