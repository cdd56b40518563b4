// The NAS Parallel Benchmarks pseudo-random stream: the linear congruential generator
// x(k+1) = a * x(k) mod 2^46, returned as x(k+1) * 2^-46 in (0, 1). NAS computes it in
// double-precision pieces; the arithmetic is exact, so 64/128-bit integers give the same
// numbers bit for bit. CG, MG and FT all draw their data from it.
#pragma once

#include <cstdint>

namespace pxq::kernels {

inline constexpr std::uint64_t kNasMod46Mask = (std::uint64_t{1} << 46) - 1;
inline constexpr double kNasTwoM46 = 1.0 / static_cast<double>(std::uint64_t{1} << 46);

// NAS seeds and multiplier, exact integers stored in doubles in the NAS sources.
inline constexpr double kNasDefaultSeed = 314159265.0;
inline constexpr double kNasMultiplier = 1220703125.0;  // 5^13

class NasRandom {
 public:
  explicit NasRandom(double seed = kNasDefaultSeed, double multiplier = kNasMultiplier)
      : x_(static_cast<std::uint64_t>(seed) & kNasMod46Mask),
        a_(static_cast<std::uint64_t>(multiplier) & kNasMod46Mask) {}

  // NAS randlc: advances the state once and returns the new value in (0, 1).
  double next() {
    x_ = mulmod46(a_, x_);
    return static_cast<double>(x_) * kNasTwoM46;
  }

  // The state as NAS keeps it: a double holding an integer below 2^46.
  double state() const { return static_cast<double>(x_); }

  // a * b mod 2^46 (both below 2^46).
  static std::uint64_t mulmod46(std::uint64_t a, std::uint64_t b) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(a) * b) & kNasMod46Mask);
  }

  // a^k mod 2^46: the multiplier that jumps k steps ahead in one go.
  static std::uint64_t power(std::uint64_t a, std::uint64_t k) {
    std::uint64_t result = 1;
    a &= kNasMod46Mask;
    while (k > 0) {
      if (k & 1) result = mulmod46(result, a);
      a = mulmod46(a, a);
      k >>= 1;
    }
    return result;
  }

  // Advances the state k steps without drawing the numbers.
  void skip(std::uint64_t k) { x_ = mulmod46(power(a_, k), x_); }

 private:
  std::uint64_t x_;
  std::uint64_t a_;
};

}  // namespace pxq::kernels
