#include "cli/commands.h"

#include <hdf5.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <map>

#include "backend/backend.h"
#include "backend/ceilings.h"
#include "config/config.h"
#include "core/error.h"
#include "core/strings.h"
#include "io/columns.h"
#include "io/describe.h"
#include "ops/implementation.h"
#include "ops/op_doc.h"
#include "runner/runner.h"
#include "sweep/sweep.h"

namespace genbench {

namespace {

int env_world_size() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
    if (const char* s = std::getenv(v)) return std::max(1, std::atoi(s));
  return 1;
}

}  // namespace

namespace {

// The points of a selected config, one line each, as `genbench run --list` prints them.
void print_points(const Config& cfg) {
  std::size_t total = 0;
  for (const auto& b : cfg.benchmarks) {
    const auto points = expand(b);
    std::printf("%s (op %s, %zu points%s)\n", b.name.c_str(), b.op->name().c_str(), points.size(),
                b.timing.rounds > 1 ? strprintf(", %d rounds in shuffled orders", b.timing.rounds).c_str() : "");
    for (const auto& p : points) {
      std::string line = strprintf("  %-6zu %-12s", p.index, p.impl.c_str());
      for (std::size_t i = 0; i < p.values.size(); ++i)
        line += " " + b.op->axes()[i].name + "=" + to_string(p.values[i]);
      std::printf("%s\n", line.c_str());
    }
    total += points.size();
  }
  std::printf("%zu points in %zu benchmark(s)%s\n", total, cfg.benchmarks.size(),
              cfg.selection.empty() ? "" : (", selection: " + cfg.selection).c_str());
}

}  // namespace

int cmd_run(const RunArgs& args, const Comm& comm) {
  Config cfg = load_config(args.config);
  apply_selection(cfg, args.selection);
  if (args.list) {
    if (comm.is_root()) print_points(cfg);
    return kExitOk;
  }
  // Validate every point's legality for this world size before any device work.
  for (const auto& b : cfg.benchmarks)
    for (const auto& p : expand(b))
      if (const std::string why = b.op->check(p, comm.size()); !why.empty())
        throw UsageError(strprintf("%s:%d: benchmark '%s', point %zu: %s", cfg.path.c_str(), b.line, b.name.c_str(),
                                   p.index, why.c_str()));
  RunOptions opts;
  opts.output = args.output.empty() ? cfg.output : args.output;
  if (opts.output.empty()) throw UsageError("no output file: pass -o FILE or set settings.output in the config");
  opts.backend = args.backend;
  opts.force = args.force;
  opts.resume = args.resume;
  opts.quiet = args.quiet;
  opts.command_line = args.command_line;
  if (opts.force && opts.resume) throw UsageError("--force and --resume exclude each other");
  return run_benchmarks(cfg, opts, comm);  // the stop handlers are in place (main, before MPI)
}

int cmd_validate(const ValidateArgs& args, const Comm& comm) {
  Config cfg = load_config(args.config);
  apply_selection(cfg, args.selection);
  const int world = args.world_size > 0 ? args.world_size : std::max(comm.size(), env_world_size());
  const std::string backend = resolve_backend(args.backend == "auto" ? cfg.backend : args.backend);
  const BackendKind kind = backend == "cuda" ? BackendKind::cuda : BackendKind::host;
  std::unique_ptr<Backend> host = make_host_backend({});
  std::size_t total = 0, runnable = 0;
  std::printf("%s: valid config, %zu benchmark(s)%s; checked for %d rank(s) on the %s backend\n", cfg.path.c_str(),
              cfg.benchmarks.size(), cfg.selection.empty() ? "" : (" (selection: " + cfg.selection + ")").c_str(),
              world, backend.c_str());
  for (const auto& b : cfg.benchmarks) {
    const auto points = expand(b);
    std::map<std::string, std::size_t> skipped;  // reason -> count
    for (const auto& p : points) {
      if (const std::string why = b.op->check(p, world); !why.empty())
        throw UsageError(strprintf("%s:%d: benchmark '%s', point %zu: %s", cfg.path.c_str(), b.line, b.name.c_str(),
                                   p.index, why.c_str()));
      std::string reason = b.op->skip_reason(p, world);
      const Implementation* impl = Registry::instance().find(b.op->name(), p.impl, kind);
      if (reason.empty() && !impl) reason = "'" + p.impl + "' has no " + backend + " implementation";
      if (reason.empty() && kind == BackendKind::host) {
        // Host support needs no device; CUDA support is decided at run time (no GPU is touched).
        Context ctx{*host, comm, cfg.seed};
        reason = impl->can_implement(p, ctx);
      }
      if (reason.empty()) ++runnable;
      else ++skipped[reason];
    }
    total += points.size();
    std::printf("  %-24s op=%-10s %6zu points  implementations: %s\n", b.name.c_str(), b.op->name().c_str(),
                points.size(), join(b.implementations, ", ").c_str());
    for (const auto& [why, n] : skipped) std::printf("      %zu would not run: %s\n", n, why.c_str());
  }
  std::printf("%zu points in all, %zu would run here\n", total, runnable);
  return kExitOk;
}

int cmd_list(ListFormat format) {
  if (format != ListFormat::text) {
    const std::string text = format == ListFormat::markdown ? config_markdown() : registry_json();
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  const auto& reg = Registry::instance();
  const bool cuda_built = cuda_backend_built();
  const int gpus = cuda_device_count();
  std::printf("backends: host (available)%s\n",
              cuda_built ? strprintf(", cuda (built; %d device(s) visible)", gpus).c_str() : ", cuda (not built)");
  for (const Op* op : all_ops()) {
    std::printf("\nop %s: %s\n  implementations:\n", op->name().c_str(), op->summary().c_str());
    for (const auto* impl : reg.for_op(op->name())) {
      const bool here = impl->backend() == BackendKind::host || (cuda_built && gpus > 0);
      std::printf("    %-12s %-5s %-13s %s\n", impl->name().c_str(), backend_name(impl->backend()),
                  here ? "available" : "no device", impl->description().c_str());
    }
    std::printf("  axes:\n");
    for (const auto& a : op->axes()) {
      std::string values;
      if (!a.choices.empty()) values = join(a.choices, "|");
      else if (!a.allowed.empty()) {
        std::vector<std::string> v;
        for (auto x : a.allowed) v.push_back(std::to_string(x));
        values = join(v, "|");
      }
      // The default with the axis's unit ("1024 tokens", "1048576 B").
      const std::string def = to_string(a.default_value) + (a.unit.empty() ? "" : " " + a.unit);
      std::printf("    %-12s default %-16s %s%s%s\n", a.name.c_str(), def.c_str(), a.tuning ? "(tuning) " : "",
                  a.help.c_str(), values.empty() ? "" : (" [" + values + "]").c_str());
    }
  }
  std::printf("\nceilings (measured at the start of a run; settings.measure_ceilings):\n");
  for (const auto* s : CeilingRegistry::instance().all())
    std::printf("  %-12s %-5s %-13s %s\n", s->info.name.c_str(), backend_name(s->info.backend),
                s->measure ? "built" : "not built", s->info.description.c_str());
  return kExitOk;
}

int cmd_schema(bool markdown) {
  const std::string text = markdown ? columns::schema_markdown() : columns::schema_text();
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

int cmd_describe(const DescribeArgs& args) {
  std::string text;
  if (const Op* op = find_op(args.what)) {
    text = args.json ? describe_op_json(*op) : describe_op_text(*op);
  } else {
    struct stat st {};
    const bool looks_like_file = ::stat(args.what.c_str(), &st) == 0 || args.what.find('/') != std::string::npos ||
                                 (args.what.size() > 3 && args.what.compare(args.what.size() - 3, 3, ".h5") == 0);
    if (!looks_like_file) {
      const std::string guess = closest_match(args.what, op_names());
      throw UsageError("describe: '" + args.what + "' is no op and no file" +
                       (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                       "; the ops: " + join(op_names(), ", ") + "; or give a result file (.h5)");
    }
    text = args.json ? describe_file_json(args.what) : describe_file_text(args.what);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

int cmd_info(const Comm& comm) {
  const std::string backend_name = resolve_backend("auto");
  BackendOptions bo;
  bo.local_rank = comm.local_rank();
  bo.local_size = comm.local_size();
  bo.allow_shared_devices = true;
  auto backend = backend_name == "cuda" ? make_cuda_backend(bo) : make_host_backend(bo);
  DeviceInfo d = backend->device_info();
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
  const auto lines = comm.gather(strprintf(
      "rank %d (local %d) on %s: %s backend, %s; %d SMs/cores, cc %d.%d, %s memory, %s L2, driver %s, runtime %s, "
      "NCCL %s, cuBLAS %s, cuDNN %s",
      comm.rank(), comm.local_rank(), comm.host().c_str(), backend_name.c_str(), d.name.c_str(), d.sm_count, d.cc_major,
      d.cc_minor, format_bytes(static_cast<double>(d.memory_bytes)).c_str(),
      format_bytes(static_cast<double>(d.l2_bytes)).c_str(), d.driver_version.empty() ? "-" : d.driver_version.c_str(),
      d.runtime_version.empty() ? "-" : d.runtime_version.c_str(),
      d.nccl_version.empty() ? "-" : d.nccl_version.c_str(), d.cublas_version.empty() ? "-" : d.cublas_version.c_str(),
      d.cudnn_version.empty() ? "-" : d.cudnn_version.c_str()));
  if (comm.is_root()) {
    std::printf("genbench %s\n", GENBENCH_VERSION_STRING);
    std::printf("MPI: %s; HDF5 %u.%u.%u; yaml-cpp; CUDA backend %s; %d CUDA device(s) visible\n",
                Comm::library_version().c_str(), maj, min, rel, cuda_backend_built() ? "built" : "not built",
                cuda_device_count());
    for (const auto& l : lines) std::printf("%s\n", l.c_str());
  }
  return kExitOk;
}

}  // namespace genbench
