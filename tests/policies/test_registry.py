"""The policy registry: built-in names, options, import paths, plug-ins and teams."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import pytest

from maze_envs.escape.types import Action, Observation
from maze_envs.policies import (
    AgiMazeExplorer,
    AgiMazeOracle,
    AgiMazeRandom,
    CooperativeExplorer,
    EscapeOracle,
    PolicyBase,
    PolicySpec,
    PolicySpecError,
    RandomWalk,
    TeamSpec,
    TremauxExplorer,
    WallFollower,
    available_policies,
    is_privileged,
    make_policy,
    make_team,
    registry,
)


def test_built_in_names_per_environment() -> None:
    assert list(available_policies("escape")) == [
        "random",
        "wall-follower-left",
        "wall-follower-right",
        "explorer",
        "cooperative",
        "oracle",
    ]
    assert list(available_policies("agimaze")) == ["random", "explorer", "oracle"]
    with pytest.raises(PolicySpecError, match=r"unknown env_kind 'chess'.*'escape', 'agimaze'"):
        available_policies("chess")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spec", "kind", "cls"),
    [
        ("random", "escape", RandomWalk),
        ("wall-follower-left", "escape", WallFollower),
        ("explorer", "escape", TremauxExplorer),
        ("cooperative", "escape", CooperativeExplorer),
        ("oracle", "escape", EscapeOracle),
        ("random", "agimaze", AgiMazeRandom),
        ("explorer", "agimaze", AgiMazeExplorer),
        ("oracle", "agimaze", AgiMazeOracle),
    ],
)
def test_names_build_fresh_policies_of_their_kind(spec: str, kind: Any, cls: type) -> None:
    first, second = make_policy(spec, kind), make_policy(spec, kind)
    assert type(first) is cls and first is not second
    assert is_privileged(first) == (spec == "oracle")


def test_names_fix_options_and_options_are_checked() -> None:
    assert make_policy("wall-follower-left").hand == "left"
    assert make_policy("wall-follower-right").hand == "right"
    # strings from a command line are coerced to the declared types
    assert make_policy("explorer", heuristic="false").heuristic is False
    assert make_policy("cooperative", radio="0", help="true").use_radio is False
    with pytest.raises(PolicySpecError, match=r"fixes hand='left'; do not pass it"):
        make_policy("wall-follower-left", hand="right")
    with pytest.raises(PolicySpecError, match=r"no option 'heuristics' \(did you mean 'heuristic'"):
        make_policy("explorer", heuristics=True)
    with pytest.raises(PolicySpecError, match=r"option 'heuristic' got 'maybe'"):
        make_policy("explorer", heuristic="maybe")
    with pytest.raises(PolicySpecError, match=r"'oracle' has no option 'depth'; its options: none"):
        make_policy("oracle", depth=3)


def test_unknown_names_list_what_exists() -> None:
    with pytest.raises(PolicySpecError, match=r"unknown escape policy 'explorr'; did you mean "):
        make_policy("explorr")
    with pytest.raises(PolicySpecError, match=r"Built-in: \['random', 'explorer', 'oracle'\]"):
        make_policy("wall-follower-left", "agimaze")
    with pytest.raises(PolicySpecError, match="non-empty string"):
        make_policy("  ")


@pytest.mark.parametrize("prefix", ["scripted", "ollama", "stand-in"])
def test_a_bare_model_prefix_says_a_model_goes_after_it(prefix: str) -> None:
    """Not "unknown escape policy 'scripted'" beside a list of prefixes naming 'scripted'."""
    with pytest.raises(PolicySpecError, match=rf"'{prefix}' names a model provider") as info:
        make_policy(prefix)
    assert f"as {prefix}:<model>" in str(info.value) and "unknown" not in str(info.value)


class GoNorth(PolicyBase[Any, Observation, Action]):
    """A user policy for the import-path tests."""

    def __init__(self, stubborn: bool = False) -> None:
        self.stubborn = stubborn

    def act(self, observation: Observation) -> Action:
        return Action(move="N")


def build_go_north(stubborn: bool = True) -> GoNorth:
    return GoNorth(stubborn)


NOT_A_POLICY = 3


def test_import_paths_build_user_classes_and_factories() -> None:
    here = __name__
    policy = make_policy(f"{here}:GoNorth", stubborn="yes")
    assert isinstance(policy, GoNorth) and policy.stubborn is True
    assert make_policy(f"{here}:build_go_north").stubborn is True
    with pytest.raises(PolicySpecError, match=r"cannot import module 'no_such_mod'"):
        make_policy("no_such_mod:Thing")
    with pytest.raises(PolicySpecError, match=r"has no 'Missing'"):
        make_policy(f"{here}:Missing")
    with pytest.raises(PolicySpecError, match="is not a class or function"):
        make_policy(f"{here}:NOT_A_POLICY")
    with pytest.raises(PolicySpecError, match=r"gave a dict, not a policy"):
        make_policy("builtins:dict")


class _EntryPoint:
    def __init__(self, name: str, factory: Any) -> None:
        self.name, self._factory = name, factory

    def load(self) -> Any:
        return self._factory


def test_plugins_get_the_whole_spec_the_kind_and_the_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = []

    def factory(spec: str, env_kind: str, **options: Any) -> GoNorth:
        calls.append((spec, env_kind, options))
        return GoNorth()

    monkeypatch.setattr(
        registry, "plugin_entry_points", lambda: {"toy": _EntryPoint("toy", factory)}
    )
    policy = make_policy("toy:model:7b", "agimaze", temperature=0.5)
    assert isinstance(policy, GoNorth)
    assert calls == [("toy:model:7b", "agimaze", {"temperature": 0.5})]
    with pytest.raises(PolicySpecError, match=r"unknown escape policy 'toy'.*plug-in prefixes"):
        make_policy("toy")


def test_llm_prefixes_without_the_extra_say_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(registry, "plugin_entry_points", dict)
    with pytest.raises(PolicySpecError, match=r"pip install 'maze-envs\[llm\]'"):
        make_policy("ollama:qwen3:8b")


def test_the_installed_entry_points_are_the_group_of_the_registry() -> None:
    group = importlib.metadata.entry_points(group=registry.ENTRY_POINT_GROUP)
    assert {ep.name for ep in group} == set(registry.plugin_entry_points())


def test_teams_same_or_mixed_one_policy_per_agent() -> None:
    team = make_team("explorer", ("A", "B", "C"))
    assert [type(p) for p in team.values()] == [TremauxExplorer] * 3
    assert len({id(p) for p in team.values()}) == 3  # fresh objects, nothing shared
    mixed = make_team(
        TeamSpec.of("cooperative", PolicySpec(name="wall-follower-right"), "oracle"),
        ("A", "B", "C"),
    )
    assert [type(p) for p in mixed.values()] == [CooperativeExplorer, WallFollower, EscapeOracle]
    spec = TeamSpec(members=[{"name": "explorer", "options": {"heuristic": False}}, "random"])
    built = make_team(spec, ("A", "B"))
    assert built["A"].heuristic is False and isinstance(built["B"], RandomWalk)
    with pytest.raises(PolicySpecError, match=r"a team of 2 policies cannot play 3 agents"):
        make_team(["explorer", "random"], ("A", "B", "C"))


def test_specs_are_data() -> None:
    spec = PolicySpec(name="explorer", options={"heuristic": False})
    assert PolicySpec.model_validate_json(spec.model_dump_json()) == spec
    assert spec.build().heuristic is False
    team = TeamSpec.of("explorer", "random")
    assert TeamSpec.model_validate(team.model_dump()) == team
    with pytest.raises(ValueError, match="extra"):
        PolicySpec(name="explorer", option={})  # type: ignore[call-arg]
