"""The one input layer: every manifest, values file and kubeconfig the user names is read here.

Reading is bounded and strict, so bad input ends in one ``error:`` line (exit 2) instead of a hang,
a crash or gigabytes of memory:

- only regular files and stdin (a FIFO, device or directory is refused without opening it for
  reading, so ``-f`` on a FIFO never blocks);
- at most ``KUBECTL_DYNAMO_MAX_INPUT`` bytes (default 4 MiB; the API server stores no object above
  1.5 MiB, etcd's default request limit), and at most one YAML node per 8 of those bytes, counting
  every alias as the nodes it stands for (a "billion laughs" document is refused after the parse
  events, before anything is built);
- strict UTF-8; characters YAML does not allow (NUL, other C0 controls) are refused with their line;
- at most ``MAX_DEPTH`` levels of nesting (the code that walks documents is recursive);
- only the YAML core tags; an explicit tag must fit its value (``!!int "abc"`` is refused), and a
  timestamp stays the string it was written as, as Kubernetes' YAML decoder keeps it.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import sys
from typing import IO, Any, List, NamedTuple, Optional, Sequence

from kubectl_dynamo.errors import InputError
from kubectl_dynamo.inputs.files import file_type

DGD_KIND = "DynamoGraphDeployment"

MAX_INPUT_ENV = "KUBECTL_DYNAMO_MAX_INPUT"
DEFAULT_MAX_INPUT = 4 * 1024 * 1024
BYTES_PER_NODE = 8  # the node budget scales with the byte limit: one knob raises both
MAX_DEPTH = 100  # deeper than any Kubernetes object (a pod template is about 15 levels)
MAX_INT_DIGITS = 4000  # below Python's int/str conversion limit (4300); int64 has 19 digits

_UNITS = {"": 1, "k": 1000, "ki": 1024, "m": 1000**2, "mi": 1024**2, "g": 1000**3, "gi": 1024**3}
_TAG = "tag:yaml.org,2002:"
# Tags a Kubernetes manifest can carry: the YAML core schema, plus timestamp (PyYAML resolves
# unquoted dates to it) and merge (``<<: *base``).
ALLOWED_TAGS = {_TAG + t for t in ("str", "int", "float", "bool", "null", "seq", "map", "timestamp", "merge")}
# Outside YAML 1.1's printable set (c-printable: \t \n \r, 20-7E, 85, A0-D7FF, E000-FFFD,
# 10000-10FFFF); refused before parsing. Spelled as the complement's ranges: the negated class
# of the allowed ranges takes ~4 ms to compile, a tenth of explain -f's own run time.
_NOT_PRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


def max_input_bytes() -> int:
    """The byte limit: ``KUBECTL_DYNAMO_MAX_INPUT`` (e.g. ``16Mi``, ``20000000``) or 4 MiB."""
    text = os.environ.get(MAX_INPUT_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_INPUT
    m = re.fullmatch(r"(\d{1,15})\s*([kKmMgG]i?)?B?", text)
    if not m or int(m.group(1)) == 0:
        raise InputError(f"{MAX_INPUT_ENV}={text!r}: use a size such as 16Mi or 20000000")
    return int(m.group(1)) * _UNITS[(m.group(2) or "").lower()]


def _size_text(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n} bytes"


class NoDgd(InputError):
    """Input without a DynamoGraphDeployment: one message and exit code 2 in every command."""

    def __init__(self, sources: Sequence[str]):
        names = ["<stdin>" if s == "-" else s for s in sources]
        super().__init__(f"{', '.join(names)}: no DynamoGraphDeployment found")
        self.sources = list(sources)


class Document(NamedTuple):  # not a dataclass: creating that class cost every manifest read ~0.6 ms
    position: int  # 0-based, in the stream (not "index": that would shadow tuple.index)
    data: object  # the parsed document (dict for Kubernetes objects)

    @property
    def kind(self) -> Optional[str]:
        kind = self.data.get("kind") if isinstance(self.data, dict) else None
        return kind if isinstance(kind, str) else None

    @property
    def dgd(self) -> Optional[dict]:
        """The document if it is a nvidia.com DynamoGraphDeployment, else None."""
        data = self.data
        if isinstance(data, dict) and data.get("kind") == DGD_KIND and \
                str(data.get("apiVersion", "")).startswith("nvidia.com/"):
            return data
        return None

    @property
    def is_dgd(self) -> bool:
        return self.dgd is not None

    def label(self) -> str:
        if not isinstance(self.data, dict):
            return f"document {self.position + 1}"
        meta = self.data.get("metadata")
        name = (meta.get("name") if isinstance(meta, dict) else None) or "?"
        return f"{self.kind or 'unknown kind'}/{name} (document {self.position + 1})"


# -- bytes ------------------------------------------------------------------------------------
def read_bytes(path: str, stdin: Optional[IO] = None, what: str = "") -> bytes:
    """The bytes of ``path`` (``-`` = stdin), refused beyond the limit or when not a regular file."""
    limit = max_input_bytes()
    label = _label(path, what)
    if path == "-":
        stream = stdin or sys.stdin
        raw = getattr(stream, "buffer", stream)
        try:
            data = raw.read(limit + 1)
        except (OSError, ValueError) as e:
            raise InputError(f"{label}: cannot read: {e}") from None
        if isinstance(data, str):  # a text stream handed in by a caller or test runner
            data = data.encode("utf-8", "surrogateescape")
    else:
        data = _read_regular(path, label, limit)
    if len(data) > limit:
        raise InputError(f"{label}: larger than the {_size_text(limit)} input limit "
                         f"(set {MAX_INPUT_ENV}, e.g. {MAX_INPUT_ENV}=64Mi, to read it)")
    return data


def _label(path: str, what: str) -> str:
    name = "<stdin>" if path == "-" else path
    return f"{what} {name}" if what else name


def _read_regular(path: str, label: str, limit: int) -> bytes:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{label}: no such file") from None
    except OSError as e:
        raise InputError(f"{label}: cannot read: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{label}: not a regular file ({file_type(st.st_mode, 'not a file')}); give a file or '-' for stdin")
    try:
        # O_NONBLOCK: if the path was swapped for a FIFO since the stat, open does not wait for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise InputError(f"{label}: cannot read: {e.strerror or e}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise InputError(f"{label}: not a regular file; give a file or '-' for stdin")
        try:
            return f.read(limit + 1)
        except OSError as e:
            raise InputError(f"{label}: cannot read: {e.strerror or e}") from None


def decode(data: bytes, label: str) -> str:
    """Strict UTF-8 (a BOM is dropped)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(f"{label}: line {line}: not valid UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start})") from None


def _check_printable(text: str, source: str) -> None:
    bad = _NOT_PRINTABLE.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        column = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
        raise InputError(f"{source}: line {line}, column {column}: character U+{ord(bad.group()):04X} is not "
                         "allowed in YAML (control characters must be escaped inside a double-quoted string)")


def read_text(path: str, stdin: Optional[IO] = None, what: str = "") -> str:
    return decode(read_bytes(path, stdin, what), _label(path, what))


# -- -f FILE|DIR, repeatable, -R: as kubectl --------------------------------------------------
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")  # kubectl's FileExtensions for a directory's files
MAX_FILES = 1000
TOTAL_INPUTS = 16  # all files named by -f together: at most this many times the per-file limit


def expand_filenames(paths: Sequence[str], recursive: bool = False) -> List[str]:
    """The files ``-f`` names, as kubectl reads them: a file as given (any name), a directory's
    *.yaml, *.yml and *.json files in name order (``recursive``: its subdirectories too, symlinked
    directories not followed), ``-`` for stdin (once). Bounded: at most MAX_FILES files of at most
    TOTAL_INPUTS × the input limit together, else one InputError."""
    files: List[str] = []
    total, budget = 0, TOTAL_INPUTS * max_input_bytes()
    for path in paths:
        if path == "-":
            if "-" in files:
                raise InputError("-f -: stdin can be read only once")
            files.append(path)
            continue
        found = _directory_files(path, recursive) if os.path.isdir(path) else [path]
        if os.path.isdir(path) and not found:
            raise InputError(f"{path}: no {', '.join('*' + x for x in MANIFEST_SUFFIXES)} files"
                             + ("" if recursive else " (-R reads its subdirectories)"))
        for f in found:
            files.append(f)
            if len(files) > MAX_FILES:
                raise InputError(f"-f names more than {MAX_FILES} files; name fewer files or directories")
            try:
                total += os.stat(f).st_size
            except OSError:
                continue  # read_bytes says why, with the file's name
            if total > budget:
                raise InputError(f"-f: the files named add up to more than {_size_text(budget)} "
                                 f"({TOTAL_INPUTS} × the input limit; set {MAX_INPUT_ENV} to raise it)")
    return files


def _directory_files(top: str, recursive: bool) -> List[str]:
    out: List[str] = []
    for root, dirs, names in os.walk(top):  # os.walk does not follow symlinked directories
        dirs.sort()
        out += [os.path.join(root, n) for n in sorted(names) if n.endswith(MANIFEST_SUFFIXES)
                and os.path.isfile(os.path.join(root, n))]
        if not recursive:
            break
    return out


# -- YAML -------------------------------------------------------------------------------------
def _yaml():
    import yaml

    return yaml


@functools.cache
def _loader_class():
    yaml = _yaml()
    from yaml.constructor import ConstructorError, SafeConstructor
    from yaml.nodes import MappingNode, ScalarNode
    from yaml.resolver import Resolver

    parser = getattr(getattr(yaml, "cyaml", None), "CParser", None) or _python_parser()

    class Constructor(SafeConstructor):
        def construct_yaml_timestamp(self, node):  # Kubernetes' decoder keeps the text
            return self.construct_scalar(node)

        def construct_mapping(self, node, deep=False):
            """Keys become strings, as JSON (and the API server) see them: ``1:`` and ``true:``
            are the keys "1" and "true", not one Python key."""
            if not isinstance(node, MappingNode):
                raise ConstructorError(None, None, f"expected a mapping, found {node.id}", node.start_mark)
            self.flatten_mapping(node)
            mapping = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, ScalarNode):
                    raise ConstructorError(None, None, "a mapping key must be a plain value, not a collection",
                                           key_node.start_mark)
                key = self.construct_object(key_node, deep=deep)
                if key is None:  # sigs.k8s.io/yaml refuses it ("unsupported map key of type <nil>")
                    raise ConstructorError(None, None, "a mapping key is null (~, null or empty): Kubernetes' YAML "
                                           "reader refuses it; quote it if it is a string", key_node.start_mark)
                mapping[key if isinstance(key, str) else _key_text(key)] = self.construct_object(value_node, deep=deep)
            return mapping

    # types-PyYAML types a constructor's first argument as a full Loader; PyYAML passes the loader
    # instance, of which this class is a base. (The map constructor SafeConstructor registers already
    # calls construct_mapping on the instance, so the override above needs no registration.)
    Constructor.add_constructor(_TAG + "timestamp", Constructor.construct_yaml_timestamp)  # type: ignore[type-var]

    class Loader(parser, Constructor, Resolver):  # type: ignore[misc, valid-type]
        def __init__(self, stream):
            parser.__init__(self, stream)
            Constructor.__init__(self)
            Resolver.__init__(self)

    return Loader


def _python_parser():
    from yaml.composer import Composer
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class PyParser(Reader, Scanner, Parser, Composer):
        def __init__(self, stream):
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            Composer.__init__(self)

    return PyParser


def _key_text(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)


def _where(source: str, mark) -> str:
    return f"{source}: line {mark.line + 1}, column {mark.column + 1}" if mark is not None else source


def _scalar_fits(tag: str, value: str) -> bool:
    """Whether an explicitly tagged scalar is a value of its tag (as the implicit resolver sees it)."""
    if tag in (_TAG + "str", _TAG + "merge"):
        return True
    if tag == _TAG + "float" and _scalar_fits(_TAG + "int", value):
        return True
    from yaml.resolver import Resolver

    candidates = Resolver.yaml_implicit_resolvers.get(value[:1], [])
    return any(t == tag and rx.match(value) for t, rx in candidates)


def _check_events(text: str, source: str, node_limit: int) -> bool:
    """One pass over the parse events (no objects are built): tags, depth, integer sizes, the
    node budget. Returns whether the stream uses aliases (then their expansion is measured)."""
    yaml = _yaml()
    from yaml import events as ev

    loader = _loader_class()(text)
    depth = nodes = 0
    aliases = False
    try:
        while loader.check_event():
            e = loader.get_event()
            if isinstance(e, (ev.SequenceStartEvent, ev.MappingStartEvent, ev.ScalarEvent)):
                nodes += 1
                if nodes > node_limit:
                    raise InputError(f"{_where(source, e.start_mark)}: more than {node_limit:,} YAML nodes "
                                     f"(raise {MAX_INPUT_ENV} to read larger input)")
                tag = e.tag
                if tag is not None and tag != "!":
                    if tag not in ALLOWED_TAGS:
                        raise InputError(f"{_where(source, e.start_mark)}: YAML tag {_short(tag)} is not allowed "
                                         "(manifests use plain YAML: !!str, !!int, !!float, !!bool, !!null, !!seq, !!map)")
                    if isinstance(e, ev.ScalarEvent) and not _scalar_fits(tag, e.value):
                        raise InputError(f"{_where(source, e.start_mark)}: {e.value[:40]!r} is not a valid "
                                         f"{_short(tag)} value")
                if isinstance(e, ev.ScalarEvent):
                    if len(e.value) > MAX_INT_DIGITS and (e.implicit[0] or tag == _TAG + "int") \
                            and re.fullmatch(r"[-+]?[0-9_]+", e.value):
                        raise InputError(f"{_where(source, e.start_mark)}: an integer of {len(e.value):,} digits "
                                         "(no Kubernetes field holds more than 19)")
                    continue
                depth += 1
                if depth > MAX_DEPTH:
                    raise InputError(f"{_where(source, e.start_mark)}: nested deeper than {MAX_DEPTH} levels")
            elif isinstance(e, (ev.SequenceEndEvent, ev.MappingEndEvent)):
                depth -= 1
            elif isinstance(e, ev.AliasEvent):
                aliases = True
    except yaml.YAMLError as e:
        raise InputError(_yaml_message(e, source)) from None
    finally:
        loader.dispose()
    return aliases


def _short(tag: str) -> str:
    return "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else tag


def _check_expansion(node, source: str, node_limit: int) -> None:
    """Nodes and depth of a composed document with every alias expanded, computed once per
    distinct node (so measuring a billion-laughs document costs as much as its text)."""
    from yaml.nodes import MappingNode, ScalarNode

    def children(n):
        return [c for pair in n.value for c in pair] if isinstance(n, MappingNode) else n.value

    memo: dict = {}
    active: set = set()
    stack = [(node, False)]
    while stack:
        n, done = stack.pop()
        key = id(n)
        if done:
            active.discard(key)
            size, height = 1, 0
            for c in children(n):
                s, h = (1, 0) if isinstance(c, ScalarNode) else memo[id(c)]
                size += s
                height = max(height, h)
            if size > node_limit:
                raise InputError(f"{_where(source, n.start_mark)}: YAML aliases expand to more than {node_limit:,} "
                                 "nodes (an alias bomb?)")
            if height + 1 > MAX_DEPTH:
                raise InputError(f"{_where(source, n.start_mark)}: aliases nest deeper than {MAX_DEPTH} levels")
            memo[key] = (size, height + 1)
            continue
        if key in memo:
            continue
        if key in active:
            raise InputError(f"{_where(source, n.start_mark)}: a YAML alias refers to the collection that contains it")
        active.add(key)
        stack.append((n, True))
        stack += [(c, False) for c in children(n) if not isinstance(c, ScalarNode) and id(c) not in memo]


def _yaml_message(e, source: str) -> str:
    mark = getattr(e, "problem_mark", None)
    if mark is None and getattr(e, "position", None) is not None:  # a ReaderError
        return f"{source}: invalid YAML: {e}"
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return f"{_where(source, mark)}: invalid YAML: {problem}"


# etcd's default --max-request-bytes (1.5 MiB): the API server stores no object above it, so a
# document that large can never be created; refused before parsing (parsing it costs seconds).
MAX_OBJECT_BYTES = 3 * 512 * 1024
_DOCUMENT_START = re.compile(r"^---(?=[ \t]|$)", re.MULTILINE)


def _check_document_sizes(text: str, source: str) -> None:
    starts = [0] + [m.start() for m in _DOCUMENT_START.finditer(text)] + [len(text)]
    for a, b in zip(starts, starts[1:]):
        size = len(text[a:b].encode("utf-8")) if b - a > MAX_OBJECT_BYTES // 4 else 0
        if size > MAX_OBJECT_BYTES:
            line = text.count("\n", 0, a) + 1
            raise InputError(f"{source}: the YAML document at line {line} is {size:,} bytes; the API server stores no "
                             f"object above {MAX_OBJECT_BYTES:,} bytes (etcd's 1.5 MiB request limit)")


def parse(text: str, source: str = "<stdin>") -> List[Document]:
    """All non-empty YAML documents; any problem is an InputError naming the line."""
    yaml = _yaml()
    node_limit = max(max_input_bytes() // BYTES_PER_NODE, 1)
    _check_printable(text, source)
    _check_document_sizes(text, source)
    if text and not text.endswith("\n"):
        # kubectl's YAML parser ends a final block scalar with a line break even when the file
        # does not; PyYAML would drop it (the operator renders the script with it).
        text += "\n"
    aliases = _check_events(text, source, node_limit)
    loader = _loader_class()(text)
    docs = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if aliases and node is not None:
                _check_expansion(node, source, node_limit)
            docs.append(loader.construct_document(node))
    except yaml.YAMLError as e:
        raise InputError(_yaml_message(e, source)) from None
    except (ValueError, TypeError, OverflowError) as e:  # a constructor's own error, e.g. an unhashable key
        raise InputError(f"{source}: invalid YAML: {e}") from None
    finally:
        loader.dispose()
    return [Document(i, d) for i, d in enumerate(docs) if d is not None]


def load(path: str, stdin: Optional[IO] = None, what: str = "") -> List[Document]:
    return parse(read_text(path, stdin, what), _label(path, what))


def load_mapping(path: str, what: str) -> dict:
    """A single-document YAML mapping (a values file, a kubeconfig); empty = ``{}``."""
    label = _label(path, what)
    docs = parse(read_text(path, what=what), label)
    if len(docs) > 1:
        raise InputError(f"{label}: holds {len(docs)} YAML documents; expected one")
    data = docs[0].data if docs else {}
    if not isinstance(data, dict):
        raise InputError(f"{label}: must be a YAML mapping, not {_type_word(data)}")
    return data


def _type_word(value: Any) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__)
