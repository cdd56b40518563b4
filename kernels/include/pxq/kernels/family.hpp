// A kernel family's executors, one per backend that runs the family. Each backend's executor
// file joins the families it covers with one line,
//     PXQ_JOIN(CgFamily, "openmp", make_cg_ops_openmp);
// so a family names no backend and a backend's registry entry names no family: a backend may
// cover a subset, and asking a family for a backend that did not join it is bad input.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "pxq/kernels/backend.hpp"

namespace pxq::kernels {

// Name: the family's name in messages ("CG"), an inline constexpr char array.
// Notes a family the first time a backend joins it (backend.cpp keeps the list).
void note_family(const char* name, std::vector<std::string> (*backends)());

template <const char* Name, class Factory>
class Family {
 public:
  struct Join {
    Join(const char* backend, Factory make) {
      members().emplace_back(backend, make);
      note_family(Name, &Family::backends);
    }
  };

  // The factory `backend` joined with; std::invalid_argument naming the backends that did.
  static Factory of(const std::string& backend) {
    if (!backend_available(backend)) throw std::invalid_argument(backend_missing(backend));
    for (const auto& m : members())
      if (m.first == backend) return m.second;
    std::string covered;
    for (const auto& m : members()) covered += (covered.empty() ? "" : " or ") + m.first;
    throw std::invalid_argument("the " + backend + " backend does not run " + Name + " kernels in this build: use " +
                                (covered.empty() ? std::string("another build") : "--backend " + covered));
  }

  // The backends that joined, in no particular order.
  static std::vector<std::string> backends() {
    std::vector<std::string> out;
    for (const auto& m : members()) out.push_back(m.first);
    return out;
  }

 private:
  static std::vector<std::pair<std::string, Factory>>& members() {
    static std::vector<std::pair<std::string, Factory>> m;
    return m;
  }
};

// The factory of an executor class constructed from (threads, tile): PXQ_JOIN(MgFamily, "openmp",
// (construct<MgOps, OpenMpMgOps>)).
template <class Base, class Ops>
std::unique_ptr<Base> construct(int threads, std::size_t tile) {
  return std::make_unique<Ops>(threads, tile);
}

// A family the registry can list: its name and the backends that joined it.
struct FamilyInfo {
  std::string name;
  std::vector<std::string> backends;
};
// Every kernel family some backend joined (ring, CG, MG, FT, ...), by name.
std::vector<FamilyInfo> families();

}  // namespace pxq::kernels

#define PXQ_JOIN_CAT_(a, b) a##b
#define PXQ_JOIN_CAT(a, b) PXQ_JOIN_CAT_(a, b)
// Joins `make` to `Family` for `backend`, at static initialisation.
#define PXQ_JOIN(Family, backend, make) \
  static const Family::Join PXQ_JOIN_CAT(pxq_join_, __LINE__)(backend, make)  // NOLINT
