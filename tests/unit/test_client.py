import pytest

from kubectl_dynamo.cluster.client import DEFAULT_TIMEOUT, parse_duration, path_for
from kubectl_dynamo.errors import UsageError


@pytest.mark.parametrize("text,seconds", [("0", None), ("", DEFAULT_TIMEOUT), ("5", 5.0), ("30s", 30.0),
                                          ("2m", 120.0), ("1h2m3s", 3723.0), ("500ms", 0.5)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["soon", "5x", "1m junk", "-1s"])
def test_parse_duration_rejects(text):
    with pytest.raises(UsageError):
        parse_duration(text)


def test_paths_are_fully_qualified():
    assert path_for("scheduling.run.ai", "v2", "queues") == "/apis/scheduling.run.ai/v2/queues"
    assert path_for("", "v1", "configmaps", "ns", "x") == "/api/v1/namespaces/ns/configmaps/x"
