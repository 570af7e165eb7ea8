#!/usr/bin/env bash
# genbench across several nodes without a cluster: three "nodes" on this machine, each a set of
# namespaces with its own host name, network (one veth on a private bridge, 10.213.7.0/24 by
# default, which exists only inside the namespaces) and /etc/hosts (tests/multinode/nodes.sh).
# With them, on the host backend:
#   mpirun  Open MPI over TCP (rsh agent: tests/multinode/node-rsh): configs/smoke.yaml and a
#           collectives config on 2 nodes x 2 ranks (/system: two hosts, node-local ranks 0 and
#           1 on each, every rank's samples); a node made slow (a CPU quota on its cgroup) is
#           named by the analysis report's straggler line; a node that dies mid-run (its link
#           cut, then every process of it killed): the job ends within the watchdog deadline
#           plus grace naming the host, the file keeps every completed point, and --resume on
#           the surviving nodes completes it.
#   Slurm   one slurmctld and one slurmd per node namespace; slurm/multi-node.sbatch unchanged,
#           `sbatch --nodes=2` runs to completion (srun --mpi=pmix, or the template's mpirun
#           fallback; the log says which), a job that hits its --time limit leaves an
#           interrupted file that the same job submitted again completes with --resume, and a
#           job whose batch shell is signalled while the ranks start ends interrupted (130).
# The Slurm part runs in the background while the mpirun part runs (the time limit takes a
# minute of waiting). Exit codes: 0 passed, 1 failed, 77 skipped (namespaces or Slurm cannot be
# made here; the reason is printed). Everything lives in one temporary folder; daemons,
# namespaces and cgroups are removed on exit, also after a failure or a signal, and a detached
# reaper removes them if this script is killed outright. GENBENCH_MN_KEEP=1 keeps the folder.
set -uo pipefail
SKIP=77
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${GENBENCH_BIN:-$root/build/bin/genbench}
py=${GENBENCH_PYTHON:-/usr/bin/python3}
t0=$(date +%s)
# The test's own output goes to fd 3 (its stdout), also from a trap that runs while a command's
# output is redirected to a log file.
exec 3>&1
log() { printf '[multinode %3ds] %s\n' $(( $(date +%s) - t0 )) "$*" >&3; }
skip() { log "SKIP: $*"; exit $SKIP; }
fail() { log "FAIL: $*"; exit 1; }
export PATH=$PATH:/usr/sbin:/sbin

[ -x "$bin" ] || fail "genbench binary $bin not found (set GENBENCH_BIN)"
"$py" -c 'import h5py, pandas' 2>/dev/null || skip "$py has no h5py or pandas"
command -v mpirun >/dev/null || skip "no mpirun"
# shellcheck source=nodes.sh
. "$here/nodes.sh"
# shellcheck source=../slurm/jobs_left.sh
. "$here/../slurm/jobs_left.sh"
why=$(mn_can_make_nodes) || skip "$why"

tmp=$(mktemp -d /tmp/genbench-mn.XXXXXX)
chmod 755 "$tmp"
keep=${GENBENCH_MN_KEEP:-0}
slurm_pid=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [ "$slurm_pid" -gt 0 ] && kill "$slurm_pid" 2>/dev/null
  mn_teardown
  local pid i
  pid=$(cat "$tmp/munged.pid" 2>/dev/null)
  if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
    for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  if [ "$rc" -ne 0 ] && [ "$rc" -ne $SKIP ]; then
    for f in "$tmp"/shared/*.log "$tmp"/nodes/*/slurmd.log "$tmp"/shared/jobs/*.out "$tmp"/logs/*; do
      [ -f "$f" ] && { echo "----- tail of $f"; tail -n 15 "$f"; } >&3
    done
  fi
  if [ "$keep" = 1 ]; then log "kept $tmp"; else rm -rf "$tmp"; fi
  log "cleaned up (exit $rc)"
  exit "$rc"
}
trap cleanup EXIT
trap 'log "stopped by a signal"; exit 1' INT TERM
setsid -f "$here/reaper" $$ "$tmp" "$keep" </dev/null >/dev/null 2>&1

mn_setup "$tmp" node1 node2 node3 || fail "could not make the nodes"
log "nodes node1 node2 node3 up on $MN_SUBNET (cgroup: ${MN_CGROUP:-none})"
mkdir -p "$tmp/logs" "$tmp/shared/jobs" "$tmp/shared/results"
S=$tmp/shared
R=$S/results
export GENBENCH_BIN=$bin GENBENCH_BACKEND=host GENBENCH_HOME=$root NCCL_NVLS_ENABLE=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI over the nodes' network only. Every "node" shares this machine's cores, so waiting
# ranks yield the CPU instead of spinning (a real node has a core per rank). The out-of-band
# keepalive lets mpirun notice a silent node within seconds (default: after 300 + 9 x 20 s).
export OMPI_MCA_btl=tcp,self OMPI_MCA_pml=ob1 OMPI_MCA_btl_tcp_if_include=$MN_SUBNET \
       OMPI_MCA_oob_tcp_if_include=$MN_SUBNET OMPI_MCA_mpi_yield_when_idle=1 \
       OMPI_MCA_oob_tcp_keepalive_time=2 OMPI_MCA_oob_tcp_keepalive_intvl=1 OMPI_MCA_oob_tcp_keepalive_probes=2
# Runs a command in the background and waits for it: bash runs a trap (INT, TERM) only between
# commands, and `wait` is one it interrupts, so a signal ends the test at once.
bg() { "$@" & wait $!; }
# Seconds since a `date +%s.%N` stamp, to 0.1 s.
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
check() { bg timeout 60 "$py" "$here/check_multinode.py" "$@"; }

# ============================== Slurm (in the background) ======================================
slurm_part() {
  local need=(slurmctld slurmd munged sbatch srun squeue scontrol sinfo) c
  for c in "${need[@]}"; do
    command -v "$c" >/dev/null 2>&1 || { echo "SKIP: Slurm is not installed (no $c; scripts/install-deps.sh installs it)"; return $SKIP; }
  done
  # munge in this namespace; its socket is a file every node sees
  if command -v mungekey >/dev/null; then mungekey --create --keyfile="$tmp/munge.key" >/dev/null 2>&1; fi
  [ -s "$tmp/munge.key" ] || { dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 2>/dev/null; chmod 600 "$tmp/munge.key"; }
  timeout 30 munged --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" --pid-file="$tmp/munged.pid" \
    --log-file="$tmp/munged.log" --seed-file="$tmp/munge.seed" --force >/dev/null 2>&1 \
    || { echo "SKIP: munged would not start: $(tail -n 2 "$tmp/munged.log" 2>/dev/null)"; return $SKIP; }
  local cpus first_job
  cpus=$(nproc)
  first_job=$(( ($(date +%s) % 600000) * 100 + 1 ))
  mkdir -p "$S/slurm-state" "$tmp/dev"
  for n in node1 node2; do mkdir -p "$tmp/nodes/$n/spool" "$tmp/nodes/$n/tmp"; done
  # Per-node paths under $tmp/local, which each node's mount namespace maps to its own folder.
  cat > "$S/slurm.conf" <<CONF
ClusterName=genbenchmn
SlurmctldHost=node1
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock
StateSaveLocation=$S/slurm-state
SlurmdSpoolDir=$tmp/local/spool
TmpFS=$tmp/local/tmp
FirstJobId=$first_job
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$tmp/local/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$tmp/local/slurmd.log
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
NodeName=node[1-2] CPUs=$cpus RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=test Nodes=node[1-2] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
  # Stand-in GPUs (character devices like /dev/null) so --gpus-per-node is honoured; the host
  # backend never opens them.
  mknod "$tmp/dev/gpu0" c 1 3 2>/dev/null && mknod "$tmp/dev/gpu1" c 1 3 2>/dev/null \
    || { echo "SKIP: cannot create stand-in GPU devices (mknod)"; return $SKIP; }
  echo "NodeName=node[1-2] Name=gpu File=$tmp/dev/gpu[0-1]" > "$S/gres.conf"
  printf 'CgroupPlugin=cgroup/v1\nIgnoreSystemd=yes\n' > "$S/cgroup.conf"
  export SLURM_CONF=$S/slurm.conf
  # The daemons, and so the jobs' ranks, run at a lower priority than the mpirun part that runs
  # meanwhile on the same cores; the time-limit job's points last a fixed time regardless.
  mn_exec node1 timeout 30 nice -n 10 slurmctld -i >/dev/null 2>&1 \
    || { echo "SKIP: slurmctld would not start: $(tail -n 3 "$S/slurmctld.log" 2>/dev/null)"; return $SKIP; }
  for n in node1 node2; do
    mn_exec "$n" timeout 30 nice -n 10 slurmd >/dev/null 2>&1 \
      || { echo "SKIP: slurmd would not start on $n: $(tail -n 3 "$tmp/nodes/$n/slurmd.log" 2>/dev/null)"; return $SKIP; }
  done
  local i up=0
  for i in $(seq 60); do
    if [ "$(mn_exec node1 timeout 10 sinfo -h -N -o '%T' 2>/dev/null | grep -cE '^(idle|mixed|allocated)')" -eq 2 ]; then up=1; break; fi
    sleep 1
  done
  [ $up = 1 ] || { echo "SKIP: the Slurm nodes did not come up: $(mn_exec node1 sinfo -h -N -o '%N %T %E' 2>&1 | tr '\n' ' ')"; return $SKIP; }
  echo "Slurm up: node1 (slurmctld, slurmd), node2 (slurmd), $cpus CPU(s) each, srun --mpi=list: $(mn_exec node1 srun --mpi=list 2>&1 | tr -s ' \n' ' ')"

  # Commands run on node1, the login node; the job's environment (--export=ALL) carries the
  # Open MPI and GENBENCH_ settings above.
  submit() { local out=$1; shift; mn_exec node1 timeout 60 sbatch --parsable --chdir="$root" --output="$S/jobs/$out.out" \
               --nodes=2 --ntasks-per-node=2 --gpus-per-node=2 --cpus-per-task=1 --overcommit "$@"; }
  job_field() { mn_exec node1 timeout 20 scontrol show job "$1" 2>/dev/null | grep -oE "(^| )$2=[^ ]*" | head -n1 | cut -d= -f2; }
  wait_job() {
    local start
    start=$(date +%s)
    while slurm_jobs_left "$2" mn_exec node1; do
      [ $(( $(date +%s) - start )) -ge "$1" ] && return 1
      sleep 2
    done
  }
  # The time limit: --time=1 with the signal 25 s before the end. slurmctld checks limits every
  # 30 s and may signal up to 30 s early, so SIGUSR1 reaches the batch shell 5 to 35 s into the
  # job (with 55 s it came 7 s in, inside MPI_Init); long.yaml needs over 40 s. A signal during
  # the ranks' start-up leaves an interrupted file of no points, which the check accepts.
  # The time-limit job is submitted last: every job takes both nodes' stand-in GPUs, so the jobs
  # run one after another, and the two short ones then do not wait out its minute.
  local j_long j_multi j_mpirun st ec
  j_multi=$(submit multi "$root/slurm/multi-node.sbatch" "$here/configs/collectives.yaml" "$R/slurm-coll.h5") \
    || { echo "FAIL: sbatch multi-node.sbatch"; return 1; }
  # The template's other launcher: mpirun inside the allocation (its daemons started by srun).
  j_mpirun=$(GENBENCH_LAUNCHER=mpirun submit mpirun "$root/slurm/multi-node.sbatch" "$here/configs/collectives.yaml" "$R/slurm-coll-mpirun.h5") \
    || { echo "FAIL: sbatch multi-node.sbatch (GENBENCH_LAUNCHER=mpirun)"; return 1; }
  j_long=$(submit long --time=1 --signal=B:USR1@25 "$root/slurm/multi-node.sbatch" "$here/configs/long.yaml" "$R/slurm-long.h5") \
    || { echo "FAIL: sbatch (time-limit job)"; return 1; }
  echo "submitted: multi-node $j_multi (launcher auto), $j_mpirun (GENBENCH_LAUNCHER=mpirun), time-limit job $j_long"
  local j out file how
  # auto: srun --mpi=pmix where it works, else the fallback; either is a pass, the log says which
  for j in "$j_multi:multi:slurm-coll:srun|mpirun" "$j_mpirun:mpirun:slurm-coll-mpirun:mpirun"; do
    IFS=: read -r j out file how <<< "$j"
    wait_job 120 "$j" || { echo "FAIL: job $j still queued or running after 120 s"; return 1; }
    st=$(job_field "$j" JobState) ec=$(job_field "$j" ExitCode)
    echo "multi-node job $j: $st, exit $ec, nodes $(job_field "$j" NodeList); $(grep -E '^genbench-step: .*(via|trying mpirun)' "$S/jobs/$out.out" | tr '\n' ' ')"
    [ "$st" = COMPLETED ] || { echo "FAIL: multi-node job $j ended $st (exit $ec)"; return 1; }
    grep -qE "via ($how)$" "$S/jobs/$out.out" || { echo "FAIL: job $j did not run its ranks via $how"; return 1; }
    check file "$R/$file.h5" --hosts node1,node2 --per-node 2 --state complete || { echo "FAIL: job $j's file"; return 1; }
  done

  wait_job 150 "$j_long" || { echo "FAIL: time-limit job $j_long still running after 150 s"; return 1; }
  st=$(job_field "$j_long" JobState) ec=$(job_field "$j_long" ExitCode)
  echo "time-limit job $j_long: $st, exit $ec; $(grep -m1 -oE 'via (srun|mpirun)' "$S/jobs/long.out"); $(grep -m1 -oE 'got SIG[A-Z0-9]+' "$S/jobs/long.out")"
  grep -q 'got SIGUSR1\|got SIGTERM' "$S/jobs/long.out" || { echo "FAIL: the time-limit job never saw the signal"; return 1; }
  # A signal before genbench-step started the ranks (its first second or so, on a loaded
  # machine longer) starts none and leaves no file: then the follow-up job runs every point.
  local resumed=1
  if grep -q 'stopped before the ranks were started' "$S/jobs/long.out"; then
    echo "time-limit job: the signal came before the ranks were started; no file, the next job runs them all"
    [ "${ec%%:*}" = 130 ] && [ ! -e "$R/slurm-long.h5" ] || { echo "FAIL: exit $ec, or a file was left"; return 1; }
    resumed=0
  else
    check file "$R/slurm-long.h5" --hosts node1,node2 --per-node 2 --state interrupted --partial \
      || { echo "FAIL: the time-limit job's file"; return 1; }
  fi
  local j_resume
  j_resume=$(submit resume "$root/slurm/multi-node.sbatch" "$here/configs/long.yaml" "$R/slurm-long.h5") \
    || { echo "FAIL: sbatch (resume job)"; return 1; }
  wait_job 150 "$j_resume" || { echo "FAIL: resume job $j_resume still running after 150 s"; return 1; }
  st=$(job_field "$j_resume" JobState) ec=$(job_field "$j_resume" ExitCode)
  echo "resume job $j_resume: $st, exit $ec; $(grep -m1 -oE 'via (srun|mpirun)' "$S/jobs/resume.out")"
  [ "$st" = COMPLETED ] || { echo "FAIL: resume job ended $st (exit $ec)"; return 1; }
  if [ $resumed = 1 ]; then
    grep -q 'continuing it with --resume' "$S/jobs/resume.out" || { echo "FAIL: the follow-up job did not resume"; return 1; }
    check file "$R/slurm-long.h5" --hosts node1,node2 --per-node 2 --state complete --resumed \
      || { echo "FAIL: the resumed file"; return 1; }
  else
    check file "$R/slurm-long.h5" --hosts node1,node2 --per-node 2 --state complete \
      || { echo "FAIL: the follow-up job's file"; return 1; }
  fi

  # A stop signal while the ranks start, to the batch shell only (as --signal=B: sends it): as
  # soon as the job's first step (srun's ranks) exists. genbench-step holds it back until rank 0
  # has made the file, when every rank catches it; passed on at once it could find a rank still
  # loading its libraries and end it. The ranks then stop: an interrupted file, exit 130.
  local j_early k
  j_early=$(submit early "$root/slurm/multi-node.sbatch" "$here/configs/long.yaml" "$R/slurm-early.h5") \
    || { echo "FAIL: sbatch (early-signal job)"; return 1; }
  for k in $(seq 300); do
    mn_exec node1 timeout 10 squeue -h -s -j "$j_early" -o %i 2>/dev/null | grep -qx "$j_early\.0" && break
    sleep 0.2
  done
  mn_exec node1 timeout 20 scancel --batch --signal=USR1 "$j_early" || { echo "FAIL: scancel --batch --signal=USR1 $j_early"; return 1; }
  wait_job 120 "$j_early" || { echo "FAIL: early-signal job $j_early still running after 120 s"; return 1; }
  st=$(job_field "$j_early" JobState) ec=$(job_field "$j_early" ExitCode)
  echo "early-signal job $j_early: $st, exit $ec; $(grep -m1 -E 'got SIGUSR1.*' "$S/jobs/early.out")"
  grep -q 'got SIGUSR1' "$S/jobs/early.out" || { echo "FAIL: the early-signal job never saw the signal"; return 1; }
  [ "${ec%%:*}" = 130 ] || { echo "FAIL: the early-signal job exited $ec, expected 130"; return 1; }
  check file "$R/slurm-early.h5" --hosts node1,node2 --per-node 2 --state interrupted --partial \
    || { echo "FAIL: the early-signal job's file"; return 1; }
  echo "Slurm part passed"
  return 0
}
( slurm_part; echo $? > "$tmp/slurm.rc" ) > "$tmp/logs/slurm-part.log" 2>&1 &
slurm_pid=$!

# ============================== mpirun across the nodes =========================================
# mpi HOSTS CMD...: Open MPI started on the first host (the "login node"), 2 ranks per host,
# daemons on the others through the rsh agent; ranks see only what -x passes (node-rsh starts
# remote daemons in a login-like environment, as ssh would).
mpi() {
  local hosts=$1 h hf
  shift
  hf=$S/hostfile-${hosts//,/-}
  for h in ${hosts//,/ }; do echo "$h slots=2"; done > "$hf"
  bg mn_exec "${hosts%%,*}" timeout 150 mpirun --hostfile "$hf" -np $(( 2 * $(echo "$hosts" | tr ',' '\n' | wc -l) )) \
    --map-by ppr:2:node --bind-to none --mca plm_rsh_agent "$here/node-rsh" --mca plm_rsh_no_tree_spawn 1 \
    -x NCCL_NVLS_ENABLE -x GENBENCH_WATCHDOG_S "$bin" "$@"
}
export GENBENCH_WATCHDOG_S=300

log "mpirun: configs/smoke.yaml on node1,node2 (2 x 2 ranks)"
mpi node1,node2 run "$root/configs/smoke.yaml" -o "$R/smoke.h5" --backend host -q > "$tmp/logs/smoke.txt" 2>&1 \
  || fail "smoke run exited $? ($(tail -n 3 "$tmp/logs/smoke.txt" | tr '\n' ' '))"
check file "$R/smoke.h5" --hosts node1,node2 --per-node 2 --state complete || fail "smoke result"

log "mpirun: collectives on node1,node2"
mpi node1,node2 run "$here/configs/collectives.yaml" -o "$R/coll.h5" -q > "$tmp/logs/coll.txt" 2>&1 \
  || fail "collectives run exited $? ($(tail -n 3 "$tmp/logs/coll.txt" | tr '\n' ' '))"
check file "$R/coll.h5" --hosts node1,node2 --per-node 2 --state complete || fail "collectives result"

# --- a slow node ------------------------------------------------------------------------------
# node3's processes together get 20% of one CPU (its cgroup's quota, 1 ms per 5 ms period) from
# the end of the first point on (set once the ranks are running: their start-up would crawl
# under it); the report must name both of node3's ranks as stragglers and none of node1's. The
# other points' iterations need many quotas of CPU (configs/straggler.yaml says why that
# matters); at 10% of a CPU each, node3's ranks then take about ten times as long.
if [ -n "$MN_CGROUP" ]; then
  log "mpirun: straggler config on node1,node3; node3 held to 20% of one CPU after the first point"
  # node1 and node3 outweigh other work on the machine for these seconds (the Slurm part runs
  # meanwhile): a busy machine would otherwise slow node1 as much as the quota slows node3, and
  # node3 far below its quota (a run of 10 x the work took 77 s instead of 8 with node3 at the
  # default weight), so that node3 is held back by its quota alone
  # The work of an iteration, sized to this build (Release, RelWithDebInfo and a sanitized build
  # differ 50-fold): one unthrottled rank times m = 256 on this machine, and the slow points take
  # m for about 15 ms of CPU an iteration, 15 quotas, so node3's ranks take about ten times as
  # long whatever the build type, and the run a few seconds.
  timeout 120 mpirun --oversubscribe -np 1 -x OMPI_MCA_oob_tcp_if_include=lo "$bin" run "$here/configs/straggler.yaml" \
    -a m=256 -o "$S/calib.h5" --force -q > "$tmp/logs/calib.txt" 2>&1 || fail "calibration run exited $? ($(tail -n 3 "$tmp/logs/calib.txt" | tr '\n' ' '))"
  m=$(bg timeout 60 "$py" "$here/check_multinode.py" size "$S/calib.h5" --m 256 --target-s 0.015) || fail "calibration: $m"
  mn_node_weight node1 16 && mn_node_weight node3 16 || fail "cannot set the nodes' CPU weights"
  log "slow-node run: m = 256 took $(cut -d' ' -f2- <<< "$m") unthrottled; slow points at m = ${m%% *}, $(( ${m%% *} * 5 / 4 )), $(( ${m%% *} * 3 / 2 ))"
  m=${m%% *}
  slow_start=$(date +%s.%N)
  mpi node1,node3 run "$here/configs/straggler.yaml" -a "m=4,$m,$((m * 5 / 4)),$((m * 3 / 2))" -o "$R/slow.h5" > "$tmp/logs/slow.txt" 2>&1 &
  job=$!
  for i in $(seq 3000); do
    grep -q '^\[ *1/' "$tmp/logs/slow.txt" 2>/dev/null && break
    kill -0 $job 2>/dev/null || break
    sleep 0.02
  done
  mn_slow_node node3 20 || fail "cannot set node3's CPU quota"
  wait $job || fail "slow-node run exited $? ($(tail -n 3 "$tmp/logs/slow.txt" | tr '\n' ' '))"
  mn_slow_node node3 0
  mn_node_weight node1 1 && mn_node_weight node3 1
  # the median of each point's samples, slowest rank
  log "slow-node run: $(since "$slow_start") s; medians: $(sed -nE 's/^\[ *[0-9]+\/[0-9]+\] gemm\/reference +fp32 ([0-9]+)x.* ok +([0-9.]+ [mu]?s) .*/m=\1 \2/p' "$tmp/logs/slow.txt" | paste -sd, - | sed 's/,/, /g')"
  check file "$R/slow.h5" --hosts node1,node3 --per-node 2 --state complete || fail "slow-node result"
  PYTHONPATH=$root/analysis MPLBACKEND=Agg bg timeout 120 "$py" -m genbench_analysis report "$R/slow.h5" -o "$tmp/report" \
    > "$tmp/logs/report.txt" 2>&1 || fail "the analysis report failed: $(tail -n 3 "$tmp/logs/report.txt")"
  check straggler "$tmp/report/report.md" --slow node3 --fast node1 || fail "the report does not name the slow node"
else
  log "slow node: not tested (no writable cpu cgroup to hold a node back with)"
fi

# --- a node dies --------------------------------------------------------------------------------
# node3's link is cut (a node that loses power sends nothing more), then every process in its
# namespaces is killed. node1's ranks wait in a collective; the watchdog (5 s) and Open MPI's
# lost-daemon detection end the job.
deadline=5
log "mpirun: dead.yaml on node1,node3; node3 dies mid-run (watchdog ${deadline} s)"
GENBENCH_WATCHDOG_S=$deadline mpi node1,node3 run "$here/configs/dead.yaml" -o "$R/dead.h5" > "$tmp/logs/dead.txt" 2>&1 &
job=$!
for i in $(seq 300); do
  [ "$(grep -c '^\[.*\] gemm/.* ok ' "$tmp/logs/dead.txt" 2>/dev/null)" -ge 3 ] && break
  kill -0 $job 2>/dev/null || break
  sleep 0.1
done
kill -0 $job 2>/dev/null || fail "the dead-node job ended before the node died: $(tail -n 3 "$tmp/logs/dead.txt")"
sw=$(cat "$tmp/switch.pid")
killed=$(date +%s.%N)
nsenter -t "$sw" --net ip link set p3 down || fail "cannot cut node3's link"
mn_kill_node node3 || fail "cannot kill node3"
log "node3: link cut and every process killed in $(since "$killed") s"

limit=$(( deadline + 10 ))   # deadline + watchdog grace (<= 3 s) + Open MPI's teardown
for i in $(seq $(( limit * 10 + 50 ))); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
if kill -0 $job 2>/dev/null; then
  kill -9 $job 2>/dev/null
  fail "the job was still running $(( limit + 5 )) s after node3 died"
fi
wait $job
rc=$?
took=$(since "$killed")
log "dead node: job exited $rc ${took} s after node3 died; messages naming it:"
grep -E 'node3|watchdog' "$tmp/logs/dead.txt" | grep -v '^\[' | head -n 6 | sed 's/^/    /'
[ "$rc" -ne 0 ] || fail "the job exited 0 although node3 died"
awk -v t="$took" -v l="$limit" 'BEGIN { exit !(t <= l) }' || fail "the job took ${took} s to end (limit $limit s)"
grep -q 'node3' <(grep -v '^\[' "$tmp/logs/dead.txt") || fail "no message names the dead host node3"
# every point reported complete before the death is in the file
"$py" "$here/check_multinode.py" progress "$tmp/logs/dead.txt" | sort > "$tmp/logs/dead-reported"
"$py" "$here/check_multinode.py" points "$R/dead.h5" | sort > "$tmp/logs/dead-file" || fail "the dead node's file cannot be read"
missing=$(comm -23 "$tmp/logs/dead-reported" "$tmp/logs/dead-file")
[ -z "$missing" ] || fail "points reported but not in the file: $missing"
log "dead node: the file holds $(wc -l < "$tmp/logs/dead-file") points ($(wc -l < "$tmp/logs/dead-reported") reported before the death)"
check file "$R/dead.h5" --hosts node1,node3 --per-node 2 --state running --partial || fail "the dead node's file"
log "mpirun: --resume on the surviving nodes node1,node2"
mpi node1,node2 run "$here/configs/dead.yaml" -o "$R/dead.h5" --resume -q > "$tmp/logs/resume.txt" 2>&1 \
  || fail "the resume exited $? ($(tail -n 3 "$tmp/logs/resume.txt" | tr '\n' ' '))"
# /system is the first run's: the resumed points' ranks ran on node2, the table still says node3.
check file "$R/dead.h5" --hosts node1,node3 --per-node 2 --state complete --resumed || fail "the resumed file"
log "note: the resumed file's /system still names node3 for ranks 2 and 3 (the first run's rows are kept)"

# ============================== the Slurm part's result =========================================
log "mpirun part passed; waiting for the Slurm part"
for i in $(seq 200); do kill -0 $slurm_pid 2>/dev/null || break; sleep 1; done
kill -0 $slurm_pid 2>/dev/null && fail "the Slurm part did not finish within 200 s more"
slurm_pid=0
sed 's/^/    slurm: /' "$tmp/logs/slurm-part.log"
src=$(cat "$tmp/slurm.rc" 2>/dev/null || echo 1)
[ "$src" = $SKIP ] && skip "the Slurm part (the mpirun part passed): $(grep -m1 SKIP "$tmp/logs/slurm-part.log")"
[ "$src" = 0 ] || fail "the Slurm part"
log "PASS"
