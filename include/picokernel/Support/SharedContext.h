//===- SharedContext.h - MLIR contexts shared by threads, safe in forks ---===//
//
// picokernel compiles in several threads at once into shared MLIR contexts.
// A context must then lock its uniquers (multithreading enabled), but the
// thread pool MLIR would start for that does not survive fork(): a forked
// child compiling in the context waited for the pool's threads forever.
// Contexts made here lock and run MLIR's parallel work in the calling
// thread, starting no thread.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_SHAREDCONTEXT_H
#define PICOKERNEL_SUPPORT_SHAREDCONTEXT_H

#include "mlir/IR/MLIRContext.h"

namespace pk {

/// Makes `context`, created with multithreading disabled, safe for threads
/// to share (its uniquers lock) without starting a thread: MLIR's parallel
/// loops over it run in the thread that calls them.
void shareWithoutThreads(mlir::MLIRContext &context);

} // namespace pk

#endif // PICOKERNEL_SUPPORT_SHAREDCONTEXT_H
