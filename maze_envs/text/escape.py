"""Maze Escape observations as the text a model reads.

Two parts, so a prompt can keep what never changes in front (provider prompt caches hit):

* :func:`escape_legend` (stable for a whole game): how to read each field that is switched on in
  the game's :class:`~maze_envs.escape.types.Config`, with its limits;
* :func:`render_escape` (changes every turn): the agent's notebook first (a rolling log only
  grows at its end, so the text before the new lines is the same as last turn's), then last
  turn's radio, the notebooks of teammates on the same cell, and this turn's observation.

Every sentence comes from the versioned wording file (:mod:`maze_envs.text.wording`); the
optional features' lines are theirs (:mod:`maze_envs.escape.features`: ``legend`` and ``text``).

Example:
    >>> from maze_envs import maze_escape_v0
    >>> from maze_envs.escape.convert import observation_to_model
    >>> env = maze_escape_v0.parallel_env(preset="full", width=6, height=6)
    >>> obs, _ = env.reset(seed=3)
    >>> text = render_escape(observation_to_model(obs["A"], env.config, "A"), env.config)
    >>> print(text.splitlines()[0])
    Your notebook:
    >>> "Turn: 0 (120 turns left)." in text
    True
"""

from __future__ import annotations

from typing import Literal, Protocol

from maze_envs.escape.features import FEATURES, enabled_features
from maze_envs.escape.types import DIRECTIONS, Config, Observation
from maze_envs.text.wording import Wording, load_wording

TrailWording = Literal["precise", "plain"]


class _HasConfig(Protocol):
    @property
    def config(self) -> Config: ...


def _config(source: Config | _HasConfig) -> Config:
    return source if isinstance(source, Config) else source.config


def escape_legend(
    source: Config | _HasConfig,
    *,
    trail: TrailWording = "precise",
    wording: str | None = None,
) -> str:
    """How to read the observation of this game's setup, one line per field that is on.

    ``trail`` chooses the trail sentence: ``"precise"`` says the trail ends with last turn's cell
    and never holds the current one; ``"plain"`` is the ambiguous "where you were on each of the
    last K turns" that the Maze Escape study found models misread (kept to reproduce it).

    Example:
        >>> from maze_envs.escape.types import Config
        >>> legend = escape_legend(Config.from_preset("navigator"))
        >>> "ends with last turn's cell" in legend, "Distances" in legend
        (True, False)
    """
    config = _config(source)
    w = load_wording("escape", wording)
    legend = w.sections["legend"]
    lines = [legend["header"], legend["edges"], legend["on_exit"], legend["landmark"]]
    lines.append(legend["turn"])
    notebook_key = "notebook_splice" if config.notebook_mode == "splice" else "notebook_rolling_log"
    lines.append(
        legend[notebook_key].format(
            max_bytes=config.notebook_max_bytes, turn_bytes=config.notebook_turn_bytes
        )
    )
    if config.num_agents > 1 and config.radio:
        lines.append(
            legend["radio"].format(max_bytes=config.radio_max_bytes, cooldown=config.radio_cooldown)
        )
    elif config.num_agents > 1:
        lines.append(legend["radio_off"])
    if config.num_agents > 1:
        lines.append(legend["teammate_notebooks"])
    lines.append(legend["last_action"])
    for feature in enabled_features(config):  # each optional feature words its own line
        lines.append(feature.legend(config, legend, trail))
    return "\n".join(f"- {line}" if i else line for i, line in enumerate(lines))


def _notebook_block(w: Wording, notebook: str, config: Config) -> list[str]:
    body = notebook if notebook else w.label("notebook_empty")
    size = len(notebook.encode())
    return [
        w.label("notebook_begin"),
        w.label("notebook_open"),
        body.removesuffix("\n"),
        w.label("notebook_close"),
        w.label("notebook_size").format(bytes=size, max_bytes=config.notebook_max_bytes),
    ]


def _radio_block(w: Wording, radio: dict[str, str]) -> list[str]:
    messages = [(sender, text) for sender, text in sorted(radio.items()) if text]
    if not messages:
        return [w.label("radio_none")]
    return [w.label("radio")] + [
        w.label("radio_item").format(sender=s, message=m) for s, m in messages
    ]


def _teammates_block(w: Wording, notebooks: dict[str, str]) -> list[str]:
    if not notebooks:
        return []
    lines = [w.label("teammate_notebooks")]
    for name, text in sorted(notebooks.items()):
        lines.append(w.label("teammate_open").format(name=name))
        lines.append(text.removesuffix("\n") if text else w.label("notebook_empty"))
        lines.append(w.label("teammate_close").format(name=name))
    return lines


def _observation_block(w: Wording, obs: Observation) -> list[str]:
    edges = {str(k): str(v) for k, v in obs.edges.items()}
    lines = [
        w.label("observation"),
        w.label("turn").format(turn=obs.turn, turns_left=obs.turns_left),
        w.label("cell").format(**{d: edges[d] for d in DIRECTIONS}),
        w.label("on_exit_yes" if obs.on_exit else "on_exit_no"),
        w.label("landmark").format(name=obs.landmark) if obs.landmark else w.label("landmark_none"),
    ]
    for feature in FEATURES:  # the optional features' lines (none while a feature is off)
        lines += feature.text(obs, w.label)
    last = obs.last_action
    lines.append(w.table("labels", "last_move")[last.move])
    notebook = w.table("labels", "last_notebook")
    if last.notebook == "applied" and last.notebook_reason:
        lines.append(notebook["applied_reason"].format(reason=last.notebook_reason))
    elif last.notebook != "none":
        lines.append(notebook[last.notebook].format(reason=last.notebook_reason))
    radio = w.table("labels", "last_radio")
    if last.radio != "none":
        lines.append(radio[last.radio].format(reason=last.radio_reason))
    if last.radio_cooldown:
        lines.append(w.label("cooldown").format(turns=last.radio_cooldown))
    return lines


def render_escape(
    observation: Observation,
    source: Config | _HasConfig,
    *,
    legend: bool = False,
    trail: TrailWording = "precise",
    wording: str | None = None,
) -> str:
    """One agent's observation as text: notebook, radio, teammates' notebooks, this turn.

    ``source`` is the game's :class:`~maze_envs.escape.types.Config` or anything with a
    ``config`` attribute (an :class:`~maze_envs.policies.interface.EscapeEpisode`). With
    ``legend=True`` the text starts with :func:`escape_legend`, so it reads on its own (what the
    text observation wrapper shows); an LLM policy puts the legend in its stable system prompt
    instead.
    """
    config = _config(source)
    w = load_wording("escape", wording)
    lines: list[str] = []
    if legend:
        lines += [escape_legend(config, trail=trail, wording=wording), ""]
    lines += _notebook_block(w, observation.notebook, config)
    lines += _radio_block(w, observation.radio) if config.radio and config.num_agents > 1 else []
    lines += _teammates_block(w, observation.teammate_notebooks)
    lines += _observation_block(w, observation)
    return "\n".join(lines)
