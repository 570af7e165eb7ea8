"""Joins the CSV lines of w4a16_check and torch_peers.py into the table docs/int4-gemm.md
quotes: per shape, our fused kernel and the dequantise path against fp16 cuBLASLt (fp16) and
torch's int4 kernel (bf16); medians of 3 rounds each, all from one device call."""
import sys


def kv(fields):
    out = {}
    for f in fields:
        if "=" in f:
            k, v = f.split("=", 1)
            out[k] = v
    return out


ours, torch_t, other = {}, {}, []
for path in sys.argv[1:]:
    for line in open(path, errors="replace"):
        if not line.startswith("CSV,"):
            continue
        f = line.strip().split(",")
        if f[1] == "w4a16":
            key = (f[2], f[3], int(f[4]), int(f[5]), int(f[6]), int(f[7]))  # dtype, wtype, m, n, k, group
            ours[key] = kv(f[8:])
        elif f[1] == "torch":
            torch_t[(int(f[2]), int(f[3]), int(f[4]), int(f[5]))] = kv(f[6:])
        else:
            other.append(line.strip())

print("| weights | n | k | m | fused fp16 us | cuBLASLt fp16 us | fused/fp16 | dequant+Lt/fp16 | fused bf16 us | torch int4 us | fused bf16/torch | fused TFLOP/s | fused GB/s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for key in sorted(ours, key=lambda x: (x[1], x[5], x[3], x[4], x[2])):
    dt, wt, m, n, k, g = key
    if dt != "fp16":
        continue
    h = ours[key]
    b = ours.get(("bf16", wt, m, n, k, g), {})
    t = torch_t.get((m, n, k, g), {}) if wt == "int4" else {}
    fb = float(b.get("fused_us", "nan"))
    ti = float(t.get("int4_us", "nan"))
    print(f"| {wt} g{g} | {n} | {k} | {m} | {h['fused_us']} | {h['lt16_us']} | {float(h['fused_vs_lt16']):.2f} | "
          f"{float(h['dequant_vs_lt16']):.2f} | {fb:.2f} | {ti:.2f} | {ti / fb:.2f} | {h['fused_TFLOPs']} | {h['fused_GBps']} |")
for line in other:
    print(line)
