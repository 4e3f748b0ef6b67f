from kubectl_dynamo.operator import versions as v


def test_prerelease_sorts_below_release():
    assert not v.at_least("1.6.0-rc1", "1.6.0")
    assert v.at_least("1.6.0", "1.6.0") and v.at_least("1.6.1", "1.6.0") and v.at_least("v2.0.0", "1.6.0")


def test_operator_versions_follow_strict_semver():
    # Masterminds semver: the alphanumeric identifier "14-rc1" sorts above the numeric 15.
    assert v.at_least("v0.1.0-alpha.14-rc1", "v0.1.0-alpha.15")


def test_orchestrator_tags_compare_naturally():
    assert v.tag_at_least("v0.1.0-alpha.15", "v0.1.0-alpha.14-rc1")
    assert not v.tag_at_least("v0.1.0-alpha.12-rc1", "v0.1.0-alpha.13")
    assert not v.tag_at_least("v0.1.0-alpha.14-rc1", "v0.1.0-alpha.14")
    assert not v.tag_at_least("v0.1.0-alpha.11", "v0.1.0-alpha.13")
    assert v.tag_at_least("v0.1.0-alpha.13", "v0.1.0-alpha.13")
    assert v.tag_at_least("v0.17.0", "v0.13.4") and not v.tag_at_least("v0.9.1", "v0.13.0")
    assert v.tag_at_least("v0.1.0", "v0.1.0-alpha.15") and not v.tag_at_least("main", "v0.7.0")


def test_missing_or_invalid_is_false():
    assert not v.at_least(None, "1.0.0") and not v.at_least("latest", "1.0.0") and v.parse("1.5") is None


def test_lines():
    assert (v.line("1.4.2"), v.line("1.5.0"), v.line("1.6.0-rc1"), v.line("2.0.0"), v.line("x")) == \
           ("1.4", "1.5", "1.6", "1.6", None)
