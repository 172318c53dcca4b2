"""When resources run out, lnp fails closed. A program that uses up its descriptors still has
its operations decided by the kernel's route and recorded: lnp keeps one descriptor of the
hard limit for itself. Where the kernel cannot be asked at all, the destination counts as
local and the record says why."""

import pytest

from conftest import json_lines

TO_PEER = "udp and dst host 192.0.2.2 and dst port 9999"


def filled(lan, command, options=None):
    """`command` started with 32 descriptors at most (soft and hard), as under `ulimit -n 32`."""
    limited = ["prlimit", "--nofile=32:32"]
    result = lan.client(limited + command) if options is None else lan.client(limited + [lan.build.lnp_run] + options + ["--"] + command)
    return json_lines(result.stdout)


def test_a_program_out_of_descriptors_reaches_the_lan_without_lnp(lan, fixtures):
    """192.0.2.0/24 is on-link here though no private range: what lnp must not let out."""
    capture = lan.capture(TO_PEER)
    results = filled(lan, [fixtures.probe, "fill", "192.0.2.2", "9999"])
    assert results[0]["call"] == "filled" and results[0]["errno"] is None
    assert results[1]["result"] == 5
    assert capture.packets()


def test_a_program_out_of_descriptors_is_still_decided_by_the_route_and_recorded(lan, fixtures, audit):
    capture = lan.capture(TO_PEER)
    results = filled(lan, [fixtures.probe, "fill", "192.0.2.2", "9999"], ["--deny", "--audit", str(audit.path)])
    assert results[0]["call"] == "filled" and results[0]["errno"] is None, "the program used up what it could open"
    assert results[1] == {"call": "sendto", "result": -1, "errno": "EHOSTUNREACH"}
    assert capture.packets() == []
    assert [r["reason"] for r in audit.records()] == ["on-link 192.0.2.0/24 via c0"]


def test_a_program_out_of_descriptors_still_reaches_what_is_not_local(lan, fixtures, audit):
    results = filled(lan, [fixtures.probe, "fill", "203.0.113.5", "9999"], ["--deny", "--audit", str(audit.path)])
    assert results[1] == {"call": "sendto", "result": 5, "errno": None}
    assert audit.records() == []


@pytest.mark.parametrize("soft,hard,kept", [("64", "64", 63), ("32", "64", 32), ("1", "1", 1)])
def test_lnp_keeps_one_descriptor_below_a_hard_limit_a_program_asks_for(lan, fixtures, soft, hard, kept):
    results = json_lines(lan.lnp_run(["--deny"], [fixtures.probe, "limits", soft, hard]).stdout)
    assert [(r["soft"], r["hard"]) for r in results] == [(kept, int(hard))] * 2
    plain = json_lines(lan.client([fixtures.probe, "limits", soft, hard]).stdout)
    assert [(r["soft"], r["hard"]) for r in plain] == [(int(soft), int(hard))] * 2


@pytest.mark.parametrize("address", ["10.77.0.98", "192.0.2.2", "203.0.113.78"])
def test_where_the_kernel_cannot_be_asked_every_destination_is_local(lan, fixtures, address):
    """A program that sets its limit below the descriptors it already holds leaves lnp none:
    the route cannot be learned, and lnp fails closed, public address or not."""
    results = json_lines(lan.lnp_run(["--deny"], [fixtures.probe, "emfile", "hard", address, "9"]).stdout)
    assert results[0] == {"call": "no-more-descriptors", "result": 0, "errno": None}
    assert results[1]["errno"] == "EHOSTUNREACH"
