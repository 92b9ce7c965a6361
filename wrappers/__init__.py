"""Gymnasium and PettingZoo wrappers for the maze-envs environments (text rendering, numeric
encodings for RL, single-agent views, recording, budgets)."""
