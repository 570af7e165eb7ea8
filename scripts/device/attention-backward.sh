#!/usr/bin/env bash
# One device call for attention_backward (docs/attention-backward.md): build genbench and
# genbench_tests for sm_90a, the GPU tests (AttentionBackwardGpu.*, Fa2BackwardGpu.*) and the op's
# host tests, then configs/attention-backward.yaml (ROUNDS rounds, default 3) and its torch peer
# (scripts/peers/attention_backward_torch.py) on the same card, and a table of ours, cuDNN and
# torch. BENCH=<glob> narrows the config's benchmarks (genbench run -b), TESTS=0 skips the tests,
# PEER=0 the torch peer, RUN_S the run step's limit (default 300 s). GATE=<gtest filter> runs
# those tests first and, if they fail, leaves GATE_IMPL out of the config's run. Logs and result files go to $OUT.
# Usage: scripts/device/attention-backward.sh   (about 6-9 minutes on an H100 or H200 with 16 cores)
set -uo pipefail
. "$(dirname "$0")/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-580}
device_init results/attention-backward
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader | tee "$OUT/smi.txt"
device_build 300 genbench genbench_tests
cfg=configs/attention-backward.yaml
if [ -n "${GATE:-}" ]; then
  # A new kernel's tests first: if they fail or hang, GATE_IMPL leaves the config's run (a hung
  # kernel would stop the whole run at the watchdog).
  step gate 100 gate.txt "$B/tests/genbench_tests" --gtest_filter="$GATE"
  grep -E "^\[ +(FAILED|PASSED|OK|SKIPPED) |Failure|Expected|Which is|error|backward:" "$OUT/gate.txt" | cut -c1-260 | head -60
  if ! grep -q "^\[  PASSED  \]" "$OUT/gate.txt" || grep -q "^\[  FAILED  \]" "$OUT/gate.txt"; then
    cfg=$OUT/attention-backward.yaml
    sed -E "s/, ${GATE_IMPL:-none}([],])/\1/" configs/attention-backward.yaml >"$cfg"
    echo "== gate failed: ${GATE_IMPL:-none} left out of the run"
  fi
fi
if [ "${TESTS:-1}" != 0 ]; then
  step tests 150 tests.txt "$B/tests/genbench_tests" --gtest_filter="${FILTER:-AttentionBackward*:Fa2Backward*}"
  grep -E "^\[ +(FAILED|PASSED|OK|SKIPPED) |Failure|Expected|Which is|unsupported|error" "$OUT/tests.txt" | cut -c1-260 | head -80
fi
sel=()
[ -n "${BENCH:-}" ] && sel=(-b "$BENCH")
step run "${RUN_S:-300}" run.txt "$B/bin/genbench" run "$cfg" "${sel[@]}" --rounds "${ROUNDS:-3}" -o "$OUT/attention-backward.h5" --force
grep -E "FAILED|failed|error" "$OUT/run.txt" | head -10
if [ "${PEER:-1}" != 0 ]; then
  step torch 200 torch.txt python3 scripts/peers/attention_backward_torch.py
  grep -c "^CSV" "$OUT/torch.txt"; grep "^#" "$OUT/torch.txt" | head -5
fi
step table 60 table.txt env PYTHONPATH=analysis python3 - "$OUT/attention-backward.h5" "$OUT/torch.txt" <<'PY'
import os
import sys
import genbench_analysis as ga
import pandas as pd
r = ga.load(sys.argv[1])
rows = []
for name in r.benchmarks:
    t = r.table(name)
    for key, d in t.groupby(["impl", "dtype", "effective_batch", "effective_heads", "effective_heads_kv",
                             "seqlen_q", "seqlen_k", "head_dim", "causal", "varlen", "mode", "deterministic"]):
        impl, dt, b, h, hk, sq, sk, hd, c, vl, mode, det = key
        ok = d[d["status"] == "ok"]
        rows.append(dict(bench=name, impl=impl, dtype=dt, b=int(b), h=int(h), hk=int(hk), sq=int(sq), d=int(hd),
                         causal=int(c), varlen=int(vl), mode=mode, det=int(det),
                         tflops=ok["tflops"].median() if len(ok) else float("nan"),
                         lo=ok["tflops"].min() if len(ok) else float("nan"),
                         status=",".join(sorted(set(d["status"])))))
t = pd.DataFrame(rows)
pd.set_option("display.width", 250)
pd.set_option("display.max_rows", 400)
keys = ["bench", "dtype", "b", "h", "hk", "sq", "d", "causal", "varlen", "mode", "det"]
w = t.pivot_table(index=keys, columns="impl", values="tflops").reset_index()
if os.path.exists(sys.argv[2]):
    peer = {}
    for line in open(sys.argv[2]):
        if line.startswith("CSV,"):
            _, be, dt, b, h, hk, s, d, c, sec, tf = line.strip().split(",")
            peer[(be, dt, int(b), int(h), int(hk), int(s), int(d), int(c))] = float(tf)
    for be in ("torch-flash", "torch-cudnn"):
        w[be] = [peer.get((be, x.dtype, x.b, x.h, x.hk, x.sq, x.d, x.causal)) if not x.varlen and x.mode == "eager" else None
                 for x in w.itertuples()]
for ours in ("fa2", "fa3"):
    if ours in w and "cudnn" in w:
        w[ours + "/cudnn"] = w[ours] / w["cudnn"]
print(w.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
bad = t[~t["status"].isin(["ok", "unsupported"])]
if len(bad):
    print("\nnot ok:\n" + bad.to_string(index=False))
PY
cat "$OUT/table.txt"
echo "== done at $(( $(date +%s) - t0 ))s"
