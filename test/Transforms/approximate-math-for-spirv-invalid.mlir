// GLSL has no float64 transcendental functions: each one is an error at
// the user's line that says so.
// RUN: pk-opt %s --pk-approximate-math-for-spirv --split-input-file --verify-diagnostics

func.func @erf_f64(%x: f64) -> f64 {
  // expected-error@+1 {{float64 erf is not available on Vulkan (GLSL has no float64 exp, log, sin, cos, tanh, pow or erf): compute in float32, or use the CPU backend}}
  %0 = math.erf %x : f64
  return %0 : f64
}

// -----

func.func @exp_f64(%x: vector<4xf64>) -> vector<4xf64> {
  // expected-error@+1 {{float64 exp is not available on Vulkan}}
  %0 = math.exp %x : vector<4xf64>
  return %0 : vector<4xf64>
}

// -----

func.func @pow_f64(%x: f64, %y: f64) -> f64 {
  // expected-error@+1 {{float64 powf is not available on Vulkan}}
  %0 = math.powf %x, %y : f64
  return %0 : f64
}
