"""Put the sandbox into the state a real install leaves: the real CRDs plus the objects the
controllers' charts create (Deployments with the upstream labels and image tags, queues, the
Dynamo operator's config). Only the controllers' *processes* are absent; kwok runs their pods on
fake nodes, so the Deployments really become Available.
"""

from __future__ import annotations

import functools
import json
import tempfile
import time
from pathlib import Path

import yaml

from tests.conftest import REPO

CRD_DIR = REPO / "tests" / "data" / "crds"
DGD_CRD = REPO / "kubectl_dynamo" / "data" / "crds" / "nvidia.com_dynamographdeployments.yaml"
PROJECTS = ("grove", "kai", "lws", "volcano", "dynamo")


@functools.cache
def dgd_crd() -> Path:
    """The DGD CRD a 1.6 install serves: the bundled 1.5.0 CRD (its PROVENANCE) plus the 1.6.0
    ``components[].roles`` field as the plugin models it (validation/schema.py; the real 1.6 CRD is not
    bundled). The worlds run an operator reporting 1.6.0, and a CRD without ``roles`` under it is a fault
    doctor reports (``crd-behind-operator``), not a healthy install."""
    from kubectl_dynamo.validation.schema import _add_roles

    crd = yaml.load(DGD_CRD.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    for version in crd["spec"]["versions"]:
        if version["name"] == "v1beta1":
            _add_roles(version["schema"]["openAPIV3Schema"])
    out = Path(tempfile.mkdtemp(prefix="kd-dgd-crd-")) / DGD_CRD.name
    out.write_text(json.dumps(crd))  # JSON is YAML: kubectl and helm read it as is
    return out


def crd_files(project: str):
    if project == "dynamo":
        return [dgd_crd()] + sorted((CRD_DIR / "dynamo").glob("*.yaml"))
    return sorted((CRD_DIR / project).glob("*.yaml"))


@functools.cache
def crd_names(project: str) -> tuple:
    """CRD names of a set (parsed once: the files are megabytes; libyaml when available)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    names = []
    for f in crd_files(project):
        for doc in yaml.load_all(f.read_text(), Loader=loader):
            if doc and doc.get("kind") == "CustomResourceDefinition":
                names.append(doc["metadata"]["name"])
    return tuple(names)


def deployment(name, namespace, labels, containers, volumes=None):
    spec = {"containers": [{"name": c, "image": image, **extra} for c, image, extra in containers],
            "terminationGracePeriodSeconds": 0}
    if volumes:
        spec["volumes"] = volumes
    selector = {k: v for k, v in labels.items() if k in ("app", "app.kubernetes.io/name", "control-plane")}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"replicas": 1, "selector": {"matchLabels": selector},
                     "template": {"metadata": {"labels": labels}, "spec": spec}}}


def namespace(name):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def controllers(project: str, version: str | None = None) -> list:
    """The controller Deployments an install of ``project`` leaves, with upstream labels and tags."""
    if project == "grove":
        v = version or "v0.1.0-alpha.11"
        return [namespace("grove-system"), deployment(
            "grove-operator", "grove-system",
            {"app.kubernetes.io/name": "grove-operator", "app.kubernetes.io/component": "operator-deployment",
             "app.kubernetes.io/part-of": "grove", "chart": f"grove-charts-{v}", "release": "grove"},
            [("grove-operator", f"ghcr.io/ai-dynamo/grove/grove-operator:{v}", {})])]
    if project == "kai":
        v = version or "v0.17.0"
        reg = "ghcr.io/kai-scheduler/kai-scheduler"
        return [namespace("kai-scheduler"),
                deployment("kai-operator", "kai-scheduler", {"app": "kai-operator"},
                           [("operator", f"{reg}/operator:{v}", {})]),
                deployment("kai-scheduler-default", "kai-scheduler",
                           {"app": "kai-scheduler-default", "app.kubernetes.io/managed-by": "kai-operator"},
                           [("scheduler", f"{reg}/scheduler:{v}", {})])]
    if project == "lws":
        v = version or "v0.10.0"
        return [namespace("lws-system"), deployment(
            "lws-controller-manager", "lws-system",
            {"control-plane": "controller-manager", "app.kubernetes.io/name": "lws",
             "app.kubernetes.io/instance": "lws", "app.kubernetes.io/managed-by": "Helm",
             "helm.sh/chart": f"lws-{v}"},
            [("manager", f"registry.k8s.io/lws/lws:{v}", {})])]
    if project == "volcano":
        v = version or "v1.15.1"
        return [namespace("volcano-system")] + [
            deployment(name, "volcano-system", {"app": app}, [(name, f"docker.io/volcanosh/{image}:{v}", {})])
            for name, app, image in (("volcano-scheduler", "volcano-scheduler", "vc-scheduler"),
                                     ("volcano-controllers", "volcano-controller", "vc-controller-manager"),
                                     ("volcano-admission", "volcano-admission", "vc-webhook-manager"))]
    raise ValueError(project)


def dynamo_operator(version="1.5.0", grove=True, kai=True, volcano_scheduler=False, ns="dynamo-system",
                    release="dynamo-platform") -> list:
    """The operator Deployment and config ConfigMap as the platform chart renders them
    (grove and kaiScheduler always explicit booleans; lws never rendered)."""
    full = f"{release}-dynamo-operator"
    config = {"apiVersion": "operator.config.dynamo.nvidia.com/v1alpha1", "kind": "OperatorConfiguration",
              "orchestrators": {"kaiScheduler": {"enabled": kai}, "volcanoScheduler": {"enabled": volcano_scheduler},
                                "grove": {"enabled": grove}}}
    labels = {"app.kubernetes.io/name": "dynamo-operator", "app.kubernetes.io/instance": release,
              "app.kubernetes.io/component": "manager", "app.kubernetes.io/part-of": "dynamo-operator",
              "control-plane": "controller-manager", "app.kubernetes.io/version": version}
    return [namespace(ns),
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{full}-config", "namespace": ns},
             "data": {"config.yaml": yaml.safe_dump(config, sort_keys=False)}},
            deployment(f"{full}-controller-manager", ns, labels,
                       [("kube-rbac-proxy", "quay.io/brancz/kube-rbac-proxy:v0.15.0", {}),
                        ("manager", f"nvcr.io/nvidia/ai-dynamo/kubernetes-operator:{version}",
                         {"command": ["/manager"],
                          "args": ["--config=/etc/dynamo-operator/config.yaml", f"--operator-version={version}"],
                          "volumeMounts": [{"name": "operator-config", "mountPath": "/etc/dynamo-operator"}]})],
                       volumes=[{"name": "operator-config", "configMap": {"name": f"{full}-config"}}])]


def pod_webhook_down(namespace: str, name: str = "kd-install-deny-pods") -> dict:
    """A ValidatingWebhookConfiguration for the pods of ``namespace`` whose server never answers (nothing
    listens on port 9 of the loopback) with failurePolicy Fail: the real API server refuses every pod there."""
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [{"name": "pods.kd-install.test", "failurePolicy": "Fail", "sideEffects": "None",
                          "admissionReviewVersions": ["v1"], "timeoutSeconds": 2,
                          "clientConfig": {"url": "https://127.0.0.1:9/validate-pods"},
                          "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                          "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                     "resources": ["pods"]}]}]}


def kai_queues(with_dynamo=True):
    res = {k: {"quota": -1, "limit": -1, "overQuotaWeight": 1} for k in ("cpu", "gpu", "memory")}
    qs = [{"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "default-parent-queue"},
           "spec": {"resources": res}},
          {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "default-queue"},
           "spec": {"parentQueue": "default-parent-queue", "resources": res}}]
    if with_dynamo:
        qs += [{"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "dynamo-default"},
                "spec": {"resources": res}},
               {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "dynamo"},
                "spec": {"parentQueue": "dynamo-default", "resources": res}}]
    return qs


def volcano_queues():
    return [{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": n},
             "spec": {"weight": 1, "reclaimable": True}} for n in ("root", "default")]


def delete_crds(sandbox, names, timeout=180.0):
    """Delete CRDs and wait until they are gone. A CRD deleted right after it was created can stall
    in kube-apiserver's finalizer ("could not list instances: storage is (re)initializing") and is
    retried only with a long back-off; any update requeues it, so stalled ones get a nudge."""
    names = list(names)
    sandbox.kubectl("delete", "crd", *names, "--ignore-not-found", "--wait=false")
    deadline = time.monotonic() + timeout
    nudge = 0
    while True:
        present = set(sandbox.kubectl("get", "crd", "-o", "name").stdout.split())
        left = [n for n in names if f"customresourcedefinition.apiextensions.k8s.io/{n}" in present]
        if not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"CRDs still present after {timeout:.0f}s: {left}")
        nudge += 1
        if nudge % 10 == 0:  # every ~3 s
            sandbox.kubectl("annotate", "crd", *left, f"kubectl-dynamo.test/nudge={nudge}", "--overwrite",
                            check=False)
        time.sleep(0.3)


class World:
    """What is installed in the shared sandbox; each scenario says what it wants with ``ensure``."""

    def __init__(self, sandbox):
        self.sb = sandbox
        self.objects = []  # (kind, namespace, name, apiVersion) created by the current scenario

    @property
    def crds(self) -> set:
        """The CRD sets fully installed now (read from the cluster: several test modules share it)."""
        present = set(self.sb.kubectl("get", "crd", "-o", "name").stdout.split())
        return {p for p in PROJECTS if all(f"customresourcedefinition.apiextensions.k8s.io/{n}" in present
                                           for n in crd_names(p))}

    def apply(self, docs):
        text = "\n---\n".join(json.dumps(d) for d in docs)
        self.sb.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=text)
        for d in docs:
            self.objects.append((d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"],
                                 d["apiVersion"]))

    def set_status(self, resource, name, status):
        self.sb.kubectl("patch", resource, name, "--subresource=status", "--type=merge",
                        "-p", json.dumps({"status": status}))

    def clear_objects(self):
        for kind, ns, name, api in reversed(self.objects):
            if kind == "Namespace":
                continue  # namespaces are reused; deleting them is slow
            group = api.split("/")[0] if "/" in api else ""
            resource = f"{kind.lower()}s.{group}" if group else kind.lower() + "s"
            args = ["delete", resource, name, "--ignore-not-found", "--wait=false"]
            if ns:
                args += ["-n", ns]
            self.sb.kubectl(*args, check=False)
        self.objects = []

    def ensure(self, projects):
        """Install exactly these CRD sets (idempotent) and wait until discovery agrees."""
        want = set(projects)
        have = self.crds
        for p in sorted(have - want):
            delete_crds(self.sb, crd_names(p))
        for p in sorted(want - have):
            args = ["apply", "--server-side", "--force-conflicts"]
            for f in crd_files(p):
                args += ["-f", str(f)]
            self.sb.kubectl(*args)
            self.wait_established(crd_names(p))
        self.wait_discovery(want)

    def wait_established(self, names, timeout=60.0):
        """``kubectl wait`` fails at once ("status.conditions accessor error") on a CRD whose status
        the apiserver has not written yet (seen on a fresh control plane): retry until the deadline."""
        deadline = time.monotonic() + timeout
        while True:
            proc = self.sb.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                                   *[f"crd/{n}" for n in names], check=False)
            if proc.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"CRDs not Established after {timeout:.0f}s: {proc.stderr.strip()}")
            time.sleep(0.3)

    def wait_discovery(self, projects, timeout=30.0):
        """Discovery follows CRD changes asynchronously: poll until /apis matches the CRDs."""
        expected = set()
        for p in projects:
            for n in crd_names(p):
                expected.add(n.split(".", 1)[1])
        every = {n.split(".", 1)[1] for p in PROJECTS for n in crd_names(p)}
        deadline = time.monotonic() + timeout
        while True:
            raw = self.sb.kubectl("get", "--raw", "/apis").stdout
            served = {g["name"] for g in json.loads(raw)["groups"]} & every
            if served == expected:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"discovery serves {sorted(served)}, expected {sorted(expected)}")
            time.sleep(0.2)

    def full_stack(self, operator_version: str) -> World:
        """No objects but every CRD set, the controllers' Deployments, KAI's and Volcano's queues and the
        Dynamo operator (Grove and KAI on), Available: the world test_doctor, test_weather and the
        doctor_scale benchmark diagnose."""
        self.clear_objects()
        self.ensure(["grove", "kai", "lws", "volcano", "dynamo"])
        self.apply(controllers("grove", "v0.1.0-alpha.15") + controllers("kai") + controllers("lws")
                   + controllers("volcano") + kai_queues() + volcano_queues()
                   + dynamo_operator(version=operator_version, grove=True, kai=True))
        self.wait_available()
        return self

    def wait_available(self, timeout=120):
        deps = [(ns, name) for kind, ns, name, _ in self.objects if kind == "Deployment"]
        for ns, name in deps:
            self.sb.kubectl("-n", ns, "wait", "--for=condition=Available", f"--timeout={timeout}s",
                            f"deployment/{name}")
