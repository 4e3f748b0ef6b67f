"""The demo's cluster state and commands (called by scripts/demo with the sandbox's kubeconfig).

1. Installs what a platform-chart install with Grove + KAI leaves (real CRDs, controller
   Deployments with upstream labels and image tags, the dynamo queues, the operator's config), plus
   LWS without Volcano, and runs `detect`.
2. Writes a multinode vLLM DGD (2 nodes x 4 GPUs, TP 8) and runs `explain dgd -f` on it.
3. Creates that DGD and the objects Grove would create for it (PodCliqueSet, scaling group,
   PodCliques, PodGang, pods), with one fault injected (the worker runs another image than the
   leader), and runs `doctor`, which must find it.
4. Walks the debugging loop as a user would, without a raw kubectl command: `get` -> `tree` ->
   `logs --rank 1` -> `collect` -> `doctor --from` the bundle, which must find the fault offline.
   The images cannot run here: kwok serves each pod's log from a file (its Logs CR).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.conftest import Sandbox  # noqa: E402  (the test fixtures double as the demo's installer)
from tests.integration import scenarios  # noqa: E402
from tests.integration import world as w  # noqa: E402


def show(*args: str, kubeconfig: Path) -> int:
    print(f"\n$ kubectl dynamo {' '.join(args)}", flush=True)
    return subprocess.run(["kubectl-dynamo", *args, "--kubeconfig", str(kubeconfig)]).returncode


def main(kubeconfig: str) -> int:
    path = Path(kubeconfig)
    sandbox = Sandbox(path.parent, path)
    world = w.World(sandbox)
    print("== Installing: Grove v0.1.0-alpha.15 + KAI Scheduler v0.17.0 (queues dynamo-default/dynamo), the "
          "Dynamo operator 1.6.0 as the platform chart renders it, and LWS v0.10.0 without Volcano", flush=True)
    world.ensure(["grove", "kai", "lws", "dynamo"])
    world.apply(w.controllers("grove", "v0.1.0-alpha.15") + w.controllers("kai") + w.controllers("lws")
                + w.kai_queues() + w.dynamo_operator(version=scenarios.OPERATOR_VERSION, grove=True, kai=True))
    world.wait_available()
    show("version", kubeconfig=path)
    show("detect", kubeconfig=path)

    doc = scenarios.dgd("qwen", "demo", "vllm", nodes=2, gpus=4, tp=8)
    manifest = Path(tempfile.mkdtemp()) / "qwen.yaml"
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False))
    print(f"\n== A multinode vLLM DGD ({manifest}):\n{manifest.read_text()}", flush=True)
    show("explain", "dgd", "-f", str(manifest), kubeconfig=path)

    def other_image(pods):  # the injected fault
        pods[1]["spec"]["containers"][0]["image"] = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0"

    print("\n== Creating the DGD and the objects Grove would create for it; the worker runs another image", flush=True)
    objs = scenarios.group_objects(doc, mutate=other_image)
    pods = [o for o in objs if o["kind"] == "Pod"]
    logs = Path(tempfile.mkdtemp())
    kwok_logs = []
    for rank, pod in enumerate(pods):  # the leader first, then the workers: rank order
        name = pod["metadata"]["name"]
        lines = [(f"2026-12-01T09:00:0{rank + 1}.1Z", f"rank {rank}: loading Qwen/Qwen3-0.6B, TP 8 across 2 nodes"),
                 (f"2026-12-01T09:00:0{rank + 3}.2Z", f"rank {rank}: {pod['spec']['containers'][0]['image']}")]
        (logs / f"{name}.log").write_text("".join(scenarios.cri_line(t, x) for t, x in lines))
        kwok_logs.append(scenarios.kwok_logs(name, "demo", logs / f"{name}.log", other=logs / "other.log"))
    # every other container (init containers, the controllers' pods) logs one line
    (logs / "other.log").write_text(scenarios.cri_line("2026-12-01T08:59:00Z", "(a stand-in: no image runs here)"))
    kwok_logs.append({"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterLogs", "metadata": {"name": "demo"},
                      "spec": {"selector": {"matchNamespaces": ["grove-system", "kai-scheduler", "lws-system",
                                                                "dynamo-system"]},
                               "logs": [{"logsFile": str(logs / "other.log")}]}})
    sandbox.kubectl("apply", "-f", "-", input=json.dumps(objs[0]))
    sandbox.kubectl("apply", "--server-side", "-f", "-", input="\n---\n".join(
        json.dumps(o) for o in objs[1:] + scenarios.grove_objects(doc, pods) + kwok_logs))
    sandbox.kubectl("-n", "demo", "wait", "--for=condition=Ready", "pod", "--all", "--timeout=90s")
    code = show("doctor", "-n", "demo", "-o", "wide", kubeconfig=path)
    if not found_fault(code, "doctor", "-n", "demo", "-o", "json", "--kubeconfig", str(path)):
        return 1

    print("\n== The debugging loop: from get to tree to one rank's logs to a bundle, and doctor on the bundle", flush=True)
    show("get", "-n", "demo", kubeconfig=path)
    show("get", "dgd", "qwen", "-n", "demo", kubeconfig=path)
    show("tree", "qwen", "-n", "demo", kubeconfig=path)
    show("logs", "qwen", "-n", "demo", "--rank", "1", kubeconfig=path)
    bundle = logs / "qwen-bundle.tar.gz"
    if show("collect", "qwen", "-n", "demo", "-o", str(bundle), kubeconfig=path) != 0:
        return 1
    print(f"\n$ kubectl dynamo doctor --from {bundle} -n demo qwen", flush=True)
    code = subprocess.run(["kubectl-dynamo", "doctor", "--from", str(bundle), "-n", "demo", "qwen"]).returncode
    if not found_fault(code, "doctor", "--from", str(bundle), "-n", "demo", "qwen", "-o", "json"):
        return 1
    print("\n== doctor --from the bundle found it too, offline.")
    return 0


def found_fault(code: int, *args: str) -> bool:
    found = subprocess.run(["kubectl-dynamo", *args], capture_output=True, text=True)
    codes = {f["code"] for f in json.loads(found.stdout)["findings"]}
    if code == 1 and "image-mismatch" in codes:
        print("\n== doctor exited 1 and reported image-mismatch: it found the injected fault.")
        return True
    print(f"\n== doctor did not find the injected fault (exit {code}, codes {sorted(codes)})", file=sys.stderr)
    return False


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
