"""analysis/notebooks/compare_generations.ipynb runs headlessly on two genbench files."""

import os

import nbformat
import pytest

nbclient = pytest.importorskip("nbclient", reason="python3-nbclient is needed to run the notebook")

NOTEBOOK = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "notebooks",
                        "compare_generations.ipynb")


def test_notebook_runs(result_files, monkeypatch):
    a, b = result_files
    monkeypatch.setenv("GENBENCH_A", a)
    monkeypatch.setenv("GENBENCH_B", b)
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=180, startup_timeout=180, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.dirname(NOTEBOOK)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    # the ratio plot and five report plots (eager vs graph has no data on the host backend)
    assert len(images) >= 6
    text = "\n".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", "")) for o in outputs)
    assert "Eager against graph mode: skipped" in text
    assert "geomean_ratio" in text
