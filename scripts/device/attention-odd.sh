#!/usr/bin/env bash
# Second device call: the anchors' odd shapes (fa2, cudnn, torch SDPA on the same GPU) and fa2's
# varlen/graph modes through the runner. Logs in $OUT.
set -uo pipefail
. "$(dirname "$0")/common.sh"
device_init attention-device-out
out=$OUT
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGENBENCH_CUDA_ARCHITECTURES=90a > "$out/build.log" 2>&1
cmake --build build-dev -j "${GENBENCH_JOBS:-16}" --target genbench >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "build ok at ${SECONDS}s"
CUDA_VISIBLE_DEVICES=0 timeout 70 build-dev/bin/genbench run configs/attention-odd-peers.yaml -o "$out/odd.h5" --force > "$out/genbench-odd.txt" 2>&1
echo "genbench rc=$? at ${SECONDS}s"
CUDA_VISIBLE_DEVICES=0 timeout 40 python3 scripts/peers/attention_sdpa.py --causal 0 --shape 2,16,8192,8192,128 \
  --shape 2,16,8191,8191,128 --shape 4,16,3000,5000,128 --shape 1,16,16384,16384,256 > "$out/torch-odd.txt" 2>&1
sed -n '/^Summary/,$p' "$out/genbench-odd.txt" | cut -c1-200
cat "$out/torch-odd.txt"; echo "end at ${SECONDS}s"
