"""Shell quoting exactly as the Dynamo operator does it (ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/backend_*.go).

Two quoting styles exist because two code paths build shell lines:

* ``shell_quote_for_bash_c`` wraps a token in *double* quotes (flag injection with ``sh -c exec``,
  the Ray leader line, the TRT-LLM original command).  ``$`` is escaped, so a kubelet ``$(VAR)``
  reference inside a quoted token is still expanded by the kubelet, never by the shell.
* ``shell_quote_posix`` wraps a token in *single* quotes (elastic EP launch lines).
"""

from __future__ import annotations

import re

# Any of these characters makes the operator quote a token for `bash -c`.
_BASH_C_SPECIAL = frozenset(" \t\n'\"\\{}[]$`!")

# Tokens made only of these characters are left bare by the POSIX quoter.
_POSIX_SAFE = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")

# A kubelet reference $(NAME); `$((` (shell arithmetic) does not match because `(` is not a name char.
_K8S_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def shell_quote_for_bash_c(s: str) -> str:
    """Double-quote ``s`` if it holds a shell-special character; otherwise return it unchanged.

    The escape order matters: backslashes first so later escapes are not doubled, and the single
    quote last (its ``'"'"'`` replacement contains a double quote that must stay unescaped).
    """
    if not any(ch in _BASH_C_SPECIAL for ch in s):
        return s
    escaped = (
        s.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("$", "\\$")
        .replace("`", "\\`")
        .replace("'", "'\"'\"'")
    )
    return f'"{escaped}"'


def shell_quote_posix(s: str) -> str:
    """Single-quote ``s`` unless it is made only of safe characters (``'`` becomes ``'\\''``).

    The empty string does not match the safe pattern, so it becomes ``''``.
    """
    if _POSIX_SAFE.match(s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


def k8s_to_shell_var_syntax(s: str) -> str:
    """``$(VAR)`` -> ``${VAR}``: for init containers, where the kubelet cannot expand Grove/LWS
    variables (they are appended after the operator's env), so the shell must."""
    return _K8S_VAR.sub(r"${\1}", s)
