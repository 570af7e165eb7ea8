#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy over the host C++ sources of src/ (or the
# files and folders given), using the compile commands of a configured build, and fails on any
# finding. Not part of scripts/test.sh: over all of src/ it takes minutes on two cores.
#   scripts/tidy.sh [-p BUILD_DIR] [PATH...]     (default build folder: build; paths: src)
# The build folder needs compile_commands.json (every genbench configure writes it) and its
# generated headers (configure, then build once). CLANG_TIDY / RUN_CLANG_TIDY name the
# binaries (default: clang-tidy-14 / run-clang-tidy-14); GENBENCH_JOBS the parallel runs.
set -uo pipefail
cd "$(dirname "$0")/.."
build=build
if [ "${1:-}" = -p ]; then build=$2; shift 2; fi
db="$build/compile_commands.json"
if [ ! -f "$db" ]; then
  echo "tidy.sh: no $db; configure first (scripts/build.sh $build, or cmake --preset host-only)" >&2
  exit 2
fi
ct=${CLANG_TIDY:-$(command -v clang-tidy-14 || command -v clang-tidy || true)}
rct=${RUN_CLANG_TIDY:-$(command -v run-clang-tidy-14 || command -v run-clang-tidy || true)}
if [ -z "$ct" ] || [ -z "$rct" ]; then echo "tidy.sh: clang-tidy not found (Debian: apt-get install clang-tidy-14)" >&2; exit 2; fi
# The translation units of the compile database under the given paths (host C++ only: nvcc's
# command lines are not clang's).
mapfile -t files < <(/usr/bin/python3 - "$db" "$PWD" "${@:-src}" <<'PY'
import json, os, sys
db, root, paths = sys.argv[1], sys.argv[2], [os.path.abspath(p) for p in sys.argv[3:]]
seen = set()
for e in json.load(open(db)):
    f = os.path.abspath(os.path.join(e["directory"], e["file"]))
    if f.endswith(".cpp") and any(f == p or f.startswith(p + os.sep) for p in paths) and f not in seen:
        seen.add(f); print(f)
PY
)
if [ ${#files[@]} -eq 0 ]; then echo "tidy.sh: no C++ translation units of $db under ${*:-src}" >&2; exit 2; fi
echo "tidy.sh: ${#files[@]} files, $("$ct" --version | grep -m1 version)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
"$rct" -clang-tidy-binary "$ct" -p "$build" -quiet -j "${GENBENCH_JOBS:-$(nproc)}" "${files[@]}" 2>&1 |
  sed 's/\x1b\[[0-9;]*m//g' >"$log" || rc=$?
# Findings (and compile errors), each once; run-clang-tidy's per-file command lines left out.
grep -E '^[^ ].*: (warning|error): ' "$log" | sort -u || true
if [ $rc -ne 0 ] || grep -qE ': (warning|error): ' "$log"; then
  echo "tidy.sh: findings above (rc=$rc)" >&2
  exit 1
fi
echo "tidy.sh: no findings"
