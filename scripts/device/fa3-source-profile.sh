#!/usr/bin/env bash
# One device call: per-instruction warp-stall sampling (ncu SourceCounters, --clock-control none)
# of one attention/fa3 point, exported as the SASS source page (CSV, gzipped) into $OUT.
# Usage: BUILD=build-dev OUT=dir scripts/device/fa3-source-profile.sh "IMPL DTYPE D SEQLEN CAUSAL" ...
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-results/device-fa3-profile}
B=${BUILD:-build-dev}
mkdir -p "$OUT"
for pt in "$@"; do
  read -r impl dtype d sq causal <<< "$pt"
  name="$impl-$dtype-d$d-s$sq-$causal"
  cfg="/tmp/$name.yaml"
  cat > "$cfg" <<YAML
genbench: 1
settings:
  backend: cuda
  timing: {warmup: 1, min_iterations: 2, max_iterations: 2, min_time: 0, max_time: 1.0}
benchmarks:
  - name: profile
    op: attention
    implementations: [$impl]
    axes: {tokens: 16384, hidden: 2048, seqlen_q: $sq, head_dim: $d, causal: $causal, dtype: $dtype}
YAML
  rm -f "/tmp/$name.ncu-rep"
  timeout 200 ncu --clock-control none -k 'regex:fa3_.*fwd' --launch-skip 2 --launch-count 1 \
    --section WarpStateStats --section SourceCounters -o "/tmp/$name" \
    "$B/bin/genbench" run "$cfg" -o "/tmp/$name.h5" --force -q > "/tmp/$name.log" 2>&1
  echo "== $name profile rc=$? (${SECONDS}s)"; grep -E "ERROR|error" "/tmp/$name.log" | head -3
  ncu -i "/tmp/$name.ncu-rep" --page source --csv --print-source sass 2> /tmp/src.err | gzip -c > "$OUT/$name.sass.csv.gz"
  echo "export: $(zcat "$OUT/$name.sass.csv.gz" | wc -l) lines"; head -c 300 /tmp/src.err
done
