// pxq-is: NAS IS, the integer sort. Every rank holds a slice of NAS's keys and, on each of 10
// iterations, ranks all of them as NAS's MPI IS does: it sorts its keys into buckets, sums the
// bucket sizes over all ranks (an allreduce, carrying the five test keys too), gives each rank
// a run of whole buckets holding about its share of the keys, sends every rank its buckets'
// keys (an all-to-all of counts, then of keys) and counts the keys of its range. One rank
// untiled exchanges with no one, so it counts its keys as they lie, without buckets (NAS's
// OpenMP IS without buckets: a histogram of the whole range per thread, summed). Each
// iteration checks the ranks of NAS's five test keys; after the last one the keys are sorted
// by their ranks and checked in order, on every rank and across ranks, with none lost.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "is_problem.hpp"
#include "pxq/comm/mpi_check.hpp"
#include "pxq/comm/msgmodel.hpp"
#include "pxq/comm/placement.hpp"
#include "pxq/comm/uncounted.hpp"
#include "pxq/common/app.hpp"
#include "pxq/common/huge_array.hpp"
#include "pxq/common/options.hpp"
#include "pxq/common/proxy.hpp"
#include "pxq/kernels/is_ops.hpp"

namespace pxq::is {
namespace {

using common::MpiWorld;

struct IsOptions : common::NasOptions {
  void add_to(pxq::cli::App& cli) { common::add_nas_options(cli, *this, "is", "No per-iteration lines"); }
};

// The IS proxy's steps in the common lifecycle.
class IsProxy final : public common::NasProxy<IsOptions, IsClass> {
 public:
  IsProxy(const MpiWorld& w, const common::Variant& v, const IsOptions& o)
      : NasProxy(w, v, o, is_class(o.cls)), slice_(key_slice(cls_.total_keys(), w.size, w.rank)) {
    if (w.size > cls_.buckets())
      throw std::invalid_argument("is class " + std::string(1, cls_.name) + " has " + std::to_string(cls_.buckets()) +
                                  " buckets to share among the processes, got " + std::to_string(w.size) +
                                  " processes: use at most " + std::to_string(cls_.buckets()));
  }

  // The tile bounds the counters of a window of this rank's share of the key range.
  std::size_t tile_buffer_bytes() const override {
    return static_cast<std::size_t>(cls_.max_key()) / static_cast<std::size_t>(w_.size) * sizeof(std::int32_t);
  }
  // Windows need the keys grouped by bucket; one rank untiled counts them where they lie.
  std::string untiled_best() const override {
    if (w_.size > 1) return {};
    return "one rank exchanges with no one, so untiled it counts its keys where they lie, without the bucket "
           "sort a tile's windows need";
  }

  void set_up(const common::RunStart& start) override {
    // Whether every rank shares this rank's node: there the keys' all-to-all is copies through
    // shared memory, which work() declares.
    const auto& p = start.placement;
    on_node_ = p.size() == static_cast<std::size_t>(w_.size);
    for (std::size_t r = 0; on_node_ && r < p.size(); ++r)
      on_node_ = comm::classify(p[static_cast<std::size_t>(w_.rank)], p[r]) != comm::Channel::inter_node;
    ops_ = kernels::make_is_ops(v_.backend, v_.threads, tile_.tiled ? tile_.bytes : 0);
    direct_ = w_.size == 1 && !tile_.tiled;
    keys_ = generate_keys(cls_, slice_, v_.threads);
    if (!direct_) common::assign_huge(sorted_, keys_.size(), IsKey{0}, v_.threads);
    const auto nb = static_cast<std::size_t>(cls_.buckets());
    counts_.assign(nb + kTestKeys, 0);
    totals_.assign(nb + kTestKeys, 0);
    for (auto* v : {&send_count_, &send_displ_, &recv_count_, &recv_displ_}) v->assign(std::size_t(w_.size), 0);
  }

  // NAS ranks once before timing (iteration 1, whose change of keys the timed run repeats).
  void warm_up() override { rank_keys(1); }

  std::vector<std::string> phases() const override { return {"bucket", "allreduce", "alltoall", "rank"}; }
  std::vector<std::string> comm_phases() const override { return {"allreduce", "alltoall"}; }

  void iterate() override {
    partial_passed_ = 0;
    for (int it = 1; it <= kIsIterations; ++it) {
      if (!o_.quiet && w_.rank == 0) {
        std::printf("        %d\n", it);
        std::fflush(stdout);
      }
      rank_keys(it);
    }
  }

  bool verify() override;
  common::Summary summarize(const common::Measured& m, bool quiet) const override;

  // Integer work only (no flops), counted as the cores issue it. Per iteration, the bucket sort
  // counts this rank's keys (a key read, its bucket's counter read and written) and scatters
  // them (a key read, its bucket's position read and written, the key written): 28 B per key,
  // of which the keys read and written once must cross the memory bus. Ranking reads the
  // keys it received and increments one counter per key (read and write) over this rank's share
  // of the key range, then sums the counters once. Both are random updates (kind "update"):
  // the bucket sort's over the buckets' counters, the ranking's within one bucket's range of
  // counters at a time (the keys arrive grouped by bucket), while all of them stream through.
  common::Work work() const override {
    const double it = kIsIterations, keys = static_cast<double>(keys_.size()), key = sizeof(IsKey);
    const double counter = sizeof(std::int32_t);
    const double range = static_cast<double>(cls_.max_key()) / w_.size * counter;
    const double received = static_cast<double>(cls_.total_keys()) / w_.size;
    const double bucket_range = static_cast<double>(cls_.max_key() >> cls_.buckets_log2) * counter;
    const double counters = tile_.tiled ? std::min(range, static_cast<double>(tile_.bytes)) : range;
    common::PhaseWork bucket{"bucket",
                             0.0,
                             it * keys * (3.0 * key + 4.0 * counter),
                             it * keys * 2.0 * key,
                             keys * 2.0 * key,
                             cls_.buckets() * counter,
                             "keys counted and scattered: a key read and its bucket's counter read and written "
                             "twice, the key written; compulsory: the keys read and written once"};
    common::PhaseWork rank{"rank",
                           0.0,
                           it * (received * (key + 8.0) + range * 2.0),
                           it * (received * key + range * 2.0),
                           received * key + range,
                           std::min(counters, bucket_range),
                           "received keys read once, a counter read and written per key, the counters summed"};
    bucket.kind = "update";
    rank.kind = "update";
    if (direct_) return {direct_rank_work()};
    if (!on_node_ || w_.size < 2) return {bucket, rank};
    // The keys' all-to-all among ranks of one node: the keys bound for the other ranks, about
    // (P - 1) / P of this rank's (NAS balances the ranks' key ranges), at the all-to-all kind's
    // rate (MPI's own exchange through shared memory, measured with the node's ranks busy on
    // buffers of this size: the send and receive buffers). To another node the link binds,
    // which the ceilings do not measure: that all-to-all is not declared, and its time stays
    // outside the model.
    const double sent = keys * (w_.size - 1.0) / w_.size;
    common::PhaseWork alltoall{"alltoall",
                               0.0,
                               it * key * sent,
                               it * key * sent,
                               key * (keys + received),
                               key * (keys + received),
                               "the keys bound for the node's other ranks, sent with MPI_Alltoallv"};
    alltoall.kind = "alltoall";
    return {bucket, rank, alltoall};
  }

 private:
  // Ranking without buckets: every key read once and its 16-bit counter read and written in
  // its thread's histogram of the whole range (the working set each thread reuses), the T
  // histograms zeroed, read and summed into the populations, which the threads after the
  // first read and write again to add the keys before their part; compulsory: the keys read
  // and the populations written and read once.
  common::PhaseWork direct_rank_work() const {
    const double it = kIsIterations, keys = static_cast<double>(keys_.size()), key = sizeof(IsKey);
    const double values = static_cast<double>(cls_.max_key()), t = v_.threads;
    const double hist = values * sizeof(std::uint16_t), pop = values * sizeof(std::int32_t);
    common::PhaseWork rank{
        "rank",
        0.0,
        it * (keys * (key + 2.0 * sizeof(std::uint16_t)) + 2.0 * t * hist + pop + 2.0 * pop * (t - 1.0) / t),
        it * (keys * key + 2.0 * pop),
        keys * key + t * hist + pop,
        hist,
        "keys read once, a 16-bit counter read and written per key in its thread's histogram of "
        "the whole range, the histograms zeroed and summed, the populations accumulated"};
    rank.kind = "update";
    return rank;
  }

  // One iteration of NAS's rank(): the test keys found on this rank are checked.
  void rank_keys(int iteration) {
    const int nb = cls_.buckets(), shift = cls_.shift();
    alter_keys(cls_, slice_, keys_.data(), iteration);
    timers_.time("bucket", [&] {
      if (!direct_) ops_->bucket_sort(keys_.data(), keys_.size(), shift, nb, counts_.data(), sorted_.data());
      for (int i = 0; i < kTestKeys; ++i) {
        const std::int64_t at = cls_.test_index[static_cast<std::size_t>(i)];
        counts_[static_cast<std::size_t>(nb) + static_cast<std::size_t>(i)] =
            slice_.holds(at) ? keys_[static_cast<std::size_t>(at - slice_.first)] : 0;
      }
    });
    timers_.time("allreduce", [&] {
      comm::check_mpi(MPI_Allreduce(counts_.data(), totals_.data(), nb + kTestKeys, MPI_INT, MPI_SUM, w_.comm),
                      "MPI_Allreduce (bucket sizes)");
      for (const auto& msg : comm::allreduce_sends(w_.rank, w_.size, (nb + kTestKeys) * sizeof(std::int32_t)))
        traffic_.count(msg.peer, msg.bytes);
    });
    if (direct_) {  // every bucket here, the keys where they lie
      split_ = BucketSplit{{0}, {nb - 1}};
      timers_.time("alltoall", [&] { segments_.assign(1, {keys_.data(), keys_.size()}); });
    } else {
      split_ = split_buckets(totals_.data(), nb, cls_.total_keys(), w_.size);
      count_sends();
      timers_.time("alltoall", [&] { exchange(); });
    }
    timers_.time("rank", [&] {
      if (split_.empty(w_.rank)) return;
      const IsKey lo = split_.min_key(w_.rank, shift), hi = split_.max_key(w_.rank, shift);
      pop_.resize(static_cast<std::size_t>(hi - lo) + 1);
      if (direct_)
        ops_->rank_unsorted(keys_.data(), keys_.size(), lo, hi, pop_.data());
      else
        ops_->rank(segments_, lo, hi, shift, pop_.data());
      check_test_keys(iteration, lo, hi);
    });
  }

  // The keys this rank sends each rank: its buckets' counts over the receiver's buckets.
  void count_sends() {
    for (int r = 0, b = 0; r < w_.size; ++r) {
      int n = 0;
      for (; !split_.empty(r) && b <= split_.last[static_cast<std::size_t>(r)]; ++b)
        n += counts_[static_cast<std::size_t>(b)];
      send_count_[static_cast<std::size_t>(r)] = n;
      send_displ_[static_cast<std::size_t>(r)] = r == 0 ? 0 : send_displ_[r - 1] + send_count_[r - 1];
    }
  }

  // NAS's two all-to-alls: the counts, then the keys. The keys a rank keeps stay where its
  // bucket sort left them (NAS copies them through MPI_Alltoallv to itself): its own count
  // goes in the counts' all-to-all, and 0 in the keys'.
  void exchange() {
    const auto me = static_cast<std::size_t>(w_.rank);
    comm::check_mpi(MPI_Alltoall(send_count_.data(), 1, MPI_INT, recv_count_.data(), 1, MPI_INT, w_.comm),
                    "MPI_Alltoall (key counts)");
    const int keep = send_count_[me];
    send_count_[me] = recv_count_[me] = 0;
    std::size_t received = 0;
    for (std::size_t r = 0; r < recv_count_.size(); ++r) {
      recv_displ_[r] = static_cast<int>(received);
      received += static_cast<std::size_t>(recv_count_[r]);
    }
    if (received > INT_MAX)
      throw std::runtime_error("is: more keys on one rank than MPI's int counts: use more processes");
    if (recv_.size() < received) common::assign_huge(recv_, received, IsKey{0}, v_.threads);  // filled by the exchange
    comm::check_mpi(MPI_Alltoallv(sorted_.data(), send_count_.data(), send_displ_.data(), MPI_INT, recv_.data(),
                                  recv_count_.data(), recv_displ_.data(), MPI_INT, w_.comm),
                    "MPI_Alltoallv (keys)");
    segments_.clear();
    for (std::size_t r = 0; r < recv_count_.size(); ++r)
      if (r == me)
        segments_.push_back({sorted_.data() + send_displ_[r], static_cast<std::size_t>(keep)});
      else
        segments_.push_back({recv_.data() + recv_displ_[r], static_cast<std::size_t>(recv_count_[r])});
    for (int r = 0; r < w_.size; ++r)
      if (r != w_.rank) {
        traffic_.count(r, sizeof(std::int32_t));
        traffic_.count(r, static_cast<std::size_t>(send_count_[static_cast<std::size_t>(r)]) * sizeof(IsKey));
      }
  }

  // The rank of each test key this rank's range holds: the keys below it here, plus the keys
  // of the ranks before (the bucket totals below this rank's first bucket).
  void check_test_keys(int iteration, IsKey lo, IsKey hi) {
    std::int64_t lesser = 0;
    for (int b = 0; b < split_.first[static_cast<std::size_t>(w_.rank)]; ++b)
      lesser += totals_[static_cast<std::size_t>(b)];
    for (int i = 0; i < kTestKeys; ++i) {
      const IsKey k = totals_[static_cast<std::size_t>(cls_.buckets()) + static_cast<std::size_t>(i)];
      if (k < lo || k > hi) continue;
      const std::int64_t got = (k > lo ? pop_[static_cast<std::size_t>(k - 1 - lo)] : 0) + lesser;
      if (got == expected_rank(cls_, i, iteration)) {
        ++partial_passed_;
      } else {
        ++partial_failed_;
        std::fprintf(stderr,
                     "pxq-is: partial verification failed: iteration %d, rank %d, test key %d: rank %lld, NAS %lld\n",
                     iteration, w_.rank, i, static_cast<long long>(got),
                     static_cast<long long>(expected_rank(cls_, i, iteration)));
      }
    }
  }

  KeySlice slice_;
  std::unique_ptr<kernels::IsOps> ops_;
  std::vector<IsKey> keys_, sorted_, recv_;
  std::vector<std::int32_t> counts_, totals_, pop_;
  std::vector<int> send_count_, send_displ_, recv_count_, recv_displ_;
  std::vector<kernels::IsSegment> segments_;
  BucketSplit split_;
  long long partial_passed_ = 0, partial_failed_ = 0;
  // Filled by verify(), over all ranks.
  long long partial_total_ = 0, out_of_order_ = 0, keys_ranked_ = 0;
  bool sums_match_ = false;
  bool on_node_ = false;  // every rank shares this rank's node (the keys' all-to-all is a copy)
  bool direct_ = false;   // one rank, untiled: no exchange, so no buckets (rank_unsorted)
};

// NAS's full verification, after the last iteration: every rank places its keys by their
// ranks, counts keys out of order, here and against the previous rank's last key (passed
// along the ranks); and, beyond NAS, the keys ranked and their sum must be the keys generated.
bool IsProxy::verify() {
  std::vector<IsKey> placed;
  long long out = 0;
  long long sums[4] = {0, 0, 0, 0};  // keys ranked, their sum, keys held, their sum
  if (!split_.empty(w_.rank)) {
    auto put = place_keys(segments_, split_.min_key(w_.rank, cls_.shift()), pop_, v_.threads);
    placed = std::move(put.keys);
    const KeyScan scan = scan_keys(placed, v_.threads);
    out = put.misplaced + scan.out_of_order;  // a key not placed is out of order
    sums[0] = placed.empty() ? 0 : static_cast<long long>(placed.size()) - put.misplaced;
    sums[1] = scan.sum;
  }
  sums[2] = static_cast<long long>(keys_.size());
  sums[3] = scan_keys(keys_, v_.threads).sum;
  int before = INT_MIN;
  if (w_.rank > 0)
    comm::check_mpi(MPI_Recv(&before, 1, MPI_INT, w_.rank - 1, 1000, w_.comm, MPI_STATUS_IGNORE),
                    "MPI_Recv (last key)");
  if (!placed.empty() && before > placed.front()) ++out;
  int last = placed.empty() ? before : placed.back();
  if (w_.rank + 1 < w_.size)
    comm::check_mpi(MPI_Send(&last, 1, MPI_INT, w_.rank + 1, 1000, w_.comm), "MPI_Send (last key)");
  const comm::Uncounted bookkeeping;
  long long mine[7] = {partial_passed_, partial_failed_, out, sums[0], sums[1], sums[2], sums[3]}, all[7];
  comm::check_mpi(MPI_Allreduce(mine, all, 7, MPI_LONG_LONG, MPI_SUM, w_.comm), "MPI_Allreduce (verification)");
  partial_total_ = all[0];
  out_of_order_ = all[2];
  keys_ranked_ = all[3];
  sums_match_ = keys_ranked_ == all[5] && all[4] == all[6];
  return all[0] == static_cast<long long>(kTestKeys) * kIsIterations && all[1] == 0 && out_of_order_ == 0 &&
         keys_ranked_ == cls_.total_keys() && sums_match_;
}

std::string window_text(const kernels::IsOps& ops, const BucketSplit& split, int rank, const IsClass& c, bool tiled,
                        bool direct) {
  if (split.empty(rank)) return "none (no buckets on rank 0)";
  if (direct) return "the keys counted where they lie, no buckets (one rank: no exchange to sort for)";
  const int w = ops.window_buckets(split.min_key(rank, c.shift()), split.max_key(rank, c.shift()), c.shift());
  if (w == 0) return "one pass over the range (NAS's order)";
  return std::to_string(w) + " bucket(s) of " + std::to_string(1 << c.shift()) + " keys per window" +
         (tiled ? " (sized by the tile)" : " (the range split among the threads)");
}

common::Summary IsProxy::summarize(const common::Measured& m, bool /*quiet*/) const {
  const double comm = m.phase("allreduce") + m.phase("alltoall");
  const double a2a_share = m.total > 0 ? m.phase("alltoall") / m.total : 0.0;
  const int windows = split_.empty(w_.rank) ? 0
                                            : ops_->window_buckets(split_.min_key(w_.rank, cls_.shift()),
                                                                   split_.max_key(w_.rank, cls_.shift()), cls_.shift());
  common::Summary s;
  s.title = "IS";
  s.head = {{"Class", std::string(1, cls_.name)},
            {"Size", std::to_string(cls_.total_keys()) + " keys below " + std::to_string(cls_.max_key())},
            {"Iterations", std::to_string(kIsIterations)}};
  s.grid = std::to_string(w_.size) + " process(es), " + std::to_string(cls_.buckets()) + " buckets" +
           (w_.size > 1 ? " (an all-to-all of keys by bucket every iteration)" : " (no exchange)");
  s.variant = {{"Ranking", window_text(*ops_, split_, w_.rank, cls_, tile_.tiled, direct_)}};
  s.operations = nas_operation_count(cls_);
  std::string phases;
  for (const char* p : {"bucket", "allreduce", "alltoall", "rank"})
    phases += std::string(phases.empty() ? "" : ", ") + p + " " + common::fmt("%.4f", m.phase(p)) + " s";
  s.metrics = {{"Phases (max)", phases},
               {"All-to-all", common::fmt("%.1f", 100.0 * a2a_share) + "% of the time (slowest rank)"}};
  s.checks = {{"Partial verify", std::to_string(partial_total_) + " of " + std::to_string(kTestKeys * kIsIterations) +
                                     " test-key ranks as NAS lists them"},
              {"Full verify", std::to_string(out_of_order_) + " key(s) out of order; " + std::to_string(keys_ranked_) +
                                  " keys ranked of " + std::to_string(cls_.total_keys()) +
                                  (sums_match_ ? ", none lost or changed" : ", NOT the keys generated")}};
  s.size = class_size({{"total_keys", cls_.total_keys()},
                       {"max_key", cls_.max_key()},
                       {"buckets", cls_.buckets()},
                       {"niter", kIsIterations}});
  s.time = {{"bucket", m.phase("bucket")},
            {"allreduce", m.phase("allreduce")},
            {"alltoall", m.phase("alltoall")},
            {"comm", comm},  // what reports show as communication: the allreduce and the all-to-alls
            {"rank", m.phase("rank")}};
  s.metrics_json = {{"alltoall_share", a2a_share}};
  s.verification = {{"partial_passed", partial_total_},
                    {"partial_expected", kTestKeys * kIsIterations},
                    {"out_of_order", out_of_order_},
                    {"keys_ranked", keys_ranked_},
                    {"keys_unchanged", sums_match_},
                    {"method",
                     "NAS IS: the ranks of 5 test keys on every iteration, then every key placed by its rank and "
                     "checked in order on each rank and across ranks; the keys ranked must be the keys generated"}};
  s.variant_json = {{"window_buckets", windows}, {"buckets", !direct_}};
  return s;
}

}  // namespace
}  // namespace pxq::is

PXQ_PROXY_MAIN(pxq::is::IsProxy, pxq::is::IsOptions, "is", "pxq is: NAS IS (integer sort, bucket ranking)")
