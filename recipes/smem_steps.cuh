/// \file smem_steps.cuh
/// \brief What every family header generates from its step list: the Variant enum, the step
/// table and the names. Used by the family headers (`<family>/<family>.cuh`) only; a copied step
/// never needs it.
///
/// A family's step list is an X-macro whose lines are X(step, name, header, summary);
/// `SMEM_STEP_TABLE(SMEM_<FAMILY>_STEPS)` inside the family's namespace then declares
/// `enum class Variant { <name>, ... }`, `kSteps[]` (one Step per line, in order),
/// `kAllVariants[]` and `name(v)`.
#pragma once

namespace smem {

/// One line of a family's step list.
template <class Variant>
struct Step {
  Variant variant;
  int step;             ///< number on the ladder (several variants may share one)
  const char* name;     ///< the variant, the launcher and the benchmark's name
  const char* header;   ///< the step's header, in the family's folder
  const char* summary;  ///< what the step changes, in one line
};

}  // namespace smem

#define SMEM_STEP_ENUMERATOR(step, name, header, summary) name,
#define SMEM_STEP_ROW(step, name, header, summary) {Variant::name, step, #name, header, summary},
#define SMEM_STEP_VARIANT(step, name, header, summary) Variant::name,

#define SMEM_STEP_TABLE(STEPS)                                            \
  enum class Variant { STEPS(SMEM_STEP_ENUMERATOR) };                     \
  using Step = ::smem::Step<Variant>;                                     \
  inline constexpr Step kSteps[] = {STEPS(SMEM_STEP_ROW)};                \
  inline constexpr Variant kAllVariants[] = {STEPS(SMEM_STEP_VARIANT)};   \
  constexpr const char* name(Variant v) { return kSteps[int(v)].name; }
