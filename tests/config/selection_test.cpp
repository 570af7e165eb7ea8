// The command line's -b / -a (apply_selection): which benchmarks and values remain, the
// canonical selection text, the fingerprint, and every kind of bad input.
#include <gtest/gtest.h>

#include <string>

#include "config/config.h"
#include "core/error.h"
#include "sweep/sweep.h"

namespace genbench {
namespace {

const char* kText = R"(genbench: 1
settings:
  backend: host
benchmarks:
  - name: attn-short
    op: attention
    implementations: [reference]
    axes:
      seqlen_q: [128, 1K]
      head_dim: 64
      causal: [false, true]
  - name: attn-long
    op: attention
    implementations: [reference]
    axes:
      seqlen_q: 4K
      causal: [false, true]
  - name: coll
    op: collective
    implementations: mpi
    axes:
      bytes: {from: 1K, to: 1M, factor: 4}
)";

Config selected(const Selection& sel) {
  Config cfg = parse_config(kText, "sel.yaml");
  apply_selection(cfg, sel);
  return cfg;
}

std::string error_of(const Selection& sel) {
  try {
    selected(sel);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> names(const Config& cfg) {
  std::vector<std::string> out;
  for (const auto& b : cfg.benchmarks) out.push_back(b.name);
  return out;
}

TEST(Selection, NoneKeepsTheWholeConfigAndItsFingerprint) {
  const Config whole = parse_config(kText, "sel.yaml");
  const Config cfg = selected({});
  EXPECT_EQ(names(cfg), names(whole));
  EXPECT_EQ(cfg.selection, "");
  EXPECT_EQ(cfg.fingerprint(), whole.fingerprint());
}

TEST(Selection, BenchmarksByNameOrGlobInConfigOrder) {
  EXPECT_EQ(names(selected({{"coll"}, {}})), std::vector<std::string>{"coll"});
  EXPECT_EQ(names(selected({{"attn-*"}, {}})), (std::vector<std::string>{"attn-short", "attn-long"}));
  EXPECT_EQ(names(selected({{"coll", "attn-l?ng"}, {}})), (std::vector<std::string>{"attn-long", "coll"}));
  EXPECT_EQ(names(selected({{"attn-[s]*"}, {}})), std::vector<std::string>{"attn-short"});
  EXPECT_EQ(selected({{"attn-*"}, {}}).selection, "-b attn-*");
}

TEST(Selection, AxisValuesReplaceTheConfigsInEveryBenchmarkThatHasTheAxis) {
  const Config cfg = selected({{}, {"seqlen_q=2K,512", "causal=true"}});
  ASSERT_EQ(cfg.benchmarks.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    const auto& b = cfg.benchmarks[i];
    const std::size_t seq = b.op->axis_index("seqlen_q"), causal = b.op->axis_index("causal");
    ASSERT_EQ(b.axis_values[seq].size(), 2u) << b.name;
    EXPECT_EQ(std::get<std::int64_t>(b.axis_values[seq][0]), 2048) << b.name;
    EXPECT_EQ(std::get<std::int64_t>(b.axis_values[seq][1]), 512) << b.name;
    ASSERT_EQ(b.axis_values[causal].size(), 1u);
    EXPECT_EQ(std::get<std::int64_t>(b.axis_values[causal][0]), 1);
    EXPECT_EQ(sweep_size(b), 2u) << b.name;
  }
  // the collective has neither axis: its 6 sizes stay
  EXPECT_EQ(sweep_size(cfg.benchmarks[2]), 6u);
  EXPECT_EQ(cfg.selection, "-a seqlen_q=2K,512 -a causal=true");
}

TEST(Selection, ImplementationIsAnAxisToo) {
  const Config cfg = selected({{"attn-long"}, {"impl=unfused,reference"}});
  ASSERT_EQ(cfg.benchmarks.size(), 1u);
  EXPECT_EQ(cfg.benchmarks[0].implementations, (std::vector<std::string>{"unfused", "reference"}));
  EXPECT_EQ(sweep_size(cfg.benchmarks[0]), 4u);
  EXPECT_EQ(cfg.selection, "-b attn-long -a implementation=unfused,reference");
}

TEST(Selection, TheFingerprintFollowsTheSelection) {
  const auto whole = parse_config(kText, "sel.yaml").fingerprint();
  const auto a = selected({{"coll"}, {}}).fingerprint(), b = selected({{"attn-*"}, {}}).fingerprint(),
             c = selected({{"attn-*"}, {"causal=true"}}).fingerprint();
  EXPECT_NE(a, whole);
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_EQ(c, selected({{"attn-*"}, {"causal=true"}}).fingerprint());
}

TEST(Selection, RoundsSetEverySelectedBenchmarkAndTheFingerprint) {
  Selection sel{{"attn-*"}, {}, 3};
  const Config cfg = selected(sel);
  ASSERT_EQ(cfg.benchmarks.size(), 2u);
  for (const auto& b : cfg.benchmarks) EXPECT_EQ(b.timing.rounds, 3);
  EXPECT_EQ(cfg.selection, "-b attn-* --rounds 3");
  const Config only_rounds = selected({{}, {}, 2});
  EXPECT_EQ(only_rounds.benchmarks.size(), 3u);
  EXPECT_EQ(only_rounds.selection, "--rounds 2");
  EXPECT_NE(only_rounds.fingerprint(), parse_config(kText, "sel.yaml").fingerprint());
  EXPECT_NE(only_rounds.fingerprint(), selected({{}, {}, 3}).fingerprint());
  EXPECT_NE(error_of({{}, {}, kMaxRounds + 1}).find("--rounds"), std::string::npos);
  EXPECT_NE(error_of({{}, {}, -1}).find("--rounds"), std::string::npos);
  // In the config: a timing key like any other, range-checked with the file's line.
  const Config c = parse_config(
      "settings: {timing: {rounds: 5}}\nbenchmarks:\n"
      "  - {name: g, op: gemm, implementations: [reference], timing: {rounds: 2}}\n"
      "  - {name: h, op: gemm, implementations: [reference]}\n",
      "r.yaml");
  EXPECT_EQ(c.benchmarks[0].timing.rounds, 2);
  EXPECT_EQ(c.benchmarks[1].timing.rounds, 5);
  try {
    parse_config(
        "settings: {timing: {rounds: 0}}\nbenchmarks:\n  - {name: g, op: gemm, implementations: [reference]}\n",
        "r.yaml");
    ADD_FAILURE() << "rounds: 0 accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("r.yaml:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rounds"), std::string::npos) << e.what();
  }
}

TEST(Selection, BadInputNamesTheChoices) {
  std::string e = error_of({{"atn-long"}, {}});
  EXPECT_NE(e.find("-b atn-long: no benchmark"), std::string::npos) << e;
  EXPECT_NE(e.find("attn-short, attn-long, coll"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'attn-long'"), std::string::npos) << e;
  e = error_of({{"coll"}, {"seqlen_q=4K"}});
  EXPECT_NE(e.find("no selected benchmark has an axis 'seqlen_q'"), std::string::npos) << e;
  EXPECT_NE(e.find("bytes"), std::string::npos) << e;
  e = error_of({{}, {"seqlenq=4K"}});
  EXPECT_NE(e.find("did you mean 'seqlen_q'"), std::string::npos) << e;
  e = error_of({{}, {"seqlen_q=abc"}});
  EXPECT_NE(e.find("seqlen_q"), std::string::npos) << e;
  EXPECT_NE(e.find("abc"), std::string::npos) << e;
  e = error_of({{}, {"causal=maybe"}});
  EXPECT_NE(e.find("true or false"), std::string::npos) << e;
  e = error_of({{"attn-*"}, {"impl=fastest"}});
  EXPECT_NE(e.find("'fastest' is not an implementation of op 'attention'"), std::string::npos) << e;
  for (const char* bad : {"seqlen_q", "=4K", "seqlen_q=", "seqlen_q=1K,,2K"})
    EXPECT_NE(error_of({{}, {bad}}).find("-a"), std::string::npos) << bad;
  EXPECT_NE(error_of({{""}, {}}).find("empty"), std::string::npos);
}

}  // namespace
}  // namespace genbench
