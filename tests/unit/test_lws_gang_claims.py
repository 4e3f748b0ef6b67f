"""What detect and explain say about Volcano on the LWS path matches what the real controllers do:
the operator renders LWS pods without schedulerName (ai-dynamo/dynamo@2a6da14c deploy/operator/internal:
only dynamo/grove.go sets it) and LWS's volcano provider only creates the PodGroup and annotates the
pods (kubernetes-sigs/lws@v0.9.0 pkg/schedulerprovider/volcano_provider.go), so default-scheduler binds
them (recorded: tests/data/recorded/lws-healthy, every pod ``schedulerName: default-scheduler``)."""

import copy

from kubectl_dynamo.operator import selection
from kubectl_dynamo.operator.render import explain_dgd
from kubectl_dynamo.output.tables import format_one
from tests.unit import builders as b

LWS_ONLY = selection.Gates(grove=False, lws=True, kai_scheduler=False)


def test_selection_reason_says_the_gang_is_not_enforced_and_how_to_make_it():
    reason = selection.select(LWS_ONLY, {}).reason
    assert "NOT enforced" in reason and "schedulerName: volcano" in reason
    assert "gang-scheduled by Volcano through the LWS controller" not in reason


def _header(doc: dict) -> str:
    return format_one(explain_dgd(doc, operator_version="1.5.0", gates=LWS_ONLY), wide=False, color=False).splitlines()[1]


def test_explain_header_on_lws_without_and_with_scheduler_name():
    doc = b.dgd()
    assert "the gang is not enforced; set schedulerName: volcano" in _header(doc)
    named = copy.deepcopy(doc)
    named["spec"]["components"][0]["podTemplate"]["spec"]["schedulerName"] = "volcano"
    assert "Volcano gang-schedules each group" in _header(named)
