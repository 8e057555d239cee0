//===- PkToObject.cpp - pk kernels to object files and C headers ----------===//

#include "picokernel/Target/PkToObject.h"
#include "picokernel/Compiler/CpuCompiler.h"
#include "picokernel/Compiler/KernelSignature.h"
#include "picokernel/Compiler/Registry.h"
#include "picokernel/Compiler/TargetMachine.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Dialect/Pk/IR/SizeClasses.h"
#include "picokernel/Pipelines/Pipelines.h"

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

/// A kernel compiled ahead of time: its parameters and, where it has
/// dynamic sizes, the size arguments its entry point takes first (one per
/// class of equal sizes the caller gives, named n0, n1, ... or n; derived
/// classes are computed from them).
struct AotKernel {
  ::pk::KernelSignature signature;
  mlir::pk::SizeClasses sizes;
  /// Per class: its size argument's name, or how it follows from one.
  std::vector<std::string> classNames;
  /// Per size argument: its class.
  std::vector<int> arguments;

  bool isDynamic() const { return sizes.count > 0; }
  /// Parameter `index`'s dimension `d`: a size's name or a number.
  std::string dimension(size_t index, size_t d) const {
    int k = sizes.ofParameter[index][d];
    return k < 0 ? std::to_string(signature.params[index].shape[d])
                 : classNames[k];
  }
};

/// Per class: n0, n1, ... (or n for one given class), each made unlike
/// every parameter name, for the classes the caller gives; for a derived
/// class, its size in C (`n - 1`, `(n - 1 + 1) / 2`, clamped at 0).
std::vector<std::string> nameSizes(const ::pk::KernelSignature &signature,
                                   const mlir::pk::SizeClasses &sizes) {
  int given = llvm::count_if(llvm::seq(sizes.count),
                             [&](int k) { return sizes.isGiven(k); });
  std::vector<std::string> names(sizes.count);
  int next = 0;
  for (int k = 0; k < sizes.count; ++k) {
    if (!sizes.isGiven(k))
      continue;
    std::string name = given == 1 ? "n" : "n" + std::to_string(next);
    ++next;
    while (llvm::any_of(signature.params, [&](const ::pk::CompiledParam &p) {
      return p.name == name;
    }))
      name += "_";
    names[k] = name;
  }
  for (auto [k, derived] : llvm::enumerate(sizes.derived)) {
    if (!derived)
      continue;
    std::string base = names[derived->base];
    std::string less =
        derived->offset > 0
            ? base + " - " + std::to_string(derived->offset)
            : (derived->offset < 0
                   ? base + " + " + std::to_string(-derived->offset)
                   : base);
    names[k] = derived->step == 1 ? "max(0, " + less + ")"
                                  : "max(0, ceil((" + less + ") / " +
                                        std::to_string(derived->step) + "))";
  }
  return names;
}

/// The kernels to compile ahead of time, each a top-level pk.kernel whose
/// name and parameter names are C identifiers (they are pasted into C); an
/// error when there is none to `what` ("compile", "declare").
FailureOr<std::vector<AotKernel>> describeKernels(ModuleOp module,
                                                  StringRef what) {
  std::vector<AotKernel> kernels;
  WalkResult walk = module.walk([&](mlir::pk::KernelOp kernel) {
    if (kernel->getParentOp() != module.getOperation()) {
      kernel.emitError("kernels compiled ahead of time must be at the top "
                       "level of the module");
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
    mlir::pk::SizeClasses sizes = mlir::pk::computeSizeClasses(kernel);
    std::vector<std::string> classNames = nameSizes(signature, sizes);
    std::vector<int> arguments;
    for (int k = 0; k < sizes.count; ++k)
      if (sizes.isGiven(k))
        arguments.push_back(k);
    kernels.push_back({std::move(signature), std::move(sizes),
                       std::move(classNames), std::move(arguments)});
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

/// `void pk_<kernel>(T *...)`, or `int pk_<kernel>(int64_t n..., T *...)`
/// for a kernel with dynamic sizes: builds the memref descriptors of the
/// lowered kernel (allocated and aligned pointer, offset 0, sizes,
/// row-major strides) from plain pointers and sizes. The sizes are checked
/// first: negative ones, ones below a class's minimum, or arrays too large
/// to count in bytes, return 1 without running; 0 is returned once the
/// kernel ran.
LogicalResult addEntryPoint(llvm::Module &module, const AotKernel &aot) {
  const ::pk::KernelSignature &kernel = aot.signature;
  llvm::Function *lowered =
      module.getFunction(mlir::pk::loweredKernelFunction(kernel.name));
  if (!lowered)
    return failure();
  llvm::LLVMContext &context = module.getContext();
  auto *pointer = llvm::PointerType::getUnqual(context);
  auto *i64 = llvm::Type::getInt64Ty(context);
  auto *i32 = llvm::Type::getInt32Ty(context);
  size_t sizeArguments = aot.arguments.size();
  SmallVector<llvm::Type *> types(sizeArguments, i64);
  types.append(kernel.params.size(), pointer);
  llvm::Type *result =
      aot.isDynamic() ? (llvm::Type *)i32 : llvm::Type::getVoidTy(context);
  auto *function = llvm::Function::Create(
      llvm::FunctionType::get(result, types, false),
      llvm::GlobalValue::ExternalLinkage, "pk_" + kernel.name, module);
  llvm::IRBuilder<> builder(
      llvm::BasicBlock::Create(context, "entry", function));
  auto constant = [&](int64_t value) {
    return llvm::ConstantInt::get(i64, value);
  };
  // Each class's size: an argument, or computed from one.
  SmallVector<llvm::Value *> classSizes(aot.sizes.count);
  for (auto [argument, k] : llvm::enumerate(aot.arguments)) {
    classSizes[k] = function->getArg(argument);
    classSizes[k]->setName(aot.classNames[k]);
  }
  for (auto [k, derived] : llvm::enumerate(aot.sizes.derived))
    if (derived) {
      llvm::Value *rest = builder.CreateBinaryIntrinsic(
          llvm::Intrinsic::smax,
          builder.CreateSub(classSizes[derived->base],
                            constant(derived->offset)),
          constant(0));
      classSizes[k] = builder.CreateSDiv(
          builder.CreateAdd(rest, constant(derived->step - 1)),
          constant(derived->step));
    }

  SmallVector<llvm::Value *> arguments;
  llvm::Value *valid = builder.getTrue();
  for (auto [index, parameter] : llvm::enumerate(kernel.params)) {
    llvm::Argument *data = function->getArg(sizeArguments + index);
    data->setName(parameter.name);
    if (!parameter.written)
      data->addAttr(llvm::Attribute::ReadOnly);
    arguments.append({data, data, constant(0)});
    size_t rank = parameter.shape.size();
    SmallVector<llvm::Value *> sizes;
    for (size_t d = 0; d < rank; ++d) {
      int k = aot.sizes.ofParameter[index][d];
      sizes.push_back(k < 0 ? (llvm::Value *)constant(parameter.shape[d])
                            : classSizes[k]);
    }
    arguments.append(sizes.begin(), sizes.end());
    SmallVector<llvm::Value *> strides(rank);
    llvm::Value *elements = constant(1);
    for (size_t d = rank; d-- > 0;) {
      strides[d] = elements;
      if (!aot.isDynamic()) {
        elements = builder.CreateMul(elements, sizes[d]);
        continue;
      }
      // Sizes at least 0, and the array's bytes an int64_t.
      valid = builder.CreateAnd(valid,
                                builder.CreateICmpSGE(sizes[d], constant(0)));
      llvm::Value *product = builder.CreateBinaryIntrinsic(
          llvm::Intrinsic::smul_with_overflow, elements, sizes[d]);
      valid = builder.CreateAnd(
          valid, builder.CreateNot(builder.CreateExtractValue(product, 1)));
      elements = builder.CreateExtractValue(product, 0);
    }
    if (aot.isDynamic()) {
      llvm::Value *bytes = builder.CreateBinaryIntrinsic(
          llvm::Intrinsic::smul_with_overflow, elements,
          constant(int64_t(::pk::itemSize(parameter.dtype))));
      valid = builder.CreateAnd(
          valid, builder.CreateNot(builder.CreateExtractValue(bytes, 1)));
    }
    arguments.append(strides.begin(), strides.end());
  }
  if (!aot.isDynamic()) {
    builder.CreateCall(lowered, arguments);
    builder.CreateRetVoid();
    return success();
  }
  // Sizes below the least the kernel takes (it slices x[:4], x[2]).
  for (auto [k, least] : llvm::enumerate(aot.sizes.minimum))
    if (least > 0)
      valid = builder.CreateAnd(
          valid, builder.CreateICmpSGE(classSizes[k], constant(least)));
  auto *run = llvm::BasicBlock::Create(context, "run", function);
  auto *reject = llvm::BasicBlock::Create(context, "reject", function);
  builder.CreateCondBr(valid, run, reject);
  builder.SetInsertPoint(reject);
  builder.CreateRet(llvm::ConstantInt::get(i32, 1));
  builder.SetInsertPoint(run);
  builder.CreateCall(lowered, arguments);
  builder.CreateRet(llvm::ConstantInt::get(i32, 0));
  return success();
}

} // namespace

LogicalResult mlir::pk::compileToObject(ModuleOp module,
                                        const ObjectOptions &options,
                                        SmallVectorImpl<char> &object) {
  FailureOr<std::vector<AotKernel>> described =
      describeKernels(module, "compile");
  if (failed(described))
    return failure();
  std::vector<AotKernel> &kernels = *described;

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
  for (const AotKernel &kernel : kernels)
    if (failed(addEntryPoint(*llvmModule, kernel)))
      return module.emitError("internal error: kernel '")
             << kernel.signature.name << "' has no lowered function";
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
  FailureOr<std::vector<AotKernel>> described =
      describeKernels(module, "declare");
  if (failed(described))
    return failure();
  std::vector<AotKernel> &kernels = *described;
  std::string guard = "PK_KERNELS_";
  for (const AotKernel &kernel : kernels)
    guard += llvm::StringRef(kernel.signature.name).upper() + "_";
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
     << " * Kernels with dynamic sizes take them first (n...) and return 0,\n"
     << " * or 1 without running for a negative size, a size below the\n"
     << " * minimum a kernel lists (\"n >= 4\", where its slices need one), "
        "or\n"
     << " * an array whose size in bytes overflows int64_t.\n"
     << " * float16 and bfloat16 elements are passed as their bits. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdbool.h>\n#include <stdint.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n";
  for (const AotKernel &aot : kernels) {
    const ::pk::KernelSignature &kernel = aot.signature;
    os << "\n/* " << kernel.name << "(";
    for (auto [index, p] : llvm::enumerate(kernel.params)) {
      os << (index ? ", " : "") << p.name << ": " << ::pk::dtypeName(p.dtype)
         << "[";
      for (size_t d = 0; d < p.shape.size(); ++d)
        os << (d ? ", " : "") << aot.dimension(index, d);
      os << "]";
    }
    os << ")";
    SmallVector<std::string> written;
    for (const ::pk::CompiledParam &p : kernel.params)
      if (p.written)
        written.push_back(p.name);
    if (!written.empty())
      os << "; writes " << llvm::join(written, ", ");
    for (auto [k, least] : llvm::enumerate(aot.sizes.minimum))
      if (least > 0)
        os << "; " << aot.classNames[k] << " >= " << least;
    os << " */\n"
       << (aot.isDynamic() ? "int" : "void") << " pk_" << kernel.name << "(";
    for (int k : aot.arguments)
      os << "int64_t " << aot.classNames[k] << ", ";
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
