"""Gymnasium and PettingZoo wrappers for the maze-envs environments (text rendering, numeric
encodings for RL, single-agent views, recording, map visibility and reward shaping)."""

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
