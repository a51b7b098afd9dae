// Device names and the choice of the default device.
#include "kiln/runtime/device.hpp"

#include <charconv>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

#include "kiln/runtime/cuda/driver.hpp"

namespace kiln {

namespace {

/// N of "<prefix>:N" when N is a positive (or, for GPU ordinals, non-negative) integer.
std::optional<int> suffix_number(std::string_view name, std::string_view prefix, int minimum) {
  if (!name.starts_with(prefix) || name.size() <= prefix.size() + 1 || name[prefix.size()] != ':') return std::nullopt;
  const std::string_view digits = name.substr(prefix.size() + 1);
  int value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || value < minimum) return std::nullopt;
  return value;
}

std::string available_list() {
  std::string known;
  for (const auto& d : Device::available()) known += (known.empty() ? "" : ", ") + d;
  return known;
}

[[noreturn]] void fail_unknown(std::string_view name) {
  throw std::invalid_argument("unknown device '" + std::string(name) + "' (available here: " + available_list() +
                              "; cpu:N and emu:N use N host threads)");
}

[[noreturn]] void fail_unavailable(std::string_view name, const std::string& why) {
  throw std::invalid_argument("device '" + std::string(name) + "' is unavailable: " + why +
                              " (available here: " + available_list() + ")");
}

Device checked_cuda(std::string_view name, int ordinal) {
  const cuda::ProbeResult probe = cuda::probe();
  if (!probe.available) fail_unavailable(name, probe.message);
  const std::size_t count = probe.devices.size();
  if (static_cast<std::size_t>(ordinal) >= count)
    fail_unavailable(name, "cuda has " + std::to_string(count) + (count == 1 ? " GPU" : " GPUs"));
  return Device::cuda(ordinal);
}

}  // namespace

Device Device::cpu(int threads) { return Device(Kind::cpu, threads); }
Device Device::emu(int threads) { return Device(Kind::emu, threads); }
Device Device::emu_sm90a(int threads) { return Device(Kind::emu, threads, true); }
Device Device::cuda(int ordinal) { return Device(Kind::cuda, ordinal); }

Device Device::from_name(std::string_view name) {
  if (name == "cpu") return cpu();
  if (name == "emu") return emu();
  if (name == "emu-sm_90a") return emu_sm90a();
  if (name == "cuda") return checked_cuda(name, 0);
  if (auto threads = suffix_number(name, "cpu", 1)) return cpu(*threads);
  if (auto threads = suffix_number(name, "emu", 1)) return emu(*threads);
  if (auto threads = suffix_number(name, "emu-sm_90a", 1)) return emu_sm90a(*threads);
  if (auto ordinal = suffix_number(name, "cuda", 0)) return checked_cuda(name, *ordinal);
  fail_unknown(name);
}

Device Device::default_device() {
  if (const char* env = std::getenv("KILN_DEVICE"); env && *env) {
    try {
      return from_name(env);
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument("KILN_DEVICE=" + std::string(env) + ": " + error.what());
    }
  }
  static const bool has_gpu = cuda::probe().available;
  return has_gpu ? cuda() : cpu();
}

std::vector<std::string> Device::available() {
  std::vector<std::string> names = {"cpu", "emu"};
  const cuda::ProbeResult probe = cuda::probe();
  for (const cuda::DeviceInfo& gpu : probe.devices)
    names.push_back(gpu.ordinal == 0 ? "cuda" : "cuda:" + std::to_string(gpu.ordinal));
  return names;
}

std::string Device::name() const {
  switch (kind_) {
    case Kind::cpu: return index_ > 0 ? "cpu:" + std::to_string(index_) : "cpu";
    case Kind::emu: {
      const std::string base = sm90a_ ? "emu-sm_90a" : "emu";
      return index_ > 0 ? base + ":" + std::to_string(index_) : base;
    }
    case Kind::cuda: return index_ > 0 ? "cuda:" + std::to_string(index_) : "cuda";
  }
  return "unknown";
}

std::string Device::emulated_arch() const {
  if (kind_ != Kind::emu) return "";
  return sm90a_ ? "sm_90a" : "sm_80";
}

}  // namespace kiln
