#pragma once
// Helpers shared by the attention GPU tests: a point from a compact shape, and (CUDA builds
// only) the check that a varlen case in graph mode serves new sets of sequence lengths from its
// one captured graph.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "ops/attention/attention.h"
#include "ops/implementation.h"
#include "support/points.h"
#ifdef GENBENCH_HAVE_CUDA
#include "kernels/attention/common/attention_case.h"
#endif

namespace genbench::test {

struct AttentionDims {
  std::int64_t batch, heads, heads_kv, sq, sk;
};

// An attention point of implementation `impl`; every other axis at its default.
inline Point attention_point(const std::string& impl, const AttentionDims& s, std::int64_t d, bool causal,
                             const char* dtype, bool varlen = false, bool graph = false) {
  return point_with(attention_op(), impl,
                    {{"batch", s.batch},
                     {"heads", s.heads},
                     {"heads_kv", s.heads_kv},
                     {"seqlen_q", s.sq},
                     {"seqlen_k", s.sk},
                     {"head_dim", d},
                     {"causal", std::int64_t{causal}},
                     {"dtype", std::string(dtype)},
                     {"varlen", std::int64_t{varlen}},
                     {"mode", std::string(graph ? "graph" : "eager")}});
}

#ifdef GENBENCH_HAVE_CUDA
// `c` has been validated (which replays a second set of lengths). Checks: one capture, the
// variant says so and fits the result file's 64-character column; a third set of lengths
// replayed from the same graph validates; poisoned outputs that were not executed fail.
inline void expect_graph_serves_new_lengths(Case& c) {
  auto* dc = dynamic_cast<attention::DeviceAttentionCase*>(&c);
  ASSERT_NE(dc, nullptr);
  EXPECT_EQ(dc->graph_captures(), 1);
  EXPECT_NE(c.variant().find("g:1cap+2len"), std::string::npos) << c.variant();
  EXPECT_LE(c.variant().size(), 64u) << c.variant();
  const AttentionShape& s = dc->shape();
  dc->set_lengths(s.lengths_q(2), s.lengths_k(2));
  dc->poison_outputs();
  dc->execute();
  const Validation v = dc->check_outputs();
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_EQ(dc->graph_captures(), 1);
  dc->poison_outputs();
  EXPECT_FALSE(dc->check_outputs().ok);
}

#endif

}  // namespace genbench::test
