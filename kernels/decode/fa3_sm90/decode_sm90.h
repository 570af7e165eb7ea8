#pragma once
// The decode attention kernel of kernels/decode/fa3_sm90 (host contract). The layouts are
// ops/decode/decode_layout.h's. One CTA takes (sequence, KV head, key range, row chunk): the
// query rows of the heads that share the KV head, times the new tokens, are the rows of its
// tile, so each K/V block is read once for all of them; K/V blocks of 64 keys are gathered
// through the block table with cp.async (16-byte copies, zero-filled past the sequence's end)
// into a 3-stage shared-memory ring, multiplied with mma.sync (bf16, or fp16 for fp16 and fp8
// K/V, whose e4m3 values widen to fp16 exactly), and an online softmax keeps each warp's rows.
// When batch x KV heads cannot fill the SMs (or would leave a partial last wave), the cache is
// split over CTAs (num_splits); the last CTA of each (sequence, KV head) to finish combines
// the splits' partial outputs by their LSE, in the same kernel.
//
// Everything the kernel reads about the problem's lengths (cache_len, block table) is in
// device memory, so a captured graph serves any lengths up to max_cache.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace genbench::decode::fa3 {

enum class Elem { bf16, fp16, fp8_e4m3 };

struct Arguments {
  const void* q = nullptr;  // [batch, new_tokens, heads, head_dim]
  const void* k = nullptr;  // pool [pages, page_rows, heads_kv, head_dim]
  const void* v = nullptr;
  void* o = nullptr;                 // as q, in q_type
  float* lse = nullptr;              // [batch, new_tokens, heads], natural log
  const int* block_table = nullptr;  // [batch, pages_per_seq]
  const int* cache_len = nullptr;    // [batch]
  int batch = 0, heads = 0, heads_kv = 0, head_dim = 0, new_tokens = 1;
  int max_cache = 0;  // every cache_len is at most this (sizes the splits)
  int page_size = 0;  // 0: contiguous (row b * max_cache + j); else a power of two
  int pages_per_seq = 1;
  bool causal = true;
  float scale = 0;                     // softmax scale
  float k_descale = 1, v_descale = 1;  // true value = stored x descale (fp8 K/V)
  Elem q_type = Elem::bf16, kv_type = Elem::bf16;
  int num_splits = 0;   // 0: planned from the SM count; else forced (tests)
  bool rotate = false;  // start each CTA's key loop at a CTA-dependent block (A/B switch)
};

// "" when the kernel supports the arguments, else why not.
std::string can_implement(const Arguments& a);

class Launcher {
 public:
  // Plans the launch (split count from sm_count and the kernel's occupancy).
  Launcher(const Arguments& a, int sm_count);
  // Bytes of workspace the splits need (0 without splits): partial O and LSE, and one counter
  // per (sequence, KV head, row chunk). Zero-fill it once before the first run(); the kernel
  // leaves the counters at zero again, so it serves every later run and graph replay.
  std::size_t workspace_size() const;
  void set_workspace(void* ws) { ws_ = ws; }
  // Enqueues the kernel (and the combine) on `stream`; no host synchronisation (capturable).
  void run(cudaStream_t stream) const;
  int num_splits() const { return splits_; }
  int split_keys() const { return split_keys_; }
  // "split=S keys=K ks=4 rows=16x1" and the like, for the variant column.
  std::string variant() const;

 private:
  Arguments a_;
  int splits_ = 1, split_keys_ = 0, key_slices_ = 4, row_chunks_ = 1;
  void* ws_ = nullptr;
};

// Copies the first `cache` keys of every sequence of a paged pool into the contiguous layout
// (row b * cache + j), through the block table: out holds batch * cache rows of row_bytes (a
// multiple of 16). For checking a paged layout against the contiguous one on the same data.
void gather_contiguous(const void* pool, const int* block_table, int page_size, int pages_per_seq, int batch, int cache,
                       std::size_t row_bytes, void* out, cudaStream_t stream);

}  // namespace genbench::decode::fa3
