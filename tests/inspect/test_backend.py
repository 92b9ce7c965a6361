"""The Inspect backend: the harness's requests as Inspect calls, replies back raw, usage, errors.

One harness, two front ends: the Inspect model receives the system prompt, the messages and the
schema (in its key order) that the policy sends through any other backend.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from inspect_ai.model import ChatMessageAssistant, GenerateConfig, ModelOutput, get_model
from inspect_ai.model._call_tools import parse_tool_call  # the parser Inspect's providers use
from inspect_ai.tool import ToolFunction
from inspect_ai.util import LimitExceededError

from llm_policies.apps.inspect.backend import InspectBackend, tool_arguments, unavailable
from llm_policies.apps.inspect.policy import InspectPolicy, make_inspect_policy
from llm_policies.backends.base import (
    ChatMessage,
    ModelRequest,
    ModelTimeout,
    ModelUnavailable,
)
from llm_policies.backends.scripted import ScriptedBackend
from llm_policies.policy import EscapeLLMPolicy
from llm_policies.settings import ModelSettings
from maze_envs import maze_escape_v1
from maze_envs.escape.convert import observation_to_model
from maze_envs.policies.episodes import escape_episode
from tests.inspect.support import mock_model, text_output, tool_output, with_usage

MOVE = {"check": "N is open", "move": "N", "notebook": None, "radio": None}


def escape_turn() -> tuple[Any, Any]:
    env = maze_escape_v1.parallel_env(preset="navigator", width=5, height=5, max_turns=30)
    raw, _ = env.reset(seed=0)
    return escape_episode(env, "A"), observation_to_model(raw["A"], env.config, "A")


def request(mode: str, **settings: Any) -> ModelRequest:
    schema = {
        "type": "object",
        "properties": {"move": {"type": "string", "enum": ["N", "S"]}, "check": {"type": "string"}},
        "required": ["move", "check"],
        "additionalProperties": False,
    }
    return ModelRequest(
        system="rules",
        messages=(
            ChatMessage("user", "turn 1"),
            ChatMessage("assistant", "{}"),
            ChatMessage("user", "again"),
        ),
        output_mode=mode,  # type: ignore[arg-type]
        schema=schema,
        schema_name="maze_action",
        settings=ModelSettings(**settings),
    )


@pytest.mark.parametrize("mode", ["tool", "native", "prompted"])
def test_a_decision_sends_exactly_the_harness_request(mode: str) -> None:
    episode, observation = escape_turn()
    reference = ScriptedBackend([json.dumps(MOVE)])
    ours = EscapeLLMPolicy(reference, output_mode=mode, check="required")
    ours.reset("A", 0, episode)
    asyncio.run(ours.aact(observation))
    sent = reference.requests[0]

    mock = mock_model(lambda i, tools, c, g: tool_output(tools, MOVE) if tools else
                      text_output(json.dumps(MOVE)))  # fmt: skip
    policy = EscapeLLMPolicy(InspectBackend(mock.model), output_mode=mode, check="required")
    policy.reset("A", 0, episode)
    decision = asyncio.run(policy.aact(observation))
    assert decision.status == "ok" and decision.action.move == "N"
    (call,) = mock.calls
    assert [m.role for m in call.input] == ["system", "user"]
    assert call.input[0].text == sent.system and call.input[1].text == sent.messages[0].content
    if mode == "tool":
        (tool,) = call.tools
        params = tool.parameters.model_dump(exclude_none=True)
        assert tool.name == sent.schema_name
        assert (
            list(params["properties"])
            == list(sent.schema["properties"])
            == list(ours.schema.fields if ours.schema else ())
        )
        assert params == {k: v for k, v in sent.schema.items() if k in params}
        assert call.tool_choice == ToolFunction(name=sent.schema_name)
        assert call.config.response_schema is None
    elif mode == "native":
        assert call.tools == [] and call.config.response_schema is not None
        sent_schema = call.config.response_schema.json_schema.model_dump(exclude_none=True)
        assert sent_schema == sent.schema
        assert list(sent_schema["properties"]) == list(sent.schema["properties"])
    else:
        assert call.tools == [] and call.config.response_schema is None


def test_the_conversation_and_sampling_settings_travel() -> None:
    mock = mock_model(lambda i, t, c, g: text_output('{"move": "N"}'))
    reply = asyncio.run(
        InspectBackend(mock.model).complete(request("prompted", temperature=0.3, seed=7))
    )
    (call,) = mock.calls
    assert [(m.role, m.text) for m in call.input] == [
        ("system", "rules"), ("user", "turn 1"), ("assistant", "{}"), ("user", "again")
    ]  # fmt: skip
    assert isinstance(call.input[2], ChatMessageAssistant)
    assert call.config.temperature == 0.3 and call.config.seed == 7
    # the transport belongs to Inspect: nothing of ours is sent
    assert call.config.max_retries is None and call.config.timeout is None
    assert reply.text == '{"move": "N"}' and reply.tool_arguments is None


def test_usage_counts_every_input_token_and_prices_local_models_at_zero() -> None:
    output = with_usage(
        ModelOutput.from_content("mockllm/model", "{}"),
        input_tokens=80,
        input_tokens_cache_read=300,
        input_tokens_cache_write=20,
    )
    mock = mock_model([output])
    reply = asyncio.run(InspectBackend(mock.model).complete(request("prompted")))
    usage = reply.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (400, 300, 20)
    assert usage.requests == 1 and usage.cost_usd == 0.0 and usage.cost_status == "local"
    assert reply.raw["usage"]["input_tokens"] == 80  # Inspect's own output, as the journal keeps it


def test_a_cost_inspect_computed_is_taken_as_priced() -> None:
    output = with_usage(ModelOutput.from_content("mockllm/model", "{}"), total_cost=0.0125)
    reply = asyncio.run(InspectBackend(mock_model([output]).model).complete(request("prompted")))
    assert reply.usage.cost_usd == 0.0125 and reply.usage.cost_status == "priced"


def test_tool_arguments_inspect_could_not_parse_reach_the_quirk_rules() -> None:
    raw = "{'move': 'N', 'notebook': None, 'radio': None}"  # a Python literal
    call = parse_tool_call("call_1", "maze_action", raw)
    assert call.parse_error is not None and call.arguments == {}
    assert tool_arguments(call) == raw
    parsed = parse_tool_call("call_2", "maze_action", '{"radio": null, "move": "S"}')
    assert tool_arguments(parsed) == '{"radio": null, "move": "S"}'  # key order kept


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "rate_limit"), (503, "server"), (400, "refused"), (None, "server")]
)
def test_failures_after_inspects_retries_are_outages_with_a_kind(
    status: int | None, kind: str
) -> None:
    class ProviderError(Exception):
        status_code = status

    error = unavailable(get_model("mockllm/model"), ProviderError("boom"))
    assert isinstance(error, ModelUnavailable) and error.kind == kind and error.status == status
    assert isinstance(unavailable(get_model("mockllm/model"), TimeoutError()), ModelTimeout)


def test_a_failing_model_is_an_outage_never_a_crash() -> None:
    def fail(*_: Any) -> ModelOutput:
        raise ConnectionError("connection refused")

    with pytest.raises(ModelUnavailable, match="connection refused") as error:
        asyncio.run(InspectBackend(mock_model(fail).model).complete(request("tool")))
    assert error.value.kind == "connection"


def test_an_inspect_limit_is_kept_and_no_further_call_is_made() -> None:
    def over(*_: Any) -> ModelOutput:
        raise LimitExceededError("token", value=600, limit=500, message="Token limit exceeded")

    mock = mock_model(over)
    backend = InspectBackend(mock.model)
    for _ in range(2):
        with pytest.raises(ModelUnavailable, match="Inspect token limit reached"):
            asyncio.run(backend.complete(request("tool")))
    assert len(mock.calls) == 1
    assert backend.control.stop_reason == "Inspect token limit reached: Token limit exceeded"


def test_the_policy_records_the_settings_the_inspect_model_samples_with() -> None:
    model = get_model(
        "mockllm/model",
        config=GenerateConfig(temperature=0.7, max_tokens=300, max_retries=9),
        memoize=False,
    )
    policy = make_inspect_policy("escape", model, seed=3, prompt_version="v12")
    assert isinstance(policy, InspectPolicy)
    settings = policy.settings  # the wrapped policy's attributes show through
    assert (settings.temperature, settings.max_output_tokens, settings.seed) == (0.7, 300, 3)
    assert policy.options.prompt_version == "v12"
    given = make_inspect_policy("escape", model, temperature=0.1)
    assert given.settings.temperature == 0.1  # a value given to the policy wins
    report = policy.harness()
    assert report["model"] == "inspect:mockllm/model" and report["prompt_version"] == "v12"
    assert report["temperature"] == 0.7
    assert report["inspect"] == {
        "model": "mockllm/model",
        "generate_config": {"temperature": 0.7, "max_tokens": 300, "max_retries": 9},
    }
    # the deadline and retries are Inspect's: our defaults for them are not reported
    assert "retries" not in report["settings"] and "timeout_s" not in report["settings"]


def test_a_schema_inspect_could_not_carry_is_refused_not_changed() -> None:
    from llm_policies.apps.inspect.backend import inspect_schema

    schema = {"type": "object", "properties": {"move": {"type": "string", "const": "N"}}}
    with pytest.raises(ValueError, match="keywords Inspect's JSONSchema does not carry"):
        inspect_schema(schema)
    kept = {"type": "object", "properties": {"b": {"type": "integer"}, "a": {"type": "string"}}}
    assert list(inspect_schema(kept).model_dump(exclude_none=True)["properties"]) == ["b", "a"]
