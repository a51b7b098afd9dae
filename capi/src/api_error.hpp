// The C API's error handling: ApiError carries a kiln_status and a message,
// and guarded() runs an entry point's body so that no C++ exception crosses
// the C boundary: every exception becomes a status and the thread's last
// error, "<function>: <message>".
#pragma once

#include <stdexcept>
#include <string>

#include "kiln/kiln.h"

namespace kiln::capi {

/// An error the C API reports with `status`; the message names the thing,
/// the place and the values, without the entry point's name.
struct ApiError : std::runtime_error {
  ApiError(kiln_status status_, const std::string& message) : std::runtime_error(message), status(status_) {}
  kiln_status status;
};

[[noreturn]] inline void fail(kiln_status status, const std::string& message) { throw ApiError(status, message); }
inline void require(bool ok, const std::string& message) {
  if (!ok) fail(KILN_ERROR_INVALID_ARGUMENT, message);
}

/// Sets this thread's last error ("" after a success).
void set_last_error(std::string message);
const char* last_error();

/// The status for an exception thrown inside an entry point.
kiln_status status_of_current_exception(std::string& message);

/// Runs `body` for the entry point `function`: KILN_OK and an empty last
/// error when it returns, else the status of what it threw and the message
/// "<function>: <what>".
template <class Body>
kiln_status guarded(const char* function, Body&& body) noexcept {
  try {
    body();
    set_last_error({});
    return KILN_OK;
  } catch (...) {
    std::string message;
    const kiln_status status = status_of_current_exception(message);
    try {
      set_last_error(std::string(function) + ": " + message);
    } catch (...) {
      set_last_error({});
    }
    return status;
  }
}

}  // namespace kiln::capi
