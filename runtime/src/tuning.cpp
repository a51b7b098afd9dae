// Choosing a configuration per shape key: timing on a GPU, the first usable
// one elsewhere, measured choices kept in the compile cache's directory
// (tuning.hpp).
#include "kiln/runtime/tuning.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <stdexcept>

#include "kiln/runtime/bench.hpp"
#include "kiln/runtime/cache_flush.hpp"
#include "kiln/runtime/cuda/driver.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::runtime {

namespace {

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

std::string all_failed(const TuningRequest& request, const std::vector<std::string>& reasons) {
  std::string message = "autotune " + request.kernel + ": no configuration can run for key " + request.key + " on " +
                        request.device + ":";
  for (std::size_t i = 0; i < request.candidates.size(); ++i)
    message += (i ? "; " : " ") + request.candidates[i].description + ": " + one_line(reasons[i]);
  return message;
}

TuningChoice first_usable(const TuningRequest& request) {
  TuningChoice choice;
  choice.seconds.resize(request.candidates.size());
  std::vector<std::string> reasons;
  for (std::size_t i = 0; i < request.candidates.size(); ++i) {
    const TuningCandidate& candidate = request.candidates[i];
    if (!candidate.unusable.empty()) {
      reasons.push_back(candidate.unusable);
      continue;
    }
    try {
      candidate.compile();
    } catch (const std::exception& e) {
      reasons.push_back(one_line(e.what()));
      continue;
    }
    choice.index = i;
    choice.skipped = std::move(reasons);
    choice.skipped.resize(request.candidates.size());
    return choice;
  }
  throw std::runtime_error(all_failed(request, reasons));
}

TuningChoice measure_all(const TuningRequest& request) {
  TuningChoice choice;
  choice.seconds.resize(request.candidates.size());
  choice.skipped.resize(request.candidates.size());
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < request.candidates.size(); ++i) {
    const TuningCandidate& candidate = request.candidates[i];
    if (!candidate.unusable.empty()) {
      choice.skipped[i] = candidate.unusable;
      continue;
    }
    try {
      choice.seconds[i] = request.measurement->seconds(candidate.prepare, candidate.launch);
    } catch (const std::exception& e) {
      choice.skipped[i] = one_line(e.what());
      continue;
    }
    if (!best || *choice.seconds[i] < *choice.seconds[*best]) best = i;
  }
  if (!best) throw std::runtime_error(all_failed(request, choice.skipped));
  choice.index = *best;
  return choice;
}

// The cache entry's payload: the chosen index, then a line per candidate with
// its seconds (hexadecimal, exact) or "-", a tab and why it was skipped.
std::string encode(const TuningChoice& choice) {
  std::string text = std::to_string(choice.index) + "\n";
  for (std::size_t i = 0; i < choice.seconds.size(); ++i) {
    char seconds[64] = "-";
    if (choice.seconds[i]) std::snprintf(seconds, sizeof seconds, "%a", *choice.seconds[i]);
    text += std::string(seconds) + "\t" + one_line(choice.skipped[i]) + "\n";
  }
  return text;
}

std::optional<TuningChoice> decode(const std::string& payload, std::size_t candidates) {
  std::istringstream in(payload);
  TuningChoice choice;
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  choice.index = std::strtoull(line.c_str(), nullptr, 10);
  while (std::getline(in, line)) {
    const std::size_t tab = line.find('\t');
    if (tab == std::string::npos) return std::nullopt;
    const std::string seconds = line.substr(0, tab);
    choice.seconds.push_back(seconds == "-" ? std::nullopt : std::optional(std::strtod(seconds.c_str(), nullptr)));
    choice.skipped.push_back(line.substr(tab + 1));
  }
  if (choice.seconds.size() != candidates || choice.index >= candidates || !choice.seconds[choice.index])
    return std::nullopt;
  return choice;
}

CacheKey cache_key(const TuningRequest& request) {
  CacheKey key;
  key.ir = "autotune " + request.kernel + "\n";
  for (const TuningCandidate& candidate : request.candidates) key.ir += candidate.description + "\n";
  key.options = "key " + request.key + " measurement " + request.measurement->name;
  key.target = request.device;
  return key;
}

}  // namespace

double median_gpu_seconds(const Device& device, const std::function<void()>& prepare,
                          const std::function<void()>& launch) {
  using clock = std::chrono::steady_clock;
  const FootprintCounting uncounted(false);
  prepare();
  launch();
  std::vector<double> times;
  const auto start = clock::now();
  while (times.size() < 5 || (times.size() < 50 && std::chrono::duration<double>(clock::now() - start).count() < 0.1)) {
    prepare();
    flush_caches(device);
    const TimedCall timed = timed_call(launch);
    if (!timed.gpu)
      throw std::runtime_error("median_gpu_seconds: the launch ran no kernel on a GPU (device " + device.name() + ")");
    times.push_back(timed.seconds);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

std::optional<Measurement> default_measurement(const Device& device) {
  if (device.kind() != Device::Kind::cuda) return std::nullopt;
  return Measurement{"cuda events, median",
                     [device](const std::function<void()>& prepare, const std::function<void()>& launch) {
                       return median_gpu_seconds(device, prepare, launch);
                     }};
}

std::string device_description(const Device& device) {
  if (device.kind() != Device::Kind::cuda) return device.kind() == Device::Kind::cpu ? "cpu" : "emu";
  const cuda::ProbeResult probe = cuda::probe();
  for (const cuda::DeviceInfo& info : probe.devices)
    if (info.ordinal == device.ordinal()) return "cuda " + info.name + " " + info.arch();
  return device.name();
}

std::filesystem::path tuning_cache_directory() {
  const std::filesystem::path compile_cache = CompileCache::default_directory();
  return compile_cache.empty() ? compile_cache : compile_cache / "autotune";
}

TuningChoice choose_configuration(const TuningRequest& request) {
  if (!request.measurement) return first_usable(request);
  if (!request.cache) return measure_all(request);
  const std::string payload =
      request.cache->get_or_compile(cache_key(request), [&] { return encode(measure_all(request)); });
  if (std::optional<TuningChoice> cached = decode(payload, request.candidates.size());
      cached && request.candidates[cached->index].unusable.empty())
    return *cached;
  return measure_all(request);
}

}  // namespace kiln::runtime
