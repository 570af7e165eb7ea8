#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "config/config.h"
#include "core/error.h"
#include "ops/attention/attention.h"
#include "ops/collective/collective.h"
#include "support/test_env.h"
#include "sweep/sweep.h"

namespace genbench {
namespace {

const char* kGood = R"(genbench: 1
settings:
  backend: host
  output: out.h5
  timing: {warmup: 2, warmup_time: 0.25, min_iterations: 3, max_iterations: 7, min_time: 0.1, max_time: 2, target_noise: 0.05, state_period: 0.005}
benchmarks:
  - name: attn
    op: attention
    implementations: [reference]
    axes:
      seqlen_q: [128, 1K]
      head_dim: 64
      causal: [false, true]
  - name: coll
    op: collective
    implementations: mpi
    axes:
      bytes: {from: 1K, to: 1M, factor: 4}
    timing: {max_iterations: 9}
)";

// Parses `text` and returns the error message ("" when it parsed).
std::string error_of(const std::string& text) {
  try {
    parse_config(text, "bad.yaml");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ParseSize, Suffixes) {
  EXPECT_EQ(parse_size("4096"), 4096);
  EXPECT_EQ(parse_size("1K"), 1024);
  EXPECT_EQ(parse_size("1k"), 1024);
  EXPECT_EQ(parse_size("64M"), 64ll << 20);
  EXPECT_EQ(parse_size("4G"), 4ll << 30);
  EXPECT_EQ(parse_size("2T"), 2ll << 40);
  EXPECT_EQ(parse_size("16KiB"), 16 * 1024);
  EXPECT_EQ(parse_size("1MB"), 1 << 20);
  EXPECT_EQ(parse_size("8B"), 8);
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("-1K"));
  EXPECT_FALSE(parse_size("1.5M"));
  EXPECT_FALSE(parse_size("12Q"));
  EXPECT_FALSE(parse_size("K"));
  EXPECT_FALSE(parse_size("99999999999999999999"));
  EXPECT_FALSE(parse_size("9000000000T"));  // overflows int64
}

TEST(Config, ParsesAGoodConfig) {
  const Config c = parse_config(kGood, "good.yaml");
  EXPECT_EQ(c.backend, "host");
  EXPECT_EQ(c.output, "out.h5");
  ASSERT_EQ(c.benchmarks.size(), 2u);
  const auto& a = c.benchmarks[0];
  EXPECT_EQ(a.op->name(), "attention");
  EXPECT_EQ(a.timing.warmup, 2);
  EXPECT_DOUBLE_EQ(a.timing.warmup_time_s, 0.25);
  EXPECT_DOUBLE_EQ(a.timing.state_period_s, 0.005);
  EXPECT_EQ(a.timing.max_iterations, 7);
  EXPECT_DOUBLE_EQ(a.timing.target_rel_noise, 0.05);
  ASSERT_EQ(a.axis_values[attention_axis::seqlen_q].size(), 2u);
  EXPECT_EQ(std::get<std::int64_t>(a.axis_values[attention_axis::seqlen_q][1]), 1024);
  EXPECT_EQ(sweep_size(a), 4u);
  // Benchmark timing overrides only the keys it names.
  const auto& b = c.benchmarks[1];
  EXPECT_EQ(b.timing.max_iterations, 9);
  EXPECT_EQ(b.timing.warmup, 2);
  // Range 1K..1M by 4: 1K 4K 16K 64K 256K 1M
  EXPECT_EQ(b.axis_values[collective_axis::bytes].size(), 6u);
  EXPECT_EQ(std::get<std::int64_t>(b.axis_values[collective_axis::bytes].back()), 1 << 20);
}

TEST(Config, FingerprintFollowsText) {
  const Config a = parse_config(kGood, "x.yaml");
  const Config b = parse_config(std::string(kGood) + "\n# comment\n", "x.yaml");
  EXPECT_EQ(a.fingerprint(), parse_config(kGood, "y.yaml").fingerprint());
  EXPECT_NE(a.fingerprint(), b.fingerprint());
}

struct BadCase {
  const char* name;
  const char* yaml;
  const char* expect;  // substring of the message, which must also carry file:line:col
};

class BadConfig : public testing::TestWithParam<BadCase> {};

TEST_P(BadConfig, IsRejectedWithLocation) {
  const std::string msg = error_of(GetParam().yaml);
  ASSERT_FALSE(msg.empty()) << "accepted: " << GetParam().yaml;
  EXPECT_NE(msg.find(GetParam().expect), std::string::npos) << msg;
  EXPECT_EQ(msg.rfind("bad.yaml", 0), 0u) << msg;
}

const BadCase kBad[] = {
    {"syntax", "benchmarks: [\n  - {name: x\n", "bad.yaml:"},
    {"empty", "", "empty"},
    {"not_a_map", "- 1\n- 2\n", "must be a mapping"},
    {"unknown_top", "benchmark: []\n", "did you mean 'benchmarks'"},
    {"no_benchmarks", "settings: {backend: host}\n", "no 'benchmarks'"},
    {"empty_benchmarks", "benchmarks: []\n", "'benchmarks' is empty"},
    {"misspelled_axis",
     "benchmarks:\n  - name: a\n    op: attention\n    implementations: [reference]\n    axes: {seqln_q: 128}\n",
     "bad.yaml:5:12: unknown key 'seqln_q' in axes of benchmark 'a' (did you mean 'seqlen_q'?)"},
    {"unknown_op", "benchmarks:\n  - {name: a, op: atention, implementations: [reference]}\n",
     "did you mean 'attention'"},
    {"unknown_impl", "benchmarks:\n  - {name: a, op: attention, implementations: [refrence]}\n",
     "did you mean 'reference'"},
    {"empty_impls", "benchmarks:\n  - {name: a, op: attention, implementations: []}\n", "'implementations' is empty"},
    {"negative_size", "benchmarks:\n  - {name: a, op: attention, implementations: [reference], axes: {seqlen_q: -5}}\n",
     "positive"},
    {"zero_size", "benchmarks:\n  - {name: a, op: gemm, implementations: [reference], axes: {m: 0}}\n", "out of range"},
    {"huge_size",
     "benchmarks:\n  - {name: a, op: gemm, implementations: [reference], axes: {m: 99999999999999999999}}\n",
     "'m' must be"},
    {"bad_head_dim", "benchmarks:\n  - {name: a, op: attention, implementations: [reference], axes: {head_dim: 100}}\n",
     "unsupported head_dim 100"},
    {"wrong_type_bool",
     "benchmarks:\n  - {name: a, op: attention, implementations: [reference], axes: {causal: maybe}}\n",
     "true or false"},
    {"wrong_type_list",
     "benchmarks:\n  - {name: a, op: attention, implementations: [reference], axes: {head_dim: {a: 1}}}\n",
     "unknown key 'a'"},
    {"bad_choice", "benchmarks:\n  - {name: a, op: attention, implementations: [reference], axes: {dtype: bf61}}\n",
     "did you mean 'bf16'"},
    {"empty_axis_list",
     "benchmarks:\n  - {name: a, op: attention, implementations: [reference], axes: {seqlen_q: []}}\n", "empty list"},
    {"range_backwards",
     "benchmarks:\n  - {name: a, op: gemm, implementations: [reference], axes: {m: {from: 4K, to: 1K}}}\n",
     "below 'from'"},
    {"duplicate_key", "benchmarks:\n  - name: a\n    name: b\n    op: gemm\n    implementations: [reference]\n",
     "duplicate key 'name'"},
    {"duplicate_benchmark",
     "benchmarks:\n  - {name: a, op: gemm, implementations: [reference]}\n  - {name: a, op: gemm, implementations: "
     "[reference]}\n",
     "duplicate benchmark name 'a'"},
    {"bad_backend", "settings: {backend: gpu}\nbenchmarks:\n  - {name: a, op: gemm, implementations: [reference]}\n",
     "backend must be"},
    {"bad_timing",
     "settings: {timing: {min_iterations: 10, max_iterations: 2}}\nbenchmarks:\n  - {name: a, op: gemm, "
     "implementations: [reference]}\n",
     "exceeds max_iterations"},
    {"negative_warmup_time",
     "settings: {timing: {warmup_time: -1}}\nbenchmarks:\n  - {name: a, op: gemm, implementations: [reference]}\n",
     "'warmup_time' = -1 is out of range"},
    {"negative_state_period",
     "settings: {timing: {state_period: -0.01}}\nbenchmarks:\n  - {name: a, op: gemm, implementations: [reference]}\n",
     "'state_period' = -0.01 is out of range"},
    {"timing_typo",
     "settings: {timing: {warmpu: 1}}\nbenchmarks:\n  - {name: a, op: gemm, implementations: [reference]}\n",
     "did you mean 'warmup'"},
    {"range_too_long",
     "benchmarks:\n  - {name: c, op: collective, implementations: [mpi], axes: {bytes: {from: 8, to: 1M, step: 1}}}\n",
     "more than 10000 values"},
    {"too_many_points",
     "benchmarks:\n  - {name: a, op: gemm, implementations: [reference], axes: {m: {from: 1, to: 2000, step: 1}, n: "
     "{from: 1, to: 2000, step: 1}}}\n",
     "more than"},
    {"tags_not_a_map", "benchmarks:\n  - {name: a, op: gemm, implementations: [reference], tags: [x]}\n",
     "'tags' must be a map"},
    {"tag_bad_name", "benchmarks:\n  - {name: a, op: gemm, implementations: [reference], tags: {Model: x}}\n",
     "tag name 'Model' must be"},
    {"tag_list_value", "benchmarks:\n  - {name: a, op: gemm, implementations: [reference], tags: {model: [a, b]}}\n",
     "tag 'model' must have one value"},
};

INSTANTIATE_TEST_SUITE_P(Corpus, BadConfig, testing::ValuesIn(kBad),
                         [](const testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

TEST(Config, NulBytesAreRejected) {
  const std::string text("benchmarks: [\0]\n", 16);
  try {
    parse_config(text, "bad.yaml");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("NUL"), std::string::npos) << e.what();
  }
}

TEST(Config, MissingFileIsAUsageError) { EXPECT_THROW(load_config("/nonexistent/genbench.yaml"), UsageError); }

// Every config the repository ships parses (the device configs and the one-off ones under
// experiments/configs/ too, which no other test reads), the ones the README and docs name are
// among them, and each file of configs/ says in its first line what it is for.
TEST(Config, ShippedConfigsParse) {
  const std::filesystem::path dir = test::source_dir() + "/configs";
  std::set<std::string> seen;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    seen.insert(entry.path().filename().string());
    EXPECT_NO_THROW(load_config(entry.path().string())) << entry.path();
    std::ifstream in(entry.path());
    std::string first;
    std::getline(in, first);
    EXPECT_TRUE(first.rfind("# ", 0) == 0 && first.size() > 20) << entry.path() << ": first line '" << first << "'";
  }
  std::size_t experiments = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() + "/experiments/configs")) {
    if (entry.path().extension() != ".yaml") continue;
    ++experiments;
    EXPECT_NO_THROW(load_config(entry.path().string())) << entry.path();
  }
  EXPECT_GT(experiments, 0u);
  for (const char* name : {"smoke.yaml", "attention.yaml", "collectives.yaml", "gemm.yaml", "a100.yaml", "h100.yaml",
                           "b200.yaml", "fa3.yaml", "fa3-fp8.yaml"})
    EXPECT_EQ(seen.count(name), 1u) << name;
}

TEST(Config, TagsKeepTheirOrderAndTheTuningAxesTheirDefault) {
  const Config c = parse_config(
      "benchmarks:\n  - {name: qkv, op: gemm, implementations: [reference], tags: {model: llama3-8b, phase: decode, "
      "part: qkv}}\n",
      "t.yaml");
  ASSERT_EQ(c.benchmarks[0].tags.size(), 3u);
  EXPECT_EQ(c.benchmarks[0].tags[0], (std::pair<std::string, std::string>{"model", "llama3-8b"}));
  EXPECT_EQ(c.benchmarks[0].tags[2], (std::pair<std::string, std::string>{"part", "qkv"}));
  const auto& b = c.benchmarks[0];
  const std::size_t ws = b.op->axis_index("cublaslt_workspace_mb");
  ASSERT_LT(ws, b.axis_values.size());
  EXPECT_EQ(to_string(b.axis_values[ws].at(0)), "auto");
  // A tuning axis takes its choices like any axis, and refuses others.
  const Config t = parse_config(
      "benchmarks:\n  - {name: g, op: gemm, implementations: [reference], axes: {cublaslt_workspace_mb: [auto, 64]}}\n",
      "t.yaml");
  EXPECT_EQ(expand(t.benchmarks[0]).size(), 2u);
  EXPECT_THROW(
      parse_config(
          "benchmarks:\n  - {name: g, op: gemm, implementations: [reference], axes: {cublaslt_workspace_mb: 65}}\n",
          "t.yaml"),
      UsageError);
}

}  // namespace
}  // namespace genbench
