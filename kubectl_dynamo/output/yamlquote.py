"""Strings written so that Kubernetes reads them back as the same strings.

kubectl and the API server read YAML with sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 rules): a plain
``y``, ``n``, ``on``, ``off``, ``yes``, ``no`` is a boolean, ``~`` and ``null`` are null, ``1e3``,
``08``, ``0o17``, ``0x1f``, ``1_000`` and ``.5`` are numbers (go-yaml ``resolve.go``: the bool/null
table, then ``strconv.ParseInt(s without "_", 0, 64)``, then its float pattern). PyYAML quotes only
what *its* YAML 1.1 resolver would misread (not ``y``/``n``, not ``1e3``) and ruamel.yaml, a YAML
1.2 reader, quotes even less. Every YAML this plugin writes goes through ``needs_quotes``: a string
that any of these readers could take for something else is written quoted (quoting never changes
a string's meaning). tests/unit/test_yaml_quoting.py holds this against what sigs.k8s.io/yaml
itself read for thousands of plain scalars (tests/data/yaml/).
"""

from __future__ import annotations

import functools
import re
from typing import Any

# go-yaml v2 resolve.go's resolve table (bool, null, merge) and YAML 1.1's full bool set
_WORDS = frozenset(["y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "~", "null", "Null", "NULL", "<<"])
# anything that starts like a number, a special float or a YAML 1.1 timestamp / sexagesimal
_NUMERIC = re.compile(r"^[-+]?(\.?[0-9]|\.(inf|Inf|INF|nan|NaN|NAN)$)")


def needs_quotes(s: str) -> bool:
    """Whether a plain ``s`` could be read as something other than this string."""
    # go-yaml tries numbers only for a plain scalar starting with a sign, a dot or a digit, and
    # drops every "_" first ("-_1" is -1)
    numeric = s[:1] in "+-.0123456789" and _NUMERIC.match(s.replace("_", "")) is not None
    return s in _WORDS or s == "" or numeric or s != s.strip()


def _represent_str(dumper: Any, data: str) -> Any:
    if needs_quotes(data):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="'")
    return dumper.represent_str(data)


@functools.cache
def safe_dumper() -> Any:
    """PyYAML's SafeDumper that quotes what Kubernetes would misread."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(str, _represent_str)
    return Dumper


def quote_ruamel(y: Any) -> Any:
    """Make a ruamel.yaml ``YAML`` instance quote what Kubernetes would misread (plain ``str`` only:
    a string the input quoted keeps its own style)."""
    from ruamel.yaml.scalarstring import ScalarString

    representer = y.representer

    def represent(dumper: Any, data: str) -> Any:
        if needs_quotes(data) and not isinstance(data, ScalarString):
            return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="'")
        return dumper.represent_str(data)

    representer.add_representer(str, represent)
    return y
