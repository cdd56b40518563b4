// The access kinds' kernels (pxq/probes/kinds.hpp).
#include "pxq/probes/kinds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "pxq/kernels/cg_ops.hpp"
#include "pxq/kernels/fft.hpp"
#include "pxq/kernels/ft_ops.hpp"
#include "pxq/kernels/mg_ops.hpp"

namespace pxq::probes {
namespace {

// A fixed, fast stream of pseudo-random numbers (xorshift64): the same matrix and keys on
// every run.
struct Xorshift {
  std::uint64_t s = 0x9E3779B97F4A7C15ull;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
};

constexpr std::size_t kRowEntries = 128;
// A column window's columns: this many entries of x (16 KiB, the window a small tile gives).
constexpr std::size_t kWindowColumns = 2048;
constexpr std::size_t kKeys = std::size_t{1} << 22;
constexpr int kFftLength = 256;

// CG's SpMV as CG runs it: a CSR matrix multiplied by the kernel library's executor (OpenMP, one
// thread, as one of CG's ranks). Columns at random within x; x as long as the matrix has rows,
// or a window of it (CG tiled). Rows all `mean` entries long (the gather: no row's end is
// mispredicted), or drawn from 0 to 2 x `mean` (the window kinds: as hard to predict as a row's
// run within a column window). Bytes as CG declares an SpMV's: 12 B an entry and x gathered per
// entry, a row pointer a row and one more, y written.
class Spmv final : public KindKernel {
 public:
  Spmv(std::size_t bytes, std::size_t mean, bool vary, std::size_t columns)
      : ops_(kernels::make_cg_ops("openmp", 1, 0)) {
    const std::size_t rows = std::max<std::size_t>(256, bytes / (mean * 12 + 8 + 16));
    Xorshift rng;
    a_.nrows = static_cast<int>(rows);
    a_.ncols = static_cast<int>(columns ? columns : rows);
    a_.rowptr.assign(rows + 1, 0);
    for (std::size_t i = 0; i < rows; ++i)
      a_.rowptr[i + 1] = a_.rowptr[i] + static_cast<std::int64_t>(vary ? rng.below(2 * mean + 1) : mean);
    a_.col.resize(static_cast<std::size_t>(a_.rowptr[rows]));
    a_.val.resize(a_.col.size());
    for (std::size_t j = 0; j < a_.col.size(); ++j) {
      a_.col[j] = static_cast<std::int32_t>(rng.below(static_cast<std::size_t>(a_.ncols)));
      a_.val[j] = 1.0 / static_cast<double>(j % 7 + 1);
    }
    x_.assign(static_cast<std::size_t>(a_.ncols), 1.0);
    y_.assign(rows, 0.0);
  }
  void sweep() override { ops_->spmv(a_, x_.data(), y_.data()); }
  double bytes() const override {
    const double nnz = static_cast<double>(a_.nnz()), rows = a_.nrows;
    return nnz * 12.0 + (rows + 1.0) * 8.0 + nnz * 8.0 + rows * 8.0;
  }
  double flops() const override { return 2.0 * static_cast<double>(a_.nnz()); }
  std::size_t footprint() const override { return a_.nnz() * 12 + a_.rowptr.size() * 8 + (x_.size() + y_.size()) * 8; }
  double checksum() const override { return y_[y_.size() / 2]; }

 private:
  std::unique_ptr<kernels::CgOps> ops_;
  kernels::CsrMatrix a_;
  std::vector<double> x_, y_;
};

std::unique_ptr<KindKernel> make_gather(std::size_t bytes) {
  return std::make_unique<Spmv>(bytes, kRowEntries, false, 0);
}

// CG in column windows: two means (8 and 64) give what an entry and what a row's start cost
// (pxq roofline: a phase's declared row visits).
template <std::size_t Mean>
std::unique_ptr<KindKernel> make_window(std::size_t bytes) {
  return std::make_unique<Spmv>(bytes, Mean, true, kWindowColumns);
}

class Update final : public KindKernel {
 public:
  explicit Update(std::size_t bytes) : counters_(std::max<std::size_t>(1024, bytes / 4), 0), keys_(kKeys) {
    Xorshift rng;
    for (auto& k : keys_) k = static_cast<std::uint32_t>(rng.below(counters_.size()));
  }
  void sweep() override {
    std::uint32_t* c = counters_.data();
    for (const std::uint32_t k : keys_) ++c[k];
    std::uint64_t total = 0;
    for (auto& v : counters_) {
      total += v;
      v = 0;
    }
    total_ += total;
  }
  double bytes() const override {
    return static_cast<double>(keys_.size()) * 12.0 + static_cast<double>(counters_.size()) * 8.0;
  }
  double flops() const override { return 0.0; }
  std::size_t footprint() const override { return (counters_.size() + keys_.size()) * 4; }
  double checksum() const override { return static_cast<double>(total_); }

 private:
  std::vector<std::uint32_t> counters_, keys_;
  std::uint64_t total_ = 0;
};

class Stencil final : public KindKernel {
 public:
  explicit Stencil(std::size_t bytes)
      : m_(std::max(8, static_cast<int>(std::cbrt(static_cast<double>(bytes) / 24.0)))),
        box_{m_, m_, m_},
        ops_(kernels::make_mg_ops("openmp", 1, 0)),
        u_(box_.size()),
        v_(box_.size(), 0.0),
        r_(box_.size(), 0.0) {
    Xorshift rng;
    for (auto& x : u_) x = static_cast<double>(rng.below(1000)) / 1000.0;
  }
  void sweep() override { ops_->resid(u_.data(), v_.data(), r_.data(), box_, kOperator); }
  double bytes() const override { return 24.0 * static_cast<double>(box_.size()); }
  double flops() const override { return 15.0 * static_cast<double>(box_.size()); }
  std::size_t footprint() const override { return 24 * box_.size(); }
  double checksum() const override { return r_[box_.at(m_ / 2, m_ / 2, m_ / 2)]; }

 private:
  static constexpr kernels::Stencil kOperator{{-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0}};  // NAS's A
  int m_;
  kernels::Box box_;
  std::unique_ptr<kernels::MgOps> ops_;
  std::vector<double> u_, v_, r_;
};

// MG's grid transfers as MG runs them: the kernel library's OpenMP executor on one thread, a
// fine cube of side m (2e + 2, halos included) and its coarse cube (e + 2). The restriction
// s = P r weighs 27 fine neighbours for each coarse point: an access pattern (every other fine
// point, three planes at a time) neither a stream nor the residual's stencil has. The
// interpolation u += Q z adds to each fine point what its 8 coarse neighbours give it.
class Transfer final : public KindKernel {
 public:
  Transfer(std::size_t bytes, bool restriction)
      : restriction_(restriction),
        m_(std::max(6, 2 * (static_cast<int>(std::cbrt(static_cast<double>(bytes) / 9.0)) / 2))),
        fine_{m_, m_, m_},
        coarse_{m_ / 2 + 1, m_ / 2 + 1, m_ / 2 + 1},
        ops_(kernels::make_mg_ops("openmp", 1, 0)),
        fine_data_(fine_.size(), 0.0),
        coarse_data_(coarse_.size(), 0.0) {
    Xorshift rng;
    for (auto& x : restriction_ ? fine_data_ : coarse_data_) x = static_cast<double>(rng.below(1000)) / 1000.0;
  }
  void sweep() override {
    if (restriction_)
      ops_->rprj3(fine_data_.data(), fine_, coarse_data_.data(), coarse_);
    else
      ops_->interp(coarse_data_.data(), coarse_, fine_data_.data(), fine_);
  }
  // As MG declares its transfers (8 B per point and array, halos included): a restriction reads
  // the fine array and writes an eighth of it, 4 flops per fine point; an interpolation into the
  // finest level reads and writes u and reads an eighth of it (z), 3 flops per fine point.
  double bytes() const override { return (restriction_ ? 9.0 : 17.0) * static_cast<double>(fine_.size()); }
  double flops() const override { return (restriction_ ? 4.0 : 3.0) * static_cast<double>(fine_.size()); }
  std::size_t footprint() const override { return 8 * (fine_.size() + coarse_.size()); }
  double checksum() const override {
    return restriction_ ? coarse_data_[coarse_.at(coarse_.n1 / 2, coarse_.n2 / 2, coarse_.n3 / 2)]
                        : fine_data_[fine_.at(fine_.n1 / 2, fine_.n2 / 2, fine_.n3 / 2)];
  }

 private:
  bool restriction_;
  int m_;
  kernels::Box fine_, coarse_;
  std::unique_ptr<kernels::MgOps> ops_;
  std::vector<double> fine_data_, coarse_data_;
};

template <bool Restriction>
std::unique_ptr<KindKernel> make_transfer(std::size_t bytes) {
  return std::make_unique<Transfer>(bytes, Restriction);
}

// IS's key exchange as IS runs it: MPI_Alltoall of bytes among the ranks bound (the probe's
// first k), each rank's send and receive buffers together `bytes`, so each peer gets
// bytes / 2 / k. Unbound (one rank, or a unit test without MPI), the exchange is the copy to
// itself that an all-to-all of one rank is.
class Alltoall final : public KindKernel {
 public:
  explicit Alltoall(std::size_t bytes)
      : send_(std::max<std::size_t>(64, bytes / 2), 1), recv_(send_.size(), 0), count_(send_.size()) {}
  void bind(MPI_Comm ranks) override {
    comm_ = ranks;
    peers_ = 1;
    if (ranks != MPI_COMM_NULL) MPI_Comm_size(ranks, &peers_);
    count_ = send_.size() / static_cast<std::size_t>(peers_);
    if (count_ > static_cast<std::size_t>(INT32_MAX))
      throw std::invalid_argument("alltoall: a message over MPI's int count: use a smaller size");
  }
  void sweep() override {
    if (comm_ == MPI_COMM_NULL || peers_ < 2) {
      std::copy(send_.begin(), send_.end(), recv_.begin());
    } else {
      const int n = static_cast<int>(count_);
      MPI_Alltoall(send_.data(), n, MPI_BYTE, recv_.data(), n, MPI_BYTE, comm_);
    }
    ++send_[0];
  }
  // As IS declares its exchange: the bytes sent to the other ranks (alone: the copy).
  double bytes() const override {
    return static_cast<double>(count_) * static_cast<double>(peers_ < 2 ? 1 : peers_ - 1);
  }
  double flops() const override { return 0.0; }
  std::size_t footprint() const override { return send_.size() + recv_.size(); }
  double checksum() const override { return static_cast<double>(recv_[0]); }

 private:
  std::vector<unsigned char> send_, recv_;
  std::size_t count_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int peers_ = 1;
};

// FT's transforms as FT runs them: the kernel library's FT executor (OpenMP, one thread,
// NAS's batches of 16 lines) takes the y-lines of length 256 of a grid [n3][256][n1] of the
// given size, gathers each batch from its lines' strided elements, transforms it and scatters
// it back, as FT's steps do. The data are zeros: an FFT's speed does not depend on its values,
// and repeated unscaled transforms of anything else would overflow.
class Fft final : public KindKernel {
 public:
  explicit Fft(std::size_t bytes) : plan_(kFftLength), ops_(kernels::make_ft_ops("openmp", 1, 0)) {
    const std::size_t points = std::max<std::size_t>(kFftLength, bytes / sizeof(kernels::Complex));
    n1_ = static_cast<int>(std::min<std::size_t>(kFftLength, points / kFftLength));
    n3_ = static_cast<int>(std::max<std::size_t>(1, points / (kFftLength * static_cast<std::size_t>(n1_))));
    grid_.assign(this->points(), kernels::Complex{});
    for (int j = 0; j < kFftLength; ++j) elem_[static_cast<std::size_t>(j)] = std::int64_t{j} * n1_;
    pass_.plan = &plan_;
    pass_.outer_count = n3_;
    pass_.line_count = n1_;
    pass_.src = pass_.dst = {std::int64_t{n1_} * kFftLength, 1, elem_.data()};
  }
  void sweep() override { ops_->fft(grid_.data(), grid_.data(), pass_); }
  // As FT declares a transform: its data read and written once from memory (32 B per point),
  // the batch 32 B per point per radix-4 pass at the cores; 5 log2 n flops per point.
  double bytes() const override {
    return static_cast<double>(points()) * 32.0 * (1.0 + std::ceil(std::log2(kFftLength) / 2.0));
  }
  double memory_bytes() const override { return static_cast<double>(points()) * 32.0; }
  double flops() const override { return static_cast<double>(points()) * 5.0 * std::log2(kFftLength); }
  std::size_t footprint() const override { return points() * sizeof(kernels::Complex); }
  double checksum() const override { return grid_[0].real(); }
  std::size_t points() const { return static_cast<std::size_t>(n1_) * kFftLength * static_cast<std::size_t>(n3_); }

 private:
  kernels::FftPlan plan_;
  std::unique_ptr<kernels::FtOps> ops_;
  int n1_ = 1, n3_ = 1;
  std::vector<std::int64_t> elem_ = std::vector<std::int64_t>(kFftLength);
  kernels::FftPass pass_;
  std::vector<kernels::Complex> grid_;
};

}  // namespace

namespace {
template <class Kernel>
std::unique_ptr<KindKernel> make(std::size_t bytes) {
  return std::make_unique<Kernel>(bytes);
}
}  // namespace

const std::vector<KindInfo>& kinds() {
  static const std::vector<KindInfo> table = {
      {"gather", "gbs", "footprint", "CG's SpMV (CSR, random columns)", make_gather},
      {"window", "gbs", "footprint", "CG's SpMV in column windows (rows of 8 on average, a cached x)", make_window<8>},
      {"window64", "gbs", "footprint", "CG's SpMV in column windows (rows of 64 on average, a cached x)",
       make_window<64>},
      {"update", "gbs", "working_set", "IS's random counter increments", make<Update>},
      {"stencil", "gflops", "footprint", "MG's 27-point residual", make<Stencil>},
      {"restrict", "gflops", "footprint", "MG's restriction (27-point full weighting)", make_transfer<true>},
      {"interp", "gflops", "footprint", "MG's interpolation (trilinear, 8 coarse neighbours)", make_transfer<false>},
      {"fft", "gflops", "footprint", "FT's strided line FFTs of 256", make<Fft>},
      {"alltoall", "gbs", "footprint", "IS's key exchange (MPI all-to-all among the node's ranks)", make<Alltoall>},
  };
  return table;
}

std::string kind_names() {
  std::string out;
  for (const auto& k : kinds()) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

bool is_kind(const std::string& name) {
  return std::any_of(kinds().begin(), kinds().end(), [&](const KindInfo& k) { return name == k.name; });
}

std::unique_ptr<KindKernel> make_kind(const std::string& name, std::size_t bytes) {
  for (const auto& k : kinds())
    if (name == k.name) return k.make(bytes);
  throw std::invalid_argument("unknown kind '" + name + "': use " + kind_names());
}

}  // namespace pxq::probes
