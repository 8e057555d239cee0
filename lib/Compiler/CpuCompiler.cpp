//===- CpuCompiler.cpp - pk kernels to optimized LLVM IR and objects ------===//

#include "picokernel/Compiler/CpuCompiler.h"
#include "picokernel/Compiler/TargetMachine.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LegacyPassManager.h"

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Target/TargetMachine.h"

#include <deque>
#include <mutex>
#include <string>
#include <vector>

using namespace mlir;

namespace {

/// libmvec's vector variants that LLVM's LIBMVEC table lacks, for those
/// this process's libmvec exports: tanh and erf (glibc 2.35) at the SSE (b)
/// and AVX2 (d) widths LLVM's table has, and, with `avx512`, every
/// function's AVX-512 (e) variant (LLVM lists none; without them, loops of
/// 16 float32 lanes would call the 8-lane variant twice).
std::vector<llvm::VecDesc> collectLibmvecFunctions(bool avx512) {
  struct Function {
    const char *libm64, *libm32, *intrinsic; // intrinsic: null when none
    const char *parameters;                  // "v" per argument
    bool llvmListed;                         // b and d in LLVM's table
    bool wideFloat32 = true; // whether to use the e variant of libm32
  };
  static const Function functions[] = {
      {"sin", "sinf", "llvm.sin", "v", true},
      {"cos", "cosf", "llvm.cos", "v", true},
      {"tan", "tanf", "llvm.tan", "v", true},
      {"exp", "expf", "llvm.exp", "v", true},
      {"log", "logf", "llvm.log", "v", true},
      {"pow", "powf", "llvm.pow", "vv", true},
      {"tanh", "tanhf", "llvm.tanh", "v", false},
      // AVX-512 erff is 4 ulp off near 3.65 (its AVX2 one, 2); float32 erf
      // is inline (pk-inline-cpu-math) in pk's pipelines anyway.
      {"erf", "erff", nullptr, "v", false, /*wideFloat32=*/false},
  };
  // The names outlive every TargetLibraryInfoImpl that refers to them.
  static std::mutex mutex;
  static std::deque<std::string> names;
  auto keep = [&](std::string name) -> llvm::StringRef {
    std::lock_guard<std::mutex> lock(mutex);
    return names.emplace_back(std::move(name));
  };
  std::vector<llvm::VecDesc> available;
  for (const Function &function : functions)
    for (bool single : {true, false})
      for (char isa : {'b', 'd', 'e'}) {
        if (isa == 'e' ? !avx512 || (single && !function.wideFloat32)
                       : function.llvmListed)
          continue;
        unsigned bits = isa == 'b' ? 128 : isa == 'd' ? 256 : 512;
        unsigned lanes = bits / (single ? 32 : 64);
        std::string libm = single ? function.libm32 : function.libm64;
        std::string shape = "N" + std::to_string(lanes) + function.parameters;
        std::string vector = std::string("_ZGV") + isa + shape + "_" + libm;
        if (!llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(vector))
          continue;
        llvm::StringRef vectorName = keep(vector);
        llvm::StringRef abi = keep("_ZGV_LLVM_" + shape);
        std::vector<std::string> scalars = {libm};
        if (function.intrinsic)
          scalars.push_back(std::string(function.intrinsic) +
                            (single ? ".f32" : ".f64"));
        for (const std::string &scalar : scalars)
          available.emplace_back(keep(scalar), vectorName,
                                 llvm::ElementCount::getFixed(lanes),
                                 /*Masked=*/false, abi, std::nullopt);
      }
  return available;
}

/// The table for targets with or without AVX-512, each collected on first
/// use (only one of them, for a process that compiles for its host).
llvm::ArrayRef<llvm::VecDesc> libmvecFunctionsLLVMLacks(bool avx512) {
  if (avx512) {
    static const std::vector<llvm::VecDesc> wide =
        collectLibmvecFunctions(true);
    return wide;
  }
  static const std::vector<llvm::VecDesc> narrow =
      collectLibmvecFunctions(false);
  return narrow;
}

/// The floating-point operations a call stands for, by its intrinsic `id`
/// (`not_intrinsic` for a library function's): one for those that are one
/// instruction, two for an FMA, ten for math functions.
int64_t callOperations(llvm::Intrinsic::ID id) {
  switch (id) {
  case llvm::Intrinsic::fabs:
  case llvm::Intrinsic::copysign:
  case llvm::Intrinsic::minnum:
  case llvm::Intrinsic::maxnum:
  case llvm::Intrinsic::minimum:
  case llvm::Intrinsic::maximum:
  case llvm::Intrinsic::floor:
  case llvm::Intrinsic::ceil:
  case llvm::Intrinsic::trunc:
  case llvm::Intrinsic::rint:
  case llvm::Intrinsic::roundeven:
    return 1;
  case llvm::Intrinsic::fma:
  case llvm::Intrinsic::fmuladd:
    return 2;
  default:
    return 10;
  }
}

/// The floating-point operations in one iteration of `loop` (see
/// callOperations; blocks of inner loops excluded).
int64_t operationsPerIteration(const llvm::Loop &loop) {
  int64_t operations = 0;
  for (const llvm::BasicBlock *block : loop.blocks())
    for (const llvm::Instruction &instruction : *block) {
      if (auto *call = dyn_cast<llvm::CallInst>(&instruction)) {
        if (call->getType()->isFPOrFPVectorTy())
          operations += callOperations(call->getIntrinsicID());
      } else if (instruction.getType()->isFPOrFPVectorTy() &&
                 !isa<llvm::LoadInst, llvm::PHINode>(instruction)) {
        ++operations;
      } else if (isa<llvm::FCmpInst>(instruction)) {
        ++operations;
      }
    }
  return operations;
}

/// Whether one of `module`'s innermost loops is math: ten floating-point
/// operations or more per iteration (an inline exp, tanh or erf, a libm
/// call). Measured on 1M float32: tanh, sigmoid, softmax and logsumexp ran
/// 1.2-1.5x faster at 512 bits; rmsnorm and layernorm (a few operations
/// per loop) the same; v * v + v ~4% slower; sums of data in L2 up to 1.5x
/// slower where the array starts 32 bytes past a cache line (NumPy aligns
/// to 16 bytes): every 64-byte load then spans two lines. Loads and stores
/// are not counted: a kernel writing in place (softmax(x, x)) vectorizes as
/// the same kernel writing elsewhere, and sums in the same order.
bool hasMathLoops(llvm::Module &module) {
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    llvm::DominatorTree dominators(function);
    llvm::LoopInfo loops(dominators);
    for (const llvm::Loop *loop : loops.getLoopsInPreorder())
      if (loop->isInnermost() && operationsPerIteration(*loop) >= 10)
        return true;
  }
  return false;
}

/// LLVM's x86 tuning vectorizes loops with 256-bit vectors on CPUs with
/// AVX-512 (to spare the clock, which drops under 512-bit arithmetic). A
/// kernel with math loops runs its math up to twice as fast at 512 bits
/// (tanh, sigmoid, softmax, sin: 1.1-1.5x measured); one that streams
/// memory (v * v + v, sums) ran ~4% slower, so keeps 256.
/// Every function of the module gets the same width: the kernel's body is
/// inlined into its C interface.
void preferWidestVectors(llvm::Module &module, int64_t vectorBits) {
  if (vectorBits < 512 || !hasMathLoops(module))
    return;
  for (llvm::Function &function : module)
    if (!function.isDeclaration())
      function.addFnAttr("prefer-vector-width", "512");
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
  int64_t vectorBits = mlir::pk::vectorBitsOf(machine);
  preferWidestVectors(module, vectorBits);
  llvm::PassBuilder builder(&machine, tuning);
  llvm::Triple triple = machine.getTargetTriple();
  llvm::TargetLibraryInfoImpl library(triple);
  if (vectorMathLibrary && triple.isX86() && triple.isOSLinux()) {
    library.addVectorizableFunctionsFromVecLib(llvm::VectorLibrary::LIBMVEC,
                                               triple);
    library.addVectorizableFunctions(
        libmvecFunctionsLLVMLacks(vectorBits >= 512));
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
