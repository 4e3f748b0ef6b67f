"""scripts/sandbox's stable interface: up, status, down, DIR/kubeconfig; down leaves nothing running."""

import os
import subprocess

from tests.conftest import SANDBOX


def sandbox(*args, env=None):
    return subprocess.run(["bash", str(SANDBOX), *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie of ours would still answer kill 0; it is dead for this purpose.
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split()[2] != "Z"


def test_up_status_down_leaves_nothing_running(tmp_path):
    env = {"SANDBOX_COMPONENTS": "etcd kube-apiserver"}
    up = sandbox("up", str(tmp_path), env=env)
    assert up.returncode == 0, up.stderr
    pids = [int((tmp_path / "pids" / name).read_text()) for name in ("etcd", "kube-apiserver")]
    try:
        assert all(alive(p) for p in pids)
        status = sandbox("status", str(tmp_path), env=env)
        assert status.returncode == 0
        assert "etcd running" in status.stdout and "kube-apiserver running" in status.stdout
        version = subprocess.run(["kubectl", f"--kubeconfig={tmp_path / 'kubeconfig'}", "version", "-o", "json"],
                                 capture_output=True, text=True, timeout=60)
        assert '"gitVersion": "v1.33.13"' in version.stdout
        again = sandbox("up", str(tmp_path), env=env)
        assert again.returncode != 0 and "already has a sandbox" in again.stderr
    finally:
        down = sandbox("down", str(tmp_path), env=env)
    assert down.returncode == 0
    assert not any(alive(p) for p in pids)
    assert sandbox("status", str(tmp_path)).returncode == 1


def test_check_reports_missing_binaries(tmp_path):
    result = sandbox("check", env={"SANDBOX_CACHE": str(tmp_path)})
    assert result.returncode == 1 and "missing" in result.stderr and "scripts/sandbox build" in result.stderr


def test_start_stop_a_real_controller_and_down(tmp_path):
    """`start` adds a real controller (its webhooks on loopback), `stop` ends exactly it, `down` the rest."""
    env = {"SANDBOX_COMPONENTS": "etcd kube-apiserver"}
    up = sandbox("up", str(tmp_path), env=env)
    assert up.returncode == 0, up.stderr
    try:
        start = sandbox("start", str(tmp_path), "lws")
        assert start.returncode == 0, start.stderr
        lws = int((tmp_path / "pids" / "lws").read_text())
        assert alive(lws) and "lws running" in sandbox("status", str(tmp_path)).stdout
        again = sandbox("start", str(tmp_path), "lws")
        assert again.returncode == 1 and "lws already runs" in again.stderr
        url = subprocess.run(["kubectl", f"--kubeconfig={tmp_path / 'kubeconfig'}", "get",
                              "mutatingwebhookconfiguration", "lws-mutating-webhook-configuration",
                              "-o", "jsonpath={.webhooks[1].clientConfig.url}"], capture_output=True, text=True,
                             timeout=60).stdout
        assert url.startswith("https://127.0.0.1:") and url.endswith("/mutate--v1-pod")
        assert sandbox("stop", str(tmp_path), "lws").returncode == 0
        assert not alive(lws)
        assert "lws" not in (tmp_path / "pids" / "order").read_text().split()
        assert sandbox("start", str(tmp_path), "kwok").returncode == 2  # not a controller
    finally:
        down = sandbox("down", str(tmp_path), env=env)
    assert down.returncode == 0 and sandbox("status", str(tmp_path)).returncode == 1
