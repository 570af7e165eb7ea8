#pragma once
#include <string>

#include "comm/comm.h"
#include "config/config.h"

namespace genbench {

// Exit codes of `genbench run` (documented in the README).
enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,         // a runtime error ended the job
  kExitUsage = 2,         // bad command line, config or output file
  kExitFailedPoints = 3,  // the run completed but some points failed validation or errored
  kExitInterrupted = 130  // a signal stopped the run; the file is consistent, --resume continues
};

struct RunOptions {
  std::string output;
  std::string backend = "";  // overrides the config's backend when not empty
  bool force = false;
  bool resume = false;
  bool quiet = false;
  std::string command_line;
};

// Runs every benchmark of the config on every rank; rank 0 writes the file. Returns an ExitCode.
int run_benchmarks(const Config& cfg, const RunOptions& opts, const Comm& comm);

// Which backend `auto` resolves to on this machine: "cuda" when built with CUDA and a GPU is
// visible, else "host".
std::string resolve_backend(const std::string& requested);

// Installs SIGINT/SIGTERM/SIGUSR1 handlers that ask the run to stop after the current point;
// `genbench run` calls it in main, before MPI starts (docs/reliability.md, Signals).
void install_stop_handlers();
bool stop_requested();
void clear_stop_request();

}  // namespace genbench
