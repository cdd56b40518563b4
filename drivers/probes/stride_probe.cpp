// pxq-probe-stride: the memory-hierarchy kernel. For array sizes from 4 KiB to past the
// last-level cache and strides from 8 B to half the array, the average time of one read +
// write access; and the block variant (read + write every double of a block of growing size).
// Run as one copy, or as q copies at once on q cores chosen by placement; every point is
// measured alone and then by all copies together, back to back, so the contention penalty is
// a ratio measured under the same conditions. A probe that reports; never a test.
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pxq/common/cli.hpp"
#include "pxq/common/run_record.hpp"
#include "pxq/probes/memory.hpp"
#include "pxq/tiling/cache_info.hpp"
#include "pxq/tiling/tile_policy.hpp"
#include "pxq/tiling/topology.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using pxq::probes::sweeps_for;

struct Options {
  std::string min = "4K", max = "auto", stride = "0", placement = "packed", json, driver_info, topology;
  int points_per_octave = 2, copies = 1;
  std::size_t accesses = 1u << 22;
  int repeat = 3;
  std::vector<int> cpus;
  double step_ratio = 1.2;
  std::size_t detect_stride = 64;
  bool no_blocks = false, quiet = false;
};

struct Point {
  std::size_t bytes = 0, stride = 0;
  double alone_ns = 0;
  std::vector<double> together_ns;  // per copy, all copies at once
};

struct BlockPoint {
  std::size_t bytes = 0;
  double alone_gbs = 0;
  std::vector<double> together_gbs;
};

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0)
    throw std::runtime_error("cannot bind a copy to cpu " + std::to_string(cpu));
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

std::string human(std::size_t b) {
  char buf[32];
  if (b >= (1u << 20) && b % (1u << 20) == 0)
    std::snprintf(buf, sizeof buf, "%zuM", b >> 20);
  else if (b >= (1u << 20))
    std::snprintf(buf, sizeof buf, "%.1fM", static_cast<double>(b) / (1 << 20));
  else if (b >= 1024 && b % 1024 == 0)
    std::snprintf(buf, sizeof buf, "%zuK", b >> 10);
  else
    std::snprintf(buf, sizeof buf, "%zu", b);
  return buf;
}

// What the options resolve to before anything is measured.
struct Plan {
  std::vector<std::size_t> sizes;
  std::size_t only = 0;  // the one stride measured (0: every stride)
  std::vector<int> cpus;
  nlohmann::json placement, driver = nlohmann::json::object();
};

void add_options(pxq::cli::App& app, Options& o) {
  app.add_option("--min", o.min, "Smallest array (default 4K)");
  app.add_option("--max", o.max, "Largest array (default auto: twice the last-level cache, at least 64M)");
  app.add_option("--points-per-octave", o.points_per_octave, "1: powers of two; 2: also 1.5x each (default)");
  app.add_option("--stride", o.stride, "Measure this stride only (bytes; default every stride)");
  app.add_option("--accesses", o.accesses, "Accesses per point, at least (default 4194304)");
  app.add_option("--repeat", o.repeat, "Measurements per point; the fastest counts (default 3)");
  app.add_option("--copies", o.copies, "Copies run at once on as many cores (default 1)");
  app.add_option("--placement", o.placement, "Cores of the copies: packed, spread or custom (--cpus)");
  app.add_option("--cpus", o.cpus, "custom: OS cpu numbers, one per copy")->delimiter(',');
  app.add_option("--topology", o.topology, "hwloc XML to choose cores from (default this machine)");
  app.add_option("--step-ratio", o.step_ratio, "A rise in time per access that counts as a cache step (default 1.2)");
  app.add_option("--detect-stride", o.detect_stride, "Stride whose curve over sizes finds the caches (default 64)");
  app.add_flag("--no-blocks", o.no_blocks, "Skip the block-size variant");
  app.add_option("--json", o.json, "Append the record (JSON line) to this file");
  app.add_option("--driver-info", o.driver_info, "JSON object from the pxq driver (recorded)");
  app.add_flag("--quiet", o.quiet, "Only the summary");
}

// Checks the options (std::exception on bad input) and chooses sizes and cores.
Plan prepare(const Options& o, const pxq::tiling::CacheInfo& caches) {
  if (o.copies < 1) throw std::invalid_argument("--copies " + std::to_string(o.copies) + ": use at least 1");
  if (o.repeat < 1) throw std::invalid_argument("--repeat " + std::to_string(o.repeat) + ": use at least 1");
  if (o.accesses == 0) throw std::invalid_argument("--accesses 0: zero iterations measure nothing; use at least 1");
  if (!(o.step_ratio > 1)) throw std::invalid_argument("--step-ratio must be above 1");
  Plan plan;
  const std::size_t min = pxq::tiling::parse_bytes(o.min);
  std::size_t max = 0;
  if (o.max == "auto") {
    const std::size_t llc = std::max({caches.l3.bytes, caches.l2.bytes, caches.l1d.bytes});
    max = std::size_t{64} << 20;
    while (max < 2 * llc) max *= 2;
  } else {
    max = pxq::tiling::parse_bytes(o.max);
  }
  plan.sizes = pxq::probes::stride_sizes(min, max, o.points_per_octave);
  plan.only = o.stride == "0" ? 0 : pxq::tiling::parse_bytes(o.stride);
  if (plan.only > 0) {
    pxq::probes::strides_for(plan.sizes.back(), plan.only);  // the stride must fit the largest array
    plan.sizes.erase(
        std::remove_if(plan.sizes.begin(), plan.sizes.end(), [&](std::size_t s) { return plan.only > s / 2; }),
        plan.sizes.end());
  }
  const auto topo = o.topology.empty() ? pxq::tiling::this_topology() : pxq::tiling::topology_from_xml(o.topology);
  const auto cores = pxq::tiling::plan_placement(topo, o.placement, 1, o.copies, 1, false, o.cpus);
  for (const auto& r : cores.nodes[0].ranks) plan.cpus.push_back(r.front().cpu);
  const auto& sh = cores.nodes[0].sharing;
  plan.placement = {{"mode", cores.mode},
                    {"cpus", plan.cpus},
                    {"warnings", cores.warnings},
                    {"copy_pairs",
                     {{"same_l2", sh.same_l2},
                      {"same_l3", sh.same_l3},
                      {"same_package", sh.same_package},
                      {"other_package", sh.other_package}}}};
  if (!o.driver_info.empty()) plan.driver = nlohmann::json::parse(o.driver_info);
  if (!o.json.empty()) pxq::common::check_record_path(o.json);
  return plan;
}

// One copy's measurements on its own array (the copy runs on its own core).
class Copy {
 public:
  Copy(const Options& o, std::size_t max_elems) : o_(o), a_(new double[max_elems]) {
    for (std::size_t i = 0; i < max_elems; ++i) a_[i] = 0.0;  // first touch by its own copy
  }
  // Nanoseconds per access at one size and stride, the fastest of --repeat.
  double access_ns(const Point& p) {
    const std::size_t n = p.bytes / sizeof(double), step = p.stride / sizeof(double);
    const std::size_t sweeps = sweeps_for(p.bytes, p.stride, o_.accesses);
    pxq::probes::stride_kernel(a_.get(), n, step, 1);  // warm
    return best_of(true, [&] {
      const auto t0 = Clock::now();
      const std::size_t count = pxq::probes::stride_kernel(a_.get(), n, step, sweeps);
      return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(count);
    });
  }
  // GB/s reading and writing one block again and again, the best of --repeat.
  double block_gbs(const BlockPoint& b, std::size_t traffic) {
    const std::size_t n = b.bytes / sizeof(double);
    const std::size_t repeats = std::max<std::size_t>(1, traffic / b.bytes);
    pxq::probes::block_kernel(a_.get(), n, 1);
    return best_of(false, [&] {
      const auto t0 = Clock::now();
      pxq::probes::block_kernel(a_.get(), n, repeats);
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      return 2.0 * static_cast<double>(b.bytes) * static_cast<double>(repeats) / s / 1e9;
    });
  }

 private:
  template <class Once>
  double best_of(bool smaller, Once once) {
    double best = 0;
    for (int r = 0; r < o_.repeat; ++r) {
      const double v = once();
      best = r == 0 ? v : (smaller ? std::min(best, v) : std::max(best, v));
    }
    return best;
  }
  const Options& o_;
  std::unique_ptr<double[]> a_;
};

// Every point measured by the first copy alone, then by every copy at once; "" or the failure.
std::string measure(const Options& o, const Plan& plan, std::vector<Point>& points, std::vector<BlockPoint>& blocks) {
  const std::size_t max_elems = plan.sizes.back() / sizeof(double);
  const std::size_t block_traffic = std::max<std::size_t>(o.accesses * 64, std::size_t{64} << 20);
  std::string failure;
  const bool progress = !o.quiet && isatty(2);
  const auto start = Clock::now();
#pragma omp parallel num_threads(o.copies)
  {
    const int me = omp_get_thread_num();
    std::unique_ptr<Copy> copy;
    try {
      pin(plan.cpus[static_cast<std::size_t>(me)]);
      copy = std::make_unique<Copy>(o, max_elems);
    } catch (const std::exception& e) {
#pragma omp critical
      failure = e.what();
    }
#pragma omp barrier
    if (failure.empty()) {
      auto alone_then_together = [&](auto measure_one, double& alone, std::vector<double>& together) {
        if (me == 0) alone = measure_one();
#pragma omp barrier
        if (o.copies > 1) {
          together[static_cast<std::size_t>(me)] = measure_one();
#pragma omp barrier
        } else if (me == 0) {
          together[0] = alone;
        }
      };
      std::size_t last_size = 0;
      for (auto& p : points) {
        alone_then_together([&] { return copy->access_ns(p); }, p.alone_ns, p.together_ns);
        if (me == 0 && progress && p.bytes != last_size) {
          last_size = p.bytes;
          std::fprintf(stderr, "\r  array %-6s (%.0f s)   ", human(p.bytes).c_str(),
                       std::chrono::duration<double>(Clock::now() - start).count());
        }
      }
      for (auto& b : blocks)
        alone_then_together([&] { return copy->block_gbs(b, block_traffic); }, b.alone_gbs, b.together_gbs);
    }
  }
  if (progress) std::fprintf(stderr, "\r%40s\r", "");
  return failure;
}

// A compact table: a few strides per size, the contention ratio at the detection stride.
void print_points(const Options& o, const Plan& plan, const std::vector<Point>& points,
                  const std::vector<BlockPoint>& blocks) {
  const std::vector<std::size_t> shown = {8, 64, 512, 4096, 32768, 262144};
  std::printf("\nns per read+write access, one copy alone%s\n", o.copies > 1 ? " (x: all copies at once / alone)" : "");
  std::printf("%8s", "array");
  for (std::size_t s : shown) std::printf(" %9s", (human(s) + "B").c_str());
  if (o.copies > 1) std::printf(" %9s", ("x@" + human(o.detect_stride)).c_str());
  std::printf("\n");
  for (std::size_t bytes : plan.sizes) {
    std::printf("%8s", human(bytes).c_str());
    for (std::size_t s : shown) {
      auto it =
          std::find_if(points.begin(), points.end(), [&](const Point& p) { return p.bytes == bytes && p.stride == s; });
      if (it == points.end())
        std::printf(" %9s", "");
      else
        std::printf(" %9.2f", it->alone_ns);
    }
    auto d = std::find_if(points.begin(), points.end(),
                          [&](const Point& p) { return p.bytes == bytes && p.stride == o.detect_stride; });
    const double ratio = d != points.end() ? mean(d->together_ns) / d->alone_ns : 0.0;
    if (o.copies > 1) std::printf(" %8.2fx", ratio);
    std::printf("\n");
  }
  if (blocks.empty()) return;
  std::printf("\nblock variant: GB/s reading + writing a block again and again%s\n",
              o.copies > 1 ? " (alone; per copy with all copies; slowdown)" : "");
  for (const auto& b : blocks) {
    std::printf("%8s %8.1f", human(b.bytes).c_str(), b.alone_gbs);
    if (o.copies > 1) std::printf(" %8.1f  %5.2fx", mean(b.together_gbs), b.alone_gbs / mean(b.together_gbs));
    std::printf("\n");
  }
}

void print_steps(const Options& o, std::size_t largest, const std::vector<pxq::probes::Step>& steps,
                 const std::vector<pxq::probes::CacheMatch>& matches) {
  std::printf("\ncache steps at stride %zu B (time per access up by more than %.2fx):\n", o.detect_stride,
              o.step_ratio);
  for (const auto& s : steps)
    std::printf("  fits %-7s spills %-7s %.2f -> %.2f ns\n", human(s.fits).c_str(), human(s.spills).c_str(),
                s.before_ns, s.after_ns);
  for (const auto& m : matches) {
    if (m.bytes == 0) continue;
    if (m.bytes >= largest)
      std::printf("  %-3s hwloc %-7s not reached: the largest array is %s (use --max)\n", m.level.c_str(),
                  human(m.bytes).c_str(), human(largest).c_str());
    else if (m.found)
      std::printf("  %-3s hwloc %-7s step fits %s, spills %s: %s\n", m.level.c_str(), human(m.bytes).c_str(),
                  human(m.step.fits).c_str(), human(m.step.spills).c_str(),
                  m.octaves == 0 ? "the cache size lies inside the step"
                                 : ("off by " + std::to_string(m.octaves).substr(0, 4) + " octave(s)").c_str());
    else if (!steps.empty())
      std::printf("  %-3s hwloc %-7s no step within an octave: the nearest (fits %s, spills %s) is %.2f octaves away\n",
                  m.level.c_str(), human(m.bytes).c_str(), human(m.step.fits).c_str(), human(m.step.spills).c_str(),
                  m.octaves);
    else
      std::printf("  %-3s hwloc %-7s no step found\n", m.level.c_str(), human(m.bytes).c_str());
  }
}

nlohmann::json record_of(const Options& o, const Plan& plan, const std::vector<Point>& points,
                         const std::vector<BlockPoint>& blocks, const std::vector<pxq::probes::Step>& steps,
                         const std::vector<pxq::probes::CacheMatch>& matches, const pxq::tiling::CacheInfo& caches) {
  const std::size_t largest = plan.sizes.back();
  nlohmann::json pts = nlohmann::json::array(), blk = nlohmann::json::array(), st = nlohmann::json::array(),
                 mt = nlohmann::json::array();
  for (const auto& p : points)
    pts.push_back({{"bytes", p.bytes},
                   {"stride", p.stride},
                   {"ns", p.alone_ns},
                   {"ns_copies", p.together_ns},
                   {"contention", mean(p.together_ns) / p.alone_ns}});
  for (const auto& b : blocks)
    blk.push_back({{"bytes", b.bytes}, {"gbs", b.alone_gbs}, {"gbs_copies", b.together_gbs}});
  for (const auto& s : steps)
    st.push_back({{"fits", s.fits}, {"spills", s.spills}, {"before_ns", s.before_ns}, {"after_ns", s.after_ns}});
  for (const auto& m : matches)
    mt.push_back({{"level", m.level},
                  {"bytes", m.bytes},
                  {"reached", m.bytes < largest},
                  {"found", m.found && m.bytes < largest},
                  {"fits", m.step.fits},
                  {"spills", m.step.spills},
                  {"octaves", m.octaves}});
  return {{"kind", "probe"},
          {"schema", pxq::common::kRecordSchema},
          {"app", "probe-stride"},
          {"status", "ok"},
          {"size",
           {{"min", plan.sizes.front()},
            {"max", largest},
            {"points_per_octave", o.points_per_octave},
            {"accesses", o.accesses},
            {"copies", o.copies},
            {"stride_only", plan.only}}},
          {"placement", plan.placement},
          {"points", pts},
          {"blocks", blk},
          {"detection", {{"stride", o.detect_stride}, {"ratio", o.step_ratio}, {"steps", st}, {"caches", mt}}},
          {"notes", plan.placement["warnings"]},
          {"context", pxq::common::machine_context(caches)},
          {"driver", plan.driver}};
}

int run(int argc, char** argv) {
  pxq::cli::App app{"pxq probe stride: time per read+write access over array sizes and strides", "pxq-probe-stride"};
  Options o;
  add_options(app, o);
  PXQ_CLI_PARSE(app, argc, argv);
  const auto caches = pxq::tiling::discover_caches();
  Plan plan;
  try {
    plan = prepare(o, caches);
  } catch (const std::exception& e) {
    std::cerr << "pxq-probe-stride: error: " << e.what() << "\n";
    return 2;
  }
  std::vector<Point> points;
  for (std::size_t bytes : plan.sizes)
    for (std::size_t stride : pxq::probes::strides_for(bytes, plan.only))
      points.push_back({bytes, stride, 0, std::vector<double>(static_cast<std::size_t>(o.copies), 0)});
  std::vector<BlockPoint> blocks;
  if (!o.no_blocks)
    for (std::size_t bytes : plan.sizes)
      blocks.push_back({bytes, 0, std::vector<double>(static_cast<std::size_t>(o.copies), 0)});

  std::printf("pxq probe stride: %zu sizes (%s .. %s), %zu points, %zu accesses per point, %d cop%s on cpu(s)",
              plan.sizes.size(), human(plan.sizes.front()).c_str(), human(plan.sizes.back()).c_str(), points.size(),
              o.accesses, o.copies, o.copies == 1 ? "y" : "ies");
  for (int c : plan.cpus) std::printf(" %d", c);
  std::printf(" (%s)\n", o.placement.c_str());
  for (const auto& w : plan.placement["warnings"]) std::printf("note: %s\n", w.get<std::string>().c_str());
  std::fflush(stdout);
  const std::string failure = measure(o, plan, points, blocks);
  if (!failure.empty()) {
    std::cerr << "pxq-probe-stride: error: " << failure << "\n";
    return 3;
  }

  // Where the time per access steps up along the sizes at the detection stride.
  std::vector<std::size_t> det_sizes;
  std::vector<double> det_ns;
  for (const auto& p : points)
    if (p.stride == o.detect_stride) {
      det_sizes.push_back(p.bytes);
      det_ns.push_back(p.alone_ns);
    }
  const auto steps = pxq::probes::detect_steps(det_sizes, det_ns, o.step_ratio);
  const auto matches = pxq::probes::match_caches(
      steps, {{"L1d", caches.l1d.bytes}, {"L2", caches.l2.bytes}, {"L3", caches.l3.bytes}}, 1.0);
  print_points(o, plan, points, blocks);
  print_steps(o, plan.sizes.back(), steps, matches);
  if (o.json.empty()) return 0;
  try {
    pxq::common::append_record(o.json, record_of(o, plan, points, blocks, steps, matches, caches));
  } catch (const std::exception& e) {
    std::cerr << "pxq-probe-stride: error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return pxq::cli::guarded_main("pxq-probe-stride", run, argc, argv); }
