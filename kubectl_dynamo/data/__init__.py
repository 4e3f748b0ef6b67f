"""The package's data files (CRDs, the DGD schema, its defaults, the Go field layout).

A plain path, not importlib.resources (whose import cost explain -f ~8 %): the package is always
files on disk, also in the krew archive (krew/build_app.py unpacks the wheel as files).
"""

import os

DATA_DIR = os.path.dirname(os.path.abspath(__file__))
