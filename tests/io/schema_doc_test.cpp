// docs/hdf5-schema.md holds the tables `genbench schema --markdown` prints (between its two
// markers): this test fails when the doc and the column tables (src/io/columns.cpp, DeviceInfo's
// fields, the registered ops' columns) disagree. Regenerate with scripts/schema-doc.py.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "io/columns.h"
#include "support/test_env.h"

namespace genbench {
namespace {

TEST(SchemaDoc, GeneratedTablesMatchTheColumnTables) {
  const std::string path = test::source_dir() + "/docs/hdf5-schema.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::string begin = "<!-- genbench schema --markdown: begin -->\n";
  const std::string end = "<!-- genbench schema --markdown: end -->\n";
  const auto b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos) << path << " lacks the marker " << begin;
  ASSERT_NE(e, std::string::npos) << path << " lacks the marker " << end;
  ASSERT_LT(b, e);
  const std::string in_doc = doc.substr(b + begin.size(), e - b - begin.size());
  const std::string generated = columns::schema_markdown();
  if (in_doc == generated) return;
  // Name the first line that differs.
  std::istringstream x(in_doc), y(generated);
  std::string lx, ly;
  int line = 0;
  while (true) {
    const bool gx = static_cast<bool>(std::getline(x, lx)), gy = static_cast<bool>(std::getline(y, ly));
    ++line;
    if (!gx && !gy) break;
    if (!gx || !gy || lx != ly) {
      ADD_FAILURE() << path << ": the generated tables differ from genbench schema --markdown at their line " << line
                    << ":\n  doc:       " << (gx ? lx : "(end)") << "\n  generated: " << (gy ? ly : "(end)")
                    << "\nRegenerate with scripts/schema-doc.py docs/hdf5-schema.md BUILD/bin/genbench";
      return;
    }
  }
}

TEST(SchemaDoc, EveryFixedColumnHasAMeaning) {
  for (const auto& cols : {columns::points_fixed(), columns::rank_stats(), columns::system(), columns::ceilings()})
    for (const auto& c : cols) EXPECT_FALSE(c.meaning.empty()) << c.name;
}

}  // namespace
}  // namespace genbench
