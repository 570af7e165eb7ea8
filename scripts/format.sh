#!/usr/bin/env bash
# Formats the tracked C++ and CUDA sources (*.h, *.cpp, *.cu, *.cuh) with clang-format and the
# repository's .clang-format, leaving out the files listed in .clang-format-ignore.
#   scripts/format.sh [PATH...]           format in place (all tracked sources, or those under PATHs)
#   scripts/format.sh --check [PATH...]   change nothing; list the files that are not formatted
#                                         and exit 1 if there are any
# CLANG_FORMAT names the binary (default: clang-format-14, else clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
cf=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
if [ -z "$cf" ]; then echo "format.sh: no clang-format found (Debian: apt-get install clang-format-14)" >&2; exit 2; fi
ignore=()
while IFS= read -r line; do
  case "$line" in ''|'#'*) ;; *) ignore+=("$line") ;; esac
done < .clang-format-ignore
files=()
while IFS= read -r f; do
  skip=0
  for pat in "${ignore[@]}"; do
    # shellcheck disable=SC2053  # the pattern is meant to glob
    [[ "$f" == $pat ]] && skip=1
  done
  (( skip )) || files+=("$f")
done < <(git ls-files -- "${@:-.}" | grep -E '\.(h|hpp|cpp|cu|cuh)$')
if [ ${#files[@]} -eq 0 ]; then echo "format.sh: no sources under ${*:-.}" >&2; exit 2; fi
if (( check )); then
  bad=()
  for f in "${files[@]}"; do
    "$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    printf '%s\n' "${bad[@]}"
    echo "format.sh: ${#bad[@]} of ${#files[@]} files are not formatted (scripts/format.sh formats them)" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files formatted"
else
  "$cf" --style=file -i "${files[@]}"
  echo "format.sh: formatted ${#files[@]} files with $("$cf" --version | head -1)"
fi
