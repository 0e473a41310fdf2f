// Tests only: recipes never include support/.
//
// Reads the shared-memory measurements that probes/banks.py wrote with Nsight Compute
// (results/<gpu>/banks.json), so that host tests can hold the bank model's predictions against
// them.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bank_access.hpp"
#include "bank_model.hpp"

namespace smem::test {

/// One profiled kernel: which benchmark launched it, the kernel's name as the profiler gives it,
/// and its counters by banks.json key ("sass_ld_instructions", "sass_ld_wavefronts", ...).
struct BankMeasurement {
  std::string gpu_file, gpu_name, benchmark, kernel;
  std::map<std::string, double> counters;
  bool has(const std::string& key) const { return counters.count(key) != 0; }
  double operator[](const std::string& key) const {
    const auto it = counters.find(key);
    return it == counters.end() ? 0.0 : it->second;
  }
};

/// Every kernel of every results/*/banks.json under `results_dir`. The files are written one
/// key per line by probes/banks.py; this reads exactly that layout.
inline std::vector<BankMeasurement> load_bank_measurements(const std::filesystem::path& results_dir) {
  std::vector<BankMeasurement> all;
  if (!std::filesystem::is_directory(results_dir)) return all;
  for (const auto& gpu : std::filesystem::directory_iterator(results_dir)) {
    const auto file = gpu.path() / "banks.json";
    std::ifstream in(file);
    if (!in) continue;
    std::string line, gpu_name;
    BankMeasurement* m = nullptr;
    while (std::getline(in, line)) {
      const auto q1 = line.find('"'), q2 = line.find('"', q1 + 1), colon = line.find(':', q2);
      if (q1 == std::string::npos || q2 == std::string::npos || colon == std::string::npos) continue;
      const std::string key = line.substr(q1 + 1, q2 - q1 - 1), value = line.substr(colon + 1);
      const auto v1 = value.find('"'), v2 = value.find('"', v1 + 1);
      const std::string text = v2 == std::string::npos ? "" : value.substr(v1 + 1, v2 - v1 - 1);
      if (key == "gpu_name") {
        gpu_name = text;
      } else if (key == "benchmark") {
        all.push_back({file.string(), gpu_name, text, "", {}});
        m = &all.back();
      } else if (m != nullptr && key == "kernel") {
        m->kernel = text;
      } else if (m != nullptr && value.find_first_of("0123456789") != std::string::npos &&
                 value.find('"') == std::string::npos) {
        m->counters[key] = std::stod(value);
      }
    }
  }
  return all;
}

/// What the bank model predicts for one kernel launch: its shared loads and stores (requests and
/// wavefronts, in any consistent unit such as one block and one K-tile), and the total wavefronts
/// of its cp.async copies (LDGSTS) over the whole launch.
struct BankPrediction {
  smem::bank::Tally ld, st;
  double ldgsts_wavefronts = 0;

  /// Adds one warp request as the SASS-level counters count it: a load or a store (not counted
  /// when no lane is active; atomics are neither), or a copy's wavefronts, `copy_times` times (the blocks and K-tiles
  /// of a launch when the loads and stores are counted per block).
  void add(const Request& r, double copy_times = 1) {
    const int w = r.cost().wavefronts;
    if (r.kind == Access::load) ld.add(w);
    else if (r.kind == Access::store) st.add(w);
    else if (r.kind == Access::copy) ldgsts_wavefronts += w * copy_times;
  }
};

/// The prediction for a kernel whose requests walk(visit) visits (bank_access.hpp).
template <class Walk>
BankPrediction predict(Walk&& walk) {
  BankPrediction p;
  walk([&](const Request& r) { p.add(r); });
  return p;
}

/// Holds the model's prediction for every measured kernel of `family` ("gemm", ...) against
/// Nsight Compute's SASS-level counters, which count each instruction's wavefronts from its own
/// addresses: wavefronts per load and per store instruction, and the cp.async wavefronts.
/// predict(variant, measurement) returns std::nullopt for a kernel whose shared-memory accesses the
/// project does not write (a library's block primitive); those are returned by name, once each
/// (whatever the number of GPUs measured).
template <class Predict>
std::vector<std::string> check_bank_evidence(const std::string& family, Predict&& predict) {
  std::vector<std::string> not_modelled;
  int compared = 0;
  for (const auto& m : load_bank_measurements(SMEM_RESULTS_DIR)) {
    if (m.benchmark.rfind(family + "/", 0) != 0) continue;
    CAPTURE(m.gpu_file);
    CAPTURE(m.benchmark);
    const auto first = family.size() + 1;
    const std::string variant = m.benchmark.substr(first, m.benchmark.find('/', first) - first);
    const std::optional<BankPrediction> p = predict(variant, m);
    if (!p) {
      if (std::find(not_modelled.begin(), not_modelled.end(), variant) == not_modelled.end())
        not_modelled.push_back(variant);
      continue;
    }
    REQUIRE(m.has("sass_ld_wavefronts"));  // banks.json from probes/banks.py with SASS counters
    CHECK(m["sass_ld_wavefronts_per_instruction"] == doctest::Approx(p->ld.per_request()).epsilon(0.001));
    CHECK(m["sass_st_wavefronts_per_instruction"] == doctest::Approx(p->st.per_request()).epsilon(0.001));
    CHECK(m["sass_ldgsts_wavefronts"] == doctest::Approx(p->ldgsts_wavefronts).epsilon(0.001));
    ++compared;
  }
  MESSAGE("compared " << compared << " " << family << " kernels with their measurements");
  CHECK(compared > 0);
  return not_modelled;
}

}  // namespace smem::test
