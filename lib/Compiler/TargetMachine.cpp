//===- TargetMachine.cpp - LLVM target machines for pk kernels ------------===//

#include "picokernel/Compiler/TargetMachine.h"

#include "picokernel/Support/VectorWidth.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <mutex>

namespace {
std::string hostFeatures() {
  llvm::SubtargetFeatures features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.first(), feature.second);
  return features.getString();
}
} // namespace

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
mlir::pk::createTargetMachine(const TargetMachineOptions &options) {
  static std::once_flag targets;
  std::call_once(targets, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  llvm::CodeGenOptLevel level = options.optLevel >= 3
                                    ? llvm::CodeGenOptLevel::Aggressive
                                    : llvm::CodeGenOptLevel::Default;
  if (options.jit) {
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!builder)
      return builder.takeError();
    builder->setCodeGenOptLevel(level);
    return builder->createTargetMachine();
  }
  llvm::Triple triple(options.triple.empty()
                          ? llvm::sys::getDefaultTargetTriple()
                          : options.triple);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no LLVM target for '" + triple.str() +
                                   "': " + error);
  bool host = options.cpu == "host";
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, host ? llvm::sys::getHostCPUName() : llvm::StringRef(options.cpu),
      host ? hostFeatures() : "", llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, level));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for '" +
                                   triple.str() + "'");
  return machine;
}

int64_t mlir::pk::vectorBitsOf(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  return ::pk::widestVectorBits([&](const char *name) {
    return subtarget && subtarget->checkFeatures(std::string("+") + name);
  });
}
