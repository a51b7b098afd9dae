// Device names and the choice of the default device.
#include "kiln/runtime/device.hpp"

#include <charconv>
#include <cstdlib>
#include <stdexcept>

namespace kiln {

Device Device::cpu(int threads) { return Device(Kind::cpu, threads); }

Device Device::from_name(std::string_view name) {
  if (name == "cpu") return cpu();
  if (name.starts_with("cpu:")) {
    int threads = 0;
    auto digits = name.substr(4);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), threads);
    if (ec == std::errc() && end == digits.data() + digits.size() && threads > 0) return cpu(threads);
  }
  std::string known;
  for (const auto& d : available()) known += (known.empty() ? "" : ", ") + d;
  throw std::invalid_argument("unknown device '" + std::string(name) + "' (available here: " + known + ", or cpu:N for N threads)");
}

Device Device::default_device() {
  if (const char* env = std::getenv("KILN_DEVICE"); env && *env) return from_name(env);
  return cpu();
}

std::vector<std::string> Device::available() { return {"cpu"}; }

std::string Device::name() const {
  return threads_ > 0 ? "cpu:" + std::to_string(threads_) : "cpu";
}

}  // namespace kiln
