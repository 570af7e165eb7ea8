#include "core/watchdog.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "core/error.h"
#include "core/strings.h"

namespace genbench {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

struct Activity {
  std::atomic<const char*> op{nullptr};       // operation inside now, or nullptr
  std::atomic<const char*> last_op{nullptr};  // the last operation entered
  std::atomic<std::uint64_t> seq{0};
  std::atomic<std::uint64_t> op_number{0};      // own number of the device operation `op` (0: none)
  std::atomic<const char*> device_op{nullptr};  // last device operation enqueued
  std::atomic<std::uint64_t> device_number{0};
  std::atomic<int> device_state{0};       // 0 none, 1 outstanding, 2 completed, 3 skipped
  std::atomic<std::int64_t> since_ns{0};  // last change of any of this
  std::mutex mu;                          // guards the point
  std::string bench;
  std::size_t index = 0;
};

Activity& activity() {
  static Activity a;
  return a;
}

struct Hooks {
  std::mutex mu;
  std::map<int, std::pair<std::string, std::function<void()>>> hooks;
  int next = 1;
  std::atomic<bool> ran{false};
};

Hooks& hooks() {
  static Hooks h;
  return h;
}

}  // namespace

void activity_point(const std::string& bench, std::size_t index) {
  Activity& a = activity();
  {
    std::lock_guard<std::mutex> lock(a.mu);
    a.bench = bench;
    a.index = index;
  }
  a.since_ns.store(now_ns());
}

void activity_clear_point() { activity_point("", 0); }

ActivityScope::ActivityScope(const char* op, bool counted)
    : outer_(activity().op.load()), outer_number_(activity().op_number.load()) {
  Activity& a = activity();
  if (counted) a.seq.fetch_add(1);
  a.op_number.store(0);
  a.op.store(op);
  a.last_op.store(op);
  a.since_ns.store(now_ns());
}

ActivityScope::ActivityScope(const char* op, std::uint64_t number)
    : outer_(activity().op.load()), outer_number_(activity().op_number.load()) {
  Activity& a = activity();
  a.op_number.store(number);
  a.op.store(op);
  a.since_ns.store(now_ns());
}

ActivityScope::~ActivityScope() {
  Activity& a = activity();
  a.op_number.store(outer_number_);
  a.op.store(outer_);
  a.since_ns.store(now_ns());
}

void activity_device_op(const char* op, std::uint64_t number, bool skipped) {
  Activity& a = activity();
  a.device_op.store(op);
  a.device_number.store(number);
  a.device_state.store(skipped ? 3 : 1);
}

void activity_device_done() {
  int outstanding = 1;
  activity().device_state.compare_exchange_strong(outstanding, 2);
}

std::string activity_point_text() {
  Activity& a = activity();
  std::lock_guard<std::mutex> lock(a.mu);
  return a.bench.empty() ? std::string() : strprintf("benchmark '%s' point %zu", a.bench.c_str(), a.index);
}

std::uint64_t activity_sequence() { return activity().seq.load(); }

std::string activity_describe() {
  Activity& a = activity();
  std::string where;
  {
    std::lock_guard<std::mutex> lock(a.mu);
    if (!a.bench.empty()) where = strprintf("benchmark '%s' point %zu", a.bench.c_str(), a.index);
  }
  const double idle = static_cast<double>(now_ns() - a.since_ns.load()) * 1e-9;
  const char* op = a.op.load();
  const char* last = a.last_op.load();
  const unsigned long long seq = a.seq.load();
  const unsigned long long number = a.op_number.load();
  std::string what;
  if (op && number)
    what =
        strprintf("in %s #%llu (waiting for the device; last host operation #%llu) for %.1f s", op, number, seq, idle);
  else if (op) what = strprintf("in %s (operation #%llu) for %.1f s", op, seq, idle);
  else if (last) what = strprintf("after %s (operation #%llu), no operation for %.1f s", last, seq, idle);
  // The last device operation, unless the wait above names it already.
  const char* dev = a.device_op.load();
  const unsigned long long dev_number = a.device_number.load();
  const int dev_state = a.device_state.load();
  if (dev && (dev_state == 1 || dev_state == 3) && !(op == dev && number == dev_number)) {
    what += strprintf("%slast device operation %s #%llu %s", what.empty() ? "" : "; ", dev, dev_number,
                      dev_state == 3 ? "skipped (GENBENCH_INJECT_FAULT)" : "not yet completed");
  }
  if (where.empty()) return what;
  return what.empty() ? where : where + ", " + what;
}

int add_abort_hook(std::string name, std::function<void()> hook) {
  Hooks& h = hooks();
  std::lock_guard<std::mutex> lock(h.mu);
  const int id = h.next++;
  h.hooks[id] = {std::move(name), std::move(hook)};
  return id;
}

void remove_abort_hook(int id) {
  Hooks& h = hooks();
  std::lock_guard<std::mutex> lock(h.mu);
  h.hooks.erase(id);
}

void run_abort_hooks() {
  Hooks& h = hooks();
  if (h.ran.exchange(true)) return;
  std::map<int, std::pair<std::string, std::function<void()>>> copy;
  {
    std::lock_guard<std::mutex> lock(h.mu);
    copy = h.hooks;
  }
  for (auto& [id, hook] : copy) {
    try {
      hook.second();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "genbench: abort hook '%s' failed: %s\n", hook.first.c_str(), e.what());
    }
  }
}

bool abort_started() { return hooks().ran.load(); }

void park_if_aborting() {
  if (!abort_started()) return;
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

std::uint64_t wait_by_polling(const std::function<bool()>& poll, const std::function<void()>& between,
                              double min_sleep_us, double max_sleep_us) {
  double sleep_us = std::max(0.0, min_sleep_us);
  for (std::uint64_t polls = 1;; ++polls) {
    if (poll()) return polls;
    if (between) between();
    std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(sleep_us));
    sleep_us = std::min(std::max(sleep_us * 2, 1.0), std::max(max_sleep_us, min_sleep_us));
  }
}

double watchdog_deadline(double configured) {
  if (const char* env = std::getenv("GENBENCH_WATCHDOG_S"); env && *env) {
    double v = 0;
    if (!parse_number(env, v) || !(v >= 0) || v > 1e7)
      throw UsageError(std::string("GENBENCH_WATCHDOG_S='") + env +
                       "' is not a number of seconds (0 disables the watchdog)");
    return v;
  }
  return configured;
}

struct Watchdog::State {
  double deadline = 0, poll = 1, report = 1;
  std::function<void(int)> abort_job;
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::thread thread;

  void loop() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stop) {
      cv.wait_for(lock, std::chrono::duration<double>(poll));
      if (stop) return;
      const double idle = static_cast<double>(now_ns() - activity().since_ns.load()) * 1e-9;
      if (idle < deadline) continue;
      const auto& id = process_identity();
      std::fprintf(stderr,
                   "genbench: watchdog: rank %d on %s made no progress for %.1f s (deadline %g s): %s; "
                   "aborting the job\n",
                   id.rank, id.host.c_str(), idle, deadline, activity_describe().c_str());
      std::fflush(stderr);
      // Let the other ranks' watchdogs report where they are before the job goes down.
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::duration<double>(report));
      run_abort_hooks();
      abort_job(1);  // kExitError
      std::_Exit(1);
    }
  }
};

Watchdog::Watchdog(double deadline_s, std::function<void(int)> abort_job) {
  if (!(deadline_s > 0)) return;
  s_ = std::make_unique<State>();
  s_->deadline = deadline_s;
  s_->poll = std::clamp(deadline_s / 10, 0.05, 1.0);
  s_->report = std::clamp(deadline_s / 4, 0.2, 2.0);
  s_->abort_job = std::move(abort_job);
  activity().since_ns.store(now_ns());
  s_->thread = std::thread([st = s_.get()] { st->loop(); });
}

Watchdog::~Watchdog() {
  if (!s_) return;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->stop = true;
  }
  s_->cv.notify_all();
  s_->thread.join();
}

double Watchdog::grace_s() const { return s_ ? s_->poll + s_->report : 0; }

}  // namespace genbench
