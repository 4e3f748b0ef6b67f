#!/usr/bin/env python3
"""Build the krew archive's directory: kubectl-dynamo as a pure-Python application that runs on the
host's python3 >= 3.10 (run by scripts/release with build/venv's Python; stdlib only).

    build/venv/bin/python krew/build_app.py --wheel dist/kubectl_dynamo-<v>-py3-none-any.whl --out DIR

DIR/kubectl-dynamo/ gets

    kubectl-dynamo     krew/launcher.py: a sh/Python polyglot; sh finds a python3, which runs the file
    lib/               the wheel and the pinned dependencies (krew/vendor.txt), unpacked, .py only
    LICENSE

Nothing in it is specific to an OS or a CPU: every wheel must be tagged py*-none-any and no file may
be a compiled object (ELF, Mach-O, PE, or named .so/.dylib/.pyd/.dll), which `check_pure` proves
on the finished tree. No .pyc is shipped (it is tied to a Python version, not to a platform, but
the host's version is not known here): CPython writes lib/**/__pycache__ on the first run.
Why this shape and not a bundled interpreter per platform: docs/distribution.md.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parents[1]
MIN_PYTHON = (3, 10)  # pyproject.toml requires-python; krew/launcher.py says the same
# What no file of the archive may be or be named (native code for one OS/arch).
NATIVE_SUFFIX = re.compile(r"\.(so(\.\d+)*|dylib|pyd|dll|exe|a|o|lib)$", re.I)
NATIVE_MAGIC = (b"\x7fELF", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe",
                b"\xca\xfe\xba\xbe", b"MZ")
PURE_TAG = re.compile(r"^Tag: py[23]-none-any$")
# Parts of wheels nothing here imports: the kubernetes asyncio client (it needs aiohttp, left out),
# and test suites.
SKIP = re.compile(r"^(kubernetes/aio/|[^/]+/tests?/|jsonschema/benchmarks/)")
RPDS_SHIM = '''\
"""rpds-py's API in pure Python (pyrsistent-as-rpds-py); written by krew/build_app.py.

jsonschema and referencing import `rpds`, a compiled Rust extension; the krew archive has no
compiled code (docs/distribution.md).
"""
from pyrsistent_as_rpds.pure import *  # noqa: F403
from pyrsistent_as_rpds.pure import __all__  # noqa: F401
'''


def log(msg: str) -> None:
    print(f"[build_app] {msg}", file=sys.stderr, flush=True)


def pip_download(args: list[str], dest: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                    "--require-hashes", "-d", str(dest), *args], check=True)


def unpack_wheel(wheel: Path, lib: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        wheel_meta = next(n for n in names if re.fullmatch(r"[^/]+\.dist-info/WHEEL", n))
        tags = [t for t in z.read(wheel_meta).decode().splitlines() if t.startswith("Tag:")]
        if not tags or not all(PURE_TAG.match(t) for t in tags):
            raise SystemExit(f"build_app: {wheel.name} is not pure Python: {tags}")
        for name in names:
            if name.endswith("/") or SKIP.match(name) or name.split("/", 1)[0].endswith(".data"):
                continue
            target = lib / PurePosixPath(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(name))


def unpack_pyyaml(sdist: Path, lib: Path) -> None:
    """Only lib/yaml/*.py of PyYAML's source (the pure-Python yaml package) and its licence."""
    with tarfile.open(sdist) as t:
        members = t.getmembers()
        top = members[0].name.split("/")[0]  # pyyaml-<version>
        version = top.rsplit("-", 1)[1]
        for m in members:
            parts = m.name.split("/")
            if m.isfile() and parts[1:3] == ["lib", "yaml"] and len(parts) == 4 and m.name.endswith(".py"):
                (lib / "yaml").mkdir(exist_ok=True)
                (lib / "yaml" / parts[3]).write_bytes(t.extractfile(m).read())  # type: ignore[union-attr]
        info = lib / f"PyYAML-{version}.dist-info"
        info.mkdir()
        info.joinpath("LICENSE").write_bytes(t.extractfile(f"{top}/LICENSE").read())  # type: ignore[union-attr]
    info.joinpath("METADATA").write_text(f"Metadata-Version: 2.1\nName: PyYAML\nVersion: {version}\n"
                                         "Summary: lib/yaml of the source distribution (pure Python)\n")
    info.joinpath("top_level.txt").write_text("yaml\n")


def check_pure(root: Path) -> int:
    """Fail on any file that is native code for one OS/arch; returns the number of files checked."""
    bad, n = [], 0
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        n += 1
        with path.open("rb") as f:
            head = f.read(4)
        if NATIVE_SUFFIX.search(path.name) or any(head.startswith(m) for m in NATIVE_MAGIC):
            bad.append(str(path.relative_to(root)))
    if bad:
        raise SystemExit(f"build_app: platform-specific files: {bad[:20]}")
    return n


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--downloads", type=Path, help="where pip puts the pinned wheels (default OUT/../downloads)")
    args = ap.parse_args(argv)

    top = args.out / "kubectl-dynamo"
    shutil.rmtree(top, ignore_errors=True)
    lib = top / "lib"
    lib.mkdir(parents=True)
    downloads = args.downloads or args.out.parent / "downloads"
    shutil.rmtree(downloads, ignore_errors=True)
    pure = ["--only-binary=:all:", "--platform", "any", "--implementation", "py", "--abi", "none",
            "--python-version", ".".join(map(str, MIN_PYTHON))]
    pip_download([*pure, "-r", str(REPO / "krew/vendor.txt")], downloads / "wheels")
    pip_download(["--no-binary=:all:", "--no-build-isolation", "-r", str(REPO / "krew/vendor-sdist.txt")],
                 downloads / "sdist")
    wheels = sorted((downloads / "wheels").glob("*.whl"))
    for wheel in [*wheels, args.wheel]:
        unpack_wheel(wheel, lib)
    (sdist,) = (downloads / "sdist").glob("*.tar.gz")
    unpack_pyyaml(sdist, lib)
    (lib / "rpds").mkdir()
    (lib / "rpds" / "__init__.py").write_text(RPDS_SHIM)
    # pip's uninstall lists: nothing reads them at run time.
    for record in lib.glob("*.dist-info/RECORD"):
        record.unlink()

    launcher = (REPO / "krew/launcher.py").read_text()
    (top / "kubectl-dynamo").write_text(launcher)
    (top / "kubectl-dynamo").chmod(0o755)
    shutil.copyfile(REPO / "LICENSE", top / "LICENSE")
    n = check_pure(top)
    log(f"{len(wheels) + 2} distributions, {n} files, none platform-specific; tree sha256 {tree_digest(top)[:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
