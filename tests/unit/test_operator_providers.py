from kubectl_dynamo.operator.grove import GroveDeployer, apply_scheduler, clique_names, fnv32a, pcs_name_for_dgd
from kubectl_dynamo.operator.lws import LWSDeployer, dcd_name, lws_name


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

    def test_pcs_name_short_unchanged(self):
        assert pcs_name_for_dgd("vllm-disagg", [("Frontend", False), ("decode", True)]) == "vllm-disagg"

    def test_pcs_name_truncated(self):
        name = "a-very-long-deployment-name-for-testing"  # 39 chars
        # budget = 45 - (len("decode") + len("decode-ldr")) = 29
        out = pcs_name_for_dgd(name, [("decode", True)])
        assert out == name[:24] + "-" + format(fnv32a(name.encode()) & 0xFFFF, "04x")
        assert len(out) == 29

    def test_pcs_name_budget_floor(self):
        comp = "c" * 30
        out = pcs_name_for_dgd("deployment-xyz", [(comp, True)])
        assert len(out) == 8 and out.startswith("dep-")

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
