//===- Arguments.cpp - a kernel call's arguments as arrays ----------------===//

#include "Arguments.h"

// (Every unit that casts std::string includes its caster: one definition.)
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>

namespace nb = nanobind;

namespace pk::python {

nb::args bindKeywords(const std::string &name,
                      const std::vector<std::string> &paramNames,
                      nb::handle args, nb::handle kwargs) {
  auto positional = nb::borrow<nb::tuple>(args);
  size_t count = paramNames.size();
  std::string names;
  for (const std::string &param : paramNames)
    names += (names.empty() ? "" : ", ") + param;
  if (positional.size() > count)
    throw nb::type_error((name + "() takes " + std::to_string(count) +
                          " arrays (" + names + "), got " +
                          std::to_string(positional.size()) + " positional")
                             .c_str());
  std::vector<nb::object> slots(count);
  for (size_t i = 0; i < positional.size(); ++i)
    slots[i] = nb::borrow(positional[i]);
  for (auto [key, value] : nb::borrow<nb::dict>(kwargs)) {
    if (!nb::isinstance<nb::str>(key))
      throw nb::type_error((name + "() keywords must be strings").c_str());
    std::string keyword = nb::cast<std::string>(key);
    auto found = std::find(paramNames.begin(), paramNames.end(), keyword);
    if (found == paramNames.end())
      throw nb::type_error((name + "() got an unexpected keyword argument '" +
                            keyword + "' (its arrays: " + names + ")")
                               .c_str());
    nb::object &slot = slots[found - paramNames.begin()];
    if (slot.is_valid())
      throw nb::type_error(
          (name + "() got multiple values for argument '" + keyword + "'")
              .c_str());
    slot = nb::borrow(value);
  }
  nb::list ordered;
  for (size_t i = 0; i < count; ++i) {
    if (!slots[i].is_valid())
      throw nb::type_error((name + "() missing the array '" + paramNames[i] +
                            "' (its arrays: " + names + ")")
                               .c_str());
    ordered.append(slots[i]);
  }
  return nb::borrow<nb::args>(nb::tuple(ordered));
}

nb::object asArray(nb::handle value, const std::string &param) {
  nb::object numpy = nb::module_::import_("numpy");
  try {
    if (!nb::hasattr(value, "__array__") && nb::hasattr(value, "__dlpack__"))
      return numpy.attr("from_dlpack")(value);
    return numpy.attr("asarray")(value);
  } catch (nb::python_error &error) {
    throw nb::type_error(("argument '" + param +
                          "' must be an array or "
                          "convertible to one (a number, a list, an object "
                          "with __array__ or __dlpack__); NumPy could not "
                          "convert " +
                          nb::cast<std::string>(nb::type_name(value.type())) +
                          ": " + error.what())
                             .c_str());
  }
}

} // namespace pk::python
