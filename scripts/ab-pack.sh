#!/usr/bin/env bash
# Packs two commits' sources (no results/) as build-ab/new.tar.gz and build-ab/base.tar.gz for
# scripts/device/ab-backward.sh; each tree holds its commit id in COMMIT.
# Usage: scripts/ab-pack.sh NEW BASE
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: scripts/ab-pack.sh NEW BASE" >&2; exit 2; }
mkdir -p build-ab
for pair in "new $1" "base $2"; do
  set -- $pair
  c=$(git rev-parse --verify "$2^{commit}")
  t=$(mktemp -d)
  git archive "$c" $(git ls-tree --name-only "$c" | grep -vx results) | tar -x -C "$t"
  echo "$c" >"$t/COMMIT"
  tar -czf "build-ab/$1.tar.gz" -C "$t" .
  rm -rf "$t"
  echo "$1: $c $(du -h "build-ab/$1.tar.gz" | cut -f1)"
done
