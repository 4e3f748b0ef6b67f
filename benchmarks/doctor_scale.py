"""Benchmark: `kubectl-dynamo doctor -A -o json` at cluster scale against a real control plane,
next to `kubectl get -A -o json` of the same kinds. Not part of the test suite.

    .venv/bin/python benchmarks/doctor_scale.py [--dgds 200 --pods 10000 --nodes 1000]

A dedicated sandbox (scripts/sandbox: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, kwok) in a temporary directory, stopped and removed at the end whatever happens.
It holds the real CRDs and controller objects (as tests/integration/test_doctor.py's `world`),
fake 8-GPU nodes, and multinode DGDs with the pods Grove / LWS would create, rendered by the
`explain` simulation. Pods are created already bound (`spec.nodeName`): the scheduler is not what
is measured; kwok still marks them Running and Ready.

API requests are counted from the apiserver's audit log. The benchmark talks as its own user
("bench", system:masters) and the audit policy logs only that user, one event per request
(ResponseComplete); every measured command runs alone, so the audit lines written between its
start and end are exactly its requests. /metrics (apiserver_request_total) would mix in kwok's
and the controllers' traffic, which never stops with 1,000 nodes.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kubectl_dynamo import __version__  # noqa: E402
from kubectl_dynamo.operator.grove import pcs_name_for_dgd  # noqa: E402
from tests.conftest import Sandbox  # noqa: E402
from tests.integration import scenarios as s  # noqa: E402
from tests.integration import world as w  # noqa: E402

SANDBOX = REPO / "scripts" / "sandbox"
RESULTS = REPO / "benchmarks" / "results" / "doctor_scale.md"
DGD_LABEL = "nvidia.com/dynamo-graph-deployment-name"
GPUS_PER_NODE = 8
BENCH_USER = "bench"
# `scripts/sandbox up` creates this many nodes itself; the benchmark adds the rest (see make_nodes).
SANDBOX_NODES = 4
BACKENDS = [("vllm", False), ("sglang", False), ("trtllm", True)]  # (backend, on LWS)
NODE_COUNTS = [5, 10, 20, 40]
KUBECTL_KINDS = [  # what doctor LISTs, as kubectl spells it
    ["dynamographdeployments.nvidia.com", "-A"],
    ["pods", "-A", "-l", DGD_LABEL],
    ["configmaps", "-A", "-l", DGD_LABEL],
    ["podgangs.scheduler.grove.io", "-A"],
    ["leaderworkersets.leaderworkerset.x-k8s.io", "-A"],
    ["events", "-A", "--field-selector", "type=Warning"],
    ["deployments", "-A"],
    ["nodes"],
    ["queues.scheduling.run.ai"],
    ["queues.scheduling.volcano.sh"],
]
AUDIT_POLICY = f"""apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: ["{BENCH_USER}"]
- level: None
"""


def log(msg):
    print(f"[doctor_scale] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------ the workload
def shape(i, pods_per_dgd):
    """DGD i: backend/provider cycle over 3, multinode size over 4; 80 % of its pods are 1-GPU
    multinode pods (replicas x nodeCount), the rest Frontend pods without GPUs."""
    backend, lws = BACKENDS[i % len(BACKENDS)]
    n = NODE_COUNTS[i % len(NODE_COUNTS)]
    replicas = max(1, int(pods_per_dgd * 0.8) // n)
    frontend = pods_per_dgd - replicas * n
    if frontend < 0:
        raise SystemExit(f"--pods/--dgds = {pods_per_dgd} is too small for a {n}-node group")
    return backend, lws, n, replicas, frontend


def make_dgd(i, namespaces, pods_per_dgd, faults):
    backend, lws, n, replicas, frontend = shape(i, pods_per_dgd)
    ann = {"nvidia.com/kai-scheduler-queue": "team-a"} if faults.get(i) == "kai-queue-missing" else None
    doc = s.dgd(f"{backend}-{i:03d}", f"team-{i % namespaces:02d}", backend, nodes=n, gpus=1, lws=lws,
                annotations=ann)
    doc["spec"]["components"][0]["replicas"] = replicas
    if frontend:
        doc["spec"]["components"].insert(0, {
            "name": "Frontend", "type": "frontend", "replicas": frontend,
            "podTemplate": {"spec": {"containers": [{"name": "main", "image": s.IMAGE[backend],
                                                     "command": ["python3", "-m", "dynamo.frontend"]}]}}})
    return doc


class Placer:
    """Binds pods to nodes: GPU pods fill nodes 8 at a time, GPU-less pods go round robin."""

    def __init__(self, nodes):
        self.nodes, self.gpu, self.cpu = nodes, 0, 0

    def place(self, gpus):
        if gpus:
            node = self.gpu // GPUS_PER_NODE
            if node >= self.nodes:
                raise SystemExit(f"the GPU pods need more than {self.nodes} x {GPUS_PER_NODE} GPUs")
            self.gpu += gpus
        else:
            node, self.cpu = self.cpu % self.nodes, self.cpu + 1
        return f"gpu-node-{node}"


def _gpus(spec):
    return sum(int((c.get("resources") or {}).get("limits", {}).get("nvidia.com/gpu", 0) or 0)
               for c in spec.get("containers") or [])


def objects_for(doc, placer, fault):
    """The DGD, what the operator and Grove / LWS create for it, and its pods (bound)."""
    explained = s.render(doc)
    name, ns = doc["metadata"]["name"], doc["metadata"]["namespace"]
    grove = explained["provider"] == "grove"
    comps = doc["spec"]["components"]
    pcs = pcs_name_for_dgd(name, [(c["name"], "multinode" in c) for c in comps])
    meta, pods, sas, cliques, lwss = [doc], [], set(), {}, []
    for comp, spec_comp in zip(explained["components"], comps):
        cname = comp["name"].lower()
        groups = spec_comp.get("replicas", 1) if comp["multinode"] else 1
        for group in range(groups):
            for role in comp["roles"]:
                if comp["multinode"]:
                    count = role["replicas"]
                else:
                    count = spec_comp.get("replicas", 1)
                for i in range(count):
                    spec = copy.deepcopy(role["podSpec"])
                    spec.pop("schedulingGates", None)  # Grove lifts its gate once the PodGang exists
                    spec["terminationGracePeriodSeconds"] = 0
                    spec["nodeName"] = placer.place(_gpus(spec))
                    sas.add(spec.get("serviceAccountName"))
                    labels = {DGD_LABEL: name, "nvidia.com/dynamo-component": comp["name"]}
                    if grove:
                        if comp["multinode"]:
                            suffix = "ldr" if role["name"] == "leader" else "wkr"
                            clique = f"{pcs}-0-{cname}-{group}-{cname}-{suffix}"
                            labels["grove.io/podcliquescalinggroup-replica-index"] = str(group)
                        else:
                            clique = f"{pcs}-0-{cname}"
                        labels.update({"grove.io/podclique": clique, "grove.io/podclique-pod-index": str(i),
                                       "grove.io/podgang": f"{pcs}-0", "app.kubernetes.io/part-of": pcs})
                        pod_name = f"{clique}-{i}"
                        cliques.setdefault(clique, []).append(pod_name)
                    elif comp["multinode"]:
                        lws = f"{name}-{cname}-0"
                        worker = 0 if role["name"] == "leader" else i + 1
                        labels.update({"leaderworkerset.sigs.k8s.io/name": lws,
                                       "leaderworkerset.sigs.k8s.io/group-index": str(group),
                                       "leaderworkerset.sigs.k8s.io/worker-index": str(worker),
                                       "role": role["name"]})
                        pod_name = f"{lws}-{group}" if worker == 0 else f"{lws}-{group}-{worker}"
                    else:  # the operator's Deployment
                        pod_name = f"{name}-{cname}-5d8f7c9b4-{i:05d}"
                    pods.append({"apiVersion": "v1", "kind": "Pod",
                                 "metadata": {"name": pod_name, "namespace": ns, "labels": labels}, "spec": spec})
        if not grove and comp["multinode"]:
            roles = {r["name"]: r["podSpec"] for r in comp["roles"]}
            lwss.append({"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                         "metadata": {"name": f"{name}-{cname}-0", "namespace": ns, "labels": {DGD_LABEL: name}},
                         "spec": {"replicas": groups, "startupPolicy": "LeaderCreated",
                                  "leaderWorkerTemplate": {"size": comp["nodeCount"],
                                                           "leaderTemplate": {"spec": roles["leader"]},
                                                           "workerTemplate": {"spec": roles["worker"]}}}})
    if grove:
        meta.append({"apiVersion": "scheduler.grove.io/v1alpha1", "kind": "PodGang",
                     "metadata": {"name": f"{pcs}-0", "namespace": ns, "labels": {"app.kubernetes.io/part-of": pcs}},
                     "spec": {"podgroups": [{"name": c, "minReplicas": len(p),
                                             "podReferences": [{"namespace": ns, "name": x} for x in p]}
                                            for c, p in sorted(cliques.items())]}})
    meta += lwss
    if doc["spec"]["backendFramework"] == "vllm" and fault != "wait-leader-configmap-missing":
        meta.append(s.wait_leader_configmap(doc))
    inject(fault, pods)
    return meta, pods, {x for x in sas if x}


def inject(fault, pods):
    """A few faults so the findings are not trivially empty (each on one DGD)."""
    workers = [p for p in pods if p["metadata"]["labels"].get("grove.io/podclique", "").endswith("-wkr")
               or p["metadata"]["labels"].get("leaderworkerset.sigs.k8s.io/worker-index", "0") != "0"]
    if fault == "group-incomplete":
        pods.remove(workers[0])
    elif fault == "image-mismatch":
        workers[0]["spec"]["containers"][0]["image"] += "-old"
    elif fault == "worker-probes":
        workers[0]["spec"]["containers"][0]["livenessProbe"] = {"httpGet": {"path": "/live", "port": 9090}}
    elif fault == "rank-duplicate":
        workers[1]["metadata"]["labels"]["grove.io/podclique-pod-index"] = "0"
        workers[1]["metadata"]["name"] += "-dup"


FAULTS = {0: "wait-leader-configmap-missing", 1: "worker-probes", 2: "group-incomplete", 3: "image-mismatch",
          4: "rank-duplicate", 6: "kai-queue-missing", 9: "crash-loop"}


# ----------------------------------------------------------------------------------- the cluster
def kubectl(kubeconfig, *args, input=None, check=True, timeout=900):
    proc = subprocess.run(["kubectl", f"--kubeconfig={kubeconfig}", *args], input=input, capture_output=True,
                          text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args[:3])} failed: {proc.stderr.strip()[-2000:]}")
    return proc


PLURALS = {"Node": ("", "v1", "nodes", False), "Pod": ("", "v1", "pods", True),
           "ConfigMap": ("", "v1", "configmaps", True),
           "DynamoGraphDeployment": ("nvidia.com", "v1beta1", "dynamographdeployments", True),
           "PodGang": ("scheduler.grove.io", "v1alpha1", "podgangs", True),
           "LeaderWorkerSet": ("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", True)}


def create_parallel(kubeconfig, docs, parallel=2):
    """POST each object, `parallel` (<= 2 cores) connections at once. Not `kubectl create -f`:
    measured here at 8-10 objects/s (its per-object client work, not the server's ~15 ms), too slow
    for 10,000 pods; one POST per object is what kubectl does too."""
    from concurrent.futures import ThreadPoolExecutor

    from kubectl_dynamo.cluster.client import Cluster, Target, path_for

    def post(chunk):
        cluster = Cluster(Target(kubeconfig=str(kubeconfig), request_timeout="60s"))
        for d in chunk:
            group, version, plural, namespaced = PLURALS[d["kind"]]
            cluster.request("POST", path_for(group, version, plural, d["metadata"]["namespace"] if namespaced else None),
                            body=d)

    with ThreadPoolExecutor(parallel) as pool:
        list(pool.map(post, [docs[k::parallel] for k in range(parallel)]))


def node_doc(i):  # the same fake node as scripts/sandbox's gpu_nodes_yaml
    name = f"gpu-node-{i}"
    res = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(GPUS_PER_NODE)}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
                         "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                    "kubernetes.io/arch": "amd64", "type": "kwok",
                                    "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                                    "nvidia.com/gpu.count": str(GPUS_PER_NODE)}},
            "spec": {"providerID": f"kwok://{name}"},
            "status": {"capacity": res, "allocatable": res}}


def count_lines(kubeconfig, *args):
    out = kubectl(kubeconfig, *args, "--chunk-size=500").stdout
    return sum(1 for line in out.splitlines() if line.strip())


def wait_until(what, fn, timeout):
    end = time.monotonic() + timeout
    while True:
        value = fn()
        if value is True:
            return
        if time.monotonic() > end:
            raise RuntimeError(f"{what}: still {value} after {timeout}s")
        time.sleep(2)


def nodes_ready(kubeconfig, want):
    out = kubectl(kubeconfig, "get", "nodes", "-o",
                  'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}').stdout
    ready = out.split().count("True")
    return True if ready >= want else f"{ready}/{want} nodes Ready"


def pods_running(kubeconfig, want):
    running = count_lines(kubeconfig, "get", "pods", "-A", "-l", DGD_LABEL, "--field-selector=status.phase=Running",
                          "--no-headers", "-o", "name")
    return True if running >= want else f"{running}/{want} pods Running"


def populate(kubeconfig, indices, args, placer, timings, tag):
    t = time.perf_counter()
    meta, pods, sas = [], [], set()
    namespaces = set()
    for i in indices:
        doc = make_dgd(i, args.namespaces, args.pods // args.dgds, FAULTS)
        m, p, sa = objects_for(doc, placer, FAULTS.get(i))
        ns = doc["metadata"]["namespace"]
        namespaces.add(ns)
        meta += m
        pods += p
        sas |= {(ns, x) for x in sa}
    render = time.perf_counter() - t
    base = [w.namespace(ns) for ns in sorted(namespaces)]
    base += [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa, "namespace": ns}}
             for ns, sa in sorted(sas)]
    base += [s.mpi_secret(ns) for ns in sorted(namespaces)]
    base = [d for d in base if (d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) not in CREATED]
    CREATED.update((d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in base)
    t = time.perf_counter()
    if base:
        kubectl(kubeconfig, "create", "-f", "-", input="\n".join(json.dumps(d) for d in base))
    create_parallel(kubeconfig, meta)
    t_pods = time.perf_counter()
    create_parallel(kubeconfig, pods)
    created = time.perf_counter()
    timings.append((f"{tag}: render {len(indices)} DGDs, {len(pods)} pods with the explain simulation",
                    render))
    timings.append((f"{tag}: create {len(base) + len(meta)} DGDs/ConfigMaps/PodGangs/LWS/namespaces/...",
                    t_pods - t))
    timings.append((f"{tag}: create {len(pods)} pods (POST, 2 in parallel, "
                    f"{len(pods) / (created - t_pods):.0f}/s)", created - t_pods))
    return len(pods)


CREATED = set()


# ------------------------------------------------------------------------------------ measurement
class Audit:
    def __init__(self, path: Path):
        self.path = path

    def size(self):
        return self.path.stat().st_size if self.path.exists() else 0

    def settle(self):
        """The apiserver writes an event after the response: wait until the file stops growing."""
        last, stable = -1, 0
        while stable < 3:
            now = self.size()
            stable = stable + 1 if now == last else 0
            last = now
            time.sleep(0.1)
        return last

    def events(self, start, end):
        with open(self.path, "rb") as f:
            f.seek(start)
            data = f.read(end - start)
        return [json.loads(line) for line in data.splitlines() if line.strip()]


def summarize_requests(events):
    """HTTP requests, logical reads (a paginated LIST counts once: pages carry `continue`), and
    the requests by verb and path."""
    logical, by = 0, collections.Counter()
    agents = collections.Counter()
    for e in events:
        url = urlsplit(e["requestURI"])
        query = parse_qs(url.query)
        if "continue" not in query:
            logical += 1
        by[(e["verb"], url.path)] += 1
        agents[e.get("userAgent", "").split(" ")[0]] += 1
    return {"http": len(events), "logical": logical, "by": by, "agents": agents}


MAXRSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")


def measure(cmd, audit, runs, stdout_path=None, env=None):
    """`runs` fresh runs under /usr/bin/time -v: wall (s), peak RSS (MB), audit requests."""
    out = []
    for _ in range(runs):
        start = audit.settle()
        sink = open(stdout_path, "w") if stdout_path else subprocess.DEVNULL
        t = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-v", *cmd], stdout=sink, stderr=subprocess.PIPE, text=True,
                              env=env)
        wall = time.perf_counter() - t
        if stdout_path:
            sink.close()
        m = MAXRSS.search(proc.stderr)
        if proc.returncode not in (0, 1) or not m:
            raise RuntimeError(f"{' '.join(cmd[:4])} exited {proc.returncode}: {proc.stderr[-2000:]}")
        end = audit.settle()
        out.append({"wall": wall, "rss": int(m.group(1)) / 1024, **summarize_requests(audit.events(start, end))})
    return out


def stats(runs):
    walls = [r["wall"] for r in runs]
    return {"best": min(walls), "median": statistics.median(walls), "rss": max(r["rss"] for r in runs),
            "http": runs[-1]["http"], "logical": runs[-1]["logical"], "by": runs[-1]["by"],
            "agents": runs[-1]["agents"]}


def tool_version(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "?"


def machine_facts(kubeconfig):
    mem = next((line.split()[1] for line in open("/proc/meminfo") if line.startswith("MemTotal")), "0")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    versions = dict(re.findall(r"^(\w+_VERSION)=(\S+)", (REPO / "scripts" / "versions.env").read_text(), re.M))
    server = json.loads(kubectl(kubeconfig, "version", "-o", "json").stdout).get("serverVersion", {})
    return [("nproc", str(os.cpu_count())), ("memory", f"{int(mem) / 1024 ** 2:.1f} GiB"), ("cpu", cpu),
            ("kernel", platform.release()), ("python", platform.python_version()),
            ("kubectl", tool_version("kubectl", "version", "--client").replace("Client Version: ", "")),
            ("kube-apiserver", server.get("gitVersion", "?")), ("etcd", versions.get("ETCD_VERSION", "?")),
            ("kwok", versions.get("KWOK_VERSION", "?")),
            ("kubectl-dynamo", __version__)]


# ------------------------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dgds", type=int, default=200)
    ap.add_argument("--pods", type=int, default=10000, help="pods in total; a multiple of --dgds")
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--namespaces", type=int, default=10)
    ap.add_argument("--small", type=int, default=50, help="DGDs of the first measurement (request count scaling)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--kubectl", help="kubectl binary of the baseline (default: see baseline_kubectl)")
    args = ap.parse_args()
    if args.pods % args.dgds:
        ap.error("--pods must be a multiple of --dgds (every DGD has the same number of pods)")
    if not 0 < args.small <= args.dgds or args.small < args.namespaces:
        ap.error("--small must be within 1..--dgds and cover every namespace")
    gpu_pods = sum(shape(i, args.pods // args.dgds)[2] * shape(i, args.pods // args.dgds)[3]
                   for i in range(args.dgds))
    if gpu_pods > args.nodes * GPUS_PER_NODE:
        ap.error(f"{gpu_pods} one-GPU pods do not fit on {args.nodes} x {GPUS_PER_NODE} GPUs")

    tmp = Path(tempfile.mkdtemp(prefix="doctor-scale-"))
    sb = tmp / "sandbox"
    try:
        run(args, tmp, sb)
    finally:
        subprocess.run(["bash", str(SANDBOX), "down", str(sb)], timeout=300)
        shutil.rmtree(tmp, ignore_errors=True)


def run(args, tmp, sb):
    timings = []
    (tmp / "audit-policy.yaml").write_text(AUDIT_POLICY)
    audit = Audit(tmp / "audit.log")
    env = {**os.environ, "SANDBOX_GPU_NODES": str(min(args.nodes, SANDBOX_NODES)),
           "SANDBOX_APISERVER_ARGS": f"--audit-policy-file={tmp / 'audit-policy.yaml'} --audit-log-path={audit.path} "
                                     "--audit-log-maxsize=0 --audit-log-mode=blocking --audit-log-format=json"}
    t = time.perf_counter()
    up = subprocess.run(["bash", str(SANDBOX), "up", str(sb)], env=env, capture_output=True, text=True, timeout=900)
    if up.returncode != 0:
        raise RuntimeError(f"sandbox up failed:\n{up.stderr[-3000:]}")
    timings.append((f"scripts/sandbox up ({min(args.nodes, SANDBOX_NODES)} nodes, audit log on)",
                    time.perf_counter() - t))
    admin = sb / "kubeconfig"
    bench = Path(subprocess.run(["bash", str(SANDBOX), "user", str(sb), BENCH_USER, "system:masters"],
                                capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])

    # Nodes: `scripts/sandbox up` with SANDBOX_GPU_NODES=1000 creates them (client-side apply, ~2 min)
    # but then fails: its readiness probe `kubectl wait node --all --timeout=2s` cannot visit 1,000
    # nodes in 2 s, so it times out after 60 s although kwok made them all Ready. Created here instead.
    t = time.perf_counter()
    if args.nodes > SANDBOX_NODES:
        create_parallel(admin, [node_doc(i) for i in range(SANDBOX_NODES, args.nodes)])
    created = time.perf_counter()
    wait_until("nodes", lambda: nodes_ready(admin, args.nodes), 600)
    timings.append((f"create {args.nodes - SANDBOX_NODES} nodes (POST, 2 in parallel)", created - t))
    timings.append((f"until kwok has all {args.nodes} nodes Ready", time.perf_counter() - created))

    t = time.perf_counter()
    world = w.World(Sandbox(sb, admin))
    world.ensure(["grove", "kai", "lws", "volcano", "dynamo"])
    world.apply(w.controllers("grove", "v0.1.0-alpha.15") + w.controllers("kai") + w.controllers("lws")
                + w.controllers("volcano") + w.kai_queues() + w.volcano_queues()
                + w.dynamo_operator(version=s.OPERATOR_VERSION, grove=True, kai=True))
    world.wait_available()
    timings.append(("CRDs, controller Deployments, queues, Dynamo operator (as test_doctor's world)",
                    time.perf_counter() - t))

    exe = str(Path(sys.executable).parent / "kubectl-dynamo")
    doctor_cmd = [exe, "doctor", "-A", "-o", "json", "--kubeconfig", str(bench)]
    placer = Placer(args.nodes)
    results = {}
    total = 0
    for phase, indices in (("small", range(0, args.small)), ("full", range(args.small, args.dgds))):
        if not indices:
            continue
        total += populate(admin, list(indices), args, placer, timings, f"{phase}")
        t = time.perf_counter()
        wait_until("pods", lambda: pods_running(admin, total), 1800)
        timings.append((f"{phase}: until kwok has all {total} pods Running", time.perf_counter() - t))
        crash_loop(admin, args)
        ndgds = indices[-1] + 1
        log(f"measuring doctor at {ndgds} DGDs / {total} pods")
        out = tmp / f"doctor-{ndgds}.json"
        results[("doctor", ndgds)] = stats(measure(doctor_cmd, audit, args.runs, stdout_path=out))
        report = json.loads(out.read_text())
        results[("findings", ndgds)] = collections.Counter(f["code"] for f in report["findings"])
        results[("deployments", ndgds)] = len(report["deployments"])
    kc = args.kubectl or baseline_kubectl(admin)
    facts_kubectl = tool_version(kc, "version", "--client").replace("Client Version: ", "") + f" ({kc})"
    script = "; ".join(f"{kc} --kubeconfig={bench} get {' '.join(k)} -o json >/dev/null" for k in KUBECTL_KINDS)
    log("measuring kubectl")
    kenv = {**os.environ, "KUBECACHEDIR": str(tmp / "kube-cache")}  # its discovery cache, not ~/.kube
    results["kubectl"] = stats(measure(["sh", "-c", script], audit, args.runs, env=kenv))
    facts = machine_facts(admin) + [("kubectl of the baseline", facts_kubectl)]
    text = render_report(args, results, timings, facts, total)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


def baseline_kubectl(kubeconfig):
    """kubectl itself: on this machine `kubectl` is a version dispatcher that execs a sibling
    `kubectl.1.<minor>` and first asks the server for /version, an extra process and request per
    call that are not kubectl's cost. Use that sibling directly when it exists."""
    path = os.path.realpath(shutil.which("kubectl") or "kubectl")
    minor = json.loads(kubectl(kubeconfig, "version", "-o", "json").stdout)["serverVersion"]["minor"].rstrip("+")
    direct = Path(path).with_name(f"kubectl.1.{minor}")
    return str(direct) if direct.exists() else path


def crash_loop(kubeconfig, args):
    """The `crash-loop` fault lives in pod status, which kwok owns: patched after kwok is done."""
    i = next(k for k, v in FAULTS.items() if v == "crash-loop")
    doc = make_dgd(i, args.namespaces, args.pods // args.dgds, FAULTS)
    name, ns = doc["metadata"]["name"], doc["metadata"]["namespace"]
    pod = kubectl(kubeconfig, "-n", ns, "get", "pods", "-l", f"{DGD_LABEL}={name}", "-o", "name").stdout.split()[-1]
    kubectl(kubeconfig, "-n", ns, "patch", pod, "--subresource=status", "--type=strategic", "-p", json.dumps(
        {"status": {"containerStatuses": [{"name": "main", "image": s.IMAGE[doc["spec"]["backendFramework"]],
                                           "imageID": "", "ready": False, "restartCount": 5,
                                           "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}}))


def render_report(args, results, timings, facts, total):
    full, small = results[("doctor", args.dgds)], results.get(("doctor", args.small))
    k = results["kubectl"]
    ratio_best, ratio_median = full["best"] / k["best"], full["median"] / k["median"]
    lines = [f"# doctor at scale: {args.dgds} DGDs, {total} pods, {args.nodes} nodes, {args.namespaces} namespaces",
             "", f"Reproduce: `.venv/bin/python benchmarks/doctor_scale.py --dgds {args.dgds} --pods {args.pods} "
             f"--nodes {args.nodes} --namespaces {args.namespaces} --small {args.small} --runs {args.runs}`", "",
             f"Pods: {args.pods} less the worker the group-incomplete fault removes. "
             f"Wall time: best and median of {args.runs} fresh processes. Peak RSS: `/usr/bin/time -v` "
             "(for kubectl: the largest of its ten processes). Requests: apiserver audit log of the benchmark's "
             "own user; \"reads\" counts a paginated LIST once (pages after the first carry `continue`).", "",
             "| command | DGDs | pods | best (s) | median (s) | peak RSS (MB) | HTTP requests | reads |",
             "|---|---|---|---|---|---|---|---|"]
    rows = [("`kubectl-dynamo doctor -A -o json`", args.dgds, full)]
    if small and args.small != args.dgds:
        rows.append(("`kubectl-dynamo doctor -A -o json`", args.small, small))
    rows.append(("`kubectl get <10 kinds> -A -o json`, sequential", args.dgds, k))
    for label, n, r in rows:
        pods = total if n == args.dgds else n * (args.pods // args.dgds)
        lines.append(f"| {label} | {n} | {pods} | {r['best']:.2f} | {r['median']:.2f} | {r['rss']:.0f} | "
                     f"{r['http']} | {r['logical']} |")
    same = small is not None and small["logical"] == full["logical"]
    lines += ["", "## Goals", "",
              "| goal | measured | met |", "|---|---|---|",
              f"| doctor ≤ 1.5 × kubectl time | {ratio_best:.2f}× (best), {ratio_median:.2f}× (median) | "
              f"{'yes' if ratio_median <= 1.5 else 'NO'} |",
              f"| doctor peak RSS ≤ 300 MB | {full['rss']:.0f} MB | {'yes' if full['rss'] <= 300 else 'NO'} |"]
    if small:
        lines.append(f"| requests independent of the number of DGDs | {small['logical']} reads at {args.small} DGDs, "
                     f"{full['logical']} at {args.dgds} (HTTP {small['http']} vs {full['http']}: pages of 500) | "
                     f"{'yes' if same else 'NO'} |")
    lines += ["", "## doctor's requests", "", "| verb | path | requests at " + str(args.small) + " DGDs | at "
              + str(args.dgds) + " |", "|---|---|---|---|"]
    keys = sorted(set(full["by"]) | set(small["by"] if small else {}))
    for verb, path in keys:
        lines.append(f"| {verb} | `{path}` | {small['by'].get((verb, path), 0) if small else '-'} | "
                     f"{full['by'].get((verb, path), 0)} |")
    lines += ["", "User agents seen: doctor " + ", ".join(f"{a} ({n})" for a, n in full["agents"].items())
              + "; kubectl " + ", ".join(f"{a} ({n})" for a, n in k["agents"].items()) + ".", "",
              f"Findings at {args.dgds} DGDs ({results[('deployments', args.dgds)]} deployments): "
              + ", ".join(f"{c} × {n}" for c, n in sorted(results[("findings", args.dgds)].items())), "",
              "## Setup (measured in the same run)", "", "| step | seconds |", "|---|---|"]
    lines += [f"| {what} | {sec:.1f} |" for what, sec in timings]
    lines += ["", "## Machine", "", "| | |", "|---|---|"] + [f"| {a} | {b} |" for a, b in facts]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
