"""Benchmark: offline `explain dgd -f` of one manifest versus `kubectl --help`, and the whole corpus in
one process. Run: .venv/bin/python benchmarks/explain.py [--runs N]

Wall times are the median of N runs of a fresh process each (what a user waits for).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "data" / "corpus"
ONE = CORPUS / "v1.0.1" / "examples_backends_vllm_deploy_disagg-multinode.yaml"


def median_wall(cmd, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    exe = str(Path(sys.executable).parent / "kubectl-dynamo")
    kubectl = shutil.which("kubectl")
    k = median_wall([kubectl, "--help"], args.runs)
    one = median_wall([exe, "explain", "dgd", "-f", str(ONE)], args.runs)
    one_json = median_wall([exe, "explain", "dgd", "-f", str(ONE), "-o", "json"], args.runs)
    helps = median_wall([exe, "--help"], args.runs)

    sys.path.insert(0, str(REPO))
    from kubectl_dynamo.explain import explain_documents
    from kubectl_dynamo.manifests import load

    files = sorted(CORPUS.rglob("*.yaml"))
    t = time.perf_counter()
    dgds = sum(len(explain_documents(load(str(f)))["items"]) for f in files)
    corpus = time.perf_counter() - t

    print(f"kubectl --help                          {k * 1000:7.0f} ms")
    print(f"kubectl-dynamo --help                   {helps * 1000:7.0f} ms")
    print(f"kubectl-dynamo explain dgd -f ONE       {one * 1000:7.0f} ms   ({one / k:.1f}x kubectl --help)")
    print(f"kubectl-dynamo explain dgd -f ONE -o json {one_json * 1000:5.0f} ms   ({one_json / k:.1f}x)")
    print(f"corpus in one process: {len(files)} files, {dgds} DGDs in {corpus:.2f} s "
          f"({corpus / dgds * 1000:.0f} ms per DGD, schema validation included)")


if __name__ == "__main__":
    main()
