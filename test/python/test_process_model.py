"""The process patterns of issue 15: threads that share a failing trace, a
kernel that calls itself while traced, refs kept past their trace, and names
that cannot become symbols. The ones that once hung or crashed the process
run in a subprocess with a timeout."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import picokernel


def run_isolated(source, timeout=120):
    """Runs `source` in a fresh Python; its stdout, after checking that it
    neither crashed nor hung. The source may call `wait_for_child(pid)`."""
    code = WAIT_FOR_CHILD + textwrap.dedent(source)
    result = subprocess.run([sys.executable, "-c", code],
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr
    return result.stdout


# For the scripts that fork: a child's wait status, or where it still runs
# after `seconds` (it hung), its threads' stacks (through gdb where
# installed: a rare hang says where it waits) before it is killed.
WAIT_FOR_CHILD = """
def wait_for_child(pid, seconds=30):
    import os, shutil, subprocess, time
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.01)
    stacks = "(no gdb to show its stacks)"
    if shutil.which("gdb"):
        stacks = subprocess.run(
            ["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
            capture_output=True, text=True, timeout=300).stdout
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return "hung:\\n" + stacks
"""


def test_threads_sharing_a_failing_trace_each_get_the_exception():
    out = run_isolated("""
        import threading, numpy as np, picokernel

        @picokernel.kernel
        def bad(a, o):
            o[...] = a[...] + "x"

        a, o = np.ones(3), np.zeros(3)
        errors, start = [], threading.Barrier(8)

        def call():
            start.wait()
            try:
                bad(a, o)
            except TypeError as error:
                errors.append(str(error))

        threads = [threading.Thread(target=call) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(errors) == 8 and all("unsupported" in e for e in errors), errors
        try:
            bad(a, o)
        except TypeError:
            print("later calls raise too")
    """)
    assert "later calls raise too" in out


def test_a_kernel_called_inside_its_own_trace_is_an_error():
    out = run_isolated("""
        import numpy as np, picokernel

        @picokernel.kernel
        def recursive(a, o):
            recursive(np.ones(3), np.zeros(3))
            o[...] = a[...]

        try:
            recursive(np.ones(3), np.zeros(3))
        except RuntimeError as error:
            print(error)
    """, timeout=60)
    assert "while it was being traced" in out


def test_another_kernel_may_run_inside_a_trace():
    inner = picokernel.kernel(lambda a, o: o.__setitem__(..., a[...] * 2))

    def outer(a, o):
        scale = np.zeros(3)
        inner(np.ones(3), scale)  # runs now, while outer is traced
        o[...] = a[...] * scale

    a, o = np.arange(3.0), np.zeros(3)
    picokernel.kernel(outer)(a, o)
    np.testing.assert_array_equal(o, a * 2)


def test_refs_kept_past_their_trace_raise():
    kept = []

    def keep(a, o):
        kept.append(a)
        o[...] = a[...]

    picokernel.kernel(keep)(np.ones(3), np.zeros(3))
    uses = [lambda: kept[0][...], lambda: kept[0].shape, lambda: kept[0].dtype,
            lambda: kept[0][1:], lambda: kept[0].__setitem__(..., 1.0)]
    for use in uses:
        with pytest.raises(ValueError, match="no longer being traced"):
            use()

    def reuse(a, o):
        o[...] = kept[0][...]

    with pytest.raises(ValueError, match="no longer being traced"):
        picokernel.kernel(reuse)(np.ones(3), np.zeros(3))


@pytest.mark.parametrize("name", ["", "\x00", "a\x00b"])
def test_kernel_names_that_cannot_be_symbols(name):
    def kernel(a, o):
        o[...] = a[...]

    kernel.__name__ = name
    with pytest.raises(ValueError, match="without NUL characters"):
        picokernel.kernel(kernel)(np.ones(3), np.zeros(3))
    kernel.__name__ = "<lambda> with spaces"
    picokernel.kernel(kernel)(np.ones(3), np.zeros(3))


def test_forked_workers_compile_new_shapes():
    """A fork Pool (Linux's default start method up to Python 3.13) after
    the parent compiled, serial and multi-threaded kernels: the children
    compile new shapes (MLIR's thread pool used to hang them)."""
    out = run_isolated("""
        import multiprocessing, numpy as np, picokernel

        @picokernel.kernel
        def affine(a, o):
            o[...] = a[...] * 2 + 1

        def work(n):
            a = np.arange(n, dtype=np.float64)
            o = np.zeros(n)
            affine(a, o)
            return bool((o == a * 2 + 1).all())

        assert work(5) and work(200000)  # the parent compiles first
        with multiprocessing.get_context("fork").Pool(2) as pool:
            print(pool.map(work, [7, 9, 300000, 11]))
    """, timeout=120)
    assert out.strip() == "[True, True, True, True]"


def test_a_child_forked_while_threads_compile_and_log_compiles_too():
    """Forks while six threads compile new kernels and new shapes of a
    shared one (and log each compile): a child compiles and runs both. A
    thread of the parent held a compile context's locks, the log's or the
    shared kernel's cache's at the fork in about one fork in seventy, and
    the child then waited for it for ever."""
    out = run_isolated("""
        import logging, os, threading, time, numpy as np, picokernel
        logging.getLogger("picokernel").setLevel(logging.INFO)

        def make(c):
            @picokernel.kernel(dynamic=False)
            def k(a, o):
                o[...] = a[...] * 2 + c
            return k

        shared = make(1)  # new shapes of one kernel, and new kernels
        stop = False
        def compile_forever(t):
            n = 10 + 1000 * t
            while not stop:
                a = np.ones(n, np.float32)
                make(n)(a, np.empty_like(a))
                shared(a, np.empty_like(a))
                n += 1

        threads = [threading.Thread(target=compile_forever, args=(t,),
                                    daemon=True) for t in range(6)]
        for t in threads:
            t.start()
        failed = []
        for trial in range(60):
            time.sleep(0.003 * (trial % 5))
            pid = os.fork()
            if pid == 0:
                a = np.arange(50 + trial, dtype=np.float32)
                o, p = np.empty_like(a), np.empty_like(a)
                make(trial)(a, o)
                shared(a, p)
                right = (o == a * 2 + trial).all() and (p == a * 2 + 1).all()
                os._exit(0 if right else 1)
            status = wait_for_child(pid)
            if status:
                failed.append((trial, status))
        stop = True
        print(failed)
    """, timeout=600)
    assert out.strip() == "[]"


@pytest.mark.parametrize("run", range(4))
def test_a_child_forked_during_the_process_s_first_compiles(run):
    """Forks every few milliseconds while two threads run the process's first
    compiles: LLVM's and MLIR's one-time initializations (function-local
    statics, pass registration) were still running in a thread the child
    does not have, and the child waited for them for ever (one child in
    eight). A fork now waits until no thread is inside LLVM or MLIR."""
    out = run_isolated("""
        import os, threading, numpy as np, picokernel

        def make(c):
            @picokernel.kernel
            def k(a, o):
                o[...] = a[...] * 2.0 + c
            return k

        @picokernel.kernel
        def minus_one(a, o):
            o[...] = a[...] - 1.0

        a = np.arange(8, dtype=np.float64)
        threads = [threading.Thread(target=lambda c=c: make(c)(
            a, np.empty_like(a))) for c in (1.0, 2.0)]
        for t in threads:
            t.start()
        children = []
        while any(t.is_alive() for t in threads):
            pid = os.fork()
            if pid == 0:
                o = np.empty_like(a)
                minus_one(a, o)
                os._exit(0 if (o == a - 1).all() else 1)
            children.append(pid)
            threading.Event().wait(0.002)
        for t in threads:
            t.join()
        print([status for pid in children if (status := wait_for_child(pid))])
    """, timeout=300)
    assert out.strip() == "[]"


@pytest.mark.parametrize("body", ["short", "long Python"])
@pytest.mark.parametrize("run", range(6))
def test_the_interpreter_exits_while_daemon_threads_compile(run, body):
    """The interpreter exits while daemon threads trace (some in a long
    Python body), compile and run kernels: exit tore LLVM down under a
    compile (a segfault in code generation, about one exit in ten), and a
    thread Python ended inside a kernel's body unwound through destructors
    that touched Python objects without the GIL (a crash or an abort). Now
    the last step of the interpreter's exit waits for the compiles in flight
    and starts no other, and such threads wait for the process's end. An
    atexit handler that runs after picokernel's may still compile, here
    on another thread that it waits for."""
    run_isolated(f"""
        import atexit, threading, time, numpy as np

        @atexit.register  # (before picokernel's import: it runs last)
        def compile_at_exit():
            a = np.ones(5, np.float32)
            o = np.empty_like(a)
            worker = threading.Thread(target=make(0.5), args=(a, o))
            worker.start()
            worker.join(timeout=60)
            assert not worker.is_alive() and (o == np.tanh(a) * 2 + 0.5).all()

        import picokernel

        def make(c):
            @picokernel.kernel(dynamic=False, parallel_threshold=1000)
            def k(a, o):
                if {body == "long Python"!r} and c > 1:
                    sum(range(300000))
                o[...] = np.tanh(a[...]) * 2 + c
            return k

        def compile_forever(t):
            n = 10 + 1000 * t
            while True:
                a = np.ones(n, np.float32)
                kernel = make(n)
                if t == 3:
                    kernel.trace(a, np.empty_like(a))
                else:
                    kernel(a, np.empty_like(a))
                n += 1

        for t in range(4):
            threading.Thread(target=compile_forever, args=(t,),
                             daemon=True).start()
        time.sleep({0.1 + 0.1 * run})
    """)


def test_a_child_compiles_what_its_parent_was_compiling_at_the_fork():
    """A kernel object shared by threads: the child calls it with the
    shapes another thread of the parent was compiling when it forked. The
    child compiles them itself: no thread of the child finishes that
    compile."""
    out = run_isolated("""
        import os, threading, time, numpy as np, picokernel

        traced = threading.Event()

        @picokernel.kernel
        def slow(a, o):
            x = a[...]
            for i in range(300):  # a compile of about half a second
                x = np.sin(x) * 0.5 + i
            o[...] = x
            traced.set()

        a, o = np.arange(5.0), np.empty(5)
        worker = threading.Thread(target=slow, args=(a, o))
        worker.start()
        traced.wait()
        time.sleep(0.05)  # in the pipeline now
        pid = os.fork()
        if pid == 0:
            mine = np.empty(5)
            slow(a, mine)
            expected = a
            for i in range(300):
                expected = np.sin(expected) * 0.5 + i
            os._exit(0 if np.allclose(mine, expected) else 1)
        status = wait_for_child(pid, 60)
        worker.join()
        print(status)
    """, timeout=120)
    assert out.strip() == "0"


@pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                    reason="AddressSanitizer's quarantine keeps freed memory")
def test_show_ir_and_lower_keep_memory_flat_over_many_shapes():
    """Each new shape adds types to the context it is traced in: show_ir and
    lower trace in a context of their own, freed afterwards (the shared one
    grew by about 1 KB a shape)."""
    out = run_isolated("""
        import numpy as np, picokernel

        @picokernel.kernel
        def double(a, o):
            o[...] = a[...] * 2

        def resident_kib():
            return int(open("/proc/self/statm").read().split()[1]) * 4

        def shapes(first, last):
            for n in range(first, last):
                a = np.zeros(n, np.float32)
                double.show_ir(a, a)
                double.lower(a, a, stage="linalg")

        shapes(1, 200)  # warm-up: allocator pools, caches
        before = resident_kib()
        shapes(200, 1000)
        print(resident_kib() - before)
    """, timeout=300)
    assert int(out) < 400  # KiB over 800 shapes (was about 1,400)


def test_ctrl_c_interrupts_a_long_compile():
    """SIGINT once the trace is done raises KeyboardInterrupt between the
    compile's stages (not after them), nothing is cached, and the next call
    compiles normally."""
    out = run_isolated("""
        import os, signal, threading, time, numpy as np, picokernel

        traced = threading.Event()
        lines = [f"    x = x {'+*-'[i % 3]} {(i % 7 + 1) / 8}" for i in range(6000)]
        scope = {"traced": traced}
        exec("def chain(a, o):\\n    x = a[...]\\n" + "\\n".join(lines)
             + "\\n    o[...] = x\\n    traced.set()\\n", scope)
        kernel = picokernel.kernel(scope["chain"])
        a, o = np.ones(100), np.zeros(100)

        def interrupt_the_compile():
            traced.wait()
            time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=interrupt_the_compile).start()
        start = time.monotonic()
        try:
            kernel(a, o)
            print("not interrupted")
        except KeyboardInterrupt:
            print("interrupted", kernel.cache_info().entries)
        traced.clear()
        kernel(a, o)
        print("then", kernel.cache_info().entries)
    """, timeout=120)
    assert out.splitlines() == ["interrupted 0", "then 1"], out


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="libomp registers in /dev/shm")
@pytest.mark.parametrize("fork", [False, True], ids=["process", "forked child"])
def test_a_dead_process_s_empty_openmp_registration_is_no_crash(fork):
    """libomp registers in /dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid> and
    dies of SIGBUS reading an empty file a dead process of the same pid left
    there; picokernel removes such a file before the runtime starts (and in
    a forked child, before it registers again)."""
    code = textwrap.dedent("""
        import os, sys, numpy as np, picokernel

        def leave_an_empty_registration():
            path = f"/dev/shm/__KMP_REGISTERED_LIB_{os.getpid()}_{os.getuid()}"
            open(path, "w").close()
            return path

        @picokernel.kernel
        def square(a, o):
            o[...] = a[...] * a[...]

        a = np.arange(300000, dtype=np.float64)
        o = np.zeros_like(a)
        if FORK:
            square(a, o)  # the runtime starts in the parent
            # Empty files for the pids the child is likely to get.
            left = []
            for pid in range(os.getpid() + 1, os.getpid() + 200):
                path = f"/dev/shm/__KMP_REGISTERED_LIB_{pid}_{os.getuid()}"
                if not os.path.exists(path):
                    open(path, "w").close()
                    left.append(path)
            pid = os.fork()
            if pid == 0:
                o[:] = 0
                square(a, o)
                os._exit(0 if (o == a * a).all() else 3)
            _, status = os.waitpid(pid, 0)
            for path in left:
                if os.path.exists(path):
                    os.unlink(path)
            covered = any(path.endswith(f"_{pid}_{os.getuid()}") for path in left)
            print(os.waitstatus_to_exitcode(status) == 0, covered)
        else:
            path = leave_an_empty_registration()
            square(a, o)
            print(bool((o == a * a).all()), True)
    """).replace("FORK", str(fork))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    right, covered = result.stdout.split()
    assert right == "True", result.stderr
    if covered != "True":
        pytest.skip("the child got a pid out of the range prepared for it")


@pytest.mark.parametrize("threads", ["", "abc", "-1", "2,abc", "99999999999"])
def test_an_omp_num_threads_libomp_aborts_on_is_ignored(threads):
    """libomp aborts the process on these; picokernel drops the variable
    (saying so) before the runtime starts, and kernels use every core."""
    code = textwrap.dedent("""
        import numpy as np, picokernel

        @picokernel.kernel
        def square(a, o):
            o[...] = a[...] * a[...]

        a = np.arange(300000, dtype=np.float64)
        o = np.zeros_like(a)
        square(a, o)
        print(bool((o == a * a).all()))
    """)
    env = dict(os.environ, OMP_NUM_THREADS=threads)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
    assert "ignoring OMP_NUM_THREADS" in result.stderr


def test_an_openmp_runtime_already_in_the_process_is_the_one_kernels_use(
        tmp_path):
    """libomp aborts the process ("OMP: Error #15") when a second copy of
    it starts. Another library's copy (here loaded privately, as a Python
    extension's dependencies are, and started) is the one threaded kernels
    then use, rather than picokernel's own."""
    find = textwrap.dedent("""
        import numpy as np, picokernel

        @picokernel.kernel(parallel_threshold=1)
        def double(a, o):
            o[...] = a[...] * 2

        a = np.ones(1000)
        double(a, np.empty_like(a))
        print(next(line.split()[-1] for line in open("/proc/self/maps")
                   if "libomp" in line))
    """)
    found = subprocess.run([sys.executable, "-c", find], capture_output=True,
                           text=True, timeout=120)
    assert found.returncode == 0, found.stderr
    other = tmp_path / "elsewhere" / "libomp.so.5"
    other.parent.mkdir()
    other.write_bytes(open(found.stdout.strip(), "rb").read())
    code = textwrap.dedent("""
        import ctypes, sys, numpy as np
        other = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_LOCAL)
        assert other.omp_get_max_threads() >= 1  # (it starts)
        import picokernel

        @picokernel.kernel(parallel_threshold=1)
        def double(a, o):
            o[...] = a[...] * 2

        a = np.arange(100000, dtype=np.float64)
        o = np.empty_like(a)
        double(a, o)
        print(bool((o == a * 2).all()))
        print(sorted({line.split()[-1] for line in open("/proc/self/maps")
                      if "libomp" in line}))
    """)
    result = subprocess.run([sys.executable, "-c", code, str(other)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    right, runtimes = result.stdout.splitlines()
    assert right == "True"
    assert runtimes == repr([str(other)])
