#!/usr/bin/env bash
# The stop signals on the CUDA backend, one rank, configs/smoke.yaml (the README's main job):
#   start    SIGUSR1 as soon as the rank catches it (main() has run; MPI, CUDA, cuDNN and NCCL
#            still to start): expect exit 130, state interrupted, no point
#   middle   SIGUSR1 two seconds after the file appears: exit 130, interrupted, some points
#   twice    two SIGUSR1 at start-up: the second ends the rank (killed by signal 10), no file
# and --resume completes the first two files. GENBENCH_BIN: the binary (default
# build/bin/genbench; .w4/genbench.xz is unpacked first when present). Writes $OUT/signals.txt.
set -uo pipefail
OUT=${OUT:-/tmp/signals}
mkdir -p "$OUT"
if [ -f .w4/genbench.xz ] && [ -z "${GENBENCH_BIN:-}" ]; then
  xz -dc .w4/genbench.xz > /tmp/genbench-sig && chmod +x /tmp/genbench-sig && GENBENCH_BIN=/tmp/genbench-sig
fi
B=${GENBENCH_BIN:-build/bin/genbench}
# libraries the device lacks, carried beside the binary (libyaml-cpp.so.0.7)
[ -d .w4 ] && export LD_LIBRARY_PATH=$PWD/.w4${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cfg=configs/smoke.yaml
backend=${BACKEND:-cuda}  # host: the same steps on a machine without a GPU
log() { echo "$*" | tee -a "$OUT/signals.txt"; }

catches_usr1() {  # PID: 0 when the process catches SIGUSR1
  local m
  m=$(awk '/^SigCgt:/{print $2}' "/proc/$1/status" 2>/dev/null) || return 1
  [ -n "$m" ] && (( (16#$m >> 9) & 1 ))
}
summary() {  # FILE: state and completed points
  local j
  j=$("$B" export "$1" --json 2>/dev/null) || { echo "no readable file"; return; }
  echo "state $(printf '%s\n' "$j" | sed -n 's/^  "state": "\([a-z]*\)".*/\1/p' | head -n1)," \
    "$(printf '%s\n' "$j" | grep -cE '"status": "[a-z]') completed points"
}
# run_signalled NAME WHEN COUNT: WHEN = start | middle
run_signalled() {
  local name=$1 when=$2 count=$3 f="$OUT/$1.h5" pid t0 rc i
  rm -f "$f"
  t0=$EPOCHREALTIME
  "$B" run "$cfg" -o "$f" --backend "$backend" -q > "$OUT/$name.txt" 2>&1 &
  pid=$!
  if [ "$when" = start ]; then
    until catches_usr1 "$pid"; do kill -0 "$pid" 2>/dev/null || break; sleep 0.001; done
  else
    until [ -f "$f" ]; do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    sleep 2
  fi
  for ((i = 0; i < count; ++i)); do kill -USR1 "$pid" 2>/dev/null; sleep 0.05; done
  log "$name: SIGUSR1 x$count at $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.3f", b - a}') s"
  wait "$pid"
  rc=$?
  log "$name: exit $rc; $( [ -f "$f" ] && summary "$f" || echo "no file")"
  tail -n 2 "$OUT/$name.txt" | sed "s/^/  $name| /" | tee -a "$OUT/signals.txt"
}
resume() {
  local f="$OUT/$1.h5" rc
  "$B" run "$cfg" -o "$f" --backend "$backend" -q --resume > "$OUT/$1-resume.txt" 2>&1
  rc=$?
  log "$1 --resume: exit $rc; $(summary "$f")"
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee -a "$OUT/signals.txt"
# STEPS: a subset, in order (default: all five)
for s in ${STEPS:-start middle twice resume-start resume-middle}; do
  case $s in
    start) run_signalled start start 1 ;;
    middle) run_signalled middle middle 1 ;;
    twice) run_signalled twice start 2 ;;
    resume-*) resume "${s#resume-}" ;;
  esac
done
