#!/usr/bin/env bash
# One device call for the whole layer (docs/models.md, "The composed layer" and "The real-layer
# check"): build genbench for sm_90a (unless BUILT=1: scripts/device/pointwise.sh built it), run
# configs/layer.yaml (one Llama-3-8B layer in one CUDA graph, ours and vendor, its parts also
# timed alone), the model suite configs/models/$MODEL.yaml (default llama3-8b-tp1-decode) and
# genbench_analysis model of it, and the same layer in PyTorch (scripts/peers/llama_layer_torch.py);
# then a table of the three side by side. Logs and result files go to $OUT.
set -uo pipefail
. "$(dirname "$0")/common.sh"
DEVICE_BUDGET_S=${DEVICE_BUDGET_S:-560}
MODEL=${MODEL:-llama3-8b-tp1-decode}
device_init results/layer
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader | tee "$OUT/smi.txt"
if [ "${BUILT:-0}" != 1 ]; then
  device_build 300 genbench genbench_tests
fi
if [ ! -x "$B/bin/genbench" ]; then tail -30 "$OUT/build.txt"; exit 1; fi
step layer 240 layer.txt "$B/bin/genbench" run configs/layer.yaml -o "$OUT/layer.h5" --force
grep -E "^\[|error|failed" "$OUT/layer.txt" | cut -c1-220 | head -50
step torch 150 torch.txt python3 scripts/peers/llama_layer_torch.py 8b
grep -E "^(CSV|torch )|Error|error" "$OUT/torch.txt" | head -20
step suite 200 suite.txt "$B/bin/genbench" run "configs/models/$MODEL.yaml" -o "$OUT/$MODEL.h5" --force
tail -3 "$OUT/suite.txt"
step compose 60 compose.txt env PYTHONPATH=analysis python3 -m genbench_analysis model "$OUT/$MODEL.h5" --plot "$OUT/$MODEL.png" --parts "$OUT/$MODEL-parts.csv"
cut -c1-250 "$OUT/compose.txt" | head -40
step table 60 table.txt env PYTHONPATH=analysis python3 - "$OUT/layer.h5" "$OUT/torch.txt" "$OUT/$MODEL.h5" <<'PY'
import sys
import genbench_analysis as ga
from genbench_analysis.model import compose
import pandas as pd
torch = {}
for line in open(sys.argv[2]):
    if line.startswith("CSV,torch_layer,"):
        f = line.strip().split(",")
        torch[(f[3], int(f[4]), int(f[5]))] = float(f[6])
r = ga.load(sys.argv[1])
rows = []
for name in r.benchmarks:
    t = r.table(name)
    for _, p in t.iterrows():
        key = (p["phase"], int(p["batch"]), int(p["cache"] if p["phase"] == "decode" else p["seq"]))
        rows.append(dict(phase=key[0], batch=key[1], cache_or_seq=key[2], precision=p["precision"], impl=p["impl"],
                         status=p["status"], variant=p.get("variant", ""), layer_ms=p["time_median_s"] * 1e3,
                         alone_ms=p["parts_alone_s"] * 1e3, torch_ms=torch.get(key, float("nan")) * 1e3))
d = pd.DataFrame(rows)
d["layer/torch"] = d["layer_ms"] / d["torch_ms"]
d["alone/torch"] = d["alone_ms"] / d["torch_ms"]
try:
    comp = compose(ga.load(sys.argv[3]))
    lay = comp.layers[comp.layers["precision"] == "bf16"][["batch", "cache", "layer_s"]].copy()
    lay["suite_ms"] = lay["layer_s"] * 1e3
    lay = lay.assign(batch=lay["batch"].astype(int), cache_or_seq=lay["cache"].astype(int))
    d = d.merge(lay[["batch", "cache_or_seq", "suite_ms"]], on=["batch", "cache_or_seq"], how="left")
    d["suite/torch"] = d["suite_ms"] / d["torch_ms"]
except Exception as e:
    print("suite not composed:", e)
pd.set_option("display.width", 250)
print(d.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
PY
cat "$OUT/table.txt"
echo "== done at $(( $(date +%s) - t0 ))s"
