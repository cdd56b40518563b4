// The pxq labs' shared harness: MPI start-up, timing, and the result line the checker reads.
// Students never edit this file; each lab's own harness (main.cpp) uses it.
#pragma once

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lab_world.hpp"

namespace lab {

using Json = nlohmann::json;

// Exit codes, as pxq's proxies use them.
constexpr int kVerified = 0;
constexpr int kWrongResult = 1;
constexpr int kBadInput = 2;

namespace detail {
// The nonce pxq lab check hands this run in PXQ_LAB_NONCE, taken once before main() and wiped
// from the environment (the string overwritten in place, so /proc/self/environ loses it too):
// the student's code, which runs later, cannot read it to print a result line of its own.
inline std::string take_nonce() {
  std::string out = "-";  // run by hand
  if (char* value = std::getenv("PXQ_LAB_NONCE"); value && *value) {
    out = value;
    std::memset(value, '0', std::strlen(value));
    unsetenv("PXQ_LAB_NONCE");
  }
  return out;
}
inline const std::string nonce = take_nonce();
inline bool emitted = false;
inline std::uint64_t seed = 0;  // --seed, the same on every rank
}  // namespace detail

// The run's seed (--seed N, which pxq lab check draws afresh for every check): the labs mix it
// into their starting data, so that no answer can be known before the run computes it.
inline std::uint64_t seed() { return detail::seed; }

// A digest of the answer a lab computed (64-bit FNV-1a over its bytes): pxq lab check compares
// it with the digest pxq's own build of the lab computes from the same seed and options, outside
// the student's process, so a result line can only pass by carrying the answer itself.
class Digest {
 public:
  Digest& add(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) h_ = (h_ ^ p[i]) * 1099511628211ull;
    return *this;
  }
  template <class T>
  Digest& add_all(const T* values, std::size_t count) {
    return add(values, count * sizeof(T));
  }
  std::uint64_t value() const { return h_; }
  std::string hex() const {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h_));
    return text;
  }

 private:
  std::uint64_t h_ = 1469598103934665603ull;
};

// Every rank's digest, combined on rank 0 in rank order (every rank must call it).
inline std::string digest_over_ranks(const World& w, const Digest& mine) {
  const unsigned long long value = mine.value();
  std::vector<unsigned long long> all(w.rank == 0 ? w.size : 0);
  MPI_Gather(&value, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, 0, w.comm);
  Digest out;
  out.add_all(all.data(), all.size());
  return out.hex();
}

// The line pxq lab check reads: "LAB-RESULT NONCE {json}", printed by rank 0 only, once: a
// second call (code that prints a result before the harness's) ends the run with an error, and
// pxq lab check refuses any result line that does not carry this run's nonce.
inline void emit(const World& w, const Json& result) {
  if (detail::emitted) {
    std::fprintf(stderr, "error: a second result line: only the lab's harness reports a result\n");
    std::fflush(stderr);
    MPI_Abort(w.comm, kWrongResult);
  }
  detail::emitted = true;
  if (w.rank == 0) {
    std::printf("LAB-RESULT %s %s\n", detail::nonce.c_str(), result.dump().c_str());
    std::fflush(stdout);
  }
}

// Runs body(world) between MPI_Init_thread(required) and MPI_Finalize. Bad command-line
// input exits 2 with CLI11's message; an exception thrown by any rank exits 2 with its text;
// body returns kVerified or kWrongResult.
template <class Parse, class Body>
int run(int argc, char** argv, int required, Parse&& parse, Body&& body) {
  CLI::App app;
  parse(app);
  app.add_option("--seed", detail::seed, "mixed into the starting data (pxq lab check draws one per check)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kVerified : kBadInput;
  }
  World w;
  MPI_Init_thread(&argc, &argv, required, &w.provided);
  MPI_Comm_rank(w.comm, &w.rank);
  MPI_Comm_size(w.comm, &w.size);
  int code = kVerified;
  try {
    code = std::forward<Body>(body)(w);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error (rank %d): %s\n", w.rank, e.what());
    std::fflush(stderr);
    MPI_Abort(w.comm, kBadInput);
  }
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, w.comm);
  MPI_Finalize();
  return worst;
}

// A lab's program: Options (default-constructed) declares the command line in
// `void add_to(CLI::App&)`, and body(world, options) is the lab. PXQ_LAB_MAIN below is its main.
template <class Options, class Body>
int main_of(int argc, char** argv, int required, Body&& body) {
  Options o;
  return run(argc, argv, required, [&](CLI::App& app) { o.add_to(app); }, [&](const World& w) { return body(w, o); });
}

// "256K", "32M", "1G" or a plain byte count; throws std::invalid_argument naming the option.
inline std::size_t parse_bytes(const std::string& option, const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string unit = text.substr(digits);
  std::uint64_t scale = 1;
  if (unit == "K" || unit == "k" || unit == "KiB")
    scale = 1ull << 10;
  else if (unit == "M" || unit == "MiB")
    scale = 1ull << 20;
  else if (unit == "G" || unit == "GiB")
    scale = 1ull << 30;
  else if (!unit.empty())
    digits = 0;
  if (digits == 0 || digits > 12)
    throw std::invalid_argument(option + " " + text + ": give a size such as 4096, 256K or 32M");
  return static_cast<std::size_t>(std::stoull(text.substr(0, digits)) * scale);
}

// Verification as the proxies print it; returns the exit code.
inline int report_verification(const World& w, bool passed, const std::string& detail) {
  if (w.rank == 0) {
    std::printf("Verification %s: %s\n", passed ? "SUCCESSFUL" : "FAILED", detail.c_str());
    std::fflush(stdout);
  }
  return passed ? kVerified : kWrongResult;
}

// The same, from what either outcome means.
inline int report_verification(const World& w, bool passed, const std::string& if_passed,
                               const std::string& if_failed) {
  return report_verification(w, passed, passed ? if_passed : if_failed);
}

// The end of every lab: the result line ({"lab": name, "verified": passed} and the lab's own
// `facts`) and the verification line, both from one `passed`, so the two cannot disagree.
// Returns the exit code.
inline int finish(const World& w, const std::string& name, bool passed, Json facts, const std::string& if_passed,
                  const std::string& if_failed) {
  facts["lab"] = name;
  facts["verified"] = passed;
  emit(w, facts);
  return report_verification(w, passed, if_passed, if_failed);
}

}  // namespace lab

// A lab's main: NS::Options and NS::run (main_of above), MPI initialised at `level`.
#define PXQ_LAB_MAIN(NS, level) \
  int main(int argc, char** argv) { return lab::main_of<NS::Options>(argc, argv, level, NS::run); }
