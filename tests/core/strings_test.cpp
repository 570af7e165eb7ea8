#include "core/strings.h"

#include <gtest/gtest.h>

namespace genbench {
namespace {

TEST(ParseNumber, TakesTheWholeTextAsANumber) {
  double v = -1;
  EXPECT_TRUE(parse_number("448", v));
  EXPECT_EQ(v, 448.0);
  EXPECT_TRUE(parse_number("0.5", v));
  EXPECT_EQ(v, 0.5);
  EXPECT_TRUE(parse_number("1e-3", v));
  EXPECT_EQ(v, 1e-3);
  EXPECT_TRUE(parse_number("-2", v));
  EXPECT_EQ(v, -2.0);
}

TEST(ParseNumber, RefusesTextThatIsNotOnlyANumberAndKeepsTheOutput) {
  for (const char* bad : {"", "x", "12x", "4 ", "soon"}) {
    double v = 7;
    EXPECT_FALSE(parse_number(bad, v)) << "'" << bad << "'";
    EXPECT_EQ(v, 7.0) << "'" << bad << "'";
  }
  double v = 7;
  EXPECT_FALSE(parse_number(nullptr, v));
  EXPECT_EQ(v, 7.0);
}

}  // namespace
}  // namespace genbench
