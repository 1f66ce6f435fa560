#pragma once
// A GoogleTest fixture with a fresh directory per test (named after the process and the test),
// removed afterwards: dir_.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace cuboid::testing {

class ScratchDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cuboid-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

}  // namespace cuboid::testing
