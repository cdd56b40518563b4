// Options every miniapp shares (variant, layout facts from the driver, record path), and
// their resolution into one read-only RunConfig before any MPI work starts.
#pragma once

#include <cstddef>
#include <string>

#include "pxq/common/app.hpp"
#include "pxq/common/cli.hpp"
#include "pxq/kernels/backend.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace pxq::common {

struct CommonOptions {
  std::string mode;  // "", flat, hybrid, tiled
  int threads = 0;   // 0: from the mode (1 unless OMP_NUM_THREADS says otherwise)
  std::string tile;  // "": from the mode
  std::string backend = "openmp";
  std::string fuse = "auto";  // auto (with the tile), on, off
  std::string json_path;      // append the run record here ("" = no record)
  std::string declare_path;   // declare the work only: set up, append it here, run nothing timed
  // Layout facts the driver knows (the binary checks them against what it observes).
  int nodes = 0;           // 0: as observed
  int ranks_per_node = 0;  // 0: as observed
  std::string alloc = "block";
  std::string launcher = "mpirun";
  bool oversubscribed = false;
  std::string driver_info;       // JSON object from the pxq driver, stored as given
  std::string driver_info_file;  // or a file holding it (the driver's choice when it is large)
  std::string counters = "off";  // off, hw (PAPI or perf_event), sim (under the driver's cache simulator)
};

void add_common_options(pxq::cli::App& app, CommonOptions& o);
// --option for one of an app's own choices (apps.def's PXQ_APP_CHOICE): its help, its values
// checked, `target` set to the default.
void add_app_choice(pxq::cli::App& cli, std::string& target, const std::string& app, const std::string& option);

// What every NAS proxy takes: --class (the classes apps.def gives the app; the app's class
// table checks the value) and --quiet (`quiet_help` says what it leaves out).
struct NasOptions {
  std::string cls = "S";  // NAS problem class
  bool quiet = false;
};
void add_nas_options(pxq::cli::App& cli, NasOptions& o, const std::string& app, const std::string& quiet_help);

struct Variant {
  std::string mode;  // resolved: flat, hybrid or tiled
  int threads = 1;
  tiling::TilePolicy tile;
  kernels::Backend backend = "openmp";
  // Sweeps fused into one pass where the plain code makes several (CG's vector updates with the
  // SpMV, MG's residual with the smoothing, FT's evolve and packing with the FFTs). A choice of
  // its own, recorded: by default it goes with the tile.
  bool fused = false;
};

// Applies the mode preset and the explicit axes; throws std::invalid_argument with the
// problem and the fix when they contradict (flat with 2 threads, hybrid with a tile, ...).
Variant resolve_variant(const CommonOptions& o);

// "flat", "hybrid" or "tiled" from the two axes.
std::string mode_of(int threads, bool tiled);

// A miniapp's whole main(): the shared options, the app's own (`add`), a later value of an
// option winning (so the driver's defaults yield to the user's app options), then `run` in
// run_miniapp's frame (MPI start-up, errors, exit codes).
template <class AppOptions, class Add, class Run>
int miniapp_main(int argc, char** argv, const std::string& description, const std::string& name, Add add, Run run) {
  pxq::cli::App app{description, name};
  app.take_last();
  CommonOptions common;
  AppOptions own;
  add_common_options(app, common);
  add(app, own);
  // One thread per rank needs no more than MPI_THREAD_SINGLE, and that is what MPI is asked for.
  const auto thread_level = [&] {
    return resolve_variant(common).threads > 1 ? MPI_THREAD_FUNNELED : MPI_THREAD_SINGLE;
  };
  return run_miniapp(argc, argv, app, [&](const MpiWorld& w) { return run(w, common, own); }, thread_level);
}

}  // namespace pxq::common
