// Classifies a layout conversion as a register permutation, warp shuffles or
// a trip through shared memory from from⁻¹ ∘ to, for any pair of layouts,
// and plans the first two: which register (and lane) each thread reads.
#include "kiln/lowering/layout_conversion.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gf2_basis.hpp"

namespace kiln::lowering {

namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

const std::vector<std::string> kHardwareDims = {"register", "lane", "warp"};

std::int32_t coordinate(const LinearLayout::Coordinates& coordinates, const std::string& name) {
  for (const auto& [dim, value] : coordinates)
    if (dim == name) return value;
  return 0;
}

/// Packs the coordinates of the dimensions in `kept` into one word.
std::uint64_t pack_kept(const LinearLayout::Coordinates& coordinates, const LinearLayout& layout,
                        const std::vector<std::string>& kept) {
  std::uint64_t word = 0;
  int offset = 0;
  for (const std::string& name : kept) {
    word |= static_cast<std::uint64_t>(coordinate(coordinates, name)) << offset;
    offset += layout.in_dim_size_log2(name);
  }
  return word;
}

/// Whether every element `to` wants at x is held by `from` at some location
/// whose coordinates in `kept` equal x's.
bool stays_within(const LinearLayout& from, const LinearLayout& to, const LinearLayout& holder,
                  const std::vector<std::string>& kept) {
  // Moving from one holder to another changes the kept coordinates by a
  // vector of this span; a holder with the right ones exists iff the
  // difference lies in it.
  gf2::Basis replicas;
  for (const auto& k : from.kernel_basis()) replicas.add(pack_kept(k, from, kept));
  for (const auto& in : to.in_dims())
    for (std::size_t bit = 0; bit < in.bases.size(); ++bit) {
      LinearLayout::Coordinates x;
      for (const auto& dim : to.in_dims()) x.emplace_back(dim.name, dim.name == in.name ? 1 << bit : 0);
      const LinearLayout::Coordinates held_at = holder.apply(x);
      if (!replicas.contains(pack_kept(held_at, from, kept) ^ pack_kept(x, from, kept))) return false;
    }
  return true;
}

}  // namespace

std::string_view to_string(ConversionKind kind) {
  switch (kind) {
    case ConversionKind::none: return "none";
    case ConversionKind::register_permute: return "register_permute";
    case ConversionKind::rematerialize: return "rematerialize";
    case ConversionKind::warp_shuffle: return "warp_shuffle";
    case ConversionKind::shared_memory: return "shared_memory";
  }
  return "?";
}

namespace {

/// Holder locations of `from` packed as register bits, then lane bits, then warp bits.
struct PackedHolders {
  int register_bits = 0;
  int lane_bits = 0;
  std::uint64_t register_mask = 0;
  std::uint64_t lane_mask = 0;
  std::uint64_t warp_mask = 0;
  /// Per input of `to` ("register", "lane", "warp"), per bit: the chosen holder.
  std::map<std::string, std::vector<std::uint64_t>> holders;
  /// A basis of the replicas of `from` inside one warp: moving a holder by
  /// one of these reaches another copy of its element in the same warp.
  std::vector<std::uint64_t> in_warp_replicas;

  std::int32_t register_of(std::uint64_t location) const { return static_cast<std::int32_t>(location & register_mask); }
  std::int32_t lane_of(std::uint64_t location) const {
    return static_cast<std::int32_t>((location & lane_mask) >> register_bits);
  }
};

/// For each basis vector e of `to`'s inputs, a holder of the element `to`
/// has at e: from⁻¹ ∘ to, changed by replicas of `from` (its kernel) so that
/// the bits of the holder under a mask of `constrained(in)` equal those of
/// `wanted(in, bit)`; the masks are tried in order, the first that a replica
/// satisfies wins. None when no replica satisfies any. By linearity the
/// holder of any x is the XOR of the chosen holders of x's set bits.
template <typename Constrained, typename Wanted>
std::optional<PackedHolders> choose_holders(const LinearLayout& from, const LinearLayout& to, Constrained constrained,
                                            Wanted wanted) {
  const std::vector<std::string> ins = {"register", "lane", "warp"};
  PackedHolders packed;
  packed.register_bits = from.in_dim_size_log2("register");
  packed.lane_bits = from.in_dim_size_log2("lane");
  packed.register_mask = (std::uint64_t{1} << packed.register_bits) - 1;
  packed.lane_mask = ((std::uint64_t{1} << packed.lane_bits) - 1) << packed.register_bits;
  packed.warp_mask = ~(packed.register_mask | packed.lane_mask);
  auto pack = [&](const LinearLayout::Coordinates& location) { return pack_kept(location, from, ins); };
  std::vector<std::uint64_t> replicas;
  for (const auto& k : from.kernel_basis()) replicas.push_back(pack(k));
  gf2::Basis warp_parts;
  for (std::uint64_t r : replicas) warp_parts.add(r & packed.warp_mask);
  for (std::uint64_t combination : warp_parts.kernel()) {
    std::uint64_t replica = 0;
    for (std::size_t j = 0; j < replicas.size(); ++j)
      if (combination >> j & 1) replica ^= replicas[j];
    packed.in_warp_replicas.push_back(replica);
  }
  const LinearLayout holder = to.invert_and_compose(from);
  for (const std::string& in : ins) {
    std::vector<std::uint64_t>& chosen_bits = packed.holders[in];
    for (int bit = 0; bit < to.in_dim_size_log2(in); ++bit) {
      LinearLayout::Coordinates x;
      for (const std::string& name : ins) x.emplace_back(name, name == in ? 1 << bit : 0);
      const std::uint64_t held = pack(holder.apply(x));
      std::optional<std::uint64_t> chosen;
      for (const std::uint64_t mask : constrained(packed, in)) {
        gf2::Basis span;
        for (std::uint64_t r : replicas) span.add(r & mask);
        const auto [rest, combination] = span.reduce((held ^ wanted(packed, in, bit)) & mask);
        if (rest != 0) continue;
        chosen = held;
        for (std::size_t j = 0; j < replicas.size(); ++j)
          if (combination >> j & 1) *chosen ^= replicas[j];
        break;
      }
      if (!chosen) return std::nullopt;
      chosen_bits.push_back(*chosen);
    }
  }
  return packed;
}

/// The packed location of lane or warp bit `bit` of the reading thread.
std::uint64_t own_thread_bit(const PackedHolders& packed, const std::string& in, int bit) {
  if (in == "lane") return std::uint64_t{1} << (packed.register_bits + bit);
  if (in == "warp") return std::uint64_t{1} << (packed.register_bits + packed.lane_bits + bit);
  return 0;
}

/// The holder of register r: the XOR of the register bits' holders.
std::uint64_t register_holder(const PackedHolders& packed, int r) {
  std::uint64_t location = 0;
  const std::vector<std::uint64_t>& bits = packed.holders.at("register");
  for (std::size_t bit = 0; bit < bits.size(); ++bit)
    if (r >> bit & 1) location ^= bits[bit];
  return location;
}

}  // namespace

std::optional<RegisterPlan> plan_register_permute(const LinearLayout& from, const LinearLayout& to) {
  const ConversionKind kind = classify_conversion(from, to);
  if (kind != ConversionKind::none && kind != ConversionKind::register_permute) return std::nullopt;
  // The holder must be the reading thread itself: its lane and warp bits are the reader's.
  const auto packed = choose_holders(
      from, to,
      [](const PackedHolders& p, const std::string&) { return std::vector<std::uint64_t>{p.lane_mask | p.warp_mask}; },
      [](const PackedHolders& p, const std::string& in, int bit) { return own_thread_bit(p, in, bit); });
  if (!packed) return std::nullopt;
  RegisterPlan plan;
  for (int r = 0; r < to.in_dim_size("register"); ++r)
    plan.source_register.push_back(packed->register_of(register_holder(*packed, r)));
  for (std::uint64_t location : packed->holders.at("lane")) plan.lane_bases.push_back(packed->register_of(location));
  for (std::uint64_t location : packed->holders.at("warp")) plan.warp_bases.push_back(packed->register_of(location));
  return plan;
}

bool ShufflePlan::reads_own_lane(int round) const {
  if (read_lane[static_cast<std::size_t>(round)] != 0) return false;
  for (std::size_t bit = 0; bit < lane_bases.size(); ++bit)
    if (lane_bases[bit] != std::int32_t{1} << bit) return false;
  return std::all_of(warp_bases.begin(), warp_bases.end(), [](std::int32_t basis) { return basis == 0; });
}

int ShufflePlan::shuffles() const {
  int count = 0;
  for (std::size_t t = 0; t < read_lane.size(); ++t) count += reads_own_lane(static_cast<int>(t)) ? 0 : 1;
  return count;
}

bool ShufflePlan::picks_registers() const {
  auto any = [](const std::vector<std::int32_t>& bases) {
    return std::any_of(bases.begin(), bases.end(), [](std::int32_t basis) { return basis != 0; });
  };
  return any(send_lane_bases) || any(send_warp_bases) || any(receive_lane_bases);
}

namespace {

/// The lanes threads read in one round, as a span of lane bases, with the
/// register of `from` each basis asks its sender for. A sender tells from its
/// own lane which register its readers want (offered_for) as long as two
/// readers of one lane never want different registers of it.
class ReadLanes {
 public:
  bool contains(std::int32_t lane) const { return lanes_.contains(static_cast<std::uint64_t>(lane)); }
  /// Whether reading `lane` for `wanted` agrees with the bases so far.
  bool agrees(std::int32_t lane, std::int32_t wanted) const {
    const auto [rest, combination] = lanes_.reduce(static_cast<std::uint64_t>(lane));
    return rest != 0 || offered(combination) == wanted;
  }
  void add(std::int32_t lane, std::int32_t wanted) {
    lanes_.add(static_cast<std::uint64_t>(lane));
    wanted_.push_back(wanted);
  }
  /// The register (XOR of bases) a sender at `lane` offers: linear in the
  /// lane, right for every lane some reader reads, 0 off the span.
  std::int32_t offered_for(std::int32_t lane) const {
    return offered(lanes_.reduce(static_cast<std::uint64_t>(lane)).second);
  }

 private:
  std::int32_t offered(std::uint64_t combination) const {
    std::int32_t reg = 0;
    for (std::size_t k = 0; k < wanted_.size(); ++k)
      if (combination >> k & 1) reg ^= wanted_[k];
    return reg;
  }
  gf2::Basis lanes_;
  std::vector<std::int32_t> wanted_;
};

int select_bits(const std::vector<std::int32_t>& lane_bases, const std::vector<std::int32_t>& warp_bases) {
  std::int32_t selectable = 0;
  for (const std::vector<std::int32_t>* bases : {&lane_bases, &warp_bases})
    for (std::int32_t basis : *bases) selectable |= basis;
  return std::popcount(static_cast<std::uint32_t>(selectable));
}

}  // namespace

std::optional<ShufflePlan> plan_warp_shuffle(const LinearLayout& from, const LinearLayout& to) {
  if (classify_conversion(from, to) == ConversionKind::shared_memory) return std::nullopt;
  // The holder must be in the reader's warp; a lane or warp bit should
  // rather not move the register, so that senders need not pick.
  const auto packed = choose_holders(
      from, to,
      [](const PackedHolders& p, const std::string& in) {
        if (in == "register") return std::vector<std::uint64_t>{p.warp_mask};
        return std::vector<std::uint64_t>{p.warp_mask | p.register_mask, p.warp_mask};
      },
      [](const PackedHolders& p, const std::string& in, int bit) {
        return in == "warp" ? own_thread_bit(p, in, bit) : 0;
      });
  if (!packed) return std::nullopt;
  // Lane bit i of the reader reads lane_bases[i] further and wants register
  // `wanted` further. Where a lane it reads already has a reader in the
  // round that wants another register, it reads another copy of its
  // elements (a replica of `from` in the warp: free) or reads them in
  // another round (register bit j of `to` adds its holder: a pick after the
  // shuffle), either from a lane not read yet.
  struct Move {
    std::int32_t lane;
    std::int32_t reg;
    std::int32_t receive;
  };
  std::vector<Move> moves;
  for (std::uint64_t replica : packed->in_warp_replicas)
    moves.push_back({packed->lane_of(replica), packed->register_of(replica), 0});
  const std::vector<std::uint64_t>& register_holders = packed->holders.at("register");
  for (std::size_t j = 0; j < register_holders.size(); ++j)
    moves.push_back(
        {packed->lane_of(register_holders[j]), packed->register_of(register_holders[j]), std::int32_t{1} << j});
  ShufflePlan plan;
  ReadLanes read;
  for (std::uint64_t location : packed->holders.at("lane")) {
    std::int32_t lane = packed->lane_of(location), wanted = packed->register_of(location), receive = 0;
    if (!read.agrees(lane, wanted)) {
      const auto move = std::find_if(moves.begin(), moves.end(), [&](const Move& m) { return !read.contains(m.lane); });
      if (move == moves.end()) return std::nullopt;
      lane ^= move->lane;
      wanted ^= move->reg;
      receive = move->receive;
    }
    read.add(lane, wanted);
    plan.lane_bases.push_back(lane);
    plan.receive_lane_bases.push_back(receive);
  }
  for (int bit = 0; bit < packed->lane_bits; ++bit) plan.send_lane_bases.push_back(read.offered_for(1 << bit));
  for (std::uint64_t location : packed->holders.at("warp")) {
    plan.warp_bases.push_back(packed->lane_of(location));
    plan.send_warp_bases.push_back(read.offered_for(packed->lane_of(location)) ^ packed->register_of(location));
  }
  for (int t = 0; t < to.in_dim_size("register"); ++t) {
    const std::uint64_t location = register_holder(*packed, t);
    plan.read_lane.push_back(packed->lane_of(location));
    plan.send_register.push_back(packed->register_of(location) ^ read.offered_for(packed->lane_of(location)));
  }
  if (select_bits(plan.send_lane_bases, plan.send_warp_bases) > kMaxShuffleSelectBits ||
      select_bits(plan.receive_lane_bases, {}) > kMaxShuffleSelectBits)
    return std::nullopt;
  return plan;
}

ConversionKind classify_conversion(const LinearLayout& from, const LinearLayout& to) {
  for (const LinearLayout* layout : {&from, &to}) {
    if (layout->in_dims().size() != kHardwareDims.size() ||
        !std::all_of(kHardwareDims.begin(), kHardwareDims.end(),
                     [&](const std::string& name) { return layout->has_in_dim(name); })) {
      std::string names;
      for (const auto& in : layout->in_dims()) names += (names.empty() ? "" : ", ") + in.name;
      fail("classify_conversion: inputs must be register, lane and warp; got [" + names + "]");
    }
  }
  for (const char* name : {"lane", "warp"})
    if (from.in_dim_size(name) != to.in_dim_size(name))
      fail(std::string("classify_conversion: '") + name + "' has size " + std::to_string(from.in_dim_size(name)) +
           " in the source and " + std::to_string(to.in_dim_size(name)) + " in the target");
  std::vector<std::string> outs;
  for (const auto& out : from.out_dims()) outs.push_back(out.name);
  if (to.out_dims().size() != outs.size() ||
      !std::all_of(outs.begin(), outs.end(), [&](const std::string& name) { return to.has_out_dim(name); }))
    fail("classify_conversion: the layouts have different output dimensions");
  for (const auto& name : outs)
    if (from.out_dim_size(name) != to.out_dim_size(name))
      fail("classify_conversion: '" + name + "' has size " + std::to_string(from.out_dim_size(name)) +
           " in the source and " + std::to_string(to.out_dim_size(name)) + " in the target");

  std::vector<std::string> ins;
  for (const auto& in : from.in_dims()) ins.push_back(in.name);
  if (to.transpose_outs(outs).transpose_ins(ins) == from) return ConversionKind::none;

  // holder(x): a location of `from` holding the element `to` holds at x.
  const LinearLayout holder = to.invert_and_compose(from);
  if (stays_within(from, to, holder, {"lane", "warp"})) return ConversionKind::register_permute;
  if (stays_within(from, to, holder, {"warp"})) return ConversionKind::warp_shuffle;
  return ConversionKind::shared_memory;
}

}  // namespace kiln::lowering
