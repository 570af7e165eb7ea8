// GPU tests of the fused backward kernels (kernels/attention_backward/fa2_sm80 and fa3_sm90),
// called directly:
// small random inputs, O and LSE from a host forward in double, the backward in double
// (tests/support/backward_problem.h), and
// dQ, dK, dV of the module's launch() (outputs and workspace poisoned with 0xff first, so an unwritten
// element is NaN and fails) compared by max |error| <= tol x max |reference| per tensor.
// Tolerances: bf16 2e-2, fp16 4e-3 (P and dS are rounded to the dtype for the tensor cores; see
// tolerance() for the errors measured). Head dims 64/128/256, fp16/bf16, causal and
// not, MHA/GQA/MQA, seqlen_q != seqlen_k both ways (causal rows with no visible key), varlen with
// odd lengths and buffer rows past the last sequence, deterministic on (two runs bitwise equal)
// and off, and a graph capture. fa3 (sm_90a; head dims 64 and 128, no deterministic mode) runs the
// same shapes it supports plus longer sequences (several key blocks and a ring that wraps). Skipped
// without a GPU; not built without CUDA.
#include <gtest/gtest.h>

#ifdef GENBENCH_HAVE_CUDA
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/attention_backward/fa2_sm80/fa2_backward.h"
#include "kernels/attention_backward/fa3_sm90/fa3_backward.h"
#include "support/backward_problem.h"
#include "support/test_env.h"
#endif

namespace genbench {
namespace {

#ifdef GENBENCH_HAVE_CUDA

using attention_backward::BackwardParams;
namespace fa2 = attention_backward::fa2;
namespace fa3 = attention_backward::fa3;
using namespace backward_test;

#define FA2_CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

// A fused backward module's entry points and the shapes it may refuse on a device of compute
// capability major (any other refusal fails the test).
struct Kernel {
  const char* name;
  std::string (*unsupported)(const BackwardParams&, int, int);
  std::size_t (*workspace_bytes)(const BackwardParams&);
  void (*launch)(const BackwardParams&, void*, cudaStream_t);
  std::string (*config_name)(const BackwardParams&);
  bool (*may_refuse)(const Shape&, int major);
};
const Kernel kFa2{
    "fa2", fa2::unsupported, fa2::workspace_bytes, fa2::launch, fa2::config_name, [](const Shape& s, int major) {
      return s.d == 256 && major < 9;
    }};  // sm8x shared memory
const Kernel kFa3{"fa3",
                  fa3::unsupported,
                  fa3::workspace_bytes,
                  fa3::launch,
                  fa3::config_name,
                  [](const Shape& s, int major) { return major != 9 || s.d == 256 || s.deterministic; }};

// Device copies of a problem and the launch parameters.
class DeviceProblem {
 public:
  DeviceProblem(const Problem& p, const Kernel& kernel) : p_(p), kernel_(kernel) {
    q_ = upload16(p.q);
    k_ = upload16(p.k);
    v_ = upload16(p.v);
    o_ = upload16(p.o);
    do_ = upload16(p.dout);
    lse_ = upload(p.lse.data(), p.lse.size() * sizeof(float));
    cu_q_ = upload(p.cu_q.data(), p.cu_q.size() * sizeof(int));
    cu_k_ = upload(p.cu_k.data(), p.cu_k.size() * sizeof(int));
    dq_ = alloc(p.q.size() * 2);
    dk_ = alloc(p.k.size() * 2);
    dv_ = alloc(p.v.size() * 2);
    params_.q = q_;
    params_.k = k_;
    params_.v = v_;
    params_.o = o_;
    params_.dout = do_;
    params_.lse = static_cast<const float*>(lse_);
    params_.dq = dq_;
    params_.dk = dk_;
    params_.dv = dv_;
    params_.cu_q = static_cast<const int*>(cu_q_);
    params_.cu_k = static_cast<const int*>(cu_k_);
    params_.batch = p.batch;
    params_.heads = p.s.heads;
    params_.heads_kv = p.s.heads_kv;
    params_.head_dim = p.s.d;
    params_.seqlen_q = p.seqlen_q;
    params_.seqlen_k = p.seqlen_k;
    params_.rows_q = p.rows_q;
    params_.rows_k = p.rows_k;
    params_.lse_head_stride = p.s.varlen ? p.rows_q : p.seqlen_q;
    params_.varlen = p.s.varlen;
    params_.causal = p.s.causal;
    params_.deterministic = p.s.deterministic;
    params_.dtype = p.s.dtype;
    params_.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.s.d)));
    ws_bytes_ = kernel_.workspace_bytes(params_);
    ws_ = alloc(ws_bytes_);
  }
  ~DeviceProblem() {
    for (void* x : {q_, k_, v_, o_, do_, lse_, cu_q_, cu_k_, dq_, dk_, dv_, ws_})
      if (x) cudaFree(x);
  }
  DeviceProblem(const DeviceProblem&) = delete;
  DeviceProblem& operator=(const DeviceProblem&) = delete;

  const BackwardParams& params() const { return params_; }
  bool ok() const { return ok_; }
  // Outputs and workspace poisoned with 0xff, then one launch on `stream` (or, with `graph`,
  // the launch captured into a graph and replayed).
  void run(cudaStream_t stream, bool graph) {
    for (void* x : {dq_, dk_, dv_}) ok_ = ok_ && cudaMemset(x, 0xff, bytes_of(x)) == cudaSuccess;
    ok_ = ok_ && cudaMemset(ws_, 0xff, ws_bytes_) == cudaSuccess;
    if (graph) {
      cudaGraph_t g = nullptr;
      cudaGraphExec_t ge = nullptr;
      ok_ = ok_ && cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
      kernel_.launch(params_, ws_, stream);
      ok_ = ok_ && cudaStreamEndCapture(stream, &g) == cudaSuccess;
      ok_ = ok_ && cudaGraphInstantiate(&ge, g, 0) == cudaSuccess;
      ok_ = ok_ && cudaGraphLaunch(ge, stream) == cudaSuccess;
      ok_ = ok_ && cudaStreamSynchronize(stream) == cudaSuccess;
      if (ge) cudaGraphExecDestroy(ge);
      if (g) cudaGraphDestroy(g);
    } else {
      kernel_.launch(params_, ws_, stream);
      ok_ = ok_ && cudaStreamSynchronize(stream) == cudaSuccess;
    }
    ok_ = ok_ && cudaGetLastError() == cudaSuccess;
  }
  // dQ, dK, dV as bits.
  std::vector<std::uint16_t> download(int which) const {
    void* x = which == 0 ? dq_ : which == 1 ? dk_ : dv_;
    std::vector<std::uint16_t> h(bytes_of(x) / 2);
    if (cudaMemcpy(h.data(), x, h.size() * 2, cudaMemcpyDeviceToHost) != cudaSuccess) h.clear();
    return h;
  }

 private:
  void* alloc(std::size_t bytes) {
    void* x = nullptr;
    ok_ = ok_ && cudaMalloc(&x, std::max<std::size_t>(bytes, 16)) == cudaSuccess;
    sizes_.push_back({x, bytes});
    return x;
  }
  void* upload(const void* src, std::size_t bytes) {
    void* x = alloc(bytes);
    ok_ = ok_ && cudaMemcpy(x, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
    return x;
  }
  void* upload16(const std::vector<float>& h) {
    std::vector<std::uint16_t> bits(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) bits[i] = to_bits(p_.s.dtype, h[i]);
    return upload(bits.data(), bits.size() * 2);
  }
  std::size_t bytes_of(const void* x) const {
    for (const auto& e : sizes_)
      if (e.first == x) return e.second;
    return 0;
  }

  const Problem& p_;
  const Kernel& kernel_;
  bool ok_ = true;
  std::vector<std::pair<void*, std::size_t>> sizes_;
  void *q_ = nullptr, *k_ = nullptr, *v_ = nullptr, *o_ = nullptr, *do_ = nullptr, *lse_ = nullptr;
  void *cu_q_ = nullptr, *cu_k_ = nullptr, *dq_ = nullptr, *dk_ = nullptr, *dv_ = nullptr, *ws_ = nullptr;
  std::size_t ws_bytes_ = 0;
  BackwardParams params_{};
};

class BackwardGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::have_gpu()) GTEST_SKIP() << "no CUDA device";
    int dev = 0;
    ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
    ASSERT_EQ(cudaDeviceGetAttribute(&major_, cudaDevAttrComputeCapabilityMajor, dev), cudaSuccess);
    ASSERT_EQ(cudaDeviceGetAttribute(&minor_, cudaDevAttrComputeCapabilityMinor, dev), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }

  // Runs one shape (twice when deterministic, and once more captured in a graph when asked) and
  // checks every output against the double reference.
  void check(const Shape& s, bool graph = false) {
    const Problem p = make_problem(s, 4321 + seed_++);
    const Kernel& kn = kernel();
    DeviceProblem dp(p, kn);
    ASSERT_TRUE(dp.ok()) << describe(s);
    const std::string why = kn.unsupported(dp.params(), major_, minor_);
    if (!why.empty()) {
      EXPECT_TRUE(kn.may_refuse(s, major_)) << kn.name << " " << describe(s) << ": " << why;
      return;
    }
    dp.run(stream_, false);
    ASSERT_TRUE(dp.ok()) << describe(s);
    const std::vector<double>* refs[3] = {&p.dq, &p.dk, &p.dv};
    const char* names[3] = {"dQ", "dK", "dV"};
    std::vector<std::uint16_t> first[3];
    for (int t = 0; t < 3; ++t) {
      first[t] = dp.download(t);
      const double err = relative_error(s.dtype, first[t], *refs[t]);
      EXPECT_LE(err, tolerance(s.dtype)) << kn.name << " " << describe(s) << " " << names[t] << " ["
                                         << kn.config_name(dp.params()) << "]";
      double& worst = worst_[kn.name == kFa3.name][s.dtype == DType::bf16];
      worst = std::max(worst, err);
      ++checked_[kn.name == kFa3.name];
    }
    if (s.deterministic || graph) {
      dp.run(stream_, graph);
      ASSERT_TRUE(dp.ok()) << describe(s);
      for (int t = 0; t < 3; ++t) {
        const std::vector<std::uint16_t> again = dp.download(t);
        if (s.deterministic) EXPECT_TRUE(again == first[t]) << describe(s) << " " << names[t] << ": two runs differ";
        EXPECT_LE(relative_error(s.dtype, again, *refs[t]), tolerance(s.dtype))
            << describe(s) << " " << names[t] << (graph ? " (graph)" : "");
      }
    }
  }

  static void TearDownTestSuite() {
    for (int k = 0; k < 2; ++k)
      if (checked_[k] > 0)
        std::printf("  %s backward: %d tensors checked, worst max|err|/max|ref| fp16 %.2e, bf16 %.2e\n",
                    k ? kFa3.name : kFa2.name, checked_[k], worst_[k][0], worst_[k][1]);
    checked_[0] = checked_[1] = 0;
  }
  virtual const Kernel& kernel() const = 0;
  // The shape sets, each run by the fixtures below.
  void head_dims_dtypes_causal();
  void gqa_mqa_unequal_lengths();
  void varlen_odd_lengths();
  void deterministic_bitwise();
  void graph_capture();
  void longer_sequences();

  int major_ = 0, minor_ = 0;
  cudaStream_t stream_ = nullptr;
  static inline std::uint32_t seed_ = 0;
  static inline double worst_[2][2] = {{0, 0}, {0, 0}};
  static inline int checked_[2] = {0, 0};
};

class Fa2BackwardGpu : public BackwardGpu {
  const Kernel& kernel() const override { return kFa2; }
};
class Fa3BackwardGpu : public BackwardGpu {
 protected:
  void SetUp() override {
    BackwardGpu::SetUp();
    if (IsSkipped()) return;
    if (major_ != 9 || minor_ != 0) GTEST_SKIP() << "fa3 backward needs sm_90a";
  }
  const Kernel& kernel() const override { return kFa3; }
};

const DType kDtypes[] = {DType::fp16, DType::bf16};
const int kHeadDims[] = {64, 128, 256};

void BackwardGpu::head_dims_dtypes_causal() {
  for (DType dt : kDtypes)
    for (int d : kHeadDims)
      for (bool causal : {false, true}) {
        Shape s;
        s.d = d;
        s.dtype = dt;
        s.causal = causal;
        s.len_q = s.len_k = {130, 130};
        check(s);
      }
}

void BackwardGpu::gqa_mqa_unequal_lengths() {
  for (DType dt : kDtypes)
    for (int d : kHeadDims) {
      Shape s;
      s.d = d;
      s.dtype = dt;
      s.heads_kv = 2;
      s.len_q = {77};
      s.len_k = {200};  // sq < sk
      for (bool causal : {false, true}) {
        s.causal = causal;
        check(s);
      }
      s.heads_kv = 1;
      s.len_q = {200};
      s.len_k = {77};  // sq > sk: causal rows below the diagonal's start see no key
      s.causal = true;
      check(s);
      s.len_q = s.len_k = {1};
      s.causal = false;
      check(s);
    }
}

void BackwardGpu::varlen_odd_lengths() {
  for (DType dt : kDtypes)
    for (int d : kHeadDims) {
      Shape s;
      s.d = d;
      s.dtype = dt;
      s.varlen = true;
      s.heads_kv = 2;
      s.causal = true;
      s.len_q = {1, 17, 130};
      s.len_k = {17, 130, 1};
      check(s);
      s.heads_kv = 1;
      s.causal = false;
      s.len_q = {130, 1, 17};
      s.len_k = {129, 65, 17};
      check(s);
    }
}

void BackwardGpu::deterministic_bitwise() {
  for (DType dt : kDtypes)
    for (int d : kHeadDims) {
      Shape s;
      s.d = d;
      s.dtype = dt;
      s.deterministic = true;
      s.causal = true;
      s.len_q = s.len_k = {130, 130};
      check(s);
      s.heads_kv = 1;
      s.len_q = {200};
      s.len_k = {77};
      check(s);
      s.varlen = true;
      s.heads_kv = 2;
      s.len_q = {1, 17, 130};
      s.len_k = {17, 130, 1};
      check(s);
      s.causal = false;
      check(s);
    }
}

void BackwardGpu::graph_capture() {
  for (bool det : {false, true}) {
    Shape s;
    s.d = 128;
    s.heads_kv = 2;
    s.causal = true;
    s.varlen = true;
    s.deterministic = det;
    s.len_q = {1, 17, 130};
    s.len_k = {17, 130, 1};
    check(s, /*graph=*/true);
  }
}

void BackwardGpu::longer_sequences() {
  // Several key blocks per sequence and more query blocks than ring stages, GQA and causal.
  for (DType dt : kDtypes)
    for (int d : {64, 128}) {
      Shape s;
      s.d = d;
      s.dtype = dt;
      s.heads = 4;
      s.heads_kv = 2;
      s.len_q = s.len_k = {517};
      for (bool causal : {false, true}) {
        s.causal = causal;
        check(s);
      }
      s.varlen = true;
      s.causal = true;
      s.len_q = {300, 45, 391};
      s.len_k = {300, 260, 391};
      check(s);
    }
}

TEST_F(Fa2BackwardGpu, HeadDimsDtypesCausal) { head_dims_dtypes_causal(); }
TEST_F(Fa2BackwardGpu, GqaMqaAndUnequalLengths) { gqa_mqa_unequal_lengths(); }
TEST_F(Fa2BackwardGpu, VarlenOddLengths) { varlen_odd_lengths(); }
TEST_F(Fa2BackwardGpu, DeterministicIsBitwiseReproducible) { deterministic_bitwise(); }
TEST_F(Fa2BackwardGpu, GraphCapture) { graph_capture(); }
TEST_F(Fa2BackwardGpu, LongerSequences) { longer_sequences(); }

TEST_F(Fa3BackwardGpu, HeadDimsDtypesCausal) { head_dims_dtypes_causal(); }
TEST_F(Fa3BackwardGpu, GqaMqaAndUnequalLengths) { gqa_mqa_unequal_lengths(); }
TEST_F(Fa3BackwardGpu, VarlenOddLengths) { varlen_odd_lengths(); }
TEST_F(Fa3BackwardGpu, GraphCapture) { graph_capture(); }
TEST_F(Fa3BackwardGpu, LongerSequences) { longer_sequences(); }

TEST(Fa2Backward, UnsupportedSaysWhy) {
  BackwardParams p{};
  p.batch = 1;
  p.heads = p.heads_kv = 4;
  p.seqlen_q = p.seqlen_k = 128;
  p.rows_q = p.rows_k = 128;
  p.dtype = DType::bf16;
  p.head_dim = 128;
  EXPECT_EQ(fa2::unsupported(p, 9, 0), "");
  EXPECT_EQ(fa2::unsupported(p, 8, 0), "");
  p.head_dim = 96;
  EXPECT_NE(fa2::unsupported(p, 9, 0).find("head_dim 96"), std::string::npos);
  p.head_dim = 256;
  EXPECT_EQ(fa2::unsupported(p, 9, 0), "");
  EXPECT_NE(fa2::unsupported(p, 8, 6), "");  // more shared memory than sm86 has
  p.head_dim = 64;
  EXPECT_NE(fa2::unsupported(p, 7, 5), "");
  p.dtype = DType::fp32;
  EXPECT_NE(fa2::unsupported(p, 9, 0).find("fp32"), std::string::npos);
  p.dtype = DType::fp16;
  p.heads_kv = 3;
  EXPECT_NE(fa2::unsupported(p, 9, 0), "");
  p.heads_kv = 2;
  EXPECT_NE(fa2::config_name(p).find("atomic"), std::string::npos);
  const std::size_t atomic_ws = fa2::workspace_bytes(p);
  p.deterministic = true;
  EXPECT_NE(fa2::config_name(p).find("deterministic"), std::string::npos);
  EXPECT_LT(fa2::workspace_bytes(p), atomic_ws);  // no fp32 dQ accumulator
}

TEST(Fa3Backward, UnsupportedSaysWhy) {
  BackwardParams p{};
  p.batch = 1;
  p.heads = p.heads_kv = 4;
  p.seqlen_q = p.seqlen_k = 128;
  p.rows_q = p.rows_k = 128;
  p.dtype = DType::bf16;
  p.head_dim = 128;
  EXPECT_NE(fa3::unsupported(p, 8, 0).find("sm_90a"), std::string::npos);
  EXPECT_NE(fa3::unsupported(p, 10, 0).find("sm_90a"), std::string::npos);
  p.head_dim = 256;
  EXPECT_NE(fa3::unsupported(p, 9, 0).find("head_dim 256"), std::string::npos);
  p.head_dim = 64;
  p.deterministic = true;
  EXPECT_NE(fa3::unsupported(p, 9, 0).find("deterministic"), std::string::npos);
  p.deterministic = false;
  p.dtype = DType::fp32;
  EXPECT_NE(fa3::unsupported(p, 9, 0).find("fp32"), std::string::npos);
  EXPECT_NE(fa3::config_name(p).find("d64"), std::string::npos);
  // D, LSE and the fp32 dQ accumulator: at least 4 bytes per dQ element.
  EXPECT_GE(fa3::workspace_bytes(p), static_cast<std::size_t>(128 * 4 * 64 * 4));
}

#endif  // GENBENCH_HAVE_CUDA

}  // namespace
}  // namespace genbench
