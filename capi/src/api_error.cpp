// The thread's last error and the status of each kind of exception kiln throws.
#include "api_error.hpp"

#include <new>
#include <utility>

#include "kiln/dsl/trace.hpp"
#include "kiln/ir/ir.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::capi {

namespace {
std::string& last_error_storage() {
  static thread_local std::string message;
  return message;
}
}  // namespace

void set_last_error(std::string message) { last_error_storage() = std::move(message); }
const char* last_error() { return last_error_storage().c_str(); }

kiln_status status_of_current_exception(std::string& message) {
  try {
    throw;
  } catch (const ApiError& e) {
    message = e.what();
    return e.status;
  } catch (const ir::IRError& e) {
    message = e.what();
    return KILN_ERROR_COMPILE;
  } catch (const TraceError& e) {
    message = e.what();
    return KILN_ERROR_COMPILE;
  } catch (const lowering::LoweringError& e) {
    message = e.what();
    return KILN_ERROR_COMPILE;
  } catch (const runtime::KernelError& e) {
    message = e.what();
    return KILN_ERROR_KERNEL_FAULT;
  } catch (const std::invalid_argument& e) {
    message = e.what();
    return KILN_ERROR_INVALID_ARGUMENT;
  } catch (const std::bad_alloc&) {
    message = "out of memory";
    return KILN_ERROR_RUNTIME;
  } catch (const std::exception& e) {
    message = e.what();
    return KILN_ERROR_RUNTIME;
  } catch (...) {
    message = "an unknown exception (please report)";
    return KILN_ERROR_RUNTIME;
  }
}

}  // namespace kiln::capi
