// pk-translate --pk-to-listing prints kernels in the seed post's style.
// RUN: pk-translate --pk-to-listing %s | FileCheck %s
// RUN: echo 'module {}' | not pk-translate --pk-to-listing 2>&1 | FileCheck %s --check-prefix=EMPTY

// Parameter names come from the NameLocs the tracers attach.
// CHECK-LABEL: kernel fma(a, b, c, o):
// CHECK-NEXT:   v0<4:float32> = LOAD [a]()
// CHECK-NEXT:   v1<4:float32> = LOAD [b]()
// CHECK-NEXT:   v2<4:float32> = MUL(v0, v1)
// CHECK-NEXT:   v3<4:float32> = LOAD [c]()
// CHECK-NEXT:   v4<4:float32> = ADD(v2, v3)
// CHECK-NEXT:   STORE [o](v4)
pk.kernel @fma(%a: !pk.ref<4xf32> loc("a"), %b: !pk.ref<4xf32> loc("b"),
               %c: !pk.ref<4xf32> loc("c"), %o: !pk.ref<4xf32> loc("o")) {
  %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
  %1 = pk.load %b : !pk.ref<4xf32> -> tensor<4xf32>
  %2 = pk.mul %0, %1 : tensor<4xf32>
  %3 = pk.load %c : !pk.ref<4xf32> -> tensor<4xf32>
  %4 = pk.add %2, %3 : tensor<4xf32>
  pk.store %4, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// Without names the parameters are argN; every op kind has its mnemonic.
// CHECK-LABEL: kernel all_ops(arg0, arg1, arg2):
// CHECK-NEXT:   v0<2,3:float64> = LOAD [arg0]()
// CHECK-NEXT:   v1<3:float64> = LOAD [arg1]()
// CHECK-NEXT:   v2<2,3:float64> = BROADCAST(v1)
// CHECK-NEXT:   v3<2,3:float64> = SUB(v0, v2)
// CHECK-NEXT:   v4<2,3:float64> = NEG(v3)
// CHECK-NEXT:   v5<3:float64> = CONST([1.0, 2.5, -3.0])
// CHECK-NEXT:   v6<2:float64> = MATMUL(v4, v5)
// CHECK-NEXT:   v7<:float64> = CONST(0.5)
// CHECK-NEXT:   v8<2:float64> = TRUEDIV(v6, v7)
// CHECK-NEXT:   v9<2:float32> = CAST(v8)
// CHECK-NEXT:   STORE [arg2](v9)
pk.kernel @all_ops(%x: !pk.ref<2x3xf64>, %v: !pk.ref<3xf64>, %o: !pk.ref<2xf32>) {
  %0 = pk.load %x : !pk.ref<2x3xf64> -> tensor<2x3xf64>
  %1 = pk.load %v : !pk.ref<3xf64> -> tensor<3xf64>
  %2 = pk.broadcast %1 : tensor<3xf64> -> tensor<2x3xf64>
  %3 = pk.sub %0, %2 : tensor<2x3xf64>
  %4 = pk.neg %3 : tensor<2x3xf64>
  %5 = pk.constant dense<[1.0, 2.5, -3.0]> : tensor<3xf64>
  %6 = pk.matmul %4, %5 : tensor<2x3xf64>, tensor<3xf64> -> tensor<2xf64>
  %7 = pk.constant dense<0.5> : tensor<2xf64>
  %8 = pk.div %6, %7 : tensor<2xf64>
  %9 = pk.cast %8 : tensor<2xf64> -> tensor<2xf32>
  pk.store %9, %o : tensor<2xf32> -> !pk.ref<2xf32>
  pk.return
}

// Long constants are abbreviated; booleans and scalars read naturally.
// CHECK-LABEL: kernel constants(arg0, arg1):
// CHECK-NEXT:   v0<10:int32> = CONST([0, 1, 2, 3, 4, 5, 6, 7, ...])
// CHECK-NEXT:   STORE [arg0](v0)
// CHECK-NEXT:   v1<:bool> = CONST(true)
// CHECK-NEXT:   STORE [arg1](v1)
pk.kernel @constants(%o: !pk.ref<10xi32>, %m: !pk.ref<i1>) {
  %0 = pk.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]> : tensor<10xi32>
  pk.store %0, %o : tensor<10xi32> -> !pk.ref<10xi32>
  %1 = pk.constant dense<true> : tensor<i1>
  pk.store %1, %m : tensor<i1> -> !pk.ref<i1>
  pk.return
}

// EMPTY: error: no pk.kernel to list

// Dynamic sizes print as `?`; pk.dim names its dimension.
// CHECK-LABEL: kernel dynamic(x, o):
// CHECK-NEXT:   v0<index> = DIM(x)[0]
// CHECK-NEXT:   v1<?,4:float32> = LOAD [x]()
// CHECK-NEXT:   v2<:float32> = CONST(2.0)
// CHECK-NEXT:   v3<?,4:float32> = BROADCAST(v2, v0)
// CHECK-NEXT:   v4<?,4:float32> = MUL(v1, v3)
// CHECK-NEXT:   STORE [o](v4)
pk.kernel @dynamic(%x: !pk.ref<?x4xf32> loc("x"), %o: !pk.ref<?x4xf32> loc("o")) {
  %n = pk.dim %x[0] : !pk.ref<?x4xf32>
  %0 = pk.load %x : !pk.ref<?x4xf32> -> tensor<?x4xf32>
  %1 = pk.constant dense<2.0> : tensor<f32>
  %2 = pk.broadcast %1 sizes(%n) : tensor<f32> -> tensor<?x4xf32>
  %3 = pk.mul %0, %2 : tensor<?x4xf32>
  pk.store %3, %o : tensor<?x4xf32> -> !pk.ref<?x4xf32>
  pk.return
}

// A slice of a dimension that varies counts its elements from the size.
// CHECK-LABEL: kernel stencil(arg0, arg1):
// CHECK-NEXT:   v0<index> = DIM(arg0)[0]
// CHECK-NEXT:   v1<index> = SLICE_SIZE(v0)[2::1]
// CHECK-NEXT:   v2<?:float32> = LOAD [arg0]()
// CHECK-NEXT:   v3<?:float32> = SLICE(v2)[0:0+v1]
// CHECK-NEXT:   v4<?:float32> = SLICE(v2)[2:2+v1]
// CHECK-NEXT:   v5<?:float32> = ADD(v3, v4)
// CHECK-NEXT:   v6<?:float32> = LOAD [arg1]()
// CHECK-NEXT:   v7<?:float32> = INSERT_SLICE(v5, v6)[1:1+v1]
// CHECK-NEXT:   STORE [arg1](v7)
pk.kernel @stencil(%x: !pk.ref<?xf32>, %o: !pk.ref<?xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %m = pk.slice_size %n offset 2 step 1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %l = pk.extract_slice %v offsets [0] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  %r = pk.extract_slice %v offsets [2] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  %s = pk.add %l, %r : tensor<?xf32>
  %w = pk.load %o : !pk.ref<?xf32> -> tensor<?xf32>
  %i = pk.insert_slice %s into %w offsets [1] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  pk.store %i, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}
