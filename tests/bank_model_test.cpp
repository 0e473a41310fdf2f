// The bank model itself, on textbook access patterns with known answers.
#include <doctest/doctest.h>

#include "bank_model.hpp"

using smem::bank::wavefronts_of;

TEST_SUITE("host") {
  TEST_CASE("4-byte accesses") {
    CHECK(wavefronts_of([](int l) { return 4 * l; }, 4) == 1);              // consecutive words
    CHECK(wavefronts_of([](int) { return 0; }, 4) == 1);                    // broadcast
    CHECK(wavefronts_of([](int l) { return 4 * (l % 4); }, 4) == 1);        // multicast
    CHECK(wavefronts_of([](int l) { return 8 * l; }, 4) == 2);              // stride 2: 2-way
    CHECK(wavefronts_of([](int l) { return 4 * 32 * l; }, 4) == 32);        // column: 32-way
    CHECK(wavefronts_of([](int l) { return 4 * 33 * l; }, 4) == 1);         // padded column
    CHECK(wavefronts_of([](int l) { return 4 * 3 * l; }, 4) == 1);          // odd stride
    CHECK(wavefronts_of([](int l) { return 4 * 32 * (l / 2); }, 4) == 16);  // pairs share a word
    CHECK(wavefronts_of([](int l) { return 4 * 32 * l; }, 4, 0xFu) == 4);   // 4 active lanes
    CHECK(wavefronts_of([](int l) { return 4 * 32 * l; }, 4, 0u) == 0);     // no active lane
  }
  TEST_CASE("8-byte accesses are served 16 lanes at a time") {
    CHECK(wavefronts_of([](int l) { return 8 * l; }, 8) == 2);
    CHECK(wavefronts_of([](int l) { return 8 * 32 * l; }, 8) == 32);  // 16-way in each half
    CHECK(wavefronts_of([](int l) { return 8 * 33 * l; }, 8) == 2);
    CHECK(wavefronts_of([](int l) { return 16 * l; }, 8) == 4);       // stride 2 doubles: 2-way
  }
  TEST_CASE("16-byte accesses are served 8 lanes at a time") {
    CHECK(wavefronts_of([](int l) { return 16 * l; }, 16) == 4);
    CHECK(wavefronts_of([](int l) { return 16 * 8 * l; }, 16) == 32);   // 8-way in each quarter
    CHECK(wavefronts_of([](int l) { return 16 * 9 * l; }, 16) == 4);
    CHECK(wavefronts_of([](int l) { return 16 * (l % 8); }, 16) == 4);  // same 8 chunks: broadcast
  }
  TEST_CASE("lanes that pair halve a wide load (measured on the H200, SASS-level counters)") {
    using smem::bank::cost_of;
    // Every lane one float4: 2 wavefronts (tiled_32's As[ty][k .. k + 3]: 1.2 per load with
    // four 4-byte loads of Bs).
    CHECK(wavefronts_of([](int) { return 48; }, 16) == 2);
    // Lanes 0-15 one float4, lanes 16-31 another (blocktile_2d's A fragment): 2.
    CHECK(wavefronts_of([](int l) { return l / 16 * 256; }, 16) == 2);
    // Quads of lanes share a float4, 8 float4 in 128 bytes (warptiled's A fragment): 2.
    CHECK(wavefronts_of([](int l) { return l / 4 * 16; }, 16) == 2);
    // Pairs l, l ^ 2 share a float4: 2.
    CHECK(wavefronts_of([](int l) { return (l / 4 * 2 + l % 2) * 16; }, 16) == 2);
    // Lanes l and l + 16 share, at a 32-byte stride (blocktile_2d's B fragment): no pairs, and
    // phases 0 and 2 are not merged: 2-way in each of the 4 phases, 8 wavefronts.
    CHECK(wavefronts_of([](int l) { return l % 16 * 32; }, 16) == 8);
    // Lanes l and l + 4 share (warptiled's B fragment): no pairs, 4.
    CHECK(wavefronts_of([](int l) { return l % 4 * 16; }, 16) == 4);
    // Pairing does not hide a conflict inside the merged phase: pairs 256 bytes apart.
    CHECK(wavefronts_of([](int l) { return l / 2 * 256; }, 16) == 2 * 8);
    // A request is conflict-free when each of its phases takes one wavefront.
    CHECK(cost_of([](int) { return 0; }, 16).phases == 2);
    CHECK(cost_of([](int) { return 0; }, 16).conflict_free());
    CHECK(cost_of([](int l) { return l % 4 * 16; }, 16).conflict_free());
    CHECK_FALSE(cost_of([](int l) { return l % 16 * 32; }, 16).conflict_free());
  }
  TEST_CASE("cp.async copies are written 8 lanes per wavefront (measured on the H200)") {
    using smem::bank::copy_cost_of;
    CHECK(copy_cost_of([](int l) { return 4 * l; }, 4).wavefronts == 4);    // 32 banks, 4 phases
    CHECK(copy_cost_of([](int l) { return 4 * l; }, 4).conflict_free());
    CHECK(copy_cost_of([](int l) { return 16 * l; }, 16).wavefronts == 4);
    CHECK(copy_cost_of([](int l) { return 128 * l; }, 4).wavefronts == 32);  // one bank: 8-way per phase
  }
  TEST_CASE("1- and 2-byte accesses are served 32 lanes at a time, by 4-byte words") {
    CHECK(wavefronts_of([](int) { return 3; }, 1) == 1);       // one flag byte, every lane
    CHECK(wavefronts_of([](int l) { return l; }, 1) == 1);     // 32 bytes, 8 words
    CHECK(wavefronts_of([](int l) { return 2 * l; }, 2) == 1);
    CHECK(wavefronts_of([](int l) { return 128 * l; }, 1) == 32);
    CHECK_THROWS(wavefronts_of([](int l) { return 2 * l + 1; }, 2));
  }
  TEST_CASE("tallies count only requests with an active lane") {
    smem::bank::Tally t;
    t.add(wavefronts_of([](int l) { return 4 * l; }, 4), 3);
    t.add(wavefronts_of([](int l) { return 4 * l; }, 4, 0u));  // no active lane: not counted
    t.add(wavefronts_of([](int l) { return 4 * 32 * l; }, 4));
    CHECK(t.requests == 4);
    CHECK(t.wavefronts == 35);
    CHECK(t.per_request() == doctest::Approx(35.0 / 4));
  }
  TEST_CASE("ideal wavefronts") {
    CHECK(smem::bank::ideal_wavefronts(4) == 1);
    CHECK(smem::bank::ideal_wavefronts(8) == 2);
    CHECK(smem::bank::ideal_wavefronts(16) == 4);
  }
  TEST_CASE("bad requests are rejected") {
    CHECK_THROWS(wavefronts_of([](int l) { return 4 * l; }, 12));
    CHECK_THROWS(wavefronts_of([](int l) { return 4 * l; }, 3));
    CHECK_THROWS(wavefronts_of([](int l) { return 4 * l + 2; }, 4));
  }
}
