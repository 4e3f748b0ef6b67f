"""What a pod refers to by name: pure, from the pod as the API server returns it (or doctor's compact pod).

``tree`` shows each reference present or missing, doctor's ``reference-missing`` names the missing ones
(checks/references.py) and reads each referenced Secret by name (model/views.needed_secrets).
"""

from __future__ import annotations

from typing import List, Tuple


def needs(pod: dict) -> List[Tuple[str, str, bool]]:
    """(kind, name, optional) of what a pod cannot start or resolve its group without: its subdomain's
    headless Service, the ConfigMaps and Secrets it mounts or reads (volumes, env, image pulls), its
    ServiceAccount, PersistentVolumeClaims and PriorityClass, found the way the pod references them."""
    spec = pod.get("spec") or {}
    out: List[Tuple[str, str, bool]] = []
    if spec.get("subdomain"):
        out.append(("Service", spec["subdomain"], False))
    for v in spec.get("volumes") or []:
        if v.get("configMap"):
            out.append(("ConfigMap", v["configMap"].get("name"), bool(v["configMap"].get("optional"))))
        if v.get("secret"):
            out.append(("Secret", v["secret"].get("secretName"), bool(v["secret"].get("optional"))))
        for src in (v.get("projected") or {}).get("sources") or []:
            if src.get("configMap"):
                out.append(("ConfigMap", src["configMap"].get("name"), bool(src["configMap"].get("optional"))))
            if src.get("secret"):
                out.append(("Secret", src["secret"].get("name"), bool(src["secret"].get("optional"))))
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        for ef in c.get("envFrom") or []:
            for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
                if ef.get(key):
                    out.append((kind, ef[key].get("name"), bool(ef[key].get("optional"))))
        for env in c.get("env") or []:
            ref = env.get("valueFrom") or {}
            for key, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
                if ref.get(key):
                    out.append((kind, ref[key].get("name"), bool(ref[key].get("optional"))))
    for s in spec.get("imagePullSecrets") or []:
        out.append(("Secret", s.get("name"), False))
    # what admission and the scheduler refuse the pod without (checks/causes.py reads their refusals)
    account = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if account and account != "default":  # the namespace's default one always exists
        out.append(("ServiceAccount", account, False))
    for v in spec.get("volumes") or []:
        if (v.get("persistentVolumeClaim") or {}).get("claimName"):
            out.append(("PersistentVolumeClaim", v["persistentVolumeClaim"]["claimName"], False))
    if spec.get("priorityClassName"):
        out.append(("PriorityClass", spec["priorityClassName"], False))
    seen, unique = set(), []
    for kind, name, optional in out:
        if name and (kind, name) not in seen:
            seen.add((kind, name))
            unique.append((kind, name, optional))
    return unique
