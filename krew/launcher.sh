#!/bin/sh
# kubectl-dynamo: the krew archive's entry point (krew/bundle.py puts it next to _internal/).
# Runs the bundled CPython on the bundled modules. _internal/python3.X._pth makes that interpreter
# isolated (no PYTHON* variables, no site, no user site-packages) with only the bundle on sys.path,
# and its $ORIGIN rpath finds the bundled shared libraries, so nothing here changes the environment
# of the programs kubectl-dynamo starts (helm, kubeconfig exec credential plugins).
#
# krew starts this through a symlink (~/.krew/bin/kubectl-dynamo -> the store), so follow links
# to the real directory first. Only a symlinked start pays for readlink (one fork and exec).
self=$0
case $self in */*) ;; *) self=./$self ;; esac
while [ -h "$self" ]; do
  link=$(readlink "$self") || exit 70
  case $link in
    /*) self=$link ;;
    *) self=${self%/*}/$link ;;
  esac
done
exec "${self%/*}/_internal/@PYTHON@" -c 'from kubectl_dynamo.cli import run; run()' "$@"
