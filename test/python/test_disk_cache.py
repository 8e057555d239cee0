"""The disk cache (Runtime/DiskCache.h): a kernel compiled by one process
loads in the next instead of compiling; entries are keyed by the options
too, written atomically, checked, bounded, and the cache can be turned off.
Each scenario runs in fresh Python processes with its own directory."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import json, sys, numpy as np, picokernel
    threshold = int(sys.argv[1])

    @picokernel.kernel(parallel_threshold=threshold)
    def fma(a, b, c, o):
        o[...] = a[...] * b[...] + c[...]

    @picokernel.kernel(parallel_threshold=threshold)
    def softmax(x_ref, o_ref):
        x = x_ref[...]
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        o_ref[...] = e / e.sum(axis=-1, keepdims=True)

    a = np.arange(1000, dtype=np.float32)
    o = np.empty_like(a)
    fma(a, a, a, o)
    x = np.random.default_rng(0).standard_normal((64, 1024))
    y = np.empty_like(x)
    softmax(x, y)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    right = bool((o == a * a + a).all()) and bool(
        np.allclose(y, e / e.sum(axis=-1, keepdims=True), rtol=1e-12))
    print(json.dumps({"right": right,
                      "loads": fma.cache_info().disk_loads
                               + softmax.cache_info().disk_loads}))
""")


def execute(directory, threshold=1 << 15, **environment):
    """(disk loads, stderr) of a fresh process running SCRIPT."""
    env = dict(os.environ, PK_CACHE="1", PK_CACHE_DIR=str(directory))
    env.update(environment)
    env = {name: value for name, value in env.items() if value is not None}
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(threshold)],
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["right"]
    return outcome["loads"], result.stderr


def run(directory, threshold=1 << 15, **environment):
    return execute(directory, threshold, **environment)[0]


def entries(directory):
    return sorted(p for p in os.listdir(directory) if p.endswith(".pkobj"))


def test_a_second_process_loads_instead_of_compiling(tmp_path):
    assert run(tmp_path) == 0
    assert len(entries(tmp_path)) == 2  # fma serial, softmax with OpenMP
    assert run(tmp_path) == 2
    assert run(tmp_path) == 2


def test_other_options_are_other_entries(tmp_path):
    assert run(tmp_path) == 0
    # softmax on 64 x 1024 runs serial below this threshold: new machine code.
    assert run(tmp_path, threshold=1 << 20) == 0
    assert len(entries(tmp_path)) == 4
    assert run(tmp_path, threshold=1 << 20) == 2


def test_corrupt_entries_are_compiled_again(tmp_path):
    run(tmp_path)
    for name in entries(tmp_path):
        path = tmp_path / name
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF  # one flipped byte fails the checksum
        path.write_bytes(bytes(data))
    (tmp_path / entries(tmp_path)[0]).write_bytes(b"truncated")
    assert run(tmp_path) == 0  # recompiled, entries replaced
    assert run(tmp_path) == 2


def test_processes_racing_on_one_directory(tmp_path):
    env = dict(os.environ, PK_CACHE="1", PK_CACHE_DIR=str(tmp_path))
    racers = [subprocess.Popen([sys.executable, "-c", SCRIPT, str(1 << 15)],
                               env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
              for _ in range(4)]
    for racer in racers:
        out, err = racer.communicate(timeout=300)
        assert racer.returncode == 0, err
        assert json.loads(out.strip().splitlines()[-1])["right"]
    assert len(entries(tmp_path)) == 2
    assert not [p for p in os.listdir(tmp_path) if ".tmp" in p]
    assert run(tmp_path) == 2


def test_size_bound_and_off_switch(tmp_path):
    assert run(tmp_path / "bounded", PK_CACHE_MAX_MB="0") == 0
    assert entries(tmp_path / "bounded") == []  # everything over the bound
    off = tmp_path / "off"
    assert run(off, PK_CACHE="0") == 0
    assert not off.exists() or entries(off) == []


@pytest.mark.parametrize("value", ["0", "off", "False", "no"])
def test_the_usual_spellings_switch_the_cache_off(tmp_path, value):
    loads, stderr = execute(tmp_path / "off", PK_CACHE=value)
    assert loads == 0 and stderr == ""
    assert not (tmp_path / "off").exists()


def test_garbage_in_the_environment_warns_and_keeps_the_defaults(tmp_path):
    loads, stderr = execute(tmp_path, PK_CACHE="maybe", PK_CACHE_MAX_MB="2^44")
    assert "PK_CACHE=maybe" in stderr and "PK_CACHE_MAX_MB=2^44" in stderr
    assert len(entries(tmp_path)) == 2  # on, with the default bound
    assert execute(tmp_path, PK_CACHE_MAX_MB="abc")[0] == 2


def test_a_relative_xdg_cache_home_is_ignored(tmp_path):
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, PK_CACHE="1", HOME=str(home),
               XDG_CACHE_HOME="relative")
    env.pop("PK_CACHE_DIR", None)
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(1 << 15)], env=env,
                            cwd=work, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert not (work / "relative").exists()
    assert len(entries(home / ".cache" / "picokernel")) == 2


def test_a_directory_others_can_write_is_not_used(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    loads, stderr = execute(shared)
    assert stderr.count("not using the disk cache") == 1
    assert "writable by group or others" in stderr
    assert loads == 0 and entries(shared) == []


def test_the_directory_and_entries_are_private_under_umask_0(tmp_path):
    directory = tmp_path / "cache"
    env = dict(os.environ, PK_CACHE="1", PK_CACHE_DIR=str(directory))
    code = "import os; os.umask(0); exec(open(0).read())"
    result = subprocess.run([sys.executable, "-c", code, str(1 << 15)], env=env,
                            input=SCRIPT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert directory.stat().st_mode & 0o777 == 0o700
    for name in entries(directory):
        assert (directory / name).stat().st_mode & 0o777 == 0o600


def test_a_write_that_fails_only_means_not_cached(tmp_path):
    """A file-size limit (or a full disk) fails the cache's write: the
    kernel still runs, uncached (LLVM's output stream used to end the
    process); TMPDIR is not used at all."""
    import resource

    def limit_file_size():
        # Below any object file (the fma's is about 900 bytes).
        resource.setrlimit(resource.RLIMIT_FSIZE, (256, 256))

    env = dict(os.environ, PK_CACHE="1", PK_CACHE_DIR=str(tmp_path / "limited"),
               TMPDIR=str(tmp_path / "missing"))
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(1 << 15)], env=env,
                            preexec_fn=limit_file_size, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1])["right"]
    assert entries(tmp_path / "limited") == []
    assert not [p for p in os.listdir(tmp_path / "limited") if ".tmp" in p]
    assert run(tmp_path / "unlimited", TMPDIR=str(tmp_path / "missing")) == 0
    assert run(tmp_path / "unlimited") == 2
