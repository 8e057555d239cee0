//===- Jit.cpp - compile a pk kernel for the host CPU ---------------------===//

#include "picokernel/Compiler/CpuCompiler.h"
#include "picokernel/Compiler/Registry.h"
#include "picokernel/Compiler/TargetMachine.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Runtime/CompiledKernel.h"
#include "picokernel/Runtime/DiskCache.h"
#include "picokernel/Support/Diagnostics.h"
#include "picokernel/Support/Environment.h"
#include "picokernel/Support/ModuleIR.h"

#include "OpenMPRuntime.h"
#include "Workspace.h"

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/IPO/Internalize.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include <cerrno>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace pk {

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string errorText(llvm::Error error) {
  return llvm::toString(std::move(error));
}

/// Whether glibc's vector math library is loaded into this process.
bool libmvecLoaded = false;

/// What identifies this build of picokernel: the file, size and time of
/// the binary that holds this code (libpicokernel, the Python extension or
/// a program). Any rebuild changes it, so cached code never outlives the
/// compiler that made it.
std::string buildIdentity() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&buildIdentity), &info) ||
      !info.dli_fname)
    return "unknown build";
  struct stat status;
  if (stat(info.dli_fname, &status) != 0)
    return info.dli_fname;
  return std::string(info.dli_fname) + " " + std::to_string(status.st_size) +
         " " + std::to_string(status.st_mtim.tv_sec) + "." +
         std::to_string(status.st_mtim.tv_nsec);
}

/// The kernel's temporaries come from the workspace, which reuses them:
/// its malloc and free, for the JIT to link kernels against.
static llvm::orc::SymbolMap
workspaceSymbols(llvm::orc::MangleAndInterner mangle) {
  llvm::orc::SymbolMap symbols;
  symbols[mangle("malloc")] = {
      llvm::orc::ExecutorAddr::fromPtr(&detail::workspaceAllocate),
      llvm::JITSymbolFlags::Exported};
  symbols[mangle("free")] = {
      llvm::orc::ExecutorAddr::fromPtr(&detail::workspaceFree),
      llvm::JITSymbolFlags::Exported};
  return symbols;
}

/// The symbol the JIT calls a kernel through: ExecutionEngine's packed
/// wrapper (`_mlir_` + the name) of the kernel's C interface.
std::string packedEntryPoint(llvm::StringRef kernelName) {
  return ("_mlir__mlir_ciface_" + kernelName).str();
}

/// Loads an object compiled (by CompiledKernel::compile) for this host and
/// returns its packed entry point, or an error.
llvm::Expected<void (*)(void **)>
loadObject(const std::vector<char> &object, bool threaded,
           const std::string &kernelName,
           std::unique_ptr<llvm::orc::LLJIT> &jit) {
  if (threaded)
    if (llvm::Error error = detail::loadOpenMPRuntime())
      return std::move(error);
  auto machineBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machineBuilder)
    return machineBuilder.takeError();
  auto created = llvm::orc::LLJITBuilder()
                     .setJITTargetMachineBuilder(std::move(*machineBuilder))
                     .create();
  if (!created)
    return created.takeError();
  jit = std::move(*created);
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit->getDataLayout().getGlobalPrefix());
  if (!process)
    return process.takeError();
  jit->getMainJITDylib().addGenerator(std::move(*process));
  llvm::orc::MangleAndInterner mangle(jit->getExecutionSession(),
                                      jit->getDataLayout());
  if (llvm::Error error = jit->getMainJITDylib().define(
          llvm::orc::absoluteSymbols(workspaceSymbols(mangle))))
    return std::move(error);
  if (llvm::Error error =
          jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
              llvm::StringRef(object.data(), object.size()), kernelName)))
    return std::move(error);
  if (llvm::Error error = jit->initialize(jit->getMainJITDylib()))
    return std::move(error);
  auto symbol = jit->lookup(packedEntryPoint(kernelName));
  if (!symbol)
    return symbol.takeError();
  return symbol->toPtr<void (*)(void **)>();
}

/// Memref descriptor of a static shape, as int64 words: allocated pointer,
/// aligned pointer, offset, sizes..., strides... (row-major, contiguous).
/// (A dynamic shape's sizes and strides are left 0, filled in per call.)
void appendDescriptor(std::vector<int64_t> &words, const Shape &shape) {
  words.push_back(0);
  words.push_back(0);
  words.push_back(0);
  if (llvm::is_contained(shape, kDynamicSize)) {
    words.insert(words.end(), 2 * shape.size(), 0);
    return;
  }
  words.insert(words.end(), shape.begin(), shape.end());
  Shape strides = rowMajorStrides(shape);
  words.insert(words.end(), strides.begin(), strides.end());
}
} // namespace

namespace {
/// Once per process: LLVM's host target (for code loaded from the disk
/// cache), and glibc's vector math library, which the optimizer may call
/// (where glibc has none, loops keep scalar libm calls).
void initializeNativeCodegen() {
  static std::once_flag nativeTarget;
  std::call_once(nativeTarget, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    libmvecLoaded =
        !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
  });
}
} // namespace

namespace {
/// Runs the CPU pipeline on `module` (up to `lastStage` when given), turning
/// its diagnostics into a CompileError about `what`.
void runCpuPipeline(mlir::ModuleOp module, const CompileOptions &options,
                    mlir::pk::CpuPipelineCache *pipelines,
                    const std::string &what, llvm::StringRef lastStage = {}) {
  DiagnosticCollector diagnostics(module.getContext());
  mlir::pk::CpuPipelineOptions pipeline;
  pipeline.parallelThreshold = options.parallelThreshold;
  // An empty std::function would make a callable function_ref.
  llvm::function_ref<void()> beforeStage = nullptr;
  if (options.checkInterrupt)
    beforeStage = options.checkInterrupt;
  if (mlir::failed(mlir::pk::runCpuPipeline(module, pipeline, beforeStage,
                                            lastStage, pipelines)))
    throw CompileError("compile: the CPU pipeline failed on " + what + ":\n" +
                       diagnostics.text());
}
} // namespace

/// After the pipeline's stages, what LLVM makes of the LLVM dialect for
/// this CPU, as the JIT makes it.
constexpr const char *kLLVMIRStage = "llvmir", *kAssemblyStage = "asm";

const std::vector<std::string> &stageNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = {"pk"};
    for (const std::string &stage : mlir::pk::cpuStageNames())
      all.push_back(stage);
    all.push_back(kLLVMIRStage);
    all.push_back(kAssemblyStage);
    return all;
  }();
  return names;
}

namespace {
/// The JIT's target machine: this CPU's, at `options`' level (a
/// CompileError from `what` if LLVM cannot make it).
std::unique_ptr<llvm::TargetMachine>
jitTargetMachine(const CompileOptions &options, const char *what) {
  mlir::pk::TargetMachineOptions host;
  host.optLevel = options.optLevel;
  host.jit = true;
  auto machine = mlir::pk::createTargetMachine(host);
  if (!machine)
    throw CompileError(
        std::string(what) +
        ": cannot create a target machine: " + errorText(machine.takeError()));
  return std::move(*machine);
}

/// `module`, in the LLVM dialect, optimized by LLVM for this CPU as the JIT
/// optimizes it (only the kernels' C interfaces, `entryPoints`, kept
/// external, the rest inlined into them): LLVM IR,
/// or (`assembly`) the host's assembly.
std::string machineCode(mlir::ModuleOp module, const CompileOptions &options,
                        llvm::ArrayRef<std::string> entryPoints,
                        bool assembly) {
  initializeNativeCodegen(); // libmvecLoaded, as for the JIT's code
  auto machine = jitTargetMachine(options, "lower");
  DiagnosticCollector diagnostics(module.getContext());
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> translated =
      mlir::pk::translateToLLVMIR(module, context, *machine);
  if (!translated)
    throw CompileError("lower: " + diagnostics.text());
  llvm::internalizeModule(*translated, [&](const llvm::GlobalValue &value) {
    return llvm::is_contained(entryPoints, value.getName().str());
  });
  mlir::pk::optimizeLLVMModule(*translated, *machine, options.optLevel,
                               libmvecLoaded);
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!assembly) {
    translated->print(os, nullptr);
    return text;
  }
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream out(buffer);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, out, nullptr,
                                   llvm::CodeGenFileType::AssemblyFile))
    throw CompileError("lower: LLVM cannot print this target's assembly");
  codegen.run(*translated);
  return std::string(buffer.str());
}
} // namespace

std::string lowerToStage(mlir::ModuleOp module, const std::string &stage,
                         const CompileOptions &options,
                         mlir::pk::CpuPipelineCache *pipelines) {
  const std::vector<std::string> &names = stageNames();
  auto last = std::find(names.begin(), names.end(), stage);
  if (last == names.end()) {
    std::string known;
    for (const std::string &name : names)
      known += (known.empty() ? "" : ", ") + name;
    throw CompileError("lower: unknown stage '" + stage +
                       "' (stages: " + known + ")");
  }
  mlir::pk::prepareContextForCompilation(*module.getContext());
  mlir::OwningOpRef<mlir::ModuleOp> copy(module.clone());
  bool machineStage = stage == kLLVMIRStage || stage == kAssemblyStage;
  std::vector<std::string> entryPoints;
  copy->walk([&](mlir::pk::KernelOp kernel) {
    // (ExecutionEngine's packed wrapper of it is the JIT's own.)
    entryPoints.push_back(("_mlir_ciface_" + kernel.getSymName()).str());
  });
  if (stage != names.front())
    runCpuPipeline(*copy, options, pipelines, "stage '" + stage + "'",
                   machineStage ? llvm::StringRef() : llvm::StringRef(stage));
  if (machineStage)
    return machineCode(*copy, options, entryPoints, stage == kAssemblyStage);
  std::string text;
  llvm::raw_string_ostream os(text);
  copy->print(os);
  return text;
}

std::string lowerToStage(const Module &module, const std::string &stage,
                         const CompileOptions &options) {
  if (!module)
    throw CompileError("lower: the module is empty (a kernel never traced)");
  return lowerToStage(irOf(module), stage, options);
}

/// The engine's object code. ExecutionEngine only writes it to a named
/// file, and an I/O error there (a full disk, a file-size limit) ends the
/// process (raw_fd_ostream's fatal error), so the file is a pipe that a
/// thread drains: nothing touches a disk, and nothing can fail to fit.
static std::vector<char> objectCodeOf(mlir::ExecutionEngine &engine) {
  int pipe[2];
  if (::pipe2(pipe, O_CLOEXEC) != 0)
    return {};
  std::vector<char> object;
  std::thread reader([&] {
    char buffer[1 << 16];
    for (;;) {
      ssize_t count = ::read(pipe[0], buffer, sizeof(buffer));
      if (count < 0 && errno == EINTR)
        continue;
      if (count <= 0)
        return;
      object.insert(object.end(), buffer, buffer + count);
    }
  });
  engine.dumpToObjectFile("/proc/self/fd/" + std::to_string(pipe[1]));
  ::close(pipe[1]); // the reader sees the end once the dump's copy closed
  reader.join();
  ::close(pipe[0]);
  return object;
}

/// Writes the engine's object code to the disk cache (best effort), with
/// one leading byte saying whether it needs the OpenMP runtime.
static void storeObject(DiskCache &disk, const std::string &key,
                        mlir::ExecutionEngine &engine, bool threaded) {
  std::vector<char> object = objectCodeOf(engine);
  if (object.empty())
    return;
  std::vector<char> entry;
  entry.reserve(object.size() + 1);
  entry.push_back(threaded ? 1 : 0);
  entry.insert(entry.end(), object.begin(), object.end());
  disk.store(key, entry);
}

CompiledKernel::~CompiledKernel() = default;

std::unique_ptr<CompiledKernel>
CompiledKernel::compile(mlir::ModuleOp module, const CompileOptions &options,
                        mlir::pk::CpuPipelineCache *pipelines) {
  initializeNativeCodegen();
  std::unique_ptr<CompiledKernel> compiled(new CompiledKernel());
  compiled->describe(module);
  for (const CompiledParam &param : compiled->params()) {
    if (llvm::is_contained(param.shape, kDynamicSize))
      compiled->dynamicParams.push_back(compiled->descriptorOffsets.size());
    compiled->descriptorOffsets.push_back(compiled->descriptorTemplate.size());
    appendDescriptor(compiled->descriptorTemplate, param.shape);
  }

  // A kernel compiled before, by this process or another, loads from disk.
  auto start = Clock::now();
  DiskCache *disk = DiskCache::fromEnvironment();
  std::string key;
  if (disk) {
    key = DiskCache::hash(cacheKeyText(module, options));
    if (std::optional<std::vector<char>> entry = disk->load(key)) {
      bool threaded = !entry->empty() && entry->front() == 1;
      std::vector<char> object(entry->begin() + (entry->empty() ? 0 : 1),
                               entry->end());
      auto loaded = loadObject(object, threaded, compiled->name(),
                               compiled->loadedObject);
      if (loaded) {
        compiled->entry = *loaded;
        compiled->threaded = threaded;
        compiled->fromDiskCache = true;
        compiled->compileTimes.codegenSeconds = secondsSince(start);
        return compiled;
      }
      // An entry this host cannot load is compiled again (and replaced).
      llvm::consumeError(loaded.takeError());
      compiled->loadedObject.reset();
    }
  }

  // pk -> LLVM dialect (the dialects it needs are loaded already in the
  // runtime's own contexts; a module from elsewhere gets them now).
  start = Clock::now();
  mlir::pk::prepareContextForCompilation(*module.getContext());
  // Stage by stage, so that an interrupt (Ctrl-C) is seen between them.
  runCpuPipeline(module, options, pipelines,
                 "kernel '" + compiled->name() + "'");
  compiled->compileTimes.pipelineSeconds = secondsSince(start);

  // LLVM dialect -> machine code for this CPU.
  start = Clock::now();
  compiled->threaded = false;
  module.walk([&](mlir::Operation *op) {
    if (llvm::isa<mlir::omp::OpenMPDialect>(op->getDialect()))
      compiled->threaded = true;
  });
  llvm::CodeGenOptLevel codegenLevel = options.optLevel >= 3
                                           ? llvm::CodeGenOptLevel::Aggressive
                                           : llvm::CodeGenOptLevel::Default;
  auto machine = jitTargetMachine(options, "compile");
  llvm::TargetMachine *target = machine.get();
  auto transformer = [&](llvm::Module *module) {
    // The packed C-interface wrapper is all the JIT calls: the kernel and
    // its other wrappers, made internal, are inlined into it and dropped
    // (each was a whole copy of a serial kernel's loops to optimize and
    // compile).
    std::string entryPoint = packedEntryPoint(compiled->name());
    llvm::internalizeModule(*module, [&](const llvm::GlobalValue &value) {
      return value.getName() == entryPoint;
    });
    mlir::pk::optimizeLLVMModule(*module, *target, options.optLevel,
                                 libmvecLoaded);
    return llvm::Error::success();
  };
  mlir::ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = codegenLevel;
  // (The runtime's symbols are then found in the process.)
  if (compiled->threaded)
    if (llvm::Error error = detail::loadOpenMPRuntime())
      throw CompileError("compile: kernel '" + compiled->name() +
                         "' runs on threads: " + errorText(std::move(error)));
  engineOptions.enableObjectDump = disk != nullptr;
  // PK_PERF=1: kernels by name in `perf report`, and in debuggers (LLVM's
  // perf and GDB JIT listeners).
  bool listeners = environmentSwitch("PK_PERF", false);
  engineOptions.enableGDBNotificationListener = listeners;
  engineOptions.enablePerfNotificationListener = listeners;
  auto engine =
      mlir::ExecutionEngine::create(module, engineOptions, std::move(machine));
  if (!engine)
    throw CompileError("compile: LLVM code generation failed for kernel '" +
                       compiled->name() +
                       "': " + errorText(engine.takeError()));
  compiled->engine = std::move(*engine);
  compiled->engine->registerSymbols(workspaceSymbols);
  auto entry =
      compiled->engine->lookupPacked("_mlir_ciface_" + compiled->name());
  if (!entry)
    throw CompileError("compile: kernel '" + compiled->name() +
                       "' has no entry point: " + errorText(entry.takeError()));
  compiled->entry = *entry;
  compiled->compileTimes.codegenSeconds = secondsSince(start);
  if (disk)
    storeObject(*disk, key, *compiled->engine, compiled->threaded);
  return compiled;
}

std::string CompiledKernel::cacheKeyText(mlir::ModuleOp module,
                                         const CompileOptions &options) {
  initializeNativeCodegen(); // libmvecLoaded
  // What does not change within a process, worked out once.
  static const std::string environment = [] {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "picokernel " << buildIdentity() << "\nLLVM " << LLVM_VERSION_STRING
       << "\nhost " << llvm::sys::getProcessTriple() << " "
       << llvm::sys::getHostCPUName() << "\n";
    std::vector<std::string> features;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      if (feature.second)
        features.push_back(feature.first().str());
    llvm::sort(features);
    os << llvm::join(features, ",") << "\nlibmvec " << libmvecLoaded << "\n";
    return text;
  }();
  std::string text = environment;
  llvm::raw_string_ostream os(text);
  os << "options opt=" << options.optLevel
     << " parallel=" << options.parallelThreshold << "\n";
  // The kernel itself, without locations (a kernel moved to another line of
  // the user's file is the same kernel).
  module.print(os, mlir::OpPrintingFlags().printGenericOpForm());
  return text;
}

void CompiledKernel::run(void *const *data,
                         const int64_t *const *shapes) const {
  constexpr size_t kInline = 128;
  llvm::SmallVector<int64_t, kInline> words(descriptorTemplate.begin(),
                                            descriptorTemplate.end());
  size_t count = signature.params.size();
  llvm::SmallVector<void *, 16> descriptors, arguments;
  descriptors.resize_for_overwrite(count);
  arguments.resize_for_overwrite(count);
  for (size_t i = 0; i < count; ++i) {
    int64_t *descriptor = words.data() + descriptorOffsets[i];
    auto pointer = reinterpret_cast<int64_t>(data[i]);
    descriptor[0] = pointer; // allocated
    descriptor[1] = pointer; // aligned
    descriptors[i] = descriptor;
    // The packed wrapper takes the address of each argument of
    // `_mlir_ciface_<name>(descriptor *...)`.
    arguments[i] = &descriptors[i];
  }
  for (size_t i : dynamicParams) {
    // Sizes, then row-major strides.
    size_t rank = signature.params[i].shape.size();
    int64_t *sizes = words.data() + descriptorOffsets[i] + 3;
    int64_t stride = 1;
    for (size_t d = rank; d-- > 0;) {
      sizes[d] = shapes[i][d];
      sizes[rank + d] = stride;
      stride *= shapes[i][d];
    }
  }
  entry(arguments.data());
}

} // namespace pk
