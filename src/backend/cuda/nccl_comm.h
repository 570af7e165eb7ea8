#pragma once
// One NCCL communicator over all MPI ranks, created on first use (a collective call: every
// rank must reach it together, as every rank reaches an implementation's prepare()) and kept
// for the rest of the run. The CUDA backend's destructor releases it, while every rank is
// still alive; anything left at process exit is aborted locally.
//
// Every communicator is non-blocking (ncclConfig_t blocking = 0): no NCCL call blocks the host.
// A call that answers ncclInProgress is settled by polling ncclCommGetAsyncError, and the host
// waits for NCCL work by polling the stream or event (wait_stream / wait_event below), checking
// the communicators for asynchronous errors between polls. On a job abort (watchdog deadline or
// a fatal error) the abort hook calls ncclCommAbort on every communicator from whichever thread
// aborts; a thread polling them then stops for good (the aborting thread ends the process).
// Docs: docs/reliability.md.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <functional>

namespace genbench {

class Comm;

// The communicator of `comm`'s ranks on the current CUDA device.
ncclComm_t nccl_comm_for(const Comm& comm);
// A communicator of the same ranks that runs its collectives with exactly `ctas` CTAs
// (ncclConfig_t minCTAs = maxCTAs = ctas; 0 = the default communicator above). One per CTA
// count, created on first use (collective) and cached like the default one.
ncclComm_t nccl_comm_for(const Comm& comm, int ctas);
// Destroys every cached communicator (collective: all ranks call it at the same point; while
// an exception unwinds, the communicators are aborted locally instead).
void release_nccl_comms();
// NCCL's version as ncclGetVersion reports it (e.g. 22805), 0 when unknown.
int nccl_version_code();

// The result `rc` of an NCCL call on the non-blocking communicator `comm`: ncclInProgress is
// polled (ncclCommGetAsyncError) until the call has finished; an error throws genbench::Error
// naming `call`, the rank and host.
void nccl_settle(ncclComm_t comm, ncclResult_t rc, const char* call, const char* file, int line);
#define GENBENCH_CHECK_NCCL_ON(comm, call) ::genbench::nccl_settle((comm), (call), #call, __FILE__, __LINE__)

// Enqueues one collective: `enqueue` makes the NCCL call(s) (a group counts as one) and returns
// the result of the last; it runs under the communicators' lock, so an abort from another
// thread cannot free `comm` under it. Each collective is numbered in enqueue order (ranks in
// step show the same numbers) and recorded for the watchdog as `name` #number
// (activity_device_op). When a fault is armed (nccl_skip_next_collective) the collective is
// left out: nothing is enqueued, the peers wait for it inside NCCL.
void nccl_collective(ncclComm_t comm, const char* name, const std::function<ncclResult_t()>& enqueue);
// Arms the injected fault kind=skip_collective: the next nccl_collective enqueues nothing.
void nccl_skip_next_collective();
// Collectives numbered so far on this rank (skipped ones included).
std::uint64_t nccl_collective_count();

// Waits until all work enqueued on `stream` (wait_stream) or before `event` (wait_event) has
// completed, without blocking inside CUDA: polls cudaStreamQuery / cudaEventQuery with a short
// sleep (5 us doubling to 500 us) and checks every communicator with ncclCommGetAsyncError
// between polls. While waiting, the watchdog's record names the last NCCL collective enqueued
// and its number (when one is outstanding). A failed query throws Error naming the query and
// the CUDA error; an asynchronous NCCL error throws Error naming the collective waited for.
// Use only outside timed regions or after the stop event is recorded: the sleep adds latency.
void wait_stream(cudaStream_t stream);
void wait_event(cudaEvent_t event);
// The same with any query (a test can pass a fake one); `query_call` names it in errors.
void wait_device_work(const std::function<cudaError_t()>& query, const char* query_call);
// Throws Error when a communicator reports an asynchronous error (ncclCommGetAsyncError);
// stops the calling thread for good when the communicators have been aborted.
void nccl_check_async_errors();

}  // namespace genbench
