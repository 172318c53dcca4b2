"""The undetermined state and the prompt: lnp-run asks on the controlling terminal (a real
pseudo-terminal here), remembers the answer per program, and denies without asking when there
is no terminal. Programs connect to the peer namespace's web server (10.77.0.2:8080, on-link).
"""

import errno
import json
import os
import pty
import re
import select
import shutil
import sqlite3
import subprocess
import time

import pytest

from conftest import FIXTURES, json_lines, run

HOST, PORT = "10.77.0.2", "8080"
QUESTION = "would like to find and connect to devices on your local network"
# What the question starts with: the terminal put back in order (Prompt.swift).
RESET = "\x1b[!p\x1b[r\x1b(B\x0f\x1b]104\x07\x1b]110\x07\x1b]111\x07\x1b[?6l\x1b[?5l\x1b[?25h\x1b[0m"


@pytest.fixture
def state(workdir):
    """A fresh per-user state directory (XDG_STATE_HOME) for each test."""
    directory = workdir / f"state-{time.monotonic_ns()}"
    directory.mkdir()
    return directory


def store_rows(state):
    path = state / "lnp" / "decisions.sqlite"
    if not path.exists():
        return []
    with sqlite3.connect(path) as db:
        return db.execute("SELECT path, state FROM decisions ORDER BY path").fetchall()


def environment(state, **extra):
    return dict(os.environ, XDG_STATE_HOME=str(state), **extra)


class Terminal:
    """A command run with a pseudo-terminal as its controlling terminal; what it writes
    there is collected, and answers are typed into it."""

    def __init__(self, command, env, log=None):
        self.output = b""
        self.log = log
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.execvpe(command[0], [str(c) for c in command], env)
            finally:
                os._exit(127)

    def read(self, timeout):
        """Collects what the terminal shows. Reading fails (EIO) while no process has the
        terminal open, which happens here: the program's standard streams are files, and
        lnp-run opens /dev/tty only to ask."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if ready:
            try:
                self.output += os.read(self.fd, 4096)
            except OSError:
                time.sleep(timeout)

    def wait_for(self, text, timeout=20):
        deadline = time.monotonic() + timeout
        while text.encode() not in self.output:
            assert time.monotonic() < deadline, f"no {text!r} on the terminal; it shows:\n{self.text}"
            self.read(0.05)

    def type(self, text):
        os.write(self.fd, text.encode())

    def allow(self):
        """Types the code the question shows for Allow, and Enter."""
        codes = re.findall(r"type (\d+) and Enter to Allow", self.text)
        assert codes, f"no code for Allow on the terminal; it shows:\n{self.text}"
        self.type(codes[-1] + "\r")

    def finish(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.read(0.05)
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
            self.read(0.1)
        os.kill(self.pid, 9)
        pytest.fail(f"the command did not end; the terminal shows:\n{self.text}")

    @property
    def text(self):
        text = self.output.decode(errors="replace")
        if self.log and self.log.exists():
            text += f"\n[the program's stderr]\n{self.log.read_text()}"
        return text


def on_terminal(lan, options, command, state, *, redirect, env=None):
    """lnp-run in the client namespace with a terminal, the program's stdin, stdout and
    stderr redirected to files (so the prompt can only be on the terminal)."""
    out, err = redirect.with_suffix(".out"), redirect.with_suffix(".err")
    shell = 'exec "$@" < /dev/null > "$OUT" 2> "$ERR"'
    full = ["ip", "netns", "exec", lan.client_ns, "sh", "-c", shell, "sh", lan.build.lnp_run, *options, "--", *command]
    return Terminal(full, environment(state, OUT=str(out), ERR=str(err), **(env or {})), log=err), out, err


def client(lan, state, options, command, **extra):
    """lnp-run without a terminal (stdin from /dev/null, no controlling terminal)."""
    full = ["setsid", "-w", "ip", "netns", "exec", lan.client_ns, lan.build.lnp_run, *options, "--", *command]
    return run([str(c) for c in full], env=environment(state, **extra), input="")


def attempts(text):
    return json_lines(text)


def lan_client(*arguments):
    return [str(FIXTURES / "lan_client.py"), *arguments]


def test_allow_at_the_prompt_is_remembered(lan, state, audit, workdir):
    program = lan_client("once", HOST, PORT)
    terminal, out, err = on_terminal(lan, ["--audit", audit.path], program, state, redirect=workdir / "allow")
    terminal.wait_for("Don't Allow")
    assert f"program   {FIXTURES / 'lan_client.py'}" in terminal.text
    assert f"reports   connect tcp {HOST}:{PORT}\r" in terminal.text
    assert "which is  on-link 10.77.0.0/24 via c0\r" in terminal.text
    python = os.path.realpath(shutil.which("python3"))
    assert re.search(rf"process   \d+ {re.escape(python)}\r", terminal.text), "who asks, from the kernel"
    terminal.allow()
    assert terminal.finish() == 0
    assert "allowed and remembered" in terminal.text
    assert attempts(out.read_text())[0]["errno"] == 0
    assert QUESTION not in out.read_text() + err.read_text()
    assert store_rows(state) == [(str(FIXTURES / "lan_client.py"), "allowed")]
    assert [r["because"] for r in audit.records()] == ["answered"]
    listed = json.loads(run([str(lan.build.lnp), "list", "--json"], env=environment(state)).stdout)
    assert listed[0]["lastUsed"] is not None, "used in the run it was answered in (lnp list's LAST USED)"

    again = client(lan, state, ["--audit", audit.path], program)
    assert again.returncode == 0, again.stderr
    assert attempts(again.stdout)[0]["errno"] == 0
    assert again.stderr == ""
    assert [r["because"] for r in audit.records()] == ["answered", "remembered"]


def test_deny_at_the_prompt_is_remembered(lan, state, audit, workdir):
    program = lan_client("once", HOST, PORT)
    capture = lan.capture(f"tcp and host 10.77.0.1 and port {PORT}")
    terminal, out, _ = on_terminal(lan, ["--audit", audit.path], program, state, redirect=workdir / "deny")
    terminal.wait_for("Don't Allow")
    terminal.type("d\n")
    assert terminal.finish() == 0
    again = client(lan, state, [], program)
    assert "denied and remembered" in terminal.text
    assert attempts(out.read_text())[0]["errno"] == errno.EHOSTUNREACH
    assert store_rows(state) == [(str(FIXTURES / "lan_client.py"), "denied")]
    assert attempts(again.stdout)[0]["errno"] == errno.EHOSTUNREACH
    assert again.stderr == ""
    assert capture.packets() == []


@pytest.mark.parametrize("answer", ["allow", "deny"])
def test_a_static_programs_call_waits_for_the_prompt(lan, state, audit, workdir, fixtures, answer):
    """The supervisor holds a notified call while the person is asked, shows what the kernel
    saw, and makes the call or denies it with the answer."""
    program = [fixtures.escapes_static, "raw", "connect", HOST, PORT]
    terminal, out, _ = on_terminal(lan, ["--audit", audit.path], program, state, redirect=workdir / f"static-{answer}")
    terminal.wait_for("Don't Allow")
    assert f"connect tcp {HOST}:{PORT}\r" in terminal.text
    assert re.search(rf"process   \d+ {re.escape(str(fixtures.escapes_static))}\r", terminal.text)
    if answer == "allow":
        terminal.allow()
    else:
        terminal.type("d\n")
    assert terminal.finish() == 0
    expected = {"result": 0, "errno": None} if answer == "allow" else {"result": -1, "errno": "EHOSTUNREACH"}
    assert [{k: v for k, v in c.items() if k != "call"} for c in json_lines(out.read_text())] == [expected]
    assert [(r["by"], r["because"], r["decision"]) for r in audit.records()] == [("supervisor", "answered", answer)]


def test_no_terminal_denies_without_remembering(lan, state, audit):
    result = client(lan, state, ["--audit", audit.path], ["sh", "-c", " ; ".join(
        [" ".join(lan_client("once", HOST, PORT))] * 3)])
    assert [a["errno"] for a in attempts(result.stdout)] == [errno.EHOSTUNREACH] * 3
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "no terminal to ask on" in lines[0] and "decide with 'lnp allow /" in lines[0], lines[0]
    assert store_rows(state) == []
    assert [r["because"] for r in audit.records()] == ["no-terminal"] * 3


def test_deny_while_asking_then_the_retry_succeeds(lan, state, audit, workdir):
    program = lan_client("retry", HOST, PORT, "20")
    terminal, out, _ = on_terminal(
        lan, ["--deny-while-asking", "--audit", audit.path], program, state, redirect=workdir / "retry")
    terminal.wait_for("Don't Allow")
    time.sleep(0.5)  # let the program fail and retry a few times while the prompt is up
    terminal.allow()
    assert terminal.finish() == 0
    results = [a["errno"] for a in attempts(out.read_text())]
    assert results[0] == errno.EHOSTUNREACH, results
    assert results[-1] == 0 and len(results) >= 3, results
    because = [r["because"] for r in audit.records()]
    assert because[0] == "asking" and because[-1] == "answered", because
    assert terminal.text.count(QUESTION) == 1


def test_a_program_that_ends_while_asking_leaves_the_question_up_for_its_next_run(lan, state, audit, workdir):
    """--deny-while-asking with a program that tries once: it fails and ends at once, and the
    question stays until it is answered; the answer holds for the next run."""
    program = lan_client("once", HOST, PORT)
    terminal, out, _ = on_terminal(
        lan, ["--deny-while-asking", "--audit", audit.path], program, state, redirect=workdir / "ended")
    terminal.wait_for("your answer is remembered for its next run")
    assert [a["errno"] for a in attempts(out.read_text())] == [errno.EHOSTUNREACH]
    terminal.allow()
    assert terminal.finish() == 0, "the program's status"
    assert "allowed and remembered" in terminal.text
    assert store_rows(state) == [(str(FIXTURES / "lan_client.py"), "allowed")]
    again = client(lan, state, [], program)
    assert attempts(again.stdout)[0]["errno"] == 0


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_a_question_left_up_by_an_ended_program_is_withdrawn_with_a_hint(lan, state, workdir, how):
    """Interrupted after the program ended: nothing is decided, and lnp-run says how to decide;
    a signal is not passed on to a pid that may be another process's by now."""
    program = lan_client("once", HOST, PORT)
    terminal, _, _ = on_terminal(lan, ["--deny-while-asking"], program, state, redirect=workdir / f"withdrawn-{how}")
    terminal.wait_for("your answer is remembered for its next run")
    if how == "ctrl-c":
        terminal.type("\x03")
    else:
        os.kill(terminal.pid, 15)  # sh execs lnp-run: the process the shell waits for passes it on
    assert terminal.finish() == 0, "the program's status"
    assert f"nothing decided; decide with 'lnp allow {FIXTURES / 'lan_client.py'}' (or 'lnp deny')" in terminal.text
    assert store_rows(state) == []


def test_many_processes_and_threads_one_prompt_one_record(lan, state, audit, workdir, fixtures):
    # 4 processes × 4 threads connect at once; all wait for the one answer.
    command = [fixtures.probe, "many", "4", "4", "1", HOST, PORT]
    terminal, _, _ = on_terminal(lan, ["--audit", audit.path], command, state, redirect=workdir / "many")
    terminal.wait_for("Don't Allow")
    time.sleep(1.0)  # every thread is holding by now
    terminal.allow()
    assert terminal.finish() == 0
    assert terminal.text.count(QUESTION) == 1
    records = audit.records()
    assert len(records) == 16
    assert {r["decision"] for r in records} == {"allow"}
    assert store_rows(state) == [(str(fixtures.probe), "allowed")]


def test_no_answer_in_time_denies_without_remembering(lan, state, workdir):
    program = lan_client("once", HOST, PORT)
    terminal, out, _ = on_terminal(lan, ["--prompt-timeout", "1"], program, state, redirect=workdir / "timeout")
    assert terminal.finish() == 0
    assert "no answer in 1 s" in terminal.text
    assert attempts(out.read_text())[0]["errno"] == errno.EHOSTUNREACH
    assert store_rows(state) == []


def test_usage_description_is_shown(lan, state, workdir):
    program = lan_client("once", HOST, PORT)
    terminal, _, _ = on_terminal(
        lan, ["--usage-description", "Finds the printers on your network."], program, state, redirect=workdir / "usage")
    terminal.wait_for("Don't Allow")
    assert "why       Finds the printers on your network." in terminal.text
    terminal.type("d\n")
    assert terminal.finish() == 0


def test_reset_makes_the_program_ask_again(lan, state):
    program = lan_client("once", HOST, PORT)
    allowed = run([lan.build.lnp, "allow", FIXTURES / "lan_client.py"], env=environment(state))
    assert allowed.returncode == 0, allowed.stderr
    assert attempts(client(lan, state, [], program).stdout)[0]["errno"] == 0
    reset = run([lan.build.lnp, "reset", FIXTURES / "lan_client.py"], env=environment(state))
    assert reset.returncode == 0, reset.stderr
    after = client(lan, state, [], program)
    assert attempts(after.stdout)[0]["errno"] == errno.EHOSTUNREACH
    assert "no terminal to ask on" in after.stderr


def test_a_script_is_the_program_however_it_is_started(lan, state, workdir):
    script = workdir / "tool.py"
    shutil.copy(FIXTURES / "lan_client.py", script)
    script.chmod(0o755)
    allowed = run([lan.build.lnp, "allow", script], env=environment(state))
    assert allowed.returncode == 0, allowed.stderr
    for command in ([script], ["python3", script], ["python3", "-u", script]):
        result = client(lan, state, [], [*command, "once", HOST, PORT])
        assert attempts(result.stdout)[0]["errno"] == 0, (command, result.stderr)
    listed = run([lan.build.lnp, "list", "--json"], env=environment(state))
    assert [entry["program"] for entry in json.loads(listed.stdout)] == [str(script)]


def test_children_and_orphans_act_under_the_programs_decision(lan, state, workdir):
    # The program starts a helper through an intermediate shell that exits at once: the
    # helper is an orphan, which lnp-run (a subreaper) keeps in its tree.
    parent = workdir / "parent.sh"
    result_file = workdir / "orphan.out"
    parent.write_text(
        "#!/bin/sh\n"
        f"sh -c '{FIXTURES / 'lan_client.py'} once {HOST} {PORT} > {result_file} &'\n"
        "sleep 3\n"
    )
    parent.chmod(0o755)
    terminal, _, _ = on_terminal(lan, [], [parent], state, redirect=workdir / "parent")
    terminal.wait_for("Don't Allow")
    assert f"program   {parent}" in terminal.text
    terminal.allow()
    assert terminal.finish() == 0
    outcome = attempts(result_file.read_text())[0]
    assert outcome["errno"] == 0
    assert store_rows(state) == [(str(parent), "allowed")]


def test_exit_status_and_signals_pass_through(lan, state, workdir):
    plain = ["ip", "netns", "exec", lan.client_ns, lan.build.lnp_run, "--"]
    assert run([str(c) for c in plain + ["sh", "-c", "exit 9"]], env=environment(state)).returncode == 9
    # Killed by a signal: lnp-run ends by the same signal.
    killed = run([str(c) for c in plain + ["sh", "-c", "kill -TERM $$"]], env=environment(state))
    assert killed.returncode == -15
    # A signal sent to lnp-run reaches the program.
    marker = workdir / f"got-term-{time.monotonic_ns()}"
    process = subprocess.Popen(
        [str(c) for c in plain + ["sh", "-c", f"trap 'echo term > {marker}; exit 3' TERM; sleep 20 & wait"]],
        env=environment(state))
    time.sleep(0.5)
    process.terminate()
    assert process.wait(10) == 3
    assert marker.read_text() == "term\n"


def test_a_corrupt_store_is_reported_and_denies(lan, state, audit):
    store = state / "lnp" / "decisions.sqlite"
    store.parent.mkdir()
    store.write_bytes(b"this is not a database\n" * 100)
    before = store.read_bytes()
    result = client(lan, state, ["--audit", audit.path], lan_client("once", HOST, PORT))
    assert attempts(result.stdout)[0]["errno"] == errno.EHOSTUNREACH
    assert str(store) in result.stderr and "denying" in result.stderr
    assert [r["because"] for r in audit.records()] == ["store-unreadable"]
    assert store.read_bytes() == before


def test_a_forged_ask_is_shown_for_what_it_is(lan, state, workdir):
    """A program sends asks of its own making: one about something that is not local is
    denied without asking; one claiming to speak for another process is refused; one full of
    terminal controls is shown escaped, as that process's report, with the process the
    kernel names."""
    forged = [
        r"hold\nconnect tcp 127.0.0.1 443 - -\n",
        r"hold 1\nresolve - - - - printer.local\n",
        r"hold\nresolve - - - - \x1b[2K\x1b[1Aprinter\u009b.local\n\x1b]0;owned\x07Totally safe\u202e",
    ]
    program = [str(FIXTURES / "forger.py"), *forged]
    terminal, out, err = on_terminal(lan, [], program, state, redirect=workdir / "forged")
    terminal.wait_for("Don't Allow")
    terminal.type("d\n")
    assert terminal.finish() == 0
    lines = json_lines(out.read_text())
    pid, replies = lines[0]["pid"], [line["reply"] for line in lines[1:]]
    # d + the basis letter (K not-confirmed, I no-supervisor, D answered) + final.
    assert replies == ["dK0", "dI0", "dD1"]
    assert terminal.text.count(QUESTION) == 1, "only the local ask reached the person"
    shown = terminal.output.decode(errors="replace").replace(RESET, "")  # lnp-run's own: the terminal reset
    assert "\x1b" not in shown and "\u009b" not in shown
    assert r"reports   resolve \x1b[2K\x1b[1Aprinter\x9b.local" + "\r" in terminal.text
    assert "which is  .local name\r" in terminal.text
    assert r"why       \x1b]0;owned\x07Totally safe\u{202e}" in terminal.text
    python = os.path.realpath(shutil.which("python3"))
    assert f"process   {pid} {python}\r" in terminal.text
    assert (f"lnp-run: denied without asking: process {pid} ({python}) reports connect tcp 127.0.0.1:443: "
            "not a local-network operation here (loopback)") in err.read_text()


@pytest.mark.parametrize("options, typed", [
    ([], {"typed": False, "errno": errno.EPERM}),  # the supervisor's filter refuses TIOCSTI
    (["--preload-only"], {"typed": True}),  # typed into the program's own terminal
])
def test_a_program_cannot_type_the_answer(lan, state, audit, workdir, options, typed):
    """A program's child types `a` and Enter into its terminal (TIOCSTI) while the prompt is
    up: refused under the supervisor; with the preload alone, the keystrokes reach the
    program's own terminal, which lnp-run made — never the prompt, which waits for the person."""
    program = lan_client("typist", HOST, PORT, r"a\n")
    terminal, out, err = on_terminal(lan, ["--audit", audit.path] + options, program, state,
                                     redirect=workdir / "typist")
    terminal.wait_for("Don't Allow")
    deadline = time.monotonic() + 10
    while '"typed"' not in out.read_text():
        assert time.monotonic() < deadline, "the child did not type"
        time.sleep(0.05)
    assert json_lines(out.read_text())[0] == typed
    terminal.read(1.0)
    assert "allowed" not in terminal.text and "denied" not in terminal.text, terminal.text
    terminal.type("d\n")
    assert terminal.finish() == 0
    assert "denied and remembered" in terminal.text
    assert [line["errno"] for line in json_lines(out.read_text()) if "attempt" in line] == [errno.EHOSTUNREACH]
    assert store_rows(state) == [(str(FIXTURES / "lan_client.py"), "denied")]
    assert [r["because"] for r in audit.records()] == ["answered"]


def test_a_question_drawn_over_lnps_cannot_name_the_answer(lan, state, audit, workdir):
    """A program's child opens the person's own terminal (the person's user may) and draws a
    question of its own over lnp's, which says to type `a`: the person does, and nothing is
    allowed — Allow takes the code in lnp's question, which no program can read back."""
    program = lan_client("overdraw", HOST, PORT)
    terminal, out, err = on_terminal(lan, ["--audit", audit.path], program, state, redirect=workdir / "overdraw")
    deadline = time.monotonic() + 10
    while not out.exists() or '"drawn"' not in out.read_text():
        assert time.monotonic() < deadline, f"the child did not draw; the terminal shows:\n{terminal.text}"
        time.sleep(0.05)
    assert json_lines(out.read_text())[0] == {"drawn": True}
    terminal.wait_for("To accept the licence")
    terminal.type("a\r")
    terminal.read(1.0)
    assert "allowed" not in terminal.text, terminal.text
    terminal.type("d")
    assert terminal.finish() == 0
    assert "denied and remembered" in terminal.text
    assert [line["errno"] for line in json_lines(out.read_text()) if "attempt" in line] == [errno.EHOSTUNREACH]
    assert store_rows(state) == [(str(FIXTURES / "lan_client.py"), "denied")]


def test_the_question_starts_on_a_terminal_put_back_in_order(lan, state, workdir):
    """Before it asks, the program sets a scroll region of two lines and odd colours and
    modes; the question resets the terminal first (DECSTR, margins, character set, colours),
    so every line of it shows."""
    script = (r'printf "\033[6;7r\033[7;1H\033]11;#ffffff\007\033(0\033[?6h"; '
              f'exec python3 "$0" once {HOST} {PORT}')
    full = ["ip", "netns", "exec", lan.client_ns, lan.build.lnp_run, "--", "sh", "-c", script, str(FIXTURES / "lan_client.py")]
    terminal = Terminal(full, environment(state))
    terminal.wait_for("Don't Allow")
    question = terminal.output[terminal.output.index(b"\033[6;7r"):]
    reset = question.index(b"\033[!p")
    assert question.index(b"lnp: ") > reset
    for sequence in [b"\033[r", b"\033(B", b"\033]104\007", b"\033]110\007", b"\033]111\007", b"\033[?6l"]:
        assert reset < question.index(sequence) < question.index(b"lnp: "), sequence
    terminal.type("d")
    assert terminal.finish() == 0


FLOOD_OF_ASKS = r"""
import json, os, select, socket, time
held = []
for _ in range(300):
    channel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    channel.connect(b"\0lnp-run/" + os.environ["LNP_RUN"].encode())
    channel.send(b"hold\nresolve - - - - printer.local\n")
    held.append(channel)
    time.sleep(0.005)  # each read before the next: lnp-run also limits connections not yet read
time.sleep(1)
answered = [c for c in held if select.select([c], [], [], 0)[0]]
print(json.dumps({"at_once": [c.recv(16).decode() for c in answered]}), flush=True)
later = [c.recv(16).decode() for c in held if c not in answered and select.select([c], [], [], 30)[0]]
print(json.dumps({"later": sorted(set(later)), "count": len(later)}), flush=True)
"""


def test_a_flood_of_asks_cannot_use_up_lnp_runs_descriptors(lan, state, workdir):
    """A program holds 300 asks open at once: lnp-run holds 256 for the person's answer and
    denies the rest at once, as while asking, instead of taking a descriptor for each."""
    terminal, out, err = on_terminal(lan, [], ["python3", "-c", FLOOD_OF_ASKS], state, redirect=workdir / "flood")
    terminal.wait_for("Don't Allow")
    deadline = time.monotonic() + 10
    while not out.exists() or "at_once" not in out.read_text():
        assert time.monotonic() < deadline, f"no replies; the terminal shows:\n{terminal.text}"
        time.sleep(0.05)
    assert json_lines(out.read_text())[0] == {"at_once": ["dE0"] * 44}, "the 44 past 256, denied while asking"
    terminal.type("d")
    assert terminal.finish() == 0
    assert json_lines(out.read_text())[1] == {"later": ["dD1"], "count": 256}


def test_the_program_keeps_a_working_terminal_while_it_may_be_asked(lan, state, workdir):
    """When a run may ask, the program runs on a terminal of lnp-run's making: its output
    shows, what the person types reaches it, and it is its controlling terminal."""
    script = 'tty; IFS= read -r line; echo "got $line"; exec python3 "$0" once ' + f"{HOST} {PORT}"
    full = ["ip", "netns", "exec", lan.client_ns, lan.build.lnp_run, "--", "sh", "-c", script, str(FIXTURES / "lan_client.py")]
    terminal = Terminal(full, environment(state))
    terminal.wait_for("/dev/pts/")
    persons = os.readlink(f"/proc/{terminal.pid}/fd/2")  # lnp-run's: the test's pseudo-terminal
    terminal.type("hello\r")
    terminal.wait_for("got hello")
    terminal.wait_for("Don't Allow")
    terminal.type("d")
    assert terminal.finish() == 0
    text = terminal.text
    assert f'"errno": {errno.EHOSTUNREACH}' in text
    programs = re.search(r"/dev/pts/\d+", text).group(0)
    assert persons.startswith("/dev/pts/") and programs != persons


def test_what_the_program_writes_waits_while_the_prompt_is_up(lan, state, workdir):
    """The program cannot draw over the question: its output waits until the person has
    answered."""
    script = f'(sleep 1; printf "DRAWN-OVER\\n") & exec python3 "$0" once {HOST} {PORT}'
    full = ["ip", "netns", "exec", lan.client_ns, lan.build.lnp_run, "--", "sh", "-c", script, str(FIXTURES / "lan_client.py")]
    terminal = Terminal(full, environment(state))
    terminal.wait_for("Don't Allow")
    terminal.read(2.0)
    assert "DRAWN-OVER" not in terminal.text
    terminal.type("d")
    assert terminal.finish() == 0
    assert terminal.text.index("denied and remembered") < terminal.text.index("DRAWN-OVER")


def test_a_terminal_that_hangs_up_ends_the_run(lan, state, workdir):
    """The person's terminal closes: the program's terminal hangs up too (SIGHUP), and
    lnp-run ends with it rather than spinning on a dead terminal."""
    full = ["ip", "netns", "exec", lan.client_ns, lan.build.lnp_run, "--", "sh", "-c", "echo started; sleep 60"]
    terminal = Terminal(full, environment(state))
    terminal.wait_for("started")
    os.close(terminal.fd)
    deadline = time.monotonic() + 10
    while not os.waitpid(terminal.pid, os.WNOHANG)[0]:
        if time.monotonic() > deadline:
            pytest.fail(f"lnp-run did not end when its terminal hung up\n{tree_state(terminal.pid)}")
        time.sleep(0.05)


def tree_state(pid):
    """What a run that did not end was doing: its processes (all sessions), their states,
    signals and descriptors, and a second of lnp-run's system calls."""
    parents = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            parents[int(entry)] = int(open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            pass
    tree, grew = {pid}, True
    while grew:
        grown = tree | {child for child, parent in parents.items() if parent in tree}
        grew, tree = grown != tree, grown
    listing = subprocess.run(["ps", "-o", "pid,ppid,pgid,sid,tty,stat,wchan:24,args", "-p", ",".join(map(str, sorted(tree)))],
                             capture_output=True, text=True).stdout
    lines = [listing]
    for member in sorted(tree):
        try:
            status = open(f"/proc/{member}/status").read()
            fds = {fd: os.readlink(f"/proc/{member}/fd/{fd}") for fd in os.listdir(f"/proc/{member}/fd")}
        except OSError:
            continue
        signals = [" ".join(line.split()) for line in status.splitlines() if line.startswith(("State", "Sig", "Shd"))]
        lines.append(f"{member}: {'; '.join(signals)} fds={fds}")
    trace = subprocess.run(["timeout", "1", "strace", "-f", "-p", str(pid)], capture_output=True, text=True)
    lines.append(trace.stderr[-4000:])
    return "\n".join(lines)
