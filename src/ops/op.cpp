#include "ops/op.h"

#include "ops/attention.h"
#include "ops/collective.h"
#include "ops/gemm.h"
#include "ops/overlap.h"

namespace genbench {

std::string Op::describe(const Point& p) const {
  std::string out;
  const auto& ax = axes();
  for (std::size_t i = 0; i < ax.size() && i < p.values.size(); ++i) {
    if (i) out += ' ';
    out += ax[i].name + "=" + to_string(p.values[i]);
  }
  return out;
}

std::string Op::skip_reason(const Point&, int) const { return ""; }

std::string Op::ceiling(const Point&) const { return ""; }

std::size_t Op::axis_index(const std::string& n) const {
  const auto& ax = axes();
  for (std::size_t i = 0; i < ax.size(); ++i)
    if (ax[i].name == n) return i;
  return static_cast<std::size_t>(-1);
}

const std::vector<const Op*>& all_ops() {
  static const std::vector<const Op*> ops = {&attention_op(), &gemm_op(), &collective_op(), &overlap_op()};
  return ops;
}

const Op* find_op(const std::string& name) {
  for (const Op* op : all_ops())
    if (op->name() == name) return op;
  return nullptr;
}

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (const Op* op : all_ops()) v.push_back(op->name());
  return v;
}

}  // namespace genbench
