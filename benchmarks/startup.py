"""Benchmark: start-up of the plugin as a user installs it, paired with `kubectl --help`.

    .venv/bin/python benchmarks/startup.py [--runs 15] [--archive dist/kubectl-dynamo_v*.tar.gz]

Builds a wheel of this checkout, installs it with its dependencies into a fresh venv (what
`pipx install` does) and times fresh processes of

    kubectl --help                                   (the baseline)
    kubectl-dynamo --help
    kubectl-dynamo version --client
    kubectl-dynamo explain dgd -f <one multinode corpus manifest>

interleaved: every round runs each command once, in a shuffled order, so load from other processes
on the machine falls on all of them alike. A ratio is the median over rounds of (command / the
same round's `kubectl --help`), for wall time (what the goals are about) and for CPU time (user +
system of the process tree, much less sensitive to a loaded machine). With --archive (a krew
archive from `scripts/release`) the unpacked archive is measured in the same rounds, started
through a symlink as krew starts it. Then the whole DGD corpus is explained
in one process of the installed venv (ms per DGD, schema validation included).

The plugin executable is timed directly: `kubectl dynamo X` is kubectl's own start-up plus an exec
of `kubectl-dynamo X`, the same for every plugin. The baseline is a real kubectl, not the gcloud
version dispatcher (a second process): pass --kubectl, else `kubectl.1.<minor>` found next to the
dispatcher, else `kubectl` on PATH.
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "data" / "corpus"
ONE = CORPUS / "v1.0.1" / "examples_backends_vllm_deploy_disagg-multinode.yaml"
GOALS = {"--help": 1.2, "version --client": 1.2, "explain dgd -f ONE": 2.0}
CORPUS_GOAL_MS = 3.0

# Run by the installed venv's python: the corpus in one process, explain's own entry points.
CORPUS_SCRIPT = """
import sys, time
from pathlib import Path
from kubectl_dynamo.commands.explain import explain_documents
from kubectl_dynamo.inputs.manifests import load
files = sorted(Path(sys.argv[1]).rglob("*.yaml"))
best = None
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    dgds = sum(len(explain_documents(load(str(f)))["items"]) for f in files)
    best = min(best or 1e9, time.perf_counter() - t)
print(len(files), dgds, best)
"""


def log(msg: str) -> None:
    print(f"[startup] {msg}", file=sys.stderr, flush=True)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def baseline_kubectl(explicit: Optional[str]) -> str:
    if explicit:
        return explicit
    found = shutil.which("kubectl")
    if found:
        real = Path(os.path.realpath(found))
        direct = sorted(real.parent.glob("kubectl.1.*"), key=lambda p: int(p.name.rsplit(".", 1)[1]))
        if direct:
            return str(direct[-1])
        return found
    for name in sorted(glob.glob("/usr/lib/google-cloud-sdk/bin/kubectl.1.*")):
        return name
    raise SystemExit("no kubectl found: pass --kubectl")


def run(cmd: Sequence[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd[:4]))} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def build_wheel(out: Path) -> Path:
    """`pip wheel` of this checkout (build isolation: setuptools as pyproject.toml asks)."""
    t = time.perf_counter()
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), str(REPO)])
    wheel = next(out.glob("kubectl_dynamo-*.whl"))
    log(f"built {wheel.name} in {time.perf_counter() - t:.1f} s")
    return wheel


def install_venv(venv: Path, wheel: Path) -> Path:
    """A fresh venv with the wheel and its dependencies, as `pipx install <wheel>` makes it."""
    t = time.perf_counter()
    run([sys.executable, "-m", "venv", str(venv)])
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)])
    log(f"installed into a fresh venv in {time.perf_counter() - t:.1f} s")
    return venv / "bin" / "kubectl-dynamo"


def unpack_archive(archive: Path, into: Path) -> Path:
    """The archive unpacked, started as krew starts it: through a symlink in another directory."""
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    (into / "bin").mkdir()
    link = into / "bin" / "kubectl-dynamo"
    link.symlink_to(into / "kubectl-dynamo" / "kubectl-dynamo")
    return link


def commands(kubectl: str, installs: Dict[str, Path]) -> Dict[str, List[str]]:
    cmds = {"kubectl --help": [kubectl, "--help"]}
    if "wheel" in installs:  # the floor: the interpreter and Click, nothing of ours
        cmds["wheel: python -c 'import click'"] = [str(installs["wheel"].parent / "python"), "-c", "import click"]
    for label, exe in installs.items():
        cmds[f"{label}: --help"] = [str(exe), "--help"]
        cmds[f"{label}: version --client"] = [str(exe), "version", "--client"]
        cmds[f"{label}: explain dgd -f ONE"] = [str(exe), "explain", "dgd", "-f", str(ONE)]
    return cmds


def check_outputs(cmds: Dict[str, List[str]]) -> None:
    """Every command must work (a fast failure would be a fine benchmark result)."""
    for label, cmd in cmds.items():
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not (proc.stdout.strip() or "import click" in label):
            raise SystemExit(f"{label} exited {proc.returncode}: {proc.stderr[-2000:]}")


def timed(cmd: Sequence[str]) -> Tuple[float, float]:
    """One fresh process: (wall seconds, CPU seconds of the process and its children)."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - t, usage.ru_utime + usage.ru_stime


def paired(cmds: Dict[str, List[str]], runs: int, warmup: int = 2) -> Dict[str, List[Tuple[float, float]]]:
    """`runs` rounds; each round runs every command once in a random order. (wall, CPU) per run."""
    times: Dict[str, List[Tuple[float, float]]] = {k: [] for k in cmds}
    order = list(cmds)
    rng = random.Random(14)
    for r in range(warmup + runs):
        rng.shuffle(order)
        for label in order:
            sample = timed(cmds[label])
            if r >= warmup:
                times[label].append(sample)
    return times


def corpus(python: Path, repeats: int) -> tuple:
    out = run([str(python), "-c", CORPUS_SCRIPT, str(CORPUS), str(repeats)]).stdout.split()
    return int(out[0]), int(out[1]), float(out[2])


def report(times: Dict[str, List[Tuple[float, float]]], runs: int, kubectl: str, load_before: str,
           load_after: str, corpus_result: tuple) -> str:
    base = times["kubectl --help"]
    lines = [f"paired rounds: {runs}; load average before {load_before}, after {load_after}; "
             f"{os.cpu_count()} CPUs; baseline {kubectl}",
             "", "| command | wall median (ms) | wall min (ms) | wall ratio | CPU median (ms) | CPU ratio | goal |",
             "|---|---|---|---|---|---|---|"]
    for label, ts in times.items():
        # a ratio: the median over rounds of (this command / the same round's kubectl --help)
        wall = statistics.median(t[0] / b[0] for t, b in zip(ts, base))
        cpu = statistics.median(t[1] / b[1] for t, b in zip(ts, base))
        goal = next((g for k, g in GOALS.items() if label.endswith(": " + k)), None)
        verdict = "" if goal is None else f"≤ {goal}× {'yes' if wall <= goal else 'NO'}"
        lines.append(f"| `{label}` | {statistics.median(t[0] for t in ts) * 1000:.0f} | "
                     f"{min(t[0] for t in ts) * 1000:.0f} | {wall:.2f}× | "
                     f"{statistics.median(t[1] for t in ts) * 1000:.0f} | {cpu:.2f}× | {verdict} |")
    files, dgds, best = corpus_result
    per = best / dgds * 1000
    lines += ["", f"corpus in one process (wheel venv): {files} files, {dgds} DGDs in {best * 1000:.0f} ms "
                  f"(best of 3) = {per:.2f} ms per DGD (goal ≤ {CORPUS_GOAL_MS} ms: "
                  f"{'yes' if per <= CORPUS_GOAL_MS else 'NO'})"]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15, help="paired rounds (medians of this many)")
    ap.add_argument("--kubectl", help="the baseline kubectl binary")
    ap.add_argument("--archive", type=Path, help="also measure this krew archive (scripts/release builds it)")
    ap.add_argument("--venv", type=Path, help="reuse this venv: reinstall only the wheel (no dependency resolution)")
    args = ap.parse_args()
    kubectl = baseline_kubectl(args.kubectl)
    tmp = Path(tempfile.mkdtemp(prefix="kd-startup-"))
    try:
        wheel = build_wheel(tmp / "wheel")
        if args.venv and (args.venv / "bin" / "python").exists():
            run([str(args.venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                 "--force-reinstall", str(wheel)])
            exe = args.venv / "bin" / "kubectl-dynamo"
        else:
            exe = install_venv(args.venv or tmp / "venv", wheel)
        installs = {"wheel": exe}
        if args.archive:
            installs["krew"] = unpack_archive(args.archive, tmp / "krew")
        cmds = commands(kubectl, installs)
        check_outputs(cmds)
        before = load()
        times = paired(cmds, args.runs)
        after = load()
        text = report(times, args.runs, kubectl, before, after, corpus(exe.parent / "python", 3))
        print(text)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
