#pragma once
// One NCCL communicator over all MPI ranks, created on first use (a collective call: every
// rank must reach it together, as every rank reaches an implementation's prepare()) and kept
// for the rest of the run. The CUDA backend's destructor releases it, while every rank is
// still alive; anything left at process exit is aborted locally.
#include <nccl.h>

namespace genbench {

class Comm;

// The communicator of `comm`'s ranks on the current CUDA device.
ncclComm_t nccl_comm_for(const Comm& comm);
// A communicator of the same ranks that runs its collectives with exactly `ctas` CTAs
// (ncclConfig_t minCTAs = maxCTAs = ctas; 0 = the default communicator above). One per CTA
// count, created on first use (collective) and cached like the default one.
ncclComm_t nccl_comm_for(const Comm& comm, int ctas);
// Destroys every cached communicator (collective: all ranks call it at the same point).
void release_nccl_comms();
// NCCL's version as ncclGetVersion reports it (e.g. 22805), 0 when unknown.
int nccl_version_code();

}  // namespace genbench
