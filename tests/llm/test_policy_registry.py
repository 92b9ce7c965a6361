"""The registry factory behind the ``maze_envs.policies`` entry points."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from llm_policies.policy import AgiMazeLLMPolicy, EscapeLLMPolicy
from llm_policies.registry import PREFIXES, make_llm_policy, run_budget


def test_options_from_the_command_line_are_converted_and_split() -> None:
    policy = make_llm_policy(
        "scripted:x",
        "escape",
        client=['{"move": "N"}'],
        temperature="0.2",
        seed="7",
        mode="prompted",
        version="v10",
        check="required",
        order="radio,check,move,notebook",
        token_cap="5000",
        think="false",
    )
    assert isinstance(policy, EscapeLLMPolicy)
    assert policy.settings.temperature == 0.2 and policy.settings.seed == 7
    assert policy.settings.think is False
    options = policy.options
    assert options.output_mode == "prompted" and options.prompt_version == "v10"
    assert options.order == ("radio", "check", "move", "notebook")
    assert options.max_tokens_per_game == 5000


def test_agimaze_kind_and_history_options() -> None:
    policy = make_llm_policy("scripted:x", "agimaze", client=[], history="planning", window="8")
    assert isinstance(policy, AgiMazeLLMPolicy)
    assert policy.options.history == "planning" and policy.options.window == 8


def test_bad_options_name_what_is_wrong() -> None:
    with pytest.raises(
        ValueError, match="unknown option 'temprature' for scripted:x; did you mean 'temperature'"
    ):
        make_llm_policy("scripted:x", "escape", client=[], temprature=0.2)
    with pytest.raises(
        ValueError,
        match=r"invalid model settings for scripted:x: temperature: .*less than or equal to 2",
    ):
        make_llm_policy("scripted:x", "escape", client=[], temperature=9)
    with pytest.raises(ValueError, match="invalid harness settings for scripted:x: output_mode"):
        make_llm_policy("scripted:x", "escape", client=[], output_mode="xml")
    with pytest.raises(ValueError, match="LLM policies play 'escape' or 'agimaze'"):
        make_llm_policy("scripted:x", "chess", client=[])


def test_run_caps_share_one_budget_per_run_name() -> None:
    a = make_llm_policy("scripted:x", "escape", client=[], max_tokens_per_run=1000, run="t1")
    b = make_llm_policy("scripted:x", "escape", client=[], max_tokens_per_run=1000, run="t1")
    assert a.run_budget is b.run_budget is run_budget("t1", 1000, None)
    assert a.caps.parent is a.run_budget  # the game's budget charges the run's


def test_cache_option_wraps_the_backend(tmp_path: object) -> None:
    from llm_policies.cache import CachedBackend

    policy = make_llm_policy("scripted:x", "escape", client=[], cache=str(tmp_path) + "/c.sqlite")
    assert isinstance(policy.backend, CachedBackend)


def test_hosted_prefixes_build_without_network() -> None:
    for spec in ("openai-chat:gpt-4o-mini", "ollama:qwen3:8b"):
        policy = make_llm_policy(spec, "escape", base_url="http://127.0.0.1:9/v1")
        assert policy.backend.spec == spec


def test_entry_points_name_the_factory() -> None:
    import tomllib

    from tests.conftest import REPO_ROOT

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    declared = project["entry-points"]["maze_envs.policies"]
    assert {p: declared.get(p) for p in PREFIXES} == dict.fromkeys(
        PREFIXES, "llm_policies.registry:make_llm_policy"
    )
    group = {ep.name: ep.value for ep in entry_points(group="maze_envs.policies")}
    missing = sorted(set(PREFIXES) - set(group))
    if missing:
        pytest.skip(f"the package metadata predates the entry points {missing}: pip install -e .")
    for prefix in PREFIXES:
        assert group[prefix] == "llm_policies.registry:make_llm_policy"


def test_ollama_defaults_to_its_native_output_mode_unless_told_otherwise() -> None:
    policy = make_llm_policy("ollama:qwen3:8b", "agimaze")
    assert policy.options.output_mode == "native"
    with pytest.raises(ValueError, match="output mode 'tool' is not served by ollama:qwen3:8b"):
        make_llm_policy("ollama:qwen3:8b", "agimaze", output_mode="tool")
