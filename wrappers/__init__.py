"""Gymnasium and PettingZoo wrappers for the maze-envs environments (text rendering, numeric
encodings for RL, single-agent views, recording, map visibility and reward shaping), and the
Stable-Baselines3 ``VecEnv`` over the batched engine (:mod:`wrappers.sb3_vector`: imported on
first use, since it needs the ``rl`` extra)."""

from wrappers.agimaze_numeric import AgiMazeNumericObservation as AgiMazeNumericObservation
from wrappers.agimaze_options import HiddenMap as HiddenMap
from wrappers.agimaze_options import MapVisibility as MapVisibility
from wrappers.agimaze_options import RewardShaping as RewardShaping
from wrappers.escape_numeric import EscapeNumericObservation as EscapeNumericObservation
from wrappers.masks import EscapeActionMasks as EscapeActionMasks
from wrappers.move_only import MoveOnlyActions as MoveOnlyActions
from wrappers.recording import RecordJournal as RecordJournal
from wrappers.recording import RecordJournalParallel as RecordJournalParallel
from wrappers.single_agent import SingleAgentEscape as SingleAgentEscape
from wrappers.text import EscapeTextObservation as EscapeTextObservation
from wrappers.text import TextObservation as TextObservation


def __getattr__(name: str) -> object:
    """``EscapeSB3VecEnv`` on first use (it imports Stable-Baselines3, the ``rl`` extra)."""
    if name == "EscapeSB3VecEnv":
        from wrappers.sb3_vector import EscapeSB3VecEnv

        return EscapeSB3VecEnv
    raise AttributeError(f"module 'wrappers' has no attribute {name!r}")
