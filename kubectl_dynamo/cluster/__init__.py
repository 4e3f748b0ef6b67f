"""The only package that talks to the API server.

The ``kubernetes`` package's ``__init__`` imports every part of the client: besides ``client`` and
``config`` (all we use, with ``stream`` for ``doctor --exec``) also ``dynamic`` (jsonschema and
kubernetes_validate), ``watch``, ``utils``, ``informer`` and ``leaderelection``, about 40 % of its
import time (~0.2 s of a command's start on 2 busy cores; benchmarks/doctor_scale.py). So the package is
registered here without running its ``__init__``: its submodules still import from its directory as
usual, only when asked for. Nothing is imported here; someone who imported ``kubernetes`` first keeps it.
"""

import sys

if "kubernetes" not in sys.modules:
    import importlib.util

    _spec = importlib.util.find_spec("kubernetes")
    if _spec is not None and _spec.submodule_search_locations is not None:
        sys.modules["kubernetes"] = importlib.util.module_from_spec(_spec)  # __path__ set, __init__ not run
