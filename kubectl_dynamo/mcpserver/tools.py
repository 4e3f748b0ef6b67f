"""The MCP tools: each is a read-only command line of the plugin, its arguments a JSON object.

A tool is a table, not code: its parameters say which flag or positional argument each JSON key
becomes, and the input schema is derived from the same table, so what a client may send and what
the command line receives cannot drift apart. Nothing here runs a command or imports the MCP SDK
(``server.py`` does both); ``tests/unit/test_mcp.py`` checks every tool against the CLI.

Left out on purpose: ``install`` (it writes), ``upgrade --write``, ``generate --file``, any
``--dry-run=server`` (it sends objects to the API server), ``doctor --exec`` (it execs into pods),
``logs -f``, ``get -w`` and ``rollout status --watch`` (they never end), and every connection flag:
the server's ``--kubeconfig`` and ``--context`` are the only ones a call runs with.
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

NAME = {"type": "string", "minLength": 1, "maxLength": 253, "description": "The DGD's name."}
NAMESPACE = {"type": "string", "minLength": 1, "maxLength": 63,
             "description": "Namespace (default: the context's namespace)."}
ALL_NAMESPACES = {"type": "boolean", "description": "Across all namespaces (-A)."}
ORCHESTRATOR = {"enum": ["grove", "lws"]}
MANIFEST = {"type": "string", "minLength": 1, "maxLength": 16 * 1024 * 1024,
            "description": "The manifest's YAML or JSON text (one or several documents)."}
PATH = {"type": "string", "minLength": 1, "maxLength": 4096,
        "description": "A manifest file or directory on the server's machine (relative to its working directory)."}
CODES = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 100}, "maxItems": 100}
POSITIVE = {"type": "integer", "minimum": 1, "maximum": 1_000_000}

LOG_TAIL_MAX = 5000  # lines per container: logs is bounded (no -f), and so is what one call returns
LOG_TAIL_DEFAULT = 200
LOG_CHARS_MAX = 1024 * 1024


class Param(NamedTuple):
    key: str  # the JSON argument
    schema: Dict[str, Any]
    flag: Optional[str] = None  # None: a positional argument
    kind: str = "value"  # value | flag (a boolean switch) | pair (--x/--no-x) | repeat | csv | stdin
    default: Any = None  # sent when the call leaves it out (logs' bound)


class Tool(NamedTuple):
    name: str
    title: str
    description: str
    argv: Tuple[str, ...]  # the command words before the arguments
    params: Tuple[Param, ...]
    schema: Optional[str]  # the contract of its -o json (data/schemas); None: text (logs)
    required: Tuple[str, ...] = ()
    one_of: Tuple[str, ...] = ()  # exactly one of these keys
    fixed: Tuple[str, ...] = ("-o", "json")  # always appended
    cluster: bool = True  # may read the cluster (offline tools never connect)

    def input_schema(self) -> Dict[str, Any]:
        schema: Dict[str, Any] = {
            "type": "object",
            "properties": {p.key: p.schema for p in self.params},
            "additionalProperties": False,
        }
        if self.required:
            schema["required"] = list(self.required)
        if self.one_of:
            schema["oneOf"] = [{"required": [k]} for k in self.one_of]
        return schema


def command_line(tool: Tool, arguments: Dict[str, Any],
                 connection: Sequence[str] = ()) -> Tuple[List[str], Optional[str]]:
    """The argv of one call (validated arguments; ``connection``: the server's own connection flags, for
    the tools that read the cluster), and the text for its stdin (a manifest), if any."""
    argv = list(tool.argv)
    positional: List[str] = []
    stdin: Optional[str] = None
    for p in tool.params:
        value = arguments.get(p.key, p.default)
        if value is None:
            continue
        if p.flag is None:
            positional.append(str(value))
        elif p.kind == "stdin":
            stdin = value
            argv += [p.flag, "-"]
        elif p.kind == "flag":
            if value:
                argv.append(p.flag)
        elif p.kind == "pair":
            argv.append(p.flag if value else "--no-" + p.flag[2:])
        elif p.kind == "repeat":
            for item in value:
                argv += [p.flag, str(item)]
        elif p.kind == "csv":
            argv += [p.flag, ",".join(value)]
        else:
            argv += [p.flag, _word(value)]
    # "--" before the positionals: a name is never read as a flag
    argv += list(tool.fixed) + (list(connection) if tool.cluster else [])
    return argv + (["--", *positional] if positional else []), stdin


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_DESCRIBE = "Read-only; the same data as `kubectl dynamo {0} -o json` (its JSON Schema is the output schema)."
_NS = Param("namespace", NAMESPACE, "--namespace")

TOOLS: Tuple[Tool, ...] = (
    Tool("detect", "Detect the platform",
         "Installed orchestrators (Grove, LWS) and schedulers (KAI, Volcano), versions, health, queues, the Dynamo "
         "operator and its gates, GPU nodes, and the orchestrator the operator picks for a new multinode DGD. "
         + _DESCRIBE.format("detect"),
         ("detect",), (), "detect"),
    Tool("explain", "Explain what the operator renders",
         "What the Dynamo operator renders for each component and role of a DynamoGraphDeployment (launch line, env, "
         "probes, objects), with findings when the operator would refuse or mis-render it. Give the manifest text, "
         "a path, or the name of a live DGD. Offline for manifest and path. " + _DESCRIBE.format("explain dgd"),
         ("explain", "dgd"),
         (Param("manifest", MANIFEST, "--filename", "stdin"),
          Param("path", PATH, "--filename"),
          Param("name", NAME),
          _NS,
          Param("orchestrator", {**ORCHESTRATOR, "description": "Offline: assume this orchestrator."},
                "--orchestrator"),
          Param("operatorVersion", {"type": "string", "pattern": r"^v?\d+\.\d+\.\d+$",
                                    "description": "The operator version that creates the DGD."},
                "--operator-version"),
          Param("objects", {"type": "boolean", "description": "Also the objects the operator creates."},
                "--objects", "flag"),
          Param("diff", {"type": "boolean", "description": "What the operator changes in each role's pod template."},
                "--diff", "flag")),
         "explain", one_of=("manifest", "path", "name")),
    Tool("get", "List DGDs",
         "One row per DynamoGraphDeployment (groups ready/desired, ranks, restarts, top finding); with a name, one row "
         "per component and group. " + _DESCRIBE.format("get"),
         ("get", "dgd"), (Param("name", NAME), _NS, Param("allNamespaces", ALL_NAMESPACES, "--all-namespaces", "flag")),
         "get"),
    Tool("tree", "A DGD's lineage",
         "DGD -> PodCliqueSet/LeaderWorkerSet -> PodClique -> PodGang -> each rank's pod, and what the pods need. "
         + _DESCRIBE.format("tree"),
         ("tree",), (Param("name", NAME), _NS), "tree", required=("name",)),
    Tool("doctor", "Diagnose",
         "Findings on the cluster and every multinode DGD, root causes first, each with a stable id, the actor that "
         "did not act and a fix; `from` diagnoses a `kubectl dynamo collect` bundle offline. "
         + _DESCRIBE.format("doctor"),
         ("doctor",),
         (Param("name", NAME), _NS, Param("allNamespaces", ALL_NAMESPACES, "--all-namespaces", "flag"),
          Param("from", {**PATH, "description": "A collect bundle (.tar.gz) or snapshot directory to diagnose "
                                                "instead of the cluster."}, "--from"),
          Param("minSeverity", {"enum": ["error", "warning", "info"]}, "--min-severity"),
          Param("only", {**CODES, "description": "Run only these checks."}, "--only", "csv"),
          Param("skip", {**CODES, "description": "Leave out these checks' findings."}, "--skip", "repeat")),
         "doctor"),
    Tool("logs", "A DGD's logs, bounded",
         f"The last lines (tail, default {LOG_TAIL_DEFAULT}, at most {LOG_TAIL_MAX} per container) of a DGD's pods, "
         "interleaved by time, each prefixed component/group/rank(role). Text, never followed.",
         ("logs",),
         (Param("name", NAME), _NS,
          Param("component", {"type": "string", "minLength": 1}, "--component"),
          Param("group", {"type": "integer", "minimum": 0}, "--group"),
          Param("role", {"enum": ["leader", "worker", "main"]}, "--role"),
          Param("rank", {"type": "integer", "minimum": 0, "description": "0 is the leader."}, "--rank"),
          Param("container", {"type": "string", "minLength": 1}, "--container"),
          Param("previous", {"type": "boolean", "description": "The previous instance of each container."},
                "--previous", "flag"),
          Param("since", {"type": "string", "pattern": r"^[0-9hms.]+$", "description": "e.g. 10m"}, "--since"),
          Param("tail", {"type": "integer", "minimum": 1, "maximum": LOG_TAIL_MAX}, "--tail", default=LOG_TAIL_DEFAULT),
          Param("timestamps", {"type": "boolean"}, "--timestamps", "flag")),
         None, required=("name",), fixed=()),
    Tool("placement", "GPU placement",
         "Every GPU node: allocatable, used by which DGD / component / group / rank, free and stranded GPUs, and the "
         "pending gangs. " + _DESCRIBE.format("placement"),
         ("placement",), (_NS,), "placement"),
    Tool("rollout_status", "A DGD's rollout, one look",
         "Whether a DGD's rollout is complete: every component's workloads updated, ready and available, every pod of "
         "the new worker generation Ready, none of an older one left. "
         + _DESCRIBE.format("rollout status NAME --watch=false"),
         ("rollout", "status"), (Param("name", NAME), _NS), "rollout-status", required=("name",),
         fixed=("--watch=false", "-o", "json")),
    Tool("rollout_history", "A DGD's worker generations",
         "A DGD's worker generations (worker hash, when, pods, DCDs, workloads); with revision, what changed into it. "
         + _DESCRIBE.format("rollout history NAME"),
         ("rollout", "history"), (Param("name", NAME), _NS, Param("revision", POSITIVE, "--revision")),
         "rollout-history", required=("name",)),
    Tool("upgrade", "Upgrade a manifest to v1beta1 (prints)",
         "A DGD manifest from nvidia.com/v1alpha1 to nvidia.com/v1beta1, as the operator converts it. Prints; never "
         "writes a file or sends anything to the cluster. " + _DESCRIBE.format("upgrade dgd -f FILE"),
         ("upgrade", "dgd"),
         (Param("manifest", MANIFEST, "--filename", "stdin"), Param("path", PATH, "--filename"),
          Param("strict", {"type": "boolean", "description": "Refuse a field without a v1beta1 home."},
                "--strict", "flag"),
          Param("topologyAliases", {"type": "boolean"}, "--topology-aliases", "flag"),
          Param("roleTemplates", {"type": "boolean"}, "--role-templates", "flag"),
          Param("orchestrator", ORCHESTRATOR, "--orchestrator"),
          Param("operatorVersion", {"type": "string", "pattern": r"^v?\d+\.\d+\.\d+$"}, "--operator-version")),
         "upgrade", one_of=("manifest", "path"), cluster=False),
    Tool("generate", "Generate a DGD (prints)",
         "A correct DynamoGraphDeployment for one engine spanning several nodes (the GPU arithmetic is checked). "
         "Prints; never writes a file or sends anything to the cluster. " + _DESCRIBE.format("generate dgd NAME"),
         ("generate", "dgd"),
         (Param("name", NAME),
          Param("backend", {"enum": ["vllm", "sglang", "trtllm"]}, "--backend"),
          Param("model", {"type": "string", "minLength": 1}, "--model"),
          Param("image", {"type": "string", "minLength": 1}, "--image"),
          Param("nodes", POSITIVE, "--nodes"),
          Param("gpusPerNode", POSITIVE, "--gpus-per-node"),
          Param("tp", POSITIVE, "--tp"), Param("pp", POSITIVE, "--pp"), Param("dp", POSITIVE, "--dp"),
          Param("disaggregated", {"type": "boolean"}, "--disaggregated", "flag"),
          Param("prefillNodes", POSITIVE, "--prefill-nodes"), Param("prefillTp", POSITIVE, "--prefill-tp"),
          Param("prefillDp", POSITIVE, "--prefill-dp"), Param("decodeNodes", POSITIVE, "--decode-nodes"),
          Param("decodeTp", POSITIVE, "--decode-tp"), Param("decodeDp", POSITIVE, "--decode-dp"),
          Param("frontend", {"type": "boolean"}, "--frontend", "pair"),
          Param("orchestrator", ORCHESTRATOR, "--orchestrator"),
          Param("queue", {"type": "string", "minLength": 1}, "--queue"),
          Param("roleTemplates", {"type": "boolean"}, "--role-templates", "flag"),
          Param("sharedMemory", {"type": "string", "minLength": 1}, "--shared-memory"),
          Param("apiVersion", {"enum": ["nvidia.com/v1beta1", "nvidia.com/v1alpha1"]}, "--api-version"),
          Param("operatorVersion", {"type": "string", "pattern": r"^v?\d+\.\d+\.\d+$"}, "--operator-version")),
         "generate", required=("name", "backend", "model"), cluster=False),
)

BY_NAME = {t.name: t for t in TOOLS}


def bundled_schema(name: str) -> Dict[str, Any]:
    """The contract ``name`` as one self-contained object schema, as MCP's outputSchema must be: the
    other contracts it refers to (``urn:kubectl-dynamo:…``) are copied under ``$defs`` and referred
    to locally, so a client validates without resolving anything."""
    import json

    from kubectl_dynamo import contracts

    text = json.dumps(contracts.schema(name))
    defs: Dict[str, Any] = {}
    for other in contracts.SCHEMAS:
        urn = f'"urn:kubectl-dynamo:{other}"'
        if other != name and f'"$ref": {urn}' in text:
            text = text.replace(f'"$ref": {urn}', f'"$ref": "#/$defs/contract-{other}"')
            embedded = contracts.schema(other)
            if "$defs" in embedded or "$ref" in json.dumps(embedded):
                raise ValueError(f"{name}: {other} has its own references; bundle it by hand")
            defs[f"contract-{other}"] = {k: v for k, v in embedded.items() if k not in ("$schema", "$id")}
    schema: Dict[str, Any] = json.loads(text)
    if defs:
        schema["$defs"] = {**schema.get("$defs", {}), **defs}
    schema.pop("$id", None)
    schema.setdefault("type", "object")  # explain, upgrade: a oneOf / if-then of objects
    return schema
