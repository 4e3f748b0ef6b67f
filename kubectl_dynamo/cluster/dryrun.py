"""Server-side dry runs of generated or upgraded DGDs: the API server judges them, nothing is stored."""

from __future__ import annotations

import json
from typing import Optional

from kubectl_dynamo.cluster.client import Cluster
from kubectl_dynamo.cluster.kinds import DGD
from kubectl_dynamo.errors import DynamoError, InvalidContent, NotFound


def server_dry_run(cluster: Cluster, doc: dict, namespace: Optional[str] = None) -> str:
    """Send the DGD as a server-side dry run; return ``namespace/name (created|updated)``.

    A create is ``POST …/dynamographdeployments?dryRun=All``. When the object already exists (a
    live DGD being upgraded) the create answers AlreadyExists, so the dry run becomes a
    server-side apply of the manifest onto it, which is what ``kubectl apply`` would do.
    Rejections raise InvalidContent with the server's own message; unreachable/unauthorized keep
    their exit code.
    """
    meta = doc.get("metadata") or {}
    name = meta.get("name")
    namespace = meta.get("namespace") or namespace or cluster.namespace
    version = str(doc.get("apiVersion")).split("/", 1)[-1]
    body = json.loads(json.dumps(doc, default=str))  # ruamel trees -> plain JSON
    body.setdefault("metadata", {})["namespace"] = namespace
    # Strict like kubectl: an unknown field (e.g. roles on a pre-1.6 CRD) is an error, not a silent prune.
    params = {"dryRun": "All", "fieldValidation": "Strict"}

    def rejected(e: DynamoError):
        if getattr(e, "status", None) is None:
            raise e  # unreachable / unauthorized keep their own exit codes
        body = getattr(e, "body", None)
        server = body.get("message") if isinstance(body, dict) else None
        return InvalidContent(f"server dry run rejected {name}: {server or e.message}")

    try:
        cluster.request("POST", DGD.path(namespace, version=version), params=params,
                        body=body)
        return f"{namespace}/{name} (created)"
    except NotFound as e:
        raise InvalidContent(f"server dry run: {doc.get('apiVersion')} dynamographdeployments is not served by the "
                             f"cluster (is the Dynamo CRD installed?): {e.message}") from None
    except DynamoError as e:
        if getattr(e, "status", None) != 409:
            raise rejected(e) from None
    try:
        cluster.request("PATCH", DGD.path(namespace, name, version=version),
                        params={**params, "fieldManager": "kubectl-dynamo", "force": "true"},
                        body=json.dumps(body), content_type="application/apply-patch+yaml")
    except DynamoError as e:
        raise rejected(e) from None
    return f"{namespace}/{name} (updated)"
