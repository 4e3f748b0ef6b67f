"""``schema``: the JSON Schemas of the ``-o json`` outputs, shipped in the package (docs/contracts.md)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Union

from kubectl_dynamo.result import Result


def run_schema(name: Optional[str]) -> Union[Result[Dict[str, Any]], Result[List[Dict[str, str]]]]:
    """With ``name`` its schema (``-o json`` by default); without, the list of schemas and what prints each."""
    from kubectl_dynamo import contracts
    from kubectl_dynamo.errors import UsageError
    from kubectl_dynamo.output.render import grid

    if name is None:
        rows = [{"name": n, "printedBy": what} for n, what in contracts.SCHEMAS.items()]
        return Result(rows, lambda data, wide, color, width: grid([(r["name"], r["printedBy"]) for r in data],
                                                                  ["name", "printed by"], width))
    if name not in contracts.SCHEMAS:
        raise UsageError(f'no schema "{name}" (known: {", ".join(contracts.SCHEMAS)})')
    return Result(contracts.schema(name), names=[f"schema/{name}"])
