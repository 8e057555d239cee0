// SPIR-V kernels keep IEEE float semantics: SignedZeroInfNanPreserve for
// the given widths, NoContraction on float arithmetic, float zeros read
// from a push constant (drivers fold x * 0.0 and x + 0.0 otherwise) and
// division by a constant zero as multiplication by an infinity.
// RUN: pk-opt %s --pass-pipeline='builtin.module(spirv.module(pk-ieee-floats-for-spirv{widths=16,32}))' | FileCheck %s
// RUN: pk-opt %s --pass-pipeline='builtin.module(spirv.module(pk-ieee-floats-for-spirv))' | FileCheck %s --check-prefix=NONE

// CHECK: spirv.GlobalVariable @__pk_float_zero : !spirv.ptr<!spirv.struct<(f32 [0])>, PushConstant>
// CHECK-LABEL: spirv.func @kernel
// CHECK: %[[ADDRESS:.*]] = spirv.mlir.addressof @__pk_float_zero
// CHECK: %[[POINTER:.*]] = spirv.AccessChain %[[ADDRESS]]
// CHECK: %[[ZERO:.*]] = spirv.Load "PushConstant" %[[POINTER]] : f32
// CHECK: %[[MINUS_ZERO:.*]] = spirv.FNegate %[[ZERO]]
// CHECK: %[[X:.*]] = spirv.Load "StorageBuffer"
// CHECK: %[[P:.*]] = spirv.FMul %[[X]], %[[ZERO]] {no_contraction} : f32
// CHECK: %[[S:.*]] = spirv.FAdd %[[P]], %[[MINUS_ZERO]] {no_contraction} : f32
// CHECK: %[[INF:.*]] = spirv.Constant 0x7F800000 : f32
// CHECK: spirv.FMul %[[S]], %[[INF]] {no_contraction} : f32
// CHECK-NOT: spirv.FDiv
// CHECK: spirv.ExecutionMode @kernel "SignedZeroInfNanPreserve", 16
// CHECK: spirv.ExecutionMode @kernel "SignedZeroInfNanPreserve", 32
// NONE-NOT: SignedZeroInfNanPreserve
spirv.module Logical GLSL450 {
  spirv.GlobalVariable @buffer bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.array<4 x f32, stride=4> [0])>, StorageBuffer>
  spirv.func @kernel() "None" {
    %zero = spirv.Constant 0.0 : f32
    %minus_zero = spirv.Constant -0.0 : f32
    %c0 = spirv.Constant 0 : i32
    %address = spirv.mlir.addressof @buffer : !spirv.ptr<!spirv.struct<(!spirv.array<4 x f32, stride=4> [0])>, StorageBuffer>
    %pointer = spirv.AccessChain %address[%c0, %c0] : !spirv.ptr<!spirv.struct<(!spirv.array<4 x f32, stride=4> [0])>, StorageBuffer>, i32, i32 -> !spirv.ptr<f32, StorageBuffer>
    %x = spirv.Load "StorageBuffer" %pointer : f32
    %p = spirv.FMul %x, %zero : f32
    %s = spirv.FAdd %p, %minus_zero : f32
    %q = spirv.FDiv %s, %zero : f32
    spirv.Store "StorageBuffer" %pointer, %q : f32
    spirv.Return
  }
  spirv.EntryPoint "GLCompute" @kernel
  spirv.ExecutionMode @kernel "LocalSize", 1, 1, 1
}
