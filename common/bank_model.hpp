// Tests only: recipes never include common/.
//
// The shared-memory bank model. Shared memory has 32 banks, each 4 bytes wide; successive 4-byte
// words go to successive banks. A warp's request is served in "wavefronts": within one wavefront
// each bank delivers one 4-byte word, which any number of lanes may read (a broadcast). A request
// of W-byte accesses is split into phases of 128/W lanes (32 lanes for 4 bytes, 16 for 8, 8 for
// 16); each phase needs as many wavefronts as the largest number of DISTINCT words that it asks
// of any one bank. 1 wavefront per phase is conflict-free; 32 for a 4-byte request is fully
// serialized (a 32-way conflict).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <stdexcept>

namespace smem::bank {

inline constexpr int kBanks = 32;
inline constexpr int kBankBytes = 4;

/// Wavefronts needed for one warp-wide shared-memory request.
/// byte_addr[lane]: the byte address lane `lane` accesses; width: 4, 8 or 16 bytes per lane;
/// active: bit mask of the lanes that take part. Addresses must be aligned to `width`.
inline int wavefronts(const std::array<std::int64_t, 32>& byte_addr, int width,
                      std::uint32_t active = 0xffffffffu) {
  if (width != 4 && width != 8 && width != 16) throw std::invalid_argument("width: 4, 8 or 16");
  const int lanes_per_phase = 128 / width;
  int total = 0;
  for (int first = 0; first < 32; first += lanes_per_phase) {
    std::array<std::set<std::int64_t>, kBanks> words;  // distinct words asked of each bank
    bool any = false;
    for (int lane = first; lane < first + lanes_per_phase; ++lane) {
      if (!(active >> lane & 1u)) continue;
      if (byte_addr[lane] % width != 0) throw std::invalid_argument("misaligned address");
      any = true;
      for (int w = 0; w < width / kBankBytes; ++w) {
        const std::int64_t word = byte_addr[lane] / kBankBytes + w;
        words[word % kBanks].insert(word);
      }
    }
    if (!any) continue;
    std::size_t worst = 0;
    for (const auto& s : words) worst = std::max(worst, s.size());
    total += int(worst);
  }
  return total;
}

/// The same, with lane -> byte address given as a function: wavefronts_of([](int lane){...}, 4).
template <class LaneAddr>
int wavefronts_of(LaneAddr&& lane_addr, int width, std::uint32_t active = 0xffffffffu) {
  std::array<std::int64_t, 32> a{};
  for (int lane = 0; lane < 32; ++lane) a[lane] = std::int64_t(lane_addr(lane));
  return wavefronts(a, width, active);
}

/// The fewest wavefronts a request of this width can take: 1 for 4 bytes, 2 for 8, 4 for 16.
inline constexpr int ideal_wavefronts(int width) { return width / kBankBytes; }

}  // namespace smem::bank
