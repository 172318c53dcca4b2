"""CPython's own socket and asyncio test suites give the same per-test results plain and under
`lnp-run --allow` (the preload and the supervisor, with nothing denied: what is compared is
whether lnp changes a program's behaviour, not its decisions).

The suites are Debian's (/usr/bin/python3.11 with libpython3.11-testsuite, which scripts/deps
installs), so every machine runs the same tests whatever `python3` resolves to. Each run is in
a network namespace of its own with loopback alone, and with no test resources enabled (the
`network` resource, which reaches the internet, stays off). /dev/vsock is hidden from the
suites: test_socket's VSOCK stream test connects to the machine's own context id, which on a
virtual machine without vsock loopback goes to the hypervisor, outside any namespace.

A test whose outcome differs is run again alone, plain and under lnp-run, RERUNS times each.
The difference is tolerated only when the plain runs themselves disagree (the test is flaky
without lnp); otherwise the test fails, naming each differing test with its error text.
"""

import os
import xml.etree.ElementTree as ET

import pytest

from conftest import require, run

PYTHON = "/usr/bin/python3.11"
SUITES = ["test_socket", "test_asyncio"]
RERUNS = 3
# Seconds for a whole suite: test_socket takes about 26 on the 2-core build machine,
# test_asyncio about 60.
TIMEOUT = 900

# Tests shown to be flaky without lnp, left out of the comparison (test id: why): none so far.
FLAKY_PLAIN = {}
MISSING = ("missing", "")


def suites_installed():
    result = run([PYTHON, "-c", "import test.test_socket, test.test_asyncio"])
    return result.returncode == 0


def run_suite(directory, suite, launcher=(), matches=()):
    """Runs `suite` (or only the tests named in `matches`) with regrtest in a loopback-only
    network namespace, under `launcher` if given; returns {test id: (outcome, text)}, outcome
    one of passed, skipped, failure, error."""
    directory.mkdir(parents=True, exist_ok=True)
    home = directory / "home"
    home.mkdir(exist_ok=True)
    report = directory / "results.xml"
    report.unlink(missing_ok=True)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(home), "XDG_STATE_HOME": str(home / "state")}
    command = [str(c) for c in launcher] + [PYTHON, "-m", "test", "--junit-xml", str(report)]
    for match in matches:
        command += ["-m", match]
    command.append(suite)
    script = ("ip link set lo up; if [ -e /dev/vsock ]; then mount --bind /dev/null /dev/vsock; fi; "
              f'cd "{home}"; exec "$@"')
    result = run(["unshare", "--net", "--mount", "env", "-i"] + [f"{k}={v}" for k, v in env.items()] +
                 ["sh", "-ec", script, "sh"] + command, timeout=TIMEOUT)
    (directory / "output.txt").write_text(result.stdout + result.stderr)
    assert report.exists(), f"{suite} left no results ({' '.join(command)}):\n{(result.stdout + result.stderr)[-3000:]}"
    outcomes = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        details = [c for c in case if c.tag in ("failure", "error", "skipped")]
        if details:
            outcomes[case.get("name")] = (details[0].tag, (details[0].text or details[0].get("message") or "").strip())
        else:
            outcomes[case.get("name")] = ("passed", "")
    return outcomes


@pytest.mark.parametrize("suite", SUITES)
def test_cpython_suite_gives_the_same_results_under_lnp(build, workdir, suite):
    require(os.geteuid() == 0, "a network namespace of its own needs root")
    require(suites_installed(), f"{PYTHON}'s test suites are not installed (scripts/deps test installs them)")
    lnp = [build.lnp_run, "--allow", "--"]
    base = workdir / "cpython" / suite
    plain = run_suite(base / "plain", suite)
    supervised = run_suite(base / "lnp", suite, lnp)
    assert len(plain) > 100, f"{suite} ran only {len(plain)} tests"
    for name, (outcome, _) in plain.items():
        assert "VSOCK" not in name or outcome == "skipped", f"{name} ran: vsock is not hidden"

    differing = sorted(name for name in plain.keys() | supervised.keys()
                       if name not in FLAKY_PLAIN and plain.get(name, MISSING)[0] != supervised.get(name, MISSING)[0])
    real = []
    for name in differing:
        plain_runs, lnp_runs = [plain.get(name, MISSING)], [supervised.get(name, MISSING)]
        for _ in range(RERUNS):
            plain_runs.append(run_suite(base / "rerun" / "plain", suite, matches=[name]).get(name, MISSING))
            lnp_runs.append(run_suite(base / "rerun" / "lnp", suite, lnp, matches=[name]).get(name, MISSING))
        summary = f"{name}\n  plain: {[o for o, _ in plain_runs]}\n  lnp-run: {[o for o, _ in lnp_runs]}\n"
        for side, runs in (("plain", plain_runs), ("lnp-run", lnp_runs)):
            texts = [text for outcome, text in runs if outcome in ("failure", "error")]
            if texts:
                summary += f"  {side}, first error:\n{texts[0][-1500:]}\n"
        if len({o for o, _ in plain_runs}) > 1:
            print(f"flaky without lnp, not counted: {summary}")
        else:
            real.append(summary)
    assert not real, f"{suite}: {len(real)} of {len(plain)} tests differ under lnp-run:\n" + "\n".join(real)
