#!/usr/bin/env bash
# Copies header-only dependencies that some machines cannot install (CLI11, nlohmann-json) from this
# machine's packages into .deps/include, so the source tree can travel with them.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps/include
for dir in CLI nlohmann; do
  if [ -d /usr/include/$dir ]; then
    rm -rf .deps/include/$dir
    cp -r /usr/include/$dir .deps/include/
    echo "staged $dir in .deps/include"
  else
    echo "/usr/include/$dir not found (install libcli11-dev and nlohmann-json3-dev)" >&2
    exit 1
  fi
done
