"""lnp as a Debian tool. scripts/package builds the .deb; it is installed on this machine with
dpkg -i, run from its installed paths (its gated calls inside the tests' own network
namespaces), and removed with dpkg -r, also when a test fails. Its manuals render without
warnings, each completion script loads in its shell, both commands say their version, and
scripts/install puts the same files under DESTDIR and takes them away again."""

import gzip
import json
import os
import pathlib
import pty
import re
import select
import shlex
import shutil
import signal
import subprocess
import time

import pytest

from conftest import ROOT, json_lines, require, run

PAGES = ["share/man/man1/lnp-run.1.gz", "share/man/man1/lnp.1.gz", "share/man/man5/lnp-audit.5.gz"]
COMPLETIONS = {
    "bash": ["share/bash-completion/completions/lnp-run", "share/bash-completion/completions/lnp"],
    "zsh": ["share/zsh/vendor-completions/_lnp-run", "share/zsh/vendor-completions/_lnp"],
    "fish": ["share/fish/vendor_completions.d/lnp-run.fish", "share/fish/vendor_completions.d/lnp.fish"],
}
DOCS = ["share/doc/lnp/README.md", "share/doc/lnp/design.md", "share/doc/lnp/benchmarks.md", "share/doc/lnp/services.md"]
TO_PEER = "dst host 10.77.0.2 and tcp port 8080"


def triplet():
    return run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"], check=True).stdout.strip()


def package_files():
    """Every file the package holds, under /usr."""
    lib = f"lib/{triplet()}/lnp"
    files = ["bin/lnp-run", "bin/lnp", f"{lib}/liblnp.so", f"{lib}/lnp-run-arguments",
             "include/networkext/ne_socket.h", *PAGES, *DOCS, "share/doc/lnp/copyright",
             "share/doc/lnp/changelog.Debian.gz"]
    for scripts in COMPLETIONS.values():
        files += scripts
    return sorted("/usr/" + f for f in files)


def expected_version(command):
    """What `COMMAND --version` must say: the number in Sources/LNPVersion and the tree's commit."""
    number = re.search(r'number = "(\d+\.\d+\.\d+)"', (ROOT / "Sources/LNPVersion/ProjectVersion.swift").read_text())
    commit = run(["git", "-C", ROOT, "rev-parse", "--short=7", "HEAD"])
    revision = commit.stdout.strip() if commit.returncode == 0 else "unknown"
    return f"{command} {number.group(1)} (git {revision})"


def is_installed():
    status = run(["dpkg-query", "-W", "-f=${Status}", "lnp"])
    return status.returncode == 0 and "installed" in status.stdout.split()


def dpkg(*arguments):
    """dpkg, waiting for a lock another installation holds (scripts/deps, apt)."""
    deadline = time.time() + 180
    while True:
        result = run(["dpkg", *map(str, arguments)], timeout=600)
        if result.returncode == 0 or "lock" not in result.stderr or time.time() > deadline:
            return result
        time.sleep(2)


@pytest.fixture(scope="module")
def deb(workdir):
    require(shutil.which("dpkg-deb") is not None, "dpkg-deb is not installed (scripts/deps test installs dpkg-dev)")
    result = run([ROOT / "scripts" / "package", workdir / "package"], timeout=1800)
    assert result.returncode == 0, result.stderr[-4000:]
    return pathlib.Path(result.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def installed(deb):
    """The package installed with dpkg -i for this module's tests, and removed after them
    whatever happened (test_removal_takes_everything_away removes it first, and checks)."""
    require(os.geteuid() == 0, "dpkg -i needs root")
    if is_installed():
        pytest.fail("an lnp package is installed on this machine already: this test would replace and remove it")
    result = dpkg("-i", deb)
    try:
        assert result.returncode == 0, result.stdout + result.stderr
        yield pathlib.Path("/usr")
    finally:
        if is_installed():
            removed = dpkg("-r", "lnp")
            assert removed.returncode == 0, removed.stderr


def test_scripts_git_revision_names_the_commit_or_says_unknown(workdir):
    """The build's revision (Plugins/GitRevision runs it): the checkout's own commit, never
    that of a repository the package merely sits in."""
    output = workdir / "GitRevision.swift"
    script = ROOT / "scripts" / "git-revision"
    outside = workdir / "not-a-checkout"
    outside.mkdir(exist_ok=True)
    commit = run(["git", "-C", ROOT, "rev-parse", "--short=7", "HEAD"])
    require(commit.returncode == 0, "the tree is not a git checkout")
    for package, revision in [(ROOT, commit.stdout.strip()), (outside, "unknown"), (ROOT / "Sources", "unknown")]:
        result = run(["sh", script, package, output])
        assert result.returncode == 0, result.stderr
        assert output.read_text().splitlines()[-1] == f'let gitRevision = "{revision}"'
    # Rewritten only when the text changes: an unchanged revision recompiles nothing.
    before = output.stat().st_mtime_ns
    time.sleep(0.01)
    run(["sh", script, ROOT / "Sources", output], check=True)
    assert output.stat().st_mtime_ns == before


def test_both_commands_say_the_version_and_the_builds_revision(build):
    for command, name in [(build.lnp_run, "lnp-run"), (build.lnp, "lnp")]:
        result = run([command, "--version"])
        assert (result.returncode, result.stdout, result.stderr) == (0, expected_version(name) + "\n", "")
    # After options, as ArgumentParser reads it; after PROGRAM, the program's.
    assert run([build.lnp_run, "--deny", "--version"]).stdout == expected_version("lnp-run") + "\n"
    assert run([build.lnp_run, "--deny", "--", "sh", "-c", 'echo "$1"', "sh", "--version"]).stdout == "--version\n"
    assert "--version" in run([build.lnp_run, "--help"]).stdout


def test_the_package_says_what_it_is_and_needs(deb, build, workdir):
    fields = dict(line.split(": ", 1) for line in run(["dpkg-deb", "-f", deb], check=True).stdout.splitlines()
                  if ": " in line and not line.startswith(" "))
    assert fields["Package"] == "lnp"
    assert fields["Version"] == expected_version("lnp").split()[1]
    assert fields["Architecture"] == run(["dpkg", "--print-architecture"], check=True).stdout.strip()
    # The commands carry their runtimes: libc6 is all the package depends on.
    assert re.fullmatch(r"libc6 \(>= [\d.]+\)", fields["Depends"]), fields["Depends"]
    built_using = [entry.split(" (= ")[0] for entry in fields["Built-Using"].split(", ")]
    assert built_using[:2] == ["sqlite3", "libcap2"] and re.fullmatch(r"gcc-\d+", built_using[2]), built_using
    contents = run(["dpkg-deb", "-c", deb], check=True).stdout.splitlines()
    files = sorted(line.split()[-1].lstrip(".") for line in contents if not line.startswith("d"))
    assert files == package_files()
    assert all(" root/root " in line for line in contents)
    # What it holds is this build, stripped.
    extracted = workdir / "package-contents"
    run(["dpkg-deb", "-x", deb, extracted], check=True)
    symbols = run(["readelf", "-SW", extracted / "usr/bin/lnp-run"], check=True).stdout
    assert ".symtab" not in symbols and ".note.gnu.build-id" in symbols
    exports = lambda path: sorted(run(["nm", "-D", "--defined-only", path], check=True).stdout.split()[2::3])
    assert exports(extracted / f"usr/lib/{triplet()}/lnp/liblnp.so") == exports(build.liblnp)


def test_the_installed_commands_say_their_version(installed):
    for name in ("lnp-run", "lnp"):
        result = run([installed / "bin" / name, "--version"])
        assert (result.returncode, result.stdout, result.stderr) == (0, expected_version(name) + "\n", "")


def test_the_installed_lnp_run_preloads_from_the_multiarch_directory(lan, installed):
    result = lan.client([installed / "bin/lnp-run", "--deny", "--", "sh", "-c", "echo $LD_PRELOAD"])
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.strip() == f"/usr/lib/{triplet()}/lnp/liblnp.so"


def test_the_installed_lnp_run_gates_calls(lan, fixtures, audit, installed):
    """From /usr/bin, in the tests' client namespace: a denied connect to the on-link peer
    fails with EHOSTUNREACH and sends nothing, through the preload and through the
    supervisor (a static program); an allowed one connects."""
    lnp_run = installed / "bin/lnp-run"
    capture = lan.capture(TO_PEER)
    for probe in (fixtures.probe, fixtures.probe_static):
        denied = lan.lnp_run(["--deny", "--audit", str(audit.path)], [probe, "connect", "tcp", "10.77.0.2", "8080"],
                             lnp_run=lnp_run)
        assert json_lines(denied.stdout) == [{"call": "connect", "result": -1, "errno": "EHOSTUNREACH"}], denied.stderr
    assert capture.packets() == []
    assert [(r["decision"], r["address"], r["by"]) for r in audit.records()] == [
        ("deny", "10.77.0.2", "preload"), ("deny", "10.77.0.2", "supervisor")]
    allowed = lan.lnp_run(["--allow"], [fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"], lnp_run=lnp_run)
    assert json_lines(allowed.stdout) == [{"call": "connect", "result": 0, "errno": None}], allowed.stderr


def test_nested_runs_and_lnp_know_the_installed_lnp_run(lan, fixtures, installed, workdir):
    """Both find lnp-run by its executable, /usr/bin/lnp-run here."""
    lnp_run = installed / "bin/lnp-run"
    nested = lan.lnp_run(["--deny"], [lnp_run, "--allow", "--", fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"],
                         lnp_run=lnp_run)
    assert json_lines(nested.stdout) == [{"call": "connect", "result": -1, "errno": "EHOSTUNREACH"}]
    assert "the enclosing lnp-run" in nested.stderr and "denies local-network access" in nested.stderr
    state = workdir / f"state-{time.monotonic_ns()}"
    inside = lan.lnp_run(["--deny"], ["env", f"XDG_STATE_HOME={state}", installed / "bin/lnp", "allow", "/bin/true"],
                         lnp_run=lnp_run)
    assert inside.returncode == 1
    assert "lnp: decisions are not changed from inside a program lnp-run runs" in inside.stderr
    assert not state.exists(), "nothing was recorded"


def test_the_manuals_render_without_warnings(installed):
    for page in PAGES:
        path = installed / page
        assert run(["man", "-w", path.name.split(".")[0]]).stdout.strip() == str(path), "man finds it"
        result = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", path], capture_output=True, text=True,
                                env={**os.environ, "LC_ALL": "C.UTF-8", "MANROFFSEQ": "", "MANWIDTH": "80"})
        assert (result.returncode, result.stderr) == (0, ""), page
        assert len(result.stdout.splitlines()) > 30, page


def rendered(path):
    """The page as man shows it, lines long enough that no word is broken."""
    result = subprocess.run(["man", "-l", path], capture_output=True, text=True, check=True,
                            env={**os.environ, "LC_ALL": "C.UTF-8", "MANWIDTH": "250"})
    return result.stdout


def test_the_commands_manuals_are_their_argument_definitions(installed):
    """lnp-run(1) and lnp(1) are generated from what --help says: every option and
    subcommand is there, and lnp-run's has no subcommand (ArgumentParser's description of it
    had one, 'help', which would run a program named help)."""
    page = rendered(installed / "share/man/man1/lnp-run.1.gz")
    help_text = run([installed / "bin/lnp-run", "--help"], check=True).stdout
    options = re.findall(r"^  (--[a-z-]+)", help_text, re.M)
    assert len(options) >= 14
    for option in options:
        assert option in page, option
    assert "subcommand" not in page
    lnp_page = rendered(installed / "share/man/man1/lnp.1.gz")
    subcommands = re.findall(r"^  ([a-z]+) ", run([installed / "bin/lnp", "--help"], check=True).stdout.split("SUBCOMMANDS:")[1], re.M)
    assert subcommands == ["check", "list", "allow", "deny", "reset", "report", "inspect"]
    for subcommand in subcommands:
        assert re.search(rf"^     {subcommand}\b", lnp_page, re.M), subcommand
    assert "--format" in lnp_page and "--recursive" in lnp_page


def test_lnp_audit_names_every_field_of_a_record(lan, fixtures, audit, installed, workdir):
    """lnp-audit(5) is written by hand: each key of records lnp-run writes, lost records'
    included, is one of its entries."""
    page = rendered(installed / "share/man/man5/lnp-audit.5.gz")
    lan.lnp_run(["--deny", "--audit", str(audit.path)], [fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"],
                lnp_run=installed / "bin/lnp-run")
    [record] = audit.records()
    for key in [*record, "lost"]:
        assert re.search(rf"^       {key}\b", page, re.M), key
    assert re.search(r"^       because", page, re.M)
    for because in ("run-option", "remembered", "administrator", "answered", "asking", "unanswered", "no-terminal",
                    "store-unreadable", "no-supervisor", "not-confirmed", "undeclared", "not-local"):
        assert because in page, because


def test_completion_scripts_load_in_their_shells(installed, workdir):
    home = workdir / "shell-home"  # what the shells write of their own goes there
    home.mkdir(exist_ok=True)
    environment = {"PATH": os.environ["PATH"], "HOME": str(home), "LC_ALL": "C.UTF-8"}
    loaders = {
        "bash": lambda path: ["bash", "-c", f"source {path}"],
        "zsh": lambda path: ["zsh", "-c", f"autoload -U compinit; compinit -u; source {path}; whence -w _{path.name.lstrip('_')}"],
        "fish": lambda path: ["fish", "-c", f"source {path}"],
    }
    for shell, scripts in COMPLETIONS.items():
        require(shutil.which(shell) is not None, f"{shell} is not installed (scripts/deps test installs it)")
        for script in scripts:
            result = run(loaders[shell](installed / script), env=environment)
            assert (result.returncode, result.stderr) == (0, ""), f"{shell} {script}"
    # And they complete: lnp-run's options, lnp's subcommands.
    fish = run(["fish", "-c", "complete -C 'lnp-run --de'; complete -C 'lnp re'"], env=environment, check=True).stdout
    assert [line.split("\t")[0] for line in fish.splitlines()] == ["--deny", "--deny-while-asking", "report", "reset"]
    bash = run(["bash", "-c", "source /usr/share/bash-completion/completions/lnp-run; COMP_WORDS=(lnp-run --de); "
                "COMP_CWORD=1; COMP_LINE='lnp-run --de'; COMP_POINT=${#COMP_LINE}; _lnp-run lnp-run --de lnp-run; "
                "printf '%s\\n' \"${COMPREPLY[@]}\""], env=environment, check=True).stdout
    assert bash.split() == ["--deny", "--deny-while-asking"]


def zsh_completes(line, home, timeout=20.0):
    """What zsh's completion system makes of LINE and a TAB, in an interactive zsh on a
    pseudo-terminal (completion runs nowhere else): the line as it stands after, and any list
    or error zsh printed. The installed completions are in zsh's own fpath (vendor-completions)."""
    pid, terminal = pty.fork()
    if pid == 0:
        os.execve(shutil.which("zsh"), ["zsh", "-f", "-i"],
                  {"PATH": os.environ["PATH"], "HOME": str(home), "TERM": "dumb", "LC_ALL": "C.UTF-8"})
    def read_until_quiet():
        seen, deadline = b"", time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([terminal], [], [], 0.5)
            if not ready:
                return seen.decode(errors="replace")
            try:
                seen += os.read(terminal, 4096)
            except OSError:
                break
        return seen.decode(errors="replace")
    try:
        os.write(terminal, b"autoload -U compinit; compinit -u -D; PS1='> '\n")
        read_until_quiet()
        os.write(terminal, line.encode() + b"\t")
        return read_until_quiet()
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(terminal)


def test_lnp_runs_completions_complete_its_options_then_the_programs_words(installed, workdir):
    """A wrapper's completion, as sudo's: lnp-run's options, then after `--` PROGRAM's name and
    PROGRAM's own words; never a `help` subcommand (`lnp-run help` would run a program named
    help). ArgumentParser's zsh script alone completed nothing at all for lnp-run ("doubled
    rest argument definition")."""
    home = workdir / "shell-home-completing"
    home.mkdir(exist_ok=True)
    environment = {"PATH": os.environ["PATH"], "HOME": str(home), "LC_ALL": "C.UTF-8"}

    def fish(line):
        result = run(["fish", "-c", f"complete -C {shlex.quote(line)}"], env=environment, check=True).stdout
        return [entry.split("\t")[0] for entry in result.splitlines()]
    assert fish("lnp-run --de") == ["--deny", "--deny-while-asking"]
    assert "echo" in fish("lnp-run --deny -- ech")
    assert "--version" in fish("lnp-run --deny -- git --ver"), "git's own completion"
    assert "help" not in fish("lnp-run ")

    def bash(*words):
        script = ("source /usr/share/bash-completion/completions/lnp-run; COMP_WORDS=(\"$@\"); "
                  "COMP_CWORD=$(($# - 1)); COMP_LINE=\"$*\"; COMP_POINT=${#COMP_LINE}; "
                  "_lnp-run_with_program lnp-run \"${COMP_WORDS[COMP_CWORD]}\" \"${COMP_WORDS[COMP_CWORD-1]}\"; "
                  "printf '%s\\n' \"${COMPREPLY[@]}\"")
        return run(["bash", "-c", script, "bash", *words], env=environment, check=True).stdout.split()
    assert bash("lnp-run", "--de") == ["--deny", "--deny-while-asking"]
    assert "echo" in bash("lnp-run", "--deny", "--", "ech")
    assert bash("lnp-run", "--", "ls", "/us") == ["/usr"], "file names after the program's name"
    assert "help" not in bash("lnp-run", "")

    require(shutil.which("zsh") is not None, "zsh is not installed (scripts/deps test installs it)")
    assert zsh_completes("lnp-run --deny -- ech", home).startswith("lnp-run --deny -- echo")
    assert zsh_completes("lnp-run --deny -- git --vers", home).startswith("lnp-run --deny -- git --version")
    assert zsh_completes("lnp-run --attri", home).startswith("lnp-run --attribution")
    assert "doubled rest" not in zsh_completes("lnp-run ", home)


def test_removal_takes_everything_away(installed):
    """dpkg -r, as the fixture does after any failure: no file of the package is left."""
    assert all(pathlib.Path(f).exists() for f in package_files())
    result = dpkg("-r", "lnp")
    assert result.returncode == 0, result.stderr
    assert not is_installed()
    assert [f for f in package_files() if os.path.lexists(f)] == []
    assert not os.path.exists(f"/usr/lib/{triplet()}/lnp") and not os.path.exists("/usr/share/doc/lnp")


def test_install_and_uninstall_under_destdir(workdir):
    """scripts/install PREFIX with DESTDIR: the README's places, a working lnp-run among them;
    --uninstall leaves none of its files."""
    stage = workdir / "stage"
    prefix = "/opt/lnpkp"
    environment = {**os.environ, "DESTDIR": str(stage)}
    result = subprocess.run([ROOT / "scripts" / "install", prefix], capture_output=True, text=True, env=environment,
                            timeout=1800)
    assert result.returncode == 0, result.stderr[-4000:]
    root = stage / prefix.lstrip("/")
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    zsh = [f.replace("vendor-completions", "site-functions") for f in COMPLETIONS["zsh"]]
    assert files == sorted(["bin/lnp-run", "bin/lnp", "lib/lnp/liblnp.so", "lib/lnp/lnp-run-arguments",
                            "include/networkext/ne_socket.h", *PAGES, *DOCS, *COMPLETIONS["bash"], *zsh,
                            *COMPLETIONS["fish"]])
    shown = run([root / "bin/lnp-run", "--deny", "--", "sh", "-c", "echo $LD_PRELOAD"])
    assert shown.stdout.strip() == str(root / "lib/lnp/liblnp.so"), shown.stderr
    assert run([root / "bin/lnp-run", "--version"]).stdout == expected_version("lnp-run") + "\n"
    with gzip.open(root / "share/man/man5/lnp-audit.5.gz", "rt") as page:
        assert page.read() == (ROOT / "docs/lnp-audit.5").read_text()
    result = subprocess.run([ROOT / "scripts" / "install", "--uninstall", prefix], capture_output=True, text=True,
                            env=environment, timeout=60)
    assert result.returncode == 0, result.stderr
    assert [p for p in root.rglob("*") if not p.is_dir()] == []
    assert not (root / "lib/lnp").exists() and not (root / "share/doc/lnp").exists()
