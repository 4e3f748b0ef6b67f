import pytest

from kubectl_dynamo.operator.quoting import k8s_to_shell_var_syntax, shell_quote_for_bash_c, shell_quote_posix


class TestShellQuoteForBashC:
    @pytest.mark.parametrize(
        "raw, quoted",
        [
            ('{"load_format": "DUMMY", "tensor_parallel_size": 8}',
             '"{\\"load_format\\": \\"DUMMY\\", \\"tensor_parallel_size\\": 8}"'),
            ("$HOME/path", '"\\$HOME/path"'),
            ("path\\to\\file", '"path\\\\to\\\\file"'),
            ("it's", '"it\'"\'"\'s"'),
            ("--model-path", "--model-path"),
            ("/usr/bin/python3", "/usr/bin/python3"),
            ("", ""),
            ("a b", '"a b"'),
            ("`id`", '"\\`id\\`"'),
            ("[x]", '"[x]"'),
            ("hi!", '"hi!"'),
            ("$(GROVE_PCSG_NAME)", '"\\$(GROVE_PCSG_NAME)"'),
        ],
    )
    def test_examples(self, raw, quoted):
        assert shell_quote_for_bash_c(raw) == quoted


@pytest.mark.parametrize(
    "raw, quoted",
    [
        ("python3", "python3"),
        ("dynamo.vllm", "dynamo.vllm"),
        ("--model=org/m:1@x%+,", "--model=org/m:1@x%+,"),
        ("a b", "'a b'"),
        ("it's", "'it'\\''s'"),
        ("", "''"),
        ('{"a": 1}', "'{\"a\": 1}'"),
    ],
)
def test_shell_quote_posix(raw, quoted):
    assert shell_quote_posix(raw) == quoted


def test_k8s_to_shell_var_syntax_leaves_arithmetic():
    host = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-x-ldr-0.$(GROVE_HEADLESS_SERVICE)"
    assert k8s_to_shell_var_syntax(host) == "${GROVE_PCSG_NAME}-${GROVE_PCSG_INDEX}-x-ldr-0.${GROVE_HEADLESS_SERVICE}"
    assert k8s_to_shell_var_syntax("$((GROVE_PCLQ_POD_INDEX + 1))") == "$((GROVE_PCLQ_POD_INDEX + 1))"
    assert k8s_to_shell_var_syntax('"$LWS_LEADER_ADDRESS"') == '"$LWS_LEADER_ADDRESS"'
