"""`lnp list`, `allow`, `deny`, `reset`: the person's decision store and the administrator's file.

Each test has a store of its own (XDG_STATE_HOME in a fresh directory). The administrator's
file is only ever written inside a private mount namespace, on a tmpfs mounted over /etc/lnp:
nothing is left in the real /etc. Nothing here touches the network.
"""

import concurrent.futures
import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import time

import pytest

from conftest import ROOT, require, run

CONF = "/etc/lnp/decisions.conf"
BUILD_ID_A = "0123456789abcdef0123456789abcdef01234567"
BUILD_ID_B = "fedcba9876543210fedcba9876543210fedcba98"
EMPTY = "no decisions yet (programs ask when they first use the local network)\n"
JSON_FIELDS = {"program", "state", "source", "sourceFile", "sourceLine", "decidedAt", "buildID", "currentBuildID",
               "buildIDChanged", "fileMissing", "lastUsed"}


@pytest.fixture(scope="module")
def lnp():
    """The lnp under test: LNP_BIN_DIR/lnp if set, else the release build's bin/lnp."""
    if os.environ.get("LNP_BIN_DIR"):
        path = pathlib.Path(os.environ["LNP_BIN_DIR"]) / "lnp"
    else:
        path = pathlib.Path(os.environ.get("LNP_BUILD_DIR", ROOT / ".build" / "release")) / "bin" / "lnp"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `swift build -c release` (scripts/test does)")
    return path


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """Tiny C programs, one with build-id A, one with build-id B, one with none."""
    directory = tmp_path_factory.mktemp("decision-programs")
    source = directory / "main.c"
    source.write_text("int main(void) { return 0; }\n")
    built = {}
    for name, option in [("a", f"-Wl,--build-id=0x{BUILD_ID_A}"), ("b", f"-Wl,--build-id=0x{BUILD_ID_B}"),
                         ("none", "-Wl,--build-id=none")]:
        output = directory / f"prog-{name}"
        result = run(["gcc", "-O1", option, "-o", str(output), str(source)])
        assert result.returncode == 0, result.stderr
        built[name] = output
    return built


class User:
    """One person: a store of their own, a PATH with a bin directory of their own, UTC."""

    def __init__(self, lnp, root):
        self.lnp = lnp
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir()
        self.store = root / "state" / "lnp" / "decisions.sqlite"
        self.env = dict(os.environ, XDG_STATE_HOME=str(root / "state"), HOME=str(root), TZ="UTC",
                        PATH=f"{self.bin}:/usr/bin:/bin")

    def __call__(self, *arguments, cwd=None, prefix=(), env=None):
        return subprocess.run([*prefix, str(self.lnp), *[str(a) for a in arguments]], capture_output=True, text=True,
                              env=dict(self.env, **(env or {})), cwd=cwd, timeout=60)

    def install(self, program, name):
        """A copy of `program` as `name` in the user's bin directory."""
        target = self.bin / name
        shutil.copy(program, target)
        target.chmod(0o755)
        return target

    def json(self, *arguments, **options):
        result = self(*arguments, "--json", **options)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


@pytest.fixture
def user(lnp, tmp_path):
    return User(lnp, tmp_path)


def table(text):
    """The rows of `lnp list` as dictionaries, cut at the header's column starts."""
    lines = text.splitlines()
    header = lines[0]
    names = ["PROGRAM", "STATE", "SOURCE", "DECIDED", "BUILD-ID", "LAST USED", "NOTE"]
    starts = [header.index(name) for name in names]
    rows = []
    for line in lines[1:]:
        cells = [line[start:end].strip() for start, end in zip(starts, starts[1:] + [len(line) + 1])]
        rows.append(dict(zip(names, cells)))
    return rows


def test_an_empty_store(user):
    for arguments in (["list"], ["list", "--json"]):
        result = user(*arguments)
        assert result.returncode == 0, result.stderr
    assert user("list").stdout == EMPTY
    assert user.json("list") == []
    assert not user.store.parent.exists(), "reading makes no store"


def test_allow_deny_and_list(user, programs):
    a = user.install(programs["a"], "tool-a")
    b = user.install(programs["b"], "tool-b")
    result = user("allow", a)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"allowed {a}\n", "")
    result = user("deny", "tool-b")  # a bare name is looked up in PATH
    assert (result.returncode, result.stdout) == (0, f"denied {b}\n")

    assert oct(user.store.stat().st_mode & 0o777) == "0o600"
    assert oct(user.store.parent.stat().st_mode & 0o777) == "0o700"

    result = user("list")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].split() == ["PROGRAM", "STATE", "SOURCE", "DECIDED", "BUILD-ID", "LAST",
                                                     "USED", "NOTE"]
    rows = table(result.stdout)
    assert [(r["PROGRAM"], r["STATE"], r["SOURCE"], r["BUILD-ID"], r["LAST USED"], r["NOTE"]) for r in rows] == [
        (str(a), "allowed", "user", BUILD_ID_A[:12], "-", ""),
        (str(b), "denied", "user", BUILD_ID_B[:12], "-", ""),
    ]

    decisions = user.json("list")
    assert [set(d) for d in decisions] == [JSON_FIELDS, JSON_FIELDS]
    first = decisions[0]
    assert {k: first[k] for k in JSON_FIELDS - {"decidedAt"}} == {
        "program": str(a), "state": "allowed", "source": "user", "sourceFile": None, "sourceLine": None,
        "buildID": BUILD_ID_A, "currentBuildID": BUILD_ID_A, "buildIDChanged": False, "fileMissing": False,
        "lastUsed": None}
    assert first["decidedAt"].endswith("Z") and len(first["decidedAt"]) == len("2026-01-01T00:00:00Z")
    # The table shows the same time, in local time (UTC here), to the minute.
    assert rows[0]["DECIDED"] == first["decidedAt"][:16].replace("T", " ")
    assert decisions[1]["state"] == "denied"

    # Deciding again changes the decision, not the number of them.
    assert user("allow", b).stdout == f"allowed {b}\n"
    assert [(d["program"], d["state"]) for d in user.json("list")] == [(str(a), "allowed"), (str(b), "allowed")]


def test_allow_json_and_several_programs(user, programs):
    a = user.install(programs["a"], "one")
    b = user.install(programs["b"], "two")
    decisions = user.json("deny", a, b)
    assert [(d["program"], d["state"], d["buildID"], d["source"]) for d in decisions] == [
        (str(a), "denied", BUILD_ID_A, "user"), (str(b), "denied", BUILD_ID_B, "user")]


def test_scripts_and_relative_names(user, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "tool.py").write_text("print('hi')\n")
    result = user("allow", "./tool.py", cwd=work)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"allowed {work}/tool.py\n", "")
    decision = user.json("list")[0]
    assert (decision["program"], decision["buildID"]) == (f"{work}/tool.py", None)
    result = user("reset", "../work/./tool.py", cwd=work)
    assert result.stdout == f"reset {work}/tool.py\n"


def test_a_binary_without_build_id_is_recorded_with_a_warning(user, programs):
    plain = user.install(programs["none"], "plain")
    result = user("deny", plain)
    assert result.returncode == 0
    assert result.stdout == f"denied {plain}\n"
    assert result.stderr == f"lnp: warning: {plain} has no build-id; a rebuilt file at this path keeps the decision\n"
    row = table(user("list").stdout)[0]
    assert (row["BUILD-ID"], row["NOTE"]) == ("-", "")


def shells_word(name, env):
    """What bash says of running `name`, without its own prefix, and its status."""
    result = subprocess.run(["bash", "-c", f"{name}"], capture_output=True, text=True, env=env)
    return result.stderr.split("bash: line 1: ", 1)[-1].strip(), result.returncode


@pytest.mark.parametrize("command", ["allow", "deny", "reset"])
def test_a_path_that_is_no_program_is_judged_as_a_shell_judges_it(user, programs, build, command, tmp_path):
    """lnp allow, deny, reset and lnp-run say what bash says of running it, with its status."""
    a = user.install(programs["a"], "real")
    user("allow", a)
    before = user.json("list")
    names = ["/nonexistent/tool", "no-such-program-anywhere", str(tmp_path)]
    for name in names:
        expected, status = shells_word(name, user.env)
        assert status in (126, 127) and expected.startswith(name + ": "), expected
        result = user(command, a, name)
        assert (result.returncode, result.stdout, result.stderr) == (status, "", f"lnp: {expected}\n")
        run_result = subprocess.run([str(build.lnp_run), "--deny", "--", name], capture_output=True, text=True,
                                    env=user.env)
        assert (run_result.returncode, run_result.stderr) == (status, f"lnp-run: {expected}\n")
    assert user.json("list") == before, "nothing is recorded or reset when one program is unknown"


def test_a_name_with_a_newline_or_a_tab_stays_on_its_line(user, programs):
    """Every table and line of lnp's shows such a name escaped: one row, one line."""
    tool = user.install(programs["a"], "to\tol\nx")
    shown = str(tool).replace("\t", "\\u{9}").replace("\n", "\\u{a}")
    assert user("allow", tool).stdout == f"allowed {shown}\n"
    rows = user("list").stdout.splitlines()
    assert len(rows) == 2 and rows[1].startswith(shown + "  "), rows
    inspected = user("inspect", tool).stdout.splitlines()
    assert inspected[1].startswith(shown + "  "), inspected
    assert user("reset", tool).stdout == f"reset {shown}\n"


def test_a_file_that_is_not_executable_is_decided_as_a_script(user, tmp_path):
    """python3 tool.py is decided as tool.py, which need not be executable (lnp-run of the file
    itself is refused as bash refuses it: test_lnp_run)."""
    script = tmp_path / "tool.py"
    script.write_text("print('hello')\n")
    script.chmod(0o644)
    assert user("allow", script).returncode == 0
    assert [d["program"] for d in user.json("list")] == [str(script)]


@pytest.mark.parametrize("arguments,message", [
    (["check", "-1"], "'-1' is not an IP address or a .local name"),
    (["check"], "give at least one address"),
    (["check", "--bogus", "10.0.0.1"], "unknown option '--bogus'"),
    (["check", "--port", "70000", "10.0.0.1"], "the value '70000' is invalid for '--port <PORT>'"),
    (["list", "--bogus"], "unknown option '--bogus'"),
    (["report", "--format", "xml"], "the value 'xml' is invalid for '--format <FORMAT>'"),
    (["bogus"], "unexpected argument 'bogus'"),
])
def test_every_mistake_is_one_line_naming_the_value(user, arguments, message):
    result = user(*arguments)
    assert result.returncode == 64, (arguments, result.stderr)
    assert result.stderr.startswith(f"lnp: {message}") and result.stderr.count("\n") == 1, result.stderr


def test_bad_arguments(user):
    for arguments in (["allow"], ["reset"], ["reset", "--all", "x"], ["reset", "--all", "--changed"]):
        result = user(*arguments)
        assert result.returncode == 64, arguments
        assert result.stderr.startswith("lnp: ") and result.stderr.count("\n") == 1, result.stderr
    result = user("list", "--bogus")
    assert result.returncode != 0


def test_reset(user, programs):
    a = user.install(programs["a"], "tool-a")
    b = user.install(programs["b"], "tool-b")
    c = user.install(programs["a"], "tool-c")
    user("allow", a, b, c)

    result = user("reset", "tool-a")
    assert (result.returncode, result.stdout) == (0, f"reset {a}\n")
    result = user("reset", a)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"lnp: {a} has no decision to reset\n")
    result = user("reset", b, "/nowhere/else")
    assert (result.returncode, result.stderr) == (127, "lnp: /nowhere/else: No such file or directory\n")
    assert [d["program"] for d in user.json("list")] == [str(b), str(c)], "nothing reset when one has no decision"

    # A removed program can still be reset by its path.
    c.unlink()
    assert table(user("list").stdout)[1]["NOTE"] == "file missing"
    assert user.json("list")[1]["fileMissing"] is True
    assert user("reset", c).stdout == f"reset {c}\n"

    user("deny", a)
    assert user.json("reset", "--all") == {"count": 2, "programs": [str(a), str(b)]}
    assert user.json("list") == []
    result = user("reset", "--all")
    assert (result.returncode, result.stdout) == (0, "reset 0 decisions\n")
    user("allow", a)
    assert user("reset", "--all").stdout == "reset 1 decision\n"


def test_reset_changed(user, programs):
    changing = user.install(programs["a"], "rebuilt")
    steady = user.install(programs["b"], "steady")
    user("allow", changing)
    user("deny", steady)
    assert user("reset", "--changed").stdout == "no decided program has changed\n"

    # The file is replaced by another build.
    changing.unlink()
    user.install(programs["b"], "rebuilt")
    rows = table(user("list").stdout)
    assert rows[0]["PROGRAM"] == str(changing)
    assert rows[0]["NOTE"] == f"build-id changed: now {BUILD_ID_B[:12]}"
    assert rows[0]["BUILD-ID"] == BUILD_ID_A[:12]
    assert rows[1]["NOTE"] == ""
    listed = user.json("list")[0]
    assert (listed["buildID"], listed["currentBuildID"], listed["buildIDChanged"]) == (BUILD_ID_A, BUILD_ID_B, True)

    result = user("reset", "--changed")
    assert (result.returncode, result.stdout) == (0, f"reset {changing} (build-id changed: now {BUILD_ID_B[:12]})\n")
    assert [d["program"] for d in user.json("list")] == [str(steady)]

    # Decided again, the new build-id is kept.
    user("allow", changing)
    assert user.json("reset", "--changed") == {"count": 0, "programs": []}


def test_a_garbage_store_is_reported_and_left_alone(user, programs):
    a = user.install(programs["a"], "tool")
    user.store.parent.mkdir(parents=True)
    garbage = b"this is not an SQLite database\n" * 100
    user.store.write_bytes(garbage)
    expected = f"lnp: the decision store {user.store} is unreadable: file is not a database"
    for arguments in (["list"], ["list", "--json"], ["allow", a], ["reset", a], ["reset", "--all"],
                      ["reset", "--changed"]):
        result = user(*arguments)
        assert result.returncode == 1, arguments
        assert result.stderr.startswith(expected), result.stderr
        assert result.stderr.count("\n") == 1
        assert result.stdout == ""
    assert user.store.read_bytes() == garbage
    assert sorted(p.name for p in user.store.parent.iterdir()) == ["decisions.sqlite"]


def test_many_processes_at_once_lose_nothing(user, programs):
    paths = [user.install(programs["a"], f"tool-{i}") for i in range(40)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: user("allow" if i % 2 else "deny", *paths[i::8]), range(8)))
    assert [r.returncode for r in results] == [0] * 8, [r.stderr for r in results]
    decisions = user.json("list")
    assert sorted(d["program"] for d in decisions) == sorted(str(p) for p in paths)


# The administrator's file, in a private mount namespace.

@pytest.fixture(scope="module")
def etc_lnp():
    """/etc/lnp as a mount point (made if missing, removed afterwards only if made here)."""
    require(os.geteuid() == 0, "mounting over /etc/lnp needs root")
    require(shutil.which("unshare") is not None, "unshare is not installed")
    probe = run(["unshare", "--mount", "--propagation", "private", "true"])
    require(probe.returncode == 0, f"unshare --mount does not work here: {probe.stderr.strip()}")
    directory = pathlib.Path("/etc/lnp")
    made = not directory.exists()
    if made:
        directory.mkdir(mode=0o755)
    before = sorted(os.listdir(directory))
    yield directory
    assert sorted(os.listdir(directory)) == before, "nothing was written to the real /etc/lnp"
    if made:
        directory.rmdir()


def as_administered(user, conf, *arguments):
    """`lnp ARGUMENTS` with /etc/lnp/decisions.conf holding `conf`, on a tmpfs that only this
    process sees."""
    script = ('mount -t tmpfs -o mode=0755,size=1m lnp-test /etc/lnp\n'
              'if [ -n "$LNP_TEST_CONF" ]; then printf "%s" "$LNP_TEST_CONF" > /etc/lnp/decisions.conf; fi\n'
              'exec "$@"')
    return user(*arguments, prefix=["unshare", "--mount", "--propagation", "private", "--", "sh", "-ec", script, "sh"],
                 env={"LNP_TEST_CONF": conf})


def test_administrator_entries_come_first(user, programs, etc_lnp, tmp_path):
    a = user.install(programs["a"], "tool-a")
    b = user.install(programs["b"], "tool-b")
    spaced = tmp_path / "with space"
    spaced.mkdir()
    c = spaced / "tool c"
    shutil.copy(programs["a"], c)
    user("allow", a, b)
    conf = f"# the administrator's\ndeny {a}\n\nallow {c}\n"

    result = as_administered(user, conf, "list")
    assert result.returncode == 0, result.stderr
    rows = table(result.stdout)
    assert [(r["PROGRAM"], r["STATE"], r["SOURCE"], r["DECIDED"], r["BUILD-ID"]) for r in rows] == [
        (str(a), "denied", f"admin {CONF}:2", "-", "-"),
        (str(b), "allowed", "user", rows[1]["DECIDED"], BUILD_ID_B[:12]),
        (str(spaced / "tool c"), "allowed", f"admin {CONF}:4", "-", "-"),
    ]
    decisions = {d["program"]: d for d in json.loads(as_administered(user, conf, "list", "--json").stdout)}
    assert decisions[str(a)] == {
        "program": str(a), "state": "denied", "source": "administrator", "sourceFile": CONF, "sourceLine": 2,
        "decidedAt": None, "buildID": None, "currentBuildID": BUILD_ID_A, "buildIDChanged": False,
        "fileMissing": False, "lastUsed": None}

    # A user's decision cannot override the administrator's.
    for command in ("allow", "deny"):
        result = as_administered(user, conf, command, b, c)
        assert (result.returncode, result.stdout) == (1, "")
        assert result.stderr == (f"lnp: {c} is decided by the administrator ({CONF}:4); "
                                 "a user's decision cannot override it\n")
    result = as_administered(user, conf, "reset", c)
    assert result.returncode == 1 and f"decided by the administrator ({CONF}:4)" in result.stderr
    # The user's own row hidden under the administrator's can still be forgotten.
    assert as_administered(user, conf, "reset", a).stdout == f"reset {a}\n"
    # Outside the namespace, there is no administrator's file.
    assert [d["program"] for d in user.json("list")] == [str(b)]


@pytest.mark.parametrize("conf,message", [
    ("allow /usr/bin/true\npermit /usr/bin/false\n", f"{CONF}:2: expected 'allow PATH' or 'deny PATH'"),
    ("deny usr/bin/true\n", f"{CONF}:1: the program must be an absolute path: usr/bin/true"),
    ("deny /bin/x\nallow /bin/x\n", f"{CONF}:2: /bin/x is already decided on line 1"),
])
def test_a_malformed_administrators_file_is_an_error(user, programs, etc_lnp, conf, message):
    a = user.install(programs["a"], "tool")
    for arguments in (["list"], ["allow", a]):
        result = as_administered(user, conf, *arguments)
        assert result.returncode == 1
        assert message in result.stderr and result.stderr.startswith("lnp: ") and result.stderr.count("\n") == 1
    assert not user.store.exists()


def test_an_empty_etc_lnp_means_no_administrator_entries(user, programs, etc_lnp):
    a = user.install(programs["a"], "tool")
    assert as_administered(user, "", "list").stdout == EMPTY
    assert as_administered(user, "", "allow", a).stdout == f"allowed {a}\n"


SPAWN_IN_A_PTY = "import os, pty, sys; status = pty.spawn(sys.argv[1:]); sys.exit(os.waitstatus_to_exitcode(status))"


@pytest.mark.parametrize("how", ["directly", "without any environment", "in a terminal of its own", "orphaned"])
def test_a_wrapped_program_cannot_change_decisions(user, programs, build, how):
    """Decisions are the person's: `lnp allow`, `deny` and `reset` run by a program under
    lnp-run — with its environment emptied, in a pseudo-terminal it opened, or orphaned to
    lnp-run — are refused with one line, and the store is left as it was."""
    tool = user.install(programs["a"], "tool-a")
    assert user("deny", tool).returncode == 0
    before = user.json("list")
    for arguments in (["allow", tool], ["deny", tool], ["reset", tool], ["reset", "--all"]):
        command = [str(user.lnp), *[str(a) for a in arguments]]
        if how == "without any environment":
            command = ["env", "-i", f"XDG_STATE_HOME={user.root / 'state'}", *command]
        elif how == "in a terminal of its own":
            command = ["python3", "-c", SPAWN_IN_A_PTY, *command]
        elif how == "orphaned":
            report = user.root / "orphan.txt"
            # Started twice removed, so that its parent ends at once and lnp-run (the subreaper)
            # inherits it; the program waits for its line.
            command = ["sh", "-c", f'( ("$@" > {report} 2>&1; echo "status $?" >> {report}) & ); '
                       f'until grep -q status {report} 2>/dev/null; do sleep 0.05; done', "sh", *command]
        result = subprocess.run([str(build.lnp_run), "--deny", "--", *command], capture_output=True, text=True,
                                env=user.env, timeout=60)
        if how == "orphaned":
            output = report.read_text()
            assert "status 1" in output, output
            report.unlink()
        else:
            output = result.stdout + result.stderr
            assert result.returncode == 1, output
        assert "lnp: decisions are not changed from inside a program lnp-run runs" in output
        assert "run this outside it" in output
    assert user.json("list") == before


def test_a_process_started_under_lnp_run_cannot_change_decisions_after_it(user, programs):
    """A process that outlives its lnp-run still says where it came from (LNP_RUN): what the
    environment says can refuse a change, never allow one."""
    tool = user.install(programs["a"], "tool-a")
    result = user("allow", tool, env={"LNP_RUN": "999999"})
    assert result.returncode == 1 and "run this outside it" in result.stderr, result.stderr
    assert user.json("list") == []


def test_last_used_is_noted_without_holding_up_the_run(user, programs, build):
    """lnp-run notes that a program ran under its remembered decision ("last used") beside the
    run, not before serving it: while another process holds the store's write lock, the run
    ends as soon as the program does, and the note is written once the lock is free."""
    tool = user.install(programs["a"], "tool-a")
    assert user("allow", tool).returncode == 0
    assert user.json("list")[0]["lastUsed"] is None
    writer = sqlite3.connect(user.store, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        start = time.monotonic()
        result = subprocess.run([str(build.lnp_run), "--", "tool-a"], capture_output=True, text=True, env=user.env,
                                timeout=30)
        took = time.monotonic() - start
        assert result.returncode == 0, result.stderr
        assert took < 1.5, f"the run waited {took:.1f} s for the store's lock"
        time.sleep(1)
        assert user.json("list")[0]["lastUsed"] is None, "written through another writer's lock"
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    for _ in range(50):
        if user.json("list")[0]["lastUsed"] is not None:
            break
        time.sleep(0.1)
    assert user.json("list")[0]["lastUsed"] is not None, "the note was lost"
