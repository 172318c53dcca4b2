"""A program that meets many new destinations in a half second is answered from lnp's
snapshot of the routing tables (Sources/LNPCore/RouteSnapshot.swift), not a question to the
kernel per address. The snapshot must decide every destination as the kernel routes it, leave
to the kernel what it cannot model (policy rules, multipath), and follow route changes within
a second. The probe connects UDP sockets, which send nothing."""

import contextlib

from conftest import assert_route_changes_within_a_second, json_lines, run

# Enough destinations, in one half second, that lnp takes a snapshot after the first few.
FILLERS = [f"10.99.0.{i}" for i in range(1, 21)]

# The test LAN's destinations (conftest.Lan), each with whether it is local.
DESTINATIONS = {
    "10.77.0.2": True,  # on-link
    "10.77.0.200": True,
    "10.66.7.8": True,  # an extra on-link route
    "192.0.2.9": True,  # on-link, outside the private ranges
    "10.44.0.9": True,  # multipath with an on-link hop: the kernel's answer
    "fd77::2": True,  # on-link IPv6
    "fd77::1:2": True,
    "10.99.0.77": False,  # through a gateway
    "203.0.113.5": False,  # through the default gateway
    "198.18.4.4": False,
    "10.88.0.2": False,  # point-to-point
    "198.51.100.7": False,  # a route out of the point-to-point interface
    "10.77.0.1": False,  # this machine's own address
    "2001:db8::5": False,  # through the IPv6 default gateway
    "2001:db8:1::9": False,
}


def sweep(lan, fixtures, addresses):
    result = lan.lnp_run(["--deny"], [fixtures.probe, "sweep", "9", *FILLERS, *addresses])
    assert result.returncode == 0, result.stderr
    return {line["address"]: line["errno"] for line in json_lines(result.stdout)}


def test_every_destination_is_decided_as_the_kernel_routes_it(lan, fixtures):
    found = sweep(lan, fixtures, list(DESTINATIONS))
    denied = {address for address, errno in found.items() if errno == "EHOSTUNREACH"}
    assert denied == {address for address, local in DESTINATIONS.items() if local}
    assert not any(found[address] for address in FILLERS)


@contextlib.contextmanager
def policy_rule(lan):
    """10.99.0.128/25, routed through the gateway in `main`, made on-link by a rule."""
    ns = lan.client_ns
    run(["ip", "-n", ns, "route", "add", "10.99.0.128/25", "dev", "c0", "table", "100"], check=True)
    run(["ip", "-n", ns, "rule", "add", "to", "10.99.0.128/25", "lookup", "100", "priority", "100"], check=True)
    try:
        yield
    finally:
        run(["ip", "-n", ns, "rule", "del", "priority", "100"])
        run(["ip", "-n", ns, "route", "del", "10.99.0.128/25", "table", "100"])


def test_policy_rules_leave_each_destination_to_the_kernel(lan, fixtures):
    with policy_rule(lan):
        found = sweep(lan, fixtures, ["10.99.0.200", "10.99.0.100", *DESTINATIONS])
    assert found["10.99.0.200"] == "EHOSTUNREACH", "on-link by the rule"
    assert found["10.99.0.100"] == "", "through the gateway"
    assert {a for a, e in found.items() if e == "EHOSTUNREACH"} == \
        {"10.99.0.200"} | {a for a, local in DESTINATIONS.items() if local}


def test_a_busy_program_sees_route_changes_within_a_second(lan, fixtures):
    """As test_gating's test of route changes, while the program also meets 20 new
    destinations every 50 ms, so that its decisions come from the snapshot."""
    assert_route_changes_within_a_second(lan, ["ip", "netns", "exec", lan.client_ns, lan.build.lnp_run, "--deny", "--",
                                               fixtures.probe, "watch", "10.55.0.9", "9", "100", "50", "10.99.0.1", "20"])
