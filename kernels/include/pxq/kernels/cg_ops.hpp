// The CG proxy's local kernels: everything one rank computes in a conjugate gradient
// iteration, with no MPI. Vectors are the rank's local pieces (length n).
//
// Two families: the plain sweeps, one pass over the vectors per operation as NAS CG does
// them, and the fused, tiled sweeps used by the tiled variant (several operations applied
// to one tile while it is in cache, and a column-blocked SpMV). Each executor runs them
// with its threads; a frozen single-thread reference (cg_ops_reference.cpp) checks them.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "pxq/kernels/backend.hpp"
#include "pxq/kernels/family.hpp"
#include "pxq/kernels/sparse.hpp"

namespace pxq::kernels {

class CgOps {
 public:
  virtual ~CgOps() = default;
  // How this executor departs from the variant it was asked for when fused ("": it does not).
  virtual const char* fused_note() const { return ""; }

  // ---- plain sweeps (NAS order) ----
  // y = A x
  virtual void spmv(const CsrMatrix& a, const double* x, double* y) const = 0;
  // y = A x with A stored as its upper triangle: each stored entry read once, applied twice
  virtual void spmv_symmetric(const SymmetricCsr& a, const double* x, double* y) const = 0;
  // sum x[i] * y[i]
  virtual double dot(const double* x, const double* y, std::size_t n) const = 0;
  // z += alpha p; r -= alpha q (one sweep, as NAS)
  virtual void update_zr(double* z, double* r, const double* p, const double* q, double alpha, std::size_t n) const = 0;
  // p = r + beta p
  virtual void update_p(double* p, const double* r, double beta, std::size_t n) const = 0;
  // {x.z, z.z} in one sweep
  virtual std::pair<double, double> dot2(const double* x, const double* z, std::size_t n) const = 0;
  // x = s z
  virtual void scale(double* x, double s, const double* z, std::size_t n) const = 0;
  // sum (x[i] - y[i])^2
  virtual double dist2(const double* x, const double* y, std::size_t n) const = 0;
  // w += q
  virtual void add(double* w, const double* q, std::size_t n) const = 0;
  // q = 0, z = 0, r = x, p = x
  virtual void start(const double* x, double* q, double* z, double* r, double* p, std::size_t n) const = 0;

  // ---- fused sweeps (tiled variant) ----
  // start() and r.r in one sweep
  virtual double start_norm(const double* x, double* q, double* z, double* r, double* p, std::size_t n) const = 0;
  // update_zr() then r.r, tile by tile
  virtual double update_zr_norm(double* z, double* r, const double* p, const double* q, double alpha,
                                std::size_t n) const = 0;
  // y = A x with the column-blocked matrix
  virtual void spmv_blocked(const BlockedCsr& a, const double* x, double* y) const = 0;
  // p = r + beta p window by window, each window consumed by its block of y = A p at once
  virtual void update_p_spmv(const BlockedCsr& a, double* p, const double* r, double beta, double* y) const = 0;
};

// The executor for a backend: `threads` threads; `tile_bytes` bytes per tile for the fused
// sweeps (0: whole thread ranges), in bytes as every family takes its tile. Throws
// std::invalid_argument for a backend this build lacks or that does not run CG.
inline constexpr char kCgFamily[] = "CG";
// The executors of each backend that runs CG kernels (their files join it: family.hpp).
using CgFamily = Family<kCgFamily, std::unique_ptr<CgOps> (*)(int threads, std::size_t tile_bytes)>;

inline std::unique_ptr<CgOps> make_cg_ops(const Backend& backend, int threads, std::size_t tile_bytes) {
  return CgFamily::of(backend)(threads, tile_bytes);
}

// The frozen reference: one thread, plain loops, NAS's order of summation.
std::unique_ptr<CgOps> make_cg_ops_reference();

}  // namespace pxq::kernels
