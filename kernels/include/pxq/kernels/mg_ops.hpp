// The MG proxy's local kernels: NAS MG's four grid operators on one rank's block of a level,
// with no MPI. A block is a box of n1 x n2 x n3 points, i1 fastest, whose outer layer is the
// halo (ghost) layer: operators write the interior and read one point around it. After an
// operator, the caller refreshes the halo (comm::HaloPlan), except after interp, which
// computes the halo of the fine grid itself, as NAS does.
//
// The grids nest as in NAS: coarse point j of a level sits on fine point 2j+1 of the next
// finer level (global, 0-based), so a block of coarse interior [c0, c0+e) lines up with the
// fine interior [2c0, 2c0+2e). In a block's indices: coarse c (0..n-1, halo included) covers
// fine 2c and 2c+1.
//
// Each executor runs the same operators with its threads; the tiled executor walks the
// planes in blocks of rows sized by the tile and fuses "clear then accumulate" into one
// write. A frozen reference (mg_ops_reference.cpp) written from the stencil definitions,
// not from the optimised loops, checks them.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "pxq/kernels/backend.hpp"
#include "pxq/kernels/family.hpp"

namespace pxq::kernels {

// A block with its halo: n1 x n2 x n3 points, i1 fastest.
struct Box {
  int n1 = 0, n2 = 0, n3 = 0;
  std::size_t size() const {
    return static_cast<std::size_t>(n1) * static_cast<std::size_t>(n2) * static_cast<std::size_t>(n3);
  }
  std::size_t at(int i1, int i2, int i3) const {
    return (static_cast<std::size_t>(i3) * static_cast<std::size_t>(n2) + static_cast<std::size_t>(i2)) *
               static_cast<std::size_t>(n1) +
           static_cast<std::size_t>(i1);
  }
};

// Stencil coefficients by distance class: [0] centre, [1] the 6 faces, [2] the 12 edges,
// [3] the 8 corners. NAS's operator A has a[1] = 0 and its smoothers c[3] = 0; the fast
// executors rely on both, as NAS does (make_mg_ops checks nothing, the callers pass NAS's).
struct Stencil {
  double w[4];
};

// Full weighting (the restriction P) as a stencil: centre, face, edge, corner.
inline constexpr Stencil kRestriction{{0.5, 0.25, 0.125, 0.0625}};

// The passes of a V-cycle as the proxy books them (edge_rows()): the plain operators, the
// residual fused with the smoothing (with the interpolation ahead of it: kInterpResidSmooth),
// and the finest residual fused with the restriction.
enum class MgPass { kResid, kSmooth, kRestrict, kInterp, kResidSmooth, kInterpResidSmooth, kResidRestrict };

// What tiling costs a pass at the edges between its blocks of rows, per interior plane of the
// level it is booked on (the fine level for the restriction and the interpolation), in rows
// of that level: the rows of all its arrays read and written again, and the rows computed
// again. All zero untiled, or where one block holds the plane.
struct EdgeRows {
  double read = 0.0, written = 0.0, computed = 0.0;
};

class MgOps {
 public:
  virtual ~MgOps() = default;

  // The tile's cost at the edges of its blocks for one call of `pass` on `level` (its box,
  // halos included): see EdgeRows. The proxy declares it with its work. Default: no tiles.
  virtual EdgeRows edge_rows(MgPass pass, Box level) const;

  // r = v - A u on the interior (r may be v: NAS computes r = r - A u in place).
  virtual void resid(const double* u, const double* v, double* r, Box b, const Stencil& a) const = 0;
  // u = u + C r on the interior (the smoother).
  virtual void psinv(const double* r, double* u, Box b, const Stencil& c) const = 0;
  // s = P r: the coarse interior from the fine block (trilinear full weighting).
  virtual void rprj3(const double* r, Box fine, double* s, Box coarse) const = 0;
  // u = u + Q z: every point of the fine block, halo included, from the coarse block with its
  // halo (trilinear interpolation).
  virtual void interp(const double* z, Box coarse, double* u, Box fine) const = 0;
  // {sum of squares, max |x|} over the interior.
  virtual std::pair<double, double> norm2(const double* r, Box b) const = 0;
  // Every point (halo included) = 0.
  virtual void zero(double* u, Box b) const = 0;

  // ---- fused "clear, then accumulate" (tiled variant): one write instead of two ----
  // u = C r on the interior, u's halo = 0 (zero then psinv).
  virtual void psinv_assign(const double* r, double* u, Box b, const Stencil& c) const = 0;
  // u = Q z on every point (zero then interp).
  virtual void interp_assign(const double* z, Box coarse, double* u, Box fine) const = 0;

  // ---- fused across a halo refresh (tiled variant) ----
  // NAS's "resid, refresh r's halo, psinv" split so that most of it is one pass: r = v - A u
  // on the interior and, one plane behind, u = u + C r on the core (the interior points none
  // of whose neighbours is a halo point). After the caller refreshes r's halo, psinv_shell
  // smooths the rest. Together: the same u as resid, halo, psinv. r is left as resid leaves
  // it only within two points of the halo (on_band), all that refreshing its halo and
  // psinv_shell read; elsewhere it is unspecified (the fast executors keep it in a window
  // and store only the band: the caller reads r nowhere else before it is recomputed).
  //
  // `wraps_i1` is the caller's word that the block is its own neighbour along i1 (one
  // process along i1, or a level every rank holds whole), so r's i1 halo is a copy of each
  // row's own ends. The pass then writes that halo itself and the caller refreshes r's halo
  // along i2 and i3 only (HaloPlan::exchange_axis 1 and 2): r is left specified within two
  // points of the halo along i2 or i3 (on_band_wrapping_i1), i1 halo included, and nowhere
  // else. An executor may smooth the core's rows end to end (the OpenMP one does: the ends'
  // r halo is in its window) and leave psinv_shell only the face planes and edge rows; core
  // and shell must be given the same word. After psinv_shell, u's i1 halo is written too (a
  // copy of each row's ends): the caller refreshes u along i2 and i3 only.
  virtual void resid_psinv_core(double* u, const double* v, double* r, Box b, const Stencil& a, const Stencil& c,
                                bool wraps_i1) const = 0;
  // u = u + C r on the shell: interior points with a halo neighbour (those resid_psinv_core,
  // given the same `wraps_i1`, left out).
  virtual void psinv_shell(const double* r, double* u, Box b, const Stencil& c, bool wraps_i1) const = 0;
  // interp then resid_psinv_core (u = u + Q z, then the pass above) in one pass: u is read
  // and written once. The default runs the two one after the other.
  virtual void interp_resid_psinv_core(const double* z, Box coarse, double* u, const double* v, double* r, Box b,
                                       const Stencil& a, const Stencil& c, bool wraps_i1) const;

  // ---- fused across levels (tiled variant) ----
  // The residual straight into the restriction: r = v - A u on the fine block and s = P r on
  // the coarse interior; returns r's {sum of squares, max |r|} over the fine interior. For a
  // block whose i1 and i2 neighbours are itself (one process along both), so r's halo along
  // them is a periodic copy of its own faces. Along i3 the restriction reads r's upper halo
  // plane (n3 - 1): the caller puts it there first (the upper neighbour's plane 1). r's other
  // points are left unspecified (the fast executors never store r, which is the point). The
  // default runs the operators it fuses one after the other.
  virtual std::pair<double, double> resid_rprj3(const double* u, const double* v, double* r, Box fine, double* s,
                                                Box coarse, const Stencil& a) const;
};

// True for a point of b within two points of the halo (halo points included): where
// resid_psinv_core leaves r specified.
inline bool on_band(Box b, int i1, int i2, int i3) {
  return i1 <= 2 || i2 <= 2 || i3 <= 2 || i1 >= b.n1 - 3 || i2 >= b.n2 - 3 || i3 >= b.n3 - 3;
}

// The same for a block that wraps along i1 (resid_psinv_core's `wraps_i1`): within two points
// of the halo along i2 or i3, every i1 (halo included).
inline bool on_band_wrapping_i1(Box b, int i2, int i3) {
  return i2 <= 2 || i3 <= 2 || i2 >= b.n2 - 3 || i3 >= b.n3 - 3;
}

// r's i1 halo on every interior row of b from the row's own ends (a block that is its own
// neighbour along i1), as HaloPlan's periodic copy along i1 writes it.
inline void wrap_rows_i1(double* r, Box b) {
  for (int i3 = 1; i3 < b.n3 - 1; ++i3)
    for (int i2 = 1; i2 < b.n2 - 1; ++i2) {
      r[b.at(0, i2, i3)] = r[b.at(b.n1 - 2, i2, i3)];
      r[b.at(b.n1 - 1, i2, i3)] = r[b.at(1, i2, i3)];
    }
}

// True for an interior point of b next to the halo (the shell psinv_shell smooths).
inline bool on_shell(Box b, int i1, int i2, int i3) {
  return i1 == 1 || i2 == 1 || i3 == 1 || i1 == b.n1 - 2 || i2 == b.n2 - 2 || i3 == b.n3 - 2;
}

// c0 r + c1 (face sum) + c2 (edge sum) + c3 (corner sum) at one point: a 27-point stencil
// written out (the smoother's increment, or with kRestriction one restricted point), for the
// shell, the replicated levels and other short runs of points.
double smoother_at(const double* r, Box b, int i1, int i2, int i3, const Stencil& c);

// The executor for a backend: `threads` threads; `tile_bytes` the working set of one block of
// rows in the tiled variant (0: untiled, NAS's plane-by-plane order and no fusion). Throws
// std::invalid_argument for a backend this build lacks.
inline constexpr char kMgFamily[] = "MG";
// The executors of each backend that runs MG kernels (their files join it: family.hpp).
using MgFamily = Family<kMgFamily, std::unique_ptr<MgOps> (*)(int threads, std::size_t tile_bytes)>;

inline std::unique_ptr<MgOps> make_mg_ops(const Backend& backend, int threads, std::size_t tile_bytes) {
  return MgFamily::of(backend)(threads, tile_bytes);
}

// The frozen reference: one thread, the stencils written out point by point.
std::unique_ptr<MgOps> make_mg_ops_reference();

// Rows per block for a sweep over rows of n1 points that keeps `streams` rows of every plane
// in flight: at least one, and n2_interior when the whole plane fits.
int rows_per_block(std::size_t tile_bytes, int n1, int streams, int n2_interior);

// The edges between blocks of `per_block` rows over `rows` rows (blocks - 1; 0 when one holds them).
int edges_between(int rows, int per_block);

// The edges between the blocks of rows a tiled sweep walks `rows` rows in (blocks - 1): 0 when
// untiled (tile_bytes 0) or when one block holds them all.
double block_edges(std::size_t tile_bytes, int n1, int streams, int rows);

}  // namespace pxq::kernels
