"""The demo's cluster state and commands (called by scripts/demo with the sandbox's kubeconfig).

1. Installs what a platform-chart install with Grove + KAI leaves (real CRDs, controller
   Deployments with upstream labels and image tags, the dynamo queues, the operator's config), plus
   LWS without Volcano, and runs `detect`.
2. Writes a multinode vLLM DGD (2 nodes x 4 GPUs, TP 8) and runs `explain dgd -f` on it.
3. Creates that DGD and the pods Grove would create for it, with one fault injected (the worker
   runs another image than the leader), and runs `doctor`, which must find it.
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

    print("\n== Creating the DGD and the pods Grove would create for it; the worker runs another image", flush=True)
    objs = scenarios.group_objects(doc, mutate=other_image)
    sandbox.kubectl("apply", "-f", "-", input=json.dumps(objs[0]))
    sandbox.kubectl("apply", "--server-side", "-f", "-", input="\n---\n".join(json.dumps(o) for o in objs[1:]))
    sandbox.kubectl("-n", "demo", "wait", "--for=condition=Ready", "pod", "--all", "--timeout=90s")
    code = show("doctor", "-n", "demo", "-o", "wide", kubeconfig=path)
    found = subprocess.run(["kubectl-dynamo", "doctor", "-n", "demo", "-o", "json", "--kubeconfig", str(path)],
                           capture_output=True, text=True)
    codes = {f["code"] for f in json.loads(found.stdout)["findings"]}
    if code == 1 and "image-mismatch" in codes:
        print("\n== doctor exited 1 and reported image-mismatch: it found the injected fault.")
        return 0
    print(f"\n== doctor did not find the injected fault (exit {code}, codes {sorted(codes)})", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
