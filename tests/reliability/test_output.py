"""Promises 7 and 10: output problems and foreign files are clear errors that damage nothing.
Unwritable output, a full disk, an existing file without --force, --resume against another
config or world size; files from a future schema version, truncated files, other tools' HDF5
files and non-HDF5 files are refused by `genbench export` and `genbench run --resume`."""
import os
import shutil
import subprocess
import uuid

import h5py
import numpy as np
import pytest

from conftest import check_consistent, genbench, point_set, sha, write
from configs import SMALL


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """One complete result file of SMALL (2 ranks), and its config."""
    d = tmp_path_factory.mktemp("made")
    cfg = write(d / "small.yaml", SMALL)
    out = str(d / "ok.h5")
    genbench("run", cfg, "-o", out, "--backend", "host", "-q", ranks=2, check=True)
    return cfg, out


def run(cfg, out, *extra, ranks=2):
    proc, _ = genbench("run", cfg, "-o", out, "--backend", "host", "-q", *extra, ranks=ranks)
    return proc


def test_output_folder_missing(made, tmp_path):
    cfg, _ = made
    proc = run(cfg, str(tmp_path / "no" / "such" / "dir" / "r.h5"))
    assert proc.returncode == 2 and "cannot create result file" in proc.stderr, proc.stderr


def test_output_parent_is_a_file(made, tmp_path):
    cfg, _ = made
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    proc = run(cfg, str(blocker / "r.h5"))
    assert proc.returncode == 2 and "cannot create result file" in proc.stderr
    assert blocker.read_text() == "x"


def _mount_tmpfs(path, opts):
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(path)], capture_output=True, timeout=30)
    return r.returncode == 0


@pytest.fixture
def small_fs(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    # 250 KB: room for the file as its benchmark's datasets are created (about 80 KB, copied
    # once), not for its samples (about 16 KB per point on disk)
    if not _mount_tmpfs(mnt, "size=250k"):
        pytest.skip("cannot mount a small tmpfs here (needs root and mount permission); full-disk test skipped")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], timeout=30)


def test_read_only_folder(made, tmp_path):
    cfg, _ = made
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if not _mount_tmpfs(mnt, "size=64k,ro"):
        pytest.skip("cannot mount a read-only tmpfs here")
    try:
        proc = run(cfg, str(mnt / "r.h5"))
        assert proc.returncode == 2 and "cannot create result file" in proc.stderr, proc.stderr
    finally:
        subprocess.run(["umount", "-l", str(mnt)], timeout=30)


def test_disk_full_is_a_clear_error_and_keeps_every_file(small_fs, tmp_path):
    precious = small_fs / "precious.txt"
    precious.write_bytes(os.urandom(10_000))
    before = sha(precious)
    # many points with many samples: the file outgrows 250 KB within the sweep
    cfg = write(tmp_path / "grow.yaml", """benchmarks:
  - name: c
    op: collective
    implementations: [mpi]
    axes: {collective: [all_reduce, broadcast], bytes: {from: 8, to: 64K, factor: 2}}
    timing: {warmup: 0, min_iterations: 600, max_iterations: 600, min_time: 0, max_time: 5}
""")
    out = str(small_fs / "r.h5")
    proc = run(cfg, out)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert "disk full" in proc.stderr or "No space left" in proc.stderr, proc.stderr
    assert sha(precious) == before
    # the result file holds every point written before the disk filled, and resumes elsewhere
    assert check_consistent(out) == "running"
    done = point_set(out)
    assert 0 < len(done) < 2 * 14
    assert not [f for f in os.listdir(small_fs) if ".tmp" in f]
    moved = str(tmp_path / "moved.h5")
    shutil.copy(out, moved)
    assert run(cfg, moved, "--resume").returncode == 0
    assert len(point_set(moved)) == 2 * 14


def test_existing_result_file_needs_force(made, tmp_path):
    cfg, ok = made
    out = str(tmp_path / "keep.h5")
    shutil.copy(ok, out)
    before = sha(out)
    proc = run(cfg, out)
    assert proc.returncode == 2 and "already exists" in proc.stderr and "--force" in proc.stderr
    assert sha(out) == before
    assert run(cfg, out, "--force").returncode == 0


def test_resume_refuses_another_config_and_world_size(made, tmp_path):
    cfg, ok = made
    out = str(tmp_path / "r.h5")
    shutil.copy(ok, out)
    before = sha(out)
    other = write(tmp_path / "other.yaml", SMALL.replace("n: 16", "n: 24"))
    proc = run(other, out, "--resume")
    assert proc.returncode == 2 and "different config" in proc.stderr, proc.stderr
    proc = run(cfg, out, "--resume", ranks=3)
    assert proc.returncode == 2 and "2 ranks" in proc.stderr, proc.stderr
    proc = run(cfg, out, "--resume", "--force")
    assert proc.returncode == 2
    assert sha(out) == before
    assert not [f for f in os.listdir(tmp_path) if ".tmp" in f]


def _future(src, dst):
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        f.attrs["schema_version"] = np.int64(99)


def _truncated(src, dst, frac):
    data = open(src, "rb").read()
    open(dst, "wb").write(data[: int(len(data) * frac)])


def _other_tool(src, dst):
    with h5py.File(dst, "w") as f:
        f.attrs["format"] = "someone-elses-results"
        f["benchmarks/x"] = np.arange(4)


def _no_format(src, dst):
    with h5py.File(dst, "w") as f:
        f["x"] = np.arange(3)


def _text(src, dst):
    open(dst, "w").write("genbench-results\n")


def _empty(src, dst):
    open(dst, "wb").close()


FOREIGN = {
    "future_schema": (_future, "schema version 99"),
    "truncated_half": (lambda s, d: _truncated(s, d, 0.5), "truncated"),
    "truncated_header": (lambda s, d: _truncated(s, d, 0.01), "truncated"),
    "other_tool": (_other_tool, "not a genbench result file"),
    "plain_hdf5": (_no_format, "not a genbench result file"),
    "text": (_text, "not an HDF5 file"),
    "empty": (_empty, "not an HDF5 file"),
}


@pytest.mark.parametrize("kind", sorted(FOREIGN))
@pytest.mark.parametrize("command", ["export-csv", "export-json", "resume"])
def test_foreign_files_are_refused(made, tmp_path, kind, command):
    cfg, ok = made
    make, message = FOREIGN[kind]
    path = str(tmp_path / f"{kind}.h5")
    make(ok, path)
    before = sha(path)
    if command == "resume":
        proc = run(cfg, path, "--resume", ranks=None)
    elif command == "export-csv":
        proc, _ = genbench("export", path, "--csv", "-o", str(tmp_path / "csv"))
    else:
        proc, _ = genbench("export", path, "--json", "-o", str(tmp_path / "out.json"))
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert message in proc.stderr and path in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") <= 2, "one clear message"
    assert sha(path) == before
