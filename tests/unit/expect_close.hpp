// Element-wise comparison of two result vectors, relative tolerance 1e-12, naming the first
// index that differs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

inline void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-12 * (1.0 + std::abs(want[i]))) << what << " at " << i;
}
