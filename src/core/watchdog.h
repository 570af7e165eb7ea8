#pragma once
// Hang detection. Each rank records what it is doing: the point it works on and the operation
// it is inside (every MPI collective of Comm, numbered in order, so ranks that run in step show
// the same number). A Watchdog thread aborts the whole job when that record has not changed
// for the deadline: it prints one line naming this rank, host, point, operation and sequence
// number, gives the other ranks' watchdogs a moment to print theirs, runs the registered abort
// hooks (a backend registers one to abort its device communicators) and calls the job's
// abort function (MPI_Abort). Docs: docs/reliability.md.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace genbench {

// The point this rank works on now ("" bench = none).
void activity_point(const std::string& bench, std::size_t index);
void activity_clear_point();

// Marks an operation for its lifetime; nested scopes restore the outer one. `op` must be a
// string literal (it is kept as a pointer). Counted scopes advance the sequence number.
class ActivityScope {
 public:
  explicit ActivityScope(const char* op, bool counted = true);
  // A wait for device work: `op` names the device operation waited for (e.g. "ncclAllReduce")
  // and `number` is its own sequence number (see activity_device_op); not counted among the
  // host operations. Described as "in ncclAllReduce #12 (waiting for the device; ...)".
  ActivityScope(const char* op, std::uint64_t number);
  ~ActivityScope();
  ActivityScope(const ActivityScope&) = delete;
  ActivityScope& operator=(const ActivityScope&) = delete;

 private:
  const char* outer_;
  std::uint64_t outer_number_ = 0;
};

// The last device operation enqueued (e.g. the NCCL collective "ncclAllReduce" and its number,
// numbered in enqueue order so ranks in step show the same number; `op` a string literal).
// `skipped`: an injected fault left it out (the peers wait for it). activity_describe names it
// while it is outstanding or skipped and no wait scope names it already.
void activity_device_op(const char* op, std::uint64_t number, bool skipped = false);
// The device work enqueued so far has completed (a wait returned): the last one is no longer
// outstanding (a skipped one stays named).
void activity_device_done();

// "benchmark 'g' point 3, in MPI_Allreduce (operation #57) for 2.0 s" (what the watchdog
// prints; also used to give runtime errors their context). Empty before any activity.
std::string activity_describe();
// "benchmark 'g' point 3", or "" outside a point.
std::string activity_point_text();
// Sequence number of the last counted operation entered.
std::uint64_t activity_sequence();

// Abort hooks: run once, on the first abort (watchdog or Comm::abort), from whichever thread
// aborts. A hook must not block; e.g. the CUDA backend's hook calls ncclCommAbort on its
// communicators so that ranks stuck inside NCCL return.
int add_abort_hook(std::string name, std::function<void()> hook);  // returns an id
void remove_abort_hook(int id);
void run_abort_hooks();
// True once a job abort has begun (the abort hooks have started running, on any thread).
bool abort_started();
// Blocks for good when an abort has begun: the aborting thread ends the process. A thread that
// wakes because the hooks cancelled its device work calls this instead of carrying on with
// aborted communicators.
void park_if_aborting();

// Waits for device work without blocking inside a driver call: calls poll() until it returns
// true, sleeping between calls (from min_sleep_us, doubling up to max_sleep_us), and calls
// between() after each poll that returned false (it throws to end the wait with an error, e.g.
// on an asynchronous communicator error). Returns the number of polls. Exceptions of poll()
// and between() propagate.
std::uint64_t wait_by_polling(const std::function<bool()>& poll, const std::function<void()>& between,
                              double min_sleep_us = 5, double max_sleep_us = 500);

// The deadline in seconds: GENBENCH_WATCHDOG_S when set, else `configured` (the config's
// settings.watchdog_s); 0 disables. Throws UsageError on a malformed environment value.
double watchdog_deadline(double configured);
constexpr double kDefaultWatchdogSeconds = 300;

class Watchdog {
 public:
  // deadline_s <= 0: no thread, nothing happens. abort_job(code) must not return.
  Watchdog(double deadline_s, std::function<void(int)> abort_job);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  // Seconds between the deadline passing and the abort call at most (poll + report grace).
  double grace_s() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace genbench
