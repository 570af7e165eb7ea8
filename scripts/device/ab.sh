#!/usr/bin/env bash
# A/B timing of one config under several environments, one genbench run each, compact table.
# Usage: BUILD=build-dev scripts/device/ab.sh CONFIG "ENV=1 ..." "ENV=0 ..."
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build-dev}; cfg=$1; shift
for e in "$@"; do
  env $e timeout 200 "$B/bin/genbench" run "$cfg" -o /tmp/ab.h5 --force > /tmp/ab.txt 2>&1
  echo "== $e (rc=$?, ${SECONDS}s)"
  sed -n '/^Summary/,$p' /tmp/ab.txt | grep -E "TFLOP/s|FAIL|error" | sed -E 's/ +/ /g' | cut -c1-150
done
