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
  std::atomic<const char*> op{nullptr};      // operation inside now, or nullptr
  std::atomic<const char*> last_op{nullptr};  // the last operation entered
  std::atomic<std::uint64_t> seq{0};
  std::atomic<std::int64_t> since_ns{0};     // last change of any of this
  std::mutex mu;                              // guards the point
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

ActivityScope::ActivityScope(const char* op, bool counted) : outer_(activity().op.load()) {
  Activity& a = activity();
  if (counted) a.seq.fetch_add(1);
  a.op.store(op);
  a.last_op.store(op);
  a.since_ns.store(now_ns());
}

ActivityScope::~ActivityScope() {
  Activity& a = activity();
  a.op.store(outer_);
  a.since_ns.store(now_ns());
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
  std::string what;
  if (op) what = strprintf("in %s (operation #%llu) for %.1f s", op, seq, idle);
  else if (last) what = strprintf("after %s (operation #%llu), no operation for %.1f s", last, seq, idle);
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

double watchdog_deadline(double configured) {
  if (const char* env = std::getenv("GENBENCH_WATCHDOG_S"); env && *env) {
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    if (end == env || *end != '\0' || !(v >= 0) || v > 1e7)
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
