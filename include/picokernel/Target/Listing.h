//===- Listing.h - the seed-style listing of a pk kernel --------*- C++ -*-===//
//
// A compact, human-oriented view of a traced kernel in the style of the
// original picokernel, in its exact format (NumPy's dtype names, sizes
// separated by commas, a splat constant listed as the scalar it broadcasts,
// `TRUEDIV` for `/`, no newline after the last line):
//
//   kernel fma(a, b, c, o):
//     v0<4:float32> = LOAD [a]()
//     v1<4:float32> = LOAD [b]()
//     v2<4:float32> = MUL(v0, v1)
//     v3<4:float32> = LOAD [c]()
//     v4<4:float32> = ADD(v2, v3)
//     STORE [o](v4)
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_TARGET_LISTING_H
#define PICOKERNEL_TARGET_LISTING_H

#include "picokernel/Support/Module.h"

#include <string>

namespace pk {

/// The listing of every kernel in `module`, a blank line between two; an
/// empty Module lists as an empty string.
std::string listing(const Module &module);

} // namespace pk

#endif // PICOKERNEL_TARGET_LISTING_H
