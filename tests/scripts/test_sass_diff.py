"""scripts/sass-diff.py: its name normalisation (nvcc's module-id hashes), the PTX files it finds
in an nvcc --keep folder, and, where nvcc is installed, a whole comparison of one translation
unit compiled from two source trees."""
import importlib.util
import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("sass_diff", ROOT / "scripts" / "sass-diff.py")
sass_diff = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sass_diff)

# Names as nvcc 13 writes them: the same static __noinline__ function and anonymous-namespace
# kernel of tiny_two.cu compiled from two folders (the first hash follows the path) and after an
# edit (the second follows the contents).
NOINLINE_A = "_ZN42_INTERNAL_c8ebf8e9_11_tiny_two_cu_9ed0fa5f7shelperEf"
NOINLINE_B = "_ZN42_INTERNAL_d40fb03e_11_tiny_two_cu_5be1a0c37shelperEf"
ANON_A = "_ZN8genbench5w4a1644_GLOBAL__N__c8ebf8e9_11_tiny_two_cu_9ed0fa5f2k2ILi3EEEvPf"
ANON_B = "_ZN8genbench5w4a1644_GLOBAL__N__d40fb03e_11_tiny_two_cu_5be1a0c32k2ILi3EEEvPf"
# A module id whose tail is a symbol name, in both name kinds at once.
NESTED_A = "_ZN35_INTERNAL_01dc7fbe_7_tiny_cu__Z1kPf37_GLOBAL__N__01dc7fbe_7_tiny_cu__Z1kPf6helperEf"
NESTED_B = "_ZN35_INTERNAL_9a3e0c11_7_tiny_cu__Z1kPf37_GLOBAL__N__9a3e0c11_7_tiny_cu__Z1kPf6helperEf"


def test_module_hashes_are_normalised():
    assert NOINLINE_A != NOINLINE_B and sass_diff.norm_name(NOINLINE_A) == sass_diff.norm_name(NOINLINE_B)
    assert sass_diff.norm_name(ANON_A) == sass_diff.norm_name(ANON_B)
    assert sass_diff.norm_name(NESTED_A) == sass_diff.norm_name(NESTED_B)
    assert "c8ebf8e9" not in sass_diff.norm_name(NOINLINE_A) and "9ed0fa5f" not in sass_diff.norm_name(NOINLINE_A)


def test_different_functions_stay_different():
    n = sass_diff.norm_name
    assert n(NOINLINE_A) != n(NOINLINE_A.replace("7shelperEf", "7thelperEf"))
    assert n(ANON_A) != n(ANON_A.replace("ILi3EE", "ILi4EE"))
    # the same function name in another file
    assert n(NOINLINE_A) != n("_ZN42_INTERNAL_c8ebf8e9_11_tiny_one_cu_9ed0fa5f7shelperEf")
    # a symbol-name tail is part of the name, not a hash
    assert n(NESTED_A) != n(NESTED_A.replace("_Z1kPf", "_Z1jPf"))
    assert n("_Z7ghelperf") == "_Z7ghelperf"


def touch(folder, *names):
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text("")


def test_kept_files_one_architecture(tmp_path):
    touch(tmp_path, "w4a16_mma.sm_90a.cubin", "w4a16_mma.ptx")
    cubins, ptx = sass_diff.kept_files(str(tmp_path))
    assert cubins == {"sm_90a": str(tmp_path / "w4a16_mma.sm_90a.cubin")}
    assert ptx == {"sm_90a": str(tmp_path / "w4a16_mma.ptx")}


def test_kept_files_one_virtual_architecture_two_cubins(tmp_path):
    touch(tmp_path, "k.sm_80.cubin", "k.sm_86.cubin", "k.ptx")
    cubins, ptx = sass_diff.kept_files(str(tmp_path))
    assert sorted(cubins) == ["sm_80", "sm_86"]
    assert ptx == {"sm_80": str(tmp_path / "k.ptx"), "sm_86": str(tmp_path / "k.ptx")}


def test_kept_files_several_architectures(tmp_path):
    touch(tmp_path, "k.compute_80.sm_80.cubin", "k.compute_90a.sm_90a.cubin", "k.compute_80.ptx",
          "k.compute_90a.ptx")
    cubins, ptx = sass_diff.kept_files(str(tmp_path))
    assert cubins == {"sm_80": str(tmp_path / "k.compute_80.sm_80.cubin"),
                      "sm_90a": str(tmp_path / "k.compute_90a.sm_90a.cubin")}
    assert ptx == {"sm_80": str(tmp_path / "k.compute_80.ptx"), "sm_90a": str(tmp_path / "k.compute_90a.ptx")}


def test_kept_files_ambiguous_ptx_is_an_error(tmp_path, capsys):
    touch(tmp_path, "k.compute_80.sm_80.cubin", "k.compute_80.ptx", "k.ptx")
    with pytest.raises(SystemExit) as e:
        sass_diff.kept_files(str(tmp_path))
    assert e.value.code == 2
    assert "k.ptx" in capsys.readouterr().err


# ptxas -v as nvcc 13 prints it for a kernel that calls a __noinline__ function: the function's
# properties follow the kernel's registers line.
PTXAS_LOG = f"""ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '{ANON_A}' for 'sm_90a'
ptxas info    : Function properties for {ANON_A}
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 2.554 ms
ptxas info    : Function properties for {NOINLINE_A}
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90a'
ptxas info    : Function properties for _Z1kPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
"""


def test_ptxas_report_keeps_a_called_function_apart():
    n = sass_diff.norm_name
    r = sass_diff.ptxas_report(PTXAS_LOG)
    assert r[("sm_90a", n(ANON_A))] == {"regs": 8, "stack": 0, "spill_st": 0, "spill_ld": 0}
    assert r[("sm_90a", n(NOINLINE_A))] == {"stack": 16, "spill_st": 8, "spill_ld": 4}
    assert r[("sm_90a", "_Z1kPf")] == {"regs": 10, "stack": 0, "spill_st": 0, "spill_ld": 0}
    # the same log from another path of the file reads the same
    other = PTXAS_LOG.replace("c8ebf8e9", "d40fb03e").replace("9ed0fa5f", "5be1a0c3")
    assert other != PTXAS_LOG and sass_diff.ptxas_report(other) == r


# The shape of nvcc 13's PTX for a kernel with a __shared__ local (declared inside the entry) and a
# function defined after it.
PTX = f""".version 9.0
.target sm_90a
.address_size 64

.entry {ANON_A}(
\t.param .u64 {ANON_A}_param_0
)
{{
\t.reg .b32 \t%r<3>;
\t.loc\t1 511 0
\t// demoted variable
\t.shared .align 4 .u32 _ZZ{ANON_A}E6s_last;
\tmov.u32 \t%r1, %tid.x;
\tst.shared.u32 \t[_ZZ{ANON_A}E6s_last], %r1;
\tret;

}}
.func  (.param .b32 func_retval0) {NOINLINE_A}(
\t.param .b32 {NOINLINE_A}_param_0
)
{{
\tret;
}}
"""


def test_ptx_entry_runs_past_its_shared_declaration(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(PTX)
    k = sass_diff.ptx_kernels(str(path))
    assert list(k) == [sass_diff.norm_name(ANON_A)]
    body = k[sass_diff.norm_name(ANON_A)]
    assert any(x.startswith("mov.u32") for x in body) and any(x.startswith("st.shared.u32") for x in body)
    assert body[-2:] == ["ret;", "}"]  # and the function after it is not part of it
    assert sass_diff.ptx_kernels(str(path), True)[sass_diff.norm_name(ANON_A)][-3] == \
        f"st.shared.u32 \t[_ZZ{sass_diff.norm_name(ANON_A)}E6s_last], %r1;"


# ---------------------------------------------------------------------------- with nvcc

NVCC = shutil.which("nvcc") or next((p for p in ("/usr/local/cuda/bin/nvcc",) if os.access(p, os.X_OK)), None)

# A kernel calling an anonymous-namespace __noinline__ function (called in the kernel's PTX by
# its name, which holds the module id).
SOURCE = """
namespace {
__device__ __noinline__ float helper(float x) { return x * 2.0f + 1.0f; }
}
__global__ void scale(float* p) { p[threadIdx.x] = helper(p[threadIdx.x]) * FACTOR; }
"""


def build(src_root, tree, work, factor):
    """Compiles k/unit.cu of `tree` as sass-diff does, from an entry of src_root's build."""
    (tree / "k").mkdir(parents=True, exist_ok=True)
    (tree / "k" / "unit.cu").write_text(SOURCE.replace("FACTOR", factor))
    (src_root / "build").mkdir(parents=True, exist_ok=True)
    entry = {"directory": str(src_root / "build"), "file": str(src_root / "k" / "unit.cu"),
             "arguments": [NVCC, "-O2", "--generate-code=arch=compute_90a,code=[compute_90a,sm_90a]", "-c",
                           str(src_root / "k" / "unit.cu"), "-o", "unit.o"]}
    return sass_diff.build_tree([entry], str(src_root), str(tree), str(work))


@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
def test_same_source_from_two_trees_is_identical(tmp_path, capsys):
    base, new = tmp_path.resolve() / "base", tmp_path.resolve() / "new"
    rn = build(new, new, tmp_path / "out-new", "2.0f")
    rb = build(new, base, tmp_path / "out-base", "2.0f")
    pb, pn = rb["k/unit.cu"]["ptx"], rn["k/unit.cu"]["ptx"]
    assert pb.keys() == {"sm_90a"} and pn.keys() == {"sm_90a"}
    # the helper's name in the PTX differs (the module id follows the path); normalised it does not
    tb, tn = pathlib.Path(pb["sm_90a"]).read_text(), pathlib.Path(pn["sm_90a"]).read_text()
    assert "_INTERNAL_" in tb and tb != tn
    kb, kn = sass_diff.ptx_kernels(pb["sm_90a"], True), sass_diff.ptx_kernels(pn["sm_90a"], True)
    assert list(kb) == ["_Z5scalePf"] and any(x.startswith("call") for x in kb["_Z5scalePf"])
    assert any("_INTERNAL_" in x and "helperEf" in x for x in kb["_Z5scalePf"])
    assert kb == kn
    assert sass_diff.compare(rb, rn, None, 40, True, True) == 0
    out = capsys.readouterr().out
    assert "sm_90a: 1 kernels compared, 1 identical, 0 differ" in out
    assert "only in" not in out and "one side only" not in out


@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
def test_changed_kernel_shows_its_ptx(tmp_path, capsys):
    base, new = tmp_path.resolve() / "base", tmp_path.resolve() / "new"
    rn = build(new, new, tmp_path / "out-new", "5.0f")
    rb = build(new, base, tmp_path / "out-base", "3.0f")
    assert sass_diff.compare(rb, rn, None, 40, True) == 1
    out = capsys.readouterr().out
    assert "sm_90a: 1 kernels compared, 0 identical, 1 differ" in out
    # the PTX diff holds the changed constant and not the helper's call (same after normalising)
    assert "-mul.f32 \t%f, %f, 0f40400000;" in out and "+mul.f32 \t%f, %f, 0f40A00000;" in out
    assert "helper" not in out.split("PTX: ")[1]
