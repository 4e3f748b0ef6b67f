"""The operator's admission webhooks for a DGD on CREATE, offline: the mutating ``DGDDefaulter``
then the validating ``DynamoGraphDeploymentHandler.ValidateCreate``.

Ported from ai-dynamo/dynamo @2a6da14c, ``deploy/operator/internal/webhook/``:
``defaulting/dynamographdeployment_handler.go`` (provider annotation, replicas, minAvailable,
provider-override targets), ``validation/dynamographdeployment.go`` (object metadata, the spec,
topology, KV transfer policy, GPU power annotation), ``validation/shared_v1beta1.go`` (a
component: provider overrides, Grove-only fields, EPP, frontend sidecar, GMS, failover,
checkpoint, runtime version), ``validation/shared_helpers.go`` (runtime version from the image tag,
elastic EP), ``validation/*_v1alpha1.go`` (the fields and paths of a v1alpha1 request) and
``internal/provideroverride/registry.go``, ``internal/runtimeversion/runtimeversion.go``,
``internal/dynamo/graph.go`` (``PCSNameForDGD``, ``LongestPodCliqueNameForDGDComponent``).

``problems(plain, grove)`` takes the DGD after the API server's own checks (validation/schema.py),
the Grove gate (on: ``grove``), and returns ``[(path, message)]`` in the webhook's wording. Where
the webhook asks the cluster (a ClusterTopologyBinding) the answer is unknown offline: those are
``offline`` notes, not errors (the admission oracle, which has no cluster, refuses them).
"""

from __future__ import annotations

import copy
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from kubectl_dynamo.operator import api
from kubectl_dynamo.operator import grove as grove_names
from kubectl_dynamo.operator.api import FRONTEND_SIDECAR_CONTAINER
from kubectl_dynamo.operator.components import node_count
from kubectl_dynamo.operator.flags import is_gpu_resource_name, parse_quantity, resolve_gpu_count
from kubectl_dynamo.operator.gms import is_inter_pod
from kubectl_dynamo.operator.grove import longest_clique, pcs_name_for_dgd, uses_scaling_group
from kubectl_dynamo.operator.vllm import has_arg

Problem = Tuple[str, str]

GROVE_UPDATE_STRATEGY = "nvidia.com/grove-update-strategy"
GPU_POWER_LIMIT = "dynamo.nvidia.com/gpu-power-limit"
GROVE_API_VERSION = "grove.io/v1alpha1"
RUNTIME_VERSION_REQUIRED = "is required when the specified main container image has no parseable semantic-version tag"
ROLES = ("leader", "worker")  # the multinode role schema (1.6)
MULTINODE_TYPES = ("worker", "prefill", "decode")  # 1.6 supportsMultinodeComponentType
GROVE_ONLY = "is currently supported only for Grove-backed DynamoGraphDeployment components"
TOPOLOGY_OVERRIDE_CONFLICT = ("cannot be combined with spec.topologyConstraint or components[].topologyConstraint; use "
                              "either the typed topology API or provider-native Grove topology overrides")

# k8s.io/apimachinery/pkg/util/validation IsDNS1123Subdomain, its messages word for word
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS1123_SUBDOMAIN_TOO_LONG = "must be no more than 253 characters"
DNS1123_SUBDOMAIN_MESSAGE = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                             "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
                             "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
# runtimeversion.imageTagPattern: a semantic version, optionally with a v prefix
_IMAGE_TAG = re.compile(r"^[vV]?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
                        r"(?:-((?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*))?"
                        r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$")
# Masterminds semver v3 NewVersion (the lenient form: "1", "1.5", "v1.5.0-rc1")
_SEMVER = re.compile(r"^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
                     r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?$")


def _map(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list:
    return v if isinstance(v, list) else []


def _q(value: Any) -> str:
    """field.Error's rendering of a bad value (apimachinery ErrorBody): %q for a string (a named string
    type goes through JSON: the same text), %v for a number; an absent string is \"\"."""
    import json

    if value is None:
        return '""'
    return json.dumps(value) if isinstance(value, str) else str(value)


def image_version(image: str) -> bool:
    """runtimeversion.ParseImageVersion succeeds: the tag (after the last '/', before any digest) is semver."""
    ref = image.strip()
    ref = ref.split("@", 1)[0]
    slash, colon = ref.rfind("/"), ref.rfind(":")
    if colon <= slash:
        return False
    return _IMAGE_TAG.match(ref[colon + 1:].strip()) is not None


# -- the component's shape (api/v1beta1 dynamocomponentdeployment_types.go) ---------------------
# node count, UsesPCSG, clique and PodCliqueSet names: operator/components.py node_count and
# operator/grove.py (the same functions the PodCliqueSet is rendered with)
def _gms(c: dict) -> Optional[dict]:
    g = _map(c.get("experimental")).get("gpuMemoryService")
    return g if isinstance(g, dict) else None


def _mode(spec: Optional[dict]) -> str:
    return (spec or {}).get("mode") or "IntraPod"  # effectiveGMSMode


def _main(c: dict) -> Tuple[Optional[int], Optional[dict]]:
    for i, ctr in enumerate(_list(_map(_map(c.get("podTemplate")).get("spec")).get("containers"))):
        if isinstance(ctr, dict) and ctr.get("name") == "main":
            return i, ctr
    return None, None


def _gpu_count(c: dict) -> Tuple[int, Optional[str]]:
    """dra.ExtractGPUCountFromResourceRequirements on the main container."""
    _, main = _main(c)
    return resolve_gpu_count(_map(_map(main).get("resources")))


# -- the mutating webhook -----------------------------------------------------------------------
def _expected_target(provider: str, api_version: Any, scope: str, c: Optional[dict]) -> Tuple[Optional[str], str]:
    """provideroverride.ExpectedTarget: (target, error)."""
    if provider != "grove":
        return None, f'workload provider "{provider}" does not support provider overrides'
    if api_version != GROVE_API_VERSION:
        return None, f'unsupported Grove apiVersion "{api_version}"; supported value is "{GROVE_API_VERSION}"'
    if scope == "root":
        return "PodCliqueSet", ""
    if scope == "component":
        return ("PodCliqueScalingGroupConfig" if uses_scaling_group(_map(c)) else "PodCliqueTemplateSpec"), ""
    if c is None or node_count(c) <= 1:
        return None, f'scope "{scope}" requires a multinode component'
    if is_inter_pod(c):
        return None, f'scope "{scope}" is not supported for inter-pod GMS components'
    return "PodCliqueTemplateSpec", ""


def _overrides(spec: dict, v16: bool = False) -> Iterator[Tuple[str, dict, str, Optional[dict]]]:
    """(path, providerOverride, scope, component) of every provider override, in the webhook's order.
    At 1.6 a multinode role's override lives on ``roles[]`` (provideroverride.ScopeForComponentRole:
    leader and worker only; another role name has no scope and is refused by the role rules)."""
    if isinstance(spec.get("providerOverride"), dict):
        yield "spec.providerOverride", spec["providerOverride"], "root", None
    for i, c in enumerate(_list(spec.get("components"))):
        if not isinstance(c, dict):
            continue
        if isinstance(c.get("providerOverride"), dict):
            yield f"spec.components[{i}].providerOverride", c["providerOverride"], "component", c
        for role in ("leader", "worker"):
            o = _map(_map(c.get("multinode")).get(role)).get("providerOverride")
            if isinstance(o, dict):
                yield f"spec.components[{i}].multinode.{role}.providerOverride", o, f"multinode.{role}", c
        if v16:
            for j, r in enumerate(_list(c.get("roles"))):
                o = _map(r).get("providerOverride")
                if isinstance(o, dict) and _map(r).get("name") in ROLES:
                    yield f"spec.components[{i}].roles[{j}].providerOverride", o, f"roles.{_map(r)['name']}", c


def default(beta: dict, grove: bool, v16: bool = False) -> str:
    """DGDDefaulter.Default on CREATE, in place; returns the workload provider it selects. At 1.6
    (defaulting/dynamographdeployment_handler.go @3f3d3dfa, defaultMultinodeRoleReplicas) an
    explicit multinode role without replicas gets the count nodeCount implies: leader 1, worker
    nodeCount - 1."""
    meta = beta.setdefault("metadata", {})
    annotations = meta.setdefault("annotations", {})
    opted_out = str(annotations.get(api.ANN_ENABLE_GROVE, "")).lower() == "false"
    provider = "grove" if grove and not opted_out else "component"
    annotations[api.ANN_WORKLOAD_PROVIDER] = provider  # the controller-owned annotation is derived, never taken
    spec = _map(beta.get("spec"))
    for _, override, scope, c in _overrides(spec, v16):
        if not override.get("target"):
            target, _ = _expected_target(provider, override.get("apiVersion"), scope, c)
            if target:
                override["target"] = target
    for c in _list(spec.get("components")):
        if isinstance(c, dict):
            c.setdefault("replicas", 1)
            if v16 and isinstance(c.get("multinode"), dict):
                for r in _list(c.get("roles")):
                    if isinstance(r, dict) and r.get("name") in ROLES and r.get("replicas") is None:
                        r["replicas"] = 1 if r["name"] == "leader" else node_count(c) - 1
            if provider == "grove":
                c.setdefault("minAvailable", 1)
    return provider


# -- the validating webhook ---------------------------------------------------------------------
def problems(plain: dict, grove: bool, operator_version: Optional[str] = None) -> List[Problem]:
    """The validating webhook's errors for the DGD as the API server hands it over (after the
    conversion of a v1alpha1 request and the mutating webhook). ``operator_version`` (default: the
    newest modelled) picks the webhook: from 1.6.0 on, roles[].podTemplate is the alternative
    template source (``_roles16``)."""
    from kubectl_dynamo.operator import defaults, versions

    v16 = versions.at_least(operator_version or versions.NEWEST, api.ROLE_TEMPLATES_SINCE)

    alpha = str(plain.get("apiVersion", "")).endswith("/v1alpha1")
    # the API server defaults the request version, converts, and defaults the storage version
    request = defaults.apply(copy.deepcopy(plain), "v1alpha1" if alpha else "v1beta1")
    if alpha:
        from kubectl_dynamo.operator.convert import to_v1beta1  # only v1alpha1 input pays for the converter

        try:
            converted, _ = to_v1beta1(request, force=True, stored=True)
        except (ValueError, TypeError, KeyError, AttributeError):
            return []  # the schema errors already say why
        # a copy: the mutating webhook below changes it, and _alpha_spec still reads the request
        beta = defaults.apply(copy.deepcopy(dict(converted)), "v1beta1")
    else:
        beta = request  # a private copy, already v1beta1-defaulted (defaulting again adds nothing)
    provider = default(beta, grove, v16)
    meta = _map(beta.get("metadata"))
    spec = _map(beta.get("spec"))
    out = _object_meta(_map(meta.get("annotations")), spec)
    out += _spec(spec, str(meta.get("name", "")), provider, v1beta1_source=not alpha, v16=v16)
    if alpha:
        out += _alpha_spec(_map(request.get("spec")))
    return out


def _object_meta(annotations: dict, spec: dict) -> List[Problem]:
    out: List[Problem] = []
    where = "metadata.annotations"
    if api.ANN_ORIGIN_VERSION in annotations and not _SEMVER.match(str(annotations[api.ANN_ORIGIN_VERSION])):
        out.append((f"{where}[{api.ANN_ORIGIN_VERSION}]", f"Invalid value: {_q(annotations[api.ANN_ORIGIN_VERSION])}: must be valid semver"))
    out += _vllm_backend(annotations, where)
    if GROVE_UPDATE_STRATEGY in annotations and annotations[GROVE_UPDATE_STRATEGY] not in ("RollingRecreate", "OnDelete"):
        out.append((f"{where}[{GROVE_UPDATE_STRATEGY}]", f"Unsupported value: {_q(annotations[GROVE_UPDATE_STRATEGY])}: "
                    'supported values: "RollingRecreate", "OnDelete"'))
    if api.ANN_KUBE_DISCOVERY_MODE in annotations and annotations[api.ANN_KUBE_DISCOVERY_MODE] not in ("pod", "container"):
        out.append((f"{where}[{api.ANN_KUBE_DISCOVERY_MODE}]", f"Unsupported value: {_q(annotations[api.ANN_KUBE_DISCOVERY_MODE])}: "
                    'supported values: "pod", "container"'))
    intra_failover = any(_mode(_map(_map(c).get("experimental")).get("failover")) == "IntraPod"
                         for c in _list(spec.get("components")) if _map(_map(c).get("experimental")).get("failover"))
    if intra_failover and annotations.get(api.ANN_KUBE_DISCOVERY_MODE) != "container":
        out.append((f"{where}[{api.ANN_KUBE_DISCOVERY_MODE}]", f"Invalid value: {_q(annotations.get(api.ANN_KUBE_DISCOVERY_MODE, ''))}: "
                    'must be "container" when intra-pod failover is configured'))
    return out


def _vllm_backend(annotations: dict, where: str) -> List[Problem]:
    if api.ANN_VLLM_EXECUTOR_BACKEND in annotations and str(annotations[api.ANN_VLLM_EXECUTOR_BACKEND]).lower() not in ("mp", "ray"):
        return [(f"{where}[{api.ANN_VLLM_EXECUTOR_BACKEND}]", f'Invalid value: {_q(annotations[api.ANN_VLLM_EXECUTOR_BACKEND])}: must be "mp" or "ray"')]
    return []


def _spec(spec: dict, dgd_name: str, provider: str, *, v1beta1_source: bool, v16: bool = False) -> List[Problem]:
    grove = provider == "grove"
    not_grove = f'Forbidden: requires the Grove pathway, but workload provider "{provider}" is selected'
    out: List[Problem] = []
    components = [c for c in _list(spec.get("components")) if isinstance(c, dict)]
    overrides = {path: (o, scope, c) for path, o, scope, c in _overrides(spec, v16)}
    if "spec.providerOverride" in overrides:
        override, scope, owner = overrides["spec.providerOverride"]
        out += _provider_override("spec.providerOverride", override, scope, owner, provider)
    if spec.get("priorityClassName") and not grove:
        out.append(("spec.priorityClassName", not_grove))
    if not components:
        out.append(("spec.components", "Required value: must have at least one component"))
    pcs = pcs_name_for_dgd(dgd_name, components) if grove else ""
    for i, c in enumerate(components):
        path = f"spec.components[{i}]"
        if grove:
            combined = len(pcs) + len(str(c.get("name", "")).lower()) + (len(longest_clique(c)) if uses_scaling_group(c) else 0)
            if combined > grove_names.MAX_COMBINED_NAME_LENGTH:
                detail = "PCS name + component name"  # dgdComponentResourceNameLength
                if uses_scaling_group(c):
                    detail = f"PCS name + PCSG name + longest PodClique name {_q(longest_clique(c))}"
                out.append((f"{path}.name", f"Invalid value: {_q(c.get('name'))}: combined resource name length {combined} "
                            f"exceeds the {grove_names.MAX_COMBINED_NAME_LENGTH}-character pod-name limit ({detail}); shorten "
                            f"DynamoGraphDeployment name {_q(dgd_name)} or component name {_q(c.get('name'))}"))
        gms = _gms(c)
        if gms is not None and _mode(gms) == "InterPod":
            if not grove:
                out.append((f"{path}.experimental.gpuMemoryService.mode", not_grove))
            if spec.get("backendFramework") != "vllm":
                out.append((f"{path}.experimental.gpuMemoryService.mode", f"Invalid value: {_q(gms.get('mode'))}: the inter-pod GMS layout is "
                            f"currently supported only for vLLM (detected backend: {spec.get('backendFramework') or '<unset>'})"))
        out += _power_annotation(c, path)
        out += _elastic_ep(spec.get("backendFramework"), c, path)
        out += _component(c, path, provider, overrides, v1beta1_source=v1beta1_source, v16=v16)
    if v16 and v1beta1_source:
        out += _planner_runtime(components)
    out += _topology(spec, provider, overrides)
    policy = _map(_map(spec.get("experimental")).get("kvTransferPolicy"))
    if policy.get("clusterTopologyName"):
        name = str(policy["clusterTopologyName"])
        where = "spec.experimental.kvTransferPolicy.clusterTopologyName"
        problems = [DNS1123_SUBDOMAIN_TOO_LONG] if len(name) > 253 else []  # k8svalidation.IsDNS1123Subdomain
        if not _DNS1123_SUBDOMAIN.fullmatch(name):
            problems.append(DNS1123_SUBDOMAIN_MESSAGE)
        if problems:
            out.append((where, f"Invalid value: {_q(name)}: {'; '.join(problems)}"))
        if not grove:
            out.append((where, not_grove))
    return out


def _power_annotation(c: dict, path: str) -> List[Problem]:
    annotations = _map(_map(_map(c.get("podTemplate")).get("metadata")).get("annotations"))
    if GPU_POWER_LIMIT not in annotations:
        return []
    out: List[Problem] = []
    value = str(annotations[GPU_POWER_LIMIT])
    where = f"{path}.podTemplate.metadata.annotations[{GPU_POWER_LIMIT}]"
    if not re.fullmatch(r"[+-]?[0-9]+", value) or not -(2**63) <= int(value) < 2**63:  # strconv.Atoi
        out.append((where, f"Invalid value: {_q(value)}: must be a decimal integer"))
    elif int(value) <= 0:
        out.append((where, f"Invalid value: {_q(value)}: must be greater than zero"))
    dra = None
    if _gms(c) is not None:
        dra = f"{path}.experimental.gpuMemoryService"
    else:
        pod = _map(_map(c.get("podTemplate")).get("spec"))
        for kind in ("containers", "initContainers"):
            for j, ctr in enumerate(_list(pod.get(kind))):
                if dra is None and _list(_map(_map(ctr).get("resources")).get("claims")):
                    dra = f"{path}.podTemplate.spec.{kind}[{j}].resources.claims"
    if dra:
        out.append((dra, f'Forbidden: cannot be combined with annotation "{GPU_POWER_LIMIT}": power-aware planning does '
                    "not support DRA-backed device allocation"))
    return out


def _dra_problem(c: dict) -> str:
    """dra.gpuCountFromQuantity's error for the main container's GPU quantity (the value as written:
    the operator prints the canonical quantity, the same text for the usual spellings such as 1500m)."""
    resources = _map(_map(_main(c)[1]).get("resources"))
    for section in ("limits", "requests"):
        values = _map(resources.get(section))
        names = sorted(n for n in values if is_gpu_resource_name(n))
        if names:
            return f"GPU resource {_q(names[0])} quantity {_q(str(values[names[0]]))} must be a whole number"
    return ""


def _elastic_ep(framework: Any, c: dict, path: str) -> List[Problem]:
    """shared_helpers.go validateElasticEPRequiresCommand with backend_vllm.go IsElasticEPRayLaunch."""
    index, main = _main(c)
    if framework != "vllm" or main is None or main.get("command"):
        return []
    tokens = [t for arg in _list(main.get("args")) if isinstance(arg, str) for t in arg.split()]
    if "--enable-elastic-ep" in tokens and (has_arg(tokens, "--data-parallel-backend", "ray")
                                            or has_arg(tokens, "-dpb", "ray")):  # utils.go hasArg on the expanded line
        return [(f"{path}.podTemplate.spec.containers[{index}].command", "Required value: elastic expert parallelism "
                 "(--enable-elastic-ep with --data-parallel-backend ray) requires an explicit container command; the "
                 "operator starts the single-pod Ray head by wrapping that command and cannot start it from the image "
                 "ENTRYPOINT")]
    return []


def _component(c: dict, path: str, provider: str, overrides: dict, *, v1beta1_source: bool,
               v16: bool = False) -> List[Problem]:
    """shared_v1beta1.go validateDynamoComponentDeploymentSharedSpec (1.5 @2a6da14c; at 1.6 the
    rules of michaelfeil/dynamo @80b177f2 for roles, template-source mode and multinode type)."""
    grove = provider == "grove"
    role_templates = v16 and has_role_templates(c)
    out: List[Problem] = []
    for where in (f"{path}.providerOverride", f"{path}.multinode.leader.providerOverride",
                  f"{path}.multinode.worker.providerOverride"):
        if where in overrides:
            override, scope, owner = overrides[where]
            out += _provider_override(where, override, scope, owner, provider)
    if "minAvailable" in c and not grove:
        out.append((f"{path}.minAvailable", f"Forbidden: {GROVE_ONLY}"))
    if v16:
        if isinstance(c.get("roles"), list):
            out += _roles16(c, path, provider, overrides)
        if role_templates and c.get("podTemplate") is not None:  # validateComponentPodTemplateMode
            out.append((f"{path}.podTemplate", "Forbidden: cannot be combined with roles[].podTemplate; choose one "
                        "complete PodTemplate source mode"))
    size = parse_quantity(c.get("sharedMemorySize")) if "sharedMemorySize" in c else None
    if size is not None and size < 0:
        out.append((f"{path}.sharedMemorySize", f"Invalid value: {_q(c['sharedMemorySize'])}: must be non-negative"))
    if v16 and c.get("multinode") is not None and c.get("type") not in MULTINODE_TYPES:  # validateMultinodeComponentType
        out.append((f"{path}.multinode", "Forbidden: multinode is supported only for worker, prefill, or decode components"))
    if c.get("type") == "epp":
        if node_count(c) > 1 and not v16:
            out.append((f"{path}.multinode", "Forbidden: EPP component cannot be multinode"))
        if c.get("replicas", 1) != 1:
            out.append((f"{path}.replicas", f"Invalid value: {c.get('replicas')}: EPP component must have exactly 1 replica"))
        if "eppConfig" not in c:
            out.append((f"{path}.eppConfig", "Required value: is required for EPP components"))
    ref = _map(c.get("eppConfig")).get("configMapRef")
    if isinstance(ref, dict) and not ref.get("name"):
        out.append((f"{path}.eppConfig.configMapRef.name", "Required value: is required"))
    if "frontendSidecar" in c and role_templates and c["frontendSidecar"] != "":
        for j, r in enumerate(_list(c.get("roles"))):
            template = _map(r).get("podTemplate")
            if template is not None and c["frontendSidecar"] not in _container_names(template):
                out.append((f"{path}.roles[{j}].podTemplate.spec.containers", f"Invalid value: {_q(c['frontendSidecar'])}: "
                            "must contain the container named by frontendSidecar"))
    elif "frontendSidecar" in c and v16 and c["frontendSidecar"] == "":
        out.append((f"{path}.frontendSidecar", "Invalid value: \"\": must not be empty"))
    elif "frontendSidecar" in c:
        sidecar = c["frontendSidecar"]
        names = [_map(x).get("name") for x in _list(_map(_map(c.get("podTemplate")).get("spec")).get("containers"))]
        if "podTemplate" not in c:
            out.append((f"{path}.podTemplate.spec.containers", "Required value: is required when frontendSidecar is set"))
        elif sidecar == "":
            out.append((f"{path}.frontendSidecar", "Invalid value: \"\": must not be empty"))
        elif sidecar not in names:
            out.append((f"{path}.frontendSidecar", f"Invalid value: {_q(sidecar)}: must match a podTemplate.spec.containers name"))
    if isinstance(c.get("experimental"), dict):
        out += _experimental(c, f"{path}.experimental", grove, role_templates)
    if role_templates and v1beta1_source:  # validateRolePodTemplateRuntimeVersion: the main images of the roles
        images = [_main(_map(r))[1] for r in _list(c.get("roles"))]
        if not c.get("runtimeVersionOverride") and any(
                _map(m).get("image") and not image_version(str(_map(m)["image"])) for m in images):
            out.append((f"{path}.runtimeVersionOverride", f"Required value: {RUNTIME_VERSION_REQUIRED}"))
    elif v1beta1_source:
        index, main = _main(c)
        image = _map(main).get("image") or ""
        where = f"{path}.podTemplate.spec.containers" + (f"[{index}].image" if index is not None else "")
        if not image:
            out.append((where, "Required value: is required"))
        elif not c.get("runtimeVersionOverride") and not image_version(str(image)):
            out.append((f"{path}.runtimeVersionOverride", f"Required value: {RUNTIME_VERSION_REQUIRED}"))
    return out


# -- 1.6: roles[] as the alternative template source (michaelfeil/dynamo @80b177f2,
# internal/webhook/validation/shared_v1beta1.go validateComponentRoles, validateComponentRoleSpec,
# validateComponentPodTemplateMode; planner_runtime_features.go) ----------------------------------
def has_role_templates(c: dict) -> bool:
    """dynamo.HasRolePodTemplates: some role carries a podTemplate."""
    return any(_map(r).get("podTemplate") is not None for r in _list(c.get("roles")))


def _container_names(template: Any) -> List[Any]:
    return [_map(x).get("name") for x in _list(_map(_map(template).get("spec")).get("containers"))]


def _roles16(c: dict, path: str, provider: str, overrides: dict) -> List[Problem]:
    where = f"{path}.roles"
    if c.get("multinode") is None:
        return [(where, "Forbidden: roles are supported only for component shapes that define a role schema; this "
                 "release supports multinode and LPX components")]
    out: List[Problem] = []
    templates = has_role_templates(c)
    seen: set = set()
    for j, r in enumerate(_list(c.get("roles"))):
        r = _map(r)
        at = f"{where}[{j}]"
        name = r.get("name")
        if templates and r.get("podTemplate") is None:
            out.append((f"{at}.podTemplate", "Required value: is required on every role when role-specific "
                        "PodTemplates are used"))
        known = name in ROLES
        if not known:
            out.append((f"{at}.name", f'Unsupported value: {_q(name)}: supported values: "leader", "worker"'))
        elif name in seen:
            out.append((f"{at}.name", f"Duplicate value: {_q(name)}"))
        else:
            seen.add(name)
        if known and r.get("replicas") is not None:
            want = 1 if name == "leader" else node_count(c) - 1
            if r["replicas"] != want:
                out.append((f"{at}.replicas", f"Invalid value: {r['replicas']}: must equal {want} for multinode role "
                            f'"{name}"'))
        if known:
            out += _role_spec(r, at, provider, overrides)
    for name in ROLES:
        if name not in seen:
            out.append((where, f'Required value: must contain the "{name}" role'))
    return out


def _role_spec(r: dict, at: str, provider: str, overrides: dict) -> List[Problem]:
    out: List[Problem] = []
    template = r.get("podTemplate")
    if template is not None:
        at_t = f"{at}.podTemplate"
        annotations = _map(_map(_map(template).get("metadata")).get("annotations"))
        out += _vllm_backend(annotations, f"{at_t}.metadata.annotations")
        if GPU_POWER_LIMIT in annotations:
            out.append((f"{at_t}.metadata.annotations[{GPU_POWER_LIMIT}]", "Forbidden: role-specific power limits are "
                        "not supported by power-aware planning"))
        pod = _map(_map(template).get("spec"))
        containers = _list(pod.get("containers"))
        for i, ctr in enumerate(containers):
            if _map(ctr).get("name") != "main" and not _map(ctr).get("image"):
                out.append((f"{at_t}.spec.containers[{i}].image", "Required value: is required for sidecar containers"))
        for i, ctr in enumerate(_list(pod.get("initContainers"))):
            if not _map(ctr).get("image"):
                out.append((f"{at_t}.spec.initContainers[{i}].image", "Required value: is required for init containers"))
        index, main = _main(r)
        if main is None:
            out.append((f"{at_t}.spec.containers", 'Required value: must contain a container named "main"'))
        elif not main.get("image"):
            out.append((f"{at_t}.spec.containers[{index}].image", "Required value: is required"))
    if f"{at}.providerOverride" in overrides:
        override, scope, owner = overrides[f"{at}.providerOverride"]
        out += _provider_override(f"{at}.providerOverride", override, scope, owner, provider)
    return out


def _resolve_runtime(image: str, override: str) -> Tuple[Optional[Tuple[int, int, int]], str]:
    """runtimeversion.Resolve: (major, minor, patch) or None with the operator's error text."""
    strict = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?")
    if override:
        m = strict.fullmatch(override)  # semver.StrictNewVersion
        return ((int(m[1]), int(m[2]), int(m[3])), "") if m else (None, 'must be a semantic version such as "1.1.0"')
    ref = image.strip().split("@", 1)[0]
    slash, colon = ref.rfind("/"), ref.rfind(":")
    if colon <= slash:
        return None, f"image {_q(image)} does not contain a tag"
    tag = ref[colon + 1:]
    m = _IMAGE_TAG.match(tag.strip())
    if not m:
        return None, f'image tag {_q(tag)} must contain a semantic version such as "1.1.0"'
    return (int(m[1]), int(m[2]), int(m[3])), ""


def _planner_runtime(components: List[dict]) -> List[Problem]:
    """validateRolePodTemplatesPlannerRuntime: role templates need every planner on runtime >= 1.6.0
    (runtimefeatures.PlannerDGDComponentStatus; the minimum is taken as 1.6.0, the release that
    introduced roles: the feature table is not in the public index)."""
    paths = [f"spec.components[{i}].roles" for i, c in enumerate(components) if has_role_templates(c)]
    if not paths:
        return []
    for c in components:
        if c.get("type") != "planner":
            continue
        image = str(_map(_main(c)[1]).get("image") or "")
        version, error = _resolve_runtime(image, str(c.get("runtimeVersionOverride") or ""))
        prefix = ("Forbidden: role-specific PodTemplates require every planner component to use Dynamo runtime 1.6.0 "
                  f"or later; planner component {_q(c.get('name'))}")
        if version is None:
            return [(p, f"{prefix} has no resolvable runtime version: {error}") for p in paths]
        if version < (1, 6, 0):
            return [(p, f"{prefix} resolves to {'.'.join(map(str, version))}") for p in paths]
    return []


def _provider_override(path: str, override: dict, scope: str, c: Optional[dict], provider: str) -> List[Problem]:
    """shared_v1beta1.go validateProviderOverride with provideroverride.ValidateValue."""
    if provider != "grove":
        return [(path, f'Forbidden: requires workload provider "grove", but "{provider}" is selected')]
    api_version = override.get("apiVersion")
    if not api_version:
        return [(f"{path}.apiVersion", "Required value: is required")]
    if api_version != GROVE_API_VERSION:
        return [(f"{path}.apiVersion", f'Unsupported value: {_q(api_version)}: supported values: "{GROVE_API_VERSION}"')]
    target, error = _expected_target(provider, api_version, scope, c)
    if target is None:
        return [(path, f"Forbidden: {error}")]
    if override.get("target") != target:
        return [(f"{path}.target", f"Invalid value: {_q(override.get('target'))}: must match the provider-context target "
                 f'"{target}"')]
    value = override.get("value")
    if not isinstance(value, dict):
        return [(f"{path}.value", f"Invalid value: null: {_not_object(value)}")]
    shape = _grove_shape_error(target, value)
    if shape:
        return [(f"{path}.value", f"Invalid value: null: does not match the registered {target} schema: {shape}")]
    owned = "Forbidden: is Dynamo-owned or not enabled for provider override"
    out: List[Problem] = []
    node, at = value, f"{path}.value"
    if target == "PodCliqueSet":
        for key in ("spec", "template"):
            out += [(f"{at}.{k}", owned) for k in sorted(node) if k != key]
            if key not in node:
                return out + [(f"{at}.{key}", "Invalid value: null: is required")]
            if not isinstance(node[key], dict):
                return out + [(f"{at}.{key}", f"Invalid value: null: {_not_object(node[key])}")]
            node, at = node[key], f"{at}.{key}"
    out += [(f"{at}.{k}", owned) for k in sorted(node) if k != "topologyConstraint"]
    if "topologyConstraint" not in node:
        out.append((f"{at}.topologyConstraint", "Invalid value: null: is required"))
    elif not isinstance(node["topologyConstraint"], dict):
        out.append((f"{at}.topologyConstraint", f"Invalid value: null: {_not_object(node['topologyConstraint'])}"))
    return out


def _json_kind(value: Any) -> str:
    return ("bool" if isinstance(value, bool) else "number" if isinstance(value, (int, float))
            else "string" if isinstance(value, str) else "array" if isinstance(value, list) else "object")


def _grove_shape_error(target: str, value: dict) -> str:
    """provideroverride validateKnownGroveShape: encoding/json's error decoding the value into the
    registered Grove type, for the fields the override may write (the chain to topologyConstraint and
    its packDomain; other Grove fields are Dynamo-owned and refused by the ownership rule)."""
    if target == "PodCliqueSet":
        chain = [("spec", "PodCliqueSet", "v1alpha1.PodCliqueSetSpec"),
                 ("template", "PodCliqueSetSpec", "v1alpha1.PodCliqueSetTemplateSpec"),
                 ("topologyConstraint", "PodCliqueSetTemplateSpec", "v1alpha1.TopologyConstraint")]
    else:
        chain = [("topologyConstraint", target, "v1alpha1.TopologyConstraint")]
    chain.append(("packDomain", "TopologyConstraint", "v1alpha1.TopologyDomain"))
    node: Any = value
    field: List[str] = []
    for key, struct, kind in chain:
        if not isinstance(node, dict) or node.get(key) is None:
            return ""
        node, field = node[key], field + [key]
        wanted = str if key == "packDomain" else dict
        if not isinstance(node, wanted):
            return (f"json: cannot unmarshal {_json_kind(node)} into Go struct field {struct}.{'.'.join(field)} "
                    f"of type {kind}")
    return ""


def _not_object(value: Any) -> str:
    """provideroverride decodeObject's detail: an absent or null value, or encoding/json's error for
    another JSON type."""
    if value is None:
        return "must be a JSON object"
    kind = ("bool" if isinstance(value, bool) else "number" if isinstance(value, (int, float))
            else "string" if isinstance(value, str) else "array")
    return f"must be a JSON object: json: cannot unmarshal {kind} into Go value of type map[string]json.RawMessage"


def _writes_topology(override: dict) -> bool:
    """provideroverride.WritesGroveTopology on the defaulted target."""
    value = _map(override.get("value"))
    if override.get("target") == "PodCliqueSet":
        return "topologyConstraint" in _map(_map(value.get("spec")).get("template"))
    return override.get("target") in ("PodCliqueTemplateSpec", "PodCliqueScalingGroupConfig") and "topologyConstraint" in value


def _topology(spec: dict, provider: str, overrides: dict) -> List[Problem]:
    components = [c for c in _list(spec.get("components")) if isinstance(c, dict)]
    per_component = any("topologyConstraint" in c for c in components)
    if "topologyConstraint" not in spec and not per_component:
        return []
    out: List[Problem] = []
    if provider == "grove":
        out += [(f"{path}.value", f"Forbidden: {TOPOLOGY_OVERRIDE_CONFLICT}") for path, (o, _, _) in overrides.items()
                if _writes_topology(o)]
    if "topologyConstraint" not in spec:
        out.append(("spec.topologyConstraint", "Required value: is required when any component topology constraint is set"))
    elif not _map(spec["topologyConstraint"]).get("packDomain") and not per_component:
        out.append(("spec.topologyConstraint.packDomain",
                    "Required value: is required when no component topologyConstraint is set"))
    return out


def _experimental(c: dict, path: str, grove: bool, role_templates: bool = False) -> List[Problem]:
    experimental = c["experimental"]
    out: List[Problem] = []
    gms, failover = experimental.get("gpuMemoryService"), experimental.get("failover")
    gpus, gpu_problem = _gpu_count(c)
    kind = c.get("type")
    if role_templates:  # 1.6 validateSharedExperimentalSpec: these need operator-generated launch commands
        for key, node in (("gpuMemoryService", gms), ("failover", failover)):
            if node is not None:
                out.append((f"{path}.{key}", "Forbidden: cannot be combined with role PodTemplates because this layout "
                            "requires operator-managed launch wiring"))
        gms = failover = None  # and their own rules are skipped (validateExperimentalSpec, rolePodTemplates)
    if isinstance(gms, dict):
        if kind not in ("worker", "prefill", "decode"):
            out.append((f"{path}.gpuMemoryService", "Forbidden: GPU memory service is only supported for worker, "
                        "prefill, or decode components"))
        if gpu_problem or gpus < 1:
            out.append((f"{path}.gpuMemoryService", "Forbidden: GPU memory service requires "
                        "podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu >= 1"))
        if _mode(gms) == "IntraPod":
            names = [_map(x).get("name") for x in _list(_map(_map(c.get("podTemplate")).get("spec")).get("containers"))]
            seen = set()
            for j, name in enumerate(_list(gms.get("extraClientContainers"))):
                where = f"{path}.gpuMemoryService.extraClientContainers[{j}]"
                if name in seen:
                    out.append((where, f"Duplicate value: {_q(name)}"))
                    continue
                seen.add(name)
                if name not in names:
                    out.append((where, f"Invalid value: {_q(name)}: does not name a container in podTemplate.spec.containers"))
    if isinstance(failover, dict):
        mode = _mode(failover)
        if not isinstance(gms, dict):
            out.append((f"{path}.failover", f'Forbidden: gpuMemoryService is required when failover mode is "{mode}"'))
        elif _mode(gms) != mode:
            out.append((f"{path}.failover.mode", f"Invalid value: {_q(failover.get('mode'))}: must match "
                        f"gpuMemoryService.mode {_q(gms.get('mode', ''))}"))
        if mode == "InterPod":
            if gpu_problem:
                out.append((f"{path}.failover", f"Forbidden: failed to read main-container GPU limit: {_dra_problem(c)}"))
            elif gpus < 1:
                out.append((f"{path}.failover", "Forbidden: GMS failover requires at least 1 GPU in "
                            "podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu"))
            if kind in ("epp", "frontend", "planner"):
                out.append((f"{path}.failover", f'Forbidden: GMS failover is not supported for component type "{kind}"'))
    if _map(experimental.get("grove")).get("forceScalingGroup") and not grove:
        out.append((f"{path}.grove.forceScalingGroup", f"Forbidden: {GROVE_ONLY}"))
    checkpoint = experimental.get("checkpoint")
    if isinstance(checkpoint, dict):
        if checkpoint.get("enabled"):  # the Checkpoint gate is off in the operator's default configuration
            out.append((f"{path}.checkpoint", "Forbidden: checkpoint functionality is disabled in the operator "
                        "configuration"))
        if _list(_map(checkpoint.get("job")).get("gmsClientContainers")):
            where = f"{path}.checkpoint.job.gmsClientContainers"
            if not isinstance(gms, dict):
                out.append((where, "Forbidden: requires gpuMemoryService to be set"))
            elif _mode(gms) == "InterPod":
                out.append((where, "Forbidden: is only supported with gpuMemoryService.mode=IntraPod"))
        if checkpoint.get("enabled"):  # checkpoint.ValidateCheckpointCompatibility
            if isinstance(gms, dict) and gms.get("mode") == "InterPod":
                out.append((f"{path}.checkpoint", "Forbidden: Snapshot with gpuMemoryService.mode=InterPod is unsupported"))
            if isinstance(failover, dict):
                out.append((f"{path}.checkpoint", "Forbidden: Snapshot with active/passive failover is temporarily unsupported"))
    return out


def _alpha_spec(spec: dict) -> List[Problem]:
    """dynamographdeployment_v1alpha1.go and shared_v1alpha1.go: the v1alpha1 request's own fields."""
    out: List[Problem] = []
    for i, pvc in enumerate(_list(spec.get("pvcs"))):
        if not _map(pvc).get("name"):
            out.append((f"spec.pvcs[{i}].name", "Required value: is required"))
    services: Dict[str, Any] = _map(spec.get("services"))
    for name in sorted(services):
        s = _map(services[name])
        path = f"spec.services[{name}]"
        out += _vllm_backend(_map(s.get("annotations")), f"{path}.annotations")
        for j, mount in enumerate(_list(s.get("volumeMounts"))):
            if not _map(mount).get("useAsCompilationCache") and not _map(mount).get("mountPoint"):
                out.append((f"{path}.volumeMounts[{j}].mountPoint",
                            "Required value: is required when useAsCompilationCache is false"))
        ingress = _map(s.get("ingress"))
        if ingress.get("enabled") and not ingress.get("host"):
            out.append((f"{path}.ingress.host", "Required value: is required when ingress is enabled"))
        if isinstance(s.get("eppConfig"), dict) and ("configMapRef" in s["eppConfig"]) == ("config" in s["eppConfig"]):
            out.append((f"{path}.eppConfig", "Forbidden: exactly one of configMapRef or config is required"))
        eps = _map(s.get("extraPodSpec"))
        if "frontendSidecar" in s and any(_map(x).get("name") == FRONTEND_SIDECAR_CONTAINER for x in _list(eps.get("containers"))):
            out.append((f"{path}.frontendSidecar", f'Forbidden: cannot inject frontend sidecar: a container named '
                        f'"{FRONTEND_SIDECAR_CONTAINER}" already exists in extraPodSpec.containers'))
        failover = _map(s.get("failover"))
        if failover.get("enabled") and failover.get("mode") == "intraPod" \
                and failover.get("numShadows", 0) not in (0, 1):  # an unset mode is not checked
            out.append((f"{path}.failover.numShadows", f"Invalid value: {failover.get('numShadows')}: is invalid for "
                        'mode="intraPod": intraPod uses a fixed 1 primary + 1 shadow sidecar; use failover.mode="interPod" '
                        "to configure numShadows"))
        image = _map(eps.get("mainContainer")).get("image") or ""
        if not image:
            out.append((f"{path}.extraPodSpec.mainContainer.image", "Required value: is required"))
        elif not s.get("runtimeVersionOverride") and not image_version(str(image)):
            out.append((f"{path}.runtimeVersionOverride", f"Required value: {RUNTIME_VERSION_REQUIRED}"))
    return out


def offline_notes(plain: dict, grove: bool) -> List[Problem]:
    """What the webhook decides by reading the cluster: a ClusterTopologyBinding named by the DGD must
    exist (with the Grove gate on). Offline the answer is unknown."""
    spec = _map(plain.get("spec"))
    if not grove:
        return []
    out = []
    for where, node in (("spec.topologyConstraint", spec.get("topologyConstraint")),
                        ("spec.experimental.kvTransferPolicy", _map(spec.get("experimental")).get("kvTransferPolicy"))):
        name = _map(node).get("clusterTopologyName")
        if name:
            out.append((f"{where}.clusterTopologyName", f"the operator refuses the DGD unless ClusterTopologyBinding "
                        f"{_q(name)} exists (not checked offline)"))
    return out
