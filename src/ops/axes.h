#pragma once
// An op's axes (the dimensions a config sweeps) and the small fluent builder they are declared
// with, one chain an axis:
//
//   namespace a = attention_axis;
//   Axes v(a::count);
//   v.size(a::seqlen_q, "seqlen_q").unit("tokens").default_(1024).range(1, 1 << 24).help("query length");
//   v.choice(a::dtype, "dtype", {"fp16", "bf16"}).default_("bf16").help("input precision");
//   v.boolean(a::causal, "causal").help("bottom-right aligned causal mask");
//   return v.done();
//
// Each kind of axis takes only what applies to it: a default of its own type (a value of
// another kind does not compile), bounds and allowed values for integer and size axes, a unit
// for those and real axes. done() throws std::logic_error naming the axis for a slot left empty
// or filled twice, a name used twice, a missing help or default, or a default outside the
// bounds, the allowed values or the choices; every op's axes are built by the tests.
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sweep/point.h"

namespace genbench {

enum class AxisType { integer, size, real, boolean, choice };

struct AxisSpec {
  std::string name;
  AxisType type = AxisType::integer;
  AxisValue default_value;           // used when the config omits the axis
  std::vector<std::string> choices;  // allowed values of a choice axis
  std::int64_t min = 1;              // inclusive bounds of integer/size axes
  std::int64_t max = INT64_MAX;
  std::vector<std::int64_t> allowed;  // when non-empty, the only legal integer values
  std::string help;
  std::string unit;       // of an integer, size or real axis's values ("tokens", "B"), or ""
  bool auto_all = false;  // a choice axis where 'auto' means every choice
  // A tuning switch of one implementation (ImplementationInfo::tuning): a choice axis whose
  // default "auto" is the implementation's own choice; the points table records the given value
  // and, in "<name>_chosen", what the implementation chose.
  bool tuning = false;
};

const char* axis_type_name(AxisType t);  // "integer", "size", "real", "boolean", "choice"

class Axes;

namespace axis_builder {

// What every kind of axis takes: its help text. Methods return the builder, to chain.
template <class Self>
class Base {
 public:
  Self& help(std::string h) {
    spec().help = std::move(h);
    return self();
  }

 protected:
  Base(Axes& axes, std::size_t i) : axes_(&axes), i_(i) {}
  AxisSpec& spec();
  void set_default(AxisValue v);
  Self& self() { return static_cast<Self&>(*this); }

 private:
  Axes* axes_;
  std::size_t i_;
};

// integer and size axes (size: the config also takes 4K, 1M, ...).
class Int : public Base<Int> {
 public:
  Int& unit(std::string u) {
    spec().unit = std::move(u);
    return *this;
  }
  Int& default_(std::int64_t v) {
    set_default(v);
    return *this;
  }
  template <class T, std::enable_if_t<!std::is_integral_v<T> || std::is_same_v<T, bool>, int> = 0>
  Int& default_(T) = delete;  // an integer axis's default is an integer
  Int& min(std::int64_t lo) {
    spec().min = lo;
    return *this;
  }
  Int& max(std::int64_t hi) {
    spec().max = hi;
    return *this;
  }
  Int& range(std::int64_t lo, std::int64_t hi) { return min(lo).max(hi); }
  Int& allowed(std::vector<std::int64_t> values) {
    spec().allowed = std::move(values);
    return *this;
  }

 private:
  friend class genbench::Axes;
  using Base::Base;
};

class Real : public Base<Real> {
 public:
  Real& unit(std::string u) {
    spec().unit = std::move(u);
    return *this;
  }
  Real& default_(double v) {
    set_default(v);
    return *this;
  }
  template <class T, std::enable_if_t<!std::is_arithmetic_v<T> || std::is_same_v<T, bool>, int> = 0>
  Real& default_(T) = delete;  // a real axis's default is a number

 private:
  friend class genbench::Axes;
  using Base::Base;
};

// boolean axes: false unless default_(true); stored as 0/1.
class Bool : public Base<Bool> {
 public:
  Bool& default_(bool v) {
    set_default(std::int64_t{v ? 1 : 0});
    return *this;
  }
  template <class T, std::enable_if_t<!std::is_same_v<T, bool>, int> = 0>
  Bool& default_(T) = delete;  // a boolean axis's default is true or false

 private:
  friend class genbench::Axes;
  using Base::Base;
};

class Choice : public Base<Choice> {
 public:
  Choice& default_(std::string v) {
    set_default(std::move(v));
    return *this;
  }
  // 'auto' in a config means every choice.
  Choice& auto_all() {
    spec().auto_all = true;
    return *this;
  }

 private:
  friend class genbench::Axes;
  using Base::Base;
};

}  // namespace axis_builder

class Axes {
 public:
  // `count` slots filled by index (an op's axis enum); without it, axes are appended in order.
  explicit Axes(std::size_t count = 0);
  // Starts from axes already made (another op's, to add to or change).
  explicit Axes(std::vector<AxisSpec> from);

  axis_builder::Int int64(std::size_t index, std::string name) {
    return make<axis_builder::Int>(index, name, AxisType::integer);
  }
  axis_builder::Int size(std::size_t index, std::string name) {
    return make<axis_builder::Int>(index, name, AxisType::size);
  }
  axis_builder::Real real(std::size_t index, std::string name) {
    return make<axis_builder::Real>(index, name, AxisType::real);
  }
  axis_builder::Bool boolean(std::size_t index, std::string name) {
    auto b = make<axis_builder::Bool>(index, name, AxisType::boolean);
    b.default_(false);
    return b;
  }
  axis_builder::Choice choice(std::size_t index, std::string name, std::vector<std::string> choices) {
    auto b = make<axis_builder::Choice>(index, name, AxisType::choice);
    specs_[index].choices = std::move(choices);
    return b;
  }
  // The same, appended after the axes so far.
  axis_builder::Int int64(std::string name) { return int64(next(), std::move(name)); }
  axis_builder::Int size(std::string name) { return size(next(), std::move(name)); }
  axis_builder::Real real(std::string name) { return real(next(), std::move(name)); }
  axis_builder::Bool boolean(std::string name) { return boolean(next(), std::move(name)); }
  axis_builder::Choice choice(std::string name, std::vector<std::string> choices) {
    return choice(next(), std::move(name), std::move(choices));
  }

  // An axis already declared, by name (Axes(from)), to change its choices or help.
  AxisSpec& at(const std::string& name);

  // The axes, checked (see the top of this file).
  std::vector<AxisSpec> done() const;

 private:
  template <class>
  friend class axis_builder::Base;
  template <class B>
  B make(std::size_t index, std::string& name, AxisType type);
  std::size_t next() const { return specs_.size(); }

  std::vector<AxisSpec> specs_;
  std::vector<int> filled_;      // times each slot was declared
  std::vector<bool> defaulted_;  // whether its default was given
};

template <class Self>
AxisSpec& axis_builder::Base<Self>::spec() {
  return axes_->specs_[i_];
}

template <class Self>
void axis_builder::Base<Self>::set_default(AxisValue v) {
  axes_->specs_[i_].default_value = std::move(v);
  axes_->defaulted_[i_] = true;
}

template <class B>
B Axes::make(std::size_t index, std::string& name, AxisType type) {
  if (index >= specs_.size()) {
    specs_.resize(index + 1);
    filled_.resize(index + 1, 0);
    defaulted_.resize(index + 1, false);
  }
  AxisSpec& s = specs_[index];
  s = AxisSpec{};
  s.name = std::move(name);
  s.type = type;
  if (type == AxisType::boolean) {
    s.min = 0;
    s.max = 1;
  } else if (type == AxisType::real || type == AxisType::choice) {
    s.min = 0;
    s.max = 0;
  }
  ++filled_[index];
  defaulted_[index] = false;
  return B(*this, index);
}

}  // namespace genbench
