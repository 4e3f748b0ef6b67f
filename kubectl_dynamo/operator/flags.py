"""Command-line rewriting shared by the backends, plus backend and GPU detection (ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/graph.go, backend_*.go).

Regular expressions are written for Python ``re`` but keep the meaning of the operator's Go RE2
patterns: ``\\s`` is spelled ``[\\t\\n\\f\\r ]`` (RE2's ``\\s`` has no Unicode or ``\\v``), and an
unanchored Go ``$`` is spelled ``\\Z`` (Python's ``$`` would also match before a final newline).
Leftmost-first matching is the same in both engines.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Dict, List, Optional, Tuple, Union

from kubectl_dynamo.operator.api import BACKENDS as FRAMEWORKS
from kubectl_dynamo.operator.api import NOOP, ROLE_TEMPLATES_SINCE, WORKER_TYPES
from kubectl_dynamo.operator.quoting import shell_quote_for_bash_c

WS = r"[\t\n\f\r ]"  # Go RE2 \s


_PYTHON_CMD = re.compile(r"^(.*/)?(python\d*(\.\d+)*)$")

# One pattern per framework: `python… -m … dynamo.<fw>` inside one |&;-delimited segment.
_DETECT = {
    fw: re.compile(rf"python[0-9.]*{WS}+[^|&;]*-m{WS}+[^|&;]*dynamo\.{fw}[^|&;]*") for fw in FRAMEWORKS
}


def is_python_command(cmd: str) -> bool:
    """``python``, ``python3``, ``python3.11``, ``/usr/bin/python3.8`` … (not ``sh``, not ``pythonx``)."""
    return cmd in ("python", "python3") or bool(_PYTHON_CMD.match(cmd))


def _injection_pattern(framework: str) -> re.Pattern[str]:
    # Greedy [^|&;]* runs to the LAST occurrence of the framework word in the segment, then the lazy
    # tail stops at the next whitespace: flags land right after that token.
    return re.compile(rf"(python[0-9.]*{WS}+[^|&;]*{re.escape(framework)}[^|&;]*?)({WS}|\Z|[|&;])")


def inject_flags_into_container_command(container: dict, flags: str, needs_shell: bool, framework: str) -> None:
    """Add ``flags`` (one space-joined string) to the engine launch in ``container`` (mutated in place).

    * Direct python command: append the flags as separate args; when ``needs_shell`` (the flags hold
      ``$((…))`` arithmetic) rewrite to ``sh -c "exec <quoted argv> <flags>"``.
    * Anything else (``sh -c`` scripts, empty command): regex-insert into the first arg that has a
      python segment mentioning ``framework``; every such segment of that arg gets the flags.
      Non-matching commands are left alone.
    """
    command: List[str] = list(container.get("command") or [])
    args: List[str] = list(container.get("args") or [])
    if command and is_python_command(command[0]):
        if not needs_shell:
            container["args"] = args + flags.split()
            return
        quoted = " ".join(shell_quote_for_bash_c(t) for t in command + args)
        container["command"] = ["sh", "-c"]
        container["args"] = [f"exec {quoted} {flags}"]
        return

    pattern = _injection_pattern(framework)
    for i, arg in enumerate(args):
        # A function replacement keeps backslashes in flags literal.
        new = pattern.sub(lambda m: f"{m.group(1)} {flags}{m.group(2)}", arg)
        if new != arg:
            args[i] = new
            container["args"] = args
            return


def detect_backend_framework(command: List[str], args: List[str]) -> Tuple[str, Optional[str]]:
    """Framework named by ``python -m dynamo.<fw>`` in command+args: (framework|"noop", error)."""
    full = " ".join(list(command or []) + list(args or []))
    found = [fw for fw in FRAMEWORKS if _DETECT[fw].search(full)]
    if not found:
        return NOOP, None
    if len(found) > 1:
        # The operator lists them in Go map order (random); sorted here for stable output.
        return "", f"multiple backend frameworks detected from command: [{' '.join(found)}] in \"{full}\""
    return found[0], None


def determine_backend_framework(
    component_type: str, command: List[str], args: List[str], explicit: Optional[str]
) -> Tuple[str, Optional[str]]:
    """Detected beats explicit beats noop; an ambiguous command is an error only without an explicit
    framework; non-worker types are always noop. Returns (framework, error)."""
    if component_type not in WORKER_TYPES:
        return NOOP, None
    detected, err = detect_backend_framework(command, args) if (command or args) else (NOOP, None)
    if detected not in ("", NOOP):
        if explicit and explicit != detected:
            return "", (
                f'backend framework mismatch: detected "{detected}" from command but explicitly configured as "{explicit}"'
            )
        return detected, None
    if explicit:
        return explicit, None
    if err:
        return "", f"could not determine backend framework: {err}"
    return NOOP, None


def component_backend_framework(component: dict, explicit: Optional[str], operator_version: str) -> Tuple[str, Optional[str]]:
    """The framework of a component. 1.5: from its podTemplate's main container. 1.6: every pod
    template (the component's, then each role's) is judged; the first detected framework wins,
    two different ones are an error (tu-kim/dynamo@3f3d3dfa internal/dynamo/graph.go
    ``determineBackendFrameworkForComponent``)."""
    from kubectl_dynamo.operator import versions
    from kubectl_dynamo.operator.components import main_container_of

    ctype = component.get("type") or ""
    templates = [component.get("podTemplate")] if component.get("podTemplate") else []
    if versions.at_least(operator_version, ROLE_TEMPLATES_SINCE):
        templates += [r["podTemplate"] for r in component.get("roles") or []
                      if isinstance(r, dict) and r.get("podTemplate")]
    elif not templates:
        templates = [None]
    selected = ""
    for tpl in templates:
        main = main_container_of(tpl) or {}
        fw, err = determine_backend_framework(ctype, main.get("command") or [], main.get("args") or [], explicit)
        if err:
            return "", err
        if fw in ("", NOOP):
            continue
        if selected and selected != fw:
            return "", f"multiple backend frameworks detected across pod templates: {selected} and {fw}"
        selected = fw
    return (selected, None) if selected else determine_backend_framework(ctype, [], [], explicit)


# ---- GPU count -----------------------------------------------------------------------------

_SUFFIX: Dict[str, Union[int, Decimal]] = {
    "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "m": Decimal("0.001"), "u": Decimal("0.000001"), "n": Decimal("0.000000001"),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


def parse_quantity(value) -> Optional[Decimal]:
    """A Kubernetes quantity (``"4"``, ``4``, ``"500m"``, ``"1Ki"``) as a Decimal; None if unparsable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    m = _QUANTITY.match(value.strip())
    if not m:
        return None
    suffix = m.group(2) or ""
    try:
        if suffix[:1] in ("e", "E"):  # a decimal exponent (apimachinery's quantity grammar): 1e3 is 1000
            return Decimal(m.group(1)).scaleb(int(suffix[1:]))
        return Decimal(m.group(1)) * Decimal(_SUFFIX[suffix])
    except (InvalidOperation, ValueError):
        return None


def is_gpu_resource_name(name: str) -> bool:
    n = name.lower()
    return n in ("nvidia.com/gpu", "gpu") or n.endswith("/gpu") or "/mig-" in n or n.startswith("gpu.")


def resolve_gpu_count(resources: Optional[dict]) -> Tuple[int, Optional[str]]:
    """Scalar GPU count of a container: limits, else requests; first matching name in sorted order.

    Returns (count, problem). DRA claims are not resolvable offline (count 0).
    """
    resources = resources or {}
    for section in ("limits", "requests"):
        values = resources.get(section) or {}
        names = sorted(n for n in values if is_gpu_resource_name(n))
        if not names:
            continue
        name = names[0]
        q = parse_quantity(values[name])
        # dra.gpuCountFromQuantity: q.Value() is an int64, so a count beyond it is "not a whole number" too
        if q is None or q != q.to_integral_value() or q < 0 or q >= 2**63:
            return 0, f"GPU quantity {section}.{name}={values[name]!r} is not a whole number"
        return int(q), None
    return 0, None
