#include "ops/attention_backward/attention_backward.h"

#include "core/strings.h"

namespace genbench {

double attention_backward_flops(const AttentionShape& s) { return 2.5 * s.flops(); }

double attention_backward_bytes(const AttentionShape& s) {
  std::int64_t tq = 0, tk = 0;
  for (auto n : s.lengths_q()) tq += n;
  for (auto n : s.lengths_k()) tk += n;
  const double el = static_cast<double>(dtype_size(s.dtype));
  const double q_side = static_cast<double>(s.heads * tq * s.head_dim);      // Q, O, dO, dQ each
  const double kv_side = static_cast<double>(s.heads_kv * tk * s.head_dim);  // K, V, dK, dV each
  return el * (4.0 * q_side + 4.0 * kv_side) + 4.0 * static_cast<double>(s.heads * tq);
}

namespace {

// The forward's axes, shapes, legality and effective columns, reused as they are; what differs
// is the work, the metric, the dtypes and the `deterministic` axis.
class AttentionBackwardOp final : public Op {
 public:
  std::string name() const override { return "attention_backward"; }

  std::string summary() const override {
    return "backward of softmax(Q K^T * scale) V: dQ, dK, dV from Q, K, V, O, dO and LSE; fp16/bf16, MHA/GQA/MQA, "
           "causal, varlen, eager or graph";
  }

  std::vector<AxisSpec> define_axes() const override {
    Axes v(fwd().define_axes());
    v.at("dtype").choices = {"fp16", "bf16", "fp32"};
    v.at("dtype").help = "input and gradient precision (fp32: the host reference)";
    // The backward kernels take one head dim for Q, K and V, and only these.
    v.at("head_dim").allowed = {64, 128, 256};
    v.at("head_dim_v").allowed = {0};
    v.at("head_dim_v").help = "0 only: the backward takes V's head dimension from head_dim";
    v.boolean(attention_backward_axis::deterministic, "deterministic")
        .help("dQ without atomics: the same bits on every run");
    return v.done();
  }

  std::string check(const Point& p, int world_size) const override { return fwd().check(p, world_size); }

  Work work(const Point& p, int) const override {
    const auto s = AttentionShape::from(p);
    Work w;
    w.flops = attention_backward_flops(s);
    w.bytes = attention_backward_bytes(s);
    return w;
  }

  std::vector<OpColumn> define_columns() const override {
    OpColumns c;
    c.same_as(fwd().columns(), ColumnKind::effective);
    c.metric("tflops", "TFLOP/s",
             "backward FLOPs (2.5 x the forward's 4*b*h*sq*sk*d, causal with sq == sk halved) per second, median "
             "time",
             [](const Work& w, double t) { return w.flops / t / 1e12; });
    return c.done();
  }

  HostExample host_example() const override {
    return HostExample()
        .ints("batch", {2})
        .ints("heads", {4})
        .ints("heads_kv", {4, 1})
        .ints("seqlen_q", {33})
        .ints("seqlen_k", {0, 90})
        .ints("head_dim", {64})
        .flags("causal", {false, true});
  }

  AnalysisHints analysis() const override {
    AnalysisHints h = fwd().analysis();
    h.title = "Attention backward throughput against sequence length";
    return h;
  }

  CeilingId ceiling(const Point& p) const override { return fwd().ceiling(p); }

  std::string describe(const Point& p) const override {
    return fwd().describe(p) + (p.boolean(attention_backward_axis::deterministic) ? " deterministic" : "");
  }

 private:
  static const Op& fwd() { return attention_op(); }
};

}  // namespace

const Op& attention_backward_op() {
  static const AttentionBackwardOp op;
  return op;
}

GENBENCH_REGISTER_OP(attention_backward_op)

}  // namespace genbench
