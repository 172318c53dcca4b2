"""The policy and the audit come from lnp-run, not from what a descendant's environment says:
a forged, stale or missing variable neither widens access nor drops records. Nested lnp-runs
only narrow. tcpdump on the peer proves that a denied operation sent nothing."""

import json
import subprocess
import time

from conftest import json_lines

TO_PEER = "dst host 10.77.0.2 and udp port 9999"


def probe_sends(fixtures):
    return f"{fixtures.probe} sendto 10.77.0.2 9999"


def test_a_child_that_forges_an_allowing_policy_is_denied_and_recorded(lan, fixtures, audit):
    capture = lan.capture(TO_PEER)
    script = (f"env LNP_POLICY=allow,1,app,run-option,local LNP_AUDIT=/dev/null LNP_PROGRAM=/forged "
              f"{probe_sends(fixtures)}")
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], ["sh", "-c", script])
    assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH"
    assert capture.packets() == []
    [record] = audit.records()
    assert (record["decision"], record["because"], record["program"]) == ("deny", "run-option", "/usr/bin/sh")


def test_a_child_that_empties_lnps_variables_is_still_denied_and_recorded(lan, fixtures, audit):
    """Without LNP_RUN, the process finds lnp-run among its ancestors."""
    capture = lan.capture(TO_PEER)
    emptied = "env -u LNP_RUN -u LNP_AUDIT -u LNP_POLICY -u LNP_PROGRAM -u LNP_ASK"
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], ["sh", "-c", f"{emptied} {probe_sends(fixtures)}"])
    assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH"
    assert capture.packets() == []
    assert [r["decision"] for r in audit.records()] == ["deny"]


def test_a_child_pointed_at_another_lnp_run_is_answered_by_its_own(lan, fixtures, audit, workdir):
    """Another run, which allows, answers only its own tree: the child finds its own, which denies."""
    other_audit = workdir / f"other-{time.monotonic_ns()}.jsonl"
    other = subprocess.Popen(["ip", "netns", "exec", lan.client_ns, lan.build.lnp_run, "--allow", "--audit",
                              str(other_audit), "--", "sleep", "30"])
    try:
        time.sleep(0.5)
        capture = lan.capture(TO_PEER)
        result = lan.lnp_run(["--deny", "--audit", str(audit.path)],
                             ["sh", "-c", f"LNP_RUN={other.pid} {probe_sends(fixtures)}"])
        assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH"
        assert capture.packets() == []
        assert [r["decision"] for r in audit.records()] == ["deny"]
        assert not other_audit.read_text(), "the other run records nothing of this one"
    finally:
        other.terminate()
        other.wait(10)


def test_a_process_without_any_lnp_run_is_denied(lan, fixtures):
    """The preload alone, with no lnp-run to ask: lnp fails closed."""
    result = lan.client(["env", f"LD_PRELOAD={lan.build.liblnp}", "LNP_RUN=1", fixtures.probe, "sendto", "10.77.0.2", "9999"])
    assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH"


def test_a_nested_run_cannot_allow_what_the_enclosing_one_denies(lan, fixtures, audit, workdir):
    inner = workdir / f"inner-{time.monotonic_ns()}.jsonl"
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)],
                         [lan.build.lnp_run, "--allow", "--audit", inner, "--", fixtures.probe, "sendto", "10.77.0.2",
                          "9999"])
    assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH"
    assert capture.packets() == []
    assert "the enclosing lnp-run" in result.stderr and "denies local-network access" in result.stderr
    # Both audits have the record: the enclosing run's sees what its tree did.
    for path in (audit.path, inner):
        [record] = [json.loads(line) for line in path.read_text().splitlines()]
        assert (record["address"], record["decision"]) == ("10.77.0.2", "deny")


def test_a_nested_run_narrows_what_the_enclosing_one_allows(lan, fixtures, audit):
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--allow", "--audit", str(audit.path)],
                         [lan.build.lnp_run, "--deny", "--", fixtures.probe, "sendto", "10.77.0.2", "9999"])
    assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH"
    assert capture.packets() == []
    assert [r["decision"] for r in audit.records()] == ["deny"]


def test_nested_runs_that_both_allow_allow(lan, fixtures, audit):
    result = lan.lnp_run(["--allow", "--audit", str(audit.path)],
                         [lan.build.lnp_run, "--allow", "--", fixtures.probe, "sendto", "10.77.0.2", "9999"])
    assert json_lines(result.stdout)[0]["result"] == 5
    assert [r["decision"] for r in audit.records()] == ["allow"]


def test_a_nested_run_under_an_undetermined_program_asks_the_enclosing_run(lan, fixtures, audit, workdir):
    """The enclosing run's program is undetermined: what the nested run allows is asked
    there — with no terminal, denied, as any ask without one."""
    state = workdir / f"state-{time.monotonic_ns()}"
    capture = lan.capture(TO_PEER)
    result = lan.client(["env", f"XDG_STATE_HOME={state}", lan.build.lnp_run, "--audit", str(audit.path), "--",
                         lan.build.lnp_run, "--allow", "--", fixtures.probe, "sendto", "10.77.0.2", "9999"])
    assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH"
    assert capture.packets() == []
    assert "there is no terminal to ask on" in result.stderr
    assert [(r["decision"], r["because"]) for r in audit.records()] == [("deny", "no-terminal")]
