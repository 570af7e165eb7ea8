#!/usr/bin/env bash
# Prints the source-tree hash (cmake/GenbenchRevision.cmake's GENBENCH_SOURCE_TREE, a result
# file's `source_tree` attribute) of a commit, or of the working tree with no argument, so that a
# result file can be matched to the commit whose content it was built from:
#   scripts/tree-hash.sh 4ed22ff   ->   4ed22ff  a8b9556142891d4b
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/tree" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
src=.
if [ $# -ge 1 ]; then
  git worktree add -q --detach "$tmp/tree" "$1"
  src=$tmp/tree
fi
cmake -DSOURCE_DIR="$(cd "$src" && pwd)" -DOUTPUT="$tmp/version.h" -DVERSION=tree-hash -DGIT="$(command -v git)" \
  -P cmake/GenbenchRevision.cmake
hash=$(sed -n 's/^#define GENBENCH_SOURCE_TREE "\(.*\)"$/\1/p' "$tmp/version.h")
echo "${1:-working-tree}  $hash"
