"""Interpretation of raw API objects (no cluster): versions from image tags, health, gates, checks."""

from kubectl_dynamo.checks import cluster as cc
from kubectl_dynamo.checks.registry import run
from kubectl_dynamo.model.platform import Facts, detect, image_tag, operator_version
from tests.integration import world as w


def ready(dep, n=1):
    dep["status"] = {"availableReplicas": n}
    return dep


def deps(*projects, **kw):
    out = []
    for p in projects:
        out += [ready(d) for d in w.controllers(p) if d["kind"] == "Deployment"]
    return out


GROUPS = {"grove.io": ["v1alpha1"], "scheduler.grove.io": ["v1alpha1"], "scheduling.run.ai": ["v2", "v2alpha2"],
          "leaderworkerset.x-k8s.io": ["v1"], "disaggregatedset.x-k8s.io": ["v1"], "scheduling.volcano.sh": ["v1beta1"]}


def report(facts):
    r = detect(facts)
    r["problems"] = [f.as_json() for f in run("cluster", cc.ClusterView(facts, r))]
    return r


def test_image_tag():
    assert image_tag("registry.k8s.io/lws/lws:v0.10.0") == "v0.10.0"
    assert image_tag("host:5000/repo/x") is None
    assert image_tag("x/y:v1@sha256:abc") == "v1"
    assert image_tag("x/y@sha256:abc") is None


def test_versions_health_and_fips_suffix():
    kai = deps("kai")
    kai[0]["spec"]["template"]["spec"]["containers"][0]["image"] += "-fips"
    kai[1]["status"] = {"availableReplicas": 0}
    r = report(Facts(server_version="v1.33.13", groups=GROUPS, deployments=deps("grove", "lws", "volcano") + kai,
                     kai_queues=[], volcano_queues=[], nodes=[]))
    o = r["orchestrators"]
    assert (o["grove"]["version"], o["grove"]["healthy"]) == ("v0.1.0-alpha.11", True)
    assert (o["kai"]["version"], o["kai"]["healthy"]) == ("v0.17.0", False)
    assert (o["lws"]["version"], o["lws"]["disaggregatedSet"]) == ("v0.10.0", True)
    assert o["volcano"]["version"] == "v1.15.1"
    codes = {p["code"] for p in r["problems"]}
    assert "orchestrator-unhealthy" in codes and "no-gpu-nodes" in codes
    # Grove alpha.11 is older than what operator 1.6 needs (alpha.15); no operator yet: a warning.
    assert any(p["code"] == "orchestrator-too-old" and p["severity"] == "warning"
               and "Grove v0.1.0-alpha.11" in p["message"] for p in r["problems"])


def test_operator_version_from_flag_then_image():
    dep = [d for d in w.dynamo_operator(version="1.5.1") if d["kind"] == "Deployment"][0]
    assert operator_version(dep) == "1.5.1"
    dep["spec"]["template"]["spec"]["containers"][1]["args"] = []
    dep["spec"]["template"]["spec"]["containers"][1]["image"] = "x/kubernetes-operator:v1.4.0"
    assert operator_version(dep) == "1.4.0"


def test_gpu_nodes_counted_from_allocatable():
    nodes = [{"status": {"allocatable": {"nvidia.com/gpu": "8"}}}, {"status": {"allocatable": {"cpu": "4"}}},
             {"status": {"allocatable": {"nvidia.com/gpu": "4"}}}]
    r = detect(Facts(server_version="v1.33.13", groups={}, deployments=[], nodes=nodes))
    assert r["gpuNodes"] == {"count": 2, "allocatableGpus": 12}


def test_unreadable_operator_config_makes_chart_gates_unknown():
    op = [ready(d) for d in w.dynamo_operator() if d["kind"] == "Deployment"]
    facts = Facts(server_version="v1.33.13", groups=GROUPS, deployments=op, kai_queues=[], nodes=[],
                  unknown={"dynamoOperator.config": "forbidden (configmaps is forbidden)"})
    r = report(facts)
    assert r["dynamoOperator"]["gates"] == {"grove": None, "lws": True, "kaiScheduler": None}
    codes = {p["code"] for p in r["problems"]}
    assert {"gates-unreadable", "permission-denied"} <= codes


def test_old_kubernetes():
    r = report(Facts(server_version="v1.23.4", groups={}, deployments=[], nodes=[]))
    assert any(p["code"] == "kubernetes-too-old" and "older than 1.24" in p["message"] for p in r["problems"])
    r = report(Facts(server_version="v1.29.0+k3s1", groups={}, deployments=[], nodes=[]))
    assert any(p["code"] == "kubernetes-too-old" and "1.30" in p["message"] for p in r["problems"])
