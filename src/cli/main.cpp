// genbench: one binary, subcommands run | validate | list | info | export | schema | describe.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

#include "backend/backend.h"
#include "cli/commands.h"
#include "comm/comm.h"
#include "core/error.h"
#include "core/watchdog.h"
#include "io/export.h"
#include "runner/runner.h"

int main(int argc, char** argv) {
  using namespace genbench;
  CLI::App app{"genbench: GPU benchmarks for attention, GEMM and NCCL collectives, one HDF5 file per run"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(GENBENCH_VERSION_STRING));

  RunArgs run_args;
  auto* run = app.add_subcommand("run", "run every benchmark of a config and write the HDF5 result file");
  run->add_option("config", run_args.config, "YAML config")->required();
  run->add_option("-o,--output", run_args.output, "result file (default: the config's settings.output)");
  run->add_option("--backend", run_args.backend, "auto | cuda | host (overrides the config)")
      ->check(CLI::IsMember({"auto", "cuda", "host"}));
  run->add_flag("--force", run_args.force, "overwrite an existing result file");
  run->add_flag("--resume", run_args.resume, "continue an interrupted run in the same file");
  run->add_flag("-q,--quiet", run_args.quiet, "no progress lines or summary");
  run->add_option("-b,--benchmark", run_args.selection.benchmarks,
                  "run only the benchmarks of this name or glob (repeatable)");
  run->add_option("-a,--axis", run_args.selection.axes,
                  "axis=value[,value...]: these values replace the axis's in the selected benchmarks (repeatable)");
  run->add_option("--rounds", run_args.selection.rounds,
                  "run every selected benchmark's points N times, each round in its own shuffled order "
                  "(timing.rounds)")
      ->check(CLI::Range(1, kMaxRounds));
  run->add_flag("--list", run_args.list, "print the points that would run (after -b/-a) and run nothing");

  ValidateArgs val_args;
  auto* validate = app.add_subcommand("validate", "check a config and show what it would run; touches no GPU");
  validate->add_option("config", val_args.config, "YAML config")->required();
  validate->add_option("--world-size", val_args.world_size, "ranks the job will have (default: this job's)");
  validate->add_option("--backend", val_args.backend, "backend to check support against")
      ->check(CLI::IsMember({"auto", "cuda", "host"}));
  validate->add_option("-b,--benchmark", val_args.selection.benchmarks, "as for run");
  validate->add_option("-a,--axis", val_args.selection.axes, "as for run");
  validate->add_option("--rounds", val_args.selection.rounds, "as for run")->check(CLI::Range(1, kMaxRounds));

  std::string export_file, export_out;
  bool export_csv_flag = false, export_json_flag = false;
  auto* exp = app.add_subcommand("export", "write a result file's tables as CSV or JSON");
  exp->add_option("file", export_file, "result file (.h5)")->required();
  auto* csv_opt = exp->add_flag("--csv", export_csv_flag, "one CSV per benchmark, plus system.csv, in a folder");
  auto* json_opt = exp->add_flag("--json", export_json_flag, "one JSON document");
  csv_opt->excludes(json_opt);
  exp->add_option("-o,--output", export_out, "folder (--csv, default FILE-csv/) or file (--json, default stdout)");

  auto* list = app.add_subcommand("list", "ops, implementations, dtypes, and what this machine supports");
  bool list_markdown = false, list_json = false;
  auto* list_md_opt = list->add_flag("--markdown", list_markdown, "the per-op sections of docs/config.md");
  list->add_flag("--json", list_json, "ops, axes, implementations, host examples and ceiling sources as JSON")
      ->excludes(list_md_opt);
  auto* info = app.add_subcommand("info", "this node's devices and library versions");
  bool schema_markdown = false;
  auto* schema_cmd = app.add_subcommand("schema", "every result-file dataset and column, with type, unit and meaning");
  schema_cmd->add_flag("--markdown", schema_markdown, "the tables of docs/hdf5-schema.md");
  DescribeArgs describe_args;
  auto* describe_cmd = app.add_subcommand(
      "describe", "one op (axes, implementations, result columns, ceiling, analysis) or one result file");
  describe_cmd->add_option("what", describe_args.what, "an op's name, or a result file (.h5)")->required();
  describe_cmd->add_flag("--json", describe_args.json, "the same as JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }

  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);

  int code = kExitOk;
  try {
    if (*exp) {
      if (!export_csv_flag && !export_json_flag) throw UsageError("export: choose --csv or --json");
      if (export_csv_flag) {
        std::string dir = export_out;
        if (dir.empty())
          dir = (export_file.size() > 3 && export_file.substr(export_file.size() - 3) == ".h5"
                     ? export_file.substr(0, export_file.size() - 3)
                     : export_file) +
                "-csv";
        export_csv(export_file, dir);
        std::fprintf(stderr, "genbench: wrote CSV tables to %s/\n", dir.c_str());
      } else {
        export_json(export_file, export_out.empty() ? "-" : export_out);
      }
      return kExitOk;
    }
    if (*list) return cmd_list(list_markdown ? ListFormat::markdown : list_json ? ListFormat::json : ListFormat::text);
    if (*schema_cmd) return cmd_schema(schema_markdown);
    if (*describe_cmd) return cmd_describe(describe_args);
    // A run's stop signals are caught before MPI starts: a scheduler's SIGUSR1 that lands while
    // the ranks are still starting (MPI_Init waits for every rank) then stops the run before its
    // first point, with an interrupted file, instead of killing the rank.
    if (*run) install_stop_handlers();
    Comm comm(&argc, &argv);
    try {
      if (*validate) {
        code = cmd_validate(val_args, comm);
      } else if (*info) {
        code = cmd_info(comm);
      } else if (*run) {
        run_args.command_line = command_line;
        code = cmd_run(run_args, comm);
      }
    } catch (const UsageError& e) {
      if (comm.is_root()) std::fprintf(stderr, "genbench: %s\n", e.what());
      code = kExitUsage;
    } catch (const std::exception& e) {
      // A runtime error on one rank: report it and bring the whole job down.
      const std::string where = activity_point_text();
      std::fprintf(stderr, "genbench: error on rank %d (%s)%s: %s\n", comm.rank(), comm.host().c_str(),
                   where.empty() ? "" : (" at " + where).c_str(), e.what());
      std::fflush(stderr);
      comm.abort(kExitError);
    }
  } catch (const UsageError& e) {
    std::fprintf(stderr, "genbench: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "genbench: error: %s\n", e.what());
    return kExitError;
  }
  return code;
}
