"""The real LWS and Volcano charts, and test charts shaped like the real ones where no real chart is
reachable here (Grove, KAI Scheduler, the Dynamo platform), packaged with the real ``helm package``.

Real: ``real_charts`` packages ``charts/lws`` of sigs.k8s.io/lws and ``installer/helm/chart/volcano``
of volcano.sh/volcano at the versions scripts/versions.env pins, as ``scripts/sandbox build`` caches
them next to the controllers it builds from the same modules (Apache-2.0, LICENSE alongside).

Shaped: each carries the real CRDs (tests/data/crds/<project>) and the controller objects an
install leaves (world.py's ``controllers()``, templated with the release name and namespace), so
``install --chart-source DIR`` runs the very code path a user runs against the published charts:
- grove-charts, kai-scheduler: CRDs in crds/ (Helm installs them first and never deletes them);
- kai-scheduler: ``default-parent-queue``/``default-queue`` on install, kept on uninstall;
- dynamo-platform: the operator Deployment + config ConfigMap from ``global.grove.*`` and
  ``global.kai-scheduler.*``, grove and kai as subcharts guarded by ``global.grove.install`` and
  ``global.kai-scheduler.install``, and the ``dynamo-default``/``dynamo`` queues as post-install hooks
  when the KAI API is served and they are missing (the real template's condition).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import yaml

from tests.conftest import REPO, SANDBOX
from tests.integration import world as w

NS, REL = "__RELEASE_NAMESPACE__", "__RELEASE_NAME__"
DGD_CRD = REPO / "kubectl_dynamo" / "data" / "crds" / "nvidia.com_dynamographdeployments.yaml"


def helm_binary() -> str:
    return subprocess.run(["bash", str(SANDBOX), "bin", "helm"], capture_output=True, text=True,
                          check=True).stdout.strip()


def pinned(key: str) -> str:
    """A version from scripts/versions.env (the one place it is pinned)."""
    for line in (REPO / "scripts" / "versions.env").read_text().splitlines():
        if line.startswith(f"{key}="):
            return line.split("=", 1)[1].split()[0]
    raise KeyError(key)


def cached_chart(project: str) -> Path:
    """The chart ``scripts/sandbox build`` copied out of the module next to the binaries."""
    binary = {"lws": "lws", "volcano": "volcano-scheduler"}[project]
    path = subprocess.run(["bash", str(SANDBOX), "bin", binary], capture_output=True, text=True,
                          check=True).stdout.strip()
    chart = Path(path).parent / "chart"
    assert (chart / "Chart.yaml").is_file(), f"{chart} is missing: run scripts/sandbox build"
    return chart


def real_charts(helm: str, out: Path, *, template_error: bool = False) -> Path:
    """Package the real LWS and Volcano charts into ``out`` (the --chart-source directory);
    ``template_error`` adds one template to the LWS chart that helm cannot render."""
    src = out.parent / (out.name + "-src")
    out.mkdir(parents=True, exist_ok=True)
    lws, version = src / "lws", pinned("LWS_VERSION")
    shutil.copytree(cached_chart("lws"), lws)
    # What kubernetes-sigs/lws hack/push-chart.sh (v0.9.0) does to release a tag: image tag and chart
    # version = the tag, pullPolicy IfNotPresent (the repository is already registry.k8s.io/lws/lws).
    values = (lws / "values.yaml").read_text()
    for old, new in (("    tag: main\n", f"    tag: {version}\n"),
                     ("    pullPolicy: Always\n", "    pullPolicy: IfNotPresent\n")):
        assert values.count(old) == 1, f"charts/lws/values.yaml no longer has {old!r}"
        values = values.replace(old, new)
    (lws / "values.yaml").write_text(values)
    if template_error:
        (lws / "templates" / "broken.yaml").write_text('{{ include "lws.no-such-template" . }}\n')
    package(helm, lws, out, "--version", version, "--app-version", version)
    package(helm, cached_chart("volcano"), out)  # published as is: Chart.yaml says 1.10.0
    return out


def _template(docs, replace=()) -> str:
    """YAML for templates/: the world objects with the release name/namespace put back as Helm
    expressions."""
    text = yaml.safe_dump_all(docs, sort_keys=False)
    for old, new in ((NS, "{{ .Release.Namespace }}"), (REL, "{{ .Release.Name }}"), *replace):
        text = text.replace(old, new)
    return text


def _deployments(project, version, rename=None):
    out = []
    for d in w.controllers(project, version):
        if d["kind"] != "Deployment":
            continue
        d = json.loads(json.dumps(d))
        d["metadata"]["namespace"] = NS
        if rename:
            d["metadata"]["name"] = rename(d["metadata"]["name"])
        for labels in (d["metadata"]["labels"], d["spec"]["template"]["metadata"]["labels"]):
            for k in labels:
                if k in ("release", "app.kubernetes.io/instance"):
                    labels[k] = REL
        out.append(d)
    return out


def _write(root: Path, files: dict) -> Path:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copyfile(content, p)
        else:
            p.write_text(content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False))
    return root


def _chart_yaml(name, version, app_version=None, **extra):
    return {"apiVersion": "v2", "name": name, "version": version, "appVersion": app_version or version,
            "type": "application", **extra}


def _crds(project, into="crds"):
    return {f"{into}/{f.name}": f for f in w.crd_files(project)}


def grove_chart(root: Path, version: str) -> Path:
    return _write(root, {"Chart.yaml": _chart_yaml("grove-charts", version), "values.yaml": {"replicaCount": 1},
                         **_crds("grove"), "templates/deployment.yaml": _template(_deployments("grove", version))})


def kai_chart(root: Path, version: str) -> Path:
    deps = _deployments("kai", version)
    scheduler = deps[1]["spec"]["template"]["spec"]["containers"][0]
    scheduler["args"] = ["__SCHEDULER_ARGS__"]
    queues = w.kai_queues(with_dynamo=False)
    for q in queues:
        q["metadata"]["annotations"] = {"helm.sh/resource-policy": "keep"}
    args = ('{{- range $k, $v := .Values.scheduler.args }}\n        - "--{{ $k }}={{ $v }}"\n'
            '        {{- end }}')
    return _write(root, {
        "Chart.yaml": _chart_yaml("kai-scheduler", version),
        "values.yaml": {"scheduler": {"args": {}}, "defaultQueue": {"createDefaultQueue": True}},
        **_crds("kai"),
        "templates/operator.yaml": _template(deps, replace=(("- __SCHEDULER_ARGS__", args.lstrip()),)),
        # like the real chart: created on install only, kept on uninstall
        "templates/default-queue.yaml": "{{- if and .Values.defaultQueue.createDefaultQueue .Release.IsInstall }}\n"
                                        + _template(queues) + "{{- end }}\n"})


def platform_chart(root: Path, version: str, grove_tgz: Path, kai_tgz: Path,
                   grove_version: str, kai_version: str) -> Path:
    op = w.dynamo_operator(version=version, ns=NS, release=REL)
    config, deployment = op[1], op[2]
    config["data"]["config.yaml"] = "__CONFIG__"
    deployment["spec"]["template"]["spec"]["containers"][1]["image"] = \
        "nvcr.io/nvidia/ai-dynamo/kubernetes-operator:{{ .Chart.AppVersion }}"
    deployment["spec"]["template"]["spec"]["containers"][1]["args"][1] = "--operator-version={{ .Chart.AppVersion }}"
    for labels in (deployment["metadata"]["labels"], deployment["spec"]["template"]["metadata"]["labels"]):
        labels["app.kubernetes.io/version"] = "{{ .Chart.AppVersion }}"
    kai = 'index .Values.global "kai-scheduler"'
    config_text = ("|\n    apiVersion: operator.config.dynamo.nvidia.com/v1alpha1\n"
                   "    kind: OperatorConfiguration\n    orchestrators:\n"
                   f"      kaiScheduler:\n        enabled: {{{{ or ({kai}).enabled ({kai}).install }}}}\n"
                   "      volcanoScheduler:\n        enabled: {{ (index .Values.global \"volcano-scheduler\").enabled }}\n"
                   "      grove:\n        enabled: {{ or .Values.global.grove.enabled .Values.global.grove.install }}")
    res = {k: {"quota": -1, "limit": -1, "overQuotaWeight": 1} for k in ("cpu", "gpu", "memory")}
    queue_hooks = ['{{- if .Capabilities.APIVersions.Has "scheduling.run.ai/v2" }}']
    for name, parent, weight in (("dynamo-default", None, "100"), ("dynamo", "dynamo-default", "110")):
        q = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
             "metadata": {"name": name, "annotations": {
                 "helm.sh/hook": "post-install,post-upgrade", "helm.sh/hook-weight": weight,
                 "helm.sh/hook-delete-policy": "before-hook-creation"}},
             "spec": {**({"parentQueue": parent} if parent else {}), "resources": res}}
        queue_hooks += [f'{{{{- if not (lookup "scheduling.run.ai/v2" "Queue" "" "{name}") }}}}', "---",
                        yaml.safe_dump(q, sort_keys=False).rstrip(), "{{- end }}"]
    queue_hooks.append("{{- end }}")
    charts = root / "charts"
    charts.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(grove_tgz, charts / grove_tgz.name)
    shutil.copyfile(kai_tgz, charts / kai_tgz.name)
    return _write(root, {
        "Chart.yaml": _chart_yaml("dynamo-platform", version, kubeVersion=">=1.30.0-0", dependencies=[
            {"name": "grove-charts", "alias": "grove", "version": grove_version, "repository": "",
             "condition": "global.grove.install"},
            {"name": "kai-scheduler", "version": kai_version, "repository": "",
             "condition": "global.kai-scheduler.install"}]),
        "values.yaml": {"global": {"grove": {"install": False, "enabled": False},
                                   "kai-scheduler": {"install": False, "enabled": False},
                                   "volcano-scheduler": {"enabled": False}}},
        f"crds/{DGD_CRD.name}": w.dgd_crd(),  # with 1.6.0's roles, as the chart of a 1.6 operator
        "templates/operator.yaml": _template([config, deployment], replace=(('__CONFIG__', config_text),)),
        "templates/kai.yaml": "\n".join(queue_hooks) + "\n"})


def package(helm: str, chart_dir: Path, out: Path, *flags: str) -> Path:
    proc = subprocess.run([helm, "package", str(chart_dir), "--destination", str(out), *flags],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise AssertionError(f"helm package {chart_dir.name} failed: {proc.stderr}")
    return Path(proc.stdout.strip().rsplit(" ", 1)[-1])


def build_all(helm: str, out: Path, *, platform="1.6.0", grove="v0.1.0-alpha.15", kai="v0.17.0") -> Path:
    """Package the shaped Grove, KAI and platform charts into ``out`` (the --chart-source directory)."""
    src = out.parent / (out.name + "-src")
    out.mkdir(parents=True, exist_ok=True)
    grove_tgz = package(helm, grove_chart(src / "grove", grove), out)
    kai_tgz = package(helm, kai_chart(src / "kai", kai), out)
    package(helm, platform_chart(src / "platform", platform, grove_tgz, kai_tgz, grove, kai), out)
    return out
