"""Local servers driven at their real capacity, asked once per run (issue 25, points 3, 4, 8, 9).

Through ``maze-envs bench`` and the real client paths against the loopback server behaving like
llama.cpp, llama-cpp-python, Ollama or vLLM: the requests in flight to a server never exceed the
slots it says it has (a one-slot server at the bench defaults gets one at a time, and no
decision is an outage); a request whose deadline passed is closed; the server is asked once per
run, by the runner, and every worker plays with what it learnt; a server that cannot be reached
ends the run within seconds; the response cache is keyed on the model the server serves.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_policies.backends import ModelUnavailable, make_backend
from llm_policies.capabilities import ENDPOINTS
from llm_policies.settings import ModelSettings
from maze_envs.bench.command import EXIT_OUTAGE
from maze_envs.bench.command import main as bench_main
from maze_envs.bench.spec import Experiment
from maze_envs.journal import Journal
from tests.llm.backend_support import request
from tests.llm.bench_support import (
    agimaze_experiment,
    decisions_of,
    escape_experiment,
    module_server,
    run,
    server,
    stay_model,
    with_probes,
)
from tests.llm.servers import Hang, LlamaCpp, LoopbackServer, RecordedRequest, Reply, serve
from tests.llm.servers.llamacpp import prompt_tokens

__all__ = ["module_server", "server"]  # the fixtures


@pytest.fixture(autouse=True)
def fresh_endpoints() -> Iterator[None]:
    ENDPOINTS.clear()  # each test is a new run of its own against a server of its own
    yield
    ENDPOINTS.clear()


def local(server: LoopbackServer, model: str = "smol", **options: Any) -> str:
    extra = "".join(f",{k}={v}" for k, v in options.items())
    return f"openai-chat:{model}:base_url={server.openai_base_url},local=true{extra}"


def chat(server: LoopbackServer) -> list[RecordedRequest]:
    return [r for r in server.requests if r.protocol == "openai-chat"]


def records(out: Path) -> list[dict[str, Any]]:
    with Journal(out / "games.sqlite", readonly=True) as journal:
        return [r for g in journal.game_ids() for r in decisions_of(journal, g)]


def endpoint_notices(out: Path) -> list[dict[str, Any]]:
    found = [n for r in records(out) for n in r.get("notices", []) if n["kind"] == "endpoint"]
    assert found, "no endpoint notice was recorded"
    return found


def slow(respond: Callable[[RecordedRequest], Reply]) -> Callable[[RecordedRequest], Reply]:
    """``respond``, each reply served over 20 ms: requests sent at once overlap at the server
    (how much they overlap depends on the machine, so tests assert upper bounds only)."""

    def answer(sent: RecordedRequest) -> Reply:
        reply = respond(sent)
        return Reply(**{**reply.__dict__, "delay_s": 0.02})

    return answer


# --- capacity: the server's slots ---------------------------------------------------------------


def test_a_one_slot_server_gets_one_request_at_a_time_at_the_bench_defaults(
    server: LoopbackServer, tmp_path: Path
) -> None:
    # llama-cpp-python serves one request at a time (its tokenizer route gives it away); the
    # bench defaults play 8 games at once, 3 agents each: 24 decisions asked together
    server.behave_like_llama_cpp(LlamaCpp(props=False, tokenizer="llama-cpp-python"))
    server.respond_with(slow(with_probes(stay_model)))
    result = run(escape_experiment(local(server), turns=3, seeds="0-7"), tmp_path / "run")
    assert len(result.rows) == 8
    assert all(r["status"] == "ok" and r["outages"] == 0 for r in result.rows)
    assert server.most_in_flight == 1  # never two requests at once
    notice = endpoint_notices(tmp_path / "run")[0]
    assert notice["slots"] == 1 and "one request at a time" in notice["slots_source"]
    assert notice["server"] == "llama-cpp-python"


def test_llama_cpp_says_its_slots_and_the_option_overrides_them(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.behave_like_llama_cpp(LlamaCpp(slots=2))
    server.respond_with(slow(with_probes(stay_model)))
    run(escape_experiment(local(server), turns=2, seeds="0-3"), tmp_path / "props")
    notice = endpoint_notices(tmp_path / "props")[0]
    assert (notice["slots"], notice["slots_source"]) == (2, "props")
    assert notice["served_model"] == "/models/model.gguf" and notice["server"] == "llama.cpp"
    assert 1 <= server.most_in_flight <= 2
    ENDPOINTS.clear()
    server.most_in_flight = 0
    run(escape_experiment(local(server, slots=1), turns=2, seeds="0-3"), tmp_path / "option")
    notice = endpoint_notices(tmp_path / "option")[0]
    assert (notice["slots"], notice["slots_source"]) == (1, "option")
    assert server.most_in_flight == 1


def test_ollama_does_not_say_its_parallel_requests_so_its_default_is_used(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.ollama_models = {"qwen3:8b": "a8b0c51577010a27"}
    server.respond_with(slow(stay_model))
    spec = f"ollama:qwen3:8b:base_url={server.url}"
    run(escape_experiment(spec, turns=2, seeds="0-3"), tmp_path / "run")
    notice = endpoint_notices(tmp_path / "run")[0]
    assert notice["slots"] == 1 and "OLLAMA_NUM_PARALLEL" in notice["slots_source"]
    assert notice["served_model"] == "sha256:a8b0c51577010a27"
    assert server.most_in_flight == 1


#: A vLLM server's ``/v1/models`` entry (``--served-model-name qwen``)
VLLM_MODEL = {
    "id": "qwen",
    "object": "model",
    "owned_by": "vllm",
    "root": "Qwen/Qwen3-8B",
    "max_model_len": 16384,
}


def test_vllm_tells_its_window_and_model_and_batches_without_a_limit(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.model_list = {"object": "list", "data": [VLLM_MODEL]}
    server.respond_with(with_probes(stay_model))
    run(escape_experiment(local(server, model="qwen"), turns=2), tmp_path / "run")
    notice = endpoint_notices(tmp_path / "run")[0]
    assert notice["server"] == "vllm" and notice["slots"] is None
    assert "max-num-seqs" in notice["slots_source"]
    assert (notice["context_window"], notice["context_source"]) == (16384, "models")
    assert notice["served_model"] == "Qwen/Qwen3-8B"


def test_vllm_in_development_mode_tells_its_max_num_seqs_and_is_held_to_it(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.model_list = {"object": "list", "data": [VLLM_MODEL]}
    # what vLLM's /server_info?config_format=json answers (VLLM_SERVER_DEV_MODE=1), trimmed
    server.server_info = {
        "vllm_config": {
            "model_config": {"model": "Qwen/Qwen3-8B", "max_model_len": 16384},
            "scheduler_config": {"max_num_seqs": 2, "max_num_batched_tokens": 8192},
        },
        "vllm_env": {},
    }
    server.respond_with(slow(with_probes(stay_model)))
    run(escape_experiment(local(server, model="qwen"), turns=2, seeds="0-3"), tmp_path / "run")
    notice = endpoint_notices(tmp_path / "run")[0]
    assert notice["server"] == "vllm"
    assert (notice["slots"], notice["slots_source"]) == (2, "server_info")
    assert 1 <= server.most_in_flight <= 2
    # an older server sends the configuration as text: the number is read from it
    ENDPOINTS.clear()
    server.most_in_flight = 0
    server.server_info = {"vllm_config": "SchedulerConfig(max_num_seqs=1, ...)"}
    run(escape_experiment(local(server, model="qwen"), turns=2, seeds="0-3"), tmp_path / "text")
    notice = endpoint_notices(tmp_path / "text")[0]
    assert (notice["slots"], notice["slots_source"]) == (1, "server_info")
    assert server.most_in_flight == 1


def test_a_request_whose_deadline_passed_is_closed(server: LoopbackServer) -> None:
    # a server that checks (llama-cpp-python before it starts a queued request) then drops it
    server.push(Hang(60))
    settings = ModelSettings(base_url=server.openai_base_url, timeout_s=0.5, retries=0)
    backend = make_backend("openai-chat:smol", settings, local=True)

    async def go() -> None:
        try:
            with pytest.raises(ModelUnavailable):
                await backend.complete(request(settings, "prompted"))
        finally:
            await backend.aclose()

    asyncio.run(go())
    deadline = time.monotonic() + 30  # the server notices the closed connection on its own
    while server.disconnected == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.disconnected == 1


# --- asked once per run, shared by every worker ------------------------------------------------


def test_the_server_is_asked_once_per_run_and_every_worker_plays_with_it(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.behave_like_llama_cpp()
    server.respond_with(with_probes(stay_model))
    experiment = escape_experiment(local(server), turns=2, seeds="0-3")
    result = run(experiment, tmp_path / "run", executor="process", workers=2, concurrency=2)
    assert all(r["status"] == "ok" for r in result.rows)
    asked = [r.path for r in server.info_requests]
    assert asked.count("/v1/models") == 1 and asked.count("/props") == 1
    probes = [r for r in chat(server) if r.body["messages"][-1]["content"] == "Say hello."]
    assert len(probes) == 2  # native rejected, grammar honoured: once, for every worker
    for notice in endpoint_notices(tmp_path / "run"):  # every game played with the same
        assert notice["auto"]["mode"] == "grammar" and notice["slots"] == 1


def test_a_window_learnt_from_one_refusal_serves_every_game(
    server: LoopbackServer, tmp_path: Path
) -> None:
    # llama-cpp-python tells no window: the first prompt over it teaches it, once for the run
    # (the requests of the other games wait for the one slot, then fit what it learnt)
    n_ctx = 1600
    server.behave_like_llama_cpp(LlamaCpp(n_ctx=n_ctx, props=False, tokenizer="llama-cpp-python"))
    actions = ["up", "down"]

    def respond(sent: RecordedRequest) -> Reply:
        step = len(sent.body["messages"])
        return Reply(text=json.dumps({"action": actions[step % 2]}), output_tokens=9)

    server.respond_with(with_probes(respond))
    experiment = agimaze_experiment(local(server, max_output_tokens=60))
    experiment = experiment.model_copy(update={"seeds": [0, 1, 2, 3]})
    result = run(experiment, tmp_path / "run", concurrency=4)
    assert all(r["outages"] == 0 for r in result.rows)
    refused = [r for r in chat(server) if prompt_tokens(r.body) + r.body["max_tokens"] > n_ctx]
    assert len(refused) == 1  # learnt once, not once per game


# --- fail fast --------------------------------------------------------------------------------


def test_an_unreachable_local_server_ends_the_run_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve() as gone:
        url = gone.openai_base_url
    # nothing listens there now; default retries and deadline
    spec = f"openai-chat:local:base_url={url},local=true"
    out = tmp_path / "run"
    code = bench_main(["--env", "escape", "--seeds", "0-1", "--policy", spec, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == EXIT_OUTAGE
    assert f"model openai-chat:local at {url} could not be reached" in err
    # each decision an outage at once, without a request: the games stop after the default
    # max_consecutive_fallbacks (20) decisions of each agent, as they always did
    assert "120 of 120 decisions in 2 game(s) were outages" in err
    assert "could not be reached when the run began" in err
    recorded = records(out)
    assert all(r["status"] == "outage" and r["attempts"] == [] for r in recorded)
    assert all(r["outage"]["kind"] == "connection" for r in recorded)


def test_a_server_that_never_answered_costs_one_retry_budget_not_one_per_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an endpoint the run did not ask beforehand (the runner's prepare_run hook skipped here):
    # its first decisions spend the retries, and every later one is an outage at once
    from llm_policies.policy_base import LLMPolicyBase

    with serve() as gone:
        url = gone.openai_base_url
    monkeypatch.setattr(LLMPolicyBase, "prepare_run", lambda self: None)
    spec = f"openai-chat:gpt-4o-mini:base_url={url},retries=1,max_consecutive_fallbacks=3"
    result = run(escape_experiment(spec, turns=5), tmp_path / "run", verify=False)
    (row,) = result.rows
    assert row["status"] == "outage" and row["outages"] == 9
    sent = [r for r in records(tmp_path / "run") if r["outage"].get("attempts")]
    assert len(sent) == 3  # the first decision of each agent (asked at once), not the others


# --- the response cache is keyed on the served model -------------------------------------------


def test_the_cache_hits_on_another_port_and_never_for_another_model(tmp_path: Path) -> None:
    cache = tmp_path / "replies.sqlite"
    experiment_of: Callable[[LoopbackServer], Any] = lambda s: escape_experiment(  # noqa: E731
        local(s, model="local", cache=str(cache)), turns=3
    )
    with serve() as first:
        first.behave_like_llama_cpp(LlamaCpp(model="/models/smollm2-135m.gguf"))
        first.respond_with(with_probes(stay_model))
        assert run(experiment_of(first), tmp_path / "first").rows[0]["status"] == "ok"
        sent_first = len(chat(first))
    ENDPOINTS.clear()
    with serve() as moved:  # the same model on another port: every reply from the cache
        moved.behave_like_llama_cpp(LlamaCpp(model="/models/smollm2-135m.gguf"))
        moved.respond_with(with_probes(stay_model))
        again = run(experiment_of(moved), tmp_path / "moved").rows[0]
        # only the probe of the mode the server rejects is sent again (a refusal is not kept)
        sent = [r.body["response_format"]["type"] for r in chat(moved)]
        assert sent == ["json_schema"] and again["requests"] == 0 and again["status"] == "ok"
    ENDPOINTS.clear()
    with serve() as other:  # another model under the same name: nothing from the cache
        other.behave_like_llama_cpp(LlamaCpp(model="/models/qwen3-0.6b.gguf"))
        other.respond_with(with_probes(stay_model))
        fresh = run(experiment_of(other), tmp_path / "other").rows[0]
        assert len(chat(other)) == sent_first and fresh["requests"] == 9


def test_a_server_that_names_no_model_is_keyed_by_its_address(
    server: LoopbackServer, tmp_path: Path
) -> None:
    # no /v1/models, no /props: the cache cannot tell what it serves, so no port shares replies
    from llm_policies.cache import CachedBackend

    settings = ModelSettings(base_url=server.openai_base_url)
    backend = CachedBackend(make_backend("openai-chat:local", settings, local=True), tmp_path / "c")
    backend.identify(None)
    assert backend.served() == f"openai-chat:local@{server.openai_base_url}"
    backend.identify("/models/a.gguf")
    assert backend.served() == "/models/a.gguf"
    hosted = CachedBackend(make_backend("openai-chat:gpt-4o-mini", settings), tmp_path / "h")
    assert hosted.served() is None  # a hosted model is its spec, wherever it is reached
    asyncio.run(backend.aclose())
    asyncio.run(hosted.aclose())


# --- salvage and truncation through the runner --------------------------------------------------


def test_a_valid_move_with_an_out_of_range_splice_keeps_the_move(
    server: LoopbackServer, tmp_path: Path
) -> None:
    # llama.cpp's grammar does not enforce "maximum": a 135M model wrote such positions
    server.behave_like_llama_cpp()
    wild = {"move": "N", "notebook": {"start": 107654328946, "end": 0, "text": "x"}}

    def respond(sent: RecordedRequest) -> Reply:
        return Reply(text=json.dumps({**wild, "radio": None}))

    server.respond_with(with_probes(respond))
    experiment = Experiment.model_validate(
        {
            "seeds": "0",
            "escape": [
                {
                    "preset": "navigator",
                    "sizes": [5],
                    "max_turns": 2,
                    "set": {"notebook_mode": "splice"},
                    "policies": [local(server)],
                }
            ],
        }
    )
    result = run(experiment, tmp_path / "run")
    (row,) = result.rows
    assert row["fallbacks"] == row["outages"] == 0
    recorded = records(tmp_path / "run")
    assert all(r["status"] == "ok" and r["values"]["move"] == "N" for r in recorded)
    assert all(r["quirks"].get("rejected_edit") == 1 for r in recorded)
    second = [r for r in chat(server) if "Turn: 1 (" in r.raw.decode()]
    assert second and all(b"Last notebook edit: rejected" in r.raw for r in second)
    assert result.verified_ok


def test_a_reply_cut_at_the_output_cap_is_truncated_not_malformed(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.behave_like_llama_cpp()
    long_note = "I went north and then " * 40

    def respond(sent: RecordedRequest) -> Reply:
        text = json.dumps({"move": "N", "notebook": long_note, "radio": None})
        return Reply(text=text, output_tokens=len(text) // 4)

    server.respond_with(with_probes(respond))
    spec = local(server, max_output_tokens=48, parse_retries=1, output_mode="json_object")
    result = run(escape_experiment(spec, turns=2), tmp_path / "run")
    recorded = records(tmp_path / "run")
    assert {r["fallback_reason"] for r in recorded} == {"truncated"}
    attempts = [a for r in recorded for a in r["attempts"]]
    assert all(a["error_kind"] == "truncated" and a["finish_reason"] == "length" for a in attempts)
    assert all("raise max_output_tokens" in r["error"] for r in recorded)
    assert all("malformed" not in r["error"] for r in recorded)
    assert result.rows[0]["truncations"] == len(attempts)
