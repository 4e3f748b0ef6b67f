"""upgrade reads and writes long runs of one-word sequence items apart from ruamel (it costs ~0.2 ms a
node): the result must be what ruamel itself reads and writes, item for item, comment for comment.
Judged by ruamel: each generated document is loaded and dumped with the runs (threshold lowered to 2)
and without them (threshold above any run)."""

from __future__ import annotations

import io
import random

import pytest

from kubectl_dynamo.commands import upgrade

FIRST = "ABCXYZabcxyz/_-"
REST = "abz09_./=+@%-"
ODD = ["'quoted'", '"dq"', "on", "yes", "Off", "1", "1e3", "~", "null", "--", "---x", "-", "a # comment", "x:",
       "-1", ".5", "a:b", "&a x", "*a", "!!str y", "|", ">", "@x", "%x", "`x"]


def _item(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return rng.choice(ODD)
    return rng.choice(FIRST) + "".join(rng.choice(REST) for _ in range(rng.randint(0, 6)))


def _text(items, comment_at, nested):
    lines = []
    for i, item in enumerate(items):
        lines.append(f"    - {item}\n")
        if i == comment_at:
            lines.append("    # a comment between items\n")
    inner = "".join(lines)
    if nested:
        inner += "      continued\n" if not items[-1].startswith(("'", '"')) and "#" not in items[-1] else ""
    return "spec:\n  args:\n" + inner + "  tail: 1\n"


def _roundtrip(text, monkeypatch, run_min):
    monkeypatch.setattr(upgrade, "_RUN_MIN", run_min)
    doc = upgrade.load_rt(text)
    out = upgrade.dump_rt(doc, (2, 4, 2))
    plain = io.StringIO()
    upgrade._yaml((2, 4, 2)).dump(doc, plain)
    return doc, out, plain.getvalue()


@pytest.mark.filterwarnings("ignore::Warning:ruamel")  # "&a x" twice: ruamel warns of the reused anchor
@pytest.mark.parametrize("seed", range(300))
def test_runs_read_and_written_apart_equal_ruamel(seed, monkeypatch):
    rng = random.Random(seed)
    items = [_item(rng) for _ in range(rng.randint(1, 30))]
    text = _text(items, rng.randint(-1, 30), rng.random() < 0.3)
    try:
        slow_doc, slow_out, _ = _roundtrip(text, monkeypatch, 10**9)
    except Exception:  # not YAML (e.g. "x:" under a sequence item): both paths must refuse it
        monkeypatch.setattr(upgrade, "_RUN_MIN", 2)
        try:
            upgrade.load_rt(text)
        except Exception:
            return
        raise AssertionError(f"the fast path read what ruamel refuses:\n{text}") from None
    fast_doc, fast_out, fast_plain = _roundtrip(text, monkeypatch, 2)
    assert [str(x) for x in fast_doc["spec"]["args"]] == [str(x) for x in slow_doc["spec"]["args"]]
    assert [type(x) for x in fast_doc["spec"]["args"]] == [type(x) for x in slow_doc["spec"]["args"]]
    assert fast_out == slow_out, text
    assert fast_plain == slow_out, text  # the tree the fast path left behind is ruamel's too
