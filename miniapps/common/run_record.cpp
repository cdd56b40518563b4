// Run records: atomic appends of single JSON lines, and the machine context they carry.
#include "pxq/common/run_record.hpp"

#include <fcntl.h>
#include <mpi.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string>

#include "pxq/common/tile_profile.hpp"
#include "pxq/kernels/backend.hpp"

#ifndef PXQ_GIT_COMMIT
#define PXQ_GIT_COMMIT "unknown"
#endif

namespace pxq::common {
namespace {

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// What else moves the numbers, read where the node keeps it; "unavailable" where it does not
// (a VM without cpufreq, a kernel without transparent huge pages).
std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) || line.empty()) return "unavailable";
  return line;
}

// "always [madvise] never" -> "madvise".
std::string first_word_in_brackets(const char* path) {
  std::string line = first_line(path);
  const auto open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return line;
  return line.substr(open + 1, close - open - 1);
}

std::string os_name() {
  std::ifstream in("/etc/os-release");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  return "unavailable";
}

std::string kernel_release() {
  struct utsname u {};
  return uname(&u) == 0 ? std::string(u.sysname) + " " + u.release : "unavailable";
}

// The node's 1-minute load average when the run started (before its own ranks weigh in much).
nlohmann::json load_average() {
  double load[1] = {0.0};
  if (getloadavg(load, 1) != 1) return nullptr;
  return load[0];
}

nlohmann::json cache_json(const tiling::CacheLevel& c) {
  nlohmann::json j = {{"bytes", c.bytes}, {"shared_by", c.shared_by}};
  if (c.line > 0) j["line"] = c.line;
  if (c.ways != 0) j["ways"] = c.ways;
  return j;
}

}  // namespace

void check_record_path(const std::string& path) {
  if (path.empty()) return;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      throw std::runtime_error("results path '" + path + "' is a directory: give a file such as " + path +
                               "/results.jsonl");
    if (access(path.c_str(), W_OK) != 0)
      throw std::runtime_error("results file '" + path + "' is not writable (" + std::strerror(errno) +
                               "): fix its permissions or pick another");
    return;
  }
  const std::string dir = dir_of(path);
  if (access(dir.c_str(), F_OK) != 0)
    throw std::runtime_error("results directory '" + dir + "' does not exist: create it, or " + "pick another path");
  if (access(dir.c_str(), W_OK) != 0)
    throw std::runtime_error("results directory '" + dir + "' is not writable: pick another path");
}

void append_record(const std::string& path, const nlohmann::json& record) {
  // One line in one write under an exclusive lock; a failed or short write is truncated
  // away, so the file never holds part of a record.
  std::string line = record.dump() + "\n";
  const int fd = open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open results file '" + path + "': " + std::strerror(errno));
  if (flock(fd, LOCK_EX) != 0) {
    close(fd);
    throw std::runtime_error("cannot lock results file '" + path + "'");
  }
  struct stat st {};
  fstat(fd, &st);
  const off_t size = st.st_size;
  char last = '\n';
  if (size > 0 && pread(fd, &last, 1, size - 1) == 1 && last != '\n') line.insert(0, "\n");
  const ssize_t n = write(fd, line.data(), line.size());
  int err = n < 0 ? errno : ENOSPC;
  bool ok = n == static_cast<ssize_t>(line.size());
  if (ok && fsync(fd) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok && ftruncate(fd, size) != 0) err = errno;
  close(fd);  // releases the lock
  if (!ok)
    throw std::runtime_error("cannot write to results file '" + path + "': " + std::strerror(err) +
                             " (the record was not written; the file is as it was)");
}

nlohmann::json machine_context(const tiling::CacheInfo& caches) {
  const std::string host = host_name();
  char mpi_lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  MPI_Get_library_version(mpi_lib, &len);
  std::string mpi_text(mpi_lib, static_cast<std::size_t>(len));
  if (auto nl = mpi_text.find_first_of(",\n"); nl != std::string::npos) mpi_text.resize(nl);
  int mpi_major = 0, mpi_minor = 0;
  MPI_Get_version(&mpi_major, &mpi_minor);

  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const char* commit = std::getenv("PXQ_GIT_COMMIT");

  std::string compiler;
#if defined(__clang__)
  compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  compiler = std::string("gcc ") + __VERSION__;
#else
  compiler = "unknown";
#endif
  nlohmann::json backends = nlohmann::json::object();  // every backend this build carries, from the registry
  for (const auto& b : kernels::backends())
    if (b.available) backends[b.name] = {{"runtime", b.runtime}, {"version", b.version}};
  return {{"host", host},
          {"cpu_model", cpu_model()},
          {"logical_cpus", sysconf(_SC_NPROCESSORS_ONLN)},
          {"caches",
           {{"l1d", cache_json(caches.l1d)},
            {"l2", cache_json(caches.l2)},
            {"l3", cache_json(caches.l3)},
            {"source", caches.source}}},
          {"compiler", compiler},
          {"mpi_library", mpi_text},
          {"mpi_standard", std::to_string(mpi_major) + "." + std::to_string(mpi_minor)},
          {"backends", backends},
          {"pxq_version", PXQ_VERSION},
          {"compile_flags", PXQ_COMPILE_FLAGS},
          {"os", os_name()},
          {"kernel", kernel_release()},
          {"thp", first_word_in_brackets("/sys/kernel/mm/transparent_hugepage/enabled")},
          {"cpu_governor", first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")},
          {"load_at_start", load_average()},
          {"git_commit", commit && *commit ? commit : PXQ_GIT_COMMIT},
          {"date", date}};
}

}  // namespace pxq::common
