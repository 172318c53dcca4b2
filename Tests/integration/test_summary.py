"""lnp-run --summary: a few lines on stderr when the program exits."""

import os

import pytest

from conftest import json_lines, run


def summary_lines(result):
    return [line for line in result.stderr.splitlines() if line.startswith("lnp: ")]


def test_counts_and_top_destinations(lan, fixtures, workdir):
    runtime = workdir / "runtime-summary"
    runtime.mkdir(exist_ok=True)
    script = (f"{fixtures.probe} connect tcp 10.77.0.2 8080; {fixtures.probe} connect tcp 10.77.0.2 8080; "
              f"{fixtures.probe} sendto 10.77.0.2 9999; exit 3")
    result = lan.client(["env", f"XDG_RUNTIME_DIR={runtime}", lan.build.lnp_run, "--deny", "--summary", "--",
                         "sh", "-c", script])
    assert result.returncode == 3, "the program's exit status is kept"
    assert [line["result"] for line in json_lines(result.stdout)] == [-1, -1, -1]
    assert summary_lines(result) == [
        "lnp: 3 local-network operations: 0 allowed, 3 denied",
        "lnp: destinations: 10.77.0.2:8080 (tcp, 2 denied), 10.77.0.2:9999 (udp, 1 denied)",
    ]
    assert os.listdir(runtime) == [], "lnp-run's private records are removed"


def test_a_run_with_no_local_operations_says_so(lan, fixtures):
    result = lan.lnp_run(["--allow", "--summary"], [fixtures.probe, "connect", "tcp", "203.0.113.5", "8080"])
    assert summary_lines(result) == ["lnp: no local-network operations"]


def test_only_this_run_is_counted_and_the_audit_file_keeps_everything(lan, fixtures, audit):
    lan.lnp_run(["--allow", "--audit", str(audit.path)], [fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"])
    result = lan.lnp_run(["--allow", "--audit", str(audit.path), "--summary"],
                         [fixtures.probe, "sendto", "10.77.0.2", "9999"])
    assert summary_lines(result) == [
        "lnp: 1 local-network operation: 1 allowed, 0 denied",
        "lnp: destinations: 10.77.0.2:9999 (udp, 1 allowed)",
    ]
    assert [r["op"] for r in audit.records()] == ["connect", "sendto"]



def test_the_destinations_left_out_are_where_the_audit_is(lan, fixtures, audit):
    """Three are named; the others are counted, with where every one can be seen."""
    script = "; ".join(f"{fixtures.probe} sendto 10.77.0.2 {port}" for port in range(9001, 9006))
    result = lan.lnp_run(["--deny", "--summary"], ["sh", "-c", script])
    assert summary_lines(result)[1].endswith(", and 2 more (--audit FILE keeps them all for 'lnp report')")
    result = lan.lnp_run(["--deny", "--summary", "--audit", str(audit.path)], ["sh", "-c", script])
    line = summary_lines(result)[1]
    assert line.startswith("lnp: top destinations: 10.77.0.2:9001 (udp, 1 denied), ")
    assert line.endswith(f", and 2 more (all in 'lnp report {audit.path}')")
    report = run([str(lan.build.lnp), "report", str(audit.path)]).stdout
    assert all(f"10.77.0.2:{port}" in report for port in range(9001, 9006)), report


def test_an_unobserved_program_is_named(lan, fixtures):
    result = lan.lnp_run(["--deny", "--summary", "--preload-only"],
                         [fixtures.probe_static, "connect", "tcp", "10.77.0.2", "8080"])
    lines = summary_lines(result)
    assert lines[0] == "lnp: no local-network operations"
    assert "itself was not observed (static binary" in lines[1]


@pytest.mark.parametrize("audit", ["/dev/null", "/dev/full"])
def test_the_summary_counts_whatever_becomes_of_the_records(lan, fixtures, audit):
    """lnp-run counts the operations as they arrive: what the audit file takes, or fails to
    take, does not change the summary."""
    result = lan.lnp_run(["--deny", "--audit", audit, "--summary"], [fixtures.probe, "sendto", "10.77.0.2", "9999"])
    assert summary_lines(result)[:2] == [
        "lnp: 1 local-network operation: 0 allowed, 1 denied",
        "lnp: destinations: 10.77.0.2:9999 (udp, 1 denied)",
    ]
