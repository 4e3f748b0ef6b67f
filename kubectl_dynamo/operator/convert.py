"""DynamoGraphDeployment v1alpha1 -> v1beta1, as the operator's conversion webhook does it.

Modelled on ai-dynamo/dynamo main @2a6da14c (the snapshot the bundled CRD comes from):
``deploy/operator/api/v1alpha1/dynamographdeployment_conversion.go`` (``ConvertTo``,
``ConvertFromDynamoGraphDeploymentSpec``) and ``shared_spec_conversion.go``
(``ConvertFromDynamoComponentDeploymentSharedSpec``, ``buildSharedPodTemplateFromAlpha``,
``buildMainContainerFromDedicated``, ``mergeExtraPodSpecMainContainer``, ``resourcesToNative``,
``convertExperimentalToHub``, ``saveSharedAlphaOnlySpec``). Source: ai-dynamo/dynamo@2a6da14c deploy/operator/api/v1alpha1/*_conversion.go.

Pure and generic: works on any Mapping/list tree (plain dicts from PyYAML, or ruamel.yaml
round-trip CommentedMap/CommentedSeq). Values that are not converted are moved, not copied, and
new maps/lists take the input's container type, so ruamel comments on untouched parts survive
``kubectl dynamo upgrade dgd``. The input is never mutated.

Nothing is dropped in silence: every v1alpha1 field without a v1beta1 home yields a problem.
Upstream keeps such fields in the reserved ``nvidia.com/dgd-spec`` annotation (JSON envelope
``{"version":1,"spec":<sparse v1alpha1 spec>}``) and the operator still reads some of them
back at reconcile time (``spec.pvcs``; a component's ``labels``, ``annotations``, ``ingress`` and
``subComponentType``, see ``internal/dynamo/graph.go`` ``getDGDAlphaComponent``). With
``force=True`` we do the same and report warnings; otherwise they are errors and left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, MutableMapping
from typing import Any, Optional

from kubectl_dynamo.operator import api

# Reserved by the operator for conversion round-trip data (v1alpha1 conversion.go).
CONVERSION_ANNOTATION_PREFIX = "nvidia.com/dgd-"
ANN_DGD_SPEC = api.ANN_DGD_SPEC
assert ANN_DGD_SPEC == CONVERSION_ANNOTATION_PREFIX + "spec"

MAIN_CONTAINER = "main"
FRONTEND_SIDECAR_CONTAINER = api.FRONTEND_SIDECAR_CONTAINER

_GMS_MODES = {"intraPod": "IntraPod", "interPod": "InterPod"}
_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_NAME_RE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$")
# resource.ParseQuantity grammar (same pattern the CRD uses for quantities).
_QUANTITY_RE = re.compile(
    r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?(?:\d+(?:\.\d*)?|\.\d+))?$"
)

# Component keys copied verbatim (same name and shape in both versions).
_VERBATIM = (
    "providerOverride", "runtimeVersionOverride", "globalDynamoNamespace", "replicas",
    "minAvailable", "multinode", "modelRef", "eppConfig", "topologyConstraint",
)
# Component keys folded into podTemplate (buildPodTemplateToHub).
_POD_KEYS = (
    "resources", "envs", "envFromSecret", "volumeMounts", "livenessProbe", "readinessProbe",
    "extraPodSpec", "extraPodMetadata", "frontendSidecar",
)
_EXPERIMENTAL_KEYS = ("gpuMemoryService", "failover", "checkpoint")
# Go struct order of the v1alpha1 shared spec, so the preserved JSON reads like upstream's.
_ALPHA_FIELD_ORDER = (
    "providerOverride", "annotations", "labels", "serviceName", "componentType",
    "subComponentType", "runtimeVersionOverride", "dynamoNamespace", "globalDynamoNamespace",
    "resources", "autoscaling", "envs", "envFromSecret", "volumeMounts", "ingress", "modelRef",
    "sharedMemory", "extraPodMetadata", "extraPodSpec", "livenessProbe", "readinessProbe",
    "replicas", "minAvailable", "multinode", "scalingAdapter", "eppConfig", "frontendSidecar",
    "checkpoint", "topologyConstraint", "gpuMemoryService", "failover",
)


def is_dgd(doc: Any) -> bool:
    """True for a DynamoGraphDeployment of the nvidia.com group (any version)."""
    return (
        isinstance(doc, Mapping)
        and doc.get("kind") == api.DGD_KIND
        and str(doc.get("apiVersion") or "").startswith("nvidia.com/")
    )


def to_v1beta1(doc: Mapping, *, force: bool = False, stored: bool = False) -> tuple[Mapping, list[dict]]:
    """Convert a v1alpha1 DGD to v1beta1; return ``(document, problems)``.

    ``stored``: the object the operator's conversion webhook stores (what it renders from), which
    keeps values the v1beta1 schema would reject on a direct apply (``type: default``); without
    it the result is a manifest the v1beta1 CRD accepts.

    A v1beta1 document is returned as is with no problems, so conversion is idempotent.
    Each problem is ``{"path", "message", "severity"}`` with severity ``error`` or ``warning``.
    Raises ValueError for anything that is not a v1alpha1/v1beta1 DynamoGraphDeployment.
    """
    if not is_dgd(doc):
        raise ValueError("not a nvidia.com DynamoGraphDeployment")
    version = doc.get("apiVersion")
    if version == api.V1BETA1:
        return doc, []
    if version != api.V1ALPHA1:
        raise ValueError(f"unsupported DynamoGraphDeployment apiVersion {version!r}")
    return _Converter(doc, force, stored).run()


# --------------------------------------------------------------------------- helpers

_MISSING = object()


def _copy_comment(src: Any, skey: Any, dst: Any, dkey: Any) -> None:
    """Move a ruamel comment attached to ``src[skey]`` onto ``dst[dkey]`` (no-op for dicts)."""
    sca, dca = getattr(src, "ca", None), getattr(dst, "ca", None)
    if sca is None or dca is None:
        return
    item = sca.items.get(skey)
    if item is not None:
        dca.items[dkey] = item


def _carry(src: Mapping, skey: Any, dst: MutableMapping, dkey: Any = None, value: Any = _MISSING) -> None:
    dkey = skey if dkey is None else dkey
    dst[dkey] = src[skey] if value is _MISSING else value
    _copy_comment(src, skey, dst, dkey)


def _empty(v: Any) -> bool:
    """Go zero value as mergo sees it: None, "", 0, False, empty map/list."""
    if v is None or v is False:
        return True
    if isinstance(v, (str, Mapping, list, tuple)):
        return len(v) == 0
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v == 0
    return False


def _plain(v: Any) -> Any:
    """ruamel/PyYAML tree -> JSON-safe builtins (for the preserved-spec annotation)."""
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v)
    return str(v)


def _quantity_ok(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    return isinstance(v, str) and bool(_QUANTITY_RE.match(v.strip()))


def _quantity_zero(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v == 0
    m = re.match(r"^[+-]?(\d+(?:\.\d*)?|\.\d+)", str(v).strip())
    return m is not None and float(m.group(1)) == 0.0


def _merge_override(base: Mapping, over: Mapping, new_map) -> MutableMapping:
    """mergo.Merge(base, over, WithOverride) on maps: non-empty values of ``over`` win,
    nested maps merge key by key, lists are replaced."""
    out = new_map(over)
    for k in base:
        _carry(base, k, out)
    for k in over:
        v = over[k]
        if k in out and _empty(v):
            continue
        if k in out and isinstance(out[k], Mapping) and isinstance(v, Mapping):
            _carry(over, k, out, value=_merge_override(out[k], v, new_map))
        else:
            _carry(over, k, out)
    return out


class _Converter:
    def __init__(self, doc: Mapping, force: bool, stored: bool = False):
        self.doc = doc
        self.force = force
        self.stored = stored
        self.problems: list[dict] = []
        self._map_type = type(doc) if isinstance(doc, dict) else dict
        # Sparse v1alpha1 spec for the nvidia.com/dgd-spec annotation (force mode).
        self.save_pvcs: Any = None
        self.save_services: dict[str, Any] = {}
        self.current = ""  # component being converted

    # -- containers and problems -------------------------------------------------------

    def new_map(self, like: Any = None) -> MutableMapping:
        t = type(like) if isinstance(like, dict) else self._map_type
        return t()

    def new_seq(self, like: Any = None) -> list:
        t = type(like) if isinstance(like, list) else list
        return t()

    def problem(self, path: str, message: str, severity: str) -> None:
        self.problems.append({"path": path, "message": message, "severity": severity})

    def warn(self, path: str, message: str) -> None:
        self.problem(path, message, "warning")

    def error(self, path: str, message: str) -> None:
        self.problem(path, message, "error")

    def unhomed(self, path: str, message: str) -> None:
        """A field with no v1beta1 home: kept in the annotation under force, else dropped."""
        if self.force:
            self.warn(path, f"{message}; kept in the {ANN_DGD_SPEC} annotation, as the operator does")
        else:
            self.error(path, f"{message}; not converted (strict)")

    def save(self, name: str, key: str, value: Any) -> None:
        self.save_services.setdefault(name, {})[key] = value

    # -- document ----------------------------------------------------------------------

    def run(self) -> tuple[Mapping, list[dict]]:
        doc = self.doc
        out = self.new_map(doc)
        doc_ca, out_ca = getattr(doc, "ca", None), getattr(out, "ca", None)  # ruamel comments
        if doc_ca is not None and out_ca is not None:
            out_ca.comment = doc_ca.comment  # document header comment
            out_ca.end = doc_ca.end
        spec = doc.get("spec")
        new_spec = self.spec(spec) if isinstance(spec, Mapping) else spec
        status = doc.get("status")
        new_status = self.status(status) if isinstance(status, Mapping) else status
        for k in doc:
            if k == "apiVersion":
                _carry(doc, k, out, value=api.V1BETA1)
            elif k == "spec":
                _carry(doc, k, out, value=new_spec)
            elif k == "status":
                _carry(doc, k, out, value=new_status)
            elif k != "metadata":
                _carry(doc, k, out)
            else:
                _carry(doc, k, out)  # metadata: replaced below only if annotations change
        self.metadata(out)
        return out, self.problems

    def metadata(self, out: MutableMapping) -> None:
        meta = out.get("metadata")
        anns = meta.get("annotations") if isinstance(meta, Mapping) else None
        stale = [k for k in (anns or {}) if str(k).startswith(CONVERSION_ANNOTATION_PREFIX)]
        for k in stale:
            # ConvertTo reads these as hub (v1beta1) restore data and scrubs them; we cannot
            # replay that, so say so instead of silently keeping or losing what they carry.
            self.problem(f"metadata.annotations.{k}",
                       "conversion bookkeeping written by the operator (this looks like a "
                       "v1alpha1 view of a stored v1beta1 object); removed. Read the object "
                       "as v1beta1 instead (kubectl get dynamographdeployments.v1beta1.nvidia.com)",
                       "warning" if self.force else "error")
        saved = self.preserved_spec() if self.force else None
        if not stale and saved is None:
            return
        if not isinstance(meta, Mapping):
            meta = self.new_map()
        new_meta = self.new_map(meta)
        for k in meta:
            if k != "annotations":
                _carry(meta, k, new_meta)
        new_anns = self.new_map(anns)
        old_anns = anns or {}
        for k in old_anns:
            if k not in stale:
                _carry(old_anns, k, new_anns)
        if saved is not None:
            new_anns[ANN_DGD_SPEC] = saved
        if new_anns:
            if "annotations" in meta:
                _copy_comment(meta, "annotations", new_meta, "annotations")
            new_meta["annotations"] = new_anns
        out["metadata"] = new_meta

    def preserved_spec(self) -> Optional[str]:
        spec: dict[str, Any] = {}
        if self.save_pvcs is not None:
            spec["pvcs"] = _plain(self.save_pvcs)
        if self.save_services:
            services: dict[str, Any] = {}
            for name in sorted(self.save_services):
                fields = self.save_services[name]
                if fields is None:
                    services[name] = None
                    continue
                order = {k: i for i, k in enumerate(_ALPHA_FIELD_ORDER)}
                services[name] = {k: _plain(fields[k])
                                  for k in sorted(fields, key=lambda k: order.get(k, 99))}
            spec["services"] = services
        if not spec:
            return None
        return json.dumps({"version": 1, "spec": spec}, separators=(",", ":"))

    # -- spec --------------------------------------------------------------------------

    def spec(self, spec: Mapping) -> MutableMapping:
        """ConvertFromDynamoGraphDeploymentSpec."""
        out = self.new_map(spec)
        for k in spec:
            v = spec[k]
            path = f"spec.{k}"
            if v is None:
                continue  # explicit null == unset
            if k in ("annotations", "labels", "priorityClassName", "backendFramework",
                     "providerOverride", "restart", "experimental"):
                _carry(spec, k, out)
            elif k == "envs":
                _carry(spec, k, out, "env")
            elif k == "topologyConstraint":
                _carry(spec, k, out, value=self.spec_topology(v))
            elif k == "pvcs":
                if not _empty(v):
                    # graph.go GetDGDPreservedAlphaPVCs: the PVC reconciler still creates them.
                    self.unhomed(path, "v1beta1 has no spec.pvcs; the operator only creates these "
                                       "PVCs from the preserved v1alpha1 data")
                    self.save_pvcs = v
            elif k == "services":
                if isinstance(v, Mapping) and v:
                    _carry(spec, k, out, "components", self.components(v))
            else:
                self.unknown(path)
        return out

    def spec_topology(self, v: Any) -> Any:
        """ConvertFromSpecTopologyConstraint: topologyProfile -> clusterTopologyName."""
        if not isinstance(v, Mapping):
            return v
        out = self.new_map(v)
        for k in v:
            if k == "topologyProfile":
                _carry(v, k, out, "clusterTopologyName")
            elif k == "packDomain":
                _carry(v, k, out)
            else:
                self.unknown(f"spec.topologyConstraint.{k}")
        return out

    def unknown(self, path: str) -> None:
        msg = "not a v1alpha1 field (the API server would prune it); dropped"
        if self.force:
            self.warn(path, msg)
        else:
            self.error(path, msg)

    def components(self, services: Mapping) -> list:
        seq = self.new_seq()
        seen: dict[str, str] = {}
        # Go ranges the map in sorted-key order (sets.List) unless a hub order was preserved,
        # which only happens for objects that originated as v1beta1.
        for name in sorted(services, key=str):
            svc = services[name]
            name = str(name)
            path = f"spec.services.{name}"
            if not _NAME_RE.match(name) or len(name) > 63:
                self.error(path, "component name must match ^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$ "
                                 "and be at most 63 characters in v1beta1")
            if name.lower() in seen:
                self.error(path, f"component names must be unique case-insensitively in v1beta1 "
                                 f"(clashes with {seen[name.lower()]!r})")
            seen[name.lower()] = name
            if svc is None:
                self.unhomed(path, "null service entry has no v1beta1 component")
                self.save_services[name] = None
                continue
            if not isinstance(svc, Mapping):
                self.error(path, "service must be a mapping; dropped")
                continue
            seq.append(self.component(name, svc, path))
        if len(seq) > 25:
            self.error("spec.services", "v1beta1 allows at most 25 components")
        if sum(1 for c in seq if c.get("type") == "epp") > 1:
            self.error("spec.services", "v1beta1 allows at most one epp component")
        return seq

    # -- component ---------------------------------------------------------------------

    def component(self, name: str, svc: Mapping, path: str) -> MutableMapping:
        """ConvertFromDynamoComponentDeploymentSharedSpec."""
        self.current = name
        out = self.new_map(svc)
        out["name"] = name  # the map key is canonical; serviceName is legacy
        ctype = self.component_type(name, svc, path)
        if ctype:
            if "componentType" in svc:
                _copy_comment(svc, "componentType", out, "type")
            out["type"] = ctype

        pod_template = self.pod_template(name, svc, path)
        experimental = self.experimental(name, svc, path)
        cache = self.compilation_cache(name, svc, path, pod_template is not None)

        for k in svc:
            v = svc[k]
            kpath = f"{path}.{k}"
            if k in ("componentType", "subComponentType"):
                continue
            if v is None:
                continue  # explicit null == unset
            if k in _VERBATIM:
                _carry(svc, k, out)
            elif k in _POD_KEYS:
                if pod_template is not None and "podTemplate" not in out:
                    _carry(svc, k, out, "podTemplate", pod_template)
                if k == "volumeMounts" and cache is not None:
                    _carry(svc, k, out, "compilationCache", cache)
                if k == "frontendSidecar" and pod_template is not None:
                    out["frontendSidecar"] = FRONTEND_SIDECAR_CONTAINER
            elif k in _EXPERIMENTAL_KEYS:
                if experimental and "experimental" not in out:
                    _carry(svc, k, out, "experimental", experimental)
            elif k == "sharedMemory":
                size = self.shared_memory(name, v, kpath)
                if size is not None:
                    _carry(svc, k, out, "sharedMemorySize", size)
            elif k == "scalingAdapter":
                if isinstance(v, Mapping) and v.get("enabled"):
                    _carry(svc, k, out, value=self.new_map(v))  # v1beta1: presence == enabled
                else:
                    self.warn(kpath, "disabled scalingAdapter is expressed by absence in v1beta1; "
                                     "omitted")
                    self.save(name, k, v)
            elif k == "serviceName":
                if str(v) != name:
                    self.unhomed(kpath, f"serviceName {v!r} differs from the map key; v1beta1 "
                                        f"names the component {name!r}")
                    self.save(name, k, v)
                else:
                    self.warn(kpath, "redundant with the component name; omitted")
            elif k == "dynamoNamespace":
                # shared_v1alpha1.go: "dynamoNamespace is deprecated and ignored".
                self.warn(kpath, "deprecated and ignored by the operator (the Dynamo namespace "
                                 "comes from the DGD namespace and name); omitted")
                self.save(name, k, v)
            elif k == "autoscaling":
                self.warn(kpath, "deprecated and ignored by the operator (use a "
                                 "DynamoGraphDeploymentScalingAdapter with HPA/KEDA/Planner); "
                                 "omitted")
                self.save(name, k, v)
            elif k in ("annotations", "labels"):
                if not _empty(v):
                    self.unhomed(kpath, f"v1beta1 components have no {k}; the operator applies "
                                        f"them to the component's resources only from the "
                                        f"preserved v1alpha1 data (podTemplate.metadata.{k} "
                                        f"reaches the pods only)")
                    self.save(name, k, v)
            elif k == "ingress":
                self.unhomed(kpath, "v1beta1 has no component ingress; the operator only builds "
                                    "it from the preserved v1alpha1 data")
                self.save(name, k, v)
            else:
                self.unknown(kpath)
        self.check_main_image(out, path)
        return out

    def component_type(self, name: str, svc: Mapping, path: str) -> Optional[str]:
        """sharedComponentTypeToHub: worker+prefill|decode -> prefill|decode."""
        ctype = svc.get("componentType")
        sub = svc.get("subComponentType")
        if ctype == "worker" and sub in ("prefill", "decode"):
            return sub
        if sub:
            # graph.go still labels pods with the preserved subComponentType.
            self.unhomed(f"{path}.subComponentType",
                         f"subComponentType {sub!r} only becomes the v1beta1 type together "
                         f"with componentType 'worker' and prefill|decode")
            self.save(name, "subComponentType", sub)
        if ctype in (None, ""):
            return None
        if ctype not in api.COMPONENT_TYPES:
            # ConvertTo copies it verbatim (the stored object keeps it: DYN_COMPONENT=default);
            # v1beta1's enum rejects it on a direct apply.
            if self.stored:
                return str(ctype)
            self.warn(f"{path}.componentType",
                      f"{ctype!r} is not a v1beta1 type ({'|'.join(api.COMPONENT_TYPES)}); type omitted, "
                      f"so the nvidia.com/dynamo-component-type label is no longer set")
            return None
        return str(ctype)

    def check_main_image(self, comp: Mapping, path: str) -> None:
        tpl = comp.get("podTemplate")
        containers = ((tpl or {}).get("spec") or {}).get("containers") or []
        main = next((c for c in containers if isinstance(c, Mapping) and c.get("name") == MAIN_CONTAINER), None)
        if not (main and main.get("image")):
            self.warn(f"{path}.extraPodSpec.mainContainer.image",
                      "v1beta1 admission requires new components to have a podTemplate container "
                      "'main' with an image")

    def shared_memory(self, name: str, sm: Any, path: str) -> Any:
        """ConvertFromSharedMemorySpec: disabled -> "0", else size; zero size -> omitted."""
        if not isinstance(sm, Mapping):
            self.error(path, "sharedMemory must be a mapping; dropped")
            return None
        for k in sm:
            if k not in ("disabled", "size"):
                self.unknown(f"{path}.{k}")
        size = sm.get("size")
        if sm.get("disabled"):
            if not _quantity_zero(size):
                self.warn(f"{path}.size", "ignored because sharedMemory is disabled; v1beta1 "
                                          "expresses disabled as sharedMemorySize: 0")
                self.save(name, "sharedMemory", sm)
            return "0"
        if _quantity_zero(size):
            self.warn(path, "enabled without a size: v1beta1 has no equivalent, so "
                            "sharedMemorySize is omitted and the operator default applies")
            self.save(name, "sharedMemory", sm)
            return None
        if not _quantity_ok(size):
            self.error(f"{path}.size", f"{size!r} is not a Kubernetes quantity")
        return size

    def compilation_cache(self, name: str, svc: Mapping, path: str, mounted: bool) -> Any:
        """First volumeMount with useAsCompilationCache -> compilationCache{pvcName, mountPath}."""
        mounts = svc.get("volumeMounts")
        if not isinstance(mounts, list):
            return None
        cache = None
        for i, m in enumerate(mounts):
            if not (isinstance(m, Mapping) and m.get("useAsCompilationCache")):
                continue
            if cache is None:
                cache = self.new_map(m)
                if "name" in m:
                    _carry(m, "name", cache, "pvcName")
                if m.get("mountPoint"):
                    _carry(m, "mountPoint", cache, "mountPath")
                continue
            mpath = f"{path}.volumeMounts[{i}].useAsCompilationCache"
            if mounted and m.get("mountPoint"):
                self.warn(mpath, "v1beta1 has one compilationCache (the first flagged mount); this "
                                 "one stays a plain volume mount")
            else:
                self.unhomed(mpath, "v1beta1 has one compilationCache (the first flagged mount); "
                                    "this mount is not carried over")
            self.save(name, "volumeMounts", mounts)
        return cache

    # -- experimental ------------------------------------------------------------------

    def experimental(self, name: str, svc: Mapping, path: str) -> Optional[MutableMapping]:
        """convertExperimentalToHub: enabled gpuMemoryService/failover, any checkpoint."""
        exp = self.new_map(svc)
        for k in _EXPERIMENTAL_KEYS:
            v = svc.get(k)
            if v is None:
                continue
            if not isinstance(v, Mapping):
                self.error(f"{path}.{k}", "must be a mapping; dropped")
                continue
            if k == "checkpoint":
                ck = self.new_map(v)
                ck["enabled"] = bool(v.get("enabled", False))  # required in v1beta1
                if "enabled" in v:
                    _copy_comment(v, "enabled", ck, "enabled")
                for kk in v:
                    if kk != "enabled":
                        _carry(v, kk, ck)
                _carry(svc, k, exp, value=ck)
                continue
            if not v.get("enabled"):
                self.warn(f"{path}.{k}", "disabled; v1beta1 expresses that by absence, omitted")
                self.save(name, k, v)
                continue
            new = self.new_map(v)
            for kk in v:
                if kk == "enabled":
                    continue
                if kk == "mode":
                    _carry(v, kk, new, value=_GMS_MODES.get(v[kk], v[kk]))
                else:
                    _carry(v, kk, new)
            _carry(svc, k, exp, value=new)
        return exp or None

    # -- podTemplate -------------------------------------------------------------------

    def pod_template(self, name: str, svc: Mapping, path: str) -> Optional[MutableMapping]:
        """buildSharedPodTemplateFromAlpha."""
        eps = svc.get("extraPodSpec")
        eps = eps if isinstance(eps, Mapping) else None
        mc = eps.get("mainContainer") if eps else None
        mc = mc if isinstance(mc, Mapping) else None
        epm = svc.get("extraPodMetadata")
        fs = svc.get("frontendSidecar")
        mounts = svc.get("volumeMounts")
        mounts = mounts if isinstance(mounts, list) else []
        # hasPodTemplateContent
        if not (svc.get("resources") is not None or not _empty(svc.get("envs"))
                or svc.get("envFromSecret") is not None
                or any(isinstance(m, Mapping) and not m.get("useAsCompilationCache") for m in mounts)
                or svc.get("livenessProbe") is not None or svc.get("readinessProbe") is not None
                or (eps is not None and not _eps_zero(eps)) or epm is not None or fs is not None):
            return None

        tpl = self.new_map(eps if eps is not None else svc)
        if isinstance(epm, Mapping):
            meta = self.new_map(epm)
            for k in epm:
                if k in ("annotations", "labels"):
                    if not _empty(epm[k]):
                        _carry(epm, k, meta)
                else:
                    self.unknown(f"{path}.extraPodMetadata.{k}")
            if meta:
                _carry(svc, "extraPodMetadata", tpl, "metadata", meta)

        main = self.main_container(svc, mc, path)
        eps_items: Mapping = eps or {}
        containers = self.new_seq(eps_items.get("containers"))
        containers.append(main)
        for i, c in enumerate(eps_items.get("containers") or []):
            if isinstance(c, Mapping) and c.get("name") == MAIN_CONTAINER:
                self.error(f"{path}.extraPodSpec.containers[{i}]",
                           "a container named 'main' is replaced by the converted main container "
                           "(merge it into extraPodSpec.mainContainer)")
                continue
            containers.append(c)
        if isinstance(fs, Mapping):
            if any(isinstance(c, Mapping) and c.get("name") == FRONTEND_SIDECAR_CONTAINER for c in containers):
                self.unhomed(f"{path}.frontendSidecar",
                             f"extraPodSpec already has a {FRONTEND_SIDECAR_CONTAINER!r} container, "
                             f"which wins; this frontendSidecar spec is not used")
                self.save(name, "frontendSidecar", fs)
            else:
                containers.append(self.frontend_sidecar(fs, f"{path}.frontendSidecar"))

        spec = self.new_map(eps if eps is not None else svc)
        # containers take the place of mainContainer/containers, else go first.
        if not any(k in ("mainContainer", "containers") for k in eps_items):
            spec["containers"] = containers
        for k in eps_items:
            if k in ("mainContainer", "containers"):
                if "containers" not in spec:
                    _carry(eps_items, k, spec, "containers", containers)
            else:
                _carry(eps_items, k, spec)
        if eps is not None:
            _carry(svc, "extraPodSpec", tpl, "spec", spec)
        else:
            tpl["spec"] = spec
        return tpl

    def frontend_sidecar(self, fs: Mapping, path: str) -> MutableMapping:
        """appendFrontendSidecar: the generated v1alpha1 frontend sidecar container."""
        c = self.new_map(fs)
        c["name"] = FRONTEND_SIDECAR_CONTAINER
        for k in fs:
            if k == "image":
                _carry(fs, k, c)
            elif k == "args":
                if not _empty(fs[k]):
                    _carry(fs, k, c)
            elif k == "envs":
                if not _empty(fs[k]):
                    _carry(fs, k, c, "env")
            elif k == "envFromSecret":
                if fs[k]:
                    _carry(fs, k, c, "envFrom", self.secret_env_from(fs[k]))
            else:
                self.unknown(f"{path}.{k}")
        return c

    def secret_env_from(self, secret: Any) -> list:
        seq = self.new_seq()
        ref = self.new_map()
        ref["name"] = secret
        src = self.new_map()
        src["secretRef"] = ref
        seq.append(src)
        return seq

    def main_container(self, svc: Mapping, mc: Optional[Mapping], path: str) -> MutableMapping:
        """buildMainContainerFromDedicated + mergeExtraPodSpecMainContainer."""
        base = self.new_map(svc)  # dedicated fields, in the service's key order
        for k in svc:
            v = svc[k]
            if v is None:
                continue
            if k == "resources":
                res = self.resources(svc[k], f"{path}.resources", svc)
                if res:  # an empty ResourceRequirements marshals to nothing
                    _carry(svc, k, base, value=res)
            elif k == "envs" and not _empty(v):
                _carry(svc, k, base, "env")
            elif k == "envFromSecret" and v != "":
                _carry(svc, k, base, "envFrom", self.secret_env_from(v))
            elif k in ("livenessProbe", "readinessProbe"):
                _carry(svc, k, base)
            elif k == "volumeMounts" and isinstance(v, list):
                vms = self.new_seq(v)
                for i, m in enumerate(v):
                    if not isinstance(m, Mapping):
                        self.error(f"{path}.volumeMounts[{i}]", "must be a mapping; dropped")
                        continue
                    for kk in m:
                        if kk not in ("name", "mountPoint", "useAsCompilationCache"):
                            self.unknown(f"{path}.volumeMounts[{i}].{kk}")
                    if not m.get("mountPoint"):
                        if not m.get("useAsCompilationCache"):
                            self.error(f"{path}.volumeMounts[{i}].mountPoint",
                                       "required when useAsCompilationCache is false; dropped")
                        # A cache mount without a path is mounted by compilationCache at the
                        # backend default (graph.go applyCompilationCache).
                        continue
                    vm = self.new_map(m)
                    if "name" in m:
                        _carry(m, "name", vm)
                    _carry(m, "mountPoint", vm, "mountPath")
                    vms.append(vm)
                if vms:
                    _carry(svc, k, base, "volumeMounts", vms)

        main = self.new_map(mc if mc is not None else svc)
        main["name"] = MAIN_CONTAINER
        if mc is None:
            for k in base:
                _carry(base, k, main)
            return main

        if mc.get("name") and mc.get("name") != MAIN_CONTAINER:
            self.warn(f"{path}.extraPodSpec.mainContainer.name",
                      f"v1beta1 always names this container {MAIN_CONTAINER!r}; {mc.get('name')!r} "
                      f"is replaced")
        if "name" in mc:
            _copy_comment(mc, "name", main, "name")
        for k in mc:
            v = mc[k]
            if k == "name":
                continue
            if k == "env":
                _carry(mc, k, main, value=self.merge_envs(base.get("env"), v))
            elif k == "volumeMounts":
                # v1alpha1 rendered mainContainer mounts first, then the service-level ones.
                merged = self.new_seq(v)
                merged.extend(v or [])
                merged.extend(base.get("volumeMounts") or [])
                _carry(mc, k, main, value=merged if merged else v)
            elif k in base and _empty(v):
                _carry(base, k, main)
            elif k in base and isinstance(base[k], Mapping) and isinstance(v, Mapping):
                _carry(mc, k, main, value=_merge_override(base[k], v, self.new_map))
            else:
                _carry(mc, k, main)
        for k in base:
            if k not in main:
                # mergeEnvs runs whenever mainContainer is set, so service envs get de-duplicated.
                _carry(base, k, main, value=self.merge_envs(base[k], None) if k == "env" else base[k])
        if "env" in main and main["env"] is None:
            del main["env"]
        for k in ("livenessProbe", "readinessProbe"):
            probe = main.get(k)
            if isinstance(probe, Mapping) and sum(h in probe for h in _PROBE_HANDLERS) > 1:
                self.warn(f"{path}.{k}", f"merged with extraPodSpec.mainContainer.{k} field by field "
                                         "(as upstream), which leaves more than one probe handler; "
                                         "set the probe in one place")
        return main

    def merge_envs(self, common: Any, specific: Any) -> Any:
        """MergeEnvs: concatenate, de-duplicate by name, later (mainContainer) wins in place."""
        common = common or []
        specific = specific or []
        out = self.new_seq(common if common else specific)
        index: dict[Any, int] = {}
        for e in list(common) + list(specific):
            key = e.get("name") if isinstance(e, Mapping) else id(e)
            if key in index:
                out[index[key]] = e
            else:
                index[key] = len(out)
                out.append(e)
        # Keep the original list object (and its comments) when nothing changed.
        if not specific and len(out) == len(common):
            return common
        if not common and len(out) == len(specific):
            return specific
        return out if out else None

    def resources(self, res: Any, path: str, svc: Mapping) -> Any:
        """resourcesToNative: {requests,limits}.{cpu,memory,gpu,gpuType,custom} -> ResourceList."""
        if not isinstance(res, Mapping):
            self.error(path, "resources must be a mapping; dropped")
            return None
        out = self.new_map(res)
        lossy = False
        for k in res:
            v = res[k]
            if k in ("requests", "limits"):
                if not isinstance(v, Mapping):
                    if v is not None:
                        self.error(f"{path}.{k}", "must be a mapping; dropped")
                    continue
                lst = self.new_map(v)
                for kk in v:
                    q = v[kk]
                    qpath = f"{path}.{k}.{kk}"
                    if kk == "gpuType":
                        continue
                    if kk == "custom":
                        items = q.items() if isinstance(q, Mapping) else []
                        for name, cq in items:
                            lossy |= not self.put_quantity(lst, str(name), cq, f"{qpath}.{name}", q, name)
                        continue
                    if kk in ("cpu", "memory"):
                        key = kk
                    elif kk == "gpu":
                        key = v.get("gpuType") or api.GPU_RESOURCE
                    else:
                        self.unknown(qpath)
                        continue
                    if q in (None, ""):
                        continue
                    lossy |= not self.put_quantity(lst, str(key), q, qpath, v, kk)
                if lst:
                    _carry(res, k, out, value=lst)
            elif k == "claims":
                if not _empty(v):
                    _carry(res, k, out)
            else:
                self.unknown(f"{path}.{k}")
        if lossy:
            self.save(self.current, "resources", res)
        return out

    def put_quantity(self, lst: MutableMapping, key: str, q: Any, qpath: str,
                     src: Mapping, skey: Any) -> bool:
        if not _quantity_ok(q):
            # ParseQuantity fails and resourcesToNative skips the entry silently upstream.
            self.unhomed(qpath, f"{q!r} is not a Kubernetes quantity, so it has no place in the "
                                f"main container's resources")
            return False
        if key in lst:
            self.warn(qpath, f"sets {key!r} again; this value wins (as upstream)")
        _carry(src, skey, lst, key, q)
        return True

    # -- status ------------------------------------------------------------------------

    def status(self, st: Mapping) -> MutableMapping:
        """ConvertFromDynamoGraphDeploymentStatus: services -> components, renamed fields."""
        out = self.new_map(st)
        for k in st:
            v = st[k]
            if k == "services" and isinstance(v, Mapping):
                comps = self.new_map(v)
                for name in v:
                    s = v[name]
                    if not isinstance(s, Mapping):
                        _carry(v, name, comps)
                        continue
                    c = self.new_map(s)
                    for kk in s:
                        if kk == "componentName":
                            continue
                        _carry(s, kk, c)
                    if not s.get("componentNames") and s.get("componentName"):
                        seq = self.new_seq()
                        seq.append(s["componentName"])
                        c["componentNames"] = seq
                    _carry(v, name, comps, value=c)
                _carry(st, k, out, "components", comps)
            elif k == "rollingUpdate" and isinstance(v, Mapping):
                ru = self.new_map(v)
                for kk in v:
                    _carry(v, kk, ru, "updatedComponents" if kk == "updatedServices" else kk)
                _carry(st, k, out, value=ru)
            else:
                _carry(st, k, out)
        return out


def _eps_zero(eps: Mapping) -> bool:
    """extraPodSpecIsZero: no PodSpec field set and a mainContainer with at most a name."""
    for k, v in eps.items():
        if k == "mainContainer":
            if isinstance(v, Mapping) and any(not _empty(x) for kk, x in v.items() if kk != "name"):
                return False
        elif not _empty(v):
            return False
    return True
