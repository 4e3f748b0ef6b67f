"""A seeded mutation fuzzer over real DGD manifests: structural mutations (type swaps, nulls, huge
numbers, deep nesting, duplicate components, invalid names) on the parsed document, and textual
ones (tags, aliases, control characters, invalid UTF-8, truncation) on its YAML.

Every case is ``(name, bytes)``; the same seed and corpus give the same cases.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import yaml

Case = Tuple[str, bytes]

HUGE = [2**31, 2**63, 10**20, -(10**20), 99999999999999999999]
SPECIAL_SCALARS = [".inf", "-.inf", ".nan", "~", "yes", "off", "0x1F", "0o17", "1e400", "-0", "2024-01-01",
                   "12:30:00", "'007'", '""', "[]", "{}", "!!binary aGVsbG8=", "!!set {a, b}"]
BAD_TAGS = ['!!python/object:os.system "x"', '!!python/name:os.system ""', '!!int "abc"', "!!bool maybe",
            "!!timestamp nope", "!!float zero", "!custom x", "!!null nonnull", '!<tag:example.com,2000:x> y']
CONTROL = ["\x00", "\x07", "\x1b", "\x7f", "\x85", "\ufeff", "\u2028", "\ud7ff"]
BAD_BYTES = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"]


def corpus(root: Path) -> List[Tuple[str, Any, str]]:
    """(file name, parsed first DGD, text) of every manifest under ``root`` (the real corpus is
    v1alpha1; the v1beta1 test manifests next to it are added so both schemas are mutated)."""
    out = []
    extra = [p for d in ("upgrade", "explain") for p in sorted((root.parent / d).glob("*.yaml"))]
    for path in sorted(root.rglob("*.yaml")) + extra:
        text = path.read_text(encoding="utf-8")
        for doc in yaml.safe_load_all(text):
            if isinstance(doc, dict) and doc.get("kind") == "DynamoGraphDeployment":
                out.append((path.name, doc, text))
                break
    return out


def _paths(node: Any, prefix: tuple = ()) -> Iterator[tuple]:
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


def _set(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value
    return doc


def _delete(doc: Any, path: tuple) -> Any:
    if not path:
        return doc
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    del parent[path[-1]]
    return doc


def _random_value(rng: random.Random) -> Any:
    choice = rng.randrange(12)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice(HUGE)
    if choice == 2:
        return rng.choice([-1, 0, 1, 3])
    if choice == 3:
        return rng.choice([True, False])
    if choice == 4:
        return rng.choice([float("inf"), float("-inf"), float("nan"), 1.5, -0.0])
    if choice == 5:
        return ["x", 1, None]
    if choice == 6:
        return {"x": 1}
    if choice == 7:
        return rng.choice(["", " ", "a b", "UPPER", "-bad-", "x" * 300, "é", "$(X)", "a/b/c", "true"])
    if choice == 8:
        return []
    if choice == 9:
        return {}
    if choice == 10:
        depth = rng.randrange(20, 140)
        value: Any = "leaf"
        for _ in range(depth):
            value = [value] if rng.random() < 0.5 else {"k": value}
        return value
    return "x" * rng.choice([1000, 70000])


def mutate_structure(doc: Any, rng: random.Random) -> Tuple[str, Any]:
    import copy

    doc = copy.deepcopy(doc)
    paths = list(_paths(doc))
    path = rng.choice(paths)
    op = rng.randrange(6)
    label = ".".join(map(str, path)) or "(root)"
    if op == 0:
        return f"swap {label}", _set(doc, path, _random_value(rng))
    if op == 1:
        return f"null {label}", _set(doc, path, None)
    if op == 2 and path:
        return f"delete {label}", _delete(doc, path)
    if op == 3:
        comps = (doc.get("spec") or {}).get("components") or (doc.get("spec") or {}).get("services")
        if isinstance(comps, list) and comps:
            comps.append(copy.deepcopy(comps[0]))
            return "duplicate component", doc
        if isinstance(comps, dict) and comps:
            first = next(iter(comps))
            comps[first.upper()] = copy.deepcopy(comps[first])
            return "upper-case service", doc
    if op == 4:
        meta = doc.setdefault("metadata", {}) if isinstance(doc, dict) else {}
        if isinstance(meta, dict):
            field, value = rng.choice([("name", "Bad_Name"), ("name", "x" * 300), ("namespace", "UPPER"),
                                       ("labels", {"x" * 300: "v"}), ("labels", {"a/b/c": "v"}),
                                       ("annotations", {"nvidia.com/enable-grove": False}),
                                       ("annotations", {"a": 1}), ("labels", {"ok": "bad value!"})])
            meta[field] = value
            return f"metadata.{field}", doc
    return f"swap {label}", _set(doc, path, _random_value(rng))


def _insert(text: str, rng: random.Random, snippet: str) -> str:
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    line = lines[i]
    if ": " in line and not line.strip().startswith("#"):
        key = line.split(": ", 1)[0]
        lines[i] = f"{key}: {snippet}"
    else:
        j = rng.randrange(len(line) + 1)
        lines[i] = line[:j] + snippet + line[j:]
    return "\n".join(lines)


def mutate_text(text: str, rng: random.Random) -> Tuple[str, bytes]:
    op = rng.randrange(8)
    if op == 0:
        tag = rng.choice(BAD_TAGS)
        return f"tag {tag}", _insert(text, rng, tag).encode()
    if op == 1:
        value = rng.choice(SPECIAL_SCALARS)
        return f"scalar {value}", _insert(text, rng, value).encode()
    if op == 2:
        char = rng.choice(CONTROL)
        j = rng.randrange(len(text) + 1)
        return f"char U+{ord(char):04X}", (text[:j] + char + text[j:]).encode("utf-8", "surrogatepass")
    if op == 3:
        raw = text.encode()
        j = rng.randrange(len(raw) + 1)
        bad = rng.choice(BAD_BYTES)
        return f"bytes {bad!r}", raw[:j] + bad + raw[j:]
    if op == 4:
        raw = text.encode()
        return "truncate", raw[: rng.randrange(len(raw) + 1)]
    if op == 5:
        levels = rng.randrange(3, 12)
        bomb = 'a0: &a0 ["x","x","x","x","x","x","x","x","x"]\n' + "\n".join(
            f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels))
        return f"alias bomb {levels}", (text.rstrip("\n") + "\n" + bomb + "\n").encode() if rng.random() < 0.5 \
            else _insert(text, rng, "&r [*r]").encode()
    if op == 6:
        depth = rng.randrange(50, 3000)
        return f"flow depth {depth}", _insert(text, rng, "[" * depth + "]" * depth).encode()
    digits = rng.choice([20, 400, 4500, 10000])
    return f"integer {digits} digits", _insert(text, rng, "9" * digits).encode()


def cases(root: Path, seed: int, count: int) -> Iterator[Case]:
    """``count`` mutants of the corpus, half structural and half textual."""
    rng = random.Random(seed)
    manifests = corpus(root)
    beta = [m for m in manifests if m[1].get("apiVersion") == "nvidia.com/v1beta1"]
    for n in range(count):
        pool = beta if beta and n % 4 in (0, 1) else manifests  # the corpus is mostly v1alpha1
        name, doc, text = pool[rng.randrange(len(pool))]
        if n % 2 == 0:
            what, mutated = mutate_structure(doc, rng)
            try:
                data = yaml.safe_dump(mutated, sort_keys=False, allow_unicode=True).encode("utf-8", "surrogatepass")
            except (yaml.YAMLError, UnicodeEncodeError, RecursionError):
                continue
        else:
            what, data = mutate_text(text, rng)
        yield f"{n}:{name}:{what}", data
