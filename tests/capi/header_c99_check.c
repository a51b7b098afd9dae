/* kiln/kiln.h compiles as C99 (-std=c99 -pedantic): its types, constants and
 * inline argument helpers, used from C. */
#include "kiln/kiln.h"

int kiln_c99_header_check(void);

int kiln_c99_header_check(void) {
  kiln_argument arguments[3];
  arguments[0] = kiln_tensor_argument((DLManagedTensor*)0);
  arguments[1] = kiln_int_argument(7);
  arguments[2] = kiln_float_argument(0.5);
  if (arguments[0].kind != KILN_ARGUMENT_TENSOR || arguments[1].value.int_value != 7) return -1;
  return (int)arguments[2].kind;
}
