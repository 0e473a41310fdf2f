// Copying a recipe, as a user would: for every step of every family's step list, the files its
// header includes are copied into an empty directory, a program that calls each launcher of that
// header with a negative size is compiled there with nvcc and no include path but the CUDA
// Toolkit's, and run: each call must return cudaErrorInvalidValue, which needs no GPU. The files
// are the copy set: the step, its family's common header, at most one architecture kit
// (<family>_sm<NN>.cuh; a Hopper kit with the project's Hopper core, sm90/sm90.cuh, which it
// includes as "../sm90/sm90.cuh" and which is copied into a folder beside the family's) and at
// most one earlier step, nothing else; its lines are held to the targets (600, or 900 for a Hopper
// step, plus the earlier step's own lines where a step extends one) and printed. With
// SMEM_COPY_SETS=<file>, "copy: table" writes every step's set there as JSON (tools/report.py fills
// the pages' files-to-copy tables from it). And a header built for an architecture that lacks its
// feature (cp.async, thread block clusters) stops with one readable message.
#include <doctest/doctest.h>

#include <attention/attention.cuh>
#include <gemm/gemm.cuh>
#include <histogram/histogram.cuh>
#include <reduction/reduction.cuh>
#include <scan/scan.cuh>
#include <stencil/stencil.cuh>
#include <tc_gemm/tc_gemm.cuh>
#include <transpose/transpose.cuh>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The project's Hopper core, as a family's header includes it: the one file outside the family's
/// folder that a copy set may hold, counted with the kit that includes it (or with the step itself,
/// where the step includes it and takes no Hopper kit).
const std::string kCore = "../sm90/sm90.cuh";

/// A step's copy set: the closure of its header's quoted includes (each path taken from the folder
/// of the file that names it, and kept relative to the family's folder), in the order found (the
/// step first), each file's lines, and what each file is under the copy rule.
struct CopySet {
  std::vector<std::string> files, outside;  // outside: files the rule does not allow
  std::vector<long> lines;
  std::string kit, earlier;
  long own = 0, total = 0, earlier_own = 0, limit = 0;
  bool hopper = false;
};

CopySet copy_set(const std::string& family, const std::string& header) {
  static const std::regex include(R"re(#\s*include\s*"([^"]+)")re"), step(R"(\w+_\d\d_\w+\.cuh)");
  const std::regex kit(family + R"(_sm\d\d\.cuh)");
  const fs::path dir = fs::path(SMEM_RECIPES_DIR) / family;
  CopySet s;
  s.files = {header};
  std::vector<std::string> by = {""};  // by[i]: the file that first included files[i]
  std::string hopper_text;  // the step's own text and the earlier step's: where TMA or wgmma shows
  for (std::size_t i = 0; i < s.files.size(); ++i) {
    const std::string f = s.files[i];
    const std::string text = read_file(dir / f);
    s.lines.push_back(static_cast<long>(std::count(text.begin(), text.end(), '\n')));
    s.total += s.lines.back();
    if (i == 0) {
      s.own = s.lines[0];
      hopper_text += text;
    } else if (f == family + "_common.cuh" || f == kCore) {  // the core: checked below, once the kit is known
    } else if (std::regex_match(f, kit) && s.kit.empty()) {
      s.kit = f;
    } else if (std::regex_match(f, step) && s.earlier.empty()) {
      s.earlier = f;
      s.earlier_own = s.lines.back();
      hopper_text += text;
    } else {
      s.outside.push_back(f);
    }
    for (std::sregex_iterator m(text.begin(), text.end(), include), end; m != end; ++m) {
      const std::string g = (fs::path(f).parent_path() / (*m)[1].str()).lexically_normal().generic_string();
      if (std::find(s.files.begin(), s.files.end(), g) == s.files.end()) s.files.push_back(g), by.push_back(f);
    }
  }
  const auto core = std::find(s.files.begin(), s.files.end(), kCore);
  if (core != s.files.end()) {
    const std::string& includer = by[std::size_t(core - s.files.begin())];
    const bool hopper_kit = s.kit == family + "_sm90.cuh";
    if (includer != s.kit && !(includer == header && !hopper_kit)) s.outside.push_back(kCore);
  }
  s.hopper = s.kit == family + "_sm90.cuh" || core != s.files.end() ||
             std::regex_search(hopper_text, std::regex("wgmma|cp\\.async\\.bulk|CUtensorMap"));
  s.limit = (s.hopper ? 900 : 600) + s.earlier_own;
  return s;
}

/// The steps whose copy set is over its target today, with the lines it may not grow past, why
/// (the pages print the reason under the files-to-copy table; "{shared}" there is the set's lines
/// outside the step and its earlier step, counted), and the files it takes beyond the copy rule.
/// Any other step over its target or outside the rule, or one of these growing, fails.
struct Excess {
  long ceiling;
  const char* why;
  std::vector<std::string> outside = {};
};
const std::map<std::string, Excess>& known_excess() {
  static const char* warp_tile = "the kit (the FlashAttention-2 warp tile with its online softmax, the swizzled "
                                 "tile, the PTX) and the family's contract take {shared} lines that steps 5 to 8 "
                                 "all use";
  static const char* hopper = "the Hopper kit (the TMA stages and their producer, both products, a warpgroup's rows "
                              "with their softmax, the launch), the Hopper core and the family's contract take "
                              "{shared} lines that steps 9 to 12 all use";
  static const char* chain = "steps 13 to 16 are one change each on one cluster kernel: each extends the one before";
  static const std::map<std::string, Excess> m = {
      {"sgemm_12_multistage.cuh", {732, "it carries step 13's split-K tail in its kernel, and the common header "
                                        "the row helpers of steps 9 to 13"}},
      {"sgemm_13_autotuned.cuh", {933, "it dispatches to step 12's kernel, which carries its split-K tail, and "
                                       "takes the kit's cp.async copies (30 lines) with it"}},
      {"sgemm_14_split_tf32.cuh", {819, "its own split, fragment reads, three sums and fp32 path for C's elements "
                                        "that are not finite (391 lines) over the family's contract and the kit's "
                                        "cp.async copies"}},
      {"sgemm_15_split_wgmma.cuh", {1346, "it brings step 14 (the split and the sums) and the Hopper core over the "
                                          "family's contract: {shared} lines besides the two steps"}},
      {"sgemm_16_presplit.cuh", {1518, "it instantiates step 15's kernel, which brings step 14 (the split and the "
                                       "sums) and the Hopper core: {shared} lines besides the two steps",
                                 {"sgemm_14_split_tf32.cuh", "../sm90/sm90.cuh"}}},
      {"sgemm_17_split_tuned.cuh", {1596, "it runs step 16's launcher, which brings step 15's kernel, step 14 and the "
                                          "Hopper core: {shared} lines besides the two steps",
                                    {"sgemm_15_split_wgmma.cuh", "sgemm_14_split_tf32.cuh", "../sm90/sm90.cuh"}}},
      {"attention_04_mma.cuh", {836, "the kit and the family's contract take {shared} lines; of them, the "
                                      "cp.async copies and the pipelined block shape (about 70 lines) serve steps 5 "
                                      "to 8 only, the work order (44) steps 6 and 8 to 12"}},
      {"attention_05_pipelined.cuh", {804, warp_tile}},
      {"attention_06_causal.cuh", {806, warp_tile}},
      {"attention_07_decode.cuh", {952, "two kernels of its own (the chunks and their merge) and the merge of the four "
                                        "warps' partial results inside a block, over the kit's warp tile"}},
      {"attention_08_tuned.cuh", {916, warp_tile}},
      {"attention_09_wgmma.cuh", {1183, hopper}},
      {"attention_10_pingpong.cuh", {1227, hopper}},
      {"attention_11_overlap.cuh", {1266, hopper}},
      {"attention_12_persistent.cuh", {1378, "its schedule and second Q buffer (151 lines) over step 10's turns and "
                                             "the Hopper kit, the Hopper core and the family's contract"}},
      {"attention_13_tma_decode.cuh", {1842, "the bridge between the kits, as tc_gemm's step 8: TMA loads (the Hopper "
                                             "kit) feed step 7's mma.sync warps (the Ampere kit), and step 7's split "
                                             "and merges come with it",
                                       {"attention_sm80.cuh"}}},
      {"attention_14_fp8.cuh", {1560, "its FP8 products, the V transpose and their barriers (333 lines) over step "
                                      "10's turns, the Hopper kit (the maps, a warpgroup's rows and softmax), the "
                                      "Hopper core and the family's contract"}},
      {"attention_15_hopper_tuned.cuh", {1516, "it instantiates step 12's kernel and step 11's, which step 12 reaches: "
                                               "{shared} lines besides the two steps",
                                         {"attention_10_pingpong.cuh"}}},
      {"attention_16_cluster.cuh", {1372, "its cluster ring and kernel (145 lines) over step 10's turns and the "
                                          "Hopper kit and core"}},
      {"tc_gemm_06_multistage.cuh", {730, "uses nearly all of its set: its cp.async copies, the sm80 kit and the "
                                          "common header"}},
      {"tc_gemm_08_tma.cuh", {1098, "the bridge between the kits: TMA loads (sm90) feed the mma.sync warp tile (sm80)",
                              {"tc_gemm_sm80.cuh"}}},
      {"tc_gemm_12_persistent.cuh", {921, "the Hopper core, which holds the cluster PTX of steps 13 to 16 (and of "
                                          "attention's step 16), the kit and the common header take {shared} lines"}},
      {"tc_gemm_13_cluster.cuh", {989, "the cluster PTX, the cluster shape and order and a kernel of its own, over a "
                                       "Hopper kit, the Hopper core and a common header of {shared} lines"}},
      {"tc_gemm_14_overlapped.cuh", {1158, "the Hopper kit, the Hopper core and the common header take {shared} lines, "
                                           "its overlapped epilogue 169"}},
      {"tc_gemm_15_gpc_order.cuh", {1366, chain, {"tc_gemm_13_cluster.cuh"}}},
      {"tc_gemm_16_tuned_hopper.cuh", {1438, chain, {"tc_gemm_14_overlapped.cuh", "tc_gemm_13_cluster.cuh"}}},
  };
  return m;
}

/// A recorded reason with {shared} replaced by the copy set's lines outside the step and its earlier step.
std::string why_of(const Excess& e, const CopySet& s) {
  std::string why = e.why;
  const std::size_t at = why.find("{shared}");
  if (at != std::string::npos) why.replace(at, 8, std::to_string(s.total - s.own - s.earlier_own));
  return why;
}

int run(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

/// A fresh, empty directory under the system's temporary directory.
fs::path fresh_dir(const std::string& name) {
  static std::atomic<int> counter{0};
  const fs::path d = fs::temp_directory_path() /
                     ("smem_copy_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// Copies a step's copy set into root as the family's tree lays it out (root/<family>/..., the core
/// in root/sm90/) and returns root/<family>, where the step is compiled.
fs::path copy_files(const std::string& family, const std::string& header, const fs::path& root) {
  const fs::path src = fs::path(SMEM_RECIPES_DIR) / family, dir = root / family;
  for (const auto& f : copy_set(family, header).files) {
    const fs::path to = (dir / f).lexically_normal();
    fs::create_directories(to.parent_path());
    fs::copy_file(src / f, to);
  }
  return dir;
}

struct Outcome {
  std::string header, what;
  bool ok;
};

/// One header: copy its files, compile a program that calls `calls` (one statement each,
/// `temp_bytes` in scope), run it. `what` says what failed, for the report.
Outcome copy_compile_run(const std::string& family, const std::string& header, const std::vector<std::string>& calls) {
  const fs::path dir = copy_files(family, header, fresh_dir(header));
  std::ofstream main(dir / "main.cu");
  main << "#include \"" << header << "\"\n#include <cstddef>\n#include <cstdio>\nint main() {\n"
       << "  [[maybe_unused]] std::size_t temp_bytes = 0;\n  int bad = 0;\n";
  for (const auto& c : calls)
    main << "  if (" << c << " != cudaErrorInvalidValue) { std::puts(\"" << c.substr(0, 60) << "\"); ++bad; }\n";
  main << "  return bad;\n}\n";
  main.close();
  const std::string d = dir.string();
  if (run("cd '" + d + "' && '" SMEM_NVCC "' -std=c++17 -arch=sm_" SMEM_COPY_ARCH " -o prog main.cu") != 0)
    return {header, "does not compile alone in " + d, false};
  if (run("cd '" + d + "' && ./prog") != 0) return {header, "a launcher did not return cudaErrorInvalidValue in " + d, false};
  fs::remove_all(dir.parent_path());
  return {header, "", true};
}

/// Every header of a family's step list, with the calls of its launchers (`call(name)`): its copy
/// set held to the rule and the targets, and printed; then copied, compiled and run in parallel.
/// `extra`: more calls for some headers (launchers outside the step list).
template <class Step, std::size_t N, class Call>
void check_family(const std::string& family, const Step (&steps)[N], Call call,
                  const std::map<std::string, std::vector<std::string>>& extra = {}) {
  std::map<std::string, std::vector<std::string>> calls = extra;  // header -> launcher calls
  for (const auto& s : steps) calls[s.header].push_back(call(s.name));
  for (const auto& entry : calls) {
    const std::string& header = entry.first;
    const CopySet s = copy_set(family, header);
    MESSAGE(header << ": " << s.own << " lines, copy set " << s.total << " (target " << s.limit << ")"
                   << (s.earlier.empty() ? "" : ", extends " + s.earlier + " (" + std::to_string(s.earlier_own) + ")")
                   << (s.kit.empty() ? "" : ", kit " + s.kit));
    CAPTURE(header);
    const auto known = known_excess().find(header);
    const std::vector<std::string> allowed = known == known_excess().end() ? std::vector<std::string>{}
                                                                           : known->second.outside;
    CHECK(s.outside == allowed);  // outside the rule (common header, one kit, one earlier step): recorded only
    CHECK(std::count(s.files.begin(), s.files.end(), family + "_common.cuh") == 1);
    if (known == known_excess().end()) {
      CHECK(s.total <= s.limit);
    } else {  // over its target for a recorded reason: may not grow, and is dropped once it fits
      CAPTURE(why_of(known->second, s));
      CHECK(s.total > s.limit);
      CHECK(s.total <= known->second.ceiling);
    }
  }
  std::vector<std::future<Outcome>> jobs;
  for (const auto& [header, c] : calls)
    jobs.push_back(std::async(std::launch::async, copy_compile_run, family, header, c));
  for (auto& j : jobs) {
    const Outcome o = j.get();
    CAPTURE(o.header);
    CAPTURE(o.what);
    CHECK(o.ok);
  }
}

/// A step that needs a newer architecture, copied alone and built for sm_<arch>: the build
/// fails with exactly one error, the header's #error line, which says what to pass.
void check_arch_message(const std::string& family, const std::string& header, const std::string& arch,
                        const std::string& message) {
  const fs::path root = fresh_dir("arch"), dir = copy_files(family, header, root);
  std::ofstream(dir / "main.cu") << "#include \"" << header << "\"\nint main() { return 0; }\n";
  const std::string d = dir.string();
  const int rc = std::system(
      ("cd '" + d + "' && '" SMEM_NVCC "' -arch=sm_" + arch + " -o prog main.cu > log.txt 2>&1").c_str());
  CHECK(rc != 0);
  const std::string log = read_file(dir / "log.txt");
  CAPTURE(log);
  int errors = 0;
  for (std::size_t p = log.find("error:"); p != std::string::npos; p = log.find("error:", p + 1)) ++errors;
  CHECK(errors == 1);  // the #error directive, and nothing from ptxas
  CHECK(log.find(message) != std::string::npos);
  fs::remove_all(root);
}

/// A family header with Hopper steps, built for sm_80 from the recipes folder: it compiles, with
/// `steps` entries in its step list (the Hopper steps left out).
void check_without_hopper(const std::string& family, int steps) {
  const fs::path dir = fresh_dir(family + "_sm80");
  std::ofstream(dir / "main.cu") << "#include <" << family << "/" << family << ".cuh>\n"
                                 << "static_assert(sizeof(smem::" << family << "::kSteps) / sizeof(smem::" << family
                                 << "::kSteps[0]) == " << steps << ");\nint main() { return 0; }\n";
  const std::string d = dir.string();
  CHECK(run("cd '" + d + "' && '" SMEM_NVCC "' -std=c++17 -arch=sm_80 -I'" SMEM_RECIPES_DIR "' -c main.cu") == 0);
  fs::remove_all(dir);
}

/// A step outside a family's step list (its own launcher), for the copy-set table.
struct ExtraStep {
  int step;
  const char* name;
  const char* header;
};

/// A family's rows of the copy-set table as JSON: per header of the step list, in order, then of
/// `extra`, its step number, its variants and its copy set.
template <class Step, std::size_t N>
std::string table_rows(const std::string& family, const Step (&list)[N], const std::vector<ExtraStep>& extra = {}) {
  std::vector<ExtraStep> steps;
  for (const auto& s : list) steps.push_back({s.step, s.name, s.header});
  steps.insert(steps.end(), extra.begin(), extra.end());
  std::ostringstream out;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (i > 0 && std::string(steps[i].header) == steps[i - 1].header) continue;
    const CopySet s = copy_set(family, steps[i].header);
    out << (out.tellp() > 0 ? ",\n" : "") << "    {\"step\": " << steps[i].step << ", \"names\": [";
    for (std::size_t j = i; j < steps.size() && std::string(steps[j].header) == steps[i].header; ++j)
      out << (j > i ? ", " : "") << '"' << steps[j].name << '"';
    out << "], \"files\": [";
    for (std::size_t f = 0; f < s.files.size(); ++f)
      out << (f ? ", " : "") << "[\"" << s.files[f] << "\", " << s.lines[f] << "]";
    out << "], \"total\": " << s.total << ", \"limit\": " << s.limit << ", \"earlier_own\": " << s.earlier_own
        << ", \"hopper\": " << (s.hopper ? "true" : "false");
    const auto known = known_excess().find(steps[i].header);
    out << ", \"over_because\": \"" << (known == known_excess().end() ? "" : why_of(known->second, s)) << "\"}";
  }
  return out.str();
}

}  // namespace

TEST_SUITE("host") {
  TEST_CASE("copy: transpose") {
    check_family("transpose", smem::transpose::kSteps, [](std::string n) {
      return "smem::transpose::" + n + "<float>(-1, 4, nullptr, nullptr)";
    });
  }
  TEST_CASE("copy: reduction") {
    check_family("reduction", smem::reduction::kSteps, [](std::string n) {
      return "smem::reduction::" + n +
             "(nullptr, temp_bytes, static_cast<const float*>(nullptr), -1LL, static_cast<float*>(nullptr), "
             "smem::reduction::Sum{}, 0.0f)";
    });
  }
  TEST_CASE("copy: scan") {
    check_family("scan", smem::scan::kSteps, [](std::string n) {
      return "smem::scan::" + n +
             "(nullptr, temp_bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr), -1LL, "
             "cuda::std::plus<float>{}, 0.0f, smem::scan::Kind::inclusive)";
    });
  }
  TEST_CASE("copy: stencil") {
    check_family("stencil", smem::stencil::kConv2dSteps, [](std::string n) {
      return "smem::stencil::" + n + "(nullptr, nullptr, -1, 4, nullptr, 2)";
    });
    check_family("stencil", smem::stencil::kStencil7Steps, [](std::string n) {
      return "smem::stencil::" + n + "(nullptr, nullptr, -1, 4, 4, smem::stencil::Coefficients{})";
    });
  }
  TEST_CASE("copy: gemm") {
    check_family("gemm", smem::gemm::kSteps, [](std::string n) {
      return "smem::gemm::" + n + "(-1, 4, 4, 1.0f, nullptr, 4, nullptr, 4, 0.0f, nullptr, 4)";
    });
  }

  TEST_CASE("copy: attention") {
    check_family(
        "attention", smem::attention::kSteps,
        [](std::string n) {
          return "smem::attention::" + n + "(smem::attention::Problem{-1}, nullptr, nullptr, nullptr, nullptr, "
                 "nullptr, nullptr, 0)";
        },
        {{"attention_14_fp8.cuh",  // FP8: its own launcher, outside the bf16 step list
          {"smem::attention::fp8(smem::attention::Problem{-1}, {}, nullptr, nullptr, nullptr, nullptr, nullptr)"}}});
  }

  TEST_CASE("copy: tc_gemm") {
    check_family("tc_gemm", smem::tc_gemm::kSteps, [](std::string n) {
      return "smem::tc_gemm::" + n + "(-1, 4, 4, 1.0f, nullptr, 4, nullptr, 4, 0.0f, nullptr, 4, nullptr, 4)";
    });
  }

  TEST_CASE("copy: histogram") {
    check_family(
        "histogram", smem::histogram::kSteps,
        [](std::string n) {
          return "smem::histogram::" + n + "(static_cast<const float*>(nullptr), -1LL, nullptr, 4, 0.0f, 1.0f)";
        },
        {{"histogram_02_shared_atomics.cuh",
          {"smem::histogram::shared_atomics_range(static_cast<const float*>(nullptr), -1LL, nullptr, 4, "
           "static_cast<const float*>(nullptr))"}}});
  }

  TEST_CASE("copy: table") {
    const char* path = std::getenv("SMEM_COPY_SETS");
    if (!path) return;
    const std::pair<std::string, std::string> families[] = {
        {"transpose", table_rows("transpose", smem::transpose::kSteps)},
        {"reduction", table_rows("reduction", smem::reduction::kSteps)},
        {"scan", table_rows("scan", smem::scan::kSteps)},
        {"stencil", table_rows("stencil", smem::stencil::kSteps)},
        {"gemm", table_rows("gemm", smem::gemm::kSteps)},
        {"tc_gemm", table_rows("tc_gemm", smem::tc_gemm::kSteps)},
        {"histogram", table_rows("histogram", smem::histogram::kSteps)},
        {"attention", table_rows("attention", smem::attention::kSteps, {{14, "fp8", "attention_14_fp8.cuh"}})}};
    std::ofstream out(path);
    for (std::size_t i = 0; i < std::size(families); ++i)
      out << (i ? ",\n" : "{\n") << "  \"" << families[i].first << "\": [\n" << families[i].second << "\n  ]";
    out << "\n}\n";
    CHECK(out.good());
  }

  TEST_CASE("copy: a step built for an older architecture stops with one readable message") {
    check_arch_message("gemm", "sgemm_12_multistage.cuh", "75", "needs cp.async: compile for sm_80 or newer");
    check_arch_message("gemm", "sgemm_14_split_tf32.cuh", "75",
                       "needs TF32 mma.sync and cp.async: compile for sm_80 or newer");
    check_arch_message("gemm", "sgemm_15_split_wgmma.cuh", "80",
                       "needs TMA, wgmma and setmaxnreg: compile for sm_90a");
    check_arch_message("gemm", "sgemm_16_presplit.cuh", "80", "needs TMA, wgmma and setmaxnreg: compile for sm_90a");
    check_arch_message("gemm", "sgemm_17_split_tuned.cuh", "80", "needs TMA, wgmma and setmaxnreg: compile for sm_90a");
    for (const char* step : {"attention_09_wgmma.cuh", "attention_10_pingpong.cuh", "attention_11_overlap.cuh",
                             "attention_12_persistent.cuh", "attention_14_fp8.cuh", "attention_15_hopper_tuned.cuh",
                             "attention_16_cluster.cuh"})  // 11, 12, 14 to 16: step 10's
      check_arch_message("attention", step, "80", "needs TMA, wgmma and setmaxnreg: compile for sm_90a");
    check_arch_message("attention", "attention_13_tma_decode.cuh", "80",
                       "needs TMA and mbarriers: compile for sm_90a");
    check_arch_message("histogram", "histogram_06_cluster.cuh", "80",
                       "needs thread block clusters: compile for sm_90 or newer");
    check_arch_message("stencil", "st7_05_cluster.cuh", "80", "needs thread block clusters: compile for sm_90 or newer");
    check_arch_message("stencil", "conv2d_06_tma.cuh", "80", "needs TMA: compile for sm_90 or newer");
    check_arch_message("stencil", "st7_06_tma.cuh", "80", "needs TMA: compile for sm_90 or newer");
    check_arch_message("tc_gemm", "tc_gemm_08_tma.cuh", "80", "needs TMA and mbarrier transactions: compile for sm_90");
    check_arch_message("tc_gemm", "tc_gemm_09_wgmma.cuh", "80", "needs wgmma: compile for sm_90a");
    check_arch_message("tc_gemm", "tc_gemm_13_cluster.cuh", "80",
                       "needs wgmma and thread block clusters: compile for sm_90a");
    check_arch_message("tc_gemm", "tc_gemm_16_tuned_hopper.cuh", "80",
                       "needs wgmma and thread block clusters: compile for sm_90a");
  }

  TEST_CASE("copy: a family header with Hopper steps builds for sm_80 without them") {
    check_without_hopper("gemm", 17);
    check_without_hopper("tc_gemm", 8);
    check_without_hopper("attention", 9);
  }
}
