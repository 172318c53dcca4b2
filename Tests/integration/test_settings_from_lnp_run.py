"""The policy and the audit come from lnp-run, not from what a descendant's environment says:
a forged, stale or missing variable neither widens access nor drops records. Nested lnp-runs
only narrow. tcpdump on the peer proves that a denied operation sent nothing."""

import json
import os
import shutil
import subprocess
import time

from conftest import FIXTURES, json_lines

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


def test_another_lnp_run_executable_inside_a_run_refuses_to_start(lan, fixtures, audit, workdir):
    """A second copy of lnp-run (another install, a fresh build) under `--deny` cannot be
    taken as nested; it does not run its program outside the enclosing run's watch."""
    copy = workdir / f"other-lnp-{time.monotonic_ns()}"
    copy.mkdir()
    for name in ("lnp-run", "liblnp.so"):
        shutil.copy(lan.build.directory / name, copy / name)
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)],
                         [copy / "lnp-run", "--allow", "--", fixtures.probe, "sendto", "10.77.0.2", "9999"])
    assert result.returncode == 125, result.stderr
    assert "does not take it as nested" in result.stderr and "refusing to run the program" in result.stderr
    assert json_lines(result.stdout) == []
    assert capture.packets() == []


def test_a_run_deep_down_the_tree_is_still_nested(lan, fixtures, audit, workdir):
    """Started through more processes than any real tree has, with LNP_RUN removed: the
    nested run still finds the enclosing one and is denied."""
    deep = workdir / "deep.sh"
    deep.write_text('n=$1; shift\nif [ "$n" -gt 0 ]; then sh "$0" $((n - 1)) "$@"; exit $?; fi\nexec "$@"\n')
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)],
                         ["sh", deep, "40", "env", "-u", "LNP_RUN", lan.build.lnp_run, "--allow", "--",
                          *probe_sends(fixtures).split()])
    assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH", result.stderr
    assert capture.packets() == []


FLOOD = """
import socket, sys, time
held = []
time.sleep(0.3)
for _ in range(400):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.setblocking(False)
    try:
        s.connect(b"\\0lnp-run/" + sys.argv[1].encode())
    except OSError:
        pass
    held.append(s)
time.sleep(8)
"""


def test_connections_from_outside_the_run_cannot_stall_it(lan, fixtures, audit):
    """Another process of the machine opens many connections to lnp-run's socket and says
    nothing: lnp-run closes them at once, and its program is decided and recorded as ever
    (lnp-run's descriptors are few here, so hoarded connections would have used them up)."""
    capture = lan.capture(TO_PEER)
    run = subprocess.Popen(
        ["ip", "netns", "exec", lan.client_ns, "prlimit", "--nofile=64:64", lan.build.lnp_run, "--deny", "--audit",
         audit.path, "--", "sh", "-c", f"sleep 1.5; {probe_sends(fixtures)}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.2)  # prlimit has exec'd lnp-run: same process
    flood = subprocess.Popen(["ip", "netns", "exec", lan.client_ns, "python3", "-c", FLOOD, str(run.pid)])
    try:
        out, err = run.communicate(timeout=8)
    finally:
        flood.kill()
        run.kill()
    assert json_lines(out)[0]["errno"] == "EHOSTUNREACH", err
    assert [r["decision"] for r in audit.records()] == ["deny"]
    assert capture.packets() == []


def test_a_process_posing_as_lnp_run_is_not_believed_by_its_children(lan, fixtures, audit):
    """A script of the program listens where an lnp-run would, answers that everything is
    allowed, and points its child at itself: the child is still denied by the real run, which
    never took the script as a nested run, and recorded there."""
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)],
                         [FIXTURES / "fake_run.py", *probe_sends(fixtures).split()])
    assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH", result.stderr
    assert capture.packets() == []
    assert [(r["decision"], r["because"]) for r in audit.records()] == [("deny", "run-option")]


def test_a_nested_run_is_believed_when_vouched_for(lan, fixtures, audit):
    """The same walk up the tree accepts a real nested run (registered with the enclosing
    one): under --allow, a nested --deny still denies, by its own settings."""
    result = lan.lnp_run(["--allow", "--audit", str(audit.path)],
                         [lan.build.lnp_run, "--deny", "--errno", "ECONNREFUSED", "--", *probe_sends(fixtures).split()])
    assert json_lines(result.stdout)[0]["errno"] == "ECONNREFUSED", result.stderr


SQUATTER = """
import socket, sys, time
name = b"\\0lnp-run/" + sys.argv[1].encode()
listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
listener.bind(name)
listener.listen(0)
filler = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
filler.connect(name)  # the queue is now full, and nothing is ever accepted
print("ready", flush=True)
time.sleep(30)
"""


def test_a_name_squatted_above_the_run_holds_no_one_up(lan, fixtures, audit):
    """Anyone may listen under a name: a process of another tree takes the name an ancestor
    of lnp-run would listen under, and never accepts. The program's first local operation,
    which asks the runs above its own, waits a second at most, and is decided."""
    squatter = subprocess.Popen(["ip", "netns", "exec", lan.client_ns, "python3", "-c", SQUATTER, str(os.getpid())],
                                stdout=subprocess.PIPE, text=True)
    try:
        assert squatter.stdout.readline().strip() == "ready"
        started = time.monotonic()
        result = lan.lnp_run(["--deny", "--audit", str(audit.path)], probe_sends(fixtures).split(), timeout=20)
        assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH", result.stderr
        assert time.monotonic() - started < 10
        assert [r["decision"] for r in audit.records()] == ["deny"]
    finally:
        squatter.kill()
