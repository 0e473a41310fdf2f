// Tests and docs only: recipes never include support/.
//
// A kernel's shared-memory traffic written as a list of warp requests: which access of the kernel
// each request is, its kind and width, and the byte address of each lane. Each family's access
// list (gemm_bank_access.hpp, transpose_bank_access.hpp, reduction_bank_access.hpp) walks a
// kernel's requests through the recipe's own constexpr thread-to-shared-memory maps; the
// bank-model tests tally the requests against Nsight Compute's counters and check which accesses
// conflict, and the docs program (docs/bank_tables.cu) prints the worst request of each access.
// A walk is `walk(visit)`: it calls visit(request) for every request, in program order.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "bank_model.hpp"

namespace smem::test {

/// A shared-memory load, store, cp.async copy (written 8 lanes per phase), or atomic (its bank
/// wavefronts as a store's; lanes that name one word are served one after the other, which the
/// model does not count, and the profiler's load and store counters leave atomics out), or a
/// load from another block's shared memory in the cluster (`remote`: its banks are the owner's;
/// the profiler's shared-load counters leave these distributed loads out), or an `ldmatrix` or
/// `stmatrix` (its 32 row addresses served 8 per phase; the profiler counts them as LDSM and STSM,
/// not as loads and stores).
enum class Access { load, store, copy, atomic, remote, ldmatrix, stmatrix };

/// One warp request: which access of the kernel it is, its kind and width in bytes, the byte
/// address of each lane, and the lanes that take part.
struct Request {
  const char* what;
  Access kind;
  int width;
  std::array<std::int64_t, 32> addr;
  std::uint32_t active = 0xffffffffu;

  smem::bank::Cost cost() const {
    if (kind == Access::ldmatrix || kind == Access::stmatrix) return smem::bank::ldmatrix_cost(addr, active);
    return kind == Access::copy ? smem::bank::copy_cost(addr, width, active) : smem::bank::cost(addr, width, active);
  }
};

/// The request whose lane l accesses element `element(l)` (elements of `element_bytes` bytes from
/// the start of the shared array); lanes outside `active` are not evaluated.
template <class Element>
Request request(const char* what, Access kind, int width, int element_bytes, Element&& element,
                std::uint32_t active = 0xffffffffu) {
  Request r{what, kind, width, {}, active};
  for (int l = 0; l < 32; ++l)
    if (active >> l & 1u) r.addr[l] = std::int64_t(element_bytes) * element(l);
  return r;
}

/// The lanes l of warp w (thread 32 w + l) for which take(32 w + l) holds.
template <class Take>
std::uint32_t active_lanes(int w, Take&& take) {
  std::uint32_t active = 0;
  for (int l = 0; l < 32; ++l)
    if (take(32 * w + l)) active |= 1u << l;
  return active;
}

/// The worst request of each access ("what") of a kernel, in the order the accesses first occur.
struct WorstAccess {
  std::string what;
  int width;
  smem::bank::Cost cost;
};
template <class Walk>
std::vector<WorstAccess> worst_by_access(Walk&& walk) {
  std::vector<WorstAccess> out;
  walk([&](const Request& r) {
    const auto c = r.cost();
    auto it = std::find_if(out.begin(), out.end(), [&](const WorstAccess& e) { return e.what == r.what; });
    if (it == out.end()) out.push_back({r.what, r.width, c});
    else if (c.wavefronts > it->cost.wavefronts) it->cost = c;
  });
  return out;
}

/// The worst request of a whole walk (every access together).
template <class Walk>
smem::bank::Cost worst_request(Walk&& walk) {
  smem::bank::Cost worst;
  walk([&](const Request& r) {
    const auto c = r.cost();
    if (c.wavefronts > worst.wavefronts) worst = c;
  });
  return worst;
}

/// True when every request of a walk is conflict-free.
template <class Walk>
bool all_conflict_free(Walk&& walk) {
  bool ok = true;
  walk([&](const Request& r) { ok = ok && r.cost().conflict_free(); });
  return ok;
}

}  // namespace smem::test
