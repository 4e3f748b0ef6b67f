"""kubectl-dynamo: a kubectl plugin for multinode NVIDIA Dynamo deployments."""

__version__ = "0.1.0"
