#!/usr/bin/env bash
# A real single-node Slurm on this machine, and the slurm/ templates run on it with the host
# backend: single-node (srun --mpi=pmix), multi-node (one node; srun fails, mpirun takes over),
# a job array over two configs (mpirun inside the allocation), and the time-limit path: a job whose --time runs out
# leaves a valid, interrupted file that a follow-up job completes with --resume.
#
# Installs slurmctld, slurmd and munge with apt-get when they are missing and we are root.
# Everything else lives in a temporary folder: its own munge key and socket, slurm.conf,
# state, spool and logs, non-default ports; the daemons are stopped on exit.
# Exit codes: 0 passed, 1 failed, 77 skipped (Slurm cannot be installed or started here).
set -uo pipefail
SKIP=77
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${GENBENCH_BIN:-$root/build/bin/genbench}
py=${GENBENCH_PYTHON:-/usr/bin/python3}
t0=$(date +%s)
log() { printf '[slurm-test %3ds] %s\n' $(( $(date +%s) - t0 )) "$*"; }
skip() { log "SKIP: $*"; exit $SKIP; }

[ -x "$bin" ] || { log "FAIL: genbench binary $bin not found (set GENBENCH_BIN)"; exit 1; }
"$py" -c 'import h5py' 2>/dev/null || skip "$py has no h5py"

# --- Slurm and munge: present, or installable -----------------------------------------------
need=(slurmctld slurmd munged mungekey sbatch srun squeue scontrol sinfo)
missing_tools() { for c in "${need[@]}"; do command -v "$c" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "$c" >/dev/null 2>&1 || echo "$c"; done; }
export PATH=$PATH:/usr/sbin:/sbin
if [ -n "$(missing_tools)" ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    skip "Slurm is not installed ($(missing_tools | tr '\n' ' ')) and this is not root with apt-get"
  fi
  log "installing slurmctld slurmd slurm-client munge with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  if ! { timeout 120 apt-get update -qq && timeout 300 apt-get install -y -qq --no-install-recommends \
           slurmctld slurmd slurm-client munge; } >/dev/null 2>&1; then
    skip "apt-get could not install slurmctld, slurmd, munge"
  fi
  [ -z "$(missing_tools)" ] || skip "still missing after apt-get: $(missing_tools | tr '\n' ' ')"
fi

# --- a private cluster in a temporary folder -------------------------------------------------
tmp=$(mktemp -d /tmp/genbench-slurm.XXXXXX)
chmod 700 "$tmp"
keep=${GENBENCH_SLURM_KEEP:-0}
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -f "$tmp/slurm.conf" ]; then
    SLURM_CONF=$tmp/slurm.conf timeout 10 scancel --quiet --user="$(id -un)" >/dev/null 2>&1 || true
  fi
  for f in slurmd slurmctld munged; do
    local pid
    pid=$(cat "$tmp/$f.pid" 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
  done
  sleep 1
  for f in slurmd slurmctld munged; do
    local pid
    pid=$(cat "$tmp/$f.pid" 2>/dev/null || true)
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  done
  if [ "$rc" -ne 0 ] && [ "$rc" -ne $SKIP ]; then
    for f in "$tmp"/slurmctld.log "$tmp"/slurmd.log "$tmp"/jobs/*.out; do
      [ -f "$f" ] && { echo "----- tail of $f"; tail -n 25 "$f"; }
    done
  fi
  if [ "$keep" = 1 ]; then log "kept $tmp"; else rm -rf "$tmp"; fi
  log "cleaned up (exit $rc)"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { log "FAIL: $*"; exit 1; }

host=$(hostname)
cpus=$(nproc)
mem_mb=$(awk '/^MemTotal:/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
port=$(( 20000 + $$ % 20000 ))
# Job ids differ from run to run: Slurm's PMIx plugin keeps per-step folders named after them
# and refuses to start a step whose folder a previous cluster left behind.
first_job=$(( ($(date +%s) % 600000) * 100 + 1 ))
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/jobs" "$tmp/results" "$tmp/tmpfs"

mungekey --create --keyfile="$tmp/munge.key" >/dev/null 2>&1 \
  || { dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 2>/dev/null && chmod 600 "$tmp/munge.key"; }
timeout 30 munged --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" --pid-file="$tmp/munged.pid" \
       --log-file="$tmp/munged.log" --seed-file="$tmp/munge.seed" --force >/dev/null 2>&1 \
  || skip "munged would not start ($(tail -n 2 "$tmp/munged.log" 2>/dev/null))"

cat > "$tmp/slurm.conf" <<CONF
ClusterName=genbenchtest
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$(( port + 1 ))
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
TmpFS=$tmp/tmpfs
FirstJobId=$first_job
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
MinJobAge=600
KillWait=10
InactiveLimit=0
GresTypes=gpu
NodeName=$host CPUs=$cpus RealMemory=$mem_mb Gres=gpu:16 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
# No GPUs here: sixteen stand-in GPUs (character devices like /dev/null) so that the templates'
# --gpus-per-node is honoured (jobs below ask for one per task). The host backend never opens them.
mkdir -p "$tmp/dev"
for i in $(seq 0 15); do
  mknod "$tmp/dev/gpu$i" c 1 3 2>/dev/null || skip "cannot create stand-in GPU devices (mknod) in $tmp/dev"
done
echo "NodeName=$host Name=gpu File=$tmp/dev/gpu[0-15]" > "$tmp/gres.conf"
printf 'CgroupPlugin=cgroup/v1\nIgnoreSystemd=yes\n' > "$tmp/cgroup.conf"
export SLURM_CONF=$tmp/slurm.conf

# The daemons, and so the jobs, run at a lower priority than the tests beside them (ctest -j): the
# time-limit job and its follow-up time a fixed number of seconds per point, so at full priority
# they would take two cores' worth of CPU from the other tests for a minute while waiting out
# the limit, and finish no sooner.
timeout 30 nice -n 10 slurmctld -i >/dev/null 2>&1 || skip "slurmctld would not start: $(tail -n 3 "$tmp/slurmctld.log" 2>/dev/null)"
timeout 30 nice -n 10 slurmd >/dev/null 2>&1 || skip "slurmd would not start: $(tail -n 3 "$tmp/slurmd.log" 2>/dev/null)"

# Every wait below has a limit, and every Slurm command a timeout: a broken daemon fails the
# test instead of hanging it. Waits up to $1 seconds for the command after it to succeed.
wait_for() {
  local limit=$1 start
  shift
  start=$(date +%s)
  until "$@" >/dev/null 2>&1; do
    [ $(( $(date +%s) - start )) -ge "$limit" ] && return 1
    sleep 1
  done
}
node_ready() { timeout 10 sinfo -h -N -o '%T' | grep -qE '^(idle|mixed|allocated)'; }
wait_for 60 node_ready || skip "the Slurm node did not come up: $(sinfo -h -N -o '%T %E' 2>&1)"
log "Slurm up: node $host, $cpus CPU(s), ${mem_mb} MB, 16 stand-in GPUs, port $port"

# --- configs ----------------------------------------------------------------------------------
cat > "$tmp/small.yaml" <<'YAML'
genbench: 1
settings:
  timing: {warmup: 1, min_iterations: 3, max_iterations: 20, min_time: 0.001, max_time: 0.05, target_noise: 0.05}
benchmarks:
  - name: gemm
    op: gemm
    implementations: [reference]
    axes: {m: [64, 96], n: 64, k: 64, dtype: [fp32, bf16]}
  - name: allreduce
    op: collective
    implementations: [mpi]
    axes: {collective: [all_reduce, all_gather], bytes: [1K, 64K], dtype: fp32}
YAML
sed 's/m: \[64, 96\]/m: [32, 48, 80]/' "$tmp/small.yaml" > "$tmp/small2.yaml"
# Long enough to outlast the signal: 80 points that each take their max_time of 0.5 s (an
# iteration of the reference gemm takes milliseconds, far from max_iterations), about a minute.
cat > "$tmp/long.yaml" <<'YAML'
genbench: 1
settings:
  timing: {warmup: 0, min_iterations: 2, max_iterations: 1000, min_time: 0.5, max_time: 0.5, target_noise: 0.000001}
benchmarks:
  - name: gemm
    op: gemm
    implementations: [reference]
    axes: {m: {from: 128, to: 272, step: 16}, n: {from: 128, to: 240, step: 16}, k: 256, dtype: fp32}
YAML

export GENBENCH_BIN=$bin GENBENCH_BACKEND=host GENBENCH_HOME=$root
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
common=(--parsable --chdir="$root" --cpus-per-task=1 --overcommit)
# One (stand-in) GPU per task, as on a GPU node.
submit() { local out=$1; shift; timeout 60 sbatch "${common[@]}" --output="$tmp/jobs/$out.out" "$@"; }

# Waits for jobs to leave the queue (at most $1 seconds).
# shellcheck source=jobs_left.sh
. "$(dirname "${BASH_SOURCE[0]}")/jobs_left.sh"
wait_jobs() {
  local limit=$1
  shift
  local start
  start=$(date +%s)
  while slurm_jobs_left "$(IFS=,; echo "$*")"; do
    [ $(( $(date +%s) - start )) -ge "$limit" ] && return 1
    sleep 2
  done
}
job_field() { timeout 20 scontrol show job "$1" 2>/dev/null | grep -oE "(^| )$2=[^ ]*" | head -n1 | cut -d= -f2; }

# --- submit everything at once --------------------------------------------------------------
r=$tmp/results
# Slurm will not place more tasks on a node than it has CPUs, whatever --overcommit says.
wide=$(( cpus < 4 ? cpus : 4 ))
[ "$cpus" -ge 2 ] || skip "needs at least 2 CPUs for 2 tasks per job"
# --time=1 with the signal 25 s before the end: slurmctld checks time limits every 30 s and may
# signal up to 30 s early, so SIGUSR1 arrives 5 to 35 s into the job; past 60 s Slurm would
# send SIGTERM, which genbench handles the same way.
j_long=$(submit long --time=1 --signal=B:USR1@25 --ntasks-per-node=2 --gpus-per-node=2 \
  "$root/slurm/single-node.sbatch" "$tmp/long.yaml" "$r/long.h5") || fail "sbatch (time limit job)"
j_single=$(submit single --ntasks-per-node=2 --gpus-per-node=2 "$root/slurm/single-node.sbatch" "$tmp/small.yaml" "$r/single.h5") \
  || fail "sbatch single-node.sbatch"
# The multi-node job asks srun for an MPI plugin Slurm does not have: genbench-step must fall
# back to mpirun inside the allocation.
j_multi=$(GENBENCH_CONFIG=$tmp/small.yaml GENBENCH_OUTPUT=$r/multi.h5 GENBENCH_SRUN_MPI=pmix_v99 \
  submit multi --nodes=1 --ntasks-per-node=$wide --gpus-per-node=$wide --exclusive=user "$root/slurm/multi-node.sbatch") \
  || fail "sbatch multi-node.sbatch"
j_array=$(GENBENCH_CONFIGS="$tmp/small.yaml $tmp/small2.yaml" GENBENCH_OUTDIR=$r/sweep GENBENCH_LAUNCHER=mpirun \
  submit 'array_%a' --array=0-1 --ntasks-per-node=2 --gpus-per-node=2 "$root/slurm/sweep-array.sbatch") \
  || fail "sbatch sweep-array.sbatch"
log "submitted: time-limit job $j_long, single-node $j_single, multi-node $j_multi, array $j_array (0-1)"

wait_jobs 120 "$j_single" "$j_multi" "$j_array" || fail "jobs still queued after 120 s: $(squeue -h 2>&1)"
for j in "$j_single" "$j_multi" "${j_array}_0" "${j_array}_1"; do
  st=$(job_field "$j" JobState); ec=$(job_field "$j" ExitCode)
  log "job $j: $st, exit $ec"
  [ "$st" = COMPLETED ] || fail "job $j ended $st (exit $ec)"
done

check() { timeout 60 "$py" "$root/tests/slurm/check_result.py" "$@"; }
check "$r/single.h5" --ranks 2 --state complete || fail "single-node result"
check "$r/multi.h5" --ranks "$wide" --state complete || fail "multi-node result"
check "$r/sweep/small.h5" --ranks 2 --state complete || fail "array task 0 result"
check "$r/sweep/small2.h5" --ranks 2 --state complete || fail "array task 1 result"
grep -q 'via srun' "$tmp/jobs/single.out" || fail "single-node job did not use srun --mpi=pmix"
grep -q 'via mpirun' "$tmp/jobs/array_0.out" || fail "array job did not use mpirun"
grep -q 'trying mpirun inside the allocation' "$tmp/jobs/multi.out" || fail "multi-node job did not fall back to mpirun"

# --- the time limit ---------------------------------------------------------------------------
wait_jobs 150 "$j_long" || fail "time-limit job $j_long still running after 150 s"
st=$(job_field "$j_long" JobState); ec=$(job_field "$j_long" ExitCode)
log "time-limit job $j_long: $st, exit $ec"
grep -q 'got SIGUSR1\|got SIGTERM' "$tmp/jobs/long.out" || fail "the time-limit job never saw the signal"
# A signal before genbench-step started the ranks (its first second or so, on a loaded machine
# longer) starts none and leaves no file: then the follow-up job runs every point.
resumed=1
if grep -q 'stopped before the ranks were started' "$tmp/jobs/long.out"; then
  log "time-limit job: the signal came before the ranks were started; no file, the next job runs them all"
  [ "${ec%%:*}" = 130 ] && [ ! -e "$r/long.h5" ] || fail "exit $ec, or a file was left"
  resumed=0
else
  check "$r/long.h5" --ranks 2 --state interrupted --partial || fail "interrupted result"
fi
j_resume=$(submit resume --ntasks-per-node=2 --gpus-per-node=2 "$root/slurm/single-node.sbatch" "$tmp/long.yaml" "$r/long.h5") \
  || fail "sbatch (resume job)"
wait_jobs 150 "$j_resume" || fail "resume job $j_resume still running after 150 s"
st=$(job_field "$j_resume" JobState); ec=$(job_field "$j_resume" ExitCode)
log "resume job $j_resume: $st, exit $ec"
[ "$st" = COMPLETED ] || fail "resume job ended $st"
if [ $resumed = 1 ]; then
  grep -q 'continuing it with --resume' "$tmp/jobs/resume.out" || fail "the follow-up job did not resume"
  check "$r/long.h5" --ranks 2 --state complete --resumed || fail "resumed result"
else
  check "$r/long.h5" --ranks 2 --state complete || fail "the follow-up job's result"
fi
log "PASS"
