import pytest

from kubectl_dynamo.operator.grove import (
    GroveDeployer,
    apply_scheduler,
    clique_names,
    fnv32a,
    pcs_name_for_dgd,
    uses_scaling_group,
)
from kubectl_dynamo.operator.lws import LWSDeployer, dcd_name, lws_name

MULTINODE = {"name": "decode", "multinode": {"nodeCount": 2}}


class TestGrove:
    def test_contract(self):
        d = GroveDeployer()
        assert d.leader_hostname("Decode") == "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-decode-ldr-0.$(GROVE_HEADLESS_SERVICE)"
        assert d.node_rank() == ("$((GROVE_PCLQ_POD_INDEX + 1))", True)
        assert d.needs_dns_wait() is False
        assert d.host_names("Dec", 3) == [
            "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-dec-ldr-0.$(GROVE_HEADLESS_SERVICE)",
            "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-dec-wkr-0.$(GROVE_HEADLESS_SERVICE)",
            "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-dec-wkr-1.$(GROVE_HEADLESS_SERVICE)",
        ]

    def test_portable_aliases(self):
        d = GroveDeployer(portable=True)
        assert d.engine_leader("x") == "$(DYNAMO_LEADER_ADDRESS)"
        assert d.engine_rank() == ("$(DYNAMO_RANK)", False)
        assert d.topology_env("x") == [
            {"name": "DYNAMO_LEADER_ADDRESS", "value": "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-x-ldr-0.$(GROVE_HEADLESS_SERVICE)"},
            {"name": "DYNAMO_RANK", "value": "$(GROVE_PCSG_POD_INDEX)"},
        ]
        # other paths keep the provider form
        assert d.leader_hostname("x").startswith("$(GROVE_PCSG_NAME)")

    def test_clique_names(self):
        assert clique_names("Decode", True) == ["decode-ldr", "decode-wkr"]
        assert clique_names("Frontend", False) == ["frontend"]

    def test_fnv32a(self):
        assert fnv32a(b"") == 0x811C9DC5
        assert fnv32a(b"a") == 0xE40C292C

    # ai-dynamo/dynamo@2a6da14c internal/dynamo/graph.go PCSNameForDGD: budget = 45 - the largest
    # len(component) + len(its longest clique, LongestPodCliqueNameForDGDComponent), floor 8.
    def test_pcs_name_short_unchanged(self):
        assert pcs_name_for_dgd("vllm-disagg", [{"name": "Frontend"}, MULTINODE]) == "vllm-disagg"

    def test_pcs_name_truncated(self):
        name = "a-very-long-deployment-name-for-testing"  # 39 chars
        # budget = 45 - (len("decode") + len("decode-ldr")) = 29
        out = pcs_name_for_dgd(name, [MULTINODE])
        assert out == name[:24] + "-" + format(fnv32a(name.encode()) & 0xFFFF, "04x")
        assert len(out) == 29

    def test_pcs_name_budget_floor(self):
        out = pcs_name_for_dgd("deployment-xyz", [{"name": "c" * 30, "multinode": {"nodeCount": 2}}])
        assert len(out) == 8 and out.startswith("dep-")

    @pytest.mark.parametrize("component, cost", [
        # inter-pod GMS on 2 nodes: cliques decode-gms-0, decode-gms-1, decode-ldr, decode-wkr-1 (graph.go
        # expandMultinodeGMSRoles): the longest is 12, not decode-ldr's 10
        ({"name": "decode", "multinode": {"nodeCount": 2},
          "experimental": {"gpuMemoryService": {"mode": "InterPod"}}}, 6 + 12),
        # single-node inter-pod GMS: decode-gms-0 and decode (expandSingleNodeGMSRoles)
        ({"name": "decode", "experimental": {"gpuMemoryService": {"mode": "InterPod"}}}, 6 + 12),
        # a forced scaling group: one clique named as the component (expandSingleNodeScalingGroupRoles)
        ({"name": "decode", "experimental": {"grove": {"forceScalingGroup": True}}}, 6 + 6),
        ({"name": "decode"}, 6),  # a plain PodClique
    ])
    def test_pcs_name_budget_counts_the_longest_clique(self, component, cost):
        name = "d" * 40
        out = pcs_name_for_dgd(name, [component])
        budget = 45 - cost
        assert out == (name if len(name) <= budget else f"{name[:budget - 5]}-{fnv32a(name.encode()) & 0xFFFF:04x}")
        assert len(out) == min(len(name), budget)

    @pytest.mark.parametrize("component, uses", [
        ({"name": "w", "multinode": {"nodeCount": 2}}, True),
        ({"name": "w", "multinode": {}}, True),  # the CRD defaults nodeCount to 2
        ({"name": "w", "multinode": None}, False),
        ({"name": "w", "experimental": {"gpuMemoryService": {"mode": "InterPod"}}}, True),
        ({"name": "w", "experimental": {"gpuMemoryService": {"mode": "IntraPod"}}}, False),
        ({"name": "w", "experimental": {"grove": {"forceScalingGroup": True}}}, True),
        # malformed (the API server refuses these): read as absent, never raised on
        ({"name": "w", "multinode": {"nodeCount": "3"}}, False),
        ({"name": "w", "multinode": "yes"}, False),
        ({"name": "w", "experimental": "x"}, False),
        ({"name": "w", "experimental": {"grove": "x", "gpuMemoryService": []}}, False),
    ])
    def test_uses_scaling_group_is_usespcsg(self, component, uses):
        """api/v1beta1 dynamocomponentdeployment_types.go UsesPCSG: nodes > 1, inter-pod GMS or forced; the
        webhooks, the provider overrides and the rendered PodCliqueSet all ask this one function."""
        assert uses_scaling_group(component) is uses

    def test_scheduler(self):
        pod = {}
        apply_scheduler(pod, "kai-scheduler")
        assert pod == {"schedulerName": "kai-scheduler"}
        pod = {"schedulerName": "custom"}
        apply_scheduler(pod, "kai-scheduler")
        assert pod == {"schedulerName": "custom"}
        pod = {}
        apply_scheduler(pod, "default-scheduler")
        assert pod == {}


class TestLWS:
    def test_contract_new_form(self):
        d = LWSDeployer(operator_version="1.5.0")
        assert d.leader_hostname("x") == "$(LWS_LEADER_ADDRESS)"
        assert d.node_rank() == ("$(LWS_WORKER_INDEX)", False)
        assert d.needs_dns_wait() is True
        assert d.host_names("x", 3) == [
            "$(LWS_LEADER_ADDRESS)",
            "$(echo \"$LWS_LEADER_ADDRESS\" | sed 's/\\./-1\\./')",
            "$(echo \"$LWS_LEADER_ADDRESS\" | sed 's/\\./-2\\./')",
        ]

    def test_old_form_up_to_1_0(self):
        for version in ("1.0.1", "1.0.0", "0.9.0", None):
            d = LWSDeployer(operator_version=version)
            assert d.leader_hostname("x") == '"$LWS_LEADER_ADDRESS"'
            assert d.node_rank() == ("$(LWS_WORKER_INDEX)", True)
        assert LWSDeployer(operator_version="1.1.0").node_rank() == ("$(LWS_WORKER_INDEX)", False)

    def test_portable(self):
        d = LWSDeployer(portable=True, operator_version="1.6.0")
        assert d.topology_env("x") == [
            {"name": "DYNAMO_LEADER_ADDRESS", "value": "$(LWS_LEADER_ADDRESS)"},
            {"name": "DYNAMO_RANK", "value": "$(LWS_WORKER_INDEX)"},
        ]
        assert d.engine_rank() == ("$(DYNAMO_RANK)", False)

    def test_names(self):
        assert lws_name(dcd_name("trtllm-disagg-tp8", "Decode")) == "trtllm-disagg-tp8-decode-0"
        assert dcd_name("d", "decode", "abc123") == "d-decode-abc123"
