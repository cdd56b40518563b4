// NAS IS's problem set-up, rewritten for pxq: class table with NAS's partial verification
// values, the key generator, the key and bucket splits.
#include "is_problem.hpp"

#include <array>
#include <stdexcept>

#include "pxq/common/huge_array.hpp"
#include "pxq/common/nas_setup.hpp"
#include "pxq/kernels/nas_random.hpp"

namespace pxq::is {
namespace {

// NAS IS 3.4: log2 of the keys, of the largest key and of the buckets; the test keys'
// positions and ranks.
const std::array<IsClass, 5> kClasses{{
    {'S', 16, 11, 9, {48427, 17148, 23627, 62548, 4431}, {0, 18, 346, 64917, 65463}},
    {'W', 20, 16, 10, {357773, 934767, 875723, 898999, 404505}, {1249, 11698, 1039987, 1043896, 1048018}},
    {'A', 23, 19, 10, {2112377, 662041, 5336171, 3642833, 4250760}, {104, 17523, 123928, 8288932, 8388264}},
    {'B', 25, 21, 10, {41869, 812306, 5102857, 18232239, 26860214}, {33422937, 10244, 59149, 33135281, 99}},
    {'C',
     27,
     23,
     10,
     {44172927, 72999161, 74326391, 129606274, 21736814},
     {61147, 882988, 266290, 133997595, 133525895}},
}};

}  // namespace

const IsClass& is_class(const std::string& name) { return common::find_nas_class(kClasses, name); }

std::int64_t expected_rank(const IsClass& c, int i, int iteration) {
  const std::int64_t listed = c.test_rank[static_cast<std::size_t>(i)];
  bool up = false;
  int by = iteration;
  switch (c.name) {
    case 'S':
    case 'C':
      up = i <= 2;
      break;
    case 'W':
      up = i < 2;
      by = up ? iteration - 2 : iteration;
      break;
    case 'A':
      up = i <= 2;
      by = iteration - 1;
      break;
    default:  // 'B'
      up = i == 1 || i == 2 || i == 4;
      break;
  }
  return up ? listed + by : listed - by;
}

double nas_operation_count(const IsClass& c) {
  return static_cast<double>(kIsIterations) * static_cast<double>(c.total_keys());
}

KeySlice key_slice(std::int64_t total, int nprocs, int rank) {
  const std::int64_t base = total / nprocs, extra = total % nprocs;
  return {rank * base + std::min<std::int64_t>(rank, extra), base + (rank < extra ? 1 : 0)};
}

std::vector<IsKey> generate_keys(const IsClass& c, const KeySlice& s) {
  kernels::NasRandom stream(kernels::kNasDefaultSeed, kernels::kNasMultiplier);
  stream.skip(4 * static_cast<std::uint64_t>(s.first));
  const IsKey k = c.max_key() / 4;
  std::vector<IsKey> keys;
  common::assign_huge(keys, static_cast<std::size_t>(s.count), IsKey{0});
  for (auto& key : keys) {
    double x = stream.next();
    x += stream.next();
    x += stream.next();
    x += stream.next();
    key = static_cast<IsKey>(k * x);
  }
  return keys;
}

void alter_keys(const IsClass& c, const KeySlice& s, IsKey* keys, int iteration) {
  if (s.holds(iteration)) keys[iteration - s.first] = iteration;
  if (s.holds(iteration + kIsIterations)) keys[iteration + kIsIterations - s.first] = c.max_key() - iteration;
}

BucketSplit split_buckets(const std::int32_t* totals, int nbuckets, std::int64_t total, int nprocs) {
  BucketSplit out;
  out.first.assign(static_cast<std::size_t>(nprocs), 1);
  out.last.assign(static_cast<std::size_t>(nprocs), 0);
  std::int64_t sum = 0;
  int r = 0;
  for (int b = 0; b < nbuckets && r < nprocs; ++b) {
    sum += totals[b];
    const KeySlice mine = key_slice(total, nprocs, r);
    if (sum >= mine.first + mine.count) {
      out.first[static_cast<std::size_t>(r)] = r == 0 ? 0 : out.last[static_cast<std::size_t>(r) - 1] + 1;
      out.last[static_cast<std::size_t>(r)] = b;
      ++r;
    }
  }
  return out;
}

}  // namespace pxq::is
