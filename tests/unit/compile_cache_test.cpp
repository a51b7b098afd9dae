// The compile cache: memory and disk hits, key sensitivity, one compile for
// concurrent threads, racing processes, rejected entries, an unusable
// directory, and where the directory is by default.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kiln/runtime/compile_cache.hpp"
#include "scoped_environment.hpp"

namespace kiln::runtime {
namespace {

namespace fs = std::filesystem;

/// A fresh directory per test, removed afterwards.
class CompileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = std::string("kiln-cache-test-") + std::to_string(::getpid()) + "-" +
                       ::testing::UnitTest::GetInstance()->current_test_info()->name();
    directory = fs::temp_directory_path() / name;
    fs::remove_all(directory);
  }
  void TearDown() override { fs::remove_all(directory); }

  /// A compile function that counts its calls and returns `payload`.
  std::function<std::string()> compiler(std::string payload) {
    return [this, payload] {
      ++compile_calls;
      return payload;
    };
  }

  fs::path directory;
  std::atomic<int> compile_calls = 0;
  std::ostringstream warnings;
};

CacheKey sample_key() {
  CacheKey key;
  key.ir = "kernel @add(%0: ptr<f32>) {\n  return\n}\n";
  key.options = "num_warps=4 num_stages=3";
  key.target = "ptx sm_90a";
  return key;
}

std::string read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << bytes;
}

std::vector<fs::path> files_under(const fs::path& directory) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(directory))
    if (entry.is_regular_file()) files.push_back(entry.path());
  return files;
}

TEST(StableHash, KnownValuesAndSensitivity) {
  // Pinned values: the hash names files shared by processes and kiln builds,
  // so it must never change silently.
  EXPECT_EQ(stable_hash128("kiln").hex(), "45846bc3b18dbec3beec3efcb55a000e");
  EXPECT_EQ(stable_hash128("").hex(), "ba972719cdf6c7a77be47822539303f7");
  EXPECT_NE(stable_hash128("a"), stable_hash128(std::string_view("a\0", 2)));
  EXPECT_NE(stable_hash128(std::string(16, 'x')), stable_hash128(std::string(17, 'x')));
  // Every single-bit flip of a 40-byte input changes both halves.
  std::string text = "the quick brown fox jumps over the lazy d";
  Hash128 base = stable_hash128(text);
  for (std::size_t bit = 0; bit < text.size() * 8; ++bit) {
    std::string flipped = text;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    Hash128 other = stable_hash128(flipped);
    EXPECT_NE(other.high, base.high) << "bit " << bit;
    EXPECT_NE(other.low, base.low) << "bit " << bit;
  }
}

TEST(CacheKeyText, PartsAreUnambiguous) {
  CacheKey a = sample_key(), b = sample_key();
  a.options = "x";
  a.target = "yz";
  b.options = "xy";
  b.target = "z";
  EXPECT_NE(a.text(), b.text());
  EXPECT_NE(a.hash(), b.hash());
  EXPECT_EQ(sample_key().version, std::string(kiln_version()));
  EXPECT_FALSE(kiln_version().empty());
  // The compiler sources' hash is a part of its own, after the version.
  const std::string text = sample_key().text();
  const std::size_t compiler = text.find("\ncompiler 64\n" + std::string(compiler_sources_hash()) + "\n");
  ASSERT_NE(compiler, std::string::npos) << text;
  EXPECT_LT(text.find("\nversion "), compiler) << text;
  EXPECT_LT(compiler, text.find("\ntarget ")) << text;
}

TEST_F(CompileCacheTest, MissThenMemoryHit) {
  CompileCache cache(directory, &warnings);
  EXPECT_EQ(cache.get_or_compile(sample_key(), compiler("ptx one")), "ptx one");
  EXPECT_EQ(cache.get_or_compile(sample_key(), compiler("ptx two")), "ptx one");
  CacheCounters counters = cache.counters();
  EXPECT_EQ(counters.compiles, 1u);
  EXPECT_EQ(counters.memory_hits, 1u);
  EXPECT_EQ(counters.disk_hits, 0u);
  EXPECT_EQ(compile_calls, 1);
  EXPECT_TRUE(fs::is_regular_file(cache.entry_path(sample_key())));
  EXPECT_EQ(warnings.str(), "");
}

TEST_F(CompileCacheTest, EntryPathLayout) {
  CompileCache cache(directory, &warnings);
  std::string hex = sample_key().hash().hex();
  EXPECT_EQ(cache.entry_path(sample_key()), directory / hex.substr(0, 2) / (hex.substr(2) + ".kcache"));
}

TEST_F(CompileCacheTest, HitFromDiskInAFreshCache) {
  std::string payload(100000, '\0');
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7);
  CompileCache(directory, &warnings).get_or_compile(sample_key(), compiler(payload));
  CompileCache fresh(directory, &warnings);
  EXPECT_EQ(fresh.get_or_compile(sample_key(), compiler("other")), payload);
  EXPECT_EQ(fresh.counters().disk_hits, 1u);
  EXPECT_EQ(fresh.counters().compiles, 0u);
  EXPECT_EQ(compile_calls, 1);
}

TEST_F(CompileCacheTest, EveryKeyPartMatters) {
  CompileCache cache(directory, &warnings);
  cache.get_or_compile(sample_key(), compiler("base"));
  std::vector<CacheKey> changed(4, sample_key());
  changed[0].ir += " ";
  changed[1].options = "num_warps=8 num_stages=3";
  changed[2].target = "ptx sm_80";
  changed[3].version = "0.0.0-other";
  for (std::size_t i = 0; i < changed.size(); ++i) {
    std::string expected = "changed " + std::to_string(i);
    EXPECT_EQ(cache.get_or_compile(changed[i], compiler(expected)), expected);
    EXPECT_EQ(CompileCache(directory, &warnings).get_or_compile(changed[i], compiler("again")), expected);
  }
  EXPECT_EQ(cache.counters().compiles, 5u);
  EXPECT_EQ(files_under(directory).size(), 5u);
}

TEST_F(CompileCacheTest, ConcurrentThreadsCompileOnce) {
  CompileCache cache(directory, &warnings);
  std::atomic<bool> go = false;
  std::vector<std::string> results(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      while (!go) std::this_thread::yield();
      results[t] = cache.get_or_compile(sample_key(), [&] {
        ++compile_calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return std::string("compiled once");
      });
    });
  go = true;
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_EQ(result, "compiled once");
  EXPECT_EQ(compile_calls, 1);
  EXPECT_EQ(cache.counters().compiles, 1u);
  EXPECT_EQ(cache.counters().memory_hits, 7u);
}

TEST_F(CompileCacheTest, FailedCompileIsNotCached) {
  CompileCache cache(directory, &warnings);
  EXPECT_THROW(cache.get_or_compile(sample_key(), []() -> std::string { throw std::runtime_error("ptxas failed"); }),
               std::runtime_error);
  EXPECT_EQ(cache.get_or_compile(sample_key(), compiler("second try")), "second try");
  EXPECT_EQ(compile_calls, 1);
}

TEST_F(CompileCacheTest, RacingProcessesBothSucceed) {
  std::string payload(200000, 'p');
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>('a' + i % 26);
  std::vector<pid_t> children;
  for (int child = 0; child < 2; ++child) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      CompileCache cache(directory, &warnings);
      std::string got = cache.get_or_compile(sample_key(), [&] {
        // Both processes are inside compile at once, so both write the entry.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return payload;
      });
      ::_exit(got == payload && cache.counters().compiles == 1 && cache.uses_disk() ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid << " status " << status;
  }
  CompileCache reader(directory, &warnings);
  EXPECT_EQ(reader.get_or_compile(sample_key(), compiler("wrong")), payload);
  EXPECT_EQ(reader.counters().disk_hits, 1u);
  EXPECT_EQ(reader.counters().corrupt_entries, 0u);
  // Only the entry is left: no temporary files.
  EXPECT_EQ(files_under(directory), std::vector<fs::path>{reader.entry_path(sample_key())});
}

/// Damages the entry for sample_key() with `damage`, then checks that a fresh
/// cache rejects it, recompiles, and replaces it with a valid entry.
void expect_rejected_and_replaced(const fs::path& directory, const std::function<void(std::string&)>& damage) {
  std::ostringstream warnings;
  fs::path path = CompileCache(directory, &warnings).entry_path(sample_key());
  CompileCache(directory, &warnings).get_or_compile(sample_key(), [] { return std::string("good payload"); });
  std::string bytes = read_file(path);
  damage(bytes);
  write_file(path, bytes);

  CompileCache cache(directory, &warnings);
  int compiles = 0;
  EXPECT_EQ(cache.get_or_compile(sample_key(), [&] { return ++compiles, std::string("good payload"); }),
            "good payload");
  EXPECT_EQ(compiles, 1);
  EXPECT_EQ(cache.counters().corrupt_entries, 1u);
  EXPECT_EQ(cache.counters().disk_hits, 0u);

  CompileCache after(directory, &warnings);
  EXPECT_EQ(after.get_or_compile(sample_key(), [] { return std::string("should not compile"); }), "good payload");
  EXPECT_EQ(after.counters().disk_hits, 1u);
  EXPECT_EQ(warnings.str(), "");
}

TEST_F(CompileCacheTest, TruncatedEntryIsRecompiled) {
  expect_rejected_and_replaced(directory, [](std::string& bytes) { bytes.resize(bytes.size() - 3); });
  expect_rejected_and_replaced(directory, [](std::string& bytes) { bytes.resize(10); });
  expect_rejected_and_replaced(directory, [](std::string& bytes) { bytes.clear(); });
}

TEST_F(CompileCacheTest, FlippedByteIsRecompiled) {
  // In the payload (checksum), the key text, the sizes, the version and the magic.
  for (std::size_t from_end : {1, 14}) {
    expect_rejected_and_replaced(directory, [&](std::string& bytes) { bytes[bytes.size() - from_end] ^= 0x01; });
  }
  for (std::size_t offset : {0, 8, 12, 20, 30, 50}) {
    expect_rejected_and_replaced(directory, [&](std::string& bytes) { bytes[offset] ^= 0x20; });
  }
}

TEST_F(CompileCacheTest, EntryForAnotherKeyIsNotLoaded) {
  // A file holding another key at this key's path (what a hash collision
  // would produce) must not be served.
  CompileCache writer(directory, &warnings);
  CacheKey other = sample_key();
  other.target = "ptx sm_80a";  // the same length, so only the text differs
  writer.get_or_compile(other, compiler("payload for sm_80a"));
  fs::create_directories(writer.entry_path(sample_key()).parent_path());
  fs::copy_file(writer.entry_path(other), writer.entry_path(sample_key()));

  CompileCache cache(directory, &warnings);
  EXPECT_EQ(cache.get_or_compile(sample_key(), compiler("payload for sm_90a")), "payload for sm_90a");
  EXPECT_EQ(cache.counters().corrupt_entries, 1u);
  EXPECT_EQ(CompileCache(directory, &warnings).get_or_compile(sample_key(), compiler("x")), "payload for sm_90a");
}

TEST_F(CompileCacheTest, UnusableDirectoryFallsBackToMemory) {
  // A directory below a regular file cannot be created, even by root.
  fs::create_directories(directory);
  write_file(directory / "file", "not a directory");
  fs::path unusable = directory / "file" / "cache";
  CompileCache cache(unusable, &warnings);
  EXPECT_FALSE(cache.uses_disk());
  EXPECT_EQ(cache.get_or_compile(sample_key(), compiler("in memory")), "in memory");
  EXPECT_EQ(cache.get_or_compile(sample_key(), compiler("again")), "in memory");
  EXPECT_EQ(compile_calls, 1);
  EXPECT_EQ(cache.counters().memory_hits, 1u);
  std::string text = warnings.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_TRUE(text.starts_with("kiln: warning: compile cache directory " + unusable.string() +
                               " is not usable (cannot create it: "))
      << text;
  EXPECT_NE(text.find("caching compiled kernels in memory only"), std::string::npos) << text;
}

TEST_F(CompileCacheTest, EntryDirectoryBlockedLaterWarnsOnce) {
  CompileCache cache(directory, &warnings);
  ASSERT_TRUE(cache.uses_disk());
  // The two-hex-digit subdirectory exists as a regular file: the write fails.
  write_file(cache.entry_path(sample_key()).parent_path(), "blocker");
  EXPECT_EQ(cache.get_or_compile(sample_key(), compiler("first")), "first");
  CacheKey second = sample_key();
  second.options = "other";
  EXPECT_EQ(cache.get_or_compile(second, compiler("second")), "second");
  EXPECT_FALSE(cache.uses_disk());
  std::string text = warnings.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
}

TEST_F(CompileCacheTest, MemoryOnlyWithoutDirectory) {
  CompileCache cache(fs::path(), &warnings);
  EXPECT_FALSE(cache.uses_disk());
  cache.get_or_compile(sample_key(), compiler("x"));
  EXPECT_EQ(cache.get_or_compile(sample_key(), compiler("y")), "x");
  EXPECT_EQ(warnings.str(), "");
}

using kiln::test::ScopedEnvironment;

TEST_F(CompileCacheTest, DefaultDirectoryFromEnvironment) {
  {
    ScopedEnvironment cache_dir("KILN_CACHE_DIR", directory.c_str());
    ScopedEnvironment home("HOME", "/home/someone");
    EXPECT_EQ(CompileCache::default_directory(), directory);
    CompileCache cache;
    EXPECT_EQ(cache.directory(), directory);
    cache.get_or_compile(sample_key(), compiler("x"));
    EXPECT_TRUE(fs::is_regular_file(directory / cache.entry_path(sample_key()).lexically_relative(directory)));
  }
  {
    ScopedEnvironment cache_dir("KILN_CACHE_DIR", "");
    ScopedEnvironment home("HOME", "/home/someone");
    EXPECT_EQ(CompileCache::default_directory(), fs::path("/home/someone/.cache/kiln"));
  }
  {
    ScopedEnvironment cache_dir("KILN_CACHE_DIR", nullptr);
    ScopedEnvironment home("HOME", nullptr);
    EXPECT_EQ(CompileCache::default_directory(), fs::path());
  }
}

}  // namespace
}  // namespace kiln::runtime
