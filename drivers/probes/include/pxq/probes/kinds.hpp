// The access kinds whose attainable rate a streaming sweep does not give: the kernels the
// roofline's in-core and irregular-access ceilings are measured with (pxq-probe-bandwidth
// --kind). Each sweeps data of a given size per core, in the form of the proxies' phases of
// that kind, and counts its bytes and flops as those phases declare theirs:
//
//   gather   CG's SpMV: a square CSR matrix, 128 entries per row (NAS CG's rows hold about
//            (nonzer+1)^2), columns uniformly random; the size is the matrix with x and y.
//            Bytes: the matrix (value and int32 column per entry, int64 row pointer per row),
//            x gathered per entry, y written; 2 flops per entry.
//   update   IS's ranking: 4M int32 keys uniformly random over counters of the given size,
//            one counter read and written per key, then the counters summed. Bytes: the keys
//            once, 8 per key at its counter, the counters read and written once.
//   stencil  MG's residual r = v - A u (NAS's operator A, 27 points in 4 classes) with the
//            kernel library's OpenMP executor on one thread, on a cube holding u, v and r in
//            the given size. Bytes: the three arrays once; 15 flops per point (as MG declares).
//   restrict MG's restriction s = P r (27-point full weighting) with the kernel library's
//            OpenMP executor on one thread, from a fine cube (side 2e + 2, halos included) to
//            its coarse cube (e + 2); the size is both. Bytes: the fine array read and an eighth
//            of it written (9 per fine point); 4 flops per fine point (as MG declares).
//   interp   MG's interpolation u += Q z, as restrict from the coarse cube to the fine one.
//            Bytes: the fine array read and written and an eighth of it read (17 per fine
//            point); 3 flops per fine point (as MG declares its finest interpolation).
//   alltoall IS's key exchange: MPI_Alltoall among the node's busy ranks (the probe binds the
//            first k), the size being a rank's send and receive buffers, so the messages shrink
//            as ranks are added, as an app's do at a fixed problem. Bytes: those a rank sends to
//            the others (alone, its copy to itself); no flops.
//   fft      FT's transforms: the kernel library's FT executor (NAS's batches of 16 lines)
//            gathers the strided y-lines of length 256 of a grid of the given size, transforms
//            and scatters them back. Bytes: 32 per point from memory (read and written once)
//            and 32 per point per radix-4 pass at the cores; 5 log2 n flops per point (as FT
//            declares its transforms).
//
// pxq-envinfo registry gives, for each kind measured in GFlop/s, its kernel's bytes from memory
// per flop: the roofline splits the kind's time into the arithmetic the kernel does at its
// in-cache rate and the bytes it waits for, so a phase fusing two sweeps (more flops per byte
// than the kernel) is priced for what it streams.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace pxq::probes {

class KindKernel {
 public:
  virtual ~KindKernel() = default;
  virtual void sweep() = 0;          // one sweep over the data
  virtual double bytes() const = 0;  // per sweep, as the proxies' phases of this kind declare
  // Per sweep, the part of bytes() that comes from memory once the data outgrow the caches
  // (the rest is traffic at the cores, such as an FFT's passes over its batch).
  virtual double memory_bytes() const { return bytes(); }
  virtual double flops() const = 0;           // per sweep
  virtual std::size_t footprint() const = 0;  // the bytes it actually sweeps
  virtual double checksum() const = 0;        // keeps the sweeps from being optimised away
  // The ranks a kernel that communicates sweeps among (the probe's first k busy ranks; called
  // by every rank, MPI_COMM_NULL on those left out). The others work alone and ignore it.
  virtual void bind(MPI_Comm /*ranks*/) {}
};

// One access kind of the registry: its name; the unit of its ceiling ("gbs": declared bytes per
// second, for irregular access; "gflops": for kernels whose arithmetic sets their pace); the
// size of the phase that sets its pace ("footprint" per core, or the "working_set" one worker
// reuses); what it stands for; and its kernel. pxq-envinfo registry exports all but the kernel
// (the driver's ceilings, the roofline and the record schema's enums read it from there).
struct KindInfo {
  const char* name;
  const char* unit;
  const char* size;
  const char* what;
  std::unique_ptr<KindKernel> (*make)(std::size_t bytes);
};

// Every access kind, in the order the ceilings list them: a new kind is its kernel class in
// kinds.cpp and one line of this table.
const std::vector<KindInfo>& kinds();

// "gather, update, stencil, restrict, fft": the table's names.
std::string kind_names();
bool is_kind(const std::string& name);
// Throws std::invalid_argument naming the kinds for an unknown one. `bytes`: per core.
std::unique_ptr<KindKernel> make_kind(const std::string& name, std::size_t bytes);

}  // namespace pxq::probes
