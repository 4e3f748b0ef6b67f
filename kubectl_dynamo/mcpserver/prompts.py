"""The MCP prompts: the three questions people ask, each as the tool calls that answer it."""

from __future__ import annotations

from typing import Dict, NamedTuple, Tuple


class Prompt(NamedTuple):
    name: str
    title: str
    description: str
    arguments: Tuple[Tuple[str, str, bool], ...]  # (name, description, required)
    template: str

    def render(self, arguments: Dict[str, str]) -> str:
        values = {a: arguments.get(a) or "" for a, _, _ in self.arguments}
        ns = values.get("namespace")
        values["ns"] = f', "namespace": "{ns}"' if ns else ""
        values["where"] = f" in namespace {ns}" if ns else ""
        if "manifest" in values and values["manifest"]:
            values["manifest"] = "\nThe manifest:\n```yaml\n" + values["manifest"].rstrip() + "\n```"
        return self.template.format(**values)


PROMPTS = (
    Prompt("dgd-not-serving", "Why is this DGD not serving?",
           "Diagnose a DynamoGraphDeployment that does not answer requests: findings, lineage, logs.",
           (("name", "The DGD's name.", True), ("namespace", "Its namespace (default: the context's).", False)),
           "The DynamoGraphDeployment {name}{where} is not serving. Find out why with the kubectl-dynamo tools:\n"
           '1. Call doctor with {{"name": "{name}"{ns}}}. Its findings come root causes first; each names the object, '
           "the actor that did not act and a fix. Start from the first error.\n"
           '2. Call tree with {{"name": "{name}"{ns}}} to see which group, rank or pod is missing, Pending or not '
           "Ready.\n"
           '3. For a rank that crashes or never gets Ready, call logs with {{"name": "{name}"{ns}, "rank": N}} '
           "(and \"previous\": true after restarts).\n"
           '4. If a rollout is in progress, call rollout_status with {{"name": "{name}"{ns}}}.\n'
           "Answer with the one root cause, the evidence you read (finding ids and codes, objects), and the fix. "
           "Do not change the cluster; these tools cannot."),
    Prompt("manifest-check", "Is this manifest going to work?",
           "Check a DGD manifest offline: what the operator renders, and what it would refuse.",
           (("path", "The manifest file or directory (or paste it as manifest).", False),
            ("manifest", "The manifest's YAML text.", False)),
           "Check whether this DynamoGraphDeployment manifest will work before it is applied.\n"
           "1. Call explain with the manifest ({{\"path\": \"{path}\"}} or {{\"manifest\": ...}}): its findings "
           "of severity error are what the operator or the API server would refuse or mis-render (TP x PP against "
           "nodes x GPUs, names, pod templates); read the rendered launch line of each leader and worker.\n"
           "2. If the manifest is nvidia.com/v1alpha1, call upgrade the same way to see its v1beta1 form.\n"
           "3. If a cluster is at hand, call detect: which orchestrator the operator will pick, and whether the "
           "queues and gates it needs exist.\n"
           "Answer: will it work, and if not, each problem with its fix.\n{manifest}"),
    Prompt("gang-pending", "Why is this gang Pending?",
           "Why a multinode group's pods stay Pending: gang scheduling, queues, GPUs, placement.",
           (("name", "The DGD's name.", True), ("namespace", "Its namespace (default: the context's).", False)),
           "The pods of DynamoGraphDeployment {name}{where} stay Pending. Find the one dominant reason:\n"
           '1. Call doctor with {{"name": "{name}"{ns}}}: scheduling findings (queue missing, gang partial, GPUs '
           "not advertised, quota, node selectors) name the scheduler or controller that did not act.\n"
           "2. Call placement: every GPU node's allocatable, who holds its GPUs, what the pending gangs wait for.\n"
           '3. Call tree with {{"name": "{name}"{ns}}} to see the PodGang or PodGroup and which ranks exist.\n'
           "Answer with the one dominant reason, the evidence you read, and a concrete next step."),
)

BY_NAME = {p.name: p for p in PROMPTS}
