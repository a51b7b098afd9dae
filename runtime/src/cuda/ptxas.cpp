// ptxas: where it is and how to run it on a PTX module.
#include "kiln/runtime/cuda/ptxas.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <vector>

extern char** environ;

namespace kiln::cuda {

namespace {

/// A temporary directory removed with everything in it when destroyed.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-ptxas-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("ptxas: cannot create a temporary directory: " + std::string(std::strerror(errno)));
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

/// ptxas's messages as one line: lines joined with "; ", blanks dropped.
std::string one_line(const std::string& text) {
  std::string line, current;
  auto flush = [&] {
    if (current.find_first_not_of(" \t\r") != std::string::npos) line += (line.empty() ? "" : "; ") + current;
    current.clear();
  };
  for (char c : text) {
    if (c == '\n') flush();
    else current += c;
  }
  flush();
  return line;
}

/// Runs `arguments` (the program first) with stdout and stderr into `log`;
/// returns the exit status, or throws when it cannot start.
int run(const std::vector<std::string>& arguments, const std::filesystem::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error("ptxas: cannot run " + arguments[0] + ": " + std::strerror(spawned));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("ptxas: waiting for " + arguments[0] + ": " + std::strerror(errno));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

std::optional<std::filesystem::path> find_ptxas() {
  if (const char* named = std::getenv("KILN_PTXAS"); named && *named) {
    if (std::string_view(named) == "none") return std::nullopt;
    if (!std::filesystem::exists(named))
      throw std::runtime_error(std::string("ptxas: KILN_PTXAS names ") + named + ", which does not exist");
    return std::filesystem::path(named);
  }
  const std::filesystem::path toolkit = "/usr/local/cuda/bin/ptxas";
  if (std::filesystem::exists(toolkit)) return toolkit;
  std::error_code error;
  const std::filesystem::path beside = std::filesystem::read_symlink("/proc/self/exe", error).parent_path() / "ptxas";
  if (!error && std::filesystem::exists(beside)) return beside;
  return std::nullopt;
}

std::string assemble_cubin(const std::filesystem::path& ptxas, const std::string& ptx, const std::string& arch,
                           const std::string& kernel_name) {
  TemporaryDirectory directory;
  const std::filesystem::path input = directory.path() / "kernel.ptx";
  const std::filesystem::path output = directory.path() / "kernel.cubin";
  const std::filesystem::path log = directory.path() / "ptxas.log";
  std::ofstream(input, std::ios::binary) << ptx;
  const int status = run({ptxas.string(), "-arch=" + arch, "-o", output.string(), input.string()}, log);
  if (status != 0)
    throw std::runtime_error("ptxas " + ptxas.string() + " failed on kernel `" + kernel_name + "` for " + arch +
                             " (exit " + std::to_string(status) + "): " + one_line(read_file(log)));
  std::string cubin = read_file(output);
  if (cubin.empty())
    throw std::runtime_error("ptxas " + ptxas.string() + " wrote no cubin for kernel `" + kernel_name + "`");
  return cubin;
}

}  // namespace kiln::cuda
