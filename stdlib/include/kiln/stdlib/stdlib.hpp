// The standard library: tile-level functions written in the language itself.
#pragma once

#include "kiln/stdlib/activations.hpp"
#include "kiln/stdlib/gather.hpp"
#include "kiln/stdlib/random.hpp"
#include "kiln/stdlib/rearrange.hpp"
#include "kiln/stdlib/sort.hpp"
