// The run as a recipe of named phases (docs/reliability.md has the failure rules):
//   choose the backend -> gather the system -> open or resume the file -> ceilings -> for each
//   point: decide -> prepare -> validate -> measure -> gather -> record -> finish.
// Every rank runs every phase; decisions are agreed over ranks (agree()), and rank 0 alone
// writes the file. Nothing here knows an op: metrics, columns and progress text come from the
// op's declarations (src/ops/op.h).
#include "runner/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "backend/backend.h"
#include "backend/ceilings.h"
#include "core/error.h"
#include "core/strings.h"
#include "core/watchdog.h"
#include "io/result_file.h"
#include "io/schema.h"
#include "ops/implementation.h"
#include "runner/exchange.h"
#include "runner/fault.h"
#include "runner/state_monitor.h"
#include "sweep/sweep.h"
#include "version.h"

#ifdef GENBENCH_HAVE_CUDA
#include <nvtx3/nvToolsExt.h>
#endif

namespace genbench {

namespace {

volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_started = 0;  // the run's watchdog is up (Run::execute)
// The first signal asks for a stop at the next point boundary. A second one before the run has
// started (MPI_Init, loading the config: nothing watches those) takes the signal's default
// action, so a start-up that hangs still ends on the second Ctrl-C.
extern "C" void on_stop_signal(int sig) {
  if (g_stop && !g_started) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
    raise(sig);
    return;
  }
  g_stop = 1;
}

// NVTX range "genbench:<benchmark>/<point index>" around a point's timed iterations, so that a
// profiler can select the measured kernels (launch/genbench-profile). Nothing without CUDA.
struct PointRange {
#ifdef GENBENCH_HAVE_CUDA
  PointRange(const std::string& bench, std::size_t point) {
    nvtxRangePushA(("genbench:" + bench + "/" + std::to_string(point)).c_str());
  }
  ~PointRange() { nvtxRangePop(); }
#else
  PointRange(const std::string&, std::size_t) {}
  ~PointRange() {}
#endif
  PointRange(const PointRange&) = delete;
  PointRange& operator=(const PointRange&) = delete;
};

// Severity order used to agree on a point's status across ranks.
enum Severity : std::int64_t { kSevOk = 0, kSevUnsupported = 1, kSevSkipped = 2, kSevFailed = 3 };
const char* severity_status(std::int64_t s) {
  switch (s) {
    case kSevUnsupported: return schema::kUnsupported;
    case kSevSkipped: return schema::kSkipped;
    case kSevFailed: return schema::kFailed;
    default: return schema::kOk;
  }
}

// A point's status so far on this rank: the worst severity seen, and why.
struct Verdict {
  std::int64_t sev = kSevOk;
  std::string reason;
  bool ok() const { return sev == kSevOk; }
  void set(std::int64_t s, std::string why) {
    sev = s;
    reason = std::move(why);
  }
};

// Every rank contributes its verdict; all learn the worst severity, and the reason of the first
// rank that has it (prefixed with that rank when the job has several).
Verdict agree(const Comm& comm, const Verdict& v) {
  const std::int64_t worst = comm.max(v.sev);
  if (worst == kSevOk) return {};
  const std::int64_t who = comm.min(v.sev == worst ? std::int64_t{comm.rank()} : std::int64_t{comm.size()});
  std::string r = comm.rank() == who ? v.reason : std::string();
  comm.broadcast(r, static_cast<int>(who));
  if (comm.size() > 1) r = strprintf("rank %lld: ", static_cast<long long>(who)) + r;
  return {worst, r};
}

// One line of the summary table.
struct Outcome {
  std::string bench, impl, what, status, reason;
  double median = 0;
  std::string rate;  // the headline metric, formatted; "" when none
  std::string held;  // what held the card back during the timed iterations (holding_reasons)
};

void print_summary(const std::vector<Outcome>& rows, const std::string& path, const std::string& backend) {
  std::size_t wb = 9, wi = 4, ww = 5;
  for (const auto& r : rows) {
    wb = std::max(wb, r.bench.size());
    wi = std::max(wi, r.impl.size());
    ww = std::min<std::size_t>(60, std::max(ww, r.what.size()));
  }
  std::printf("\nSummary (%s backend, %zu points) -> %s\n", backend.c_str(), rows.size(), path.c_str());
  std::printf("%-*s  %-*s  %-*s  %-11s  %10s  %s\n", int(wb), "benchmark", int(wi), "impl", int(ww), "point", "status",
              "median", "rate");
  // Unsupported points (an implementation of another backend, a precision the card lacks)
  // are counted, not listed: the file keeps each with its reason.
  std::map<std::string, int> counts;
  for (const auto& r : rows) {
    counts[r.status]++;
    if (r.status == schema::kUnsupported) continue;
    const bool ok = r.status == schema::kOk;
    std::printf("%-*s  %-*s  %-*.*s  %-11s  %10s  %s\n", int(wb), r.bench.c_str(), int(wi), r.impl.c_str(), int(ww),
                int(ww), r.what.c_str(), r.status.c_str(), ok ? format_seconds(r.median).c_str() : "-",
                ok ? r.rate.c_str() : r.reason.substr(0, 70).c_str());
  }
  std::string tally;
  for (const auto& [k, v] : counts) tally += strprintf("%s%d %s", tally.empty() ? "" : ", ", v, k.c_str());
  if (counts.count(schema::kUnsupported))
    tally += " (unsupported points are not listed above; the file and the progress lines give each reason)";
  std::printf("%s\n", tally.c_str());
  // Points whose card was held back (NVML clocks-event reasons) while they were timed: their
  // rates are the capped card's. Listed apart, so that the table's rows keep their columns.
  std::map<std::string, int> held;
  for (const auto& r : rows)
    if (r.status == schema::kOk && !r.held.empty()) held[r.held]++;
  for (const auto& [why, n] : held)
    std::printf("%d point%s timed with the card held back (%s): the file's throttle_reasons column has each\n", n,
                n == 1 ? "" : "s", why.c_str());
  std::fflush(stdout);
}

// What one point carries from phase to phase on this rank.
struct PointRun {
  const BenchmarkConfig& bench;
  const Point& point;
  std::size_t round = 0, order = 0;  // which round, and the point's place in that round's order
  const Implementation* impl = nullptr;
  Verdict verdict;
  std::unique_ptr<Case> c;
  Validation validation;
  std::vector<double> samples;  // this rank's per-iteration seconds
  std::string stop_reason;
  Summary slowest;
  int retimed = 0;  // timings thrown away because the card was held back (timing.retime_held)
  std::string variant;
  exchange::RankPoint mine;
  std::int64_t free_before = 0, base_bytes = 0;
  PointRun(const BenchmarkConfig& b, const Point& p) : bench(b), point(p) {}
};

class Run {
 public:
  Run(const Config& cfg, const RunOptions& opts, const Comm& comm)
      : cfg_(cfg), opts_(opts), comm_(comm), root_(comm.is_root()), fault_(FaultPlan::from_env()) {}

  int execute() {
    // The hang watchdog (docs/reliability.md) for the whole run.
    const Watchdog watchdog(watchdog_deadline(cfg_.watchdog_s), [this](int code) { comm_.abort(code); });
    g_started = 1;
    choose_backend();
    gather_system();
    open_file();
    ceilings();
    exchange::broadcast_done(comm_, done_);
    announce();
    for (const auto& b : cfg_.benchmarks)
      if (!run_benchmark(b)) break;
    return finish();
  }

 private:
  // --- run phases -------------------------------------------------------------------------

  void choose_backend() {
    const std::string requested = opts_.backend.empty() ? cfg_.backend : opts_.backend;
    backend_name_ = resolve_backend(requested);
    // All ranks must run the same backend.
    const std::int64_t cuda_votes = comm_.max(std::int64_t{backend_name_ == "cuda"});
    const std::int64_t host_votes = comm_.max(std::int64_t{backend_name_ == "host"});
    if (cuda_votes && host_votes)
      throw UsageError("ranks disagree on the backend (some nodes have GPUs, some not); pass --backend explicitly");
    BackendOptions bo;
    bo.local_rank = comm_.local_rank();
    bo.local_size = comm_.local_size();
    bo.allow_shared_devices = cfg_.allow_shared_devices;
    Verdict v;
    try {
      if (backend_name_ == "cuda") {
        if (!cuda_backend_built()) throw UsageError("--backend cuda: this build has no CUDA backend");
        backend_ = make_cuda_backend(bo);
      } else {
        backend_ = make_host_backend(bo);
      }
    } catch (const std::exception& e) {
      v.set(kSevFailed, e.what());
    }
    if (const Verdict all = agree(comm_, v); !all.ok()) throw UsageError(all.reason);
  }

  void gather_system() {
    me_ = backend_->device_info();
    me_.rank = comm_.rank();
    me_.local_rank = comm_.local_rank();
    me_.host = comm_.host();
    me_.mpi_version = Comm::library_version();
    system_ = exchange::gather_devices(comm_, me_);
  }

  // Rank 0 creates or resumes the file; every rank learns whether that worked.
  void open_file() {
    RunAttributes attrs;
    attrs.tool_version = GENBENCH_VERSION;
    attrs.git_revision = GENBENCH_GIT_REVISION;
    attrs.source_tree = GENBENCH_SOURCE_TREE;
    attrs.config_text = cfg_.text;
    attrs.config_path = cfg_.path;
    attrs.config_fingerprint = cfg_.fingerprint();
    attrs.command_line = opts_.command_line;
    attrs.selection = cfg_.selection;
    attrs.start_utc = utc_now();
    attrs.world_size = comm_.size();
    attrs.backend = backend_name_;
    std::string error;
    if (root_) {
      try {
        if (opts_.resume) {
          file_ = std::make_unique<ResultFile>(ResultFile::resume(opts_.output, attrs, &done_));
        } else {
          file_ = std::make_unique<ResultFile>(ResultFile::create(opts_.output, opts_.force, attrs));
          file_->write_system(system_);
        }
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    comm_.broadcast(error);
    if (!error.empty()) throw UsageError(error);
  }

  // Ceilings (docs/hdf5-schema.md, /ceilings): every rank measures its device; rank 0 stores
  // all rows and keeps the lowest value of each, the bound of the slowest rank.
  void ceilings() {
    // The same on every rank (one build, one backend kind), so all of them gather or none.
    if (!cfg_.measure_ceilings || CeilingRegistry::instance().runnable(backend_->kind()).empty()) return;
    std::vector<std::string> failures;
    std::vector<Ceiling> mine = measure_ceilings(*backend_, &failures);
    for (const auto& why : failures)
      std::fprintf(stderr, "genbench: rank %d: ceilings not measured: %s\n", comm_.rank(), why.c_str());
    for (auto& c : mine) c.rank = comm_.rank();
    const auto rows = exchange::gather_ceilings(comm_, mine);
    if (!root_) return;
    for (const auto& c : rows) {
      auto it = ceilings_.find(c.name);
      if (it == ceilings_.end()) ceilings_[c.name] = {c.value, c.unit};
      else it->second.first = std::min(it->second.first, c.value);
    }
    write_or_abort([&] { file_->write_ceilings(rows); });
    if (!opts_.quiet && !rows.empty()) {
      std::printf("ceilings (lowest over ranks):");
      for (const auto& [name, vu] : ceilings_) std::printf(" %s=%.4g %s", name.c_str(), vu.first, vu.second.c_str());
      std::printf("\n");
      std::fflush(stdout);
    }
  }

  void announce() {
    for (const auto& b : cfg_.benchmarks)
      total_ += sweep_size(b) * static_cast<std::size_t>(std::max(1, b.timing.rounds));
    for (const auto& [k, v] : done_) counter_ += v.size();
    if (!root_ || opts_.quiet) return;
    std::printf("genbench %s: %zu benchmark(s), %zu points, %d rank(s), %s backend%s -> %s\n", GENBENCH_VERSION,
                cfg_.benchmarks.size(), total_, comm_.size(), backend_name_.c_str(),
                opts_.resume ? strprintf(", resuming (%zu done)", counter_).c_str() : "", opts_.output.c_str());
    std::printf("rank 0: %s (%s)\n", me_.name.c_str(), me_.host.c_str());
    std::fflush(stdout);
  }

  // Returns false when the run was interrupted.
  bool run_benchmark(const BenchmarkConfig& b) {
    BenchmarkInfo info;
    info.name = b.name;
    info.op = b.op;
    info.implementations = b.implementations;
    info.sweep_size = sweep_size(b);
    info.timing = b.timing;
    info.tags = b.tags;
    const auto& done_here = done_[b.name];
    const std::size_t rounds = static_cast<std::size_t>(std::max(1, b.timing.rounds));
    for (std::size_t round = 0; round < rounds; ++round) {
      const auto order = round_order(b, round, cfg_.seed);
      for (std::size_t k = 0; k < order.size(); ++k) {
        const Point& p = order[k];
        if (done_here.count(round * info.sweep_size + p.index)) continue;  // the file's row (ResultFile::append)
        if (comm_.max(std::int64_t{stop_requested()})) {
          interrupted_ = true;
          return false;
        }
        run_point(info, b, p, round, k);
      }
    }
    return true;
  }

  int finish() {
    activity_clear_point();
    if (root_) {
      write_or_abort([&] { file_->finish(interrupted_ ? "interrupted" : "complete", utc_now()); });
      if (!opts_.quiet) print_summary(outcomes_, opts_.output, backend_name_);
      if (interrupted_)
        std::fprintf(stderr,
                     "genbench: interrupted; %s holds every completed point. Continue with: genbench run %s -o %s "
                     "--resume\n",
                     opts_.output.c_str(), cfg_.path.c_str(), opts_.output.c_str());
    }
    if (interrupted_) return kExitInterrupted;
    return comm_.max(std::int64_t{any_failed_}) ? kExitFailedPoints : kExitOk;
  }

  // --- point phases -----------------------------------------------------------------------

  void run_point(const BenchmarkInfo& info, const BenchmarkConfig& b, const Point& p, std::size_t round,
                 std::size_t order) {
    ++counter_;
    activity_point(b.name, p.index);
    fault_.at_point_start(comm_.rank(), b.name, p.index, *backend_);
    PointRun run(b, p);
    run.round = round;
    run.order = order;
    // Each round draws fresh inputs (round 0's seed is the one a run of one round has).
    Context ctx{*backend_, comm_,
                cfg_.seed * 1000003ull + p.index * 7919ull + std::hash<std::string>{}(b.name) + round * 104729ull};
    run.free_before = backend_->memory_info().free_bytes;
    backend_->reset_peak();
    run.base_bytes = backend_->current_bytes();
    decide(run, ctx);
    if (run.verdict.sev == kSevUnsupported && b.uses_auto && run.impl) {
      // `auto` means this card's own set: what it cannot run is not part of the run.
      if (root_ && !opts_.quiet)
        std::printf("[%*zu/%zu] %s/%s  %s  left out of the auto set: %s\n", width(), counter_, total_, b.name.c_str(),
                    p.impl.c_str(), b.op->describe(p).c_str(), run.verdict.reason.c_str());
      return;
    }
    prepare(run, ctx);
    validate(run);
    measure(run);
    run.c.reset();
    if (run.verdict.sev == kSevFailed) any_failed_ = true;
    const auto ranks = gather(run);
    if (root_) record(info, run, ranks);
  }

  // Decide: can this point run here (the op's skip rules, an implementation for this backend,
  // its can_implement)?
  void decide(PointRun& run, const Context& ctx) {
    const auto& b = run.bench;
    const auto& p = run.point;
    run.impl = Registry::instance().find(b.op->name(), p.impl, backend_->kind());
    if (const std::string why = b.op->skip_reason(p, comm_.size()); !why.empty()) {
      run.verdict.set(kSevSkipped, why);
    } else if (!run.impl) {
      run.verdict.set(kSevUnsupported, "'" + p.impl + "' has no " + backend_name_ + " implementation");
    } else {
      // An implementation that throws while deciding (a bad setting, a library error) fails
      // this point with the reason; the run goes on.
      try {
        if (std::string reason = run.impl->can_implement(p, ctx); !reason.empty())
          run.verdict.set(kSevUnsupported, std::move(reason));
      } catch (const std::exception& e) {
        run.verdict.set(kSevFailed, std::string("can_implement: ") + e.what());
      }
    }
    run.verdict = agree(comm_, run.verdict);
  }

  // Prepare: allocation failures are skips, anything else is a failure.
  void prepare(PointRun& run, Context& ctx) {
    if (!run.verdict.ok()) return;
    try {
      fault_.before_prepare(comm_.rank(), run.bench.name, run.point.index);
      run.c = run.impl->prepare(run.point, ctx);
      run.mine.memory_delta = run.free_before - backend_->memory_info().free_bytes;
    } catch (const OutOfMemory& e) {
      run.verdict.set(kSevSkipped, e.what());
    } catch (const Unsupported& e) {
      run.verdict.set(kSevUnsupported, e.what());
    } catch (const std::exception& e) {
      run.verdict.set(kSevFailed, std::string("prepare: ") + e.what());
    }
    run.verdict = agree(comm_, run.verdict);
  }

  // Validate before timing; a failed validation is recorded, never hidden.
  void validate(PointRun& run) {
    if (!run.verdict.ok()) return;
    try {
      run.validation = run.c->validate();
      fault_.after_validate(comm_.rank(), run.bench.name, run.point.index, run.validation);
      if (!run.validation.ok) run.verdict.set(kSevFailed, "validation: " + run.validation.detail);
    } catch (const std::exception& e) {
      run.verdict.set(kSevFailed, std::string("validate: ") + e.what());
    }
    run.validation.error = comm_.max(run.validation.error);
    run.verdict = agree(comm_, run.verdict);
  }

  // Measure: warm-up, then barrier-started iterations until the slowest rank's samples
  // converge; the device state before, during (a StateMonitor) and after. An error here is
  // fatal for the job: the other ranks are inside the same iterations (and their
  // collectives), so it cannot become a per-point status. main() reports it and aborts.
  // A point timed while any rank's card was held back (power cap, thermal, hardware slowdown)
  // is timed again after timing.cooldown of rest, up to timing.retime_held times; every rank
  // takes the same decision. The last timing is the one kept; `retimed` counts the others.
  void measure(PointRun& run) {
    DeviceState before = backend_->sample_state(), during, after;
    if (run.verdict.ok()) {
      const TimingPolicy& t = run.bench.timing;
      for (int attempt = 0;; ++attempt) {
        if (attempt > 0) before = backend_->sample_state();
        during = time_once(run, t);
        after = backend_->sample_state();
        const DeviceState seen = merge_states(before, during, after);
        const bool held = comm_.max(std::int64_t{seen.throttled ? 1 : 0}) != 0;
        if (!held || attempt >= t.retime_held) break;
        ++run.retimed;
        if (root_ && !opts_.quiet) {
          std::printf("[%*zu/%zu] %s/%s  %s  held back while timed; timing it again after %gs of rest (%d/%d)\n",
                      width(), counter_, total_, run.bench.name.c_str(), run.point.impl.c_str(),
                      run.bench.op->describe(run.point).c_str(), t.cooldown_s, run.retimed, t.retime_held);
          std::fflush(stdout);
        }
        rest(t.cooldown_s);
      }
      run.variant = run.c->variant();
      run.mine.extra = run.c->extra_metrics();
      run.mine.chosen = run.c->chosen();
    } else {
      after = backend_->sample_state();
    }
    run.mine.state = merge_states(before, during, after);
    run.mine.peak_bytes = backend_->peak_bytes() - run.base_bytes;
  }

  // One timing of a point: warm-up, then barrier-started samples until the slowest rank's
  // samples converge. Returns the device state sampled during them (a StateMonitor).
  DeviceState time_once(PointRun& run, const TimingPolicy& t) {
    auto timer = backend_->make_timer();
    const double per_run = std::max(1, run.c->iterations_per_run());  // graph replays time K iterations
    run.samples.clear();
    warm_up(run, t);
    StopCriterion stop(t);
    // launches_per_sample: run() back to back inside one timed region (as nccl-tests times
    // several operations per sample), the sample divided by the count.
    const int launches = std::max(1, t.launches_per_sample);
    const PointRange nvtx_range(run.bench.name, run.point.index);
    std::optional<StateMonitor> monitor;
    if (t.state_period_s > 0)
      monitor.emplace(*backend_,
                      std::chrono::milliseconds(std::max<long long>(1, std::llround(t.state_period_s * 1e3))));
    for (;;) {
      // cache: cold: the flush is queued before the timed region, on the same stream
      if (t.cold_cache) backend_->flush_cache();
      comm_.barrier();
      timer->start();
      for (int l = 0; l < launches; ++l) run.c->run();
      timer->stop();
      const double s = timer->seconds() / (per_run * launches);
      run.samples.push_back(s);
      if (stop.add(comm_.max(s))) break;
    }
    DeviceState during;
    if (monitor) during = monitor->finish();
    fault_.after_timing(comm_.rank(), run.bench.name, run.point.index, during);
    run.stop_reason = stop.reason();
    run.slowest = summarize(stop.samples());
    return during;
  }

  // The cool-down before a re-timing; a stop signal cuts it short (the run stops after the
  // point, as always).
  static void rest(double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!stop_requested() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  // Warm-up: the count, then (warmup_time) until the slowest rank's clock says so; every rank
  // takes the same decision, and the collective max only once the count is reached.
  void warm_up(PointRun& run, const TimingPolicy& t) {
    const auto warm0 = std::chrono::steady_clock::now();
    for (int w = 0;; ++w) {
      if (w >= t.warmup) {
        if (t.warmup_time_s <= 0) break;
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - warm0).count();
        if (warmup_done(t, w, comm_.max(elapsed))) break;
      }
      comm_.barrier();
      run.c->run();
      backend_->synchronize();
    }
  }

  // Gather: every rank's samples (NaN-padded to the longest) and its RankPoint to rank 0.
  struct Gathered {
    std::vector<std::vector<double>> samples;  // [rank][iteration]
    std::vector<exchange::RankPoint> ranks;
  };
  Gathered gather(PointRun& run) {
    const std::int64_t n = comm_.max(static_cast<std::int64_t>(run.samples.size()));
    run.samples.resize(static_cast<std::size_t>(n), std::nan(""));
    const auto flat = comm_.gather(run.samples);
    Gathered g;
    g.ranks = exchange::gather_point(comm_, run.mine);
    if (!root_) return g;
    for (int r = 0; r < comm_.size(); ++r) {
      const auto first = flat.begin() + static_cast<std::ptrdiff_t>(r) * n;
      g.samples.emplace_back(first, first + n);
    }
    return g;
  }

  // Record (rank 0): the point's row from the op's declarations, appended to the file, and the
  // progress line.
  void record(const BenchmarkInfo& info, PointRun& run, const Gathered& g) {
    const auto& b = run.bench;
    const auto& p = run.point;
    // What the case reported must be what the op's columns expect (ops/op_columns.h).
    const CaseReport report{g.ranks.front().chosen, g.ranks.front().extra};
    if (run.verdict.ok() && run.impl) {
      const std::string bad = b.op->check_report(report, run.impl->info().tuning);
      if (!bad.empty()) {
        run.verdict.set(kSevFailed, (comm_.size() > 1 ? "rank 0: " : "") + bad);
        any_failed_ = true;
      }
    }
    const bool ok = run.verdict.ok();
    PointRecord rec;
    rec.point = p;
    rec.round = run.round;
    rec.order = run.order;
    rec.work = b.op->work(p, comm_.size());
    rec.status = severity_status(run.verdict.sev);
    rec.reason = run.verdict.reason;
    rec.variant = run.variant;
    rec.stop_reason = run.stop_reason;
    rec.retimed = run.retimed;
    rec.slowest = run.slowest;
    rec.validation_error = run.validation.error;
    rec.validation_tolerance = run.validation.tolerance;
    rec.samples = ok ? g.samples : std::vector<std::vector<double>>(static_cast<std::size_t>(comm_.size()));
    for (std::size_t r = 0; r < g.ranks.size(); ++r) {
      RankRecord rr;
      rr.summary = summarize(ok ? g.samples[r] : std::vector<double>{});
      rr.peak_memory_bytes = g.ranks[r].peak_bytes;
      rr.memory_delta_bytes = g.ranks[r].memory_delta;
      rec.ranks.push_back(rr);
      add_rank_state(rec.state, g.ranks[r].state);
    }
    const double med = rec.slowest.median;
    const auto metrics = b.op->metrics();
    rec.op_values = b.op->values(p, comm_.size(), rec.work, ok ? med : 0.0, ok ? report : CaseReport{});
    rec.ceiling_fraction = ceiling_fraction(*b.op, p, rec.work, ok ? med : 0.0);
    write_or_abort([&] { file_->append(info, rec); });

    Outcome o{b.name,
              p.impl,
              b.op->describe(p),
              rec.status,
              rec.reason,
              med,
              "",
              rec.state.throttled ? holding_reasons(rec.state.throttle_reasons) : ""};
    if (ok && !metrics.empty()) o.rate = format_metric(metrics.front(), metric_value(metrics.front(), rec.work, med));
    if (!opts_.quiet) {
      std::printf("[%*zu/%zu] %s/%s  %s%s  %s", width(), counter_, total_, b.name.c_str(), p.impl.c_str(),
                  o.what.c_str(), b.timing.rounds > 1 ? strprintf("  (round %zu)", run.round + 1).c_str() : "",
                  o.status.c_str());
      if (ok) std::printf("  %s  %s", format_seconds(med).c_str(), o.rate.c_str());
      else std::printf(": %s", rec.reason.c_str());
      if (ok && !o.held.empty()) std::printf("  (held back: %s)", o.held.c_str());
      std::printf("\n");
      std::fflush(stdout);
    }
    outcomes_.push_back(std::move(o));
  }

  // --- helpers ----------------------------------------------------------------------------

  // The first metric of the ceiling's unit over the ceiling the op names; NaN without one.
  double ceiling_fraction(const Op& op, const Point& p, const Work& w, double seconds) const {
    const CeilingId id = op.ceiling(p);
    if (id.none()) return std::nan("");
    const auto it = ceilings_.find(id.name);
    if (it == ceilings_.end() || !(it->second.first > 0)) return std::nan("");
    for (const auto& m : op.metrics())
      if (m.unit == it->second.second) return metric_value(m, w, seconds) / it->second.first;
    return std::nan("");
  }

  template <class F>
  void write_or_abort(F&& write) const {
    try {
      write();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "genbench: %s\n", e.what());
      comm_.abort(kExitError);
    }
  }

  int width() const { return static_cast<int>(std::to_string(total_).size()); }

  const Config& cfg_;
  const RunOptions& opts_;
  const Comm& comm_;
  const bool root_;
  // Injected faults (tests only; inert unless GENBENCH_INJECT_FAULT is set).
  const FaultPlan fault_;
  std::string backend_name_;
  std::unique_ptr<Backend> backend_;
  DeviceInfo me_;
  std::vector<DeviceInfo> system_;  // rank 0: every rank's
  std::unique_ptr<ResultFile> file_;
  exchange::DoneSet done_;
  std::map<std::string, std::pair<double, std::string>> ceilings_;  // name -> (lowest value, unit)
  std::size_t total_ = 0, counter_ = 0;
  std::vector<Outcome> outcomes_;
  bool any_failed_ = false, interrupted_ = false;
};

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  // Restarted system calls: a signal that arrives inside a library call (MPI's start-up, a
  // file write) does not make that call fail with EINTR; the flag is read between points.
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGUSR1}) sigaction(s, &sa, nullptr);
}

bool stop_requested() { return g_stop != 0; }
void clear_stop_request() { g_stop = 0; }

std::string resolve_backend(const std::string& requested) {
  if (requested == "host") return "host";
  if (requested == "cuda") return "cuda";
  return cuda_backend_built() && cuda_device_count() > 0 ? "cuda" : "host";
}

int run_benchmarks(const Config& cfg, const RunOptions& opts, const Comm& comm) {
  return Run(cfg, opts, comm).execute();
}

}  // namespace genbench
