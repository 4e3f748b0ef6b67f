"""The only package that talks to the API server."""

import sys


def lean_kubernetes() -> None:
    """Register the ``kubernetes`` package without running its ``__init__``, right before importing
    ``kubernetes.client`` / ``kubernetes.config``. That ``__init__`` imports every part of the client:
    besides ``client`` and ``config`` (all we use, with ``stream`` for ``doctor --exec``) also ``dynamic``
    (jsonschema and kubernetes_validate), ``watch``, ``utils``, ``informer`` and ``leaderelection``, about
    40 % of its import time (~0.3 s of a command's start on 2 busy cores). The submodules still import
    from the package's directory as usual, when asked for. Whoever imported ``kubernetes`` first keeps it."""
    if "kubernetes" in sys.modules:
        return
    import importlib.util

    spec = importlib.util.find_spec("kubernetes")
    if spec is not None and spec.submodule_search_locations is not None:
        sys.modules["kubernetes"] = importlib.util.module_from_spec(spec)  # __path__ set, __init__ not run
