#!/usr/bin/env bash
# Builds genbench and measures compute-communication overlap on a machine with two GPUs
# (issue 9): the overlap GPU and host tests on 2 ranks, the refactored gemm/cublaslt and
# collective/nccl GPU tests, then configs/overlap.yaml on 2 ranks and a table of its overlap
# efficiency against nccl_ctas, chunks and priority.
# Usage: OUT=<folder> scripts/measure-overlap.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/overlap}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
B=${BUILD:-build-dev}
log=$OUT/log.txt
t0=$(date +%s)
stamp() { echo "== $1 ($(( $(date +%s) - t0 )) s)" | tee -a "$log"; }
stamp build
GENBENCH_CUDA_ARCHS=${GENBENCH_CUDA_ARCHS:-90a} GENBENCH_JOBS=${GENBENCH_JOBS:-16} scripts/build.sh "$B" >"$OUT/build.txt" 2>&1 \
  || { tail -40 "$OUT/build.txt"; exit 1; }
grep -i "warning" "$OUT/build.txt" | head -5
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv | tee -a "$log"
git log -1 --format='commit %h %cd' 2>/dev/null | tee -a "$log"

stamp "gpu unit tests (cublaslt after the lt_matmul refactor)"
timeout 300 "$B/tests/genbench_tests" --gtest_filter='CublasLt*:Nccl*:DeviceType*:OverlapConfig*:TimingConfig*' >"$OUT/gtests.txt" 2>&1
echo "rc=$?"; grep -E "^\[ +(PASSED|FAILED|SKIPPED) +\]|Failure" "$OUT/gtests.txt" | head -20
stamp "mpi tests np=2 (overlap cuda + host, nccl after the nccl_ops refactor)"
timeout 300 mpirun --allow-run-as-root -np 2 -x NCCL_NVLS_ENABLE=0 "$B/tests/genbench_mpi_tests" \
  --gtest_filter='Overlap*:NcclMpi*' >"$OUT/mpi2.txt" 2>&1
echo "rc=$?"; grep -E "^\[ +(OK|PASSED|FAILED|SKIPPED) +\]|Failure|Expected|Which is|actual" "$OUT/mpi2.txt" | head -30

stamp "overlap run"
timeout 540 mpirun --allow-run-as-root -np 2 -x NCCL_NVLS_ENABLE=0 "$B/bin/genbench" run configs/overlap.yaml \
  -o "$OUT/overlap.h5" --force >"$OUT/overlap.txt" 2>&1
echo "rc=$?"; grep -E "^ceilings" "$OUT/overlap.txt"; sed -n '/^Summary/,$p' "$OUT/overlap.txt" | tail -3
grep -E "failed|unsupported|skipped" "$OUT/overlap.txt" | grep -v "^Summary" | head -10

stamp table
python3 - "$OUT/overlap.h5" <<'PY' 2>&1 | tee -a "$log"
import sys
import h5py
import numpy as np

f = h5py.File(sys.argv[1], "r")
if "ceilings" in f:
    c = f["ceilings"][()]
    print("ceilings:", ", ".join(f"r{r['rank']} {r['name'].decode()}={r['value']:.4g} {r['unit'].decode()}" for r in c))
for name in f["benchmarks"]:
    p = f["benchmarks"][name]["points"][()]
    print(f"\n{name}")
    print(f"{'coll':>14} {'bytes':>6} {'m':>5} {'ctas':>4} {'ch':>2} {'prio':>12} {'gemm ms':>8} {'comm ms':>8} "
          f"{'both ms':>8} {'eff':>6} {'c.slow':>6} {'m.slow':>6}  status")
    for r in p:
        st = r["status"].decode()
        print(f"{r['collective'].decode():>14} {r['bytes'] / 2**20:5.0f}M {r['m']:5d} {r['nccl_ctas']:4d} {r['chunks']:2d} "
              f"{r['priority'].decode():>12} {1e3 * r['t_compute_s']:8.3f} {1e3 * r['t_comm_s']:8.3f} "
              f"{1e3 * r['t_both_s']:8.3f} {r['overlap_efficiency']:6.3f} {r['compute_slowdown']:6.3f} "
              f"{r['comm_slowdown']:6.3f}  {st}{'' if st == 'ok' else ': ' + r['reason'].decode()[:80]}")
PY
stamp done
