// Tests only: recipes never include support/.
//
// The shared-memory bank model. Shared memory has 32 banks, each 4 bytes wide; successive 4-byte
// words go to successive banks. A warp's request is served in "wavefronts": within one wavefront
// each bank delivers one 4-byte word, which any number of lanes may read (a broadcast), and the
// return path hands each lane of the phase its data. A request of W-byte accesses is split into
// phases of 128/W lanes (32 lanes for 1, 2 and 4 bytes, 16 for 8, 8 for 16); each phase needs as
// many wavefronts as the largest number of DISTINCT words that it asks of any one bank.
//
// Paired lanes (measured on the H200 with Nsight Compute's SASS-level counters, 16-byte loads):
// when every lane asks for the same address as lane ^ 1, or every lane as lane ^ 2, a phase of a
// wide request covers twice as many lanes, because two lanes' data share one wavefront. A 16-byte
// load that all 32 lanes (or each half-warp) read at one address is 2 wavefronts, not 4; lanes
// l and l + 16 sharing addresses do not pair, and their phases are not merged.
//
// Asynchronous copies (cp.async, SASS LDGSTS) write shared memory 8 lanes per phase whatever
// their width (measured: a 4-byte copy whose 32 words sit in 32 banks costs 4 wavefronts, as
// many as a 16-byte copy); copy_cost() applies that rule.
//
// 1 wavefront per phase is conflict-free; 32 for a 4-byte request is fully serialized (a 32-way
// conflict).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <stdexcept>

namespace smem::bank {

inline constexpr int kBanks = 32;
inline constexpr int kBankBytes = 4;

/// What one warp-wide request costs: its phases (that have an active lane) and its wavefronts.
/// A request is conflict-free when each phase takes one wavefront.
struct Cost {
  int phases = 0, wavefronts = 0;
  bool conflict_free() const { return wavefronts == phases; }
};

/// True when every active lane whose partner lane ^ `mask` is active asks for the same address.
inline bool lanes_pair(const std::array<std::int64_t, 32>& byte_addr, std::uint32_t active, int mask) {
  for (int lane = 0; lane < 32; ++lane)
    if ((active >> lane & 1u) && (active >> (lane ^ mask) & 1u) && byte_addr[lane] != byte_addr[lane ^ mask])
      return false;
  return true;
}

/// The cost of a request served `lanes_per_phase` lanes at a time.
inline Cost phased_cost(const std::array<std::int64_t, 32>& byte_addr, int width, std::uint32_t active,
                        int lanes_per_phase) {
  if (width != 1 && width != 2 && width != 4 && width != 8 && width != 16)
    throw std::invalid_argument("width: 1, 2, 4, 8 or 16");
  const int bytes = std::max(width, kBankBytes);  // the words an access touches
  Cost c;
  for (int first = 0; first < 32; first += lanes_per_phase) {
    std::array<std::set<std::int64_t>, kBanks> words;  // distinct words asked of each bank
    bool any = false;
    for (int lane = first; lane < first + lanes_per_phase; ++lane) {
      if (!(active >> lane & 1u)) continue;
      if (byte_addr[lane] % width != 0) throw std::invalid_argument("misaligned address");
      any = true;
      for (int w = 0; w < bytes / kBankBytes; ++w) {
        const std::int64_t word = byte_addr[lane] / kBankBytes + w;
        words[word % kBanks].insert(word);
      }
    }
    if (!any) continue;
    std::size_t worst = 0;
    for (const auto& s : words) worst = std::max(worst, s.size());
    ++c.phases;
    c.wavefronts += int(worst);
  }
  return c;
}

/// The cost of one warp-wide shared-memory load or store.
/// byte_addr[lane]: the byte address lane `lane` accesses; width: 1, 2, 4, 8 or 16 bytes per
/// lane; active: bit mask of the lanes that take part. Addresses must be aligned to `width`.
inline Cost cost(const std::array<std::int64_t, 32>& byte_addr, int width, std::uint32_t active = 0xffffffffu) {
  int lanes_per_phase = width <= kBankBytes ? 32 : 128 / width;
  if (width > kBankBytes && (lanes_pair(byte_addr, active, 1) || lanes_pair(byte_addr, active, 2)))
    lanes_per_phase *= 2;
  return phased_cost(byte_addr, width, active, lanes_per_phase);
}

/// The cost of one ldmatrix.x4 (or .x2, .x1 with fewer active lanes): each 8 x 8 matrix is one
/// phase, the eight 16-byte rows its eight lanes name, however the lanes' addresses repeat
/// (measured on the H200 with Nsight Compute's LDSM counters: 4 wavefronts per instruction when
/// every matrix's rows sit in distinct banks, 32 when they all start on one bank).
inline Cost ldmatrix_cost(const std::array<std::int64_t, 32>& byte_addr, std::uint32_t active = 0xffffffffu) {
  return phased_cost(byte_addr, 16, active, 8);
}

/// The cost of one warp-wide cp.async copy into shared memory: 8 lanes per phase.
inline Cost copy_cost(const std::array<std::int64_t, 32>& byte_addr, int width, std::uint32_t active = 0xffffffffu) {
  return phased_cost(byte_addr, width, active, 8);
}

/// cost() and copy_cost() with lane -> byte address given as a function:
/// cost_of([](int lane){...}, 4). wavefronts_of() is 0 when no lane is active.
template <class LaneAddr>
std::array<std::int64_t, 32> lane_addresses(LaneAddr&& lane_addr) {
  std::array<std::int64_t, 32> a{};
  for (int lane = 0; lane < 32; ++lane) a[lane] = std::int64_t(lane_addr(lane));
  return a;
}
template <class LaneAddr>
Cost cost_of(LaneAddr&& lane_addr, int width, std::uint32_t active = 0xffffffffu) {
  return cost(lane_addresses(lane_addr), width, active);
}
template <class LaneAddr>
int wavefronts_of(LaneAddr&& lane_addr, int width, std::uint32_t active = 0xffffffffu) {
  return cost_of(lane_addr, width, active).wavefronts;
}
template <class LaneAddr>
Cost copy_cost_of(LaneAddr&& lane_addr, int width, std::uint32_t active = 0xffffffffu) {
  return copy_cost(lane_addresses(lane_addr), width, active);
}

/// The fewest wavefronts a request of this width takes when its lanes do not pair: 1 for 4 bytes
/// or less, 2 for 8, 4 for 16.
inline constexpr int ideal_wavefronts(int width) { return width <= kBankBytes ? 1 : width / kBankBytes; }

/// Wavefronts and requests summed over a kernel's warp requests, as Nsight Compute's SASS-level
/// counters add them up: a request in which no lane is active is not counted.
struct Tally {
  double requests = 0, wavefronts = 0;
  void add(int w, double times = 1) {
    if (w > 0) requests += times, wavefronts += w * times;
  }
  double per_request() const { return requests > 0 ? wavefronts / requests : 0.0; }
};

}  // namespace smem::bank
