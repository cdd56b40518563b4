// The machine tile profile: where it lives, whether it was made on this machine, and its
// best tile for a kernel.
#include "pxq/common/tile_profile.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace pxq::common {
namespace {

[[noreturn]] void invalid(const std::string& path, const std::string& what) {
  throw std::invalid_argument("tile profile '" + path + "' is not valid (" + what +
                              "): run `pxq tune --replace-profile` to rewrite it, or delete it");
}

std::string describe(const std::string& host, const std::string& cpu) { return host + ", " + cpu; }

}  // namespace

std::string host_name() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return host;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

MachineIdentity this_machine(const tiling::CacheInfo& caches) {
  return {host_name(), cpu_model(), caches.l1d.bytes, caches.l2.bytes, caches.l3.bytes};
}

std::string tile_profile_path() {
  if (const char* p = std::getenv("PXQ_TILE_PROFILE"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/pxq/tiles.json";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.config/pxq/tiles.json";
  return "";
}

ProfileChoice profile_tile(const std::string& path, const std::string& kernel, int threads, const MachineIdentity& me) {
  ProfileChoice choice;
  if (path.empty()) return choice;
  std::ifstream in(path);
  if (!in) return choice;  // no profile: the cache-size rule, silently
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    invalid(path, std::string("not JSON: ") + e.what());
  }
  try {
    const bool current = j.is_object() && j.value("kind", "") == kTileProfileKind && j.contains("schema") &&
                         j["schema"] == kTileProfileSchema;
    const bool legacy = j.is_object() && j.contains("schema") && j["schema"] == kTileProfileLegacy;
    if (!current && !legacy)
      invalid(path, std::string("not a tile profile (no \"kind\": \"") + kTileProfileKind +
                        "\" with \"schema\": " + std::to_string(kTileProfileSchema) + ")");
    const auto& m = j.at("machine");
    const auto& c = m.at("caches");
    const std::string host = m.at("host").get<std::string>(), cpu = m.at("cpu_model").get<std::string>();
    const bool same = host == me.host && cpu == me.cpu_model && c.at("l1d").get<std::size_t>() == me.l1d &&
                      c.at("l2").get<std::size_t>() == me.l2 && c.at("l3").get<std::size_t>() == me.l3;
    const auto& kernels = j.at("kernels");
    if (!kernels.is_object()) invalid(path, "\"kernels\" is not an object");
    for (const auto& [name, per_threads] : kernels.items()) {
      if (!per_threads.is_object() || per_threads.empty())
        invalid(path, "kernel " + name + " has no entries per thread count");
      for (const auto& [t, entry] : per_threads.items())
        if (std::atoi(t.c_str()) < 1 || entry.at("tile").get<std::int64_t>() < 1 ||
            (entry.contains("buffer") && entry.at("buffer").get<std::int64_t>() < 1))
          invalid(path, std::string("kernel ")
                            .append(name)
                            .append(", threads ")
                            .append(t)
                            .append(": a thread count and a tile > 0 are needed (and a buffer > 0, if any)"));
    }
    if (!same) {
      choice.note = "tile profile " + path + " was made on another machine (" + describe(host, cpu) +
                    "), not this one (" + describe(me.host, me.cpu_model) +
                    "): auto uses the cache-size rule; run `pxq tune` here for a profile of this machine";
      return choice;
    }
    if (!kernels.contains(kernel)) {
      choice.note = "tile profile " + path + " has no entry for kernel " + kernel +
                    ": auto uses the cache-size rule; `pxq tune " + kernel + "` adds one";
      return choice;
    }
    int best_distance = -1;
    for (const auto& [t, entry] : kernels.at(kernel).items()) {
      const int distance = std::abs(std::atoi(t.c_str()) - threads);
      if (best_distance < 0 || distance < best_distance) {
        best_distance = distance;
        choice.bytes = static_cast<std::size_t>(entry.at("tile").get<std::int64_t>());
        choice.threads = std::atoi(t.c_str());
        const bool weighed = entry.contains("pays") && entry.contains("buffer");
        const bool lost = weighed && !entry.at("pays").get<bool>();
        choice.untiled_up_to = lost ? static_cast<std::size_t>(entry.at("buffer").get<std::int64_t>()) : 0;
        choice.gbs = entry.value("gbs", 0.0);
        choice.untiled_gbs = entry.value("untiled_gbs", 0.0);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    invalid(path, e.what());
  }
  return choice;
}

}  // namespace pxq::common
