"""The launch/ scripts on a CPU: bind-rank's choice of GPU and NUMA node (a stand-in nvidia-smi
and sysfs tree), genbench-local's argument checks, genbench-profile's argument handling and
whole flow with a stand-in ncu, and genbench-profile-import on an ncu CSV fixture."""
import math
import os
import shutil
import signal
import stat
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAUNCH = os.path.join(ROOT, "launch")
FIXTURES = os.path.join(ROOT, "tests", "launch", "fixtures")
BIN = os.environ.get("GENBENCH_BIN", os.path.join(ROOT, "build", "bin", "genbench"))
MPIEXEC = os.environ.get("GENBENCH_MPIEXEC", "mpirun")


def run(cmd, env=None, check=None, **kw):
    full = dict(os.environ)
    full.update(env or {})
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=300, **kw)
    if check is not None and proc.returncode != check:
        raise AssertionError(f"{cmd} exited {proc.returncode}, expected {check}\n{proc.stdout}\n{proc.stderr}")
    return proc


def allowed_cpus():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":", 1)[1].strip()
    raise AssertionError("no Cpus_allowed_list")


# --- bind-rank ---------------------------------------------------------------------------------

@pytest.fixture
def fake_gpus(tmp_path):
    """Two GPUs: 0 on NUMA node 0 (CPU list = this process's first CPU), 1 with no NUMA node."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    smi = bindir / "nvidia-smi"
    smi.write_text("#!/bin/sh\n"
                   "echo '0, GPU-aaaa-0000, 00000000:19:00.0'\n"
                   "echo '1, GPU-bbbb-1111, 00000000:3B:00.0'\n")
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    sysfs = tmp_path / "sys"
    first_cpu = allowed_cpus().split(",")[0].split("-")[0]
    (sysfs / "bus/pci/devices/0000:19:00.0").mkdir(parents=True)
    (sysfs / "bus/pci/devices/0000:19:00.0/numa_node").write_text("0\n")
    (sysfs / "bus/pci/devices/0000:3b:00.0").mkdir(parents=True)
    (sysfs / "bus/pci/devices/0000:3b:00.0/numa_node").write_text("-1\n")
    (sysfs / "devices/system/node/node0").mkdir(parents=True)
    (sysfs / "devices/system/node/node0/cpulist").write_text(first_cpu + "\n")
    env = {"PATH": f"{bindir}:{os.environ['PATH']}", "GENBENCH_SYSFS": str(sysfs),
           "GENBENCH_BIND_VERBOSE": "1", "GENBENCH_BIND_TOOL": "taskset"}
    for k in ("CUDA_VISIBLE_DEVICES", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
              "GENBENCH_BACKEND", "GENBENCH_BIND"):
        env[k] = ""
    return env, first_cpu


def bind(env, extra):
    e = dict(env)
    e.update(extra)
    # An empty value stands for "unset" in the fixture; bind-rank must not see those at all.
    full = {k: v for k, v in {**os.environ, **e}.items() if v != "" or k not in e}
    proc = subprocess.run([os.path.join(LAUNCH, "bind-rank"), "grep", "Cpus_allowed_list", "/proc/self/status"],
                          capture_output=True, text=True, env=full, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split(":", 1)[1].strip(), proc.stderr


@pytest.mark.skipif(shutil.which("taskset") is None, reason="no taskset")
def test_bind_rank_binds_to_the_gpus_numa_node(fake_gpus):
    env, first_cpu = fake_gpus
    cpus, err = bind(env, {"OMPI_COMM_WORLD_LOCAL_RANK": "2"})  # 2 % 2 GPUs -> GPU 0 -> node 0
    assert cpus == first_cpu, err
    assert "GPU 0 (0000:19:00.0), NUMA node 0" in err


def test_bind_rank_slurm_localid_and_visible_devices(fake_gpus):
    env, _ = fake_gpus
    # SLURM_LOCALID 0 with CUDA_VISIBLE_DEVICES=1 -> GPU 1, which has no NUMA node.
    cpus, err = bind(env, {"SLURM_LOCALID": "0", "CUDA_VISIBLE_DEVICES": "1"})
    assert cpus == allowed_cpus()
    assert "not bound (no NUMA node for GPU 1 (0000:3b:00.0))" in err
    # A UUID prefix names the same GPU as CUDA does.
    _, err = bind(env, {"SLURM_LOCALID": "0", "CUDA_VISIBLE_DEVICES": "GPU-aaaa"})
    assert "GPU GPU-aaaa (0000:19:00.0), NUMA node 0" in err or "cannot bind" in err


def test_bind_rank_open_mpi_rank_wins_over_slurm(fake_gpus):
    env, _ = fake_gpus
    _, err = bind(env, {"OMPI_COMM_WORLD_LOCAL_RANK": "1", "SLURM_LOCALID": "0"})
    assert "local rank 1" in err and "GPU 1" in err


@pytest.mark.parametrize("extra, why", [
    ({"GENBENCH_BACKEND": "host", "SLURM_LOCALID": "0"}, "host backend"),
    ({"GENBENCH_BIND": "0", "SLURM_LOCALID": "0"}, "GENBENCH_BIND=0"),
    ({}, "no local rank"),
    ({"SLURM_LOCALID": "0", "CUDA_VISIBLE_DEVICES": "MIG-1234"}, "MIG device"),
    ({"SLURM_LOCALID": "0", "CUDA_VISIBLE_DEVICES": "7"}, "device '7' not found"),
])
def test_bind_rank_skips_silently(fake_gpus, extra, why):
    env, _ = fake_gpus
    cpus, err = bind(env, extra)
    assert cpus == allowed_cpus()
    assert why in err


def test_bind_rank_without_nvidia_smi_runs_the_command():
    env = {k: v for k, v in os.environ.items() if k not in ("GENBENCH_BIND", "GENBENCH_BACKEND")}
    env.update({"PATH": "/usr/bin:/bin", "SLURM_LOCALID": "0", "GENBENCH_BIND_VERBOSE": "1"})
    if os.path.exists("/usr/bin/nvidia-smi"):
        pytest.skip("this machine has nvidia-smi")
    proc = subprocess.run([os.path.join(LAUNCH, "bind-rank"), "sh", "-c", "exit 7"], capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 7  # the command's own exit status
    assert "no nvidia-smi" in proc.stderr


def test_bind_rank_needs_a_command():
    proc = run([os.path.join(LAUNCH, "bind-rank")], check=2)
    assert "usage" in proc.stderr


# --- genbench-local ----------------------------------------------------------------------------

def test_genbench_local_rejects_bad_rank_counts():
    if not os.access(BIN, os.X_OK):
        pytest.skip("no genbench binary")
    env = {"GENBENCH_BIN": BIN, "GENBENCH_HOST_RANKS": "two", "PATH": "/usr/bin:/bin"}
    proc = run([os.path.join(LAUNCH, "genbench-local"), "info"], env=env, check=2)
    assert "GENBENCH_HOST_RANKS must be a positive integer" in proc.stderr
    proc = run([os.path.join(LAUNCH, "genbench-local")], env={"GENBENCH_BIN": BIN}, check=2)
    assert "usage" in proc.stderr


# --- slurm/genbench-step --------------------------------------------------------------------------

FAKE_SRUN = """#!/bin/sh
# Stands in for srun. `--mpi=list`: lists pmix (after saying so and waiting a second when
# FAKE_SRUN_SLOW_LIST is set). As the launcher of one rank: says so, then stands for a rank that
# is still loading for FAKE_SRUN_LOAD seconds (SIGUSR1 has its default action there and ends
# it), then becomes that rank: execs the command after srun's options.
if [ "$1" = --mpi=list ]; then
  [ -n "$FAKE_SRUN_SLOW_LIST" ] && { echo listing > "$FAKE_SRUN_READY"; sleep 1; }
  echo "MPI plugin types are... pmix"; exit 0
fi
echo launched > "$FAKE_SRUN_LAUNCHED"
[ -z "$FAKE_SRUN_SLOW_LIST" ] && echo launched > "$FAKE_SRUN_READY"
while [ "${1#--}" != "$1" ]; do shift; done
sleep "$FAKE_SRUN_LOAD"
exec "$@"
"""


def gemm_config(timing, m, nk):
    """A config of one benchmark: the reference gemm, fp32, over the m values, n = k = nk."""
    return f"""genbench: 1
settings:
  timing: {timing}
benchmarks:
  - name: gemm
    op: gemm
    implementations: [reference]
    axes: {{m: {m}, n: {nk}, k: {nk}, dtype: fp32}}
"""


# Ten points of at least 0.2 s of samples each: a stop passed on as the file appears ends it early.
SLOW = gemm_config("{warmup: 1, min_iterations: 2, max_iterations: 5000, min_time: 0.2, max_time: 0.3}",
                   list(range(64, 74)), 64)


@pytest.mark.parametrize("when", ["ranks starting", "twice while the ranks start", "to the step and the ranks",
                                  "before the launch"])
def test_genbench_step_and_a_stop_signal_during_start_up(tmp_path, when):
    if not os.access(BIN, os.X_OK):
        pytest.skip("no genbench binary")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    srun = bindir / "srun"
    srun.write_text(FAKE_SRUN)
    srun.chmod(0o755)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(SLOW)
    ready, launched, out = tmp_path / "ready", tmp_path / "launched", tmp_path / "r.h5"
    env = dict(os.environ, PATH=f"{bindir}:/usr/bin:/bin", GENBENCH_BIN=BIN, GENBENCH_BIND="0",
               GENBENCH_BACKEND="host", SLURM_JOB_ID="7", FAKE_SRUN_READY=str(ready),
               FAKE_SRUN_LAUNCHED=str(launched), FAKE_SRUN_LOAD="3",
               FAKE_SRUN_SLOW_LIST="1" if when == "before the launch" else "")
    step = subprocess.Popen([os.path.join(ROOT, "slurm", "genbench-step"), str(cfg), str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        for _ in range(1000):
            if ready.exists() or step.poll() is not None:
                break
            time.sleep(0.01)
        assert ready.exists(), "genbench-step never reached the fake srun"
        if when == "to the step and the ranks":
            # as scancel does: SIGTERM to the batch shell and to the ranks themselves
            with open(f"/proc/{step.pid}/task/{step.pid}/children") as f:
                ranks = [int(p) for p in f.read().split()]
            assert ranks, "no launcher under genbench-step"
            step.send_signal(signal.SIGTERM)
            for p in ranks:
                os.kill(p, signal.SIGTERM)
        else:
            step.send_signal(signal.SIGUSR1)
        if when == "twice while the ranks start":
            time.sleep(0.3)
            step.send_signal(signal.SIGUSR1)
        _, err = step.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(step.pid, signal.SIGKILL)
        _, err = step.communicate()
        pytest.fail(f"genbench-step did not end within 60 s of the signal:\n{err}")
    finally:
        if step.poll() is None:
            os.killpg(step.pid, signal.SIGKILL)
    if when == "to the step and the ranks":
        # the rank, still loading, is ended by its own signal: the step says what happened
        assert "got SIGTERM while the ranks start" in err, err
        assert step.returncode == 128 + signal.SIGTERM, err
        assert f"ended by signal {int(signal.SIGTERM)} before reaching {out}" in err, err
        assert "Submit the same job again" in err, err
        assert not out.exists(), err
        return
    assert "got SIGUSR1" in err, err
    if when != "before the launch":
        # held back while the rank loads (a second signal too), passed on once the rank has
        # written the file: the run stops early with an interrupted file instead of a rank ended
        # by the signal
        assert f"passed on once they reach {out}" in err, err
        assert ("the stop is already under way" in err) == (when == "twice while the ranks start"), err
        assert step.returncode == 130, err
        with h5py.File(out, "r") as f:
            assert f.attrs["state"] == "interrupted", err
            # stopped before its first point: the benchmark's datasets are made by that point
            done = int(np.sum(f["benchmarks/gemm/points"]["status"] != b"")) if "benchmarks/gemm" in f else 0
        assert done < 10, f"{done} of 10 points\n{err}"
    else:
        # the signal came before the launch: no ranks are started
        assert step.returncode == 130, err
        assert "stopped before the ranks were started" in err, err
        assert not launched.exists(), err
        assert not out.exists(), err


# --- genbench-profile-import ---------------------------------------------------------------------

SMALL = gemm_config("{warmup: 1, min_iterations: 2, max_iterations: 5, min_time: 0.001, max_time: 0.05}",
                    [16, 32, 48], 16)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    if not os.access(BIN, os.X_OK):
        pytest.skip("no genbench binary")
    d = tmp_path_factory.mktemp("profile")
    cfg = d / "small.yaml"
    cfg.write_text(SMALL)
    out = d / "small.h5"
    run([BIN, "run", str(cfg), "-o", str(out), "--backend", "host", "-q"], check=0)
    return cfg, out


def fresh(results, tmp_path):
    cfg, out = results
    copy = tmp_path / "run.h5"
    shutil.copy(out, copy)
    return cfg, copy


IMPORT = [sys.executable, os.path.join(LAUNCH, "genbench-profile-import")]


def test_import_writes_the_profile_table(results, tmp_path):
    cfg, h5 = fresh(results, tmp_path)
    csv = os.path.join(FIXTURES, "ncu-raw.csv")
    run(IMPORT + [str(h5), "--bench", "gemm", "--point", "1", "--csv", csv, "--source-config", str(cfg),
                  "--tool", "ncu 2099.1"], check=0)
    with h5py.File(h5, "r") as f:
        d = f["benchmarks/gemm/profile"]
        t = d[:]
        assert d.attrs["tool"] == "ncu 2099.1" and d.attrs["clock_control"] == "none"
        assert "points" in f["benchmarks/gemm"] and f.attrs["state"] == "complete"  # timings untouched
    assert len(t) == 2 * 7  # two launches, seven metrics
    assert set(t["point"]) == {1} and set(t["rank"]) == {0} and set(t["launch"]) == {0, 1}
    row = {(r["launch"], r["metric"].decode()): r for r in t}
    gemm = row[(0, "dram__bytes_read.sum")]
    assert gemm["value"] == 1073741824.0 and gemm["unit"] == b"byte"  # thousands separators read
    assert gemm["kernel"].startswith(b"void cutlass::Kernel2") and gemm["grid"] == b"(132, 1, 1)"
    assert row[(0, "gpu__time_duration.sum")]["unit"] == b"nsecond"
    assert row[(0, "smsp__inst_issued.sum")]["value"] == 12582912.0
    assert math.isnan(row[(1, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")]["value"])  # n/a


def test_reimport_replaces_only_that_points_rows(results, tmp_path):
    cfg, h5 = fresh(results, tmp_path)
    csv = os.path.join(FIXTURES, "ncu-raw.csv")
    for p in ("0", "2", "2"):
        run(IMPORT + [str(h5), "--bench", "gemm", "--point", p, "--csv", csv], check=0)
    run(IMPORT + [str(h5), "--bench", "gemm", "--point", "2", "--csv", csv, "--rank", "1"], check=0)
    with h5py.File(h5, "r") as f:
        t = f["benchmarks/gemm/profile"][:]
    counts = {(int(p), int(r)): int(np.sum((t["point"] == p) & (t["rank"] == r))) for p, r in zip(t["point"], t["rank"])}
    assert counts == {(0, 0): 14, (2, 0): 14, (2, 1): 14}


@pytest.mark.parametrize("args, message", [
    (["--bench", "attention", "--point", "0"], "no benchmark 'attention' (has: gemm)"),
    (["--bench", "gemm", "--point", "3"], "gemm has 3 points; point 3 does not exist"),
    (["--bench", "gemm", "--point", "-1"], "--point must be >= 0"),
])
def test_import_rejects_points_the_file_does_not_have(results, tmp_path, args, message):
    _, h5 = fresh(results, tmp_path)
    proc = run(IMPORT + [str(h5), "--csv", os.path.join(FIXTURES, "ncu-raw.csv")] + args, check=2)
    assert message in proc.stderr


def test_import_rejects_bad_csv_and_foreign_files(results, tmp_path):
    cfg, h5 = fresh(results, tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("kernel,time\nfoo,1\n")
    proc = run(IMPORT + [str(h5), "--bench", "gemm", "--point", "0", "--csv", str(bad)], check=2)
    assert "not an ncu CSV" in proc.stderr
    short = tmp_path / "short.csv"
    lines = open(os.path.join(FIXTURES, "ncu-raw.csv")).read().splitlines()
    short.write_text("\n".join(lines[:3] + [lines[3][:lines[3].rindex(',"')]]) + "\n")  # one cell fewer
    proc = run(IMPORT + [str(h5), "--bench", "gemm", "--point", "0", "--csv", str(short)], check=2)
    assert "cells, the header has" in proc.stderr
    empty = tmp_path / "empty.csv"
    empty.write_text("\n".join(lines[:3]) + "\n")
    proc = run(IMPORT + [str(h5), "--bench", "gemm", "--point", "0", "--csv", str(empty)], check=2)
    assert "profiled no kernel" in proc.stderr
    other = tmp_path / "other.yaml"
    other.write_text(SMALL.replace("48", "64"))
    proc = run(IMPORT + [str(h5), "--bench", "gemm", "--point", "0", "--csv", os.path.join(FIXTURES, "ncu-raw.csv"),
                         "--source-config", str(other)], check=2)
    assert "made from a different config" in proc.stderr
    text = tmp_path / "text.h5"
    with h5py.File(text, "w") as f:
        f.attrs["format"] = "something-else"
    proc = run(IMPORT + [str(text), "--bench", "gemm", "--point", "0", "--csv", os.path.join(FIXTURES, "ncu-raw.csv")],
               check=2)
    assert "not a genbench result file" in proc.stderr


# --- genbench-profile ----------------------------------------------------------------------------

PROFILE = os.path.join(LAUNCH, "genbench-profile")
try:
    import yaml  # genbench-profile writes its temporary config with PyYAML
except ImportError:
    yaml = None
needs_yaml = pytest.mark.skipif(yaml is None, reason="genbench-profile needs PyYAML (python3-yaml)")


def profile_env(tmp_path):
    return {"GENBENCH_BIN": BIN, "NCU": os.path.join(FIXTURES, "fake-ncu"), "FAKE_NCU_LOG": str(tmp_path / "ncu.log"),
            "GENBENCH_PYTHON": sys.executable, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_rmaps_base_oversubscribe": "1"}


@needs_yaml
@pytest.mark.parametrize("args, message", [
    ([], "give a config"),
    (["missing.yaml", "-o", "x.h5"], "config 'missing.yaml' not found"),
    (["{cfg}"], "give the run's result file with -o"),
    (["{cfg}", "-o", "{tmp}/none.h5"], "does not exist; run the config first"),
    (["{cfg}", "-o", "{h5}", "--points", "1"], "--points needs --bench"),
    (["{cfg}", "-o", "{h5}", "--bench", "gemm", "--points", "1,x"], "--points takes indices and ranges"),
    (["{cfg}", "-o", "{h5}", "--bench", "gemm", "--points", "2-7"], "gemm has 3 points (0-2); '2-7' is outside"),
    (["{cfg}", "-o", "{h5}", "--bench", "gemm", "--points", "2-1"], "empty range '2-1'"),
    (["{cfg}", "-o", "{h5}", "--bench", "attn"], "has no benchmark 'attn' (has: gemm)"),
    (["{cfg}", "-o", "{h5}", "--iterations", "0"], "--iterations must be a positive integer"),
    (["{cfg}", "-o", "{h5}", "--ranks", "x"], "--ranks must be a positive integer"),
    (["{cfg}", "-o", "{h5}", "--metrics", "a b"], "--metrics takes comma-separated"),
    (["{cfg}", "-o", "{h5}", "--frobnicate"], "unknown option '--frobnicate'"),
    (["{cfg}", "{cfg}", "-o", "{h5}"], "one config only"),
    (["{cfg}", "-o"], "-o needs a value"),
])
def test_profile_argument_errors(results, tmp_path, args, message):
    cfg, h5 = fresh(results, tmp_path)
    args = [a.format(cfg=cfg, h5=h5, tmp=tmp_path) for a in args]
    proc = run([PROFILE] + args, env=profile_env(tmp_path), check=2)
    assert message in proc.stderr


def test_profile_without_ncu_says_so(results, tmp_path):
    cfg, h5 = fresh(results, tmp_path)
    env = profile_env(tmp_path)
    env["NCU"] = "/nonexistent/ncu"
    proc = run([PROFILE, str(cfg), "-o", str(h5)], env=env, check=2)
    assert "'/nonexistent/ncu' not found" in proc.stderr


@needs_yaml
def test_profile_runs_each_point_under_ncu_and_imports(results, tmp_path):
    cfg, h5 = fresh(results, tmp_path)
    keep = tmp_path / "keep"
    proc = run([PROFILE, str(cfg), "-o", str(h5), "--bench", "gemm", "--points", "0,2", "--keep", str(keep)],
               env=profile_env(tmp_path), check=0)
    calls = (tmp_path / "ncu.log").read_text().splitlines()
    runs = [c for c in calls if "--clock-control none" in c]
    assert len(runs) == 2, calls
    assert "--nvtx --nvtx-include genbench:gemm\\/0/ " in runs[0] and "genbench:gemm\\/2/" in runs[1]
    assert "--metrics gpu__time_duration.sum,sm__throughput" in runs[0]
    assert "dram__throughput.avg.pct_of_peak_sustained_elapsed" in runs[0]
    assert "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum" in runs[0]
    assert "sm__pipe_tensor_cycles_active" in runs[0] and "lts__throughput" in runs[0]
    assert sum("--import" in c and "--page raw" in c and "--print-units base" in c for c in calls) == 2
    # The temporary config keeps the axes (same point indices) and cuts the timing.
    doc = yaml.safe_load((keep / "profile.yaml").read_text())
    assert doc["benchmarks"][0]["axes"]["m"] == [16, 32, 48]
    assert doc["benchmarks"][0]["timing"]["max_iterations"] == 1
    with h5py.File(keep / "gemm-2-run.h5", "r") as f:  # the profiled run itself ran the config
        assert len(f["benchmarks/gemm/points"]) == 3
    with h5py.File(h5, "r") as f:
        t = f["benchmarks/gemm/profile"][:]
        assert f["benchmarks/gemm/profile"].attrs["tool"] == "ncu 2099.1.0.0"
    assert sorted(set(int(p) for p in t["point"])) == [0, 2]
    assert "2 point(s), 1 rank(s)" in proc.stderr


@needs_yaml
def test_profile_with_two_ranks_imports_one_csv_per_rank(results, tmp_path):
    cfg, out = results
    if shutil.which(MPIEXEC) is None:
        pytest.skip("no mpirun")
    h5 = tmp_path / "two.h5"
    run([MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-np", "2", BIN, "run", str(cfg), "-o", str(h5),
         "--backend", "host", "-q"], check=0)
    env = profile_env(tmp_path)
    env["PATH"] = os.path.dirname(shutil.which(MPIEXEC)) + ":" + os.environ["PATH"]
    run([PROFILE, str(cfg), "-o", str(h5), "--bench", "gemm", "--points", "1", "--ranks", "2"], env=env, check=0)
    with h5py.File(h5, "r") as f:
        t = f["benchmarks/gemm/profile"][:]
    assert sorted(set(int(r) for r in t["rank"])) == [0, 1] and set(int(p) for p in t["point"]) == {1}


@needs_yaml
def test_profile_dry_run_prints_commands(results, tmp_path):
    cfg, h5 = fresh(results, tmp_path)
    env = profile_env(tmp_path)
    env["NCU"] = "ncu-not-installed"
    proc = run([PROFILE, str(cfg), "-o", str(h5), "--dry-run"], env=env, check=0)
    lines = proc.stdout.splitlines()
    assert sum(l.startswith("ncu-not-installed --clock-control none") for l in lines) == 3  # every point
    assert sum("genbench-profile-import" in l for l in lines) == 3
    with h5py.File(h5, "r") as f:
        assert "profile" not in f["benchmarks/gemm"]
