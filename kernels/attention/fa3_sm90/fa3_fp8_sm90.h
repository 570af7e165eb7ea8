#pragma once
// fa3 fp8: the e4m3 forward of attention/fa3 for Hopper (sm_90a): the E4m3 instantiations of the
// kernel in fa3_kernel.cuh plus a V^T pre-pass, in fa3_fp8_sm90.cu.
// Inputs Q, K, V in e4m3 with per-tensor descale factors (true value = stored x descale);
// softmax in fp32; output O in bf16, LSE in fp32 as in the 16-bit kernel. Tensor maps are
// encoded once per problem; launch() is stream-ordered and capturable.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/attention/fa3_sm90/fa3_sm90.h"

namespace genbench::fa3::fp8 {

// 8-bit wgmma takes B only K-major, so O += P V needs V^T (keys contiguous). A pre-pass
// kernel, launched in the same stream before the attention kernel, writes V^T as
// [batch, heads_kv, head_dim, seqlen_k rounded up to kVtKeyPad] e4m3, zero past seqlen_k, with
// the keys of every group of 16 permuted: position p of a group holds key vt_key_at(p) of that
// group. The permutation makes the fp32 accumulator of S, packed per thread in register order,
// the A fragment of the PV product (derivation in fa3_fp8_sm90.cu).
constexpr int kVtKeyPad = 128;
constexpr int vt_key_at(int p) { return 2 * (p / 4) + (p % 2) + 8 * ((p % 4) / 2); }
// Byte j (0..3) of A register r (0..3) of a 32-key step is taken from accumulator register
// 16 c + p_pack_source(r, j) of that step c: registers 0/2 of the A fragment come from row r0,
// 1/3 from row r0 + 8; 0/1 from the first 16 keys, 2/3 from the second.
constexpr int p_pack_source(int r, int j) { return 2 * (r % 2) + 8 * (r / 2) + (j % 2) + 4 * (j / 2); }

// Q, K and V in e4m3, O in bf16 (layouts of fa3::Tensors); head_dim 128 or 256.
struct Problem : Tensors {
  void* vt = nullptr;                                       // scratch of vt_bytes() bytes for V^T
  float descale_q = 1.f, descale_k = 1.f, descale_v = 1.f;  // true value = stored x descale
  // Max-free softmax blocks (fa3_kernel.cuh) rebase a row once a P (2^4 x exp(s - base)) rounds
  // to e4m3 at or above this, 1 to 448 (below 448 only to exercise the rebase in tests); 0 turns
  // max-free blocks off (every block takes the row max).
  float p_limit = 448.f;
  int* counts = nullptr;  // tests: device [max-free blocks, rebases], counted per warp, or nullptr
};

// Consumer warpgroups (64 query rows each): two at every head dim.
inline constexpr int kConsumers = 2;

std::size_t vt_bytes(int batch, int heads_kv, int head_dim, int seqlen_k);

// The V^T pre-pass alone (Launcher::launch runs it first): V [batch, seqlen_k, heads_kv,
// head_dim] e4m3 -> vt, vt_bytes() bytes in the layout above. head_dim a multiple of 64;
// stream-ordered and capturable.
void transpose_v(const void* v, void* vt, int batch, int seqlen_k, int heads_kv, int head_dim, cudaStream_t stream);

// "" when this build holds sm_90a code for the fp8 kernel, else why not.
std::string build_support();

class Launcher {
 public:
  explicit Launcher(const Problem& p);     // throws genbench::Error when a tensor map cannot be encoded
  void launch(cudaStream_t stream) const;  // V^T pre-pass, then the attention kernel
  std::string variant() const;
  // The split tail's workspace (fa3::SplitTail; e4m3 does not split, so 0 bytes today).
  std::size_t split_workspace_bytes() const { return split_.ws_bytes; }
  void set_split_workspace(void* zeroed) { split_.ws = zeroed; }
  // What the launcher chose, as fa3::Launcher says it: the consumer count is fixed
  // (kConsumers), and the split tail's plan never splits at e4m3.
  int consumers() const { return kConsumers; }
  bool pingpong() const { return p_.pingpong; }
  bool persistent() const { return persistent_ctas_ > 0; }
  bool split() const { return split_.plan.slots > 0; }

 private:
  Problem p_;
  int bn_ = 0, stages_ = 0;
  int persistent_ctas_ = 0;  // CTAs of a persistent launch (the SM count); 0 = one per tile
  SplitTail split_;
  std::uint32_t p_limit_add_ = 0;  // KernelParams::p_limit_add for p_.p_limit (0: max-free blocks off)
  CUtensorMap tq_{}, tk_{}, tvt_{}, to_{};
};

}  // namespace genbench::fa3::fp8
