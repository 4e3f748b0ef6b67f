"""Bad weather: every live command behind a fault-injecting proxy in front of the real API server.

Four DGDs in two namespaces on the sandbox (two Grove groups running with their Grove objects and kwok
logs, one that cannot fit on any node, one LWS group), read through ``faultproxy.FaultProxy``: in fair
weather, then under each fault of ``faultproxy.FAULTS`` on a schedule, with every LIST paged 3 at a time
so that the continue path runs. Each command must give fair weather's answer (the same output, the same
exit code) or one clean ``error:`` line and exit 3; never another answer. Throttling, fail-over and
expired continue tokens must give fair weather's answer, within 3 × its time plus the waits the server
asked for (client-go's retry policy and pager; see cluster/client.py).

Faked, because they cannot run here (and said so): the images (kwok serves each pod's log from a file),
and the Grove controller (the test creates the objects it would, as tests/integration/scenarios.py does).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import time
from types import SimpleNamespace

import pytest

from tests.conftest import REPO
from tests.integration import scenarios as s
from tests.integration import world as w
from tests.integration.faultproxy import FAULTS, FaultProxy
from tests.integration.test_daily import Running

A, B = "weather-a", "weather-b"
PAGE = 3
# faults whose answer must be fair weather's: the server said what to do (wait, list again)
MUST_HOLD = ("throttle", "failover", "expire")


@pytest.fixture(scope="module")
def scene(sandbox, tmp_path_factory):
    world = w.World(sandbox).full_stack(s.OPERATOR_VERSION)
    files = tmp_path_factory.mktemp("weather-logs")
    running = [s.dgd("llm", A, "vllm", nodes=2), s.dgd("chat", B, "sglang", nodes=2)]
    objs = []
    for doc in running:
        group = s.group_objects(doc)
        pods = [o for o in group if o["kind"] == "Pod"]
        for i, p in enumerate(pods):
            log = files / f"{p['metadata']['name']}.log"
            log.write_text(s.cri_line(f"2026-12-01T09:00:0{i}Z", f"{p['metadata']['name']} serving"))
            objs.append(s.kwok_logs(p["metadata"]["name"], doc["metadata"]["namespace"], log, other=log))
        objs += group + s.grove_objects(doc, pods)
    big = s.group_objects(s.dgd("big", A, "vllm", nodes=2, gpus=16))  # 16 GPUs a pod: no node has them
    lws = s.group_objects(s.dgd("wide", B, "trtllm", nodes=2, lws=True))
    namespaces = {o["metadata"]["name"]: o for o in objs + big + lws if o["kind"] == "Namespace"}
    sandbox.kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(o) for o in namespaces.values()))
    rest = [o for o in objs + big + lws if o["kind"] != "Namespace"]
    sandbox.kubectl("apply", "--server-side", "-f", "-", input="\n---\n".join(json.dumps(o) for o in rest))
    for doc in running:
        sandbox.kubectl("-n", doc["metadata"]["namespace"], "wait", "--for=condition=Ready", "pod",
                        "-l", f"nvidia.com/dynamo-graph-deployment-name={doc['metadata']['name']}", "--timeout=120s")
    sandbox.kubectl("-n", A, "wait", "--for=condition=PodScheduled=False", "pod",
                    "-l", "nvidia.com/dynamo-graph-deployment-name=big", "--timeout=120s")
    # No operator writes the status of big and wide here: a minute after their creation doctor's answer
    # changes (never processed). Wait for that final answer, so that every run of the module sees one state.
    deadline = time.monotonic() + 180
    while "after its creation" not in subprocess.run(
            [sys.executable, "-m", "kubectl_dynamo", "doctor", "-n", A, "-o", "json", "--kubeconfig",
             str(sandbox.kubeconfig)], capture_output=True, text=True, cwd=str(REPO)).stdout:
        assert time.monotonic() < deadline, "doctor never reported big as unprocessed"
    yield sandbox
    world.clear_objects()
    for ns in (A, B):
        sandbox.kubectl("delete", "namespace", ns, "--wait=false", check=False)


# command -> its arguments; each reads the cluster as a user's would
COMMANDS = {
    "doctor": ("doctor", "-A", "-o", "json"),
    "get": ("get", "-A", "-o", "json"),
    "detect": ("detect", "-o", "json"),
    "tree": ("tree", "llm", "-n", A, "-o", "json"),
    "logs": ("logs", "llm", "-n", A),
    "collect": ("collect", "llm", "-n", A),  # -o BUNDLE added per run
    "rollout": ("rollout", "status", "llm", "-n", A, "--watch=false"),
}
# what differs between two fair-weather runs a moment apart: clocks and ages
VOLATILE = re.compile(r"^(age|takenAt|createdAt|collectedAt|generatedAt|duration|elapsed|lastTransitionTime)$")


# doctor's "has no status 68s after its creation": an age, different in every run
AGE = re.compile(r"\b\d+s after its creation")


def normal(value):
    if isinstance(value, dict):
        return {k: normal(v) for k, v in value.items() if not VOLATILE.match(k)}
    if isinstance(value, list):
        return [normal(v) for v in value]
    return AGE.sub("Ns after its creation", value) if isinstance(value, str) else value


def answer(command: str, stdout: str, bundle=None):
    """What a run answered, comparable across runs."""
    if command == "collect":
        root = bundle.name.split(".")[0] + "/"  # the bundle's own name: differs per run
        with tarfile.open(bundle) as tar:
            files = {m.name[len(root):]: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
        doctor = json.loads(files["doctor.json"])
        logs = {n: v for n, v in files.items() if n.endswith(".log") and n.startswith("pods/")}
        return sorted(files), normal(doctor["findings"]), logs
    if stdout.lstrip().startswith(("{", "[")):
        return normal(json.loads(stdout))
    return normal(stdout)


def run(config, command: str, tmp_path, tag: str):
    args = list(COMMANDS[command])
    bundle = None
    if command == "collect":
        bundle = tmp_path / f"bundle-{tag}.tar.gz"
        args += ["-o", str(bundle)]
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kubectl_dynamo", *args, "--kubeconfig", str(config)],
                          capture_output=True, text=True, timeout=300, cwd=str(REPO),
                          env={**os.environ, "NO_COLOR": "1"})
    took = time.monotonic() - start
    got = answer(command, proc.stdout, bundle) if proc.returncode in (0, 1) else None
    return proc.returncode, got, proc.stderr, took


FAIR: dict = {}


def fair(scene, command, tmp_path):
    """Fair weather's answer through the same proxy (same paging), once per command."""
    if command not in FAIR:
        proxy = FaultProxy(scene.kubeconfig, None, page=PAGE)
        try:
            code, got, err, took = run(proxy.kubeconfig(tmp_path / "fair.kubeconfig"), command, tmp_path, "fair")
            continues = sum(1 for _, p in proxy.seen if "continue=" in p)
        finally:
            proxy.close()
        assert code in (0, 1), err
        if command in ("doctor", "get", "collect"):  # tree reads one DGD's few objects: fewer than a page
            assert continues, "no LIST continued: the page size is not forcing the continue path"
        FAIR[command] = (code, got, took)
    return FAIR[command]


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_fair_weathers_answer_or_one_clean_exit_3(scene, tmp_path, command, fault):
    fair_code, fair_answer, fair_took = fair(scene, command, tmp_path)
    proxy = FaultProxy(scene.kubeconfig, fault, page=PAGE, every=5, window=(3, 6), watch_seconds=1.0,
                       slow_seconds=0.5)
    try:
        code, got, err, took = run(proxy.kubeconfig(tmp_path / "kubeconfig"), command, tmp_path, fault)
        injected = proxy.schedule.injected
    finally:
        proxy.close()
    if command in ("doctor", "get", "collect") and fault != "watch-end":  # many requests, continued LISTs
        assert injected, f"the schedule injected no {fault}"
    if code == 3 and fault not in MUST_HOLD:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err
        return
    assert (code, got) == (fair_code, fair_answer), f"{command} under {fault}: exit {code}\n{err}"
    waits = injected * (0.5 if fault == "slow" else 1.0)
    assert took <= 3 * fair_took + waits + 2.0, (took, fair_took, injected)


# -- get -w: the watch survives every fault ----------------------------------------------------------------

@pytest.mark.parametrize("fault", FAULTS)
def test_get_watch_keeps_every_dgd_and_sees_a_change(scene, tmp_path, fault):
    proxy = FaultProxy(scene.kubeconfig, fault, page=PAGE, every=5, watch_seconds=1.0, slow_seconds=0.5)
    # test_daily's background runner, pointed at the proxy's kubeconfig
    run = Running(SimpleNamespace(kubeconfig=proxy.kubeconfig(tmp_path / "kubeconfig")), "get", "-A", "-w")
    try:
        rows = set()
        run.wait_for(lambda line: bool(rows.add(tuple(line.split()[:2])) or {(A, "llm"), (A, "big"), (B, "chat"),
                                                                                (B, "wide")} <= rows))
        reason = f"Weather{fault.title().replace('-', '')}"
        status = {"conditions": [{"type": "Ready", "status": "False", "reason": reason, "message": "x",
                                  "lastTransitionTime": "2026-12-01T09:00:00Z"}]}
        scene.kubectl("-n", B, "patch", "dynamographdeployment", "chat", "--subresource=status", "--type=merge",
                      "-p", json.dumps({"status": status}))
        seen = run.wait_for(lambda line: reason in line)
        assert seen[-1].split()[:2] == [B, "chat"]
        run.proc.send_signal(signal.SIGINT)
        assert run.proc.wait(timeout=30) == 130
    finally:
        if run.proc.poll() is None:
            run.proc.kill()
        proxy.close()
        # the scene as it was, for the next test's fair weather
        scene.kubectl("-n", B, "patch", "dynamographdeployment", "chat", "--subresource=status", "--type=merge",
                      "-p", json.dumps({"status": None}), check=False)
