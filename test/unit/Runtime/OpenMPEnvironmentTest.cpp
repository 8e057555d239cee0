//===- OpenMPEnvironmentTest.cpp - OMP_NUM_THREADS values libomp takes ----===//

#include "Runtime/OpenMPEnvironment.h"

#include <gtest/gtest.h>

namespace {

using pk::detail::isValidThreadCountList;

TEST(OpenMPEnvironment, ThreadCountListsLibompTakes) {
  for (const char *value :
       {"1", "2", "0", "4096", " 2", "2 ", "4,2", "4, 2", "8,4,1"})
    EXPECT_TRUE(isValidThreadCountList(value)) << "'" << value << "'";
}

TEST(OpenMPEnvironment, ValuesLibompAbortsOn) {
  // Each aborted a program linked with Debian's libomp 22.
  for (const char *value :
       {"", " ", "abc", "-1", "+2", "2,abc", "2,", ",2", "2.5", "4097", "32768",
        "99999999999", "999999999999999999999999"})
    EXPECT_FALSE(isValidThreadCountList(value)) << "'" << value << "'";
}

} // namespace
