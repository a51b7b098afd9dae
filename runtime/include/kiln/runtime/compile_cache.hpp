// The compile cache: compiled kernels kept in memory and on disk, keyed by
// everything that determines the result (the IR, the options, the target and
// kiln's version), safe to share between threads and between processes.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <iosfwd>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kiln::runtime {

/// A 128-bit hash, the same on every machine, compiler and process.
struct Hash128 {
  std::uint64_t high = 0;
  std::uint64_t low = 0;

  /// 32 lowercase hex digits, high half first.
  std::string hex() const;
  friend bool operator==(const Hash128&, const Hash128&) = default;
};

/// Hashes `bytes` with kiln's own stable hash (not std::hash, whose values
/// may differ between builds and runs). Not cryptographic: the cache compares
/// full keys, so a collision costs a recompile, never a wrong kernel.
Hash128 stable_hash128(std::string_view bytes);

/// The version of kiln this library was built as, e.g. "0.1.0".
std::string_view kiln_version();

/// The SHA-256, in hex, of the sources of kiln's IR passes, code generators
/// and devices' compile paths and of LLVM's version, made when this library
/// was built (cmake/compiler_sources_hash.cmake): a part of every key, so that
/// no build reuses an entry a build with other code generation wrote.
std::string_view compiler_sources_hash();

/// Everything a compiled kernel depends on.
struct CacheKey {
  /// The kernel's IR text, or a structural hash of it.
  std::string ir;
  /// The compile options that change the output, in a canonical text form.
  std::string options;
  /// The target, e.g. "ptx sm_90a".
  std::string target;
  std::string version = std::string(kiln_version());

  /// The parts, each length-prefixed so that no two keys share a text.
  std::string text() const;
  Hash128 hash() const { return stable_hash128(text()); }
};

/// What the cache has done so far, for tests and `kiln info`.
struct CacheCounters {
  std::uint64_t memory_hits = 0;
  std::uint64_t disk_hits = 0;
  std::uint64_t compiles = 0;
  /// Disk entries rejected (truncated, corrupted, or holding another key) and
  /// replaced.
  std::uint64_t corrupt_entries = 0;
};

/// In-memory map in front of a directory of entries
/// `<directory>/<2 hex digits>/<30 hex digits>.kcache`. Each entry holds a
/// header (magic, format version, sizes, payload checksum), the full key text
/// and the payload; it is written to a temporary file in the same directory
/// and renamed into place, so readers see a whole entry or none.
class CompileCache {
 public:
  /// `directory` empty: memory only. A directory that cannot be created or
  /// written makes the cache memory-only, with one warning line on `warnings`
  /// (std::cerr when null).
  explicit CompileCache(std::filesystem::path directory = default_directory(), std::ostream* warnings = nullptr);

  /// $KILN_CACHE_DIR when set and not empty, else $HOME/.cache/kiln, else
  /// empty (memory only).
  static std::filesystem::path default_directory();

  /// The payload cached for `key`, else `compile()`'s result, cached.
  /// Concurrent calls for one key in this process compile once; the others
  /// wait and share the result (or the exception, which is not cached).
  /// Processes sharing the directory may both compile; the last rename wins,
  /// and both entries are equal.
  std::string get_or_compile(const CacheKey& key, const std::function<std::string()>& compile);

  /// Where `key`'s entry lives (whether or not it exists).
  std::filesystem::path entry_path(const CacheKey& key) const;
  const std::filesystem::path& directory() const { return directory_; }
  /// False once the directory proved unusable (or when there is none).
  bool uses_disk() const { return disk_enabled_.load(); }
  CacheCounters counters() const;

 private:
  std::string load_or_compile(const std::string& key_text, const std::filesystem::path& path,
                              const std::function<std::string()>& compile);
  void write_entry(const std::filesystem::path& path, const std::string& key_text, const std::string& payload);
  void disable_disk(const std::string& reason);

  std::filesystem::path directory_;
  std::ostream* warnings_;
  std::atomic<bool> disk_enabled_;
  std::mutex memory_mutex_;
  std::unordered_map<std::string, std::shared_future<std::string>> memory_;
  std::atomic<std::uint64_t> memory_hits_ = 0;
  std::atomic<std::uint64_t> disk_hits_ = 0;
  std::atomic<std::uint64_t> compiles_ = 0;
  std::atomic<std::uint64_t> corrupt_entries_ = 0;
};

}  // namespace kiln::runtime
