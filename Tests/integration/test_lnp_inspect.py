"""`lnp inspect`: what it tells an administrator about executables, read without running them."""

import json
import os
import re
import shutil

import pytest

from conftest import FIXTURES, require, run

KEYS = {
    "path", "kind", "interpreter", "owner", "group", "setuid", "setgid", "fileCapabilities", "go", "buildID",
    "architecture", "needed", "imports", "bonjour", "bonjourGated", "observable", "runs", "reasons", "warnings", "error",
}
NOBODY = 65534


@pytest.fixture(scope="module")
def specimens(fixtures, workdir):
    """A directory of executables of every kind lnp inspect knows, and some it does not."""
    require(os.geteuid() == 0, "chown and setcap need root")
    require(shutil.which("setcap") is not None, "setcap (libcap2-bin) is not installed")
    directory = workdir / "inspect"
    directory.mkdir()
    paths = {}

    def add(name, content, mode=0o755):
        path = directory / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
        path.chmod(mode)
        paths[name] = path
        return path

    probe = fixtures.probe.read_bytes()
    add("dynamic", probe)
    add("static", fixtures.probe_static.read_bytes())
    setuid = add("setuid", probe)
    os.chown(setuid, NOBODY, NOBODY)
    setuid.chmod(0o4755)  # after chown, which clears the bit
    setgid = add("setgid", probe)
    os.chown(setgid, 0, NOBODY)
    setgid.chmod(0o2755)
    capabilities = add("capabilities", probe)
    result = run(["setcap", "cap_net_raw+ep", str(capabilities)])
    assert result.returncode == 0, result.stderr
    golike = directory / "golike"
    result = run(["gcc", "-O2", "-o", str(golike), str(FIXTURES / "golike.c")])
    assert result.returncode == 0, result.stderr
    paths["golike"] = golike
    add("python-script", "#!/usr/bin/python3\nprint('hello')\n")
    add("env-script", "#!/usr/bin/env sh\necho hello\n")
    add("static-script", f"#!{directory / 'static'}\n")
    add("orphan-script", "#!/nonexistent/lnp-interpreter\necho hello\n")
    # Run, it would leave a file behind: lnp inspect must never run what it inspects.
    add("runs-nothing", f"#!/bin/sh\ntouch {workdir / 'inspect-ran'}\n")
    add("truncated", probe[:100])
    add("garbage", bytes((i * 37 + 11) % 256 for i in range(4096)))
    add("not-executable", probe, mode=0o644)
    return directory, paths


def inspect_json(build, *paths):
    result = run([str(build.lnp), "inspect", "--json", *[str(p) for p in paths]])
    rows = json.loads(result.stdout)
    assert isinstance(rows, list)
    for row in rows:
        assert set(row) == KEYS, row["path"]
    return result.returncode, {row["path"]: row for row in rows}


def test_dynamic_binary(build, specimens):
    _, paths = specimens
    status, rows = inspect_json(build, paths["dynamic"])
    assert status == 0
    row = rows[str(paths["dynamic"])]
    assert row["kind"] == "dynamic"
    assert row["observable"] is True and row["reasons"] == []
    assert {"connect", "sendto"} <= set(row["imports"])
    assert "libc.so.6" in row["needed"]
    assert row["interpreter"].startswith("/") and "ld-" in row["interpreter"]
    assert re.fullmatch(r"[0-9a-f]{40}", row["buildID"])
    assert row["architecture"] and row["go"] is False and row["error"] is None


def test_blocked_binaries(build, specimens):
    _, paths = specimens
    names = ["static", "setuid", "setgid", "capabilities", "golike"]
    status, rows = inspect_json(build, *[paths[n] for n in names])
    assert status == 0
    row = {name: rows[str(paths[name])] for name in names}
    for name in names:
        assert row[name]["observable"] is False, name

    assert row["static"]["kind"] == "static" and row["static"]["interpreter"] is None
    assert any(r.startswith("static binary") for r in row["static"]["reasons"])

    # Reported although root, who inspects, could preload them: inspect speaks for every user.
    assert row["setuid"]["setuid"] is True and row["setuid"]["owner"] == NOBODY
    assert row["setuid"]["reasons"] == [f"setuid uid {NOBODY} (the loader ignores LD_PRELOAD unless uid {NOBODY} runs it)"]
    assert row["setgid"]["setgid"] is True and row["setgid"]["group"] == NOBODY and row["setgid"]["setuid"] is False
    assert row["setgid"]["reasons"][0].startswith(f"setgid gid {NOBODY} ")
    assert row["capabilities"]["fileCapabilities"] == "cap_net_raw=ep"
    assert row["capabilities"]["reasons"] == ["file capabilities (the loader ignores LD_PRELOAD unless root runs it)"]

    assert row["golike"]["go"] is True and row["golike"]["kind"] == "dynamic"
    assert any(r.startswith("Go program") for r in row["golike"]["reasons"])


def test_bonjour_libraries_and_whether_they_are_gated(build, specimens, workdir):
    """avahi-browse asks the mDNS daemon through libavahi-client: gated where the preload loads,
    not when the loader ignores LD_PRELOAD; avahi-daemon does its own multicast (socket calls)."""
    require(shutil.which("avahi-browse") is not None, "avahi-utils is not installed (scripts/deps test installs it)")
    _, paths = specimens
    directory = workdir / "inspect-bonjour"
    directory.mkdir()
    browse = directory / "bonjour"
    shutil.copy(shutil.which("avahi-browse"), browse)
    blocked = directory / "bonjour-setuid"
    shutil.copy(browse, blocked)
    os.chown(blocked, NOBODY, NOBODY)
    blocked.chmod(0o4755)
    status, rows = inspect_json(build, browse, blocked, paths["dynamic"], "/usr/sbin/avahi-daemon")
    assert status == 0
    assert (rows[str(browse)]["bonjour"], rows[str(browse)]["bonjourGated"]) == (["libavahi-client.so.3"], True)
    assert rows[str(blocked)]["bonjourGated"] is False
    assert any("not gated for this program" in w for w in rows[str(blocked)]["warnings"])
    assert (rows[str(paths["dynamic"])]["bonjour"], rows[str(paths["dynamic"])]["bonjourGated"]) == ([], None)
    daemon = rows["/usr/sbin/avahi-daemon"]
    assert daemon["bonjour"][0].startswith("libavahi-core.so") and daemon["bonjourGated"] is True
    table = run([str(build.lnp), "inspect", str(browse), str(blocked)]).stdout
    assert "Bonjour through libavahi-client.so.3 (gated)" in table
    assert "Bonjour through libavahi-client.so.3 (not gated)" in table


def test_scripts(build, specimens):
    directory, paths = specimens
    status, rows = inspect_json(build, paths["python-script"], paths["env-script"], paths["static-script"])
    assert status == 0
    python = rows[str(paths["python-script"])]
    assert python["kind"] == "script" and python["interpreter"] == "/usr/bin/python3"
    assert python["observable"] is True
    env = rows[str(paths["env-script"])]
    assert env["kind"] == "script" and env["interpreter"].endswith("/sh") and env["observable"] is True
    blocked = rows[str(paths["static-script"])]
    assert blocked["observable"] is False
    assert blocked["reasons"] == [
        f"its interpreter {directory / 'static'}: static binary (the loader that applies LD_PRELOAD never runs)"
    ]
    assert python["runs"] is True and blocked["runs"] is True


def test_a_script_whose_interpreter_is_missing_cannot_run(build, specimens):
    """Not "observable": the kernel cannot start it (ENOENT), so the question does not arise."""
    _, paths = specimens
    orphan = paths["orphan-script"]
    assert run(["sh", "-c", str(orphan)]).returncode == 127, "the script runs after all"
    status, rows = inspect_json(build, orphan)
    assert status == 0
    row = rows[str(orphan)]
    assert (row["kind"], row["observable"], row["runs"]) == ("script", None, False)
    assert row["reasons"] == ["its interpreter /nonexistent/lnp-interpreter is missing: it cannot run here"]
    table = run([str(build.lnp), "inspect", str(orphan)]).stdout.splitlines()
    assert re.split(r"  +", table[1], maxsplit=3)[1:] == [
        "script", "cannot run", "its interpreter /nonexistent/lnp-interpreter is missing: it cannot run here"]


def test_broken_and_unknown_files(build, specimens, workdir):
    _, paths = specimens
    missing = workdir / "no-such-program"
    status, rows = inspect_json(build, paths["truncated"], paths["garbage"], missing, paths["dynamic"])
    assert status == 1
    truncated = rows[str(paths["truncated"])]
    assert truncated["kind"] == "error" and truncated["observable"] is None
    assert truncated["error"].startswith("truncated ELF file")
    garbage = rows[str(paths["garbage"])]
    assert garbage["kind"] == "other" and garbage["error"] is None and garbage["observable"] is None
    assert rows[str(missing)]["error"] == "No such file or directory"
    assert rows[str(paths["dynamic"])]["observable"] is True, "the good file is still reported"


def test_directory(build, specimens, workdir):
    directory, paths = specimens
    status, rows = inspect_json(build, directory)
    assert status == 1, "the truncated file makes the status 1"
    expected = {str(p) for name, p in paths.items() if name != "not-executable"}
    assert set(rows) == expected
    assert rows[str(paths["dynamic"])]["observable"] is True
    assert rows[str(paths["truncated"])]["kind"] == "error"
    assert not (workdir / "inspect-ran").exists(), "lnp inspect ran a file"


def test_table(build, specimens):
    directory, paths = specimens
    result = run([str(build.lnp), "inspect", str(directory)])
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["PATH", "KIND", "VERDICT", "REASONS"]
    rows = {}
    for line in lines[1:]:
        if line.startswith(" "):
            continue  # details and notes
        cells = re.split(r"  +", line, maxsplit=3)
        rows[cells[0]] = cells[1:]
    assert set(rows) == {str(p) for name, p in paths.items() if name != "not-executable"}
    assert rows[str(paths["dynamic"])][:2] == ["dynamic", "observable"]
    assert rows[str(paths["static"])][:2] == ["static", "not observable"]
    assert rows[str(paths["setuid"])][2].startswith(f"setuid uid {NOBODY}")
    assert rows[str(paths["truncated"])][:2] == ["error", "-"]
    assert rows[str(paths["truncated"])][2].startswith("error: truncated ELF file")
    assert rows[str(paths["garbage"])][:2] == ["other", "-"]
    # The dynamic binary's details line names what it imports.
    index = lines.index(next(line for line in lines if line.startswith(str(paths["dynamic"]) + " ")))
    assert lines[index + 1].startswith("    ") and "imports " in lines[index + 1] and "connect" in lines[index + 1]


def test_usr_bin(build):
    """Every executable of /usr/bin: it completes, and every row is complete."""
    result = run([str(build.lnp), "inspect", "--json", "/usr/bin"], timeout=120)
    rows = json.loads(result.stdout)
    assert len(rows) > 50
    for row in rows:
        assert set(row) == KEYS
        assert row["path"].startswith("/usr/bin/")
        assert row["kind"] in {"dynamic", "static", "script", "other", "error"}
        assert (row["observable"] is None) == (row["kind"] in {"other", "error"})
    errors = [row for row in rows if row["kind"] == "error"]
    assert result.returncode == (1 if errors else 0), errors[:3]
    assert any(row["kind"] == "dynamic" and row["observable"] for row in rows)
