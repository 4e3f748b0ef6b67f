"""The one parallelism rule (issue 33, item 4), over every small configuration rather than a list.

The expectation is the engines' own rule, not explain's output. An engine of W ranks over N pods of G
GPUs (W = TP×PP for vLLM mp/Ray and SGLang):
- refuses to start when W > N×G (a rank without a GPU), or when W is not a multiple of N where the engine
  splits ranks evenly over nodes: vLLM mp (vllm-project/vllm vllm/config/parallel.py, ParallelConfig:
  "world_size=… must be divisible by nnodes=…", commit 00193b82) and SGLang (sgl-project/sglang
  python/sglang/srt/server_args.py check_server_args: "world_size must be divisible by number of nodes",
  commit 469c63e5) -> an error;
- starts with idle GPUs when W < N×G otherwise -> a warning;
- and explain says nothing when W = N×G. vLLM with W <= G starts one engine per pod (mode none: a warning).
Every finding prints once, and its hint never proposes the configuration the DGD already has.
"""

from __future__ import annotations

import itertools
import re

import pytest

from kubectl_dynamo.operator.render import explain_dgd
from tests.unit import builders as b

CASES = [(backend, nodes, gpus, tp, pp) for backend in ("vllm", "sglang") for nodes in (2, 3, 4)
         for gpus in (1, 2, 4, 8) for tp, pp in itertools.product((1, 2, 3, 4, 6, 8, 9, 12, 16, 24, 32), (1, 2))]


def _dgd(backend: str, nodes: int, gpus: int, tp: int, pp: int) -> dict:
    pp_flag = {"vllm": "--pipeline-parallel-size", "sglang": "--pp-size"}[backend]
    args = ["--model", "m", b.TP_FLAG[backend], str(tp)] + ([pp_flag, str(pp)] if pp > 1 else [])
    return b.dgd(backend=backend, components=[
        b.component(nodes=nodes, container=b.main_container(backend, gpus=str(gpus), args=args))])


def _expected(backend: str, nodes: int, gpus: int, world: int):
    capacity = nodes * gpus
    if backend == "vllm" and world <= gpus:
        return "warning"  # mode none: each pod its own engine
    if world > capacity or world % nodes:
        return "error"
    return "warning" if world < capacity else None


@pytest.mark.parametrize("backend,nodes,gpus,tp,pp", CASES)
def test_engine_refusal_is_an_error_and_idle_gpus_a_warning(backend, nodes, gpus, tp, pp):
    out = explain_dgd(_dgd(backend, nodes, gpus, tp, pp), orchestrator="grove")
    found = [f for f in out["findings"] if f["code"] == "parallelism-mismatch"]
    want = _expected(backend, nodes, gpus, tp * pp)
    assert [f["severity"] for f in found] == ([want] if want else []), (found, tp * pp)
    for f in found:
        assert f["component"] == "decode"
        hint = f["hint"]
        assert f"nodeCount to {nodes} with {gpus}" not in hint
        assert not re.search(rf"product is {tp * pp}\b", hint) and f"nvidia.com/gpu: {gpus})" not in hint, hint
        assert "1 GPUs" not in f["message"] + hint and "1 pods" not in f["message"]
    keys = [(f["code"], f["component"], f["message"]) for f in out["findings"]]
    assert len(keys) == len(set(keys)), keys


def test_the_issues_examples():
    # TP 12 on 2 x 8: vLLM mp starts (6 ranks a pod), 2 GPUs a pod idle; the hint is not "nodeCount 2 with 8"
    f = [f for f in explain_dgd(_dgd("vllm", 2, 8, 12, 1), orchestrator="grove")["findings"]
         if f["code"] == "parallelism-mismatch"]
    assert len(f) == 1 and f[0]["severity"] == "warning" and "6 GPUs" in f[0]["hint"], f
    f = [f for f in explain_dgd(_dgd("vllm", 2, 8, 24, 1), orchestrator="grove")["findings"]
         if f["code"] == "parallelism-mismatch"]
    assert len(f) == 1 and f[0]["severity"] == "error" and "nodeCount to 3" in f[0]["hint"], f
