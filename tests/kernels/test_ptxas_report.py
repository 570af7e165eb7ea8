"""The report parser of ptxas_report.py on ptxas's own line formats (nvcc 13.0): a clean report
passes; a serialized wgmma pipeline, a spill and a stack frame each fail."""
import importlib.util
import pathlib

spec = importlib.util.spec_from_file_location("ptxas_report", pathlib.Path(__file__).with_name("ptxas_report.py"))
ptxas_report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ptxas_report)

CLEAN = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90a'
ptxas info    : Function properties for _Z3fooPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 16 barriers
ptxas info    : Compiling entry function '_Z3barPf' for 'sm_90a'
ptxas info    : Function properties for _Z3barPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 0 barriers
"""


def test_clean_report_passes():
    findings, checked = ptxas_report.check(CLEAN)
    assert findings == []
    assert checked == 2


def test_serialized_wgmma_fails():
    log = CLEAN.replace(
        "ptxas info    : 0 bytes gmem",
        "ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
        "insufficient register resources for the wgmma pipeline in the function '_Z3fooPf'",
    )
    findings, _ = ptxas_report.check(log)
    assert len(findings) == 1 and "C7511" in findings[0]


def test_spill_and_stack_frame_fail_and_name_the_function():
    log = CLEAN.replace("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
                        "16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads", 1)
    findings, checked = ptxas_report.check(log)
    assert checked == 2
    assert findings == ["_Z3fooPf (sm_90a): 16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads"]


def test_report_without_functions_checks_nothing():
    assert ptxas_report.check("ptxas info    : 0 bytes gmem\n") == ([], 0)
