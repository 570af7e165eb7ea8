// The host pieces the fused backwards share (kernels/attention_backward/common/backward_fused.h):
// the shape checks and the workspace layout, and that fa2 and fa3 take theirs from it. Host only.
#include "kernels/attention_backward/common/backward_fused.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#ifdef GENBENCH_HAVE_CUDA
#include "kernels/attention_backward/fa2_sm80/fa2_backward.h"
#include "kernels/attention_backward/fa3_sm90/fa3_backward.h"
#endif

namespace genbench::attention_backward {
namespace {

BackwardParams shape(int batch, int heads, int heads_kv, int seqlen_q, int seqlen_k, int d) {
  BackwardParams p{};
  p.batch = batch;
  p.heads = heads;
  p.heads_kv = heads_kv;
  p.head_dim = d;
  p.seqlen_q = seqlen_q;
  p.seqlen_k = seqlen_k;
  p.rows_q = static_cast<long long>(batch) * seqlen_q;
  p.rows_k = static_cast<long long>(batch) * seqlen_k;
  p.lse_head_stride = seqlen_q;
  p.dtype = DType::bf16;
  return p;
}

bool says(const std::string& why, const char* what) { return why.find(what) != std::string::npos; }

TEST(BackwardFused, ShapeChecks) {
  BackwardParams p = shape(2, 8, 2, 130, 77, 128);
  EXPECT_EQ(shape_unsupported(p), "");
  p.heads_kv = 3;
  EXPECT_EQ(shape_unsupported(p), "heads (8) must be a multiple of heads_kv (3)");
  p.heads_kv = 0;
  EXPECT_TRUE(says(shape_unsupported(p), "multiple of heads_kv"));
  p = shape(65535, 1, 1, 1, 1, 64);
  EXPECT_EQ(shape_unsupported(p), "");
  p = shape(65536, 1, 1, 1, 1, 64);
  EXPECT_TRUE(says(shape_unsupported(p), "grid limits"));
  p = shape(1, 65536, 1, 1, 1, 64);
  EXPECT_TRUE(says(shape_unsupported(p), "grid limits"));
  p = shape(1, 4, 4, -1, 8, 64);
  EXPECT_EQ(shape_unsupported(p), "negative sequence length");
  // 2^31 (row, head) pairs on the query side, then on the key side; one fewer passes.
  p = shape(1, 2, 1, 1 << 30, 1, 64);
  EXPECT_EQ(shape_unsupported(p), "more than 2^31 (row, head) pairs");
  p.rows_q -= 1;
  EXPECT_EQ(shape_unsupported(p), "");
  p = shape(2, 4, 2, 8, 1 << 30, 64);
  EXPECT_EQ(shape_unsupported(p), "more than 2^31 (row, head) pairs");
}

TEST(BackwardFused, RowWorkspaceLayout) {
  const BackwardParams p = shape(2, 3, 1, 130, 50, 64);
  const RowWorkspace w = row_workspace(p, 64, true);
  EXPECT_EQ(w.padded_rows, 192);
  EXPECT_EQ(w.row_bytes, static_cast<std::size_t>(2 * 3 * 192 * 4));
  EXPECT_EQ(w.acc_bytes, static_cast<std::size_t>(260 * 3 * 64 * 4));
  EXPECT_EQ(w.bytes(), 2 * w.row_bytes + w.acc_bytes);
  std::vector<unsigned char> buf(w.bytes());
  unsigned char* ws = buf.data();
  EXPECT_EQ(static_cast<void*>(w.lse2(ws)), static_cast<void*>(ws));
  EXPECT_EQ(static_cast<void*>(w.dsum(ws)), static_cast<void*>(ws + w.row_bytes));
  EXPECT_EQ(static_cast<void*>(w.dq_acc(ws)), static_cast<void*>(ws + 2 * w.row_bytes));
  const RowWorkspace n = row_workspace(p, 64, false);
  EXPECT_EQ(n.row_bytes, w.row_bytes);
  EXPECT_EQ(n.bytes(), 2 * w.row_bytes);
  EXPECT_EQ(n.dq_acc(ws), nullptr);
  // Parts start 256-byte aligned: 16 padded rows of one head are 64 bytes, 5 x 8 fp32 160.
  const RowWorkspace s = row_workspace(shape(1, 1, 1, 5, 5, 8), 16, true);
  EXPECT_EQ(s.padded_rows, 16);
  EXPECT_EQ(s.row_bytes, static_cast<std::size_t>(256));
  EXPECT_EQ(s.acc_bytes, static_cast<std::size_t>(256));
  // No query rows: no padded rows, the arrays empty.
  const RowWorkspace e = row_workspace(shape(3, 2, 2, 0, 9, 128), 64, true);
  EXPECT_EQ(e.padded_rows, 0);
  EXPECT_EQ(e.bytes(), static_cast<std::size_t>(0));
}

#ifdef GENBENCH_HAVE_CUDA
TEST(BackwardFused, KernelsUseIt) {
  BackwardParams p = shape(2, 3, 1, 130, 50, 64);
  EXPECT_EQ(fa2::workspace_bytes(p), row_workspace(p, 64, true).bytes());
  EXPECT_EQ(fa3::workspace_bytes(p), row_workspace(p, 64, true).bytes());
  p.deterministic = true;
  EXPECT_EQ(fa2::workspace_bytes(p), row_workspace(p, 64, false).bytes());
  // fa2 reaches the shape checks without a device (fa3 asks the device about its kernel first).
  p.heads_kv = 2;
  EXPECT_EQ(fa2::unsupported(p, 9, 0), shape_unsupported(p));
  EXPECT_EQ(fa2::unsupported(p, 9, 0), "heads (3) must be a multiple of heads_kv (2)");
}
#endif

}  // namespace
}  // namespace genbench::attention_backward
