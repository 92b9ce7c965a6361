"""Deprecated import path: this module is :mod:`llm_policies.apps.replay_report`."""

from llm_policies._moved import moved

moved(__name__, "llm_policies.apps.replay_report")
