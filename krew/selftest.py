"""Self-test of the krew bundle, run by scripts/release with the bundled interpreter:

    DIR/kubectl-dynamo/_internal/python3.X krew/selftest.py DIR/kubectl-dynamo/_internal

Imports every module the commands may import lazily and reads the bundled data, so a module or
data file left out of the bundle fails the release, not a user; and every module must come from
the bundle (its ._pth allows nothing else), not from the build machine's Python.
"""

import importlib
import pkgutil
import sys
from importlib import resources

import kubectl_dynamo

for m in pkgutil.walk_packages(kubectl_dynamo.__path__, "kubectl_dynamo."):
    if not m.name.endswith(".__main__"):  # importing __main__ would run the CLI
        importlib.import_module(m.name)
for name in ("kubernetes.client", "kubernetes.config", "kubernetes.watch", "kubernetes.dynamic",
             "kubernetes.stream", "ruamel.yaml", "yaml", "jsonschema", "click",
             "kubernetes_validate", "kubernetes_validate.utils", "ssl", "ctypes"):
    importlib.import_module(name)
crds = [p.name for p in resources.files("kubectl_dynamo").joinpath("data/crds").iterdir()]
assert any(n.endswith(".yaml") for n in crds), crds
import kubernetes_validate  # noqa: E402

kubernetes_validate.validate({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
                             "1.33.0", strict=True)
bundle = sys.argv[1]
outside = sorted(name for name, m in list(sys.modules.items())
                 if m is not sys.modules["__main__"] and getattr(m, "__file__", None)
                 and not m.__file__.startswith(bundle))
assert not outside, f"imported from outside the bundle: {outside}"
print("selftest ok:", len(sys.modules), "modules,", len(crds), "CRD files")
