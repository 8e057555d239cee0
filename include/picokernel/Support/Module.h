//===- Module.h - a traced kernel's IR, held for the caller ----*- C++ -*-===//
//
// What pk::trace and pk::Kernel::trace give back: the `pk` MLIR module of a
// traced kernel, owned by a pk::Module that embedders pass on to the
// functions that print (pk::printModule, pk::listing), lower
// (pk::lowerToStage) or compile it ahead of time (pk::compileToObject)
// without including MLIR. picokernel's own layers reach the IR through
// Support/ModuleIR.h.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_MODULE_H
#define PICOKERNEL_SUPPORT_MODULE_H

#include <memory>
#include <string>

namespace pk {

namespace detail {
struct ModuleStorage;
struct ModuleAccess;
} // namespace detail

/// A traced kernel's IR: a module holding one `pk.kernel`. Movable, not
/// copyable; an empty Module (default-constructed, moved from, or a kernel
/// never compiled) is false.
class Module {
public:
  Module();
  ~Module();
  Module(Module &&) noexcept;
  Module &operator=(Module &&) noexcept;

  explicit operator bool() const;

private:
  friend struct detail::ModuleAccess;
  std::unique_ptr<detail::ModuleStorage> storage;
};

/// The module as MLIR text, parameters named as in the signature; an empty
/// Module is an empty string.
std::string printModule(const Module &module, bool withLocations = false);

} // namespace pk

#endif // PICOKERNEL_SUPPORT_MODULE_H
