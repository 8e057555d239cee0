//===- CpuCompiler.cpp - pk kernels to optimized LLVM IR and objects ------===//

#include "picokernel/Compiler/CpuCompiler.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Target/TargetMachine.h"

#include <vector>

using namespace mlir;

namespace {

/// Vector variants that glibc's libmvec has had since 2.35 but LLVM's
/// LIBMVEC table does not list (tanh and erf: gelu's cost), for those this
/// process's libmvec exports: SSE (b) and AVX2 (d) widths, as LLVM's table.
llvm::ArrayRef<llvm::VecDesc> libmvecFunctionsLLVMLacks() {
  static const std::vector<llvm::VecDesc> functions = [] {
    struct Variant {
      const char *scalar, *vector, *abi;
      unsigned lanes;
    };
    static const Variant variants[] = {
        {"llvm.tanh.f32", "_ZGVbN4v_tanhf", "_ZGV_LLVM_N4v", 4},
        {"llvm.tanh.f32", "_ZGVdN8v_tanhf", "_ZGV_LLVM_N8v", 8},
        {"llvm.tanh.f64", "_ZGVbN2v_tanh", "_ZGV_LLVM_N2v", 2},
        {"llvm.tanh.f64", "_ZGVdN4v_tanh", "_ZGV_LLVM_N4v", 4},
        {"erff", "_ZGVbN4v_erff", "_ZGV_LLVM_N4v", 4},
        {"erff", "_ZGVdN8v_erff", "_ZGV_LLVM_N8v", 8},
        {"erf", "_ZGVbN2v_erf", "_ZGV_LLVM_N2v", 2},
        {"erf", "_ZGVdN4v_erf", "_ZGV_LLVM_N4v", 4},
    };
    std::vector<llvm::VecDesc> available;
    for (const Variant &v : variants)
      if (llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(v.vector))
        available.emplace_back(v.scalar, v.vector,
                               llvm::ElementCount::getFixed(v.lanes),
                               /*Masked=*/false, v.abi, std::nullopt);
    return available;
  }();
  return functions;
}

} // namespace

void mlir::pk::optimizeLLVMModule(llvm::Module &module,
                                  llvm::TargetMachine &machine, unsigned level,
                                  bool vectorMathLibrary) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgsccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopVectorization = level > 1;
  tuning.SLPVectorization = level > 1;
  llvm::PassBuilder builder(&machine, tuning);
  llvm::Triple triple = machine.getTargetTriple();
  llvm::TargetLibraryInfoImpl library(triple);
  if (vectorMathLibrary && triple.isX86() && triple.isOSLinux()) {
    library.addVectorizableFunctionsFromVecLib(llvm::VectorLibrary::LIBMVEC,
                                               triple);
    library.addVectorizableFunctions(libmvecFunctionsLLVMLacks());
  }
  functions.registerPass([&] { return llvm::TargetLibraryAnalysis(library); });
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgsccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgsccs, modules);
  llvm::OptimizationLevel optimization =
      level >= 3   ? llvm::OptimizationLevel::O3
      : level == 2 ? llvm::OptimizationLevel::O2
      : level == 1 ? llvm::OptimizationLevel::O1
                   : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager pipeline =
      level == 0 ? builder.buildO0DefaultPipeline(optimization)
                 : builder.buildPerModuleDefaultPipeline(optimization);
  pipeline.run(module, modules);
}

mlir::pk::CpuPipelineCache::CpuPipelineCache(MLIRContext &context)
    : context(context) {}

mlir::pk::CpuPipelineCache::~CpuPipelineCache() = default;

std::unique_ptr<PassManager>
mlir::pk::CpuPipelineCache::take(const std::string &key) {
  std::lock_guard<std::mutex> lock(mutex);
  auto found = idle.find(key);
  if (found == idle.end() || found->second.empty())
    return nullptr;
  std::unique_ptr<PassManager> pm = std::move(found->second.back());
  found->second.pop_back();
  return pm;
}

void mlir::pk::CpuPipelineCache::giveBack(const std::string &key,
                                          std::unique_ptr<PassManager> pm) {
  std::lock_guard<std::mutex> lock(mutex);
  idle[key].push_back(std::move(pm));
}

LogicalResult mlir::pk::runCpuPipeline(ModuleOp module,
                                       const CpuPipelineOptions &options,
                                       function_ref<void()> beforeStage,
                                       StringRef lastStage,
                                       CpuPipelineCache *cache) {
  MLIRContext *context = module.getContext();
  if (cache && &cache->getContext() != context)
    cache = nullptr;
  std::string optionsText;
  if (cache) {
    llvm::raw_string_ostream os(optionsText);
    options.print(os);
  }
  for (const std::string &stage : cpuStageNames()) {
    if (beforeStage)
      beforeStage();
    std::string key = stage + optionsText;
    std::unique_ptr<PassManager> pm = cache ? cache->take(key) : nullptr;
    if (!pm) {
      pm = std::make_unique<PassManager>(context);
      // The IR is verified after each stage rather than after each of its
      // passes: that took a third of a matmul's pipeline time. An invalid
      // result is still an error (a diagnostic naming the op), found at
      // the end of the stage that made it; pk-opt verifies after every
      // pass.
      pm->enableVerifier(false);
      buildCpuStage(*pm, stage, options);
    }
    LogicalResult result = pm->run(module);
    if (cache)
      cache->giveBack(key, std::move(pm));
    if (failed(result) || failed(verify(module)))
      return failure();
    if (stage == lastStage)
      break;
  }
  if (beforeStage)
    beforeStage();
  return success();
}

std::unique_ptr<llvm::Module>
mlir::pk::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                            llvm::TargetMachine &machine) {
  std::unique_ptr<llvm::Module> translated =
      translateModuleToLLVMIR(module, context);
  if (!translated) {
    module.emitError("translation to LLVM IR failed");
    return nullptr;
  }
  translated->setTargetTriple(machine.getTargetTriple());
  translated->setDataLayout(machine.createDataLayout());
  return translated;
}

LogicalResult mlir::pk::emitObjectFile(llvm::Module &module,
                                       llvm::TargetMachine &machine,
                                       SmallVectorImpl<char> &object) {
  object.clear();
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return failure();
  codegen.run(module);
  return success();
}
