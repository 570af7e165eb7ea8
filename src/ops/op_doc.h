#pragma once
// What the registry says about every op, for people and for scripts:
//   config_markdown()      the per-op reference sections of docs/config.md, each between its two
//                          markers (`genbench list --markdown`; scripts/config-doc.py rewrites
//                          them and tests/ops/config_doc_test.cpp fails when they drift)
//   registry_json()        ops, their axes, implementations (with their tuning axes) and host
//                          examples, and the ceiling sources (`genbench list --json`;
//                          tests/e2e/test_every_op_host.py); op_registry_json() one op's entry
//                          (`genbench describe OP` starts from it)
#include <string>

#include "ops/op.h"

namespace genbench {

// The markers around op `op`'s generated section in docs/config.md.
std::string config_doc_begin(const std::string& op);
std::string config_doc_end(const std::string& op);
// Where scripts/config-doc.py puts the section of an op that docs/config.md does not have yet.
extern const char* const kConfigDocNewOps;

// One op's section, without its markers: heading, summary, axes table (the op's axes, then its
// implementations' tuning axes), implementations table.
std::string op_config_markdown(const Op& op);
// Every registered op's section between its markers, in name order, separated by blank lines.
std::string config_markdown();

// A value of `axis` as a config writes it: booleans true/false, sizes with binary suffixes
// (1M, 256M) where exact.
std::string axis_value_text(const AxisSpec& axis, const AxisValue& v);

// A size as a config writes it: 1K, 256M where the binary suffix is exact, else the number.
std::string binary_size_text(std::int64_t v);

std::string registry_json();
std::string op_registry_json(const Op& op);

}  // namespace genbench
