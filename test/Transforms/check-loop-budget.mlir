// One thread's loop iterations, counted over all its loops, against the
// device's limit (llvmpipe stops a thread after 65535 and keeps its partial
// result): more is an error, exactly the limit passes, no limit checks
// nothing.
// RUN: pk-opt %s --pk-check-loop-budget=max-iterations=65535 --split-input-file --verify-diagnostics
// RUN: pk-opt %s --pk-check-loop-budget --split-input-file | FileCheck %s --check-prefix=NOLIMIT

// NOLIMIT-LABEL: func.func @long_sum
// expected-error@+1 {{runs 70000 loop iterations in one GPU thread; this device stops a thread after 65535 and would return a partial result: run this kernel on the CPU backend}}
func.func @long_sum(%a: memref<70000xf32>, %o: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 70000 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %a[%i] : memref<70000xf32>
    %y = arith.addf %acc, %x : f32
    scf.yield %y : f32
  }
  memref.store %s, %o[] : memref<f32>
  return
}

// -----

// Exactly the limit: 65535 iterations (a step of 2 over 131070).
// NOLIMIT-LABEL: func.func @at_the_limit
func.func @at_the_limit(%a: memref<131070xf32>, %o: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = arith.constant 131070 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %n step %c2 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %a[%i] : memref<131070xf32>
    %y = arith.addf %acc, %x : f32
    scf.yield %y : f32
  }
  memref.store %s, %o[] : memref<f32>
  return
}

// -----

// Nested loops count the outer iterations, all the inner ones and each exit
// of the inner loop (256 * (1 + 256 + 1) = 66048), and the loops one after
// another add up (two loops of 40000 each, and the first one's exit): the
// budget is the thread's, not a loop's.
// expected-error@+1 {{runs 66048 loop iterations in one GPU thread}}
func.func @nested(%a: memref<256x256xf32>, %o: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c256 step %c1 iter_args(%acc = %zero) -> (f32) {
    %r = scf.for %j = %c0 to %c256 step %c1 iter_args(%in = %acc) -> (f32) {
      %x = memref.load %a[%i, %j] : memref<256x256xf32>
      %y = arith.addf %in, %x : f32
      scf.yield %y : f32
    }
    scf.yield %r : f32
  }
  memref.store %s, %o[] : memref<f32>
  return
}

// -----

// expected-error@+1 {{runs 80001 loop iterations in one GPU thread}}
func.func @in_sequence(%a: memref<40000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 40000 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    memref.store %zero, %a[%i] : memref<40000xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    memref.store %zero, %a[%i] : memref<40000xf32>
  }
  return
}

// -----

// Of two branches the longer one counts.
// expected-error@+1 {{runs 70000 loop iterations in one GPU thread}}
func.func @branches(%a: memref<70000xf32>, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %n = arith.constant 70000 : index
  %zero = arith.constant 0.0 : f32
  scf.if %c {
    scf.for %i = %c0 to %c10 step %c1 {
      memref.store %zero, %a[%i] : memref<70000xf32>
    }
  } else {
    scf.for %i = %c0 to %n step %c1 {
      memref.store %zero, %a[%i] : memref<70000xf32>
    }
  }
  return
}

// -----

func.func @dynamic(%a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %zero = arith.constant 0.0 : f32
  // expected-error@+1 {{a loop without a constant trip count cannot be checked against the device's limit of 65535 loop iterations per thread}}
  scf.for %i = %c0 to %n step %c1 {
    memref.store %zero, %a[%i] : memref<?xf32>
  }
  return
}

// -----

// A dynamic loop whose builder recorded its most iterations (fmod's loop
// over quotient bits) counts with them: 300 * (1 + 300 + 1) = 90600.
// expected-error@+1 {{runs 90600 loop iterations in one GPU thread}}
func.func @recorded(%a: memref<300xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c300 = arith.constant 300 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c300 step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      memref.store %zero, %a[%j] : memref<300xf32>
    } {pk.max_trip_count = 300 : i64}
  }
  return
}

// -----

// The largest sum of rows llvmpipe computes whole: 255 rows of 255 (255 *
// (1 + 255 + 1) = 65535); 255 rows of 256 came out short on the device.
// NOLIMIT-LABEL: func.func @nested_at_the_limit
func.func @nested_at_the_limit(%a: memref<255x255xf32>, %o: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c255 = arith.constant 255 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c255 step %c1 iter_args(%acc = %zero) -> (f32) {
    %r = scf.for %j = %c0 to %c255 step %c1 iter_args(%in = %acc) -> (f32) {
      %x = memref.load %a[%i, %j] : memref<255x255xf32>
      %y = arith.addf %in, %x : f32
      scf.yield %y : f32
    }
    scf.yield %r : f32
  }
  memref.store %s, %o[] : memref<f32>
  return
}

// -----

// expected-error@+1 {{runs 65790 loop iterations in one GPU thread}}
func.func @nested_past_the_limit(%a: memref<255x256xf32>, %o: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c255 = arith.constant 255 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c255 step %c1 iter_args(%acc = %zero) -> (f32) {
    %r = scf.for %j = %c0 to %c256 step %c1 iter_args(%in = %acc) -> (f32) {
      %x = memref.load %a[%i, %j] : memref<255x256xf32>
      %y = arith.addf %in, %x : f32
      scf.yield %y : f32
    }
    scf.yield %r : f32
  }
  memref.store %s, %o[] : memref<f32>
  return
}
