#include "runner/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "backend/backend.h"
#include "backend/ceilings.h"
#include "core/error.h"
#include "core/strings.h"
#include "core/watchdog.h"
#include "io/result_file.h"
#include "io/schema.h"
#include "runner/fault.h"
#include "runner/state_monitor.h"
#include "ops/implementation.h"
#include "sweep/sweep.h"
#include "version.h"

#ifdef GENBENCH_HAVE_CUDA
#include <nvtx3/nvToolsExt.h>
#endif

namespace genbench {

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }

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

// DeviceInfo <-> one string, to gather the system table over MPI.
constexpr char kSep = '\x1f';
std::string serialize(const DeviceInfo& d) {
  std::ostringstream os;
  os << d.rank << kSep << d.local_rank << kSep << d.host << kSep << d.backend << kSep << d.device_index << kSep
     << d.name << kSep << d.uuid << kSep << d.pci_bus_id << kSep << d.sm_count << kSep << d.cc_major << kSep
     << d.cc_minor << kSep << d.memory_bytes << kSep << d.l2_bytes << kSep << d.driver_version << kSep
     << d.runtime_version << kSep << d.nccl_version << kSep << d.cublas_version << kSep << d.cudnn_version << kSep
     << d.mpi_version << kSep << d.hdf5_version;
  return os.str();
}

DeviceInfo deserialize(const std::string& s) {
  std::vector<std::string> f;
  std::string cur;
  for (char c : s) {
    if (c == kSep) {
      f.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  f.push_back(cur);
  f.resize(20);
  auto i = [&](std::size_t k) { return f[k].empty() ? 0LL : std::stoll(f[k]); };
  DeviceInfo d;
  d.rank = static_cast<int>(i(0));
  d.local_rank = static_cast<int>(i(1));
  d.host = f[2];
  d.backend = f[3];
  d.device_index = static_cast<int>(i(4));
  d.name = f[5];
  d.uuid = f[6];
  d.pci_bus_id = f[7];
  d.sm_count = static_cast<int>(i(8));
  d.cc_major = static_cast<int>(i(9));
  d.cc_minor = static_cast<int>(i(10));
  d.memory_bytes = i(11);
  d.l2_bytes = i(12);
  d.driver_version = f[13];
  d.runtime_version = f[14];
  d.nccl_version = f[15];
  d.cublas_version = f[16];
  d.cudnn_version = f[17];
  d.mpi_version = f[18];
  d.hdf5_version = f[19];
  return d;
}

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

// Every rank contributes (severity, reason); all learn the worst severity, and the reason of
// the first rank that has it (prefixed with that rank when the job has several).
std::pair<std::int64_t, std::string> agree(const Comm& comm, std::int64_t sev, const std::string& reason) {
  const std::int64_t worst = comm.max(sev);
  if (worst == kSevOk) return {worst, ""};
  const std::int64_t who = comm.min(sev == worst ? std::int64_t{comm.rank()} : std::int64_t{comm.size()});
  std::string r = comm.rank() == who ? reason : std::string();
  comm.broadcast(r, static_cast<int>(who));
  if (comm.size() > 1) r = strprintf("rank %lld: ", static_cast<long long>(who)) + r;
  return {worst, r};
}

struct Outcome {
  std::string bench, impl, what, status, reason;
  double median = 0, tflops = 0, busbw = 0, algbw = 0;
  std::int64_t peak = 0;
  std::string held;  // what held the card back around or during the timed iterations (holding_reasons)
};

std::string metric_text(const Outcome& o) {
  if (o.status != schema::kOk) return "";
  if (o.tflops >= 1) return strprintf("%.1f TFLOP/s", o.tflops);
  if (o.tflops > 0) return strprintf("%.3g GFLOP/s", o.tflops * 1e3);
  if (o.busbw > 0 || o.algbw > 0) return strprintf("busbw %.2f GB/s", o.busbw);
  return "";
}

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
    std::printf("%-*s  %-*s  %-*.*s  %-11s  %10s  %s\n", int(wb), r.bench.c_str(), int(wi), r.impl.c_str(), int(ww),
                int(ww), r.what.c_str(), r.status.c_str(),
                r.status == schema::kOk ? format_seconds(r.median).c_str() : "-",
                r.status == schema::kOk ? metric_text(r).c_str() : r.reason.substr(0, 70).c_str());
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

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
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
  const bool root = comm.is_root();
  // Reliability: injected faults (tests only; inert unless GENBENCH_INJECT_FAULT is set) and the
  // hang watchdog (docs/reliability.md).
  const FaultPlan fault = FaultPlan::from_env();
  const Watchdog watchdog(watchdog_deadline(cfg.watchdog_s), [&comm](int code) { comm.abort(code); });
  const std::string requested = opts.backend.empty() ? cfg.backend : opts.backend;
  const std::string backend_name = resolve_backend(requested);

  // All ranks must run the same backend.
  const std::int64_t cuda_votes = comm.max(std::int64_t{backend_name == "cuda"});
  const std::int64_t host_votes = comm.max(std::int64_t{backend_name == "host"});
  if (cuda_votes && host_votes)
    throw UsageError("ranks disagree on the backend (some nodes have GPUs, some not); pass --backend explicitly");

  BackendOptions bo;
  bo.local_rank = comm.local_rank();
  bo.local_size = comm.local_size();
  bo.allow_shared_devices = cfg.allow_shared_devices;
  std::unique_ptr<Backend> backend;
  std::string local_error;
  try {
    if (backend_name == "cuda") {
      if (!cuda_backend_built()) throw UsageError("--backend cuda: this build has no CUDA backend");
      backend = make_cuda_backend(bo);
    } else {
      backend = make_host_backend(bo);
    }
  } catch (const std::exception& e) {
    local_error = e.what();
  }
  if (const auto [sev, why] = agree(comm, local_error.empty() ? kSevOk : kSevFailed, local_error); sev != kSevOk)
    throw UsageError(why);

  // System table.
  DeviceInfo me = backend->device_info();
  me.rank = comm.rank();
  me.local_rank = comm.local_rank();
  me.host = comm.host();
  me.mpi_version = Comm::library_version();
  const auto infos_raw = comm.gather(serialize(me));

  // Output file: created or resumed by rank 0; every rank learns what is already done.
  RunAttributes attrs;
  attrs.tool_version = GENBENCH_VERSION;
  attrs.git_revision = GENBENCH_GIT_REVISION;
  attrs.config_text = cfg.text;
  attrs.config_path = cfg.path;
  attrs.config_fingerprint = cfg.fingerprint();
  attrs.command_line = opts.command_line;
  attrs.start_utc = utc_now();
  attrs.world_size = comm.size();
  attrs.backend = backend_name;
  std::unique_ptr<ResultFile> file;
  std::map<std::string, std::set<std::size_t>> done;
  std::string file_error, done_text;
  if (root) {
    try {
      if (opts.resume) {
        file = std::make_unique<ResultFile>(ResultFile::resume(opts.output, attrs, &done));
      } else {
        file = std::make_unique<ResultFile>(ResultFile::create(opts.output, opts.force, attrs));
        std::vector<DeviceInfo> infos;
        for (const auto& s : infos_raw) infos.push_back(deserialize(s));
        file->write_system(infos);
      }
    } catch (const std::exception& e) {
      file_error = e.what();
    }
    for (const auto& [bench, set] : done) {
      done_text += bench + "\n";
      for (auto i : set) done_text += std::to_string(i) + " ";
      done_text += "\n";
    }
  }
  comm.broadcast(file_error);
  if (!file_error.empty()) throw UsageError(file_error);

  // Ceilings (docs/hdf5-schema.md, /ceilings): every rank measures its device; rank 0 stores all
  // rows and keeps the lowest value of each, the bound of the slowest rank.
  std::map<std::string, std::pair<double, std::string>> ceilings;  // name -> (lowest value, unit)
  if (cfg.measure_ceilings && backend->kind() == BackendKind::cuda) {
    std::string rows_text;
    try {
      for (const auto& c : measure_ceilings(*backend))
        rows_text += strprintf("%s%c%.17g%c%s%c%s\n", c.name.c_str(), kSep, c.value, kSep, c.unit.c_str(), kSep,
                               c.detail.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "genbench: rank %d: ceilings not measured: %s\n", comm.rank(), e.what());
      rows_text.clear();
    }
    const auto all_rows = comm.gather(rows_text);
    if (root) {
      std::vector<Ceiling> rows;
      for (std::size_t r = 0; r < all_rows.size(); ++r) {
        std::istringstream in(all_rows[r]);
        std::string line;
        while (std::getline(in, line)) {
          std::vector<std::string> f{std::string()};
          for (char ch : line) {
            if (ch == kSep) f.emplace_back();
            else f.back() += ch;
          }
          if (f.size() != 4) continue;
          Ceiling c;
          c.rank = static_cast<int>(r);
          c.name = f[0];
          c.value = std::stod(f[1]);
          c.unit = f[2];
          c.detail = f[3];
          auto it = ceilings.find(c.name);
          if (it == ceilings.end()) ceilings[c.name] = {c.value, c.unit};
          else it->second.first = std::min(it->second.first, c.value);
          rows.push_back(std::move(c));
        }
      }
      try {
        file->write_ceilings(rows);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "genbench: %s\n", e.what());
        comm.abort(kExitError);
      }
      if (!opts.quiet && !rows.empty()) {
        std::printf("ceilings (lowest over ranks):");
        for (const auto& [name, vu] : ceilings) std::printf(" %s=%.4g %s", name.c_str(), vu.first, vu.second.c_str());
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  }
  comm.broadcast(done_text);
  if (!root) {
    std::istringstream in(done_text);
    std::string bench, line;
    while (std::getline(in, bench) && std::getline(in, line)) {
      std::istringstream nums(line);
      std::size_t v;
      while (nums >> v) done[bench].insert(v);
    }
  }

  std::size_t total = 0, already = 0;
  for (const auto& b : cfg.benchmarks) total += sweep_size(b);
  for (const auto& [k, v] : done) already += v.size();
  if (root && !opts.quiet) {
    std::printf("genbench %s: %zu benchmark(s), %zu points, %d rank(s), %s backend%s -> %s\n", GENBENCH_VERSION,
                cfg.benchmarks.size(), total, comm.size(), backend_name.c_str(),
                opts.resume ? strprintf(", resuming (%zu done)", already).c_str() : "", opts.output.c_str());
    std::printf("rank 0: %s (%s)\n", me.name.c_str(), me.host.c_str());
    std::fflush(stdout);
  }

  const BackendKind kind = backend->kind();
  std::vector<Outcome> outcomes;
  std::size_t counter = already;
  bool any_failed = false;
  bool interrupted = false;

  for (const auto& b : cfg.benchmarks) {
    BenchmarkInfo info;
    info.name = b.name;
    info.op = b.op;
    info.implementations = b.implementations;
    info.sweep_size = sweep_size(b);
    info.max_iterations = b.timing.max_iterations;
    info.timing = b.timing;
    const auto points = expand(b);
    const auto& done_here = done[b.name];
    for (const auto& p : points) {
      if (done_here.count(p.index)) continue;
      if (comm.max(std::int64_t{stop_requested()})) {
        interrupted = true;
        break;
      }
      ++counter;
      activity_point(b.name, p.index);
      fault.at_point_start(comm.rank(), b.name, p.index, *backend);
      PointRecord rec;
      rec.point = p;
      rec.work = b.op->work(p, comm.size());
      const Implementation* impl = Registry::instance().find(b.op->name(), p.impl, kind);
      std::int64_t sev = kSevOk;
      std::string reason;
      Context ctx{*backend, comm, cfg.seed * 1000003ull + p.index * 7919ull + std::hash<std::string>{}(b.name)};
      std::unique_ptr<Case> c;
      std::int64_t free_before = backend->memory_info().free_bytes, delta = 0;
      backend->reset_peak();
      const std::int64_t base = backend->current_bytes();

      if (const std::string why = b.op->skip_reason(p, comm.size()); !why.empty()) {
        sev = kSevSkipped;
        reason = why;
      } else if (!impl) {
        sev = kSevUnsupported;
        reason = "'" + p.impl + "' has no " + backend_name + " implementation";
      } else {
        // An implementation that throws while deciding (a bad setting it reads, a library
        // error) fails this point with the reason; the run goes on.
        try {
          if (std::string why2 = impl->can_implement(p, ctx); !why2.empty()) {
            sev = kSevUnsupported;
            reason = std::move(why2);
          }
        } catch (const std::exception& e) {
          sev = kSevFailed;
          reason = std::string("can_implement: ") + e.what();
        }
      }
      std::tie(sev, reason) = agree(comm, sev, reason);
      if (sev == kSevUnsupported && b.uses_auto && impl) {
        // `auto` means this card's own set: what it cannot run is not part of the run.
        if (root && !opts.quiet)
          std::printf("[%*zu/%zu] %s/%s  %s  left out of the auto set: %s\n", int(std::to_string(total).size()),
                      counter, total, b.name.c_str(), p.impl.c_str(), b.op->describe(p).c_str(), reason.c_str());
        continue;
      }

      // Prepare: allocation failures are skips, anything else is a failure.
      if (sev == kSevOk) {
        try {
          fault.before_prepare(comm.rank(), b.name, p.index);
          c = impl->prepare(p, ctx);
          delta = free_before - backend->memory_info().free_bytes;
        } catch (const OutOfMemory& e) {
          sev = kSevSkipped;
          reason = e.what();
        } catch (const std::exception& e) {
          sev = kSevFailed;
          reason = std::string("prepare: ") + e.what();
        }
        std::tie(sev, reason) = agree(comm, sev, reason);
      }

      // Validate before timing.
      if (sev == kSevOk) {
        Validation v;
        try {
          v = c->validate();
          fault.after_validate(comm.rank(), b.name, p.index, v);
          if (!v.ok) {
            sev = kSevFailed;
            reason = "validation: " + v.detail;
          }
        } catch (const std::exception& e) {
          sev = kSevFailed;
          reason = std::string("validate: ") + e.what();
        }
        rec.validation_error = comm.max(v.error);
        rec.validation_tolerance = v.tolerance;
        std::tie(sev, reason) = agree(comm, sev, reason);
      }

      // Time: warm-up, then barrier-started iterations until the slowest-rank samples converge.
      std::vector<double> mine;
      // Device state (clocks, power, temperature, throttling) just before, during (a StateMonitor
      // sampling every timing.state_period, a few NVML reads each) and just after the timed
      // iterations.
      const DeviceState state_before = backend->sample_state();
      DeviceState state_during;
      // An error here is fatal for the job: the other ranks are inside the same timed
      // iterations (and their collectives), so it cannot become a per-point status without
      // leaving them waiting. main() reports it with rank, host and point and aborts.
      if (sev == kSevOk) {
        {
          auto timer = backend->make_timer();
          const double per_run = std::max(1, c->iterations_per_run());  // graph replays time K iterations
          // Warm-up: the count, then (warmup_time) until the slowest rank's clock says so; every
          // rank takes the same decision, and the collective max only once the count is reached.
          const auto warm0 = std::chrono::steady_clock::now();
          for (int w = 0;; ++w) {
            if (w >= b.timing.warmup) {
              if (b.timing.warmup_time_s <= 0) break;
              const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - warm0).count();
              if (warmup_done(b.timing, w, comm.max(elapsed))) break;
            }
            comm.barrier();
            c->run();
            backend->synchronize();
          }
          StopCriterion stop(b.timing);
          // launches_per_sample: run() back to back inside one timed region (as nccl-tests times
          // several operations per sample), the sample divided by the count.
          const int launches = std::max(1, b.timing.launches_per_sample);
          const PointRange nvtx_range(b.name, p.index);
          std::optional<StateMonitor> monitor;
          if (b.timing.state_period_s > 0)
            monitor.emplace(*backend, std::chrono::milliseconds(std::max<long long>(
                                          1, std::llround(b.timing.state_period_s * 1e3))));
          for (;;) {
            comm.barrier();
            timer->start();
            for (int l = 0; l < launches; ++l) c->run();
            timer->stop();
            const double t = timer->seconds() / (per_run * launches);
            mine.push_back(t);
            if (stop.add(comm.max(t))) break;
          }
          if (monitor) state_during = monitor->finish();
          fault.after_timing(comm.rank(), b.name, p.index, state_during);
          rec.stop_reason = stop.reason();
          rec.slowest = summarize(stop.samples());
          rec.variant = c->variant();
          // The op's extra columns, from this rank's case (rank 0's are stored).
          const auto columns = b.op->extra_columns();
          rec.extra.assign(columns.size(), std::nan(""));
          for (const auto& [name, value] : c->extra_metrics())
            for (std::size_t e = 0; e < columns.size(); ++e)
              if (columns[e].first == name) rec.extra[e] = value;
        }
      }
      const DeviceState state_after = backend->sample_state();
      const DeviceState state = merge_states(state_before, state_during, state_after);
      c.reset();
      rec.status = severity_status(sev);
      rec.reason = reason;
      if (sev == kSevFailed) any_failed = true;

      // Gather this point's per-rank data to rank 0.
      const std::int64_t n = comm.max(static_cast<std::int64_t>(mine.size()));
      mine.resize(static_cast<std::size_t>(n), std::nan(""));
      const auto all = comm.gather(mine);
      const auto mem = comm.gather(std::vector<std::int64_t>{backend->peak_bytes() - base, delta});
      const auto states = comm.gather(std::vector<double>{
          state.sm_clock_mhz, state.mem_clock_mhz, state.power_w, state.temperature_c,
          static_cast<double>(state.throttle_reasons), state.throttled ? 1.0 : 0.0, state.valid ? 1.0 : 0.0});
      if (root) {
        for (int r = 0; r < comm.size(); ++r) {
          const double* x = states.data() + 7 * static_cast<std::size_t>(r);
          DeviceState rank;
          rank.sm_clock_mhz = x[0];
          rank.mem_clock_mhz = x[1];
          rank.power_w = x[2];
          rank.temperature_c = x[3];
          rank.throttle_reasons = static_cast<std::uint64_t>(x[4]);
          rank.throttled = x[5] != 0;
          rank.valid = x[6] != 0;
          add_rank_state(rec.state, rank);
        }
        rec.samples.assign(static_cast<std::size_t>(comm.size()), {});
        rec.ranks.resize(static_cast<std::size_t>(comm.size()));
        for (int r = 0; r < comm.size(); ++r) {
          auto first = all.begin() + static_cast<std::ptrdiff_t>(r) * n;
          rec.samples[static_cast<std::size_t>(r)].assign(first, first + n);
          rec.ranks[static_cast<std::size_t>(r)].summary = summarize(sev == kSevOk ? rec.samples[static_cast<std::size_t>(r)] : std::vector<double>{});
          rec.ranks[static_cast<std::size_t>(r)].peak_memory_bytes = mem[static_cast<std::size_t>(2 * r)];
          rec.ranks[static_cast<std::size_t>(r)].memory_delta_bytes = mem[static_cast<std::size_t>(2 * r + 1)];
        }
        if (sev != kSevOk) rec.samples.assign(static_cast<std::size_t>(comm.size()), {});
        const double med = rec.slowest.median;
        if (sev == kSevOk && med > 0) {
          if (rec.work.flops > 0) rec.tflops = rec.work.flops / med / 1e12;
          if (rec.work.busbw_factor > 0) {
            rec.algbw_gbps = rec.work.bytes / med / 1e9;
            rec.busbw_gbps = rec.algbw_gbps * rec.work.busbw_factor;
          }
          // Rate over the device ceiling the op names (TFLOP/s against a GEMM rate, bytes moved
          // per second against the copy bandwidth); NaN without one.
          if (const auto it = ceilings.find(b.op->ceiling(p)); it != ceilings.end() && it->second.first > 0) {
            if (it->second.second == "TFLOP/s" && rec.tflops > 0) rec.ceiling_fraction = rec.tflops / it->second.first;
            if (it->second.second == "GB/s" && rec.work.bytes > 0)
              rec.ceiling_fraction = rec.work.bytes / med / 1e9 / it->second.first;
          }
        }
        std::string write_error;
        try {
          file->append(info, rec);
        } catch (const std::exception& e) {
          write_error = e.what();
        }
        if (!write_error.empty()) {
          std::fprintf(stderr, "genbench: %s\n", write_error.c_str());
          comm.abort(kExitError);
        }
        Outcome o{b.name, p.impl, b.op->describe(p), rec.status, rec.reason, med, rec.tflops, rec.busbw_gbps,
                  rec.algbw_gbps, 0, rec.state.throttled ? holding_reasons(rec.state.throttle_reasons) : ""};
        if (!opts.quiet) {
          std::printf("[%*zu/%zu] %s/%s  %s  %s", int(std::to_string(total).size()), counter, total, b.name.c_str(),
                      p.impl.c_str(), o.what.c_str(), o.status.c_str());
          if (sev == kSevOk) std::printf("  %s  %s", format_seconds(med).c_str(), metric_text(o).c_str());
          else std::printf(": %s", reason.c_str());
          if (sev == kSevOk && !o.held.empty()) std::printf("  (held back: %s)", o.held.c_str());
          std::printf("\n");
          std::fflush(stdout);
        }
        outcomes.push_back(std::move(o));
      }
    }
    if (interrupted) break;
  }

  activity_clear_point();
  if (root) {
    file->finish(interrupted ? "interrupted" : "complete", utc_now());
    if (!opts.quiet) print_summary(outcomes, opts.output, backend_name);
    if (interrupted)
      std::fprintf(stderr, "genbench: interrupted; %s holds every completed point. Continue with: genbench run %s -o %s --resume\n",
                   opts.output.c_str(), cfg.path.c_str(), opts.output.c_str());
  }
  if (interrupted) return kExitInterrupted;
  return comm.max(std::int64_t{any_failed}) ? kExitFailedPoints : kExitOk;
}

}  // namespace genbench
