// assign_huge and reserve_huge (pxq/common/huge_array.hpp): the vector holds what was asked,
// and where this machine offers transparent huge pages (its THP setting `madvise` or
// `always`) the advised storage is backed by them once touched; where it says `never`, by
// none. Read from /proc/self/smaps: the mapping that holds the vector and its AnonHugePages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pxq/common/huge_array.hpp"

namespace {

// The word in brackets of the THP setting ("always [madvise] never"), or "" without THP.
std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(in, line)) return "";
  const auto open = line.find('['), close = line.find(']');
  return open == std::string::npos || close == std::string::npos ? "" : line.substr(open + 1, close - open - 1);
}

// AnonHugePages (KiB) of the mapping holding address p; -1 when no mapping holds it.
long anon_huge_kib_at(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
  }
  return -1;
}

// A counter of /proc/vmstat (0 when absent).
long vmstat(const std::string& name) {
  std::ifstream in("/proc/vmstat");
  std::string key;
  long value = 0;
  while (in >> key >> value)
    if (key == name) return value;
  return 0;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;  // ASan's allocator places and advises large blocks itself
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

}  // namespace

TEST(HugeArray, AssignHugeHoldsTheValuesAskedForAnySize) {
  std::vector<double> v{1.0, 2.0, 3.0};
  const std::size_t big = (std::size_t{12} << 20) / sizeof(double);
  pxq::common::assign_huge(v, big, 2.5);
  ASSERT_EQ(v.size(), big);
  for (std::size_t i = 0; i < big; i += 4099) ASSERT_EQ(v[i], 2.5) << i;
  EXPECT_EQ(v.back(), 2.5);
  pxq::common::assign_huge(v, 10, -1.0);  // smaller again: fresh storage, nothing kept
  EXPECT_EQ(v, std::vector<double>(10, -1.0));
  std::vector<int> keys;
  pxq::common::reserve_huge(keys, big);
  EXPECT_TRUE(keys.empty());
  EXPECT_GE(keys.capacity(), big);
}

TEST(HugeArray, AdvisedStorageIsBackedByHugePagesWhereTheMachineOffersThem) {
  if (kSanitized) GTEST_SKIP() << "under ASan the allocator, not pxq, decides how large blocks are mapped";
  const std::string mode = thp_mode();
  const long fallbacks = vmstat("thp_fault_fallback");
  std::vector<double> v;
  pxq::common::assign_huge(v, (std::size_t{16} << 20) / sizeof(double), 1.0);  // touched by the fill
  const long kib = anon_huge_kib_at(v.data() + v.size() / 2);
  ASSERT_GE(kib, 0) << "no mapping in /proc/self/smaps holds the vector";
  if (mode == "madvise" || mode == "always") {
    // The kernel may find no free 2 MiB page (fragmented memory): then it counts a fallback,
    // which still shows it was asked. Without the advice it is not asked at all.
    if (kib < 2048 && vmstat("thp_fault_fallback") > fallbacks) GTEST_SKIP() << "no free huge page to give";
    EXPECT_GE(kib, 2048) << "THP is '" << mode << "' here, yet no 2 MiB page backs 16 MiB advised as huge pages";
  } else {
    EXPECT_EQ(kib, 0) << "THP is '" << mode << "' here";
  }
}

// The pages of an array touched first by the threads that own them in a static schedule: page
// k by the thread whose contiguous share holds it, every page once; then filled as asked.
TEST(HugeArray, PagesAreFirstTouchedByTheThreadsThatShareTheArray) {
  std::vector<char> raw((std::size_t{64} << 12) + 100);
  std::vector<int> who;
  pxq::common::touch_pages(raw.data() + 100, std::size_t{64} << 12, 4, &who);  // mid-page start: 65 pages
  ASSERT_EQ(who.size(), 65u);
  for (std::size_t k = 0; k < who.size(); ++k) {
    const int share = static_cast<int>(k * 4 / who.size());  // OpenMP's static split of 65 pages, rounded
    EXPECT_GE(who[k], 0) << "page " << k << " untouched";
    EXPECT_LE(std::abs(who[k] - share), 1) << "page " << k << " touched by thread " << who[k];
    if (k > 0) {
      EXPECT_GE(who[k], who[k - 1]) << "shares are contiguous, in thread order";
    }
  }
  EXPECT_EQ(who.front(), 0);
  EXPECT_EQ(who.back(), 3) << "every thread of 4 touches its share";
  pxq::common::touch_pages(raw.data(), 1, 4, &who);
  EXPECT_EQ(who, std::vector<int>{0}) << "one byte: one page";
  std::vector<std::int32_t> v;
  pxq::common::assign_huge(v, std::size_t{3} << 20, 7, 4);
  ASSERT_EQ(v.size(), std::size_t{3} << 20);
  EXPECT_EQ(v.front(), 7);
  EXPECT_EQ(v.back(), 7);
  EXPECT_EQ(std::count(v.begin(), v.end(), 7), static_cast<std::ptrdiff_t>(v.size()));
}
