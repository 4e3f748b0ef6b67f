"""`kubectl dynamo explain dgd`: what the Dynamo operator renders for every component and role.

Pure: no cluster access; the caller passes (or lets us assume) the operator version, gates and
KAI queues. See ``explain_dgd`` for the public JSON contract.

VERSION_DIFFERENCES lists every version switch modelled here. "operator" is the operator binary
version (``operator_version``), "origin" the DGD's immutable ``nvidia.com/dynamo-operator-origin-version``.
"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple, cast

from kubectl_dynamo.operator import api, defaults, gms, goencode, overrides, versions, vllm, workerhash
from kubectl_dynamo.operator import selection as sel_mod
from kubectl_dynamo.operator import webhook as validate
from kubectl_dynamo.operator.components import node_count
from kubectl_dynamo.operator.context import (
    LEADER,
    MAIN,
    MPI_SSH_SECRET_DEFAULT,
    WORKER,
    Decision,
    RenderError,
    RoleContext,
)
from kubectl_dynamo.operator.deployer import MultinodeDeployer
from kubectl_dynamo.operator.flags import component_backend_framework, resolve_gpu_count
from kubectl_dynamo.operator.grove import GroveDeployer, apply_scheduler
from kubectl_dynamo.operator.lws import LWSDeployer
from kubectl_dynamo.operator.podspec import generate_pod_spec, main_container_of, merge_envs

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import ExplainedDgd

VERSION_DIFFERENCES = [
    # (behaviour, gate, source)
    ("vLLM multinode default executor: mp instead of Ray", "origin >= 1.0.0", "[S]"),
    ("LWS leader $(LWS_LEADER_ADDRESS), rank without shell (old: \"$LWS_LEADER_ADDRESS\", shell)", "operator >= 1.1.0",
     "[S]/[T]; cut-off chosen, see lws.py"),
    ("nvidia.com/workload-provider annotation pins the provider", "operator >= 1.5.0", "[S]"),
    ("vLLM flag parsing accepts -tp/-pp/-dp, underscores, --flag=value", "operator >= 1.6.0", "[NEWER]"),
    ("DYNAMO_RANK / DYNAMO_LEADER_ADDRESS env; mp and SGLang flags use them", "operator >= 1.6.0 and origin >= 1.6.0",
     "[DOCS-ONLY]"),
    ("components[].roles[].podTemplate (authored launch kept)", "operator >= 1.6.0", "[DOCS-ONLY]"),
]

def _is_stored(metadata: dict) -> bool:
    """An object the API server already holds (what ``get -o yaml`` exports) rather than one to create."""
    return any(metadata.get(k) for k in ("uid", "resourceVersion", "creationTimestamp"))


def _selection(doc_annotations: Dict[str, str], gates, orchestrator, kai_queues, multinode: bool, operator_version: str,
               stored: bool = True):
    """``stored``: the provider annotation only counts on an existing DGD -- on CREATE the defaulting
    webhook derives the provider afresh, "ignoring the controller-owned annotation"
    (ai-dynamo/dynamo@2a6da14c internal/webhook/defaulting/dynamographdeployment_handler.go
    ``defaultWorkloadProvider``)."""
    gates = gates if gates is not None else sel_mod.assumed_gates(orchestrator, doc_annotations)
    chosen = sel_mod.select(gates, doc_annotations, kai_queues=kai_queues, multinode=multinode)
    pinned = doc_annotations.get(api.ANN_WORKLOAD_PROVIDER) if stored else None
    if not versions.at_least(operator_version, api.PROVIDER_ANNOTATION_SINCE) or pinned not in ("grove", "component"):
        return chosen
    # An existing DGD keeps the provider it was created with.
    if pinned == "component" and chosen.provider == "grove":
        return sel_mod.select(gates, {**doc_annotations, api.ANN_ENABLE_GROVE: "false"},
                              kai_queues=kai_queues, multinode=multinode)
    if pinned == "grove" and chosen.provider != "grove":
        if gates.grove:
            unpinned = {k: v for k, v in doc_annotations.items() if k != api.ANN_ENABLE_GROVE}
            return sel_mod.select(gates, unpinned, kai_queues=kai_queues, multinode=multinode)
        return sel_mod.Selection("grove", "grove", None, None, sel_mod.ERR_PROVIDER_UNAVAILABLE,
                                 'selected workload provider "grove" is unavailable because Grove is disabled')
    return chosen


def _decoded(dgd: dict) -> dict:
    """The DGD's spec as the operator's Go types hold it (``goencode.decoded``): every component
    (api/v1beta1 DynamoComponentDeploymentSharedSpec, ai-dynamo/dynamo@2a6da14c), each 1.6 role's
    podTemplate (corev1.PodTemplateSpec) and the graph env ([]corev1.EnvVar)."""
    spec = dgd.get("spec")
    if not isinstance(spec, dict):
        return dgd
    spec = dict(spec)
    components = []
    for component in spec.get("components") or []:
        if not isinstance(component, dict):
            components.append(component)
            continue
        out = goencode.decoded(component, "dynamo.DynamoComponentDeploymentSharedSpec")
        if component.get("roles") is not None:
            out["roles"] = [
                {**r, "podTemplate": goencode.decoded(r["podTemplate"], "core.PodTemplateSpec")}
                if isinstance(r, dict) and isinstance(r.get("podTemplate"), dict) else r
                for r in component["roles"]]
        components.append(out)
    if spec.get("components") is not None:
        spec["components"] = components
    if spec.get("env") is not None:
        spec["env"] = goencode.decoded(spec["env"], "[]core.EnvVar")
    return {**dgd, "spec": spec}


def _lws_main_problem(pod_spec: dict) -> Optional[str]:
    """``checkMainContainer``: the DCD controller refuses a LeaderWorkerSet pod whose main container
    has no command or no args (ai-dynamo/dynamo@2a6da14c
    internal/controller/dynamocomponentdeployment_controller.go)."""
    main = main_container_of({"spec": pod_spec})
    if main is None:
        return "main container not found in pod spec"
    if not main.get("command"):
        return "container Command cannot be nil for LWS pod"
    if not main.get("args"):
        return "container Args cannot be empty for LWS pod"
    return None


def _pod_annotations(pod_template: Optional[dict], dgd_annotations: Dict[str, str],
                     spec_annotations: Optional[Dict[str, str]], grove: bool, v16: bool = False) -> Dict[str, str]:
    """The pod-template annotations ``GenerateBasePodSpec`` reads (ai-dynamo/dynamo@2a6da14c
    internal/dynamo/graph.go): the component's, then the DGD's propagated metadata annotations
    (``propagateDGDAnnotations``, component wins), then ``spec.annotations`` as a low-priority base
    (``propagateDGDSpecMetadata``). On Grove, ``GenerateGrovePodCliqueSet`` first forces the
    discovery backend to the DGD's (metadata annotation, else the operator's default), so neither
    a component's nor ``spec.annotations``' value counts there.

    1.6 (tu-kim/dynamo@3f3d3dfa graph.go ``applyDGDTemplateDefaults``) merges ``spec.annotations``
    first and propagates the metadata ones after, so ``spec.annotations`` win over them, and the
    origin version is always the DGD's."""
    ann = dict(((pod_template or {}).get("metadata") or {}).get("annotations") or {})
    if grove:  # GenerateGrovePodCliqueSet propagates the DGD's first, then forces the backend
        for key in api.PROPAGATED_ANNOTATIONS:
            if key in dgd_annotations and key not in ann:
                ann[key] = dgd_annotations[key]
        ann[api.ANN_DISCOVERY_BACKEND] = dgd_annotations.get(api.ANN_DISCOVERY_BACKEND) or api.DISCOVERY_BACKEND_DEFAULT
    elif v16:
        for key, value in (spec_annotations or {}).items():
            ann.setdefault(key, value)
    for key in api.PROPAGATED_ANNOTATIONS:
        if key in dgd_annotations and (key not in ann or (v16 and key == api.ANN_ORIGIN_VERSION)):
            ann[key] = dgd_annotations[key]
    for key, value in (spec_annotations or {}).items():
        ann.setdefault(key, value)
    return ann


def _role_templates(component: dict, operator_version: str) -> Optional[Dict[str, dict]]:
    """{role name: podTemplate} when 1.6 role templates are in use, else None."""
    if not versions.at_least(operator_version, api.ROLE_TEMPLATES_SINCE):
        return None
    roles = component.get("roles") or []
    templates = {r.get("name"): r.get("podTemplate") for r in roles if r.get("podTemplate")}
    return templates or None


def _render_role(component: dict, template: Optional[dict], framework: str, ctx: RoleContext, dgd_name: str,
                 namespace: str, spec: dict, topology_env: Optional[List[dict]], findings: List[dict]):
    """One role's pod; where the operator refuses, a finding and the pod without the offending parts."""
    try:
        return generate_pod_spec(component=component, pod_template=template, framework=framework, ctx=ctx,
                                 dgd_name=dgd_name, namespace=namespace, graph_env=spec.get("env"), kv_transfer_policy=(spec.get("experimental") or {}).get("kvTransferPolicy"),
                                 topology_env=topology_env)
    except RenderError as exc:
        cache = "compilation" in str(exc).lower()
        code = "compilation-cache-invalid" if cache else "render-error"
        findings.append(validate.render_error(
            code, component.get("name") or "",
            f"{exc} (the operator fails to render this component).",
            "Set compilationCache.pvcName, and compilationCache.mountPath for sglang/trtllm (only vLLM has a "
            "default, /root/.cache/vllm); the mount must be writable and its path unused."
            if cache else "Fix the field the message names (the operator renders nothing for this component).",
        ))
    stripped = {k: v for k, v in component.items() if k not in ("compilationCache", "experimental", "frontendSidecar")}
    try:
        return generate_pod_spec(component=stripped, pod_template=template, framework=framework, ctx=ctx,
                                 dgd_name=dgd_name, namespace=namespace, graph_env=spec.get("env"), kv_transfer_policy=(spec.get("experimental") or {}).get("kvTransferPolicy"),
                                 topology_env=topology_env)
    except RenderError:
        return {}, Decision("none", "the operator fails to render this component")


def _render_component(
    component: dict, *, dgd_name: str, namespace: str, spec: dict, dgd_annotations: Dict[str, str],
    deployer: MultinodeDeployer, operator_version: str, origin: Optional[str], scheduler: Optional[str],
    ssh_secret_name: str, worker_hash: str, dgd_framework: Optional[str], changes: bool = False,
) -> Tuple[dict, List[dict]]:
    name = component.get("name") or ""
    ctype = component.get("type") or ""
    nodes = node_count(component)
    multinode = nodes > 1
    replicas = component.get("replicas")
    replicas = 1 if replicas is None else replicas
    findings: List[dict] = []
    findings += validate.node_count(name, component)

    role_templates = _role_templates(component, operator_version) if multinode else None
    role_names = [LEADER, WORKER] if multinode else [MAIN]
    templates = {
        r: (role_templates.get(r) if role_templates else component.get("podTemplate")) for r in role_names
    }
    if ctype == "planner" and deployer.name != "grove":
        # The generated DCD's template names the planner's service account, over the user's
        # (ai-dynamo/dynamo@2a6da14c internal/dynamo/graph.go GenerateDynamoComponentsDeployments).
        for r, t in list(templates.items()):
            t = copy.deepcopy(t) or {}
            t.setdefault("spec", {})["serviceAccountName"] = api.PLANNER_SERVICE_ACCOUNT
            templates[r] = t
    first_main = main_container_of(templates[role_names[0]]) or {}
    # Off Grove each DCD carries the DGD-wide framework (spec.backendFramework, else the one detected
    # in the worker components) and the DCD controller renders with it as the explicit one
    # (ai-dynamo/dynamo@2a6da14c internal/dynamo/graph.go backendFrameworkForGeneratedDCDs,
    # GetBackendFrameworkFromDynamoComponent). The caller computes that DGD-wide value once.
    explicit = spec.get("backendFramework")
    if deployer.name != "grove":
        explicit = dgd_framework or explicit
    framework, err = component_backend_framework(
        {**component, "podTemplate": templates[role_names[0]]} if not role_templates else component, explicit,
        operator_version)
    if err:
        code = "backend-framework-mismatch" if "mismatch" in err else "backend-framework-ambiguous"
        findings.append(validate.render_error(
            code, name, f"{err} (the operator fails to render this component).",
            "Remove spec.backendFramework or make it match the python -m dynamo.<backend> module in the command.",
        ))
        detected = [fw for fw in ("vllm", "sglang", "trtllm") if f"dynamo.{fw}" in " ".join(
            (first_main.get("command") or []) + (first_main.get("args") or []))]
        framework = detected[0] if detected else api.NOOP
    if framework == "trtllm" and role_templates:
        findings += validate.trtllm_worker_sshd(name, role_templates.get(WORKER))

    text = json.dumps(component)
    findings += validate.topology_refs_unavailable(name, text, origin, operator_version)
    findings += validate.args_without_command(name, first_main)

    inter_pod_gms = deployer.name == "grove" and gms.is_inter_pod(component)
    if inter_pod_gms:
        plan = gms.roles(nodes, component)
    else:
        # A forced single-node scaling group is one single-pod clique; the group carries the replicas
        # (ai-dynamo/dynamo@2a6da14c internal/dynamo/graph.go expandSingleNodeScalingGroupRoles).
        forced = deployer.name == "grove" and bool(((component.get("experimental") or {}).get("grove") or {}).get(
            "forceScalingGroup"))
        main_replicas = 1 if forced else replicas
        plan = [(r, r, main_replicas if r == MAIN else (1 if r == LEADER else nodes - 1), 0) for r in role_names]

    roles_out: List[dict] = []
    gpus_by_role: Dict[str, int] = {}
    decision: Optional[Decision] = None
    for role_name, kind, role_replicas, rank in plan:
        role = MAIN if kind == "gms" else kind
        # A rank's weight server takes that rank's role template: the leader's for rank 0, the
        # worker's after (tu-kim/dynamo@3f3d3dfa internal/dynamo/graph.go EffectiveComponentForRole).
        gms_role = (LEADER if rank == 0 else WORKER) if multinode else MAIN
        template = templates[gms_role if role_templates and kind == "gms" else (role if role in templates else role_names[0])]
        main = main_container_of(template) or {}
        gpus, gpu_problem = resolve_gpu_count(main.get("resources"))
        gpus_by_role.setdefault(role, gpus)
        if gpu_problem and role_name == plan[0][0]:
            findings.append(validate.finding("gpu-count-invalid", validate.ERROR, name, gpu_problem,
                                             "Use a whole number of GPUs (e.g. nvidia.com/gpu: \"4\")."))
        annotations = _pod_annotations(template, dgd_annotations, spec.get("annotations"), deployer.name == "grove",
                                       versions.at_least(operator_version, api.ROLE_TEMPLATES_SINCE))
        role_deployer = deployer
        if inter_pod_gms and multinode and kind != "gms":
            role_deployer = GroveDeployer(portable=deployer.portable, gms_rank=rank)
        ctx = RoleContext(
            role=role, nodes=1 if kind == "gms" else nodes, service=name, deployer=role_deployer, gpus=gpus,
            annotations=annotations, parent_dgd=dgd_name, operator_version=operator_version,
            role_templates=bool(role_templates), ssh_secret_name=ssh_secret_name, worker_hash=worker_hash,
            inter_pod_gms=gms.is_inter_pod(component), inter_pod_failover=gms.is_inter_pod_failover(component),
        )
        topology_env = role_deployer.topology_env(name) if (multinode and deployer.portable and kind != "gms") else None
        role_findings: List[dict] = []
        pod_spec, role_decision = _render_role(component, template, framework, ctx, dgd_name, namespace, spec,
                                               topology_env, role_findings)
        # A render error on any role is the component's (the operator renders nothing for it); once.
        findings += [f for f in role_findings if f["message"] not in {g["message"] for g in findings}]
        if not pod_spec.get("containers"):
            pass  # the operator renders nothing for this role (a render error above)
        elif kind == "gms":
            pod_spec = gms.weight_server(pod_spec, rank, gpus)
        elif inter_pod_gms:
            gms.augment_engine(pod_spec, rank, gms.is_inter_pod_failover(component))
        if deployer.name == "grove":
            apply_scheduler(pod_spec, scheduler)
        if decision is None or (kind != "gms" and decision.mode == "single-node" and multinode):
            decision = role_decision
        roles_out.append({"name": role_name, "replicas": role_replicas, "podSpec": pod_spec})
        if changes:
            from kubectl_dynamo.operator.changes import role_changes

            authored = copy.deepcopy(template) or {}
            if spec.get("env"):  # DGD-level env is the user's too (it sits under the component's)
                authored_main = main_container_of(authored)
                if authored_main is not None:
                    authored_main["env"] = merge_envs(spec["env"], authored_main.get("env") or [])
            roles_out[-1]["changes"] = role_changes(authored, pod_spec)

        if role_name == plan[0][0] and not role_templates and kind != "gms":
            before = main_container_of(template) or {}
            tokens = [t for a in before.get("args") or [] for t in a.split()]
            parsed = vllm.launch_tokens(before, operator_version) if framework == "vllm" else tokens
            if framework == "vllm":
                findings += validate.vllm_flag_forms(name, tokens, operator_version)
            findings += validate.parallelism(name, framework, role_decision, parsed, gpus, nodes)
            findings += validate.no_gpu(name, framework, nodes, gpus)
            if multinode and role_decision.mode in ("mp", "data-parallel", "sglang"):
                findings += validate.model_path_contains_framework(name, framework, before)

    if deployer.name == "lws" and multinode:
        problem = next(filter(None, (_lws_main_problem(r["podSpec"]) for r in roles_out if r["podSpec"])), None)
        if problem and not any(f["severity"] == validate.ERROR for f in findings):
            findings.append(validate.render_error(
                "render-error", name, f"{problem} (the operator fails to render this component).",
                "Give the main container a command and args: the LeaderWorkerSet renderer requires both."))
    assert decision is not None  # every plan has a role, and the first one sets it
    gpus_per_pod = gpus_by_role[role_names[0]] if role_names[0] in gpus_by_role else next(iter(gpus_by_role.values()))
    if multinode:
        total = (gpus_by_role[LEADER] + gpus_by_role[WORKER] * (nodes - 1)) * replicas
    else:
        total = gpus_per_pod * replicas
    return {
        "name": name,
        "type": ctype,
        "backend": framework,
        "multinode": multinode,
        "nodeCount": nodes,
        "gpusPerPod": gpus_per_pod,
        "totalGpus": total,
        "mode": decision.mode,
        "modeReason": decision.reason,
        "roles": roles_out,
    }, findings


def explain_dgd(
    doc: dict,
    *,
    orchestrator: Optional[str] = None,
    operator_version: Optional[str] = None,
    gates=None,
    kai_queues=None,
    ssh_secret_name: str = MPI_SSH_SECRET_DEFAULT,
    objects: bool = False,
    changes: bool = False,
) -> ExplainedDgd:
    """Render a DGD (v1beta1, or v1alpha1 via ``convert.to_v1beta1``) as the operator would.

    ``objects``: also ``objects``, the workload objects in Kubernetes shape (``objects.py``) and
    ``related``, the names of the component Services the operator creates and of the ConfigMaps,
    Secrets, service accounts and PVCs the pods refer to.
    ``changes``: each role also gets ``changes``, what the operator changed in the authored template.

    Returns ``{name, namespace, apiVersion, operatorVersion, originVersion, provider, orchestrator,
    scheduler, queue, components[{name, type, backend, multinode, nodeCount, gpusPerPod, totalGpus,
    mode, modeReason, roles[{name, replicas, podSpec}]}], findings[{code, severity, component,
    message, hint}]}``.
    """
    findings: List[dict] = []
    api_version = doc.get("apiVersion") or ""
    if api_version == api.V1ALPHA1:
        from kubectl_dynamo.operator.convert import to_v1beta1  # only v1alpha1 input pays for the converter's import

        try:
            converted, problems = to_v1beta1(defaults.apply(copy.deepcopy(doc), "v1alpha1"), force=True, stored=True)
            source = cast(dict, converted)  # the converter builds maps of its input's type: dicts here
        except ValueError as exc:
            source, problems = {"metadata": doc.get("metadata") or {}, "spec": {}}, [
                {"path": "apiVersion", "message": str(exc), "severity": validate.ERROR}]
        for p in problems or []:
            severity = p.get("severity")
            severity = severity if severity in (validate.ERROR, validate.WARNING) else validate.WARNING
            findings.append(validate.finding(
                "conversion-problem", severity, None, f"{p.get('path')}: {p.get('message')}",
                "Check the converted v1beta1 field; the operator's conversion webhook is authoritative.",
            ))
    else:
        source = copy.deepcopy(doc)
    # What the API server stores: storage-version (v1beta1) structural defaults; then what the
    # operator holds once it decoded the object into its Go types.
    source = _decoded(defaults.apply(source, "v1beta1"))

    metadata = source.get("metadata") or {}
    spec = source.get("spec") or {}
    name = metadata.get("name") or ""
    namespace = metadata.get("namespace")
    op_version = operator_version or versions.NEWEST
    annotations = dict(metadata.get("annotations") or {})
    origin = annotations.get(api.ANN_ORIGIN_VERSION, op_version)
    effective = dict(annotations)
    effective.setdefault(api.ANN_ORIGIN_VERSION, origin)  # the webhook stamps new DGDs

    components = spec.get("components") or []
    any_multinode = any(node_count(c) > 1 for c in components)
    chosen = _selection(annotations, gates, orchestrator, kai_queues, any_multinode, op_version, _is_stored(metadata))
    findings += validate.selection_findings(chosen) if any_multinode or chosen.provider == "grove" else []
    if any_multinode and not chosen.error:
        findings += validate.queue_annotation_ignored(
            chosen.orchestrator, chosen.scheduler, annotations, namespace=namespace, dgd=name,
            gets=validate.queue_of(chosen.orchestrator, chosen.scheduler, chosen.queue))

    portable = versions.at_least(op_version, api.TOPOLOGY_SINCE) and versions.at_least(origin, api.TOPOLOGY_SINCE)
    deployer: MultinodeDeployer = (
        GroveDeployer(portable=portable) if chosen.provider == "grove"
        else LWSDeployer(portable=portable, operator_version=op_version)
    )

    if chosen.provider == "grove":
        overrides.default_targets(spec, op_version)  # the defaulting webhook, before the worker hash sees the DCDs
    rendered = []
    stored = {"metadata": {**metadata, "namespace": namespace or "default", "annotations": effective},
              "spec": {**spec, "components": [{**c, "replicas": 1 if c.get("replicas") is None else c["replicas"]}
                                              for c in components]}}
    # backendFrameworkForGeneratedDCDs is DGD-wide: computed once, for the worker hash and for every
    # DCD off Grove (only where one of them needs it: a new hash, or a provider other than Grove).
    dgd_framework = (workerhash.dgd_backend_framework(spec, op_version)
                     if chosen.provider != "grove" or not workerhash.stored(effective) else None)
    worker_hash = workerhash.for_dgd(stored, op_version, backend=dgd_framework)
    conflict = (workerhash.dgd_backend_conflict(spec, op_version)
                if chosen.provider != "grove" or not workerhash.stored(effective) else None)
    if conflict:
        findings.append(validate.finding(
            "backend-framework-ambiguous", validate.ERROR, None, f"{conflict} (the operator renders nothing for this DGD).",
            "Set spec.backendFramework, or run one backend (python -m dynamo.<backend>) in every worker component."))
    for component in components:
        out, comp_findings = _render_component(
            component, dgd_name=name, namespace=namespace or "default", spec=spec, dgd_annotations=effective,
            deployer=deployer, operator_version=op_version, origin=origin, scheduler=chosen.scheduler,
            ssh_secret_name=ssh_secret_name, worker_hash=worker_hash, dgd_framework=dgd_framework, changes=changes,
        )
        rendered.append(out)
        findings += comp_findings

    extra: dict = {}
    if objects:
        from kubectl_dynamo.operator import objects as objects_mod

        extra["objects"] = ([objects_mod.pod_clique_set(stored, rendered, queue=chosen.queue, worker_hash=worker_hash)]
                            if chosen.provider == "grove" else
                            objects_mod.component_workloads(
                                stored, rendered, worker_hash=worker_hash,
                                v16=versions.at_least(op_version, api.ROLE_TEMPLATES_SINCE)))
        extra["related"] = objects_mod.related(extra["objects"], objects_mod.component_services(
            stored, grove=chosen.provider == "grove", worker_hash=worker_hash))
    return {
        "name": name,
        "namespace": namespace,
        "apiVersion": api_version,
        "operatorVersion": op_version,
        "originVersion": origin,
        "provider": chosen.provider,
        "orchestrator": chosen.orchestrator,
        "scheduler": chosen.scheduler,
        "queue": chosen.queue,
        "components": rendered,
        "findings": findings,
        **extra,
    }
