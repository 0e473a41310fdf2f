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
  TEST_CASE("ideal wavefronts") {
    CHECK(smem::bank::ideal_wavefronts(4) == 1);
    CHECK(smem::bank::ideal_wavefronts(8) == 2);
    CHECK(smem::bank::ideal_wavefronts(16) == 4);
  }
  TEST_CASE("bad requests are rejected") {
    CHECK_THROWS(wavefronts_of([](int l) { return 4 * l; }, 12));
    CHECK_THROWS(wavefronts_of([](int l) { return 4 * l + 2; }, 4));
  }
}
