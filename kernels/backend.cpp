// The backend registry: the backends that registered themselves (PXQ_BACKEND in each
// backend folder's runtime file), beside CMake's list of every backend folder, built or not
// (pxq_known_backends.hpp, generated), and the kernel families they joined.
#include "pxq/kernels/backend.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "pxq/kernels/family.hpp"
#include "pxq_known_backends.hpp"  // PXQ_KNOWN_BACKENDS: {name, runtime, how to enable} per folder

namespace pxq::kernels {
namespace {

struct Joined {
  BackendInfo info;
  BackendRuntime runtime;
};

std::vector<Joined>& joined() {
  static std::vector<Joined> j;
  return j;
}

std::vector<std::pair<std::string, std::vector<std::string> (*)()>>& noted_families() {
  static std::vector<std::pair<std::string, std::vector<std::string> (*)()>> f;
  return f;
}

struct Known {
  const char* name;
  const char* runtime;
  const char* enable;
};
const std::vector<Known>& known() {
  static const std::vector<Known> k = PXQ_KNOWN_BACKENDS;
  return k;
}

const Joined* find(const Backend& b) {
  for (const auto& j : joined())
    if (j.info.name == b) return &j;
  return nullptr;
}

std::string available_names() {
  std::string out;
  for (const auto& b : available_backends()) out += (out.empty() ? "" : " or ") + b;
  return out;
}

}  // namespace

BackendJoin::BackendJoin(BackendInfo info, BackendRuntime runtime) {
  info.available = true;
  info.enable.clear();
  joined().push_back({std::move(info), runtime});
}

void note_family(const char* name, std::vector<std::string> (*backends)()) {
  for (const auto& f : noted_families())
    if (f.first == name) return;
  noted_families().emplace_back(name, backends);
}

std::vector<FamilyInfo> families() {
  std::vector<FamilyInfo> out;
  for (const auto& f : noted_families()) {
    std::vector<std::string> in_order;  // the backends in the registry's order
    const auto members = f.second();
    for (const auto& b : available_backends())
      if (std::find(members.begin(), members.end(), b) != members.end()) in_order.push_back(b);
    out.push_back({f.first, in_order});
  }
  std::sort(out.begin(), out.end(), [](const FamilyInfo& a, const FamilyInfo& b) { return a.name < b.name; });
  return out;
}

std::vector<BackendInfo> backends() {
  std::vector<BackendInfo> out;
  for (const auto& k : known()) {
    if (const Joined* j = find(k.name))
      out.push_back(j->info);
    else
      out.push_back({k.name, k.runtime, "", false, k.enable});
  }
  for (const auto& j : joined())  // a backend registered without a folder CMake knows
    if (std::none_of(known().begin(), known().end(), [&](const Known& k) { return j.info.name == k.name; }))
      out.push_back(j.info);
  return out;
}

std::vector<Backend> available_backends() {
  std::vector<Backend> out;
  for (const auto& b : backends())
    if (b.available) out.push_back(b.name);
  return out;
}

std::string backend_names(const char* sep) {
  std::string out;
  for (const auto& b : backends()) out += (out.empty() ? "" : sep) + b.name;
  return out;
}

Backend parse_backend(const std::string& name) {
  for (const auto& b : backends())
    if (name == b.name) return b.name;
  throw std::invalid_argument("unknown backend '" + name + "': use " + backend_names(" or "));
}

bool backend_available(const Backend& b) { return find(b) != nullptr; }

std::string backend_missing(const Backend& b) {
  for (const auto& k : backends())
    if (k.name == b && !k.available)
      return "this pxq build has no " + b + " backend: use --backend " + available_names() + ", or rebuild with it (" +
             k.enable + ")";
  return "unknown backend '" + b + "': use " + backend_names(" or ");
}

ScopedRuntime::ScopedRuntime(const Backend& b, int threads) {
  const Joined* j = find(b);
  if (!j) throw std::invalid_argument(backend_missing(b));
  const BackendRuntime& rt = j->runtime;
  if (!rt.start || (rt.running && rt.running())) return;
  rt.start(threads);
  stop_ = rt.stop;
}

ScopedRuntime::~ScopedRuntime() {
  if (stop_) stop_();
}

}  // namespace pxq::kernels
