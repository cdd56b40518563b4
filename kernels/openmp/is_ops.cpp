// OpenMP executor for the IS kernels: chunks of keys and windows of the key range shared
// statically among the threads (a window per thread when untiled).
#include "pxq/kernels/is_ops.hpp"

#include <memory>

namespace pxq::kernels {
namespace {

class OpenMpIsOps final : public detail::IsExecutor {
 public:
  using IsExecutor::IsExecutor;

 protected:
  void for_each(int count, const std::function<void(int)>& work) const override {
    if (threads_ == 1 || count == 1) {  // no fork/join for one worker
      for (int c = 0; c < count; ++c) work(c);
      return;
    }
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (int c = 0; c < count; ++c) work(c);
  }
};

}  // namespace

PXQ_JOIN(IsFamily, "openmp", (construct<IsOps, OpenMpIsOps>));

}  // namespace pxq::kernels
