"""The optional front ends stay optional: the library and the LLM policies' prompts and parsing
import without them, and a missing one fails with one line naming its extra.

The verifiers extra cannot be installed beside the llm extra (verifiers needs openai<3,
pydantic-ai openai>=3.50), so the policies it drives must work without pydantic-ai; these tests
hide the optional packages from a fresh interpreter to show it in any environment (the verifiers
tests, in their own environment, run the same code with pydantic-ai really absent).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import REPO_ROOT

BLOCKER = """
import importlib.abc, sys
class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (hidden by the test)")
        return None
sys.meta_path.insert(0, Blocked())
"""


def _run(blocked: set[str], code: str) -> subprocess.CompletedProcess[str]:
    program = BLOCKER.format(blocked=blocked) + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", program],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_prompts_parsing_and_policies_play_without_pydantic_ai() -> None:
    done = _run(
        {"pydantic_ai", "genai_prices", "ollama", "inspect_ai", "verifiers"},
        """
        import sys
        from llm_policies.backends.scripted import ScriptedBackend
        from llm_policies.backends.stand_in import stand_in_script
        from llm_policies.parsing import parse_reply
        from llm_policies.policy import EscapeLLMPolicy
        from llm_policies.prompts.agimaze import agimaze_system
        from llm_policies.prompts.escape import escape_system
        from llm_policies.schema import escape_schema
        from maze_envs.bench.rollout import play
        from maze_envs.bench.spec import Experiment

        (game,) = Experiment.model_validate({
            "escape": [{"sizes": [5], "max_turns": 30,
                        "policies": ["stand-in:wall-follower:output_mode=prompted"]}],
        }).tasks()
        row = play(game)
        assert row["status"] == "ok" and row["decisions"] > 0 and row["fallbacks"] == 0, row
        loaded = [m for m in sys.modules if m.split(".")[0] in ("pydantic_ai", "genai_prices")]
        assert not loaded, loaded
        print("played", row["turns"], "turns; team success:", row["success"])
        """,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "played" in done.stdout


def test_the_library_imports_without_verifiers_and_the_front_end_names_its_extra() -> None:
    done = _run(
        {"verifiers"},
        """
        import maze_envs, llm_policies, llm_policies.apps
        from llm_policies.apps.evaluation import all_evaluation_seeds
        assert 0 in all_evaluation_seeds()
        try:
            import llm_policies.apps.verifiers
        except ImportError as error:
            print(error)
        """,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pip install 'maze-envs[verifiers]'" in done.stdout
    assert "not with the llm extra" in done.stdout
