"""Requests, settings, the retry loop and the scripted backend (no servers needed)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pydantic
import pytest

from llm_policies.backends import (
    Attempt,
    ChatMessage,
    ContextLengthExceeded,
    ModelError,
    ModelRequest,
    ModelTimeout,
    ModelUnavailable,
    RetryPolicy,
    ScriptedBackend,
    ScriptedReply,
    context_error,
    make_backend,
    parse_spec,
)
from llm_policies.backends.retry import call_with_retries
from llm_policies.settings import ModelSettings
from tests.llm.backend_support import Sleeps, request

# --- requests and settings -----------------------------------------------------------------


def test_settings_defaults_and_round_trip() -> None:
    settings = ModelSettings()
    assert (settings.timeout_s, settings.retries, settings.num_ctx) == (60.0, 4, 8192)
    assert settings.think is False and settings.temperature is None
    data = ModelSettings(temperature=0.7, base_url="https://proxy.example/v1").model_dump()
    assert ModelSettings(**data) == ModelSettings(
        temperature=0.7, base_url="https://proxy.example/v1"
    )
    with pytest.raises(pydantic.ValidationError):
        settings.temperature = 1.0  # type: ignore[misc]  # frozen


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"temperature": -0.1}, "temperature"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"retries": -1}, "retries"),
        ({"num_ctx": 10}, "num_ctx"),
        ({"reasoning_effort": "extreme"}, "reasoning_effort"),
        ({"base_url": "localhost:8000"}, "http:// or https://"),
        ({"tempreature": 0.5}, "Extra inputs are not permitted"),
    ],
)
def test_settings_reject_bad_values_with_the_field_named(
    kwargs: dict[str, Any], needle: str
) -> None:
    with pytest.raises(pydantic.ValidationError, match=needle):
        ModelSettings(**kwargs)


def test_transport_settings_are_not_part_of_the_cache_fields() -> None:
    fields = ModelSettings(
        timeout_s=5,
        retries=1,
        keep_alive="1m",
        temperature=0.5,
        base_url="http://127.0.0.1:9/v1",
        context_window=2048,
    ).cache_fields()
    for transport in ("timeout_s", "retries", "keep_alive", "base_url", "context_window"):
        assert transport not in fields
    assert fields["temperature"] == 0.5 and fields["num_ctx"] == 8192


def test_requests_are_validated() -> None:
    settings = ModelSettings()
    user = (ChatMessage("user", "hi"),)
    modes = "output_mode must be one of tool, native, grammar, json_object, prompted"
    with pytest.raises(ValueError, match=modes):
        ModelRequest("s", user, "xml", {}, "a", settings)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one message"):
        ModelRequest("s", (), "tool", {}, "a", settings)
    with pytest.raises(ValueError, match="last message of a ModelRequest must be the user's"):
        ModelRequest("s", (*user, ChatMessage("assistant", "x")), "tool", {}, "a", settings)
    with pytest.raises(ValueError, match="schema_name must be"):
        ModelRequest("s", user, "tool", {}, "maze action", settings)
    with pytest.raises(ValueError, match="role must be 'user' or 'assistant'"):
        ChatMessage("system", "x")  # type: ignore[arg-type]


def test_spec_parsing() -> None:
    assert parse_spec("openrouter:anthropic/claude-sonnet-5.5") == (
        "openrouter",
        "anthropic/claude-sonnet-5.5",
    )
    for bad in ("", "claude", ":model", "anthropic:"):
        with pytest.raises(ValueError, match="<provider>:<model>"):
            parse_spec(bad)


# --- the retry loop ------------------------------------------------------------------------


def run_retries(outcomes: list[Any], settings: ModelSettings, sleeps: Sleeps) -> Any:
    """call_with_retries over attempts that raise or return ``outcomes`` in order."""
    queue = list(outcomes)

    async def attempt() -> Any:
        item = queue.pop(0)
        if isinstance(item, float):
            await asyncio.sleep(item)  # an attempt that runs long
            return "slow"
        if isinstance(item, BaseException):
            raise item
        return item

    def classify(error: Exception) -> ModelError | None:
        return error if isinstance(error, ModelError) else None

    return asyncio.run(
        call_with_retries(
            attempt,
            what="test:model",
            settings=settings,
            policy=sleeps.policy(seed=0),
            rng=sleeps.policy(seed=0).rng(),
            classify=classify,
        )
    )


def test_backoff_doubles_with_jitter_and_honours_retry_after() -> None:
    sleeps = Sleeps()
    errors = [
        ModelError("503", kind="server", retryable=True, status=503),
        ModelError("503", kind="server", retryable=True, status=503),
        ModelError("429", kind="rate_limit", retryable=True, status=429, retry_after=7.5),
        ModelError("503", kind="server", retryable=True, status=503),
    ]
    result, failures = run_retries([*errors, "reply"], ModelSettings(retries=4), sleeps)
    assert result == "reply"
    expected = RetryPolicy(seed=0)
    rng = np.random.default_rng(0)
    assert sleeps.waits == [
        expected.delay(0, None, rng),
        expected.delay(1, None, rng),
        expected.delay(2, 7.5, rng),
        expected.delay(3, None, rng),
    ]
    assert sleeps.waits[2] == 7.5  # at least what Retry-After asked (the backoff is below it)
    assert 0.25 <= sleeps.waits[0] < 0.5 and 0.5 <= sleeps.waits[1] < 1.0
    assert [f.kind for f in failures] == ["server", "server", "rate_limit", "server"]
    assert [f.waited_s for f in failures] == sleeps.waits


def test_backoff_is_capped() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=4.0)
    rng = np.random.default_rng(1)
    assert all(2.0 <= policy.delay(n, None, rng) < 4.0 for n in range(3, 12))


def test_the_deadline_covers_the_whole_attempt() -> None:
    sleeps = Sleeps()
    result, failures = run_retries([5.0, "fast"], ModelSettings(timeout_s=0.05), sleeps)
    assert result == "fast" and [f.kind for f in failures] == ["timeout"]


def test_the_budget_is_bounded() -> None:
    sleeps = Sleeps()
    error = ModelError("busy", kind="server", retryable=True, status=503)
    with pytest.raises(ModelUnavailable) as caught:
        run_retries([error] * 3, ModelSettings(retries=2), sleeps)
    assert len(sleeps.waits) == 2 and len(caught.value.attempts) == 3
    assert caught.value.attempts[-1] == Attempt("server", "busy", 503, 0.0)
    assert not caught.value.permanent
    with pytest.raises(ModelTimeout):
        run_retries([5.0, 5.0], ModelSettings(retries=1, timeout_s=0.05), Sleeps())


def test_identical_transient_500s_are_retried_to_the_budget() -> None:
    # transient or permanent comes from the reply's status and body, never from a repeat count:
    # two (or five) identical internal errors are still worth another try
    sleeps = Sleeps()
    error = ModelError("boom", kind="server", retryable=True, status=500)
    result, failures = run_retries([error, error, "reply"], ModelSettings(retries=4), sleeps)
    assert result == "reply" and len(failures) == 2 and len(sleeps.waits) == 2
    with pytest.raises(ModelUnavailable) as caught:
        run_retries([error] * 5, ModelSettings(retries=4), Sleeps())
    assert len(caught.value.attempts) == 5 and not caught.value.permanent
    assert caught.value.kind == "server"


def test_a_validation_error_body_is_permanent_at_once() -> None:
    body = (
        "status_code: 500, body: 1 validation error: {'type': 'literal_error', 'msg': "
        "\"Input should be 'text' or 'json_object'\"}"
    )
    error = ModelError(body, kind="server", retryable=True, status=500)
    with pytest.raises(ModelUnavailable) as caught:
        run_retries([error] * 5, ModelSettings(retries=4), Sleeps())
    assert len(caught.value.attempts) == 1 and caught.value.permanent
    assert "a request validation error" in caught.value.message


def test_a_context_length_refusal_is_never_retried() -> None:
    error = context_error(
        400, "This model's maximum context length is 2048 tokens (context_length_exceeded)"
    )
    assert error is not None
    with pytest.raises(ContextLengthExceeded) as caught:
        run_retries([error] * 3, ModelSettings(retries=2), Sleeps())
    assert caught.value.window == 2048 and len(caught.value.attempts) == 1
    assert caught.value.kind == "context"


def test_non_model_errors_propagate_unchanged() -> None:
    with pytest.raises(ZeroDivisionError):
        run_retries([ZeroDivisionError()], ModelSettings(), Sleeps())


def test_retry_policy_validation() -> None:
    with pytest.raises(ValueError, match="base_delay_s <= max_delay_s"):
        RetryPolicy(base_delay_s=5, max_delay_s=1)
    with pytest.raises(ValueError, match="max_retry_after_s"):
        RetryPolicy(max_retry_after_s=-1)


def test_model_errors_name_their_kind() -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        ModelError("x", kind="weird")  # type: ignore[arg-type]
    error = ModelUnavailable("down", kind="server", status=503, attempts=(Attempt("server", "x"),))
    assert error.to_json() == {
        "error": "ModelUnavailable",
        "kind": "server",
        "message": "down",
        "status": 503,
        "permanent": False,
        "attempts": [{"kind": "server", "message": "x", "status": None, "waited_s": 0.0}],
    }
    assert issubclass(ModelTimeout, ModelUnavailable) and issubclass(ModelUnavailable, ModelError)


# --- the scripted backend ------------------------------------------------------------------


def test_scripted_replies_go_where_the_mode_expects_and_requests_are_kept() -> None:
    settings = ModelSettings()
    backend = ScriptedBackend(['{"move": "N"}', '{"move": "S"}', ScriptedReply(text="fence")])

    async def go() -> list[Any]:
        return [
            await backend.complete(request(settings, "tool")),
            await backend.complete(request(settings, "native")),
            await backend.complete(request(settings, "tool")),
        ]

    tool, native, text_in_tool_mode = asyncio.run(go())
    assert (tool.tool_arguments, tool.text) == ('{"move": "N"}', None)
    assert (native.tool_arguments, native.text) == (None, '{"move": "S"}')
    assert (text_in_tool_mode.text, text_in_tool_mode.tool_arguments) == ("fence", None)
    assert [r.output_mode for r in backend.requests] == ["tool", "native", "tool"]
    assert tool.usage.cost_status == "local" and tool.usage.input_tokens > 0
    with pytest.raises(RuntimeError, match="no reply left for request 4"):
        asyncio.run(backend.complete(request(settings)))


def test_scripted_errors_and_functions() -> None:
    settings = ModelSettings()
    outage = ModelUnavailable("scripted outage", kind="server")
    backend = ScriptedBackend([outage])
    with pytest.raises(ModelUnavailable, match="scripted outage"):
        asyncio.run(backend.complete(request(settings)))
    echo = ScriptedBackend(lambda r: ScriptedReply(text=r.messages[-1].content, input_tokens=3))
    reply = asyncio.run(echo.complete(request(settings, user="hello")))
    assert reply.text == "hello" and reply.usage.input_tokens == 3


def test_make_backend_for_scripts() -> None:
    backend = make_backend("scripted:stay", ModelSettings(), client=['{"move": "STAY"}'])
    assert backend.spec == "scripted:stay" and backend.local
    # without a script, the name must be a stand-in model (scripted:wall-follower...)
    with pytest.raises(ValueError, match=r"no stand-in model 'scripted:stay'.*wall-follower"):
        make_backend("scripted:stay", ModelSettings())
    assert make_backend("scripted:wall-follower", ModelSettings()).spec == "scripted:wall-follower"
    with pytest.raises(TypeError, match="a script is a sequence"):
        ScriptedBackend("not a list")
