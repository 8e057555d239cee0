//===- PkToObject.cpp - pk kernels to object files and C headers ----------===//

#include "picokernel/Compiler/CpuCompiler.h"
#include "picokernel/Compiler/KernelSignature.h"
#include "picokernel/Compiler/Registry.h"
#include "picokernel/Compiler/TargetMachine.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Target/Object.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;

namespace {

/// Whether `name` can be a C identifier (entry points and their parameters
/// are declared in C): letters, digits and underscores, not a keyword.
bool isCIdentifier(llvm::StringRef name) {
  static const llvm::StringRef keywords[] = {
      "auto",         "break",   "case",     "char",       "const",
      "continue",     "default", "do",       "double",     "else",
      "enum",         "extern",  "float",    "for",        "goto",
      "if",           "inline",  "int",      "long",       "register",
      "restrict",     "return",  "short",    "signed",     "sizeof",
      "static",       "struct",  "switch",   "typedef",    "union",
      "unsigned",     "void",    "volatile", "while",      "bool",
      "true",         "false",   "alignas",  "alignof",    "nullptr",
      "typeof",       "_Bool",   "_Complex", "_Imaginary", "_Alignas",
      "_Alignof",     "_Atomic", "_Generic", "_Noreturn",  "_Static_assert",
      "_Thread_local"};
  if (name.empty() || llvm::isDigit(name.front()) ||
      !llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
    return false;
  return !llvm::is_contained(keywords, name);
}

/// The kernels to compile ahead of time, each a top-level pk.kernel whose
/// name and parameter names are C identifiers (they are pasted into C); an
/// error when there is none to `what` ("compile", "declare").
FailureOr<SmallVector<::pk::KernelSignature>> describeKernels(ModuleOp module,
                                                              StringRef what) {
  SmallVector<::pk::KernelSignature> kernels;
  WalkResult walk = module.walk([&](mlir::pk::KernelOp kernel) {
    if (kernel->getParentOp() != module.getOperation()) {
      kernel.emitError("kernels compiled ahead of time must be at the top "
                       "level of the module");
      return WalkResult::interrupt();
    }
    if (kernel.hasDynamicSizes()) {
      kernel.emitError("kernels compiled ahead of time take static sizes "
                       "only, for now");
      return WalkResult::interrupt();
    }
    ::pk::KernelSignature signature = ::pk::signatureOf(kernel);
    if (!isCIdentifier(signature.name)) {
      kernel.emitError("kernel name '")
          << signature.name
          << "' is not a C identifier (entry points are declared in C)";
      return WalkResult::interrupt();
    }
    for (const ::pk::CompiledParam &param : signature.params)
      if (!isCIdentifier(param.name)) {
        kernel.emitError("parameter name '")
            << param.name << "' of kernel '" << signature.name
            << "' is not a C identifier (entry points are declared in C)";
        return WalkResult::interrupt();
      }
    kernels.push_back(std::move(signature));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (kernels.empty())
    return module.emitError("no pk.kernel to ") << what;
  return kernels;
}

/// The C type of an element; float16 and bfloat16 travel as their bits.
std::string cType(::pk::DType dtype) {
  switch (dtype) {
  case ::pk::DType::F32:
    return "float";
  case ::pk::DType::F64:
    return "double";
  case ::pk::DType::F16:
  case ::pk::DType::BF16:
    return "uint16_t";
  case ::pk::DType::Bool:
    return "bool";
  default:
    return std::string(::pk::dtypeName(dtype)) + "_t";
  }
}

/// `void pk_<kernel>(T *...)`: builds the memref descriptors of the lowered
/// kernel (allocated and aligned pointer, offset 0, static sizes, row-major
/// strides) from plain pointers.
LogicalResult addEntryPoint(llvm::Module &module,
                            const ::pk::KernelSignature &kernel) {
  llvm::Function *lowered = module.getFunction(kernel.name);
  if (!lowered)
    return failure();
  llvm::LLVMContext &context = module.getContext();
  auto *pointer = llvm::PointerType::getUnqual(context);
  auto *i64 = llvm::Type::getInt64Ty(context);
  SmallVector<llvm::Type *> types(kernel.params.size(), pointer);
  auto *function = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), types, false),
      llvm::GlobalValue::ExternalLinkage, "pk_" + kernel.name, module);
  llvm::IRBuilder<> builder(
      llvm::BasicBlock::Create(context, "entry", function));
  SmallVector<llvm::Value *> arguments;
  for (auto [index, parameter] : llvm::enumerate(kernel.params)) {
    llvm::Argument *data = function->getArg(index);
    data->setName(parameter.name);
    if (!parameter.written)
      data->addAttr(llvm::Attribute::ReadOnly);
    arguments.append({data, data, llvm::ConstantInt::get(i64, 0)});
    for (int64_t size : parameter.shape)
      arguments.push_back(llvm::ConstantInt::get(i64, size));
    for (int64_t stride : ::pk::rowMajorStrides(parameter.shape))
      arguments.push_back(llvm::ConstantInt::get(i64, stride));
  }
  builder.CreateCall(lowered, arguments);
  builder.CreateRetVoid();
  return success();
}

} // namespace

LogicalResult mlir::pk::compileToObject(ModuleOp module,
                                        const ObjectOptions &options,
                                        SmallVectorImpl<char> &object) {
  FailureOr<SmallVector<::pk::KernelSignature>> described =
      describeKernels(module, "compile");
  if (failed(described))
    return failure();
  SmallVector<::pk::KernelSignature> &kernels = *described;

  // The pipeline runs on a copy in a private context that has every dialect
  // and interface it needs: the caller's module stays as it is, and its
  // context (perhaps shared with other threads) is not extended.
  std::string text;
  llvm::raw_string_ostream printed(text);
  module.print(printed, OpPrintingFlags().enableDebugInfo());
  DialectRegistry registry;
  registerPkCompilerDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  // Diagnostics of the copy are reported to the caller's context.
  ScopedDiagnosticHandler forward(&context, [&](Diagnostic &diagnostic) {
    module.getContext()->getDiagEngine().emit(std::move(diagnostic));
    return success();
  });
  OwningOpRef<ModuleOp> copy = parseSourceString<ModuleOp>(text, &context);
  if (!copy)
    return module.emitError("internal error: the module does not round-trip");

  TargetMachineOptions target;
  target.triple = options.triple;
  target.cpu = options.cpu;
  target.optLevel = options.optLevel;
  auto machine = createTargetMachine(target);
  if (!machine)
    return module.emitError(llvm::toString(machine.takeError()));

  CpuPipelineOptions pipeline;
  pipeline.parallelThreshold = options.parallelThreshold;
  // Register tiles for the target CPU's vectors, not the host's.
  pipeline.vectorBits = vectorBitsOf(**machine);
  if (failed(runCpuPipeline(*copy, pipeline)))
    return failure();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateToLLVMIR(*copy, llvmContext, **machine);
  if (!llvmModule)
    return failure();
  for (const ::pk::KernelSignature &kernel : kernels)
    if (failed(addEntryPoint(*llvmModule, kernel)))
      return module.emitError("internal error: kernel '")
             << kernel.name << "' has no lowered function";
  // Only the entry points are exported: the lowered kernels are named after
  // the user's kernels and would clash with libc (`fma`).
  for (llvm::Function &function : *llvmModule)
    if (!function.isDeclaration() && !function.getName().starts_with("pk_"))
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable &global : llvmModule->globals())
    if (!global.isDeclaration())
      global.setLinkage(llvm::GlobalValue::InternalLinkage);
  // No vector math library: the object must link with plain libm.
  optimizeLLVMModule(*llvmModule, **machine, options.optLevel,
                     /*vectorMathLibrary=*/false);
  if (failed(emitObjectFile(*llvmModule, **machine, object)))
    return module.emitError("the target cannot emit object files");
  return success();
}

LogicalResult mlir::pk::writeCHeader(ModuleOp module, llvm::raw_ostream &os) {
  FailureOr<SmallVector<::pk::KernelSignature>> described =
      describeKernels(module, "declare");
  if (failed(described))
    return failure();
  SmallVector<::pk::KernelSignature> &kernels = *described;
  std::string guard = "PK_KERNELS_";
  for (const ::pk::KernelSignature &kernel : kernels)
    guard += llvm::StringRef(kernel.name).upper() + "_";
  guard += "H";
  os << "/* Generated by picokernel (pk-translate --pk-to-c-header): do not "
        "edit.\n"
     << " *\n"
     << " * Entry points of pk kernels compiled ahead of time "
        "(--pk-to-object).\n"
     << " * Link the object with libm (and libomp if it was compiled with a\n"
     << " * parallel threshold); nothing else is needed at run time. Arrays "
        "are\n"
     << " * C-contiguous, of exactly the shapes below, and must not overlap.\n"
     << " * float16 and bfloat16 elements are passed as their bits. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdbool.h>\n#include <stdint.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n";
  for (const ::pk::KernelSignature &kernel : kernels) {
    os << "\n/* " << kernel.name << "(";
    llvm::interleaveComma(kernel.params, os, [&](const ::pk::CompiledParam &p) {
      os << p.name << ": " << ::pk::dtypeName(p.dtype) << "[";
      llvm::interleave(p.shape, os, ", ");
      os << "]";
    });
    os << ")";
    SmallVector<std::string> written;
    for (const ::pk::CompiledParam &p : kernel.params)
      if (p.written)
        written.push_back(p.name);
    if (!written.empty())
      os << "; writes " << llvm::join(written, ", ");
    os << " */\nvoid pk_" << kernel.name << "(";
    llvm::interleaveComma(kernel.params, os, [&](const ::pk::CompiledParam &p) {
      os << (p.written ? "" : "const ") << cType(p.dtype) << " *" << p.name;
    });
    os << ");\n";
  }
  os << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return success();
}

namespace {
llvm::cl::opt<std::string>
    objectCpu("pk-object-cpu",
              llvm::cl::desc(
                  "CPU for --pk-to-object: host (default) or an LLVM CPU name"),
              llvm::cl::init("host"));
llvm::cl::opt<int64_t> objectParallelThreshold(
    "pk-object-parallel-threshold",
    llvm::cl::desc("--pk-to-object: iterations from which loop nests run "
                   "through OpenMP (0, the default: never; then no libomp "
                   "is needed)"),
    llvm::cl::init(0));

} // namespace

void mlir::pk::registerToObjectTranslations() {
  TranslateFromMLIRRegistration object(
      "pk-to-object",
      "compile pk kernels ahead of time into an object file exporting "
      "pk_<kernel>(...)",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        ObjectOptions options;
        options.cpu = objectCpu;
        options.parallelThreshold = objectParallelThreshold;
        SmallVector<char> bytes;
        if (failed(compileToObject(module, options, bytes)))
          return failure();
        os.write(bytes.data(), bytes.size());
        return success();
      },
      registerPkCompilerDialects);
  TranslateFromMLIRRegistration header(
      "pk-to-c-header", "the C header declaring --pk-to-object's entry points",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return writeCHeader(module, os);
      },
      registerPkCompilerDialects);
}
