// One slice of the tuner's candidates: those with index % kTuneParts == SMEM_TUNE_PART.
#include <gemm/sgemm_12_multistage.cuh>

#include "gemm_tune_candidates.cuh"

#ifndef SMEM_TUNE_PART
#error "compile with -DSMEM_TUNE_PART=<0..kTuneParts-1>"
#endif

namespace smem::tune {
namespace {

template <bool kOn, class T>
struct AddIf {
  static void run(std::vector<Candidate>&, Candidate) {}
};
template <class T>
struct AddIf<true, T> {
  static void run(std::vector<Candidate>& v, Candidate c) {
    c.launch = &smem::gemm::multistage_with<T>;
    c.plan = [](int n) { return smem::gemm::multistage_plan_with<T>(n, n, nullptr, n).erased(); };
    v.push_back(c);
  }
};

}  // namespace

#define SMEM_CAT2(a, b) a##b
#define SMEM_CAT(a, b) SMEM_CAT2(a, b)
void SMEM_CAT(add_candidates_, SMEM_TUNE_PART)(std::vector<Candidate>& v) {
#define SMEM_ADD(i, BM, BN, BK, WM, WN, TM, TN, S)                                          \
  AddIf<(i) % kTuneParts == SMEM_TUNE_PART,                                                  \
        smem::gemm::MultistageShape<BM, BN, BK, WM, WN, TM, TN, S>>::run(                    \
      v, Candidate{i, BM, BN, BK, WM, WN, TM, TN, S, nullptr, nullptr});
  SMEM_TUNE_CANDIDATES(SMEM_ADD)
#undef SMEM_ADD
}

}  // namespace smem::tune
