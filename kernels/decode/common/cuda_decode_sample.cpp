#include "kernels/decode/common/decode_sample.h"

#include <algorithm>
#include <cmath>

#include "backend/cuda/check.h"
#include "core/strings.h"
#include "kernels/attention/common/attention_case.h"

namespace genbench::decode {

std::vector<std::int64_t> sampled_sequences(const DecodeDims& d, std::uint64_t seed) {
  std::vector<std::int64_t> seqs = {0, d.batch / 2, d.batch - 1};
  for (std::uint64_t r = 1; r <= 2; ++r) seqs.push_back(static_cast<std::int64_t>(mix64(seed + r) % d.batch));
  std::sort(seqs.begin(), seqs.end());
  seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
  return seqs;
}

Validation check_sequences(const DecodeShape& s, const std::vector<std::int64_t>& seqs, HostDecodeData x,
                           const std::vector<std::int64_t>& lengths, const std::vector<float>& q,
                           const std::vector<float>& o, const std::vector<float>& lse,
                           const std::function<std::size_t(std::size_t, std::size_t, std::size_t)>& lse_at,
                           std::uint64_t seed) {
  const auto& d = s.dims;
  const std::size_t H = static_cast<std::size_t>(d.heads), T = static_cast<std::size_t>(d.new_tokens);
  const std::size_t per_seq = T * H, D = static_cast<std::size_t>(d.head_dim);
  for (std::size_t i = 0; i < o.size(); ++i)
    if (std::isnan(o[i]))
      return Validation{false, INFINITY, 0,
                        strprintf("O element %zu (row %zu) is NaN: unwritten or invalid", i, i / D)};
  for (std::size_t i = 0; i < lse.size(); ++i)
    if (std::isnan(lse[i]))
      return Validation{false, INFINITY, 0, strprintf("LSE of row %zu is NaN: unwritten or invalid", i)};
  std::string which;
  for (std::int64_t b : seqs) {
    x.lengths.push_back(lengths[static_cast<std::size_t>(b)]);
    const std::size_t r0 = static_cast<std::size_t>(b) * per_seq;
    x.q.insert(x.q.end(), q.begin() + r0 * D, q.begin() + (r0 + per_seq) * D);
    x.o.insert(x.o.end(), o.begin() + r0 * D, o.begin() + (r0 + per_seq) * D);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t h = 0; h < H; ++h) x.lse.push_back(lse[lse_at(r0, t, h)]);
    which += (which.empty() ? "" : ",") + std::to_string(b);
  }
  const DecodeCheck c = validate_decode(x, seed);
  return Validation{c.ok, c.error, c.tolerance, "sequences " + which + ": " + c.detail};
}

HostDecodeData gather_sequences(const DecodeShape& s, const std::vector<std::int64_t>& seqs, Backend& backend,
                                cudaStream_t stream, const DeviceBuffer& k, const DeviceBuffer& v,
                                const std::vector<std::int32_t>& table, const std::vector<std::int64_t>& lengths,
                                float kv_descale) {
  const auto& d = s.dims;
  const auto n = static_cast<std::int64_t>(seqs.size());
  const std::size_t row = static_cast<std::size_t>(d.heads_kv * d.head_dim) * dtype_size(s.kv_dtype);
  const std::int64_t P = d.page_rows();
  DeviceBuffer sk = backend.allocate(static_cast<std::size_t>(n * d.cache) * row);
  DeviceBuffer sv = backend.allocate(static_cast<std::size_t>(n * d.cache) * row);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t b = seqs[static_cast<std::size_t>(i)], L = lengths[static_cast<std::size_t>(b)];
    for (std::int64_t j = 0; j < L; j += P) {
      const std::size_t src = static_cast<std::size_t>(pool_row(d, table, b, j)) * row;
      const std::size_t dst = static_cast<std::size_t>(i * d.cache + j) * row;
      const std::size_t len = static_cast<std::size_t>(std::min(P, L - j)) * row;
      GENBENCH_CHECK_CUDA(
          cudaMemcpyAsync(sk.as<char>() + dst, k.as<char>() + src, len, cudaMemcpyDeviceToDevice, stream));
      GENBENCH_CHECK_CUDA(
          cudaMemcpyAsync(sv.as<char>() + dst, v.as<char>() + src, len, cudaMemcpyDeviceToDevice, stream));
    }
  }
  GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream));
  HostDecodeData x;
  x.dims = d;
  x.dims.batch = n;
  x.dims.page_size = 0;
  x.q_dtype = s.dtype;
  x.kv_dtype = s.kv_dtype;
  x.scale = s.scale;
  x.table = block_table(x.dims, 0);
  const std::size_t el_kv = static_cast<std::size_t>(n * d.cache * d.heads_kv * d.head_dim);
  x.k = attention::download_as_float(sk.get(), s.kv_dtype, el_kv, kv_descale);
  x.v = attention::download_as_float(sv.get(), s.kv_dtype, el_kv, kv_descale);
  return x;
}

Validation replay_with_lengths(const DecodeShape& s, Validation v,
                               const std::function<void(const std::vector<std::int64_t>&)>& set_lengths,
                               const std::function<Validation()>& rerun, const int& captures, std::string& graph_note) {
  DecodeDims dd = s.dims;
  dd.varlen = true;
  for (std::uint64_t draw : {1u, 2u}) {
    set_lengths(cache_lengths(dd, draw));
    Validation g = rerun();
    if (!g.ok) {
      set_lengths(s.lengths());
      g.detail = strprintf("graph replay with lengths draw %llu: ", static_cast<unsigned long long>(draw)) + g.detail;
      return g;
    }
    v.error = std::max(v.error, g.error);
  }
  set_lengths(s.lengths());
  v.detail += strprintf("; the graph (%d capture) replayed with 2 more sets of lengths, both within bounds", captures);
  graph_note = strprintf(" g:%dcap+2len", captures);
  return v;
}

}  // namespace genbench::decode
