// Kokkos executor for the IS kernels on the OpenMP execution space: chunks of keys and
// windows of the key range are the index of a static range policy.
#include "pxq/kernels/is_ops.hpp"

#include <Kokkos_Core.hpp>
#include <memory>

namespace pxq::kernels {
namespace {

using Policy = Kokkos::RangePolicy<Kokkos::OpenMP, Kokkos::Schedule<Kokkos::Static>>;

class KokkosIsOps final : public detail::IsExecutor {
 public:
  using IsExecutor::IsExecutor;

 protected:
  void for_each(int count, const std::function<void(int)>& work) const override {
    const auto* run = &work;
    Kokkos::parallel_for("pxq::is", Policy(0, count), [=](const int c) { (*run)(c); });
    Kokkos::fence();
  }
};

}  // namespace

PXQ_JOIN(IsFamily, "kokkos", (construct<IsOps, KokkosIsOps>));

}  // namespace pxq::kernels
