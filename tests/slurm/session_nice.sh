# shellcheck shell=bash
# Sourced by tests/slurm/slurm_test.sh and tests/multinode/multinode_test.sh (not run on its own).
#   slurm_session_nice CONF NICE   in the background, once a second while the calling script
#                                  runs: every process whose environment has SLURM_CONF=CONF (the
#                                  daemons started with it exported, and their jobs, which inherit
#                                  it) gets its session's scheduling group NICE. Its pid is in
#                                  $slurm_session_nice_pid.
# Why: with autogroup scheduling (/proc/sys/kernel/sched_autogroup_enabled, on in most kernels)
# Linux first shares the CPU between sessions and applies a process's own nice value only inside
# its session. slurmctld, slurmd, each slurmstepd and each job start sessions of their own, so
# `nice -n 10` alone leaves every one of them a full share against the whole ctest session and
# its tests. /proc/PID/autogroup sets the nice of PID's session; where autogroups are off the file
# does not exist and this does nothing.
slurm_session_nice() {
  local conf=$1 nice=$2 owner=$$
  (
    while kill -0 "$owner" 2>/dev/null; do
      for e in $(grep -lzxF "SLURM_CONF=$conf" /proc/[0-9]*/environ 2>/dev/null); do
        ag=${e%/environ}/autogroup
        case $(cat "$ag" 2>/dev/null) in
          *" nice $nice") ;;
          ?*) echo "$nice" 2>/dev/null > "$ag" ;;
        esac
      done
      sleep 1
    done
  ) </dev/null >/dev/null 2>&1 &
  slurm_session_nice_pid=$!
}
