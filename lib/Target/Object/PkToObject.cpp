//===- PkToObject.cpp - pk kernels to object files and C headers ----------===//

#include "picokernel/Dialect/Pk/IR/PkDialect.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Pipelines/Pipelines.h"
#include "picokernel/Target/LLVMIR.h"
#include "picokernel/Target/Object.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;

namespace {

struct Parameter {
  std::string name;
  pk::RefType type;
  bool written = false;
};

struct KernelSignature {
  std::string name;
  SmallVector<Parameter> parameters;
};

void registerDialects(DialectRegistry &registry) {
  registry.insert<pk::PkDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
}

/// Whether `name` can be a C identifier (entry points and their parameters
/// are declared in C): letters, digits and underscores, not a keyword.
bool isCIdentifier(llvm::StringRef name) {
  static const llvm::StringRef keywords[] = {
      "auto",     "break",    "case",     "char",     "const",    "continue",
      "default",  "do",       "double",   "else",     "enum",     "extern",
      "float",    "for",      "goto",     "if",       "inline",   "int",
      "long",     "register", "restrict", "return",   "short",    "signed",
      "sizeof",   "static",   "struct",   "switch",   "typedef",  "union",
      "unsigned", "void",     "volatile", "while",    "bool",     "true",
      "false",    "alignas",  "alignof",  "nullptr",  "typeof",   "_Bool",
      "_Complex", "_Imaginary", "_Alignas", "_Alignof", "_Atomic",
      "_Generic", "_Noreturn", "_Static_assert", "_Thread_local"};
  if (name.empty() || llvm::isDigit(name.front()) ||
      !llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
    return false;
  return !llvm::is_contained(keywords, name);
}

/// The kernels to compile ahead of time, each a top-level pk.kernel whose
/// name and parameter names are C identifiers (they are pasted into C).
FailureOr<SmallVector<KernelSignature>> describeKernels(ModuleOp module) {
  SmallVector<KernelSignature> kernels;
  WalkResult walk = module.walk([&](pk::KernelOp kernel) {
    if (kernel->getParentOp() != module.getOperation()) {
      kernel.emitError("kernels compiled ahead of time must be at the top "
                       "level of the module");
      return WalkResult::interrupt();
    }
    KernelSignature signature{kernel.getSymName().str(), {}};
    if (!isCIdentifier(signature.name)) {
      kernel.emitError("kernel name '")
          << signature.name
          << "' is not a C identifier (entry points are declared in C)";
      return WalkResult::interrupt();
    }
    for (BlockArgument arg : kernel.getBodyBlock().getArguments()) {
      std::string name = kernel.getParameterName(arg.getArgNumber());
      if (!isCIdentifier(name)) {
        kernel.emitError("parameter name '")
            << name << "' of kernel '" << signature.name
            << "' is not a C identifier (entry points are declared in C)";
        return WalkResult::interrupt();
      }
      signature.parameters.push_back({name, cast<pk::RefType>(arg.getType()),
                                      kernel.isStoredTo(arg.getArgNumber())});
    }
    kernels.push_back(std::move(signature));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return kernels;
}

/// The C type of an element; float16 and bfloat16 travel as their bits.
std::string cType(Type element) {
  if (element.isF32())
    return "float";
  if (element.isF64())
    return "double";
  if (element.isF16() || element.isBF16())
    return "uint16_t";
  if (element.isInteger(1))
    return "bool";
  return "int" + std::to_string(element.getIntOrFloatBitWidth()) + "_t";
}

std::string dtypeName(Type element) {
  if (element.isInteger(1))
    return "bool";
  if (element.isBF16())
    return "bfloat16";
  if (isa<FloatType>(element))
    return "float" + std::to_string(element.getIntOrFloatBitWidth());
  return "int" + std::to_string(element.getIntOrFloatBitWidth());
}

/// `void pk_<kernel>(T *...)`: builds the memref descriptors of the lowered
/// kernel (allocated and aligned pointer, offset 0, static sizes, row-major
/// strides) from plain pointers.
LogicalResult addEntryPoint(llvm::Module &module,
                            const KernelSignature &kernel) {
  llvm::Function *lowered = module.getFunction(kernel.name);
  if (!lowered)
    return failure();
  llvm::LLVMContext &context = module.getContext();
  auto *pointer = llvm::PointerType::getUnqual(context);
  auto *i64 = llvm::Type::getInt64Ty(context);
  SmallVector<llvm::Type *> types(kernel.parameters.size(), pointer);
  auto *function = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), types, false),
      llvm::GlobalValue::ExternalLinkage, "pk_" + kernel.name, module);
  llvm::IRBuilder<> builder(
      llvm::BasicBlock::Create(context, "entry", function));
  SmallVector<llvm::Value *> arguments;
  for (auto [index, parameter] : llvm::enumerate(kernel.parameters)) {
    llvm::Argument *data = function->getArg(index);
    data->setName(parameter.name);
    if (!parameter.written)
      data->addAttr(llvm::Attribute::ReadOnly);
    ArrayRef<int64_t> shape = parameter.type.getShape();
    arguments.append({data, data, llvm::ConstantInt::get(i64, 0)});
    for (int64_t size : shape)
      arguments.push_back(llvm::ConstantInt::get(i64, size));
    SmallVector<int64_t> strides(shape.size(), 1);
    for (size_t d = shape.size(); d > 1; --d)
      strides[d - 2] = strides[d - 1] * shape[d - 1];
    for (int64_t stride : strides)
      arguments.push_back(llvm::ConstantInt::get(i64, stride));
  }
  builder.CreateCall(lowered, arguments);
  builder.CreateRetVoid();
  return success();
}

std::string hostFeatures() {
  llvm::SubtargetFeatures features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.first(), feature.second);
  return features.getString();
}

} // namespace

LogicalResult mlir::pk::compileToObject(ModuleOp module,
                                        const ObjectOptions &options,
                                        SmallVectorImpl<char> &object) {
  FailureOr<SmallVector<KernelSignature>> described = describeKernels(module);
  if (failed(described))
    return failure();
  SmallVector<KernelSignature> &kernels = *described;
  if (kernels.empty())
    return module.emitError("no pk.kernel to compile");

  // The pipeline runs on a copy in a private context that has every dialect
  // and interface it needs: the caller's module stays as it is, and its
  // context (perhaps shared with other threads) is not extended.
  std::string text;
  llvm::raw_string_ostream printed(text);
  module.print(printed, OpPrintingFlags().enableDebugInfo());
  DialectRegistry registry;
  registerDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  // Diagnostics of the copy are reported to the caller's context.
  ScopedDiagnosticHandler forward(&context, [&](Diagnostic &diagnostic) {
    module.getContext()->getDiagEngine().emit(std::move(diagnostic));
    return success();
  });
  OwningOpRef<ModuleOp> copy = parseSourceString<ModuleOp>(text, &context);
  if (!copy)
    return module.emitError("internal error: the module does not round-trip");

  PassManager pm(&context);
  CpuPipelineOptions pipeline;
  pipeline.parallelThreshold = options.parallelThreshold;
  buildPkCpuPipeline(pm, pipeline);
  if (failed(pm.run(*copy)))
    return failure();

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(options.triple.empty()
                          ? llvm::sys::getDefaultTargetTriple()
                          : options.triple);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError("no LLVM target for '")
           << triple.str() << "': " << error;
  bool host = options.cpu == "host";
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, host ? llvm::sys::getHostCPUName() : llvm::StringRef(options.cpu),
      host ? hostFeatures() : "", llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt,
      options.optLevel >= 3 ? llvm::CodeGenOptLevel::Aggressive
                            : llvm::CodeGenOptLevel::Default));
  if (!machine)
    return module.emitError("cannot create a target machine for '")
           << triple.str() << "'";

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*copy, llvmContext);
  if (!llvmModule)
    return module.emitError("translation to LLVM IR failed");
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());
  for (const KernelSignature &kernel : kernels)
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
  optimizeLLVMModule(*llvmModule, *machine, options.optLevel,
                     /*vectorMathLibrary=*/false);

  object.clear();
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return module.emitError("the target cannot emit object files");
  codegen.run(*llvmModule);
  return success();
}

LogicalResult mlir::pk::writeCHeader(ModuleOp module, llvm::raw_ostream &os) {
  FailureOr<SmallVector<KernelSignature>> described = describeKernels(module);
  if (failed(described))
    return failure();
  SmallVector<KernelSignature> &kernels = *described;
  if (kernels.empty())
    return module.emitError("no pk.kernel to declare");
  std::string guard = "PK_KERNELS_";
  for (const KernelSignature &kernel : kernels)
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
  for (const KernelSignature &kernel : kernels) {
    os << "\n/* " << kernel.name << "(";
    llvm::interleaveComma(kernel.parameters, os, [&](const Parameter &p) {
      os << p.name << ": " << dtypeName(p.type.getElementType()) << "[";
      llvm::interleave(p.type.getShape(), os, ", ");
      os << "]";
    });
    os << ")";
    SmallVector<std::string> written;
    for (const Parameter &p : kernel.parameters)
      if (p.written)
        written.push_back(p.name);
    if (!written.empty())
      os << "; writes " << llvm::join(written, ", ");
    os << " */\nvoid pk_" << kernel.name << "(";
    llvm::interleaveComma(kernel.parameters, os, [&](const Parameter &p) {
      os << (p.written ? "" : "const ") << cType(p.type.getElementType())
         << " *" << p.name;
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
      registerDialects);
  TranslateFromMLIRRegistration header(
      "pk-to-c-header", "the C header declaring --pk-to-object's entry points",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return writeCHeader(module, os);
      },
      registerDialects);
}
