#!/usr/bin/env python3
"""Build the krew archive's directory: a relocatable CPython with kubectl-dynamo (run by scripts/release).

    build/venv/bin/python krew/bundle.py --wheel dist/kubectl_dynamo-<v>-py3-none-any.whl --out DIR

DIR/kubectl-dynamo/ gets

    kubectl-dynamo                 krew/launcher.sh: follows krew's symlink, execs the interpreter
    _internal/python3.X            the interpreter that runs this script (a venv's base interpreter)
    _internal/python3.X._pth       sys.path = the bundle only; implies -I and no site (CPython getpath)
    _internal/lib/                 libpython and every shared library the ELF files need but glibc
    _internal/lib/python3.X/       the standard library, lib-dynload/, site-packages/ (the wheel and
                                   its dependencies, installed by pip), all as .pyc files only

Every ELF file gets an $ORIGIN-relative DT_RPATH to _internal/lib (patchelf), so nothing depends on
LD_LIBRARY_PATH: the programs kubectl-dynamo starts see the caller's environment, and a caller's
LD_LIBRARY_PATH cannot swap the bundled libpython or OpenSSL. Linux only: a macOS build needs the
same relocation for Mach-O (install_name_tool, @loader_path), which is not written yet.

Why not PyInstaller (which built this archive before): its Linux onedir bootloader re-executes
itself to set LD_LIBRARY_PATH (which then leaks into every child process) and its runtime hooks
import inspect and zipfile before the program starts; `--help` of the frozen build took 1.5-1.7x
kubectl's, this one 1.1x (docs/development.md, "Facts measured").
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = f"python{sys.version_info.major}.{sys.version_info.minor}"

# Parts of the standard library that kubectl-dynamo and its dependencies never import: tests, GUIs,
# build support, the 2to3 tool, the bundled pip wheels; and (with their extension modules below)
# curses, readline, sqlite3, gdbm and nis, which would bring libncurses, libreadline, libsqlite3 and
# libtirpc with Kerberos.
STDLIB_EXCLUDE = {"test", "idlelib", "tkinter", "turtledemo", "turtle.py", "lib2to3", "ensurepip",
                  "distutils", "pydoc_data", "curses", "sqlite3", "site-packages", "lib-dynload", "__pycache__",
                  f"config-{sys.version_info.major}.{sys.version_info.minor}{sys.abiflags}-{sys.implementation._multiarch}"}
DYNLOAD_EXCLUDE = re.compile(r"^(_tkinter|_curses|_curses_panel|readline|_dbm|_gdbm|_sqlite3|_test\w*|"
                             r"_xxtestfuzz|_ctypes_test|xxlimited\w*|xxsubtype|nis)\.")
# kubernetes ships an asyncio client (kubernetes.aio, 68 MB of source) beside the sync one, and
# depends on aiohttp for it; nothing here imports either (krew/selftest.py imports
# what the commands use). frozenlist alone would bring libstdc++.
SITE_EXCLUDE = ["kubernetes/aio", "bin"]
AIO_ONLY = {"aiohttp", "aiohttp-retry", "aiohappyeyeballs", "aiosignal", "frozenlist", "multidict", "propcache",
            "yarl"}
# glibc's own libraries: every Linux system has them, and they must match its ld.so (PyInstaller's
# list, PyInstaller/depend/dylib.py).
GLIBC = re.compile(r"^(ld-linux[-\w]*|libc|libdl|libm|libpthread|librt|libthread_db|libBrokenLocale|"
                   r"libanl|libcidn|libcrypt|libnsl|libnss_\w+|libresolv|libutil|linux-vdso)\.so")


def log(msg: str) -> None:
    print(f"[bundle] {msg}", file=sys.stderr, flush=True)


def is_elf(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == b"\x7fELF"


def copy_stdlib(dest: Path) -> None:
    stdlib = Path(sysconfig.get_path("stdlib"))
    shutil.copytree(stdlib, dest, symlinks=False,
                    ignore=lambda d, names: [n for n in names if n in STDLIB_EXCLUDE]
                    if Path(d) == stdlib else [n for n in names if n == "__pycache__"])
    dynload = Path(sysconfig.get_config_var("DESTSHARED"))
    (dest / "lib-dynload").mkdir(exist_ok=True)
    for so in sorted(dynload.iterdir()):
        if so.is_file() and not DYNLOAD_EXCLUDE.match(so.name):
            shutil.copy2(so, dest / "lib-dynload" / so.name)


def install_site(wheel: Path, dest: Path) -> None:
    """The wheel and its dependencies, as `pip install` resolves them (no .pyc: compiled below)."""
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-compile", "--target", str(dest), str(wheel)], check=True)
    for rel in SITE_EXCLUDE:
        shutil.rmtree(dest / rel, ignore_errors=True)
    for record in dest.glob("*.dist-info/RECORD"):
        name = record.parent.name.split("-", 1)[0].lower().replace("_", "-")  # name-version.dist-info
        if name in AIO_ONLY:  # every file pip installed for it, as `pip uninstall` reads them
            for line in record.read_text().splitlines():
                (dest / line.split(",", 1)[0]).unlink(missing_ok=True)
    # pip's records, read by nothing at run time: the uninstall lists (kubernetes-validate's is
    # 2.6 MB) and direct_url.json, which names this machine's wheel path and hash (the archive is
    # then the same bytes for the same dependencies).
    for record in [*dest.glob("*.dist-info/RECORD"), *dest.glob("*.dist-info/direct_url.json")]:
        record.unlink()
    for d in sorted((p for p in dest.rglob("*") if p.is_dir()), reverse=True):
        if not any(d.iterdir()):
            d.rmdir()


def compile_sourceless(root: Path, internal: Path) -> None:
    """Every .py becomes a .pyc in its place and the .py goes: imports skip the source stat and the
    archive is smaller. unchecked-hash: no source mtime in the header (reproducible bytes); paths in
    tracebacks are relative to _internal/, not the build machine's."""
    ok = compileall.compile_dir(root, quiet=1, legacy=True, workers=0, stripdir=str(internal), prependdir="",
                                invalidation_mode=compileall.py_compile.PycInvalidationMode.UNCHECKED_HASH)
    if not ok:
        raise SystemExit("bundle: compileall failed (see above)")
    for py in root.rglob("*.py"):
        py.unlink()


def needed_libraries(elf: Path) -> dict[str, Path]:
    """soname -> path of the libraries `ldd` resolves for elf on this machine, glibc's excluded."""
    out = subprocess.run(["ldd", str(elf)], capture_output=True, text=True, check=True).stdout
    libs = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+)", line)
        if m and not GLIBC.match(m.group(1)):
            libs[m.group(1)] = Path(m.group(2))
    return libs


def relocate(internal: Path, patchelf: str) -> list[str]:
    """Copy into _internal/lib every library an ELF file of the bundle needs (and is not already in
    the bundle, as a wheel's own .libs/ are), strip, and point each ELF file's rpath at _internal/lib."""
    lib = internal / "lib"
    elves = [p for p in sorted(internal.rglob("*")) if p.is_file() and not p.is_symlink() and is_elf(p)]
    copied = []
    for elf in list(elves):
        for soname, path in needed_libraries(elf).items():
            target = lib / soname
            if internal in path.resolve().parents or target.exists():
                continue
            shutil.copy2(path.resolve(), target)
            target.chmod(0o755)
            elves.append(target)
            copied.append(soname)
    strip = shutil.which("strip")
    for elf in elves:
        if strip:  # distro and pyenv builds keep debug info (libpython: 23 MB of it); before patchelf
            subprocess.run([strip, "--strip-unneeded", str(elf)], check=True)
        old = subprocess.run([patchelf, "--print-rpath", str(elf)], capture_output=True, text=True,
                             check=True).stdout.strip()
        keep = [p for p in old.split(":") if p.startswith("$ORIGIN")]  # a wheel's own .libs/
        ours = "$ORIGIN" + ("/" + os.path.relpath(lib, elf.parent) if elf.parent != lib else "")
        subprocess.run([patchelf, "--force-rpath", "--set-rpath", ":".join([ours, *keep]), str(elf)], check=True)
    return copied


def launcher(python: str) -> str:
    """krew/launcher.sh for the interpreter _internal/<python>."""
    return (REPO / "krew" / "launcher.sh").read_text().replace("@PYTHON@", python)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True, help="the bundle is OUT/kubectl-dynamo (replaced)")
    ap.add_argument("--patchelf", default=shutil.which("patchelf"))
    args = ap.parse_args(argv)
    if sys.platform != "linux":
        raise SystemExit(f"bundle: {sys.platform} is not supported yet (only Linux ELF relocation is written)")
    if not args.patchelf:
        raise SystemExit("bundle: needs patchelf")
    top = args.out / "kubectl-dynamo"
    shutil.rmtree(top, ignore_errors=True)
    internal = top / "_internal"
    stdlib = internal / "lib" / PY
    (internal / "lib").mkdir(parents=True)

    exe = Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    shutil.copy2(exe, internal / PY)
    # Relative to this file's directory; listing the paths also makes the interpreter isolated.
    (internal / f"{PY}._pth").write_text(f"lib/{PY}\nlib/{PY}/lib-dynload\nlib/{PY}/site-packages\n")
    copy_stdlib(stdlib)
    install_site(args.wheel, stdlib / "site-packages")
    compile_sourceless(stdlib, internal)
    copied = relocate(internal, args.patchelf)
    log(f"{exe} ({sys.version.split()[0]}), libraries bundled: {' '.join(sorted(copied))}")

    (top / "kubectl-dynamo").write_text(launcher(PY))
    (top / "kubectl-dynamo").chmod(0o755)
    return 0


if __name__ == "__main__":
    sys.exit(main())
