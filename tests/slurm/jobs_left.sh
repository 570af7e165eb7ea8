# shellcheck shell=bash
# Sourced by tests/slurm/slurm_test.sh and tests/multinode/multinode_test.sh (not run on its own).
#   slurm_jobs_left IDS [RUNNER...]   true while any of the jobs (comma-separated ids) is queued
#                                     or running; false once squeue answers with no line for them
#                                     or no longer knows the ids. A squeue that does not answer
#                                     (its 20 s timeout, a busy controller) counts as "still
#                                     there", so a loaded machine never reads as "the jobs are
#                                     done". RUNNER: a command prefix that runs squeue elsewhere.
slurm_jobs_left() {
  local ids=$1 out rc
  shift
  out=$("$@" timeout 20 squeue -h -j "$ids" -o '%i' 2>&1)
  rc=$?
  if [ $rc -eq 0 ]; then
    [ -n "$out" ]
    return
  fi
  ! grep -q 'Invalid job id' <<< "$out"
}
