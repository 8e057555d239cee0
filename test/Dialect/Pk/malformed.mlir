// Malformed input makes pk-opt exit non-zero with a diagnostic pointing at
// the problem; it never crashes (`not` fails on a crash).
// RUN: split-file %s %t
// RUN: not pk-opt %t/unterminated.mlir 2>&1 | FileCheck %s --check-prefix=UNTERMINATED
// RUN: not pk-opt %t/unknown_op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not pk-opt %t/bad_type.mlir 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not pk-opt %t/bad_operand.mlir 2>&1 | FileCheck %s --check-prefix=OPERAND
// RUN: not pk-opt %t/wrong_format.mlir 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: printf '\000\377\376garbage' | not pk-opt 2>&1 | FileCheck %s --check-prefix=BINARY
// RUN: not pk-opt %t/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

//--- unterminated.mlir
pk.kernel @k(%o: !pk.ref<4xf32>) {
  %0 = pk.load %o : !pk.ref<4xf32> -> tensor<4xf32>
// UNTERMINATED: unterminated.mlir:{{[0-9]+}}:{{[0-9]+}}: error:

//--- unknown_op.mlir
pk.kernel @k(%o: !pk.ref<4xf32>) {
  %0 = pk.frobnicate %o : !pk.ref<4xf32>
  pk.return
}
// UNKNOWN: unknown_op.mlir:2:8: error: custom op 'pk.frobnicate' is unknown

//--- bad_type.mlir
pk.kernel @k(%o: !pk.ref<4xf32) {
  pk.return
}
// TYPE: bad_type.mlir:1:25: error: unbalanced '<' character in pretty dialect name

//--- bad_operand.mlir
pk.kernel @k(%o: !pk.ref<4xf32>) {
  %0 = pk.load %missing : !pk.ref<4xf32> -> tensor<4xf32>
  pk.store %0, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}
// OPERAND: bad_operand.mlir:2:16: error: use of undeclared SSA value name

//--- wrong_format.mlir
pk.kernel @k(%o: !pk.ref<4xf32>) {
  %0 = pk.load %o : tensor<4xf32>
  pk.return
}
// FORMAT: wrong_format.mlir:2:34: error: expected '->'

// BINARY: error:
// MISSING: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory
