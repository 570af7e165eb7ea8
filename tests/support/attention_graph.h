#pragma once
// A check shared by the attention GPU tests (CUDA builds only): a varlen case in graph mode
// serves new sets of sequence lengths from its one captured graph.
#ifdef GENBENCH_HAVE_CUDA
#include <gtest/gtest.h>

#include <string>

#include "kernels/attention/common/attention_case.h"
#include "ops/implementation.h"

namespace genbench::test {

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

}  // namespace genbench::test
#endif
