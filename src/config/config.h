#pragma once
// YAML configuration -> typed, fully validated Config. Every error names file:line:column and
// the key, and is raised before any device work.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/op.h"
#include "stats/stats.h"
#include "sweep/point.h"

namespace genbench {

// Parses "4096", "1K", "64M", "4G", "2T", "16KiB", "1MB" (binary multiples); nullopt when
// malformed or out of int64 range.
std::optional<std::int64_t> parse_size(const std::string& text);

struct BenchmarkConfig {
  std::string name;
  const Op* op = nullptr;
  std::vector<std::string> implementations;
  // One list of values per op axis (op->axes() order); an axis absent from the config holds
  // its default.
  std::vector<std::vector<AxisValue>> axis_values;
  // True when the config said `auto` for this axis: the points a card cannot run are then
  // left out of the run (the card's own set), instead of being recorded as unsupported.
  bool uses_auto = false;
  TimingPolicy timing;
  // Labels of the benchmark (model: llama3-8b, phase: decode, part: qkv), in config order; stored
  // with the benchmark in the result file (group attribute "tags") for the analysis to group by.
  std::vector<std::pair<std::string, std::string>> tags;
  int line = 0;  // where the benchmark starts in the config, for messages
};

struct Config {
  std::string path;
  std::string text;  // the file's full text, stored in the result file
  std::string backend = "auto";
  std::string output;  // default output file ("" = none given)
  std::uint64_t seed = 1234;
  bool allow_shared_devices = false;  // more ranks than GPUs on a node
  double watchdog_s = 300;            // abort the job when a rank makes no progress this long (0: off)
  bool measure_ceilings = true;       // cuda: copy and GEMM ceilings at the start of a run (/ceilings)
  TimingPolicy timing;                // defaults for every benchmark
  std::vector<BenchmarkConfig> benchmarks;
  // The command line's narrowing of the config (apply_selection), as canonical text
  // ("-b attn* -a seq=4096,8192"); "" when the whole config runs. Part of the fingerprint.
  std::string selection;

  std::uint64_t fingerprint() const;  // identifies the config (and its selection) for --resume
};

// What the command line picks out of a config, as nvbench's -b and -a do: `benchmarks` are names
// or globs (* ? [...]); a benchmark runs when any matches it (none given: all). Each of `axes` is
// "axis=value[,value...]": its values replace that axis's values in every selected benchmark
// whose op has the axis (values parse as in YAML: 4K, true, a choice); "implementation" (or
// "impl") replaces the implementations. Values are checked as the config's are.
// `rounds` (> 0) replaces every selected benchmark's timing.rounds (--rounds).
struct Selection {
  std::vector<std::string> benchmarks;
  std::vector<std::string> axes;
  int rounds = 0;
  bool empty() const { return benchmarks.empty() && axes.empty() && rounds == 0; }
};

inline constexpr int kMaxRounds = 1000;

// Narrows cfg to the selection and records it in cfg.selection. Throws UsageError naming the
// choices for a pattern that matches no benchmark, an axis no selected benchmark has, a value
// that is not valid for its axis, or a malformed -a.
void apply_selection(Config& cfg, const Selection& sel);

// Throws UsageError("file:line:col: message").
Config load_config(const std::string& path);
Config parse_config(const std::string& text, const std::string& path);

}  // namespace genbench
