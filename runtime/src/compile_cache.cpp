// The compile cache: stable hashing, the entry file format, atomic writes and
// the in-memory map that makes concurrent requests for one key compile once.
#include "kiln/runtime/compile_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

namespace kiln::runtime {
namespace {

constexpr std::uint64_t prime1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t prime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr std::uint64_t prime3 = 0x165667B19E3779F9ULL;

std::uint64_t rotate_left(std::uint64_t value, int bits) { return (value << bits) | (value >> (64 - bits)); }

/// Reads up to 8 bytes as a little-endian integer, whatever the host's order.
std::uint64_t read_little_endian(const unsigned char* bytes, std::size_t count) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < count; ++i) value |= std::uint64_t(bytes[i]) << (8 * i);
  return value;
}

/// The splitmix64 finaliser: every input bit affects every output bit.
std::uint64_t avalanche(std::uint64_t value) {
  value ^= value >> 30;
  value *= 0xBF58476D1CE4E5B9ULL;
  value ^= value >> 27;
  value *= 0x94D049BB133111EBULL;
  return value ^ (value >> 31);
}

std::uint64_t scramble(std::uint64_t word) { return rotate_left(word * prime2, 31) * prime1; }

// Entry file layout, all integers little-endian:
//   magic (8) · format version (4) · key size (8) · payload size (8) ·
//   payload checksum (16) · key text · payload
constexpr char entry_magic[8] = {'K', 'I', 'L', 'N', 'C', 'A', 'C', 'H'};
// Version 2: the cuda device's payloads carry the kernel's dynamic shared memory.
constexpr std::uint32_t entry_format_version = 2;
constexpr std::size_t entry_header_size = 8 + 4 + 8 + 8 + 16;

void append_little_endian(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

std::string encode_entry(const std::string& key_text, const std::string& payload) {
  std::string entry(entry_magic, sizeof(entry_magic));
  append_little_endian(entry, entry_format_version, 4);
  append_little_endian(entry, key_text.size(), 8);
  append_little_endian(entry, payload.size(), 8);
  Hash128 checksum = stable_hash128(payload);
  append_little_endian(entry, checksum.high, 8);
  append_little_endian(entry, checksum.low, 8);
  entry.reserve(entry.size() + key_text.size() + payload.size());
  return entry + key_text + payload;
}

enum class EntryState { missing, valid, rejected };

struct ReadEntry {
  EntryState state = EntryState::missing;
  std::string payload;
};

/// Reads the entry at `path`; anything but an intact entry for exactly
/// `key_text` is rejected.
ReadEntry read_entry(const std::filesystem::path& path, const std::string& key_text) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return {};
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ReadEntry rejected{EntryState::rejected, {}};
  if (bytes.size() < entry_header_size || std::memcmp(bytes.data(), entry_magic, sizeof(entry_magic)) != 0)
    return rejected;
  auto field = [&](std::size_t offset, std::size_t size) {
    return read_little_endian(reinterpret_cast<const unsigned char*>(bytes.data()) + offset, size);
  };
  std::uint64_t key_size = field(12, 8);
  std::uint64_t payload_size = field(20, 8);
  Hash128 checksum{field(28, 8), field(36, 8)};
  if (field(8, 4) != entry_format_version || key_size != key_text.size() || payload_size > bytes.size() ||
      bytes.size() != entry_header_size + key_size + payload_size)
    return rejected;
  if (bytes.compare(entry_header_size, key_size, key_text) != 0) return rejected;
  std::string payload = bytes.substr(entry_header_size + key_size);
  if (stable_hash128(payload) != checksum) return rejected;
  return {EntryState::valid, std::move(payload)};
}

/// Writes all of `bytes` to `descriptor`; false with errno set on failure.
bool write_all(int descriptor, const std::string& bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    ssize_t count = ::write(descriptor, bytes.data() + written, bytes.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return false;
    written += static_cast<std::size_t>(count);
  }
  return true;
}

}  // namespace

std::string Hash128::hex() const {
  char text[33];
  std::snprintf(text, sizeof(text), "%016llx%016llx", static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  return text;
}

Hash128 stable_hash128(std::string_view bytes) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t size = bytes.size();
  // Two lanes over 16-byte blocks; the length seeds both, so inputs that
  // differ only by trailing zero bytes (the padding of the last block) differ.
  std::uint64_t lane1 = prime3 ^ (size * prime1);
  std::uint64_t lane2 = prime1 ^ (size * prime2);
  for (std::size_t offset = 0; offset < size; offset += 16) {
    std::size_t remaining = size - offset;
    std::uint64_t word1 = read_little_endian(data + offset, std::min<std::size_t>(remaining, 8));
    std::uint64_t word2 =
        remaining > 8 ? read_little_endian(data + offset + 8, std::min<std::size_t>(remaining - 8, 8)) : 0;
    lane1 = rotate_left(lane1 ^ scramble(word1), 27) * prime1 + lane2;
    lane2 = rotate_left(lane2 ^ scramble(word2), 33) * prime2 + lane1;
  }
  lane1 = avalanche(lane1 + rotate_left(lane2, 17));
  lane2 = avalanche(lane2 ^ lane1);
  return {lane1, lane2};
}

std::string_view kiln_version() { return KILN_VERSION; }

std::string CacheKey::text() const {
  std::string text = "kiln compile cache key\n";
  const std::string compiler(compiler_sources_hash());
  for (auto [name, value] : {std::pair<const char*, const std::string*>{"version", &version},
                             {"compiler", &compiler},
                             {"target", &target},
                             {"options", &options},
                             {"ir", &ir}})
    text += std::string(name) + " " + std::to_string(value->size()) + "\n" + *value + "\n";
  return text;
}

CompileCache::CompileCache(std::filesystem::path directory, std::ostream* warnings)
    : directory_(std::move(directory)),
      warnings_(warnings ? warnings : &std::cerr),
      disk_enabled_(!directory_.empty()) {
  if (directory_.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) disable_disk("cannot create it: " + error.message());
}

std::filesystem::path CompileCache::default_directory() {
  if (const char* directory = std::getenv("KILN_CACHE_DIR"); directory && *directory) return directory;
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "kiln";
  return {};
}

std::filesystem::path CompileCache::entry_path(const CacheKey& key) const {
  std::string hex = key.hash().hex();
  return directory_ / hex.substr(0, 2) / (hex.substr(2) + ".kcache");
}

CacheCounters CompileCache::counters() const {
  return {memory_hits_.load(), disk_hits_.load(), compiles_.load(), corrupt_entries_.load()};
}

std::string CompileCache::get_or_compile(const CacheKey& key, const std::function<std::string()>& compile) {
  std::string key_text = key.text();
  std::promise<std::string> promise;
  std::shared_future<std::string> result;
  bool first = false;
  {
    std::lock_guard lock(memory_mutex_);
    auto [entry, inserted] = memory_.try_emplace(key_text);
    if (inserted) entry->second = promise.get_future().share();
    result = entry->second;
    first = inserted;
  }
  if (!first) {
    ++memory_hits_;
    return result.get();
  }
  try {
    std::string payload = load_or_compile(key_text, disk_enabled_ ? entry_path(key) : std::filesystem::path(), compile);
    promise.set_value(payload);
    return payload;
  } catch (...) {
    {
      std::lock_guard lock(memory_mutex_);
      memory_.erase(key_text);
    }
    promise.set_exception(std::current_exception());
    throw;
  }
}

std::string CompileCache::load_or_compile(const std::string& key_text, const std::filesystem::path& path,
                                          const std::function<std::string()>& compile) {
  if (disk_enabled_) {
    ReadEntry entry = read_entry(path, key_text);
    if (entry.state == EntryState::valid) {
      ++disk_hits_;
      return std::move(entry.payload);
    }
    if (entry.state == EntryState::rejected) ++corrupt_entries_;
  }
  std::string payload = compile();
  ++compiles_;
  if (disk_enabled_) write_entry(path, key_text, payload);
  return payload;
}

void CompileCache::write_entry(const std::filesystem::path& path, const std::string& key_text,
                               const std::string& payload) {
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (error) return disable_disk("cannot create " + path.parent_path().string() + ": " + error.message());
  // A unique temporary file in the entry's own directory: rename() within one
  // file system replaces the entry atomically, so a concurrent reader sees the
  // old entry or the new one, never a partial write.
  std::string temporary = path.string() + ".tmp-XXXXXX";
  int descriptor = ::mkstemp(temporary.data());
  if (descriptor < 0) return disable_disk("cannot create a file in it: " + std::string(std::strerror(errno)));
  bool written = write_all(descriptor, encode_entry(key_text, payload));
  int write_errno = errno;
  bool closed = ::close(descriptor) == 0;
  if (!written || !closed) {
    ::unlink(temporary.c_str());
    return disable_disk("cannot write " + temporary + ": " + std::strerror(written ? errno : write_errno));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    int rename_errno = errno;
    ::unlink(temporary.c_str());
    disable_disk("cannot rename " + temporary + " to " + path.string() + ": " + std::strerror(rename_errno));
  }
}

void CompileCache::disable_disk(const std::string& reason) {
  if (disk_enabled_.exchange(false))
    *warnings_ << "kiln: warning: compile cache directory " << directory_.string() << " is not usable (" << reason
               << "); caching compiled kernels in memory only\n";
}

}  // namespace kiln::runtime
