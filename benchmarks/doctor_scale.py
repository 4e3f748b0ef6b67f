"""Benchmark: `kubectl-dynamo doctor -A -o json` at cluster scale against a real control plane,
paired with its floor (benchmarks/doctor_floor.py: the same requests, raw). Its smallest size runs in
the test suite (tests/integration/test_benchmarks.py).

    .venv/bin/python benchmarks/doctor_scale.py [--steps 2500,10000 --pods-per-dgd 50 --nodes 1000 --runs 3]

Exits 1 when the world's findings are not exactly the seeded faults' or a run's requests differ
from the warm-up doctor run's (the results are written either way).

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
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit

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
PARALLEL = 2  # connections that POST the bulk objects (--parallel)
BACKENDS = [("vllm", False), ("sglang", False), ("trtllm", True)]  # (backend, on LWS)
NODE_COUNTS = [5, 10, 20, 40]  # --group-sizes
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


def pcs_of(doc):
    """The PodCliqueSet name Grove's operator path gives the DGD (also its PodGang's prefix)."""
    return pcs_name_for_dgd(doc["metadata"]["name"], doc["spec"]["components"])


def objects_for(doc, placer, fault):
    """The DGD, what the operator and Grove / LWS create for it, and its pods (bound)."""
    explained = s.render(doc)
    name, ns = doc["metadata"]["name"], doc["metadata"]["namespace"]
    grove = explained["provider"] == "grove"
    comps = doc["spec"]["components"]
    pcs = pcs_of(doc)
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
                        spec.update({"hostname": pod_name, "subdomain": f"{pcs}-0"})  # Grove's pod DNS
                    elif comp["multinode"]:
                        lws = f"{name}-{cname}-0"
                        worker = 0 if role["name"] == "leader" else i + 1
                        labels.update({"leaderworkerset.sigs.k8s.io/name": lws,
                                       "leaderworkerset.sigs.k8s.io/group-index": str(group),
                                       "leaderworkerset.sigs.k8s.io/worker-index": str(worker),
                                       "role": role["name"]})
                        pod_name = f"{lws}-{group}" if worker == 0 else f"{lws}-{group}-{worker}"
                        spec.update({"hostname": pod_name, "subdomain": lws})  # LWS's Shared subdomain policy
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
    # the headless Service per subdomain (Grove / LWS) and the discovery ServiceAccount, Role and
    # RoleBinding the operator creates: the integration worlds' builders (tests/integration/scenarios.py)
    meta += s.headless_services([p for p in pods if p["spec"].get("subdomain")])
    for sa in sorted({x for x in sas if x}):
        meta += s.discovery_objects(ns, sa)
    inject(fault, pods)
    return meta, pods


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
           "LeaderWorkerSet": ("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", True),
           "Service": ("", "v1", "services", True), "ServiceAccount": ("", "v1", "serviceaccounts", True),
           "Role": ("rbac.authorization.k8s.io", "v1", "roles", True),
           "RoleBinding": ("rbac.authorization.k8s.io", "v1", "rolebindings", True)}


def create_parallel(kubeconfig, docs, parallel=None):
    """POST each object, `parallel` (<= 2 cores) connections at once. Not `kubectl create -f`:
    measured here at 8-10 objects/s (its per-object client work, not the server's ~15 ms), too slow
    for 10,000 pods; one POST per object is what kubectl does too."""
    from concurrent.futures import ThreadPoolExecutor

    from kubectl_dynamo.cluster.client import Cluster, Target, path_for

    parallel = parallel or PARALLEL

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
    meta, pods = [], []
    namespaces = set()
    for i in indices:
        doc = make_dgd(i, args.namespaces, args.pods_per_dgd, FAULTS)
        m, p = objects_for(doc, placer, FAULTS.get(i))
        namespaces.add(doc["metadata"]["namespace"])
        meta += m
        pods += p
    render = time.perf_counter() - t
    base = [w.namespace(ns) for ns in sorted(namespaces)]
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
    timings.append((f"{tag}: create {len(pods)} pods (POST, {PARALLEL} in parallel, "
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
        """The apiserver writes an event after the response (ResponseComplete), late under load: wait until
        the file has not grown for a second."""
        last, stable = -1, 0
        while stable < 10:
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
    logical, lists, by = 0, 0, collections.Counter()
    agents = collections.Counter()
    for e in events:
        url = urlsplit(e["requestURI"])
        query = parse_qs(url.query)
        if "continue" not in query:
            logical += 1
            lists += e["verb"] == "list"
        by[(e["verb"], url.path)] += 1
        agents[e.get("userAgent", "").split(" ")[0]] += 1
    return {"http": len(events), "logical": logical, "lists": lists, "by": by, "agents": agents}


MAXRSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")


def measure(cmd, audit, runs, stdout_path=None, env=None, keep_events=False):
    """`runs` fresh runs under /usr/bin/time -v: wall (s), peak RSS (MB), audit requests (and the
    audit events themselves with keep_events). Python may write its bytecode caches, as an installed
    package has them (PYTHONDONTWRITEBYTECODE would make every run compile our modules again)."""
    out = []
    env = {k: v for k, v in (env or os.environ).items() if k != "PYTHONDONTWRITEBYTECODE"}
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
        events = audit.events(start, end)
        out.append({"wall": wall, "rss": int(m.group(1)) / 1024, **summarize_requests(events),
                    **({"events": events} if keep_events else {})})
    return out


def stats(runs):
    walls = [r["wall"] for r in runs]
    return {"best": min(walls), "median": statistics.median(walls), "rss": max(r["rss"] for r in runs),
            "http": runs[-1]["http"], "logical": runs[-1]["logical"], "lists": runs[-1]["lists"],
            "by": runs[-1]["by"], "agents": dict(runs[-1]["agents"])}


def cluster_wide_lists(st):
    """LISTs in a run that are not namespaced (nodes and cluster-scoped kinds included)."""
    return sorted(path for (verb, path), _ in st["by"].items() if verb == "list" and "/namespaces/" not in path)


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
def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", default="2500,10000",
                    help="pod counts (comma-separated, increasing) at which to measure; the cluster grows to each")
    ap.add_argument("--pods-per-dgd", type=int, default=50)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--namespaces", type=int, default=10)
    ap.add_argument("--group-sizes", default=",".join(map(str, NODE_COUNTS)),
                    help="nodeCount of the multinode groups, cycled over the DGDs (at least 3: a fault needs 2 workers)")
    ap.add_argument("--runs", type=int, default=3, help="paired rounds (doctor, then the floor) per step")
    ap.add_argument("--doctor", action="append", metavar="LABEL=EXE",
                    help="a kubectl-dynamo to measure (repeatable: several builds in the same rounds); "
                         "default: this venv's")
    ap.add_argument("--kubectl-baseline", action="store_true",
                    help="also time `kubectl get` of the kinds doctor reads, at the last step")
    ap.add_argument("--kubectl", help="kubectl binary of the baseline (default: see baseline_kubectl)")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="build the cluster in DIR and leave it running")
    ap.add_argument("--reuse", type=Path, metavar="DIR", help="measure on the cluster --keep left in DIR")
    ap.add_argument("--shrink-to", type=int, metavar="PODS",
                    help="with --reuse: first delete, through the API, the DGDs a build to PODS pods had not yet "
                         "created and all their objects (the cluster is then as that step left it)")
    ap.add_argument("--parallel", type=int, default=PARALLEL, help="connections POSTing the bulk objects")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--docs", action="store_true",
                    help="then regenerate the doctor table of docs/benchmarks.md from benchmarks/results/*.json (cog)")
    ap.add_argument("--plot", type=Path, metavar="PNG", help="plot wall time and peak RSS against pods (matplotlib)")
    ap.add_argument("--with-steps", type=Path, action="append", default=[], metavar="JSON",
                    help="also plot the steps of an earlier run (its results .json)")
    args = ap.parse_args(argv)
    args.steps = [int(x) for x in args.steps.split(",")]
    NODE_COUNTS[:] = [int(x) for x in args.group_sizes.split(",")]
    if min(NODE_COUNTS) < 3:
        ap.error("--group-sizes must be at least 3")
    if any(n % args.pods_per_dgd for n in args.steps) or args.steps != sorted(set(args.steps)):
        ap.error("--steps must increase and be multiples of --pods-per-dgd")
    if args.steps[0] // args.pods_per_dgd < args.namespaces:
        ap.error("the first step must have a DGD in every namespace")
    last = args.steps[-1] // args.pods_per_dgd
    gpu_pods = sum(shape(i, args.pods_per_dgd)[2] * shape(i, args.pods_per_dgd)[3] for i in range(last))
    if gpu_pods > args.nodes * GPUS_PER_NODE:
        ap.error(f"{gpu_pods} one-GPU pods do not fit on {args.nodes} x {GPUS_PER_NODE} GPUs")
    exe = str(Path(sys.executable).parent / "kubectl-dynamo")
    args.doctor = dict(d.split("=", 1) for d in args.doctor) if args.doctor else {"doctor": exe}
    return args


def main():
    global PARALLEL
    args = parse_args()
    PARALLEL = args.parallel
    if args.reuse:
        state = json.loads((args.reuse / "state.json").read_text())
        args.namespaces, args.pods_per_dgd, args.nodes = state["namespaces"], state["pods_per_dgd"], state["nodes"]
        NODE_COUNTS[:] = state.get("group_sizes", NODE_COUNTS)
        ctx = Context(args, Audit(Path(state["audit"])), Path(state["admin"]), Path(state["bench"]), args.reuse)
        ctx.timings = [tuple(t) for t in state["timings"]]
        # counted, not taken from the state: the cluster may have grown since (an interrupted build)
        # (with the client: `kubectl get -o name` of 50,000 pods took 3 minutes and 7 GB here)
        from kubectl_dynamo.cluster.client import Cluster, Target, path_for

        cluster = Cluster(Target(kubeconfig=str(ctx.admin), request_timeout="300s"))
        if args.shrink_to:
            shrink(cluster, ctx, args.shrink_to)
        pods = sum(1 for _ in cluster.iter_list(path_for("", "v1", "pods"), label_selector=DGD_LABEL))
        dgds = len(cluster.list(path_for("nvidia.com", "v1beta1", "dynamographdeployments")))
        ctx.steps.append(measure_step(ctx, dgds, pods))
        finish(ctx)
        return
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="doctor-scale-"))
    tmp.mkdir(parents=True, exist_ok=True)
    sb = tmp / "sandbox"
    try:
        run(args, tmp, sb)
    finally:
        if not args.keep:
            subprocess.run(["bash", str(SANDBOX), "down", str(sb)], timeout=300)
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            log(f"the sandbox keeps running in {sb}: measure again with --reuse {tmp}; "
                f"stop it with scripts/sandbox down {sb}")


def shrink(cluster, ctx, pods):
    """Back to an earlier step of the same build: the build adds DGDs 0, 1, 2, ... in order, so the
    cluster at step N is the one at a later step without DGDs N / pods-per-dgd and up. Deleted by
    collection per namespace (label selectors; pods with grace period 0: no kubelet would confirm)."""
    from kubectl_dynamo.cluster.client import path_for

    args = ctx.args
    keep = pods // args.pods_per_dgd
    names = {d["metadata"]["name"] for d in cluster.list(path_for("nvidia.com", "v1beta1", "dynamographdeployments"))}
    gone = collections.defaultdict(list)  # namespace -> [(DGD name, PodCliqueSet name)]
    for i in range(keep, len(names)):  # the build names DGD i `<backend>-<i>`: 0 .. n-1, none missing
        doc = make_dgd(i, args.namespaces, args.pods_per_dgd, FAULTS)
        name, ns = doc["metadata"]["name"], doc["metadata"]["namespace"]
        if name not in names:
            raise SystemExit(f"DGD {ns}/{name} is missing: this cluster was not built by doctor_scale.py")
        gone[ns].append((name, pcs_of(doc)))
    if not gone:
        return
    t = time.perf_counter()
    for ns, dgds in sorted(gone.items()):
        by_dgd = f"{DGD_LABEL} in ({','.join(n for n, _ in dgds)})"
        by_pcs = f"app.kubernetes.io/part-of in ({','.join(p for _, p in dgds)})"
        for group, version, plural, selector in (
                ("", "v1", "pods", by_dgd), ("", "v1", "configmaps", by_dgd),
                ("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", by_dgd),
                ("scheduler.grove.io", "v1alpha1", "podgangs", by_pcs)):
            cluster.request("DELETE", path_for(group, version, plural, ns),
                            {"labelSelector": selector, "gracePeriodSeconds": 0})
        for name, _ in dgds:
            cluster.request("DELETE", path_for("nvidia.com", "v1beta1", "dynamographdeployments", ns) + f"/{name}")
    want = sum(len(v) for v in gone.values())
    ctx.timings.append((f"back to {pods} pods: delete {want} DGDs and their objects (DELETE collections)",
                        time.perf_counter() - t))
    log(f"deleted {want} DGDs and their objects; {keep} DGDs left")


class Context:
    def __init__(self, args, audit, admin, bench, tmp):
        self.args, self.audit, self.admin, self.bench, self.tmp = args, audit, admin, bench, tmp
        self.timings, self.steps = [], []
        self.kubectl_result = None


def run(args, tmp, sb):
    (tmp / "audit-policy.yaml").write_text(AUDIT_POLICY)
    audit = Audit(tmp / "audit.log")
    # kwok renews one Lease per node every few seconds: 5,000 nodes are ~500 writes/s, more than a
    # busy 2-core machine serves, so leases lapse, the node lifecycle controller marks nodes Unknown
    # and evicts their pods. A one-hour lease and a two-hour grace period keep every node Ready.
    env = {**os.environ, "SANDBOX_GPU_NODES": str(min(args.nodes, SANDBOX_NODES)),
           "SANDBOX_NODE_LEASE_SECONDS": "3600", "SANDBOX_KCM_ARGS": "--node-monitor-grace-period=2h",
           "SANDBOX_APISERVER_ARGS": f"--audit-policy-file={tmp / 'audit-policy.yaml'} --audit-log-path={audit.path} "
                                     "--audit-log-maxsize=0 --audit-log-mode=blocking --audit-log-format=json"}
    t = time.perf_counter()
    up = subprocess.run(["bash", str(SANDBOX), "up", str(sb)], env=env, capture_output=True, text=True, timeout=900)
    if up.returncode != 0:
        raise RuntimeError(f"sandbox up failed:\n{up.stderr[-3000:]}")
    admin = sb / "kubeconfig"
    bench = Path(subprocess.run(["bash", str(SANDBOX), "user", str(sb), BENCH_USER, "system:masters"],
                                capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
    ctx = Context(args, audit, admin, bench, tmp)
    ctx.timings.append((f"scripts/sandbox up ({min(args.nodes, SANDBOX_NODES)} nodes, audit log on)",
                        time.perf_counter() - t))

    # Nodes: `scripts/sandbox up` with SANDBOX_GPU_NODES=1000 creates them (client-side apply, ~2 min)
    # but then fails: its readiness probe `kubectl wait node --all --timeout=2s` cannot visit 1,000
    # nodes in 2 s, so it times out after 60 s although kwok made them all Ready. Created here instead.
    t = time.perf_counter()
    if args.nodes > SANDBOX_NODES:
        create_parallel(admin, [node_doc(i) for i in range(SANDBOX_NODES, args.nodes)])
    created = time.perf_counter()
    wait_until("nodes", lambda: nodes_ready(admin, args.nodes), 1200)
    ctx.timings.append((f"create {args.nodes - SANDBOX_NODES} nodes (POST, {PARALLEL} in parallel)", created - t))
    ctx.timings.append((f"until kwok has all {args.nodes} nodes Ready", time.perf_counter() - created))

    t = time.perf_counter()
    world = w.World(Sandbox(sb, admin))
    world.ensure(["grove", "kai", "lws", "volcano", "dynamo"])
    world.apply(w.controllers("grove", "v0.1.0-alpha.15") + w.controllers("kai") + w.controllers("lws")
                + w.controllers("volcano") + w.kai_queues() + w.volcano_queues()
                + w.dynamo_operator(version=s.OPERATOR_VERSION, grove=True, kai=True))
    world.wait_available()
    ctx.timings.append(("CRDs, controller Deployments, queues, Dynamo operator (as test_doctor's world)",
                        time.perf_counter() - t))

    placer = Placer(args.nodes)
    total, done = 0, 0
    for step in args.steps:
        ndgds = step // args.pods_per_dgd
        tag = f"to {step} pods"
        total += populate(admin, list(range(done, ndgds)), args, placer, ctx.timings, tag)
        done = ndgds
        t = time.perf_counter()
        wait_until("pods", lambda: pods_running(admin, total), 3600)
        ctx.timings.append((f"{tag}: until kwok has all {total} pods Running", time.perf_counter() - t))
        crash_loop(admin, args)
        if args.keep:  # measurable again later with --reuse, at the size reached so far
            (tmp / "state.json").write_text(json.dumps({
                "pods": total, "dgds": ndgds, "namespaces": args.namespaces, "pods_per_dgd": args.pods_per_dgd,
                "group_sizes": NODE_COUNTS,
                "nodes": args.nodes, "audit": str(audit.path), "admin": str(admin), "bench": str(bench),
                "timings": ctx.timings}))
        ctx.steps.append(measure_step(ctx, ndgds, total))
    if args.kubectl_baseline:
        kc = args.kubectl or baseline_kubectl(admin)
        ctx.kubectl_facts = tool_version(kc, "version", "--client").replace("Client Version: ", "") + f" ({kc})"
        script = "; ".join(f"{kc} --kubeconfig={bench} get {' '.join(k)} -o json >/dev/null" for k in KUBECTL_KINDS)
        log("measuring kubectl")
        kenv = {**os.environ, "KUBECACHEDIR": str(tmp / "kube-cache")}  # its discovery cache, not ~/.kube
        ctx.kubectl_result = stats(measure(["sh", "-c", script], audit, args.runs, env=kenv))
    finish(ctx)


def one_dgd(args, ndgds):
    """A DGD without an injected fault, for `doctor NAME -n NS` (goal: it costs one DGD)."""
    i = next(k for k in range(ndgds) if k not in FAULTS)
    doc = make_dgd(i, args.namespaces, args.pods_per_dgd, FAULTS)
    return doc["metadata"]["name"], doc["metadata"]["namespace"]


def first_pages(events):
    """The request URIs of a run's reads, first pages only (a page after the first carries `continue`)."""
    return [e["requestURI"] for e in events if "continue" not in parse_qs(urlsplit(e["requestURI"]).query)]


def request_list(events):
    """Every request of a run as (verb, path, query), sorted; a continue token's value is left out
    (it encodes the list's resourceVersion), its presence is kept."""
    out = []
    for e in events:
        url = urlsplit(e["requestURI"])
        q = sorted((k, "..." if k == "continue" else v) for k, v in parse_qsl(url.query, keep_blank_values=True))
        out.append((e["verb"], url.path, urlencode(q)))
    return sorted(out)


def list_diff(want, got):
    """What one request list has that the other lacks (a few of each), for the report."""
    a, b = collections.Counter(want), collections.Counter(got)
    return {"missing": [" ".join(x) for x in list((a - b).elements())[:5]],
            "extra": [" ".join(x) for x in list((b - a).elements())[:5]]}


# The finding each fault must give on its DGD, and nothing else: the codes the catalogue defines
# for what the fault does (tests/integration/test_doctor.py injects each alone and expects the same).
FAULT_CODES = {"wait-leader-configmap-missing": "wait-leader-configmap-missing", "worker-probes": "worker-probes",
               "group-incomplete": "group-incomplete", "image-mismatch": "image-mismatch",
               "rank-duplicate": "rank-duplicate", "kai-queue-missing": "kai-queue-missing",
               "crash-loop": "crash-loop"}


def expected_findings(args, ndgds):
    """(namespace, DGD, code) of every error or warning the seeded faults must give at this size."""
    out = set()
    for i, fault in FAULTS.items():
        if i < ndgds:
            doc = make_dgd(i, args.namespaces, args.pods_per_dgd, FAULTS)
            out.add((doc["metadata"]["namespace"], doc["metadata"]["name"], FAULT_CODES[fault]))
    return out


def found(report):
    """(namespace, DGD, code) of every error or warning doctor reported (a cluster's: namespace and DGD None).
    A finding may come without its `dgd` (image-mismatch, rank-duplicate, worker-probes, crash-loop do):
    its DGD is then the one its object is or whose name starts the object's (every pod and workload name
    here is `<DGD or its PodCliqueSet>-...`, and the PodCliqueSet is named as the DGD)."""
    names = {}
    for d in report["deployments"]:
        names.setdefault(d["namespace"], []).append(d["name"])
    out = set()
    for f in report["findings"]:
        if f["severity"] not in ("error", "warning"):
            continue
        dgd, obj = f.get("dgd") or {}, f.get("object") or {}
        if not dgd and obj.get("namespace"):  # the DGD itself, or a pod or workload named after it
            owner = max((n for n in names.get(obj["namespace"], [])
                         if obj.get("name") == n or (obj.get("name") or "").startswith(n + "-")), key=len, default=None)
            dgd = {"namespace": obj.get("namespace"), "name": owner} if owner else {}
        out.add((dgd.get("namespace"), dgd.get("name"), f["code"]))
    return out


def check_world(args, ndgds, report):
    """A healthy DGD gives no error or warning, each fault exactly its finding: (unexpected, missed)."""
    want, got = expected_findings(args, ndgds), found(report)
    return sorted(got - want, key=str), sorted(want - got, key=str)


FLOOR_MODES = ("sequential", "prefetched")


def measure_step(ctx, ndgds, total):
    """At this size: one warm-up round, then `--runs` rounds of each doctor -A and the floor (both
    modes; the faster is the round's floor), doctor first in even rounds and last in odd ones; every
    run's requests compared with the warm-up doctor's; then `doctor NAME -n NS`."""
    args, audit = ctx.args, ctx.audit
    log(f"measuring at {ndgds} DGDs / {total} pods")
    floor_requests = ctx.tmp / f"floor-requests-{total}.txt"
    floor_cmds = {mode: [sys.executable, str(REPO / "benchmarks" / "doctor_floor.py"), "--kubeconfig", str(ctx.bench),
                         "--requests", str(floor_requests), "--mode", mode] for mode in FLOOR_MODES}
    out = {label: ctx.tmp / f"doctor-{label}-{total}.json" for label in args.doctor}

    def doctor(label):
        return measure([args.doctor[label], "doctor", "-A", "-o", "json", "--kubeconfig", str(ctx.bench)], audit, 1,
                       stdout_path=out[label], keep_events=True)[0]

    # warm-up (not counted): records the requests the floor replays and the reference request list
    first = next(iter(args.doctor))
    warm = doctor(first)
    floor_requests.write_text("\n".join(first_pages(warm["events"])) + "\n")
    reference = request_list(warm["events"])
    report = json.loads(out[first].read_text())
    unexpected, missed = check_world(args, ndgds, report)
    for mode in FLOOR_MODES:
        measure(floor_cmds[mode], audit, 1)
    runs = {label: [] for label in args.doctor}
    floors = {mode: [] for mode in FLOOR_MODES}
    differ, pairs = [], []
    for r in range(args.runs):
        doctor_first = r % 2 == 0
        order = [("doctor", lb) for lb in args.doctor] + [("floor", m) for m in FLOOR_MODES]
        if not doctor_first:
            order.reverse()
        for who, what in order:
            sample = doctor(what) if who == "doctor" else measure(floor_cmds[what], audit, 1, keep_events=True)[0]
            (runs if who == "doctor" else floors)[what].append(sample)
            got = request_list(sample.pop("events"))
            if got != reference:
                differ.append({"round": r, "run": f"{who} {what}", **list_diff(reference, got)})
            if who == "doctor":
                u, m = check_world(args, ndgds, json.loads(out[what].read_text()))
                unexpected, missed = unexpected or u, missed or m
        floor = {m: floors[m][-1]["wall"] for m in FLOOR_MODES}
        pairs.append({"round": r, "first": "doctor" if doctor_first else "floor",
                      "doctor": {lb: runs[lb][-1]["wall"] for lb in args.doctor},
                      "doctor_rss": {lb: runs[lb][-1]["rss"] for lb in args.doctor},
                      "floor": floor, "floor_best": min(floor.values()),
                      "ratio": {lb: runs[lb][-1]["wall"] / min(floor.values()) for lb in args.doctor}})
    if differ:
        log(f"WARNING: requests differ from the warm-up doctor run's: {differ[:3]}")
    if unexpected or missed:
        log(f"WARNING: the world's findings are not the seeded faults': unexpected {unexpected[:10]}, "
            f"missed {missed[:10]}")
    name, ns = one_dgd(args, ndgds)
    single = {label: stats(measure([exe, "doctor", name, "-n", ns, "-o", "json", "--kubeconfig", str(ctx.bench)],
                                   audit, args.runs, keep_events=True))
              for label, exe in args.doctor.items()}
    floor_runs = [{**f, "wall": min(f["wall"], g["wall"])} for f, g in zip(*floors.values())]
    step = {"dgds": ndgds, "pods": total, "same_requests": not differ, "requests_differ": differ,
            "requests": len(reference), "one_dgd": f"{ns}/{name}",
            "findings": dict(collections.Counter(f["code"] for f in report["findings"])),
            "expected_findings": sorted(list(x) for x in expected_findings(args, ndgds)),
            "unexpected_findings": [list(x) for x in unexpected], "missed_findings": [list(x) for x in missed],
            "deployments": len(report["deployments"]),
            "doctor": {label: stats(runs[label]) for label in args.doctor}, "floor": stats(floor_runs),
            "floor_modes": {m: stats(floors[m]) for m in FLOOR_MODES},
            "pairs": pairs,
            "ratio": {lb: statistics.median(p["ratio"][lb] for p in pairs) for lb in args.doctor},
            "ratio_spread": {lb: [min(p["ratio"][lb] for p in pairs), max(p["ratio"][lb] for p in pairs)]
                             for lb in args.doctor},
            "load": list(os.getloadavg()),
            "single": single}
    for label in args.doctor:
        lo, hi = step["ratio_spread"][label]
        log(f"{label} at {total} pods: median {step['doctor'][label]['median']:.2f} s, "
            f"{step['doctor'][label]['rss']:.0f} MB; floor {step['floor']['median']:.2f} s; "
            f"ratio {step['ratio'][label]:.2f} ({lo:.2f}-{hi:.2f}); one DGD {single[label]['median']:.2f} s")
    return step


def finish(ctx):
    args = ctx.args
    facts = machine_facts(ctx.admin) + [("load average at the end", " ".join(f"{x:.2f}" for x in os.getloadavg()))]
    if ctx.kubectl_result:
        facts.append(("kubectl of the baseline", ctx.kubectl_facts))
    text = render_report(args, ctx, facts)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    data = [{k: v for k, v in st.items() if k not in ("doctor", "floor", "single", "floor_modes")}
            | {"doctor": {lb: _plain(x) for lb, x in st["doctor"].items()}, "floor": _plain(st["floor"]),
               "floor_modes": {m: _plain(x) for m, x in st["floor_modes"].items()},
               "single": {lb: _plain(x) for lb, x in st["single"].items()}} for st in ctx.steps]
    args.out.with_suffix(".json").write_text(json.dumps({"commit": commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                                        "argv": sys.argv[1:], "machine": dict(facts),
                                                        "world": {"nodes": args.nodes, "namespaces": args.namespaces,
                                                                  "pods_per_dgd": args.pods_per_dgd,
                                                                  "group_sizes": NODE_COUNTS}, "steps": data,
                                                        "timings": ctx.timings}, indent=1) + "\n")
    if args.plot:
        earlier = [st for f in args.with_steps for st in json.loads(f.read_text())["steps"]]
        plot(data + earlier, args.plot)
    print(text)
    if args.docs:  # the table of docs/benchmarks.md is generated from the results files
        subprocess.run([str(Path(sys.executable).parent / "cog"), "-r", "-c", str(REPO / "docs" / "benchmarks.md")],
                       check=True)
    bad = [st["pods"] for st in ctx.steps if st["unexpected_findings"] or st["missed_findings"]
           or not st["same_requests"]]
    if bad:
        raise SystemExit(f"[doctor_scale] the world's findings or the requests were wrong at {bad} pods (see the report)")


def commit():
    """The checkout measured: its commit, and "+changes" when the work tree differs from it."""
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or "?"
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return head + ("+changes" if dirty else "")


def _plain(st):
    return {k: (v if k != "by" else {f"{verb} {path}": n for (verb, path), n in v.items()}) for k, v in st.items()}


def plot(steps, path):
    """Wall time and peak RSS against pods, doctor (each build) and the floor; a build appears at
    the steps that measured it (steps may come from several runs: --with-steps)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = sorted(steps, key=lambda st: st["pods"])
    fig, (wall, rss) = plt.subplots(1, 2, figsize=(10, 4))
    labels = sorted({lb for st in steps for lb in st["doctor"]})
    series = [(f"doctor -A ({lb})", [(st["pods"], st["doctor"][lb]) for st in steps if lb in st["doctor"]])
              for lb in labels]
    series.append(("floor (same requests, json.loads)", [(st["pods"], st["floor"]) for st in steps]))
    for label, points in series:
        wall.plot([x for x, _ in points], [v["median"] for _, v in points], marker="o", label=label)
        rss.plot([x for x, _ in points], [v["rss"] for _, v in points], marker="o", label=label)
    wall.set(xlabel="pods", ylabel="wall time, median (s)", title="time")
    rss.set(xlabel="pods", ylabel="peak RSS (MB)", title="memory")
    rss.axhline(150, color="grey", linestyle="--", linewidth=1, label="goal 150 MB")
    for ax in (wall, rss):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


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
    doc = make_dgd(i, args.namespaces, args.pods_per_dgd, FAULTS)
    name, ns = doc["metadata"]["name"], doc["metadata"]["namespace"]
    pod = kubectl(kubeconfig, "-n", ns, "get", "pods", "-l", f"{DGD_LABEL}={name}", "-o", "name").stdout.split()[-1]
    kubectl(kubeconfig, "-n", ns, "patch", pod, "--subresource=status", "--type=strategic", "-p", json.dumps(
        {"status": {"containerStatuses": [{"name": "main", "image": s.IMAGE[doc["spec"]["backendFramework"]],
                                           "imageID": "", "ready": False, "restartCount": 5,
                                           "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}}))


def render_report(args, ctx, facts):
    steps = ctx.steps
    last = steps[-1]
    labels = list(last["doctor"])
    lines = [f"# doctor at scale: up to {last['dgds']} DGDs, {last['pods']} pods, {args.nodes} nodes, "
             f"{args.namespaces} namespaces", "",
             f"Reproduce: `.venv/bin/python benchmarks/doctor_scale.py {' '.join(sys.argv[1:])}`"
             + (" on the cluster a build with `--keep` left" if args.reuse else ""), "",
             f"Commit {commit()}; {args.pods_per_dgd} pods per DGD (one worker fewer in the group-incomplete fault), "
             f"groups of {'/'.join(map(str, NODE_COUNTS))} nodes. Wall time: best and median of {args.runs} fresh "
             "processes after one warm-up round; each round runs doctor and the floor "
             "(`benchmarks/doctor_floor.py`: doctor's own requests, recorded from the audit log of the warm-up run, "
             "fetched raw and `json.loads`-ed, nothing kept, once one page after the other and once pipelined; the "
             "faster is the round's floor), doctor first in even rounds and last in odd ones. The ratio is the median "
             "over rounds of doctor ÷ that round's floor, with its spread (min–max); every pair is in the .json. "
             "Peak RSS: `/usr/bin/time -v`. Requests: apiserver audit log of the benchmark's own user, every run's "
             "full list (verb, path, query) compared with the warm-up run's; \"reads\" counts a paginated LIST once.",
             "",
             "| pods | DGDs | command | best (s) | median (s) | peak RSS (MB) | HTTP requests | reads | ÷ floor |",
             "|---|---|---|---|---|---|---|---|---|"]
    for st in steps:
        for lb in labels:
            d = st["doctor"][lb]
            lines.append(f"| {st['pods']} | {st['dgds']} | `doctor -A -o json` ({lb}) | {d['best']:.2f} | "
                         f"{d['median']:.2f} | {d['rss']:.0f} | {d['http']} | {d['logical']} | "
                         f"{st['ratio'][lb]:.2f}× ({st['ratio_spread'][lb][0]:.2f}–{st['ratio_spread'][lb][1]:.2f}) |")
        f = st["floor"]
        lines.append(f"| {st['pods']} | {st['dgds']} | floor (faster mode of the round)"
                     f"{'' if st['same_requests'] else ' (REQUESTS DIFFER)'} | "
                     f"{f['best']:.2f} | {f['median']:.2f} | {f['rss']:.0f} | {f['http']} | {f['logical']} | 1 |")
        for m, f in st["floor_modes"].items():
            lines.append(f"| {st['pods']} | {st['dgds']} | floor, {m} | {f['best']:.2f} | {f['median']:.2f} | "
                         f"{f['rss']:.0f} | {f['http']} | {f['logical']} | |")
        for lb in labels:
            o = st["single"][lb]
            lines.append(f"| {st['pods']} | {st['dgds']} | `doctor {st['one_dgd'].split('/')[1]} -n "
                         f"{st['one_dgd'].split('/')[0]} -o json` ({lb}) | {o['best']:.2f} | {o['median']:.2f} | "
                         f"{o['rss']:.0f} | {o['http']} | {o['logical']} | |")
    if ctx.kubectl_result:
        k = ctx.kubectl_result
        lines.append(f"| {last['pods']} | {last['dgds']} | `kubectl get <{len(KUBECTL_KINDS)} kinds> -A -o json`, "
                     f"sequential | {k['best']:.2f} | {k['median']:.2f} | {k['rss']:.0f} | {k['http']} | "
                     f"{k['logical']} | |")
    lines += ["", "## Every pair", "", "| pods | round | first | "
              + " | ".join(f"doctor ({lb}) s" for lb in labels) + " | floor sequential s | floor prefetched s | "
              + " | ".join(f"÷ floor ({lb})" for lb in labels) + " |", "|---" * (5 + 2 * len(labels)) + "|"]
    for st in steps:
        for p in st["pairs"]:
            lines.append(f"| {st['pods']} | {p['round']} | {p['first']} | "
                         + " | ".join(f"{p['doctor'][lb]:.2f}" for lb in labels)
                         + f" | {p['floor']['sequential']:.2f} | {p['floor']['prefetched']:.2f} | "
                         + " | ".join(f"{p['ratio'][lb]:.2f}" for lb in labels) + " |")
    lines += ["", "## The world", "", "| pods | DGDs | errors and warnings the seeded faults must give | unexpected | "
              "missed | load average (1, 5, 15 min) |", "|---|---|---|---|---|---|"]
    for st in steps:
        lines.append(f"| {st['pods']} | {st['dgds']} | {len(st['expected_findings'])} | "
                     f"{', '.join('/'.join(map(str, x)) for x in st['unexpected_findings']) or 'none'} | "
                     f"{', '.join('/'.join(map(str, x)) for x in st['missed_findings']) or 'none'} | "
                     f"{' '.join(f'{x:.2f}' for x in st['load'])} |")
    lists = {st["pods"]: st["doctor"][labels[0]]["lists"] for st in steps}
    lines += ["", "## Goals (the first build measured)", "", "| goal | measured | met |", "|---|---|---|"]
    d, lb = last["doctor"][labels[0]], labels[0]
    for st in steps:
        lines.append(f"| doctor ≤ 1.0 × the floor at {st['pods']} pods (median of pairs) | {st['ratio'][lb]:.2f}× "
                     f"({st['ratio_spread'][lb][0]:.2f}–{st['ratio_spread'][lb][1]:.2f}) | "
                     f"{'yes' if st['ratio'][lb] <= 1.0 else 'NO'} |")
    lines.append(f"| peak RSS ≤ 150 MB at {last['pods']} pods | {d['rss']:.0f} MB | {'yes' if d['rss'] <= 150 else 'NO'} |")
    lines.append(f"| LISTs independent of the number of DGDs (pods: LISTs) | {lists} | "
                 f"{'yes' if len(set(lists.values())) == 1 else 'NO'} |")
    o = last["single"][lb]
    wide = cluster_wide_lists(o)
    lines.append(f"| `doctor NAME -n NS` costs one DGD | {o['median']:.2f} s, {o['rss']:.0f} MB, {o['http']} requests; "
                 f"cluster-wide LISTs: {', '.join(f'`{x}`' for x in wide) or 'none'} | see the note |")
    lines += ["", f"## Requests at {last['pods']} pods ({lb})", "",
              "| verb | path | `doctor -A` | `doctor NAME -n NS` |", "|---|---|---|---|"]
    for verb, path in sorted(set(d["by"]) | set(o["by"])):
        lines.append(f"| {verb} | `{path}` | {d['by'].get((verb, path), 0)} | {o['by'].get((verb, path), 0)} |")
    lines += ["", f"Findings at {last['dgds']} DGDs ({last['deployments']} deployments): "
              + ", ".join(f"{c} × {n}" for c, n in sorted(last["findings"].items())), "",
              "## Setup (measured in the same run)", "", "| step | seconds |", "|---|---|"]
    lines += [f"| {what} | {sec:.1f} |" for what, sec in ctx.timings]
    lines += ["", "## Machine", "", "| | |", "|---|---|"] + [f"| {a} | {b} |" for a, b in facts]
    lines += ["", "Builds measured: " + ", ".join(f"{lb} = `{exe}`" for lb, exe in args.doctor.items())]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
