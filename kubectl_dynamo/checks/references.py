"""Every name a DGD's pods refer to exists, before the kubelet says otherwise.

A pod names Secrets and ConfigMaps (volumes, ``envFrom``, ``env[].valueFrom``, ``imagePullSecrets``;
``model/references.needs``) that are resolved only when a container starts or an image is pulled: a missing one
shows nowhere until the kubelet tries (``CreateContainerConfigError``, ``FailedMount``, an anonymous pull that
the registry refuses: kubernetes@v1.33 pkg/kubelet/kuberuntime ``FailedToRetrieveImagePullSecret``). doctor
lists the namespace's ConfigMaps by name and reads each referenced Secret by name (keys only), so it can name
the missing one at once. The MPI SSH secret and the wait-leader ConfigMap have their own checks.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Tuple

from kubectl_dynamo.checks.registry import Finding, check

# how each reference is used, for the message (the kubelet's consequence)
EFFECT = {"image": "the kubelet pulls its image without it: a private registry refuses the pull (ImagePullBackOff)",
          "start": "a container that (re)starts cannot: CreateContainerConfigError / FailedMount"}


def configmaps_unread(snap) -> bool:
    """ConfigMaps could not be listed: the snapshot's required list is [] then, which proves nothing missing."""
    return any(d.get("resource") == "configmaps" for d in snap.denied) or any(
        x.get("check") == "configmaps" for x in snap.skipped)


@check("reference-missing", scope="dgd")
def reference_missing(view) -> Iterator[Finding]:
    """A Secret or ConfigMap the DGD's pods name does not exist."""
    from kubectl_dynamo.model.references import needs

    snap = view.snapshot
    configmaps = None if snap.configmaps is None or configmaps_unread(snap) else {
        ((c.get("metadata") or {}).get("namespace"), (c.get("metadata") or {}).get("name")) for c in snap.configmaps}
    own = {("Secret", view.secret_name), ("ConfigMap", f"{view.name}-wait-leader-script")}  # their own checks
    missing: Dict[Tuple[str, str, str], List[str]] = {}
    for c in view.components:
        for g in c.groups.values():
            for p in g.pods:
                pulls = {r.get("name") for r in p.spec.get("imagePullSecrets") or []}
                for kind, name, optional in needs(p.raw):
                    if optional or (kind, name) in own or kind not in ("Secret", "ConfigMap"):
                        continue
                    if kind == "Secret":
                        gone = (p.namespace, name) in snap.secrets and snap.secrets[(p.namespace, name)] is None
                    else:
                        gone = configmaps is not None and (p.namespace, name) not in configmaps
                    if gone:
                        how = "image" if kind == "Secret" and name in pulls else "start"
                        missing.setdefault((kind, name, how), []).append(p.name)
    for (kind, name, how), pods in sorted(missing.items()):
        shown = ", ".join(pods[:3]) + (f" and {len(pods) - 3} more" if len(pods) > 3 else "")
        field = "imagePullSecrets" if how == "image" else "a volume, envFrom or env valueFrom"
        yield Finding("reference-missing", "error" if how == "start" and not all_running(view, pods) else "warning",
                      f"{kind} {view.namespace}/{name} does not exist; pod{'s' if len(pods) > 1 else ''} {shown} "
                      f"name{'' if len(pods) > 1 else 's'} it in {field}: {EFFECT[how]}",
                      f"create {kind} {name} in namespace {view.namespace} (kubectl create {kind.lower()} ...), or "
                      f"remove it from the component's podTemplate {field}",
                      object={"kind": kind, "namespace": view.namespace, "name": name}, where=view.where())


def all_running(view, names: List[str]) -> bool:
    """Every named pod runs: the missing name bites at its next (re)start, not now (a warning)."""
    pods = {p.name: p for c in view.components for g in c.groups.values() for p in g.pods}
    return all(pods[n].status.get("phase") == "Running" for n in names if n in pods)

