#include "backend/cuda/nccl_comm.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "backend/cuda/check.h"
#include "comm/comm.h"
#include "core/strings.h"
#include "core/watchdog.h"

namespace genbench {

namespace {

constexpr std::chrono::seconds kAbortWait{5};

struct CommCache {
  std::mutex mu;  // guards comms and aborted: the abort hook may run on the watchdog thread
  std::map<std::pair<const Comm*, int>, ncclComm_t> comms;  // (ranks, CTA limit; 0 = default)
  bool aborted = false;
  ~CommCache() {
    // Process exit: peers may be gone already, so nothing that waits for them.
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [k, c] : comms) ncclCommAbort(c);
    comms.clear();
  }
};

CommCache& cache() {
  static CommCache c;
  return c;
}

// The collectives of this rank (main thread only) and the fault that skips one.
struct Collectives {
  std::uint64_t count = 0;
  const char* last = nullptr;  // last one enqueued, while outstanding
  std::uint64_t last_number = 0;
  std::atomic<bool> skip_next{false};
};

Collectives& collectives() {
  static Collectives c;
  return c;
}

// Under the cache lock: stops here for good when the communicators were aborted (the
// aborting thread ends the process); never returns in that case.
void park_if_aborted(std::unique_lock<std::mutex>& lock) {
  if (!cache().aborted) return;
  lock.unlock();
  park_if_aborting();
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // aborted without a job abort: not reached
}

// Polls `comm` until its pending operation has finished; returns the final state.
ncclResult_t poll_comm(ncclComm_t comm) {
  ncclResult_t state = ncclInProgress;
  wait_by_polling(
      [&] {
        std::unique_lock<std::mutex> lock(cache().mu);
        park_if_aborted(lock);
        const ncclResult_t rc = ncclCommGetAsyncError(comm, &state);
        if (rc != ncclSuccess) state = rc;
        return state != ncclInProgress;
      },
      nullptr, 20, 1000);
  return state;
}

}  // namespace

void nccl_settle(ncclComm_t comm, ncclResult_t rc, const char* call, const char* file, int line) {
  if (rc == ncclInProgress) rc = poll_comm(comm);
  if (rc != ncclSuccess) throw_call_error(call, ncclGetErrorString(rc), file, line);
}

ncclComm_t nccl_comm_for(const Comm& comm) { return nccl_comm_for(comm, 0); }

ncclComm_t nccl_comm_for(const Comm& comm, int ctas) {
  CommCache& cc = cache();
  {
    std::unique_lock<std::mutex> lock(cc.mu);
    park_if_aborted(lock);
    if (auto it = cc.comms.find({&comm, ctas}); it != cc.comms.end()) return it->second;
  }
  ncclUniqueId id{};
  std::string blob;
  if (comm.is_root()) {
    GENBENCH_CHECK_NCCL(ncclGetUniqueId(&id));
    blob.assign(reinterpret_cast<const char*>(&id), sizeof(id));
  }
  comm.broadcast(blob, 0);
  if (blob.size() != sizeof(id)) throw Error("NCCL bootstrap: the unique id did not arrive intact");
  std::memcpy(&id, blob.data(), sizeof(id));
  // On a job abort (watchdog deadline or a fatal error on this rank) abort the communicators
  // first, so a rank stuck inside an NCCL kernel returns before the process is ended. Non-
  // blocking communicators make this legal from another thread while this one polls them.
  // The aborts run on a helper thread given kAbortWait: on a device whose context is already
  // lost an abort might not return, and the job must end regardless.
  static const int hook = add_abort_hook("ncclCommAbort", [] {
    struct Done {
      std::mutex mu;
      std::condition_variable cv;
      bool done = false;
    };
    auto done = std::make_shared<Done>();
    std::thread([done] {
      CommCache& all = cache();
      {
        std::lock_guard<std::mutex> lock(all.mu);
        all.aborted = true;
        for (auto& [k, cm] : all.comms) ncclCommAbort(cm);
        all.comms.clear();
      }
      std::lock_guard<std::mutex> lock(done->mu);
      done->done = true;
      done->cv.notify_all();
    }).detach();
    std::unique_lock<std::mutex> lock(done->mu);
    if (!done->cv.wait_for(lock, kAbortWait, [&] { return done->done; }))
      std::fprintf(stderr, "genbench: ncclCommAbort did not return within %lld s; ending the job regardless\n",
                   static_cast<long long>(kAbortWait.count()));
  });
  (void)hook;

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  if (ctas > 0) {
    config.minCTAs = ctas;
    config.maxCTAs = ctas;
  }
  ncclComm_t c = nullptr;
  // The communicator joins the cache before its initialisation has finished, so that an abort
  // while a peer never arrives cancels it too.
  const ActivityScope init("ncclCommInitRankConfig");
  ncclResult_t rc;
  {
    std::unique_lock<std::mutex> lock(cc.mu);
    park_if_aborted(lock);
    rc = ncclCommInitRankConfig(&c, comm.size(), id, comm.rank(), &config);
    if (c && (rc == ncclSuccess || rc == ncclInProgress)) cc.comms.emplace(std::make_pair(&comm, ctas), c);
  }
  if (rc == ncclInProgress) rc = poll_comm(c);
  if (rc != ncclSuccess) {
    {
      std::lock_guard<std::mutex> lock(cc.mu);
      cc.comms.erase({&comm, ctas});
    }
    if (c) ncclCommAbort(c);
    throw_call_error("ncclCommInitRankConfig", ncclGetErrorString(rc), __FILE__, __LINE__);
  }
  return c;
}

void release_nccl_comms() {
  CommCache& cc = cache();
  std::map<std::pair<const Comm*, int>, ncclComm_t> comms;
  {
    std::unique_lock<std::mutex> lock(cc.mu);
    if (cc.aborted) return;
    comms.swap(cc.comms);
  }
  // Unwinding after an error: the peers may never reach this point (finalising waits for the
  // communicator to be quiescent on every rank), so abort locally.
  // On a device whose context is lost (a fault) even that is skipped: the process is ending.
  if (std::uncaught_exceptions() > 0) {
    cudaEvent_t probe = nullptr;
    if (cudaEventCreateWithFlags(&probe, cudaEventDisableTiming) != cudaSuccess) return;
    cudaEventDestroy(probe);
    for (auto& [k, c] : comms) ncclCommAbort(c);
    return;
  }
  // Finalize flushes outstanding work (non-blocking: polled), then destroy frees.
  const ActivityScope finalize("ncclCommFinalize");
  for (auto& entry : comms) {
    ncclComm_t c = entry.second;  // a named copy: lambdas cannot capture structured bindings before C++20
    ncclResult_t rc = ncclCommFinalize(c);
    if (rc == ncclInProgress) {
      ncclResult_t state = ncclInProgress;
      wait_by_polling([&] { return ncclCommGetAsyncError(c, &state) != ncclSuccess || state != ncclInProgress; },
                      nullptr, 20, 1000);
      rc = state;
    }
    if (rc == ncclSuccess) ncclCommDestroy(c);
    else ncclCommAbort(c);
  }
}

int nccl_version_code() {
  int v = 0;
  return ncclGetVersion(&v) == ncclSuccess ? v : 0;
}

void nccl_collective(ncclComm_t comm, const char* name, const std::function<ncclResult_t()>& enqueue) {
  Collectives& st = collectives();
  const std::uint64_t number = ++st.count;
  if (st.skip_next.exchange(false)) {
    activity_device_op(name, number, true);
    return;
  }
  ncclResult_t rc;
  {
    std::unique_lock<std::mutex> lock(cache().mu);
    park_if_aborted(lock);
    rc = enqueue();
  }
  st.last = name;
  st.last_number = number;
  activity_device_op(name, number);
  if (rc == ncclInProgress) rc = poll_comm(comm);
  if (rc != ncclSuccess)
    throw_call_error(
        name, strprintf("%s (collective #%llu)", ncclGetErrorString(rc), static_cast<unsigned long long>(number)),
        __FILE__, __LINE__);
}

void nccl_skip_next_collective() { collectives().skip_next.store(true); }

std::uint64_t nccl_collective_count() { return collectives().count; }

void nccl_check_async_errors() {
  std::unique_lock<std::mutex> lock(cache().mu);
  park_if_aborted(lock);
  for (auto& [k, c] : cache().comms) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t rc = ncclCommGetAsyncError(c, &state);
    if (rc != ncclSuccess) state = rc;
    if (state == ncclSuccess || state == ncclInProgress) continue;
    const Collectives& st = collectives();
    const std::string what =
        st.last ? strprintf(" while waiting for %s #%llu", st.last, static_cast<unsigned long long>(st.last_number))
                : std::string();
    lock.unlock();
    throw_call_error("ncclCommGetAsyncError", std::string(ncclGetErrorString(state)) + what, __FILE__, __LINE__);
  }
}

void wait_device_work(const std::function<cudaError_t()>& query, const char* query_call) {
  Collectives& st = collectives();
  // Name the NCCL collective waited for, with its number, while one is outstanding.
  std::unique_ptr<ActivityScope> scope = st.last ? std::make_unique<ActivityScope>(st.last, st.last_number)
                                                 : std::make_unique<ActivityScope>(query_call, false);
  cudaError_t rc = cudaSuccess;
  wait_by_polling(
      [&] {
        rc = query();
        return rc != cudaErrorNotReady;
      },
      [] { nccl_check_async_errors(); });
  park_if_aborting();  // woken because the hooks aborted the communicators: the job is ending
  if (rc != cudaSuccess) throw_call_error(query_call, cudaGetErrorString(rc), __FILE__, __LINE__);
  st.last = nullptr;
  activity_device_done();
}

void wait_stream(cudaStream_t stream) {
  wait_device_work([stream] { return cudaStreamQuery(stream); }, "cudaStreamQuery");
}

void wait_event(cudaEvent_t event) {
  wait_device_work([event] { return cudaEventQuery(event); }, "cudaEventQuery");
}

}  // namespace genbench
