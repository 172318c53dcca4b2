"""Apple's per-socket attribution (ne_socket.h): it belongs to the socket, and the domains a
program names, or resolved, go into the socket's records."""

import pytest

from conftest import json_lines


def attribution_of(lan, fixtures, audit, form, options=()):
    result = lan.lnp_run(["--deny", "--audit", str(audit.path), *options],
                         [fixtures.probe, "attribution", form, "10.77.0.2", "8080"])
    calls = json_lines(result.stdout)
    assert {"call": "ne_socket", "result": 0, "errno": None} in calls, result.stdout + result.stderr
    [record] = audit.records()
    return record


@pytest.mark.parametrize("form,attribution,fd", [
    ("none", "app", 3),
    ("user", "user", 3),
    ("developer", "app", 3),
    ("dup", "user", 4),
    ("dup2", "user", 40),
    ("dup3", "user", 41),
    ("fcntl", "user", 50),
    ("set-after-dup", "user", 4),  # set on the original after dup: the copy has it too
    ("reuse", "app", 3),  # a new socket on a reused number starts app-initiated
    ("raw-close", "app", 3),  # even when the old one was closed past the C library
])
def test_attribution_belongs_to_the_socket(lan, fixtures, audit, form, attribution, fd):
    record = attribution_of(lan, fixtures, audit, form)
    assert (record["attribution"], record["fd"]) == (attribution, fd)


def test_domains_are_attached_to_the_records(lan, fixtures, audit):
    record = attribution_of(lan, fixtures, audit, "domains")
    assert record["domains"] == ["printer.example", "cname.example"]
    assert record["host"] == "printer.example"
    assert record["attribution"] == "app"


def test_website_attribution_is_user_initiated_with_its_domain(lan, fixtures, audit):
    record = attribution_of(lan, fixtures, audit, "website")
    assert (record["attribution"], record["domains"], record["host"]) == ("user", ["www.example.org"], "www.example.org")


def test_attribution_user_option_makes_every_socket_user_initiated(lan, fixtures, audit):
    assert attribution_of(lan, fixtures, audit, "none", ["--attribution", "user"])["attribution"] == "user"


def test_developer_attribution_overrides_the_user_default(lan, fixtures, audit):
    assert attribution_of(lan, fixtures, audit, "developer", ["--attribution", "user"])["attribution"] == "app"


EINVAL, EBADF, ENOTSOCK = 22, 9, 88
API_ERRORS = {
    "attribution-negative": EINVAL, "attribution-bad-value": EINVAL, "attribution-ok": 0,
    "attribution-not-socket": ENOTSOCK, "attribution-closed": EBADF,
    "domains-negative": EINVAL, "domains-ok": 0, "domains-long-label": EINVAL, "domains-space": EINVAL,
    "domains-empty-label": EINVAL, "domains-null-name": EINVAL, "domains-null-list": EINVAL,
    "domains-negative-count": EINVAL,
    "website-negative": EINVAL, "website-ok": 0, "website-malformed": EINVAL,
}


def test_api_returns_errno_values_under_lnp(lan, fixtures):
    result = lan.lnp_run(["--allow"], [fixtures.probe, "api-errors"])
    assert {c["call"]: c["result"] for c in json_lines(result.stdout)} == API_ERRORS


def test_program_written_against_the_header_runs_without_lnp(lan, fixtures):
    """Without the preload the API does nothing and succeeds (EINVAL for a negative socket
    only), so the same binary works whether or not it runs under lnp."""
    result = lan.client([fixtures.probe, "api-errors"])
    assert result.returncode == 0
    expected = {call: (EINVAL if call.endswith("-negative") and "count" not in call else 0) for call in API_ERRORS}
    assert {c["call"]: c["result"] for c in json_lines(result.stdout)} == expected
