"""`upgrade dgd`: v1alpha1 -> v1beta1 on the user's own YAML, plus optional 1.6 rewrites.

Users keep manifests in git, so the text is edited as little as possible:
- the stream is split into its documents; only DynamoGraphDeployments that change are re-emitted,
  every other document (and an unchanged DGD) is copied byte for byte;
- a changed DGD goes through ruamel.yaml round trip (``typ="rt"``, ``preserve_quotes``) with the
  document's own indentation detected, so comments, key order and quoting survive, and
  ``operator.convert.to_v1beta1`` moves (never copies) the nodes it keeps.
ruamel emits one sequence style per document: a file that mixes ``- item`` under its key with
indented ``  - item`` gets the style most of its sequences use.

Optional rewrites, each reported: ``topology_aliases`` (provider variables -> the 1.6 portable
``DYNAMO_LEADER_ADDRESS`` / ``DYNAMO_RANK``) and ``role_templates`` (a multinode component's
podTemplate -> complete leader and worker templates, with the launch lines ``generate`` writes).
"""

from __future__ import annotations

import copy
import difflib
import functools
import io
import re
from collections import Counter
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from kubectl_dynamo.cluster import kinds
from kubectl_dynamo.commands import generate as gen
from kubectl_dynamo.operator import api, convert, versions
from kubectl_dynamo.result import Result
from kubectl_dynamo.words import plural

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import UpgradeData

_DOC_START = re.compile(r"^---(?:[ \t].*)?$")
_DOC_END = re.compile(r"^\.\.\.(?:[ \t].*)?$")


class UpgradeError(ValueError):
    """Content that cannot be upgraded as asked (exit 1); ``problems`` name the paths."""

    def __init__(self, message: str, problems: Optional[List[dict]] = None):
        super().__init__(message)
        self.problems = problems or []


@dataclass
class Options:
    strict: bool = False  # refuse fields without a v1beta1 home instead of keeping them as the operator does
    topology_aliases: bool = False
    role_templates: bool = False
    orchestrator: Optional[str] = None  # for TRT-LLM role templates; default from the DGD's annotations
    operator_version: str = gen.DEFAULT_OPERATOR_VERSION


@dataclass
class DocReport:
    index: int
    kind: Optional[str]
    name: Optional[str]
    from_version: Optional[str] = None
    to_version: Optional[str] = None
    changed: bool = False
    problems: List[dict] = field(default_factory=list)  # {path, message, severity}
    rewrites: List[dict] = field(default_factory=list)  # {path, before, after} / {path, message}

    def as_dict(self) -> dict:
        return {"index": self.index, "kind": self.kind, "name": self.name, "from": self.from_version,
                "to": self.to_version, "changed": self.changed, "problems": self.problems,
                "rewrites": self.rewrites}


@dataclass
class Upgraded:
    original: str
    text: str
    documents: List[DocReport]
    data: List[Any]  # the (converted) documents as ruamel/plain trees, for -o json

    @property
    def changed(self) -> bool:
        return self.text != self.original

    def diff(self, path: str = "manifest") -> str:
        return unified_diff(self.original, self.text, path)


def unified_diff(before: str, after: str, path: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))


# ------------------------------------------------------------------------------ YAML text

def split_documents(text: str) -> List[Tuple[str, str]]:
    """``[(prefix, body)]``: ``prefix`` is the separator text before a document (``---`` lines,
    directives, blank lines before them); ``prefix + body`` over all chunks is ``text``."""
    chunks: List[Tuple[str, str]] = []
    prefix: List[str] = []
    body: List[str] = []
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if _DOC_START.match(bare) or _DOC_END.match(bare):
            if body and any(ln.strip() and not ln.lstrip().startswith("#") for ln in body):
                chunks.append(("".join(prefix), "".join(body)))
                prefix, body = [], []
            elif body:  # only comments so far: they belong with the separator
                prefix += body
                body = []
            prefix.append(line)
        else:
            body.append(line)
    chunks.append(("".join(prefix), "".join(body)))
    return chunks


def _yaml(indent: Tuple[int, int, int] = (2, 2, 0)):
    from ruamel.yaml import YAML

    from kubectl_dynamo.output.yamlquote import quote_ruamel

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096  # never re-wrap long strings (command lines) that were on one line
    mapping, sequence, offset = indent
    y.indent(mapping=mapping, sequence=sequence, offset=offset)
    return quote_ruamel(y)


def load_rt(text: str) -> Any:
    """The round-trip tree of one document. ruamel's round-trip scanner costs ~0.2 ms per node (pure
    Python, comment gathering on every token), so long runs of bare one-word sequence items (100,000
    args fit the API server's 1.5 MiB) are read apart: each run is one placeholder item for ruamel and
    its words are put back as the plain strings ruamel would have made of them."""
    collapsed, runs = _collapse_runs(text)
    doc = _yaml().load(collapsed)
    if runs:
        _restore_runs(doc, runs)
    return doc


# A sequence item that is one bare word: no quote, comment, indicator or space, so ruamel reads it
# as the word itself (when its resolver says str: see _collapse_runs).
_BARE_ITEM = re.compile(r"^( *)- ((?!-\r?\n?$)[A-Za-z/_-][A-Za-z0-9_./=+@%-]*)\r?\n?$")  # "- -": a nested list
_RUN_MIN = 64  # shorter runs cost ruamel little; below this every document is read as before


def _collapse_runs(text: str) -> Tuple[str, dict]:
    """``(text, {placeholder: [words]})``: every run of >= _RUN_MIN consecutive bare items at one
    indentation but its last (which may continue on the next line, and keeps the comments that
    follow it) replaced by one placeholder item."""
    if text.count("\n- ") + text.count(" - ") < _RUN_MIN:
        return text, {}
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.resolver import VersionedResolver

    resolver = VersionedResolver()
    is_str = functools.lru_cache(maxsize=4096)(
        lambda word: resolver.resolve(ScalarNode, word, (True, False)) == "tag:yaml.org,2002:str")
    lines = text.splitlines(keepends=True)
    out: List[str] = []
    runs: dict = {}
    i = 0
    while i < len(lines):
        m = _BARE_ITEM.match(lines[i])
        j = i
        while j < len(lines):
            mj = _BARE_ITEM.match(lines[j])
            if not mj or mj.group(1) != (m.group(1) if m else None) or not is_str(mj.group(2)):
                break
            j += 1
        if j - i - 1 >= _RUN_MIN:
            key = f"kd-collapsed-run-{len(runs)}-{len(text)}"
            if key in text:  # never mistake the user's own word for a placeholder
                out += lines[i:j]
            else:
                runs[key] = [_BARE_ITEM.match(ln).group(2) for ln in lines[i:j - 1]]  # type: ignore[union-attr]
                out.append(f"{m.group(1)}- {key}\n")  # type: ignore[union-attr]
                out.append(lines[j - 1])
            i = j
        else:
            out.append(lines[i])
            i += 1
    return "".join(out), runs


def _restore_runs(node: Any, runs: dict) -> None:
    """Put each collapsed run back in place of its placeholder, with the comment and position
    records of the items after it moved along."""
    if isinstance(node, Mapping):
        for v in node.values():
            _restore_runs(v, runs)
    elif isinstance(node, list):
        for idx in range(len(node) - 1, -1, -1):
            item = node[idx]
            if isinstance(item, str) and item in runs:
                words = runs[item]
                list.__setitem__(node, slice(idx, idx + 1), words)  # CommentedSeq's own does it item by item
                shift = len(words) - 1
                ca = getattr(node, "ca", None)
                if ca is not None and ca.items:
                    moved = {(k + shift if k > idx else k): v for k, v in ca.items.items()}
                    ca.items.clear()
                    ca.items.update(moved)
                lc = getattr(node, "lc", None)
                if lc is not None and getattr(lc, "data", None):
                    lc.data = {(k + shift if isinstance(k, int) and k > idx else k): v for k, v in lc.data.items()}
            else:
                _restore_runs(item, runs)


def detect_indent(doc: Any) -> Tuple[int, int, int]:
    """(mapping, sequence, offset) most used by the loaded document's block collections."""
    maps: Counter = Counter()
    seqs: Counter = Counter()

    def is_flow(node: Any) -> bool:
        fa = getattr(node, "fa", None)
        return bool(fa is not None and fa.flow_style())

    def walk(node: Any, col: Optional[int]) -> None:
        lc = getattr(node, "lc", None)
        flow = is_flow(node)
        if isinstance(node, Mapping):
            if lc is None:  # not loaded from the text (no positions)
                return
            for k in node:
                v = node[k]
                try:
                    kl, kc = lc.key(k)
                except Exception:  # keys added after loading have no position
                    continue
                child = getattr(v, "lc", None)
                if child is None or is_flow(v) or not len(v):
                    continue
                if isinstance(v, Mapping):
                    first = next(iter(v))
                    try:
                        _, cc = child.key(first)
                    except Exception:
                        continue
                    if cc > kc:
                        maps[cc - kc] += 1
                elif isinstance(v, list):
                    try:
                        _, ic = child.item(0)
                    except Exception:
                        continue
                    # content column relative to the key; the dash sits two columns before it
                    seqs[ic - kc] += 1
                walk(v, kc)
        elif isinstance(node, list) and not flow:
            for item in node:
                walk(item, None)

    walk(doc, 0)
    mapping = maps.most_common(1)[0][0] if maps else 2
    sequence = seqs.most_common(1)[0][0] if seqs else mapping
    sequence = max(sequence, 2)
    return mapping, sequence, max(sequence - 2, 0)


def dump_rt(doc: Any, indent: Tuple[int, int, int]) -> str:
    """The document as YAML. ruamel's emitter costs ~0.1 ms per node: long runs of one-word strings it
    would write plain (``- word``) are emitted as one placeholder item each and written out here
    (the tree itself is left as it was)."""
    runs: dict = {}
    swaps: List[Tuple[Any, Any, Any]] = []
    _collapse_for_dump(doc, runs, swaps)
    out = io.StringIO()
    try:
        _yaml(indent).dump(doc, out)
    finally:
        for parent, key, seq in reversed(swaps):
            parent[key] = seq
    text = out.getvalue()
    if not runs:
        return text
    lines = text.splitlines(keepends=True)
    found = {}
    for n, line in enumerate(lines):
        m = _BARE_ITEM.match(line)
        if m and m.group(2) in runs:
            found[m.group(2)] = (n, m.group(1))
    if len(found) != len(runs):  # not written as one block item each: write it the slow way
        out = io.StringIO()
        _yaml(indent).dump(doc, out)
        return out.getvalue()
    for key, (n, lead) in found.items():
        lines[n] = "".join(f"{lead}- {w}\n" for w in runs[key])
    return "".join(lines)


def _plain_word(x: Any) -> bool:
    """A string ruamel writes as the bare word (what _BARE_ITEM reads back)."""
    from kubectl_dynamo.output.yamlquote import needs_quotes

    return (type(x) is str and _BARE_WORD.fullmatch(x) is not None and not x.startswith("---")
            and not needs_quotes(x))


_BARE_WORD = re.compile(r"(?!-$)[A-Za-z/_-][A-Za-z0-9_./=+@%-]*")


def _collapse_for_dump(node: Any, runs: dict, swaps: list) -> None:
    children = list(node.items()) if isinstance(node, Mapping) else list(enumerate(node)) if isinstance(node, list) else []
    for key, child in children:
        if isinstance(child, list) and len(child) > _RUN_MIN:
            new = _collapsed_copy(child, runs)
            if new is not None:
                swaps.append((node, key, child))
                node[key] = new
                continue
        _collapse_for_dump(child, runs, swaps)


def _collapsed_copy(seq: Any, runs: dict) -> Optional[Any]:
    """A copy of a block sequence with each long run of plain words (but its last) as one placeholder."""
    from ruamel.yaml.comments import CommentedSeq

    fa = getattr(seq, "fa", None)
    anchor = getattr(seq, "anchor", None)
    if (fa is not None and fa.flow_style()) or (anchor is not None and anchor.value):
        return None
    ca = getattr(seq, "ca", None)
    commented = set(ca.items) if ca is not None else set()
    items = list(seq)
    out: List[Any] = []
    where = {}
    i = 0
    while i < len(items):
        j = i
        while j < len(items) and j not in commented and _plain_word(items[j]):
            j += 1
        if j - i - 1 >= _RUN_MIN:
            key = f"kd-collapsed-run-{len(runs)}-{id(seq)}"
            runs[key] = items[i:j - 1]
            out.append(key)
            where[j - 1] = len(out)
            out.append(items[j - 1])
            i = j
        else:
            for k in range(i, max(j, i + 1)):
                where[k] = len(out)
                out.append(items[k])
            i = max(j, i + 1)
    if len(out) == len(items):
        return None
    new = CommentedSeq(out)
    if ca is not None:
        new.ca.comment = ca.comment
        new.ca.end = ca.end
        new.ca.items.update({where[k]: v for k, v in ca.items.items() if k in where})
    return new


# ------------------------------------------------------------------------------ the upgrade

def upgrade_text(text: str, opts: Options) -> Upgraded:
    """Upgrade every DGD in a YAML stream; other documents pass through untouched.

    A field without a v1beta1 home is kept where the operator's own conversion keeps it (the
    ``nvidia.com/dgd-spec`` annotation) with a warning; with ``strict`` it raises UpgradeError
    (nothing is produced), as it does when a requested rewrite is impossible for the operator version.
    """
    import yaml

    if text and not text.endswith("\n"):
        # kubectl's YAML reader ends a final block scalar with a line break even when the file does
        # not (as inputs/manifests.parse): without it the last script would be written `|-`, and the
        # operator would render another script (and worker hash) than for the original
        text += "\n"
    if opts.role_templates and not versions.at_least(opts.operator_version, api.ROLE_TEMPLATES_SINCE):
        raise UpgradeError(f"--role-templates needs Dynamo operator >= {api.ROLE_TEMPLATES_SINCE} "
                           f"(--operator-version is {opts.operator_version})")
    out: List[str] = []
    reports: List[DocReport] = []
    data: List[Any] = []
    errors: List[dict] = []
    for prefix, body in split_documents(text):
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        plain = yaml.load(body, Loader=loader) if body.strip() else None
        if plain is None:
            out.append(prefix + body)
            continue
        index = len(reports)
        kind = plain.get("kind") if isinstance(plain, dict) else None
        name = ((plain.get("metadata") or {}).get("name")) if isinstance(plain, dict) else None
        report = DocReport(index, kind, name)
        reports.append(report)
        wants_rewrite = opts.topology_aliases or opts.role_templates
        relabel = api.mislabelled(plain)
        if not convert.is_dgd(plain) or (plain.get("apiVersion") == api.V1BETA1 and not wants_rewrite and not relabel):
            report.from_version = report.to_version = plain.get("apiVersion") if isinstance(plain, dict) else None
            out.append(prefix + body)
            data.append(plain)
            continue
        doc = load_rt(body)
        indent = detect_indent(doc)
        report.from_version = doc.get("apiVersion")
        if relabel:  # a v1alpha1 body is v1alpha1 whatever its apiVersion line says
            report.problems.append({"path": "apiVersion", "severity": "warning",
                                    "message": api.mislabelled_message(plain) + ": upgraded as v1alpha1"})
            report.from_version = api.V1ALPHA1
            doc["apiVersion"] = api.V1ALPHA1
        try:
            new, problems = convert.to_v1beta1(doc, force=not opts.strict)
        except ValueError as exc:
            raise UpgradeError(f"document {index + 1}: {exc}") from None
        report.problems += list(problems)
        errors += [dict(p, document=index + 1, name=name) for p in problems if p["severity"] == "error"]
        if opts.topology_aliases:
            report.rewrites += rewrite_topology_aliases(new)
        if opts.role_templates:
            rewrites, problems = rewrite_role_templates(new, opts)
            report.rewrites += rewrites
            report.problems += problems
            errors += [dict(p, document=index + 1, name=name) for p in problems if p["severity"] == "error"]
        if wants_rewrite:
            report.rewrites += _drop_old_origin(new)
        report.to_version = new.get("apiVersion")
        new_body = dump_rt(new, indent)
        edits = [r for r in report.rewrites if not r.get("note")]
        report.changed = new_body != body and (report.from_version != report.to_version or bool(edits))
        out.append(prefix + (new_body if report.changed else body))
        data.append(new if report.changed else doc)
    if errors:
        paths = ", ".join(f"{e['path']}" + (f" ({e['name']})" if e.get("name") else "") for e in errors)
        raise UpgradeError(f"{plural(len(errors), 'field')} cannot be converted: {paths}; nothing written "
                           f"(without --strict they are kept in the {convert.ANN_DGD_SPEC} "
                           "annotation, as the operator does)", errors)
    return Upgraded(text, "".join(out), reports, data)


def _drop_old_origin(doc: Any) -> List[dict]:
    """A manifest carrying an origin version < 1.6 would keep the pre-1.6 behaviour if it were
    re-created with that annotation; the webhook stamps a fresh one when it is absent."""
    anns = (doc.get("metadata") or {}).get("annotations")
    if not isinstance(anns, MutableMapping):
        return []
    origin = anns.get(api.ANN_ORIGIN_VERSION)
    if origin is None or versions.at_least(str(origin), api.TOPOLOGY_SINCE):
        return []
    del anns[api.ANN_ORIGIN_VERSION]
    return [{"path": f"metadata.annotations.{api.ANN_ORIGIN_VERSION}", "before": str(origin), "after": None,
             "message": "removed: the 1.6 topology variables need an origin version >= 1.6.0, which the "
                        "operator stamps when the DGD is created again"}]


# ------------------------------------------------------------------------------ topology aliases

_G = r"(?:\$\((?P<k{n}>{v})\)|\$\{{(?P<b{n}>{v})\}}|\$(?P<s{n}>{v})\b)"


def _var(name: str, n: int) -> str:
    return _G.format(n=n, v=name)


# (pattern, alias, what it replaces). Kubelet syntax $(X) stays kubelet syntax; shell syntax
# $X / ${X} becomes shell syntax, so the same layer expands it as before.
_ALIASES = [
    (re.compile(_var("GROVE_PCSG_NAME", 0) + r"-" + _var("GROVE_PCSG_INDEX", 1)
                + r"-[a-z0-9]([-a-z0-9]*[a-z0-9])?-ldr-0\." + _var("GROVE_HEADLESS_SERVICE", 2)),
     "DYNAMO_LEADER_ADDRESS", "Grove leader host name"),
    (re.compile(r"\$\(\(\s*\$?\{?GROVE_PCLQ_POD_INDEX\}?\s*\+\s*1\s*\)\)"), "DYNAMO_RANK", "Grove worker rank"),
    (re.compile(r'"\$LWS_LEADER_ADDRESS"'), "DYNAMO_LEADER_ADDRESS", "LWS leader address (shell)"),
    (re.compile(_var("LWS_LEADER_ADDRESS", 0)), "DYNAMO_LEADER_ADDRESS", "LWS leader address"),
    (re.compile(_var("LWS_WORKER_INDEX", 0)), "DYNAMO_RANK", "LWS worker index"),
    (re.compile(_var("GROVE_PCSG_POD_INDEX", 0)), "DYNAMO_RANK", "Grove scaling-group pod index"),
]
_LEFTOVER = re.compile(r"\b(?:GROVE|LWS)_[A-Z_]+\b")
_EXPANDED_KEYS = ("command", "args")  # the kubelet expands $(VAR) here and in env[].value


def _alias_for(match: re.Match, alias: str) -> str:
    text = match.group(0)
    if text.startswith("$((") or text.startswith('"'):
        # arithmetic / quoted shell form: the kubelet form works in command/args and env values
        return f'"$({alias})"' if text.startswith('"') else f"$({alias})"
    groups = {k: v for k, v in match.groupdict().items() if v}
    if any(k.startswith("k") for k in groups):
        return f"$({alias})"
    if any(k.startswith("b") for k in groups):
        return "${" + alias + "}"
    return "$" + alias


def alias_string(text: str) -> str:
    for pattern, alias, _ in _ALIASES:
        text = pattern.sub(functools.partial(_alias_for, alias=alias), text)
    return text


def _expanded_strings(node: Any, path: str):
    """(container, key, path) of every string the kubelet expands: command/args items and
    env[].value, anywhere under the node."""
    if isinstance(node, Mapping):
        for k in list(node):
            v = node[k]
            p = f"{path}.{k}" if path else str(k)
            if k in _EXPANDED_KEYS and isinstance(v, list):
                for i, item in enumerate(v):
                    if isinstance(item, str):
                        yield v, i, f"{p}[{i}]"
            elif k == "env" and isinstance(v, list):
                for i, e in enumerate(v):
                    if isinstance(e, Mapping) and isinstance(e.get("value"), str):
                        yield e, "value", f"{p}[{i}].value"
            else:
                yield from _expanded_strings(v, p)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _expanded_strings(item, f"{path}[{i}]")


def _set_string(container: Any, key: Any, value: str) -> None:
    """Replace a scalar keeping its quoting style (ruamel scalar string subclasses)."""
    old = container[key]
    cls = type(old)
    container[key] = cls(value) if cls is not str else value


def rewrite_topology_aliases(doc: Any) -> List[dict]:
    changes: List[dict] = []
    comps = (doc.get("spec") or {}).get("components") or []
    for ci, comp in enumerate(comps):
        for container, key, path in _expanded_strings(comp, f"spec.components[{ci}]"):
            before = container[key]
            after = alias_string(before)
            if after != before:
                _set_string(container, key, after)
                changes.append({"path": path, "before": str(before), "after": after})
            left = sorted(set(_LEFTOVER.findall(after)))
            if left:
                changes.append({"path": path, "before": None, "after": None, "note": True,
                                "message": f"left as is: {', '.join(left)} (no portable 1.6 alias; e.g. worker "
                                           "host names or clique-local indices)"})
    return changes


# ------------------------------------------------------------------------------ role templates

def _orchestrator(doc: Any, opts: Options) -> str:
    if opts.orchestrator:
        return opts.orchestrator
    anns = (doc.get("metadata") or {}).get("annotations") or {}
    return "lws" if str(anns.get(api.ANN_ENABLE_GROVE, "")).lower() == "false" else "grove"


def _main(template: Any) -> Optional[Any]:
    for c in ((template or {}).get("spec") or {}).get("containers") or []:
        if isinstance(c, Mapping) and c.get("name") == "main":
            return c
    return None


def _role_template(template: Any, role: str, backend: str, nodes: int, gpus: int, orchestrator: str) -> Any:
    from kubectl_dynamo.operator import backends
    from kubectl_dynamo.operator.flags import inject_flags_into_container_command, is_python_command
    from kubectl_dynamo.operator.trtllm import original_command, role_command

    tpl = copy.deepcopy(template)  # each role owns a complete template (no inheritance)
    main = _main(tpl)
    assert main is not None  # rewrite_role_templates checked the template has one
    command = [str(t) for t in main.get("command") or []]  # ruamel reads YAML 1.2: `1e3` is a float there
    if backend == "trtllm":
        plain = {"command": command, "args": list(main.get("args") or [])}
        script = role_command(role, nodes=nodes, gpus_per_node=gpus, orchestrator=orchestrator,
                              launch=original_command(plain))
        main["command"] = script[:2]
        main["args"] = script[2:]
        return tpl
    flags = backends.get(backend).role_args(nodes, role)
    if command and is_python_command(command[0]):
        args = main.get("args")
        if args is None:
            main["args"] = flags
        else:
            args.extend(flags)
    else:
        plain = {"command": command, "args": [str(a) for a in main.get("args") or []]}
        inject_flags_into_container_command(plain, " ".join(flags), False, backend)
        args = main.get("args")
        for i, value in enumerate(plain["args"]):
            if args is not None and i < len(args) and args[i] != value:
                _set_string(args, i, value)
    return tpl


def _already_has_topology(main: Mapping) -> bool:
    from kubectl_dynamo.operator import backends

    return backends.has_authored_topology(" ".join(str(t) for t in (main.get("command") or []) + (main.get("args") or [])))


def rewrite_role_templates(doc: Any, opts: Options) -> Tuple[List[dict], List[dict]]:
    """Turn every multinode engine component's podTemplate into leader + worker templates."""
    from kubectl_dynamo.operator import vllm
    from kubectl_dynamo.operator.flags import NOOP, determine_backend_framework, resolve_gpu_count

    changes: List[dict] = []
    problems: List[dict] = []
    spec = doc.get("spec") or {}
    orchestrator = _orchestrator(doc, opts)
    for ci, comp in enumerate(spec.get("components") or []):
        path = f"spec.components[{ci}]"
        mn = comp.get("multinode")
        nodes = (mn or {}).get("nodeCount", 2) if mn is not None else 1  # null: left as it is
        if not isinstance(nodes, int) or nodes < 2 or comp.get("roles") or comp.get("type") not in api.WORKER_TYPES:
            continue

        def refuse(why: str, path: str = path, comp: Any = comp) -> None:
            problems.append({"path": path, "severity": "warning",
                             "message": f"component {comp.get('name')!r} keeps its component podTemplate: {why}"})

        template = comp.get("podTemplate")
        main = _main(template)
        if main is None or not main.get("image"):
            refuse("no main container with an image to copy into the role templates")
            continue
        exp = comp.get("experimental") or {}
        if exp.get("gpuMemoryService") or exp.get("failover"):
            refuse("experimental.gpuMemoryService/failover need operator-managed launch wiring")
            continue
        if _already_has_topology(main):
            refuse("its command already carries topology flags; move them into roles by hand")
            continue
        command = [str(t) for t in main.get("command") or []]
        args = [str(t) for t in main.get("args") or []]
        backend, err = determine_backend_framework(comp.get("type"), command, args, spec.get("backendFramework"))
        if err or backend == NOOP:
            refuse(err or "no python -m dynamo.<backend> launch line and no spec.backendFramework")
            continue
        gpus, _ = resolve_gpu_count(main.get("resources"))
        if backend == "vllm":
            tokens = vllm.launch_tokens({"command": command, "args": args}, opts.operator_version)
            world = vllm.flag_value(tokens, vllm.TP) * vllm.flag_value(tokens, vllm.PP)
            if not (gpus > 0 and world > gpus):
                refuse(f"vLLM TP×PP = {world} does not span pods of {gpus} GPUs, so this is not a multiprocessing "
                       "(mp) engine; role templates are generated for mp only")
                continue
        if backend == "trtllm" and gpus <= 0:
            refuse("TRT-LLM needs a scalar GPU request for the mpirun rank count")
            continue
        new_roles = _new_seq(comp)
        for role in ("leader", "worker"):
            entry = _new_map(comp)
            entry["name"] = role
            entry["podTemplate"] = _role_template(template, role, backend, nodes, gpus, orchestrator)
            new_roles.append(entry)
        _replace_key(comp, "podTemplate", "roles", new_roles)
        changes.append({"path": f"{path}.podTemplate", "before": None, "after": None,
                        "message": f"component {comp.get('name')!r}: podTemplate -> roles leader/worker "
                                   f"({backend}, nodeCount {nodes}, topology via $(DYNAMO_RANK)/"
                                   "$(DYNAMO_LEADER_ADDRESS))"})
    return changes, problems


def _new_map(like: Any) -> Any:
    return type(like)() if isinstance(like, dict) else {}


def _new_seq(like: Any) -> Any:
    try:
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

        return CommentedSeq() if isinstance(like, CommentedMap) else []
    except ImportError:  # pragma: no cover
        return []


def _replace_key(m: Any, old: str, new: str, value: Any) -> None:
    """Put ``new: value`` where ``old`` was (key order is part of the user's formatting)."""
    keys = list(m.keys())
    pos = keys.index(old)
    if hasattr(m, "insert"):
        del m[old]
        m.insert(pos, new, value)
    else:
        items = [(k, m[k]) for k in keys]
        m.clear()
        for k, v in items:
            if k == old:
                m[new] = value
            else:
                m[k] = v


# ------------------------------------------------------------------------------ live objects

SERVER_FIELDS = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields",
                 "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def authored_version(obj: Mapping) -> Optional[str]:
    """The apiVersion the user wrote the live object in: the last kubectl apply, else the
    versions recorded by non-operator field managers (v1alpha1 wins if any used it)."""
    import json

    anns = (obj.get("metadata") or {}).get("annotations") or {}
    if anns.get(LAST_APPLIED):
        try:
            return json.loads(anns[LAST_APPLIED]).get("apiVersion")
        except ValueError:
            pass
    seen = {m.get("apiVersion") for m in (obj.get("metadata") or {}).get("managedFields") or []
            if "operator" not in str(m.get("manager", "")).lower() and m.get("subresource") != "status"}
    if api.V1ALPHA1 in seen:
        return api.V1ALPHA1
    return api.V1BETA1 if seen else obj.get("apiVersion")


def manifest_from_live(obj: Mapping) -> dict:
    """The authored manifest of a live DGD: the last-applied configuration if there is one,
    else the object without server-owned fields and status."""
    import json

    anns = (obj.get("metadata") or {}).get("annotations") or {}
    if anns.get(LAST_APPLIED):
        try:
            applied = json.loads(anns[LAST_APPLIED])
            if isinstance(applied, dict) and applied.get("kind") == api.DGD_KIND:
                return applied
        except ValueError:
            pass
    out = copy.deepcopy(dict(obj))
    out.pop("status", None)
    meta = out.get("metadata") or {}
    for k in SERVER_FIELDS:
        meta.pop(k, None)
    if isinstance(meta.get("annotations"), dict):
        meta["annotations"].pop(LAST_APPLIED, None)
        if not meta["annotations"]:
            meta.pop("annotations")
    return out


def origin_version(obj: Mapping) -> Optional[str]:
    return ((obj.get("metadata") or {}).get("annotations") or {}).get(api.ANN_ORIGIN_VERSION)


def recreate_steps(name: str, namespace: str, upgraded_file: str = "upgraded.yaml") -> List[str]:
    return [
        f"kubectl get dynamographdeployments.v1beta1.nvidia.com {name} -n {namespace} -o yaml > {name}.backup.yaml",
        f"kubectl dynamo upgrade dgd {name} -n {namespace} --topology-aliases > {upgraded_file}",
        f"kubectl delete dynamographdeployments.v1beta1.nvidia.com {name} -n {namespace} --wait",
        f"kubectl apply -f {upgraded_file}   # the webhook stamps origin >= 1.6.0 on create",
    ]


# -- the command -------------------------------------------------------------------------------
def _upgrade_or_raise(text: str, opts: Options, source: str) -> Upgraded:
    from kubectl_dynamo.errors import InputError, InvalidContent
    from kubectl_dynamo.inputs.manifests import NoDgd, parse
    from kubectl_dynamo.validation.schema import require_structure

    # bounded, strict YAML; no wrongly typed DGD reaches the converter
    docs = parse(text, source)
    if not any(d.is_dgd for d in docs):  # before reading other documents as Kubernetes objects (a Helm values file)
        raise NoDgd([source])
    invalid = require_structure(docs, source)
    try:
        return upgrade_text(text, opts)
    except UpgradeError as e:
        detail = "\n".join(f"{p.get('path')}: {p.get('message')}" for p in e.problems) or None
        raise InvalidContent(f"{source}: {e}", detail=detail) from None
    except Exception as e:  # ruamel/PyYAML parse errors name the line
        mark = getattr(e, "problem_mark", None)
        if mark is None and invalid:  # converting a DGD with schema errors is best effort, as in explain
            raise InvalidContent(f"{source}: {invalid} (schema-invalid)") from None
        if mark is None:
            raise
        raise InputError(f"{source}: line {mark.line + 1}, column {mark.column + 1}: invalid YAML: "
                         f"{getattr(e, 'problem', None) or e}") from None


def _origin_notes(obj: Mapping, name: str, ns: str, opts: Options) -> List[str]:
    from kubectl_dynamo.operator import versions

    origin = origin_version(obj)
    if versions.at_least(origin, api.TOPOLOGY_SINCE):
        return []
    notes = [f"note: {name} was created by Dynamo operator {origin or '(unknown: no origin annotation)'}; the "
             f"origin version is immutable, so it keeps that behaviour after an operator upgrade "
             f"(no $(DYNAMO_RANK)/$(DYNAMO_LEADER_ADDRESS), no 1.6 topology)."]
    if opts.topology_aliases or opts.role_templates:
        notes.append("To use the 1.6 topology variables, re-create it (this deletes the running pods: "
                     "expect downtime until the new pods are ready):")
        notes += [f"  {i}. {step}" for i, step in enumerate(recreate_steps(name, ns), 1)]
    return notes


def _problem_notes(result: Upgraded) -> List[str]:
    notes = []
    for d in result.documents:
        notes += [f"{p['severity']}: {d.kind}/{d.name}: {p['path']}: {p['message']}" for p in d.problems]
        notes += [f"rewrite: {d.kind}/{d.name}: {r['path']}: {r['message']}" for r in d.rewrites if r.get("message")]
    return notes


def run_upgrade(opts: Options, *, filename: Optional[str] = None, text: Optional[str] = None,
                live=None, fmt: str = "yaml", write: bool = False, show_diff: bool = False,
                dry_run_cluster=None) -> Result[UpgradeData]:
    """``upgrade dgd``: from ``filename`` (its ``text``) or ``live`` = (cluster, name, namespace).

    Returns the command's Result: the manifest (comments kept) for ``-o yaml``, the objects for
    ``-o json``, a per-document report for ``-o table``, or the diff; with ``write`` the file is
    rewritten in place after the diff is shown on stderr (FILE.bak kept)."""
    import json
    import os

    from kubectl_dynamo.output.render import to_yaml
    from kubectl_dynamo.output.tables import format_report

    notes: List[str] = []
    if live is not None:
        cluster, name, ns = live
        manifest, obj, note = get_dgd_for_upgrade(cluster, name, ns)
        notes += [note] if note else []
        notes += _origin_notes(obj, name, ns, opts)
        if authored_version(obj) == "nvidia.com/v1beta1" and not (opts.topology_aliases or opts.role_templates):
            notes.append(f"dynamographdeployment {ns}/{name} is already nvidia.com/v1beta1; nothing to upgrade")
            return Result(None, text="", verbatim=True, notes=notes)
        result = _upgrade_or_raise(to_yaml(manifest), opts, f"{ns}/{name}")
        display = f"{name}.yaml"
    else:
        assert filename is not None and text is not None
        result = _upgrade_or_raise(text, opts, "<stdin>" if filename == "-" else filename)
        display = os.path.basename(filename) if filename != "-" else "stdin"

    notes += _problem_notes(result)
    if dry_run_cluster is not None:
        from kubectl_dynamo.cluster.dryrun import server_dry_run

        for d, data in zip(result.documents, result.data):
            if d.kind == "DynamoGraphDeployment" and d.to_version == "nvidia.com/v1beta1":
                where = server_dry_run(dry_run_cluster, data, live[2] if live else None)
                notes.append(f"server dry run: accepted nvidia.com/v1beta1 dynamographdeployment {where}")
    names = [f"dynamographdeployment.nvidia.com/{d.name}" for d in result.documents if d.kind == "DynamoGraphDeployment"]

    if write:
        from kubectl_dynamo.errors import InputError
        from kubectl_dynamo.inputs.files import resolve_target, write_with_backup

        assert filename is not None  # the command refuses --write without -f FILE
        if not result.changed:
            return Result(None, text="", verbatim=True, notes=[*notes, f"{filename}: nothing to change"])
        backup = filename + ".bak"
        resolve_target(filename)  # a device, FIFO or dangling link is refused before the diff is shown
        if os.path.lexists(backup):
            raise InputError(f"{backup} exists; move it away first (it may be an earlier backup)")
        notes.append(result.diff(display).rstrip("\n"))
        write_with_backup(filename, result.text, backup)
        notes.append(f"wrote {filename} (backup {backup})")
        return Result(None, text="", verbatim=True, notes=notes, names=names)
    if show_diff:
        return Result(None, text=result.diff(display), verbatim=True,
                             notes=notes, names=names)
    items = [json.loads(json.dumps(d, default=str)) for d in result.data]
    data = items[0] if len(items) == 1 else {"apiVersion": "v1", "kind": "List", "items": items}
    return Result(data, lambda _d, wide, color, width: format_report(
        {"documents": [d.as_dict() for d in result.documents]}, wide, color, width),
        text=result.text, notes=notes, names=names)


def combine(results: List[Any]) -> Any:
    """``upgrade -f A -f B``: the files' Results as one, in order (a YAML stream of every file's
    documents, their diffs, one List for -o json, the reports one under the other)."""
    from kubectl_dynamo.result import Result

    if len(results) == 1:
        return results[0]
    notes = [n for r in results for n in r.notes]
    names = [n for r in results for n in r.names]
    code = max(int(r.exit_code) for r in results)
    if all(r.verbatim for r in results):  # --write, --diff
        return Result(None, text="".join(r.text or "" for r in results), verbatim=True, notes=notes, names=names,
                      exit_code=code)
    items = [i for r in results for i in (r.data["items"] if r.data.get("kind") == "List" else [r.data])]
    texts = [(r.text or "").rstrip("\n") + "\n" for r in results if r.text]

    def table(_d, wide: bool, color: bool, width: Optional[int]) -> str:
        return "\n\n".join(r.table(r.data, wide, color, width) for r in results if r.table)

    return Result({"apiVersion": "v1", "kind": "List", "items": items}, table, text="---\n".join(texts),
                  notes=notes, names=names, exit_code=code)


def get_dgd_for_upgrade(cluster, name: str, namespace: str) -> Tuple[dict, dict, Optional[str]]:
    """(manifest to upgrade, stored object, note) for a live DGD.

    The stored object is read as v1beta1 (v1alpha1 only where an old CRD serves nothing else).
    When it was written as v1alpha1 without a last-applied copy, the manifest is its v1alpha1
    view from the server (the operator's conversion webhook); if that is unavailable, the stored
    v1beta1 object is upgraded instead and the note says so."""
    from kubectl_dynamo.errors import DynamoError, NotFound

    obj = None
    for version in ("v1beta1", "v1alpha1"):
        try:
            obj = cluster.get(kinds.DGD.path(namespace, name, version=version))
            break
        except NotFound:
            continue
    if obj is None:
        raise NotFound(f"dynamographdeployment {name!r} not found in namespace {namespace!r}")
    note = None
    manifest = manifest_from_live(obj)
    if authored_version(obj) == "nvidia.com/v1alpha1" and manifest.get("apiVersion") != "nvidia.com/v1alpha1":
        try:
            alpha = cluster.get(kinds.DGD.path(namespace, name, version="v1alpha1"))
            manifest = manifest_from_live(alpha)
        except DynamoError as e:
            if getattr(e, "status", None) is None and not isinstance(e, NotFound):
                raise
            note = (f"note: {name} was written as v1alpha1 but its v1alpha1 view is unavailable "
                    f"({e.message}); upgrading the stored v1beta1 object instead")
    manifest.setdefault("metadata", {}).setdefault("namespace", namespace)
    return manifest, obj, note
