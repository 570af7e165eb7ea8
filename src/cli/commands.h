#pragma once
#include <string>

#include "comm/comm.h"
#include "config/config.h"

namespace genbench {

#define GENBENCH_VERSION_STRING GENBENCH_VERSION " (" GENBENCH_GIT_REVISION ")"

struct RunArgs {
  std::string config, output, backend;
  bool force = false, resume = false, quiet = false;
  bool list = false;    // print the points that would run, run nothing
  Selection selection;  // -b / -a
  std::string command_line;
};

struct ValidateArgs {
  std::string config, backend = "auto";
  int world_size = 0;
  Selection selection;
};

int cmd_run(const RunArgs& args, const Comm& comm);
int cmd_validate(const ValidateArgs& args, const Comm& comm);
// text: for people; markdown: docs/config.md's per-op sections; json: for scripts (ops/op_doc.h).
enum class ListFormat { text, markdown, json };
int cmd_list(ListFormat format);
int cmd_info(const Comm& comm);
// Every dataset and column of the result file (src/io/columns.h); markdown: the tables of
// docs/hdf5-schema.md.
int cmd_schema(bool markdown);

struct DescribeArgs {
  std::string what;  // an op's name or a result file
  bool json = false;
};
// One op from the registry, or a result file (io/describe.h). A name that is no op and no file
// is a UsageError listing the ops.
int cmd_describe(const DescribeArgs& args);

}  // namespace genbench

#include "version.h"
