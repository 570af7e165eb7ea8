"""Files the loader must refuse, each with its own exception type and a clear message."""

import shutil

import h5py
import numpy as np
import pytest

import genbench_analysis as ga
from genbench_analysis.__main__ import main


def test_future_schema_version(file_a, tmp_path):
    path = tmp_path / "future.h5"
    shutil.copy(file_a, path)
    with h5py.File(path, "r+") as f:
        f.attrs["schema_version"] = np.int64(3)
    with pytest.raises(ga.SchemaVersionError, match=r"schema version 3.*reads versions 1 and 2"):
        ga.load(path)


def test_other_tools_file(tmp_path):
    path = tmp_path / "other.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=np.arange(10))
        f.attrs["creator"] = "someone else"
    with pytest.raises(ga.NotGenbenchFileError, match="no 'format' attribute"):
        ga.load(path)


def test_wrong_format_attribute(tmp_path):
    path = tmp_path / "wrong.h5"
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "nvbench"
        f.attrs["schema_version"] = 1
    with pytest.raises(ga.NotGenbenchFileError, match="format='nvbench'"):
        ga.load(path)


def test_truncated_file(file_a, tmp_path):
    data = open(file_a, "rb").read()
    path = tmp_path / "truncated.h5"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ga.NotHDF5Error, match="damaged or truncated"):
        ga.load(path)


def test_plain_text_file(tmp_path):
    path = tmp_path / "notes.h5"
    path.write_text("not HDF5 at all\n")
    with pytest.raises(ga.NotHDF5Error, match="not an HDF5 file"):
        ga.load(path)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.h5"
    path.write_bytes(b"")
    with pytest.raises(ga.NotHDF5Error):
        ga.load(path)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        ga.load(tmp_path / "nope.h5")


def test_errors_share_a_base_class():
    for e in (ga.NotHDF5Error, ga.NotGenbenchFileError, ga.SchemaVersionError):
        assert issubclass(e, ga.ResultFileError)


def test_cli_reports_bad_file(tmp_path, capsys):
    path = tmp_path / "notes.h5"
    path.write_text("text\n")
    assert main(["report", str(path), "-o", str(tmp_path / "out")]) == 2
    assert "not an HDF5 file" in capsys.readouterr().err
    assert not (tmp_path / "out" / "report.md").exists()
