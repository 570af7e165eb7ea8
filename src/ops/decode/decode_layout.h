#pragma once
// Decode attention's problem, independent of the framework (standard C++ only, so that the
// kernels, the host reference and standalone device programs share it):
//
//   Q, O         [batch, new_tokens, heads, head_dim]          (bf16 or fp16; O as Q)
//   K, V pools   [pool_pages, page_rows, heads_kv, head_dim]   (bf16, fp16 or fp8_e4m3)
//   block table  [batch, pages_per_seq] int32: page p of sequence b is pool page table[b][p]
//   cache_len    [batch] int32: keys of sequence b (the new tokens' keys included, last)
//   LSE          [batch, new_tokens, heads] fp32 (natural log of the softmax denominator)
//
// Key j of sequence b lives in pool row table[b][j / page_rows] * page_rows + j % page_rows.
// page_size 0 is the contiguous layout: one page per sequence of `cache` rows (page_rows =
// cache, table[b][0] = b). Paged layouts place the pages in a seeded random order, so a
// sequence's pages are scattered over the pool. Query token i (0-based) of the n new tokens
// of sequence b sees keys [0, L_b - n + i + 1) when causal (bottom-right aligned), all L_b
// keys otherwise. The query rows that share a KV head (heads / heads_kv of them, times the
// new tokens) are what one kernel tile holds.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace genbench::decode {

struct DecodeDims {
  std::int64_t batch = 1, heads = 32, heads_kv = 8, head_dim = 128;
  std::int64_t new_tokens = 1;  // query tokens per sequence (1; up to 16 for speculative decoding)
  std::int64_t cache = 4096;    // largest keys per sequence (the new tokens' included)
  std::int64_t page_size = 0;   // 0: contiguous; else a power of two (16, 64, 128, 256)
  bool varlen = false;          // per-sequence lengths drawn in [max(cache/2, new), cache]
  bool causal = true;           // among the new tokens, bottom-right aligned
  int q_bytes = 2;              // bytes per Q/O element (bf16, fp16)
  int kv_bytes = 2;             // bytes per K/V element (2: bf16/fp16, 1: fp8_e4m3)

  std::int64_t group() const { return heads / heads_kv; }
  std::int64_t page_rows() const { return page_size > 0 ? page_size : cache; }
  std::int64_t pages_per_seq() const { return page_size > 0 ? (cache + page_size - 1) / page_size : 1; }
  std::int64_t pool_pages() const { return batch * pages_per_seq(); }
  // Elements of one K (or V) pool.
  std::int64_t pool_elements() const { return pool_pages() * page_rows() * heads_kv * head_dim; }
  // Bytes of K and V pools together.
  double pool_bytes() const { return 2.0 * static_cast<double>(pool_elements()) * kv_bytes; }
};

inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Per-sequence cache lengths: `cache` for every sequence, or with varlen a draw in
// [max(ceil(cache/2), new_tokens), cache] seeded by the shape and `draw` alone (work() and
// every rank see the same lengths; graph replays use draw 1, 2...).
inline std::vector<std::int64_t> cache_lengths(const DecodeDims& d, std::uint64_t draw = 0) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(d.batch), d.cache);
  if (!d.varlen) return v;
  const std::int64_t lo = std::min(d.cache, std::max((d.cache + 1) / 2, d.new_tokens));
  const std::uint64_t salt = mix64(0xdec0deull + draw * 7919u + static_cast<std::uint64_t>(d.cache));
  for (std::int64_t b = 0; b < d.batch; ++b) {
    const std::uint64_t r = mix64(salt ^ mix64(static_cast<std::uint64_t>(b) * 0x100000001b3ull));
    v[static_cast<std::size_t>(b)] = lo + static_cast<std::int64_t>(r % static_cast<std::uint64_t>(d.cache - lo + 1));
  }
  return v;
}

// The block table [batch, pages_per_seq]: contiguous: table[b][0] = b; paged: a seeded random
// permutation of the pool's pages (Fisher-Yates on splitmix64), row b holding sequence b's
// pages in key order. The table covers `cache` keys per sequence, so any lengths up to it
// (graph replays with new lengths) use the same table.
inline std::vector<std::int32_t> block_table(const DecodeDims& d, std::uint64_t seed) {
  const std::int64_t n = d.pool_pages();
  std::vector<std::int32_t> t(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) t[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
  if (d.page_size == 0) return t;
  std::uint64_t s = mix64(seed ^ 0x9a9e5ull);
  for (std::int64_t i = n - 1; i > 0; --i) {
    s = mix64(s);
    const auto j = static_cast<std::int64_t>(s % static_cast<std::uint64_t>(i + 1));
    std::swap(t[static_cast<std::size_t>(i)], t[static_cast<std::size_t>(j)]);
  }
  return t;
}

// Keys visible to query token i of a sequence with L keys.
inline std::int64_t key_end(const DecodeDims& d, std::int64_t L, std::int64_t i) {
  if (!d.causal) return L;
  return std::max<std::int64_t>(0, std::min(L, L - d.new_tokens + i + 1));
}

// Unmasked (query, key) pairs of one head of one sequence.
inline double pairs(const DecodeDims& d, std::int64_t L) {
  double n = 0;
  for (std::int64_t i = 0; i < d.new_tokens; ++i) n += static_cast<double>(key_end(d, L, i));
  return n;
}

// 4 x heads x head_dim x unmasked pairs (QK^T and PV, a multiply-add each).
inline double flops(const DecodeDims& d, const std::vector<std::int64_t>& lengths) {
  double p = 0;
  for (auto L : lengths) p += pairs(d, L);
  return 4.0 * static_cast<double>(d.heads * d.head_dim) * p;
}

// Bytes one execution must move at least: K and V of the keys each sequence has (read once
// per KV head, whatever the group size), Q and O, and the block-table entries of the pages
// in use (paged layouts).
struct DecodeBytes {
  double kv = 0, q = 0, o = 0, table = 0;
  double total() const { return kv + q + o + table; }
};
inline DecodeBytes bytes(const DecodeDims& d, const std::vector<std::int64_t>& lengths) {
  DecodeBytes b;
  double keys = 0, pages = 0;
  for (auto L : lengths) {
    keys += static_cast<double>(L);
    if (d.page_size > 0) pages += static_cast<double>((L + d.page_size - 1) / d.page_size);
  }
  b.kv = 2.0 * keys * static_cast<double>(d.heads_kv * d.head_dim) * d.kv_bytes;
  b.q = static_cast<double>(d.batch * d.new_tokens * d.heads * d.head_dim) * d.q_bytes;
  b.o = b.q;
  b.table = 4.0 * pages;
  return b;
}

// "" when the dimensions are legal, else the problem (checked before any device work).
// max_pool_bytes bounds the K and V pools together.
inline std::string check_dims(const DecodeDims& d, double max_pool_bytes) {
  auto num = [](std::int64_t x) { return std::to_string(x); };
  if (d.cache < 1) return "cache length must be at least 1 (got " + num(d.cache) + ")";
  if (d.heads_kv < 1 || d.heads < 1) return "heads and heads_kv must be at least 1";
  if (d.heads % d.heads_kv != 0)
    return "heads (" + num(d.heads) + ") is not a multiple of heads_kv (" + num(d.heads_kv) + ")";
  if (d.new_tokens < 1) return "new_tokens must be at least 1";
  if (d.new_tokens > d.cache)
    return "new_tokens (" + num(d.new_tokens) + ") exceeds the cache length (" + num(d.cache) +
           "): the new tokens' keys are part of the cache";
  if (d.page_size < 0) return "page_size must be 0 (contiguous) or a power of two";
  if (d.page_size > 0) {
    if ((d.page_size & (d.page_size - 1)) != 0) return "page_size " + num(d.page_size) + " is not a power of two";
    if (d.page_size > d.cache)
      return "page_size " + num(d.page_size) + " exceeds the cache length (" + num(d.cache) + ")";
  }
  if (d.pool_pages() >= (std::int64_t{1} << 31)) return "the pool has 2^31 pages or more (int32 block table)";
  if (d.pool_bytes() > max_pool_bytes) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "the K and V pools need %.3g GB, over the limit of %.3g GB", d.pool_bytes() / 1e9,
                  max_pool_bytes / 1e9);
    return buf;
  }
  return "";
}

}  // namespace genbench::decode
