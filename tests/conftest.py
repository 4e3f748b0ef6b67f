"""Shared fixtures. The integration suite shares one real control plane per session.

The control plane is ``scripts/sandbox`` (etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and kwok with fake GPU nodes, built from Go modules). If it cannot start, the
tests that need it fail: they never skip. ``KD_TEST_KUBECONFIG`` points the suite at an already
running sandbox instead (for quick local iteration).

The real controllers (LWS manager, Volcano scheduler, controller-manager and admission) join that
cluster only while a test marked ``controllers`` needs them (``Sandbox.start_controllers``): the
other tests shape the orchestrators' CRDs and controller Deployments themselves, which running
controllers would fight.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SANDBOX = REPO / "scripts" / "sandbox"
DATA = REPO / "tests" / "data"
CORPUS_DIR = DATA / "corpus"  # real DGD manifests, see its PROVENANCE.md
CONTROLLERS = ("volcano-admission", "volcano-controllers", "volcano-scheduler", "lws")  # scripts/sandbox names
# Name prefixes of the webhook configurations each serves, as their charts name them
# (charts/lws/templates/webhook/webhook.yaml, installer/helm/chart/volcano/templates/webhooks.yaml).
WEBHOOK_PREFIXES = {"lws": "lws-", "volcano-admission": "volcano-admission-service-"}


class Sandbox:
    def __init__(self, workdir: Path, kubeconfig: Path):
        self.dir = workdir
        self.kubeconfig = kubeconfig

    def kubectl(self, *args, input=None, check=True, kubeconfig=None):
        proc = subprocess.run(["kubectl", f"--kubeconfig={kubeconfig or self.kubeconfig}", *args],
                              input=input, capture_output=True, text=True, timeout=180)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc

    def start_controllers(self, *names: str, env: dict | None = None) -> None:
        """``scripts/sandbox start``: real controllers, out of cluster, webhooks on loopback."""
        proc = subprocess.run(["bash", str(SANDBOX), "start", str(self.dir), *names], capture_output=True,
                              text=True, timeout=600, env={**os.environ, **(env or {})})
        if proc.returncode != 0:
            self.stop_controllers(*names)
            raise AssertionError(f"scripts/sandbox start {' '.join(names)} failed:\n{proc.stderr[-4000:]}")

    def start_controllers_in_background(self, *names: str, env: dict | None = None) -> subprocess.Popen:
        """The same, not waited for: with ``SANDBOX_INSTALL_APIS=0`` it waits for a chart being
        installed meanwhile to declare their webhooks. Wait on the result, then ``stop_controllers``."""
        return subprocess.Popen(["bash", str(SANDBOX), "start", str(self.dir), *names], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})

    def stop_controllers(self, *names: str) -> None:
        """Remove their webhook configurations (a pod webhook of a stopped server with failurePolicy
        Fail would refuse every later pod), then stop exactly their processes."""
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            listed = self.kubectl("get", kind, "-o", "name", check=False).stdout.split()
            prefixes = tuple(WEBHOOK_PREFIXES[n] for n in names if n in WEBHOOK_PREFIXES)
            ours = [n for n in listed if prefixes and n.split("/", 1)[1].startswith(prefixes)]
            if ours:
                self.kubectl("delete", *ours, "--ignore-not-found")
        subprocess.run(["bash", str(SANDBOX), "stop", str(self.dir), *names], capture_output=True, timeout=120)

    def user(self, name: str, group: str = "") -> Path:
        """A client certificate for a non-admin user; returns its kubeconfig."""
        out = subprocess.run(["bash", str(SANDBOX), "user", str(self.dir), name, group],
                             capture_output=True, text=True, check=True, timeout=60)
        return Path(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory, request):
    reuse = os.environ.get("KD_TEST_KUBECONFIG")
    if reuse:
        path = Path(reuse)
        yield Sandbox(path.parent, path)
        return
    check = subprocess.run(["bash", str(SANDBOX), "check"], capture_output=True, text=True)
    if check.returncode != 0:
        pytest.fail(f"the sandbox binaries are missing ({check.stderr.strip()}); run: scripts/sandbox build",
                    pytrace=False)
    workdir = tmp_path_factory.mktemp("sandbox")
    # Room for every doctor scenario's GPU pods side by side (8 nodes x 8 fake GPUs).
    # tests/data/fakebin stands in for CLIs inside images that cannot run here (see its scripts).
    env = {**os.environ, "SANDBOX_GPU_NODES": os.environ.get("SANDBOX_GPU_NODES", "8"),
           "SANDBOX_EXEC_PATH": str(REPO / "tests" / "data" / "fakebin")}
    up = subprocess.run(["bash", str(SANDBOX), "up", str(workdir)], capture_output=True, text=True, timeout=600,
                        env=env)
    if up.returncode != 0:
        subprocess.run(["bash", str(SANDBOX), "down", str(workdir)], timeout=120)
        pytest.fail(f"the sandbox control plane did not start:\n{up.stderr[-4000:]}", pytrace=False)
    try:
        yield Sandbox(workdir, workdir / "kubeconfig")
    finally:
        subprocess.run(["bash", str(SANDBOX), "down", str(workdir)], timeout=120)


def run_cli(*args, env=None, input=None, timeout=120):
    """Run the real console entry point in a subprocess (exit codes, streams, imports as a user sees them)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "kubectl_dynamo", *args], capture_output=True, text=True,
                          env=full_env, input=input, timeout=timeout, cwd=str(REPO))
