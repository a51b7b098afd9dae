// How threads access a tile in shared memory, derived from linear layouts:
// the vector width of each thread's accesses, the ldmatrix form that reads
// an mma fragment, the bank conflicts (wavefronts) every access of the warps
// costs, and the swizzle that makes a store and its reads cheapest.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kiln/lowering/linear_layout.hpp"
#include "kiln/lowering/shared_layout.hpp"

namespace kiln::lowering {

/// `registers` (register, lane, warp → dim0, dim1, …) composed with the
/// inverse of `shared` (offset → the same dims): where, in elements, each
/// register of each thread lies in the shared tile. Throws
/// std::invalid_argument when the output dimensions differ.
LinearLayout register_offsets(const LinearLayout& registers, const LinearLayout& shared);

/// The offsets (elements) each bit of register, lane and warp XORs in, read
/// from a register_offsets layout: the offset of register r of lane l in
/// warp w is at(r, l, w).
struct OffsetBases {
  std::vector<std::int32_t> registers, lanes, warps;

  explicit OffsetBases(const LinearLayout& offsets);
  /// The XOR of bases[b] for each set bit b of `index`.
  static std::int32_t apply(const std::vector<std::int32_t>& bases, std::int32_t index);
  std::int32_t at(std::int32_t reg, std::int32_t lane, std::int32_t warp) const {
    return apply(registers, reg) ^ apply(lanes, lane) ^ apply(warps, warp);
  }
  int register_count() const { return 1 << registers.size(); }
  int lane_count() const { return 1 << lanes.size(); }
  int warp_count() const { return 1 << warps.size(); }
};

/// How many elements one thread accesses at once (at most 16 bytes): the
/// run of low register bits that step to offsets 1, 2, 4, … while every
/// other register, lane and warp basis stays a multiple of the run, so each
/// group is one aligned vector.
int shared_vector_elements(const OffsetBases& offsets, int element_bytes);

/// How one warp instruction's shared-memory accesses are served: `wavefronts`
/// passes through the 32 banks, `ideal` the fewest its bytes could take.
struct SharedAccessCost {
  int wavefronts = 0;
  int ideal = 0;
  SharedAccessCost& operator+=(const SharedAccessCost& other) {
    wavefronts += other.wavefronts;
    ideal += other.ideal;
    return *this;
  }
  /// The wavefronts beyond the ideal: 0 for a conflict-free access.
  int conflicts() const { return wavefronts - ideal; }
};

/// The cost of a warp accessing `access_bytes` (1, 2, 4, 8 or 16) at each of
/// `byte_addresses` (one per active lane, in lane order): the warp is served
/// in phases (all lanes for up to 4 bytes, half-warps for 8, quarter-warps
/// for 16); in each phase a bank serves one 4-byte word per wavefront
/// (lanes reading the same word share it), so the phase takes as many
/// wavefronts as its busiest bank has distinct words.
SharedAccessCost warp_access_cost(std::span<const std::uint32_t> byte_addresses, int access_bytes);

/// The cost of every warp of a program storing (or loading) the elements it
/// holds in `registers` into the tile laid out as `shared`, with
/// shared_vector_elements-wide accesses, summed over the warps' instructions.
SharedAccessCost tile_access_cost(const LinearLayout& registers, const LinearLayout& shared, int element_bytes);

/// How a warp reads an mma fragment from shared memory with
/// `ldmatrix.sync.aligned.m8n8.x{matrices}[.trans].b16`: each instruction
/// gives each lane one 32-bit word of each of `matrices` 8 x 8 matrices of
/// 16-bit values, whose 8 rows of 16 bytes lie at addresses that lanes
/// supply: lane L supplies row L % 8 of matrix (L / 8) % matrices. Word j
/// holds fragment registers first + elements_per_register · j onwards (the
/// elements of one 32-bit mma operand register: two 16-bit, four 8-bit or
/// one 32-bit).
struct LdmatrixPlan {
  bool transposed = false;
  int matrices = 4;
  int elements_per_register = 2;
  /// The offset (elements) of the row lane L supplies is the offset of the
  /// group's first register in lane 0 of the lane's warp, XOR
  /// lane_offsets[b] for each set bit b of L (5 entries).
  std::vector<std::int32_t> lane_offsets;
  /// Fragment registers one instruction fills.
  int registers_per_load() const { return elements_per_register * matrices; }
};

/// The ldmatrix plan reading `fragment` (register, lane, warp → dims) from
/// `shared`, or none when ldmatrix cannot: the elements are not 1, 2 or 4
/// bytes, the fragment holds less than one 32-bit word per lane, or the
/// layouts do not place the registers and lanes as ldmatrix (or its .trans
/// form, for 16-bit elements only) delivers them. Without .trans, lane l
/// receives the 32-bit word l % 4 of row l / 4 of each matrix, so the
/// register bits inside a word and lane bits 0-1 must step through the 16
/// bytes of a row in order and every other basis whole rows; with .trans
/// lane l receives element l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1, so
/// lane bits 2-4 step within the row.
std::optional<LdmatrixPlan> plan_ldmatrix(const LinearLayout& fragment, const LinearLayout& shared, int element_bytes);

/// The cost of every warp reading `fragment` from `shared` with `plan`:
/// each matrix's 8 rows are one phase.
SharedAccessCost ldmatrix_cost(const LinearLayout& fragment, const LinearLayout& shared, const LdmatrixPlan& plan);

/// The cost of reading `fragment` from `shared`: with ldmatrix where
/// plan_ldmatrix finds a plan, else as tile_access_cost.
SharedAccessCost fragment_read_cost(const LinearLayout& fragment, const LinearLayout& shared, int element_bytes);

/// Whether every thread stores its elements of `writer` into `shared` with
/// 16-byte vector accesses (shared_vector_elements).
bool stored_in_16_byte_vectors(const LinearLayout& writer, const LinearLayout& shared, int element_bytes);

/// The shared layout for a tile stored from `writer` and read back as
/// `reader` (both over register, lane, warp onto dim0, dim1): row-major
/// along the writer's contiguous dimension (contiguous_dim_of), with the
/// swizzle of the fewest wavefronts for the store plus the read
/// (fragment_read_cost), the one with the fewest swizzle bits among equals.
/// A tile the writer does not store with 16-byte vectors stays unswizzled.
LinearLayout choose_shared_layout(const LinearLayout& writer, const LinearLayout& reader, int element_bytes);

}  // namespace kiln::lowering
