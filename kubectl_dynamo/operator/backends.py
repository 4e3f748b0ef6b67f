"""The backends behind one interface, as the operator's ``backend_*.go``.

Each backend module (``vllm``, ``sglang``, ``trtllm``) holds everything about its engine: the
operator's rendering (``decide``, ``update_container``, ``update_pod_spec``) and the launch lines
this tool authors (``engine_args``, ``TOPOLOGY_MARKERS``; ``role_args`` for vLLM / SGLang role
templates, ``role_command`` for TRT-LLM's SSH + mpirun scripts).
"""

from __future__ import annotations

from types import ModuleType
from typing import Dict

from kubectl_dynamo.operator import sglang, trtllm, vllm

BACKENDS: Dict[str, ModuleType] = {"vllm": vllm, "sglang": sglang, "trtllm": trtllm}


def get(name: str) -> ModuleType:
    """The module of a backend named by ``api.BACKENDS`` (KeyError for noop or unknown)."""
    return BACKENDS[name]


def has_authored_topology(command_line: str) -> bool:
    """The launch line already wires a multinode topology itself (any backend's markers)."""
    return any(m in command_line for b in BACKENDS.values() for m in b.TOPOLOGY_MARKERS)
