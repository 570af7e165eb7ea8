#!/usr/bin/env bash
# One call: cuBLASLt against torch in the same call (torch before and after, to bracket
# drift), compute-sanitizer racecheck on our attention kernels, and the Nsight Compute wrapper
# on two points. Logs and files in $OUT.
set -uo pipefail
. "$(dirname "$0")/common.sh"
device_init results/device-final
t0=$(date +%s)
at() { echo "== $1 at $(( $(date +%s) - t0 ))s"; }
at build
GENBENCH_CUDA_ARCHS=90a GENBENCH_JOBS=16 scripts/build.sh $B >"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
at torch-1
timeout 60 python3 scripts/peers/gemm_torch.py 4096 8192 2>&1 | tee "$OUT/torch1.txt"
at cublaslt
timeout 120 $B/bin/genbench run configs/gemm.yaml -o "$OUT/gemm.h5" --force >"$OUT/gemm.txt" 2>&1; echo rc=$?
sed -n '/^Summary/,$p' "$OUT/gemm.txt" | cut -c1-120
at torch-2
timeout 60 python3 scripts/peers/gemm_torch.py 4096 8192 2>&1 | tee "$OUT/torch2.txt"
at racecheck
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/genbench_tests \
  --gtest_filter='Fa3Gpu.UnequalLengths:AttentionGpu.VarlenPackedBatches' >"$OUT/racecheck.txt" 2>&1; echo rc=$?
tail -4 "$OUT/racecheck.txt"
at profile
timeout 60 $B/bin/genbench run configs/profile-check.yaml -o "$OUT/prof.h5" --force >"$OUT/prof-run.txt" 2>&1; echo run rc=$?
GENBENCH_BIN=$B/bin/genbench timeout 150 launch/genbench-profile configs/profile-check.yaml -o "$OUT/prof.h5" \
  --keep "$OUT/ncu" >"$OUT/profile.txt" 2>&1; echo profile rc=$?
tail -15 "$OUT/profile.txt"
python3 - "$OUT/prof.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
for b in f["benchmarks"]:
    g = f["benchmarks"][b]
    if "profile" in g:
        p = g["profile"][()]
        print(b, "profile rows:", len(p), "fields:", p.dtype.names)
        for r in p[:12]:
            print("  ", *[(x.decode() if isinstance(x, bytes) else x) for x in r])
    else:
        print(b, "no profile table")
PY
at done
