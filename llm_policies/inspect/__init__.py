"""Deprecated import path: the Inspect AI tasks live in :mod:`llm_policies.apps.inspect`."""

from llm_policies._moved import moved

moved(__name__, "llm_policies.apps.inspect")
