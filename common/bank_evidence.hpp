// Tests only: recipes never include common/.
//
// Reads the shared-memory measurements that tools/bank_evidence.py wrote with Nsight Compute
// (results/<gpu>/banks.json), so that host tests can hold the bank model's predictions against
// them.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace smem::test {

/// One profiled kernel: which benchmark launched it, and its measured shared-memory wavefronts
/// per load and per store instruction.
struct BankMeasurement {
  std::string gpu_file, benchmark;
  double ld_instructions = 0, st_instructions = 0;
  double ld_wavefronts_per_instruction = 0, st_wavefronts_per_instruction = 0;
};

/// Every kernel of every results/*/banks.json under `results_dir`. The files are written one
/// key per line by tools/bank_evidence.py; this reads exactly that layout.
inline std::vector<BankMeasurement> load_bank_measurements(const std::filesystem::path& results_dir) {
  std::vector<BankMeasurement> all;
  if (!std::filesystem::is_directory(results_dir)) return all;
  auto value = [](const std::string& line) { return line.substr(line.find(':') + 1); };
  auto number = [&](const std::string& line) { return std::stod(value(line)); };
  for (const auto& gpu : std::filesystem::directory_iterator(results_dir)) {
    const auto file = gpu.path() / "banks.json";
    std::ifstream in(file);
    if (!in) continue;
    std::string line;
    BankMeasurement* m = nullptr;
    while (std::getline(in, line)) {
      if (line.find("\"benchmark\":") != std::string::npos) {
        all.push_back({file.string()});
        m = &all.back();
        const auto v = value(line);
        const auto q1 = v.find('"'), q2 = v.find('"', q1 + 1);
        m->benchmark = v.substr(q1 + 1, q2 - q1 - 1);
      } else if (m != nullptr) {
        if (line.find("\"ld_instructions\":") != std::string::npos) m->ld_instructions = number(line);
        if (line.find("\"st_instructions\":") != std::string::npos) m->st_instructions = number(line);
        if (line.find("\"ld_wavefronts_per_instruction\":") != std::string::npos)
          m->ld_wavefronts_per_instruction = number(line);
        if (line.find("\"st_wavefronts_per_instruction\":") != std::string::npos)
          m->st_wavefronts_per_instruction = number(line);
      }
    }
  }
  return all;
}

}  // namespace smem::test
