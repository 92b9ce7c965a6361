"""Tests of the verifiers environments: they run in the verifiers extra's own environment
(``scripts/test.sh`` makes ``.venv-verifiers``); elsewhere they skip, saying so."""
