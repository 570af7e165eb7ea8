#pragma once
// layer: one Llama-style decoder layer measured whole, its parts run back to back as a serving
// step runs them (on the cuda backend: one CUDA graph), beside the same parts timed one at a
// time. The parts, in order: add_rmsnorm, qkv, rope, attention (prefill) or decode attention,
// o, add_rmsnorm, gate_up, silu_mul, down; each is a point of its own op (pointwise, gemm or
// w4a16, attention or decode) prepared through the registry, so the layer measures exactly the
// kernels the model suites time one by one (docs/models.md).
#include <cstdint>
#include <string>
#include <vector>

#include "ops/op.h"

namespace genbench {

namespace layer_axis {
enum : std::size_t {
  phase,      // decode | prefill
  batch,      // sequences
  cache,      // decode: keys per sequence (the new token's included)
  seq,        // prefill: tokens per sequence
  hidden,     // hidden size
  heads,      // query heads (of this rank's shard)
  heads_kv,   // key/value heads
  head_dim,   // head dimension
  inter,      // MLP width (of this rank's shard)
  precision,  // the GEMMs: bf16 | fp8 | int4
  count
};
}

struct LayerShape {
  bool decode = true;
  std::int64_t batch = 1, cache = 0, seq = 0, hidden = 0, heads = 0, heads_kv = 0, head_dim = 0, inter = 0;
  std::string precision;

  static LayerShape from(const Point& p);
  std::int64_t tokens() const { return decode ? batch : batch * seq; }
};

// One part of the layer: its name, how many times a layer runs it, its op and the axis values
// of its point (every other axis at the op's default). With cold_weights the GEMMs rotate copies
// of their weights (their cache axis: cold), as layer after layer of a model reads new ones; the
// host backend has no such mode.
struct LayerPart {
  std::string name;
  int count = 1;
  std::string op;
  std::vector<std::pair<std::string, AxisValue>> axes;
};
std::vector<LayerPart> layer_parts(const LayerShape& s, bool cold_weights = true);

// The names of the parts in order, for the op's extra columns (t_<name>_s).
const std::vector<std::string>& layer_part_names();

const Op& layer_op();

}  // namespace genbench
