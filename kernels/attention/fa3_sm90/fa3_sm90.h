#pragma once
// fa3: fused attention forward for Hopper (sm_90a) in the style of FlashAttention-3.
// Host interface of the 16-bit instantiations (fa3_sm90.cu) of the kernel in fa3_kernel.cuh;
// the e4m3 ones are in fa3_fp8_sm90.h. Tensor maps are encoded once per problem,
// launches are stream-ordered and capturable.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "kernels/attention/fa3_sm90/fa3_split.h"

namespace genbench::fa3 {

// What every fa3 kernel takes: Q [batch, seqlen_q, heads, head_dim], O [batch, seqlen_q, heads,
// head_dim_v]; K [batch, seqlen_k, heads_kv, head_dim], V [batch, seqlen_k, heads_kv, head_dim_v];
// LSE fp32 [batch, heads, seqlen_q]. Causal is bottom-right aligned. The 16-bit kernels run a
// head dim they have no kernel of (96; Q/K and V/O dims that differ, as MLA's 192/128) on the
// next compiled one, max(head_dim, head_dim_v) rounded up: TMA reads the columns past a
// tensor's own as zeros and does not write them back, so only the padded columns' work is extra.
struct Tensors {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;
  int batch = 0, heads = 0, heads_kv = 0, seqlen_q = 0, seqlen_k = 0, head_dim = 0;
  int head_dim_v = 0;  // V and O; 0 = head_dim
  bool causal = false;
  float scale = 0;       // softmax scale
  bool pingpong = true;  // consumer warpgroups take turns issuing their GEMMs (named barriers)
  // One CTA per SM claiming tiles from a counter (1), one CTA per tile (0), or the kernel's
  // default (-1: persistent).
  int persistent = -1;
  int* sched = nullptr;  // 2 ints of zeroed device memory, needed by persistent launches
  // Persistent launches: split the last round's tiles by key range across the SMs (1), never
  // (0), or where the kernel expects a gain (-1; fa3_split.h).
  int split_tail = -1;
};

// A persistent launch's split tail (fa3_split.h) and its workspace: ws_bytes of device memory
// (0 without a split) that the Launcher's owner allocates, zeroed, and hands over with
// Launcher::set_split_workspace (so the backend counts it): the piece counters (count_bytes),
// then the partial results.
struct SplitTail {
  SplitSlots plan;
  std::size_t count_bytes = 0, ws_bytes = 0;
  void* ws = nullptr;
};

// The 16-bit kernel: all tensors fp16 or bf16.
// Varlen (cu_q and cu_k set): sequences packed along the rows, sequence b occupying rows
// [cu[b], cu[b+1]) of buffers sized batch * seqlen rows; seqlen_q/seqlen_k are the maxima
// (they size the grid), the lengths are read on the device at every launch; LSE is
// [heads, batch * seqlen_q] indexed by the packed row.
struct Problem : Tensors {
  const int* cu_q = nullptr;  // varlen: cumulative lengths (batch + 1 int32) in device memory
  const int* cu_k = nullptr;
  bool bf16 = true;
  int consumers = 0;  // consumer warpgroups asked for (2 or 3); 0: the kernel's choice
};

// "" when this build holds sm_90a code for fa3, else why not (the caller checks the device).
std::string build_support();

// The compiled head dim (64, 128, 192 or 256) a 16-bit problem runs on: the smallest that holds
// both head dims (head_dim_v 0: head_dim); 0 when none does or a dim is not a multiple of 8.
int kernel_dim(int head_dim, int head_dim_v);

class Launcher {
 public:
  explicit Launcher(const Problem& p);  // throws genbench::Error when a tensor map cannot be encoded
  void launch(cudaStream_t stream) const;
  std::string variant() const;
  // Whether launches split their tail (and take the kernel with the split compiled in).
  bool split() const { return split_.plan.slots > 0; }
  // What the launcher chose: consumer warpgroups, turn-taking, one CTA per SM.
  int consumers() const { return consumers_; }
  bool pingpong() const { return p_.pingpong; }
  bool persistent() const { return persistent_ctas_ > 0; }
  // The split tail's workspace (SplitTail): bytes needed (0: none), and the zeroed memory,
  // which must outlive the launches.
  std::size_t split_workspace_bytes() const { return split_.ws_bytes; }
  void set_split_workspace(void* zeroed) { split_.ws = zeroed; }

 private:
  Problem p_;
  int bn_ = 0;               // key tile width
  int consumers_ = 2;        // consumer warpgroups (64 query rows each)
  int stages_ = 2;           // K/V ring stages
  int kernel_dim_ = 0;       // the compiled head dim that runs (head_dim, or the next one: padded)
  int persistent_ctas_ = 0;  // CTAs of a persistent launch (the SM count); 0 = one per tile
  SplitTail split_;
  CUtensorMap tq_{}, tk_{}, tv_{}, to_{};
};

}  // namespace genbench::fa3
