// Kokkos executor for the FT kernels on the OpenMP execution space: a pass is a TeamPolicy
// with one batch per team (team size 1) and the batch buffer in the team's scratch memory;
// copies and evolve are flat range policies over rows. The batch itself is the same code as
// the OpenMP executor's (ft_batch.hpp).
#include "pxq/kernels/ft_ops.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <memory>

#include "ft_batch.hpp"
#include "pxq/kernels/executor.hpp"

namespace pxq::kernels {
namespace {

using Space = Kokkos::OpenMP;
using Teams = Kokkos::TeamPolicy<Space>;
using Flat = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;

class KokkosFtOps final : public detail::FtExecutor {
 public:
  using FtExecutor::FtExecutor;

  void run_batches(Complex* src, Complex* dst, const FftPass& pass, const detail::BatchGeometry& g) const override {
    const std::size_t bytes = g.doubles * sizeof(double);
    const FftPass p = pass;
    Kokkos::parallel_for(
        "pxq::ft::fft",
        Teams(static_cast<int>(g.count), 1).set_scratch_size(1, Kokkos::PerTeam(static_cast<int>(bytes))),
        KOKKOS_LAMBDA(const Teams::member_type& team) {
          detail::run_batch(src, dst, p, g, team.league_rank(),
                            static_cast<double*>(team.team_scratch(1).get_shmem(bytes)));
        });
    Kokkos::fence();
  }

  void copy(const Complex* src, Complex* dst, const BlockCopy& c) const override {
    const std::int64_t rows = static_cast<std::int64_t>(c.count[0]) * c.count[1] * c.count[2];
    const BlockCopy k = c;
    Kokkos::parallel_for(
        "pxq::ft::copy", Flat(0, rows), KOKKOS_LAMBDA(std::int64_t t) { detail::copy_row(src, dst, k, t); });
    Kokkos::fence();
  }

  void evolve(Complex* u0, Complex* u1, int n1, int n2, int n3, const double* f1, const double* f2,
              const double* f3) const override {
    Kokkos::parallel_for(
        "pxq::ft::evolve", Flat(0, static_cast<std::int64_t>(n2) * n3),
        KOKKOS_LAMBDA(std::int64_t r) { detail::evolve_row(u0, u1, n1, n2, f1, f2, f3, r); });
    Kokkos::fence();
  }
};

}  // namespace

PXQ_JOIN(FtFamily, "kokkos", (construct<FtOps, KokkosFtOps>));

}  // namespace pxq::kernels
