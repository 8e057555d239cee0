//===- EnvironmentTest.cpp - on/off environment switches ------------------===//

#include "picokernel/Support/Environment.h"
#include "picokernel/Support/Log.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace {

TEST(Environment, ParsesEverySpelling) {
  for (const char *on : {"1", "true", "TRUE", " on ", "Yes", "yes\n"})
    EXPECT_EQ(pk::parseSwitch(on), std::optional<bool>(true)) << on;
  for (const char *off : {"0", "false", "Off", " no", "FALSE"})
    EXPECT_EQ(pk::parseSwitch(off), std::optional<bool>(false)) << off;
  for (const char *neither : {"", " ", "2", "enable", "01", "truee", "y"})
    EXPECT_EQ(pk::parseSwitch(neither), std::nullopt) << neither;
}

/// The switch's value for `value` (null: unset) with each default, and the
/// warnings logged meanwhile.
struct Reading {
  bool unsetOff, unsetOn;
  std::vector<std::string> warnings;
};

Reading readSwitch(const char *name, const char *value) {
  Reading reading;
  pk::setLogSink([&](pk::LogLevel level, const std::string &message) {
    if (level == pk::LogLevel::Warning)
      reading.warnings.push_back(message);
  });
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
  reading.unsetOff = pk::environmentSwitch(name, false);
  reading.unsetOn = pk::environmentSwitch(name, true);
  unsetenv(name);
  pk::setLogSink({});
  return reading;
}

TEST(Environment, UnsetAndEmptyKeepTheDefault) {
  for (const char *value : {(const char *)nullptr, "", "  "}) {
    Reading reading = readSwitch("PK_TEST_SWITCH_EMPTY", value);
    EXPECT_FALSE(reading.unsetOff);
    EXPECT_TRUE(reading.unsetOn);
    EXPECT_TRUE(reading.warnings.empty());
  }
}

TEST(Environment, OnAndOffOverrideTheDefault) {
  Reading on = readSwitch("PK_TEST_SWITCH_ON", "True");
  EXPECT_TRUE(on.unsetOff && on.unsetOn);
  Reading off = readSwitch("PK_TEST_SWITCH_OFF", "no");
  EXPECT_FALSE(off.unsetOff || off.unsetOn);
  EXPECT_TRUE(on.warnings.empty() && off.warnings.empty());
}

TEST(Environment, OtherValuesWarnOnceAndKeepTheDefault) {
  Reading first = readSwitch("PK_TEST_SWITCH_BAD", "maybe");
  EXPECT_FALSE(first.unsetOff);
  EXPECT_TRUE(first.unsetOn);
  ASSERT_EQ(first.warnings.size(), 1u);
  EXPECT_NE(first.warnings[0].find("PK_TEST_SWITCH_BAD=maybe"),
            std::string::npos);
  EXPECT_NE(first.warnings[0].find("0/1, false/true, off/on, no/yes"),
            std::string::npos);
  Reading again = readSwitch("PK_TEST_SWITCH_BAD", "2");
  EXPECT_TRUE(again.warnings.empty());
  Reading other = readSwitch("PK_TEST_SWITCH_BAD_TOO", "2");
  EXPECT_EQ(other.warnings.size(), 1u);
}

/// Sets (or, for null, unsets) an environment variable until destroyed.
class ScopedVariable {
public:
  ScopedVariable(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      saved = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedVariable() {
    if (saved)
      setenv(name, saved->c_str(), 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> saved;
};

TEST(Environment, CudaToolkitFromTheFirstVariableSet) {
  ScopedVariable root("CUDA_ROOT", nullptr), home("CUDA_HOME", "/opt/home"),
      path("CUDA_PATH", "/opt/path");
  EXPECT_EQ(pk::cudaToolkitPath(), "/opt/home");
  {
    ScopedVariable first("CUDA_ROOT", "/opt/root");
    EXPECT_EQ(pk::cudaToolkitPath(), "/opt/root");
  }
  // An empty value is unset.
  ScopedVariable emptyHome("CUDA_HOME", "");
  EXPECT_EQ(pk::cudaToolkitPath(), "/opt/path");
}

} // namespace
