// The floating-point mode of a host thread while it runs emulated code
// (kEmuMxcsr, kEmuX87ControlWord): set on construction, the thread's own mode
// restored on destruction. Fibers created while it is in force start with it
// (Boost.Context saves MXCSR and the x87 control word in each new context).
#pragma once

#include <xmmintrin.h>

#include <cstdint>

#include "kiln/runtime/emu_machine.hpp"

namespace kiln::runtime::emu {

class FloatingPointMode {
 public:
  FloatingPointMode() : saved_mxcsr_(_mm_getcsr()) {
    __asm__ volatile("fnstcw %0" : "=m"(saved_x87_));
    const std::uint16_t x87 = kEmuX87ControlWord;
    __asm__ volatile("fldcw %0" : : "m"(x87));
    _mm_setcsr(kEmuMxcsr);
  }
  ~FloatingPointMode() {
    _mm_setcsr(saved_mxcsr_);
    __asm__ volatile("fldcw %0" : : "m"(saved_x87_));
  }
  FloatingPointMode(const FloatingPointMode&) = delete;
  FloatingPointMode& operator=(const FloatingPointMode&) = delete;

 private:
  unsigned saved_mxcsr_;
  std::uint16_t saved_x87_ = 0;
};

}  // namespace kiln::runtime::emu
