import pytest

from kubectl_dynamo.operator.flags import (
    detect_backend_framework,
    determine_backend_framework,
    inject_flags_into_container_command,
    is_python_command,
    resolve_gpu_count,
)


@pytest.mark.parametrize("cmd", ["python", "python3", "python3.11", "/usr/bin/python3.8",
                                 "/home/user/.pyenv/shims/python3.9", "python2"])
def test_is_python(cmd):
    assert is_python_command(cmd)


@pytest.mark.parametrize("cmd", ["sh", "/bin/sh", "bash", "pythonx", "ipython3", "python3.", "java", ""])
def test_is_not_python(cmd):
    assert not is_python_command(cmd)


class TestInjection:
    def test_direct_python_appends_tokens(self):
        c = {"command": ["python3"], "args": ["-m", "dynamo.vllm"]}
        inject_flags_into_container_command(c, "--a 1 --b $(X)", False, "vllm")
        assert c == {"command": ["python3"], "args": ["-m", "dynamo.vllm", "--a", "1", "--b", "$(X)"]}

    def test_direct_python_needs_shell_wraps_with_exec_and_quotes(self):
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--kv", '{"a": 1}']}
        inject_flags_into_container_command(c, "--rank $((I + 1))", True, "vllm")
        assert c["command"] == ["sh", "-c"]
        assert c["args"] == ['exec python3 -m dynamo.vllm --kv "{\\"a\\": 1}" --rank $((I + 1))']

    def test_direct_python_needs_shell_without_args(self):
        c = {"command": ["python3", "-m", "dynamo.sglang"]}
        inject_flags_into_container_command(c, "--x 1", True, "sglang")
        assert c["args"] == ["exec python3 -m dynamo.sglang --x 1"]

    def test_shell_script_inserts_after_framework_token(self):
        c = {"command": ["/bin/sh", "-c"], "args": ["python3 -m dynamo.vllm --data-parallel-size 8"]}
        inject_flags_into_container_command(c, "--F", False, "vllm")
        assert c["args"] == ["python3 -m dynamo.vllm --F --data-parallel-size 8"]

    def test_shell_script_end_of_string(self):
        c = {"command": ["sh", "-c"], "args": ["python3 -m dynamo.sglang"]}
        inject_flags_into_container_command(c, "--F", False, "sglang")
        assert c["args"] == ["python3 -m dynamo.sglang --F"]

    def test_model_path_containing_framework_moves_insertion_point(self):
        c = {"command": ["sh", "-c"], "args": ["python3 -m dynamo.vllm --model org/vllm-model --tensor-parallel-size 8"]}
        inject_flags_into_container_command(c, "--F", False, "vllm")
        assert c["args"] == ["python3 -m dynamo.vllm --model org/vllm-model --F --tensor-parallel-size 8"]

    def test_pipeline_each_python_segment_and_delimiter_kept(self):
        c = {"command": ["bash", "-c"],
             "args": ["echo start && python3 -m dynamo.vllm --a;python3 -m dynamo.vllm --b | tee log"]}
        inject_flags_into_container_command(c, "--F", False, "vllm")
        assert c["args"] == ["echo start && python3 -m dynamo.vllm --F --a;python3 -m dynamo.vllm --F --b | tee log"]

    def test_pipeline_delimiter_right_after_token(self):
        c = {"command": ["sh", "-c"], "args": ["python3 -m dynamo.vllm|cat"]}
        inject_flags_into_container_command(c, "--F", False, "vllm")
        assert c["args"] == ["python3 -m dynamo.vllm --F|cat"]

    def test_several_args_stop_after_first_changed(self):
        c = {"command": ["sh", "-c"],
             "args": ["echo hi", "python3 -m dynamo.vllm --a", "python3 -m dynamo.vllm --b"]}
        inject_flags_into_container_command(c, "--F", False, "vllm")
        assert c["args"] == ["echo hi", "python3 -m dynamo.vllm --F --a", "python3 -m dynamo.vllm --b"]

    def test_non_python_untouched(self):
        c = {"command": ["java"], "args": ["-jar", "app.jar"]}
        inject_flags_into_container_command(c, "--F", True, "vllm")
        assert c == {"command": ["java"], "args": ["-jar", "app.jar"]}

    def test_regex_path_ignores_needs_shell(self):
        c = {"command": ["sh", "-c"], "args": ["python3 -m dynamo.vllm"]}
        inject_flags_into_container_command(c, "--r $((I + 1))", True, "vllm")
        assert c == {"command": ["sh", "-c"], "args": ["python3 -m dynamo.vllm --r $((I + 1))"]}

    def test_trailing_newline_is_whitespace_not_end(self):
        c = {"command": ["sh", "-c"], "args": ["python3 -m dynamo.vllm\n"]}
        inject_flags_into_container_command(c, "--F", False, "vllm")
        assert c["args"] == ["python3 -m dynamo.vllm --F\n"]


class TestFramework:
    def test_detect(self):
        assert detect_backend_framework(["python3", "-m", "dynamo.vllm"], []) == ("vllm", None)
        assert detect_backend_framework(["sh", "-c"], ["python3.11 -m dynamo.sglang.worker"]) == ("sglang", None)
        assert detect_backend_framework([], ["python3", "-m", "dynamo.trtllm"]) == ("trtllm", None)
        assert detect_backend_framework(["python3", "-m", "dynamo.frontend"], []) == ("noop", None)

    def test_detect_across_pipe_fails(self):
        assert detect_backend_framework(["sh", "-c"], ["python3 x | -m dynamo.vllm"]) == ("noop", None)

    def test_multiple(self):
        fw, err = detect_backend_framework(["sh", "-c"], ["python3 -m dynamo.vllm; python3 -m dynamo.sglang"])
        assert fw == "" and err.startswith("multiple backend frameworks detected from command: [vllm sglang]")

    def test_determine(self):
        assert determine_backend_framework("frontend", ["python3", "-m", "dynamo.vllm"], [], "sglang") == ("noop", None)
        assert determine_backend_framework("decode", ["python3", "-m", "dynamo.vllm"], [], None) == ("vllm", None)
        assert determine_backend_framework("worker", ["python3", "-m", "app"], [], "trtllm") == ("trtllm", None)
        assert determine_backend_framework("worker", [], [], None) == ("noop", None)
        fw, err = determine_backend_framework("prefill", ["python3", "-m", "dynamo.vllm"], [], "sglang")
        assert err == 'backend framework mismatch: detected "vllm" from command but explicitly configured as "sglang"'


class TestGPUCount:
    def test_limits_before_requests(self):
        assert resolve_gpu_count({"limits": {"nvidia.com/gpu": "4"}, "requests": {"nvidia.com/gpu": "2"}}) == (4, None)

    def test_requests_when_no_limits(self):
        assert resolve_gpu_count({"requests": {"gpu": "2"}}) == (2, None)

    @pytest.mark.parametrize("name", ["nvidia.com/gpu", "GPU", "amd.com/gpu", "nvidia.com/mig-1g.10gb", "gpu.intel.com/i915"])
    def test_names(self, name):
        assert resolve_gpu_count({"limits": {name: 3}}) == (3, None)

    def test_first_in_sorted_order(self):
        assert resolve_gpu_count({"limits": {"nvidia.com/gpu": "8", "amd.com/gpu": "1"}}) == (1, None)

    def test_not_gpu(self):
        assert resolve_gpu_count({"limits": {"cpu": "4", "nvidia.com/gpux": "1"}}) == (0, None)

    def test_fractional(self):
        count, problem = resolve_gpu_count({"limits": {"nvidia.com/gpu": "500m"}})
        assert count == 0 and "whole number" in problem
