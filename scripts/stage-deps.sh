#!/usr/bin/env bash
# Copies header-only dependencies that some machines cannot install (CLI11) from this
# machine's packages into .deps/include, so the source tree can travel with them.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps/include
if [ -d /usr/include/CLI ]; then
  rm -rf .deps/include/CLI
  cp -r /usr/include/CLI .deps/include/
  echo "staged CLI11 in .deps/include"
else
  echo "CLI11 headers not found in /usr/include/CLI (install libcli11-dev)" >&2
  exit 1
fi
