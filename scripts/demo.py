"""The demo's cluster state and commands (called by scripts/demo with the sandbox's kubeconfig).

It installs what a platform-chart install with Grove + KAI leaves (real CRDs, controller
Deployments with upstream labels and image tags, the dynamo queues, the operator's config) plus
LWS without Volcano, then shows what `kubectl dynamo` makes of it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.conftest import Sandbox  # noqa: E402  (the test fixtures double as the demo's installer)
from tests.integration import world as w  # noqa: E402


def show(*args: str, kubeconfig: Path) -> int:
    print(f"\n$ kubectl dynamo {' '.join(args)}", flush=True)
    return subprocess.run(["kubectl-dynamo", *args, "--kubeconfig", str(kubeconfig)]).returncode


def main(kubeconfig: str) -> int:
    path = Path(kubeconfig)
    world = w.World(Sandbox(path.parent, path))
    print("Installing: Grove v0.1.0-alpha.11 + KAI Scheduler v0.17.0 (queues dynamo-default/dynamo), "
          "the Dynamo operator 1.5.0 as the platform chart renders it, and LWS v0.10.0 without Volcano ...",
          flush=True)
    world.ensure(["grove", "kai", "lws", "dynamo"])
    world.apply(w.controllers("grove") + w.controllers("kai") + w.controllers("lws") + w.kai_queues()
                + w.dynamo_operator(version="1.5.0", grove=True, kai=True))
    world.wait_available()
    show("version", kubeconfig=path)
    show("detect", kubeconfig=path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
