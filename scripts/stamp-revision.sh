#!/usr/bin/env bash
# Writes .genbench-revision (git-ignored): this checkout's `git describe --always --dirty
# --abbrev=12` and its source-tree hash (scripts/tree-hash.sh). A copy of the tree without .git
# (a GPU node's) then names its builds' result files with that revision in `git_revision`, or
# with REVISION-modified when its content is no longer the stamped tree's
# (cmake/GenbenchRevision.cmake). Prints the line it wrote.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$(git describe --always --dirty --abbrev=12)
tree=$(scripts/tree-hash.sh | awk '{ print $2 }')
echo "$rev $tree" > .genbench-revision
cat .genbench-revision
