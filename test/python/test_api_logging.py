"""Issue 20, item 7: logging through logging.getLogger("picokernel"):
every compile with its reason and time, disk-cache loads and evictions at
INFO, warnings at WARNING; PK_LOG_COMPILES=1 shows the INFO records on
stderr; nothing is written to fd 2 behind logging's back."""

import logging
import os
import subprocess
import sys

import numpy as np

import picokernel


def messages(caplog):
    return [record.getMessage() for record in caplog.records
            if record.name == "picokernel"]


def test_compiles_and_evictions_are_info_records(caplog):
    caplog.set_level(logging.INFO, logger="picokernel")

    @picokernel.kernel(dynamic=False, max_cache_entries=1)
    def double(x, o):
        o[...] = x[...] * 2

    double(np.ones(3), np.zeros(3))
    double(np.ones(3), np.zeros(3))  # a hit: nothing to log
    double(np.ones(4, np.float32), np.zeros(4, np.float32))
    logged = messages(caplog)
    assert logged[0] == ("compiling kernel 'double' for (x: (3,) float64, "
                         "o: (3,) float64): first compile")
    assert logged[1].startswith("compiled kernel 'double' for (x: (3,) float64, "
                                "o: (3,) float64) in ") and "code generation" in logged[1]
    assert any(m.startswith("evicted the least recently used variant of kernel "
                            "'double'") for m in logged)
    assert any("dtype of 'x' float64 -> float32" in m for m in logged)
    assert len(logged) == 5, logged
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == "picokernel")


def test_nothing_on_stderr_unless_asked(monkeypatch, capfd):
    @picokernel.kernel
    def neg(x, o):
        o[...] = -x[...]

    monkeypatch.delenv("PK_LOG_COMPILES", raising=False)
    neg(np.ones(2), np.zeros(2))
    assert "picokernel" not in capfd.readouterr().err
    monkeypatch.setenv("PK_LOG_COMPILES", "1")
    neg(np.ones(2, np.float32), np.zeros(2, np.float32))
    err = capfd.readouterr().err
    assert "picokernel: compiling kernel 'neg'" in err and "picokernel: compiled kernel 'neg'" in err


def run(script, **env):
    environment = dict(os.environ, **env)
    environment.pop("PK_LOG_COMPILES", None)
    environment.update(env)
    return subprocess.run([sys.executable, "-c", script], env=environment,
                          capture_output=True, text=True, timeout=300)


KERNEL = ("import numpy as np, picokernel\n"
          "@picokernel.kernel\n"
          "def k(x, o):\n"
          "    o[...] = x[...] + 1\n"
          "k(np.ones(300000), np.zeros(300000))\n")


def test_disk_cache_loads_are_logged(tmp_path):
    script = ("import logging, sys\n"
              "logging.basicConfig(level=logging.INFO, stream=sys.stdout,\n"
              "                    format='%(name)s %(levelname)s %(message)s')\n"
              + KERNEL)
    env = {"PK_CACHE": "1", "PK_CACHE_DIR": str(tmp_path)}
    first, second = run(script, **env), run(script, **env)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert "picokernel INFO compiled kernel 'k'" in first.stdout, first.stdout
    assert "picokernel INFO loaded kernel 'k'" in second.stdout, second.stdout
    assert "from the disk cache in" in second.stdout
    assert first.stderr == "" and second.stderr == ""


def test_warnings_go_through_logging():
    # Configured logging gets the warning; nothing reaches fd 2 directly.
    configured = run("import logging, sys\n"
                     "logging.basicConfig(stream=sys.stdout, format='%(name)s "
                     "%(levelname)s %(message)s')\n" + KERNEL,
                     OMP_NUM_THREADS="abc", PK_CACHE="0")
    assert configured.returncode == 0, configured.stderr
    assert "picokernel WARNING ignoring OMP_NUM_THREADS='abc'" in configured.stdout
    assert configured.stderr == ""
    # Without logging configured, a warning reaches stderr as Python's do.
    plain = run(KERNEL, OMP_NUM_THREADS="abc", PK_CACHE="0")
    assert plain.stderr.startswith("picokernel: ignoring OMP_NUM_THREADS='abc'"), plain.stderr
    # And a logger turned off silences it.
    silenced = run("import logging\nlogging.getLogger('picokernel').disabled = True\n"
                   + KERNEL, OMP_NUM_THREADS="abc", PK_CACHE="0")
    assert silenced.stderr == ""


def test_every_switch_reads_the_same_spellings(tmp_path):
    # PK_LOG_COMPILES, PK_CACHE and PK_DISABLE_JIT take 1/0, true/false,
    # on/off, yes/no in any case; an empty value is the default; anything
    # else warns once, naming the variable, and keeps the default.
    script = KERNEL + "k(np.ones(3), np.zeros(3))\nprint(k.backend)\n"
    for on in ("1", "Yes", " on ", "TRUE"):
        shown = run(script, PK_LOG_COMPILES=on, PK_CACHE="0")
        assert shown.returncode == 0, shown.stderr
        assert "picokernel: compiled kernel 'k'" in shown.stderr, (on, shown.stderr)
    for off in ("0", "no", "Off", "false", ""):
        quiet = run(script, PK_LOG_COMPILES=off, PK_CACHE="0")
        assert quiet.returncode == 0 and quiet.stderr == "", (off, quiet.stderr)
    unclear = run(script, PK_LOG_COMPILES="maybe", PK_CACHE="0")
    assert unclear.returncode == 0, unclear.stderr
    warnings = [line for line in unclear.stderr.splitlines() if line]
    # Read at every record, warned about once; nothing logged (off).
    assert warnings == ["picokernel: PK_LOG_COMPILES=maybe is not one of 0/1, "
                        "false/true, off/on, no/yes; it stays off"], warnings
    # PK_CACHE stays on: the kernel lands in the cache directory.
    cached = run(script, PK_CACHE="2", PK_CACHE_DIR=str(tmp_path / "cache"))
    assert cached.returncode == 0, cached.stderr
    assert "PK_CACHE=2 is not one of" in cached.stderr and "it stays on" in cached.stderr
    assert os.listdir(tmp_path / "cache")
    for off in ("off", "NO", " 0"):
        assert run(script, PK_CACHE=off, PK_CACHE_DIR=str(tmp_path / off.strip())).stderr == ""
        assert not os.path.exists(tmp_path / off.strip())
    # PK_DISABLE_JIT: on interprets, an unclear value compiles.
    interpreted = run(script, PK_DISABLE_JIT="yes", PK_CACHE="0")
    assert interpreted.stdout.split()[-1] == "numpy", interpreted.stdout
    compiled = run(script, PK_DISABLE_JIT="sometimes", PK_CACHE="0")
    assert compiled.stdout.split()[-1] == "cpu", compiled.stdout + compiled.stderr
    assert "PK_DISABLE_JIT=sometimes is not one of" in compiled.stderr
