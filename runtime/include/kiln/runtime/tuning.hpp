// Choosing one of a kernel's configurations for a shape (kl::autotune's
// non-template half): the median GPU time of each usable configuration on
// `cuda`, the first usable one on devices that are not timed, and measured
// choices kept on disk beside the compile cache so a second process does not
// measure again.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kiln/runtime/compile_cache.hpp"
#include "kiln/runtime/device.hpp"

namespace kiln::runtime {

/// How long one launch of a configuration takes. `seconds(prepare, launch)`
/// may call the pair as often as it likes; `prepare` (zeroing the buffers the
/// kernel accumulates into) must run before every `launch` and is never part
/// of the time.
struct Measurement {
  /// Names the measurement in the disk cache's key: a choice measured one way
  /// is never read back for another.
  std::string name;
  std::function<double(const std::function<void()>& prepare, const std::function<void()>& launch)> seconds;
};

/// The median GPU time of one launch on a `cuda` device: one untimed launch
/// first (it compiles and loads the kernel), then at least 5 and at most 50
/// timed ones, until ~0.1 s of host time has passed; before each the caches
/// are flushed (flush_caches) and `prepare` runs, and CUDA events time the
/// launch alone (cuda::LaunchTimer). Throws std::runtime_error when `launch`
/// ran no kernel on a GPU.
double median_gpu_seconds(const Device& device, const std::function<void()>& prepare,
                          const std::function<void()>& launch);

/// The measurement kl::autotune uses on `device`: median_gpu_seconds on
/// `cuda`; none on `cpu` and `emu`, whose times say nothing of a GPU's.
std::optional<Measurement> default_measurement(const Device& device);

/// What a choice measured on `device` holds for: "cpu", "emu", or for `cuda`
/// the GPU's name and PTX target ("cuda NVIDIA H200 sm_90").
std::string device_description(const Device& device);

/// $KILN_CACHE_DIR/autotune (CompileCache::default_directory()), or empty
/// (memory only) when there is no cache directory.
std::filesystem::path tuning_cache_directory();

/// One configuration offered for a shape key.
struct TuningCandidate {
  /// The configuration in words: "matmul<64, 64, 32> num_warps=4 num_stages=3".
  std::string description;
  /// Why it cannot be used for this key (its compile error, or that it was
  /// pruned); empty when it can.
  std::string unusable;
  /// Compiles it for the device without launching it; throws when it cannot
  /// be (how the first usable candidate is found without measuring).
  std::function<void()> compile;
  /// What runs before each timed launch, and the launch (Measurement).
  std::function<void()> prepare;
  std::function<void()> launch;
};

/// The configuration chosen for one shape key, and why.
struct TuningChoice {
  std::size_t index = 0;
  /// Per candidate: its measured seconds; none when it was not measured
  /// (chosen without measuring, pruned, or failed).
  std::vector<std::optional<double>> seconds;
  /// Per candidate: why it was not chosen from (empty when it was measured
  /// or could have been chosen).
  std::vector<std::string> skipped;
};

struct TuningRequest {
  /// The kernel, for messages ("matmul").
  std::string kernel;
  /// The shape key in words, "(512, 512, 64)".
  std::string key;
  std::string device;  // device_description()
  std::vector<TuningCandidate> candidates;
  /// None: the first usable candidate, nothing launched.
  std::optional<Measurement> measurement;
  /// Where measured choices are kept, keyed by kernel, candidates, shape key,
  /// measurement, device and kiln's version; null: not kept.
  CompileCache* cache = nullptr;
};

/// Chooses for `request`: without a measurement the first usable candidate
/// that compiles for the device (those before it that do not are skipped
/// with the compile's message);
/// with one, the candidate whose measured time is least (the first on ties),
/// read from `cache` when it holds the choice, else measured and stored. A
/// candidate whose launch or measurement throws is skipped with the
/// exception's message. When none is left, throws std::runtime_error with one
/// line naming the kernel, the key and each candidate's reason.
TuningChoice choose_configuration(const TuningRequest& request);

}  // namespace kiln::runtime
