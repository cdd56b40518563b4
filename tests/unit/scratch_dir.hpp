// A private scratch folder for one test program: made with mkdtemp under the temp directory
// (TMPDIR), so two runs of the unit tests at once (two builds, two checkouts, ctest's parallel
// processes) never write, read or remove each other's files; removed when the program ends.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace pxq::test {

inline const std::filesystem::path& scratch_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      std::string pattern = (std::filesystem::temp_directory_path() / "pxq-unit-XXXXXX").string();
      if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot make a scratch folder: " + pattern);
      path = pattern;
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

}  // namespace pxq::test
