#pragma once
// `genbench describe`: one op, or one result file, as a newcomer needs it.
//
// An op's description is its registry entry (op_registry_json: axes with type, unit, default,
// values and help; implementations with their tuning axes; host example) joined with the
// description the result file stores (Op::description_json: its columns from the one column
// declaration, ops/op_columns.h, the headline metric and the analysis hints), each column with
// how its value is obtained (column_kind_source), and the ceiling its points are held against.
// A result file's description holds, per benchmark, the stored op_description (written from the
// same declaration), the sweep, the implementations and the count of each status. Both render as
// text through one renderer, whose column table is `genbench schema`'s (columns::columns_text).
#include <string>

#include "ops/op.h"

namespace genbench {

std::string describe_op_json(const Op& op);
std::string describe_op_text(const Op& op);

// Throw UsageError for a file that is missing, unreadable or no genbench result file of a
// readable schema version, and for a stored op_description that is not JSON.
std::string describe_file_json(const std::string& path);
std::string describe_file_text(const std::string& path);

}  // namespace genbench
