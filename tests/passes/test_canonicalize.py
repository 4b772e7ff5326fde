"""canonicalize, cse, dce, combine, reorder-broadcast and LICM on small TTIR snippets."""

from __future__ import annotations

import pytest
from filecheck import filecheck
from pass_helpers import func, run


def test_filecheck_helper():
    text = "a one\nb two\nc three\nd four"
    filecheck(text, "CHECK: one\nCHECK-NEXT: two\nCHECK-NOT: nine\nCHECK: {{f[o]+ur}}")
    for bad in (
        "CHECK: five",
        "CHECK: one\nCHECK-NEXT: three",
        "CHECK: one\nCHECK-NOT: two\nCHECK: three",
        "CHECK: three\nCHECK-NOT: four",
    ):
        with pytest.raises(AssertionError):
            filecheck(text, bad)


def test_fold_integer_and_float_constants():
    body = """
    %a = arith.constant 6 : i32
    %b = arith.constant 7 : i32
    %m = arith.muli %a, %b : i32
    %d = arith.divsi %m, %a : i32
    %r = arith.remsi %m, %b : i32
    %big = arith.constant 2147483647 : i32
    %w = arith.addi %big, %b : i32
    %x = arith.constant dense<3> : tensor<8xi32>
    %y = arith.constant dense<5> : tensor<8xi32>
    %z = arith.subi %x, %y : tensor<8xi32>
    %f = arith.constant 1.000000e-01 : f32
    %g = arith.addf %f, %f : f32
    %c = arith.cmpi slt, %x, %y : tensor<8xi32>
    %p = tt.splat %q : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    tt.store %p, %z : tensor<8x!tt.ptr<i32>>
    %pb = tt.splat %qb : !tt.ptr<i1> -> tensor<8x!tt.ptr<i1>>
    tt.store %pb, %c : tensor<8x!tt.ptr<i1>>
    %pf = tt.splat %qf : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %gs = tt.splat %g : f32 -> tensor<8xf32>
    tt.store %pf, %gs : tensor<8x!tt.ptr<f32>>
    %ps = tt.splat %qs : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %v = tt.splat %m : i32 -> tensor<8xi32>
    %v2 = tt.splat %d : i32 -> tensor<8xi32>
    %v3 = tt.splat %r : i32 -> tensor<8xi32>
    %v4 = tt.splat %w : i32 -> tensor<8xi32>
    %s1 = arith.addi %v, %v2 : tensor<8xi32>
    %s2 = arith.addi %v3, %v4 : tensor<8xi32>
    tt.store %ps, %s1 : tensor<8x!tt.ptr<i32>>
    tt.store %ps, %s2 : tensor<8x!tt.ptr<i32>>
    """
    args = "%q: !tt.ptr<i32>, %qb: !tt.ptr<i1>, %qf: !tt.ptr<f32>, %qs: !tt.ptr<i32>"
    _, text = run(func(body, args), ["canonicalize"])
    filecheck(
        text,
        """
        CHECK-NOT: arith.muli
        CHECK-NOT: arith.addf
        CHECK: tt.return
        """,
    )
    # 42 + 7 = 49 and 42 % 7 + (2^31 - 1 + 7 wraps) = 0 + -2147483642
    assert "dense<-2> : tensor<8xi32>" in text
    assert "dense<true> : tensor<8xi1>" in text
    assert "dense<49> : tensor<8xi32>" in text
    assert "dense<-2147483642> : tensor<8xi32>" in text
    # f32 0.1 + 0.1 rounded to f32, not computed in double
    assert "dense<2.000000e-01> : tensor<8xf32>" in text
    assert "arith.divsi" not in text and "arith.remsi" not in text


def test_identities_and_shape_ops():
    body = """
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant dense<1> : tensor<8xi32>
    %z = tt.splat %c0 : i32 -> tensor<8xi32>
    %offs = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %a = arith.addi %offs, %z : tensor<8xi32>
    %b = arith.muli %c1, %a : tensor<8xi32>
    %c = arith.muli %b, %z : tensor<8xi32>
    %d = arith.ori %b, %c : tensor<8xi32>
    %p2 = tt.addptr %p, %c0 : !tt.ptr<i32>, i32
    %ps = tt.splat %p2 : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %pp = tt.addptr %ps, %d : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    %s = tt.splat %n : i32 -> tensor<1x8xi32>
    %e = tt.expand_dims %s {axis = 0 : i32} : tensor<1x8xi32> -> tensor<1x1x8xi32>
    %br = tt.broadcast %e : tensor<1x1x8xi32> -> tensor<4x1x8xi32>
    %same = tt.broadcast %br : tensor<4x1x8xi32> -> tensor<4x1x8xi32>
    %fx = arith.constant dense<1.000000e+00> : tensor<8xf32>
    %v = tt.load %pp : tensor<8x!tt.ptr<i32>>
    %vf = arith.sitofp %v : tensor<8xi32> to tensor<8xf32>
    %vf2 = arith.mulf %vf, %fx : tensor<8xf32>
    %q2 = tt.splat %q : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    tt.store %q2, %vf2 : tensor<8x!tt.ptr<f32>>
    %q3 = tt.splat %qi : !tt.ptr<i32> -> tensor<4x1x8x!tt.ptr<i32>>
    tt.store %q3, %same : tensor<4x1x8x!tt.ptr<i32>>
    """
    args = "%p: !tt.ptr<i32>, %n: i32, %q: !tt.ptr<f32>, %qi: !tt.ptr<i32>"
    _, text = run(func(body, args), ["canonicalize"])
    filecheck(
        text,
        """
        CHECK: %offs = tt.make_range
        CHECK-NEXT: tt.splat %p : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
        CHECK-NEXT: tt.addptr {{%\\w+}}, %offs
        CHECK-NEXT: %br = tt.splat %n : i32 -> tensor<4x1x8xi32>
        CHECK-NEXT: tt.load
        CHECK-NEXT: %vf = arith.sitofp
        CHECK-NOT: arith.mulf
        CHECK: tt.store {{%\\w+}}, %vf
        CHECK-NOT: tt.broadcast
        CHECK-NOT: tt.expand_dims
        CHECK: tt.store {{%\\w+}}, %br
        """,
    )


def test_masks_and_select():
    body = """
    %t = arith.constant dense<true> : tensor<8xi1>
    %f = arith.constant dense<false> : tensor<8xi1>
    %o = arith.constant dense<2.000000e+00> : tensor<8xf32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %a = tt.load %ps, %t, %o : tensor<8x!tt.ptr<f32>>
    %b = tt.load %ps, %f, %o : tensor<8x!tt.ptr<f32>>
    %c = arith.select %t, %a, %b : tensor<8xi1>, tensor<8xf32>
    %d = arith.select %m, %c, %c : tensor<8xf32>
    tt.store %ps, %d, %t : tensor<8x!tt.ptr<f32>>
    tt.store %ps, %b, %f : tensor<8x!tt.ptr<f32>>
    """
    _, text = run(func(body, "%p: !tt.ptr<f32>, %m: i1"), ["canonicalize"])
    filecheck(
        text,
        """
        CHECK: %a = tt.load %ps : tensor<8x!tt.ptr<f32>>
        CHECK-NEXT: tt.store %ps, %a : tensor<8x!tt.ptr<f32>>
        CHECK-NEXT: tt.return
        """,
    )


def test_scalar_xdsl_patterns_and_zero_trip_loop():
    body = """
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %x = arith.addi %n, %c0 : i32
    %r = scf.for %i = %c0 to %c0 step %c1 iter_args(%a = %x) -> (i32) : i32 {
      %a2 = arith.addi %a, %c1 : i32
      scf.yield %a2 : i32
    }
    %ps = tt.splat %p : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %v = tt.splat %r : i32 -> tensor<8xi32>
    tt.store %ps, %v : tensor<8x!tt.ptr<i32>>
    """
    _, text = run(func(body, "%p: !tt.ptr<i32>, %n: i32"), ["canonicalize"])
    filecheck(
        text,
        """
        CHECK-NOT: scf.for
        CHECK: tt.splat %n : i32 -> tensor<8xi32>
        """,
    )


def test_cse_merges_and_keeps_stores_and_volatile_loads():
    body = """
    %a = tt.splat %n : i32 -> tensor<8xi32>
    %b = tt.splat %n : i32 -> tensor<8xi32>
    %s = arith.addi %a, %b : tensor<8xi32>
    %ps = tt.splat %p : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %l1 = tt.load %ps : tensor<8x!tt.ptr<i32>>
    %l2 = tt.load %ps : tensor<8x!tt.ptr<i32>>
    %v1 = tt.load %ps {isVolatile = true} : tensor<8x!tt.ptr<i32>>
    %v2 = tt.load %ps {isVolatile = true} : tensor<8x!tt.ptr<i32>>
    %t = arith.addi %l1, %l2 : tensor<8xi32>
    %u = arith.addi %v1, %v2 : tensor<8xi32>
    tt.store %ps, %s : tensor<8x!tt.ptr<i32>>
    tt.store %ps, %t : tensor<8x!tt.ptr<i32>>
    tt.store %ps, %u : tensor<8x!tt.ptr<i32>>
    %l3 = tt.load %ps : tensor<8x!tt.ptr<i32>>
    tt.store %ps, %l3 : tensor<8x!tt.ptr<i32>>
    %unused = tt.load %ps {isVolatile = true} : tensor<8x!tt.ptr<i32>>
    """
    _, text = run(func(body, "%p: !tt.ptr<i32>, %n: i32"), ["cse", "dce"])
    assert text.count("tt.splat %n") == 1
    assert text.count("arith.addi %a, %a") == 1
    assert text.count("arith.addi %l1, %l1") == 1  # two plain loads, no write between
    assert text.count("isVolatile = true") == 3  # volatile loads are never merged or dropped
    assert text.count("tt.store") == 4
    # a load after a store is not merged with the one before it
    filecheck(text, "CHECK: tt.store %ps, %u\nCHECK-NEXT: %l3 = tt.load %ps")


def test_dce_erases_unused_pure_ops_and_loads():
    body = """
    %a = tt.splat %n : i32 -> tensor<8xi32>
    %b = arith.addi %a, %a : tensor<8xi32>
    %ps = tt.splat %p : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %l = tt.load %ps : tensor<8x!tt.ptr<i32>>
    %m = arith.cmpi slt, %a, %a : tensor<8xi32>
    tt.assert %m, "boom" : tensor<8xi1>
    """
    _, text = run(func(body, "%p: !tt.ptr<i32>, %n: i32"), ["dce"])
    filecheck(
        text,
        """
        CHECK: %a = tt.splat %n
        CHECK-NOT: arith.addi
        CHECK-NOT: tt.load
        CHECK: arith.cmpi
        CHECK-NEXT: tt.assert
        """,
    )


def test_combine_dot_add_and_select_load():
    body = """
    %z = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
    %pa = tt.splat %p : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
    %a = tt.load %pa : tensor<16x16x!tt.ptr<f32>>
    %acc = tt.load %pa : tensor<16x16x!tt.ptr<f32>>
    %d = tt.dot %a, %a, %z, inputPrecision = ieee : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    %r = arith.addf %acc, %d : tensor<16x16xf32>
    %m = tt.splat %c : i1 -> tensor<16x16xi1>
    %v = tt.load %pa, %m : tensor<16x16x!tt.ptr<f32>>
    %s = arith.select %c, %v, %r : tensor<16x16xf32>
    tt.store %pa, %s : tensor<16x16x!tt.ptr<f32>>
    """
    _, text = run(func(body, "%p: !tt.ptr<f32>, %c: i1"), ["combine", "dce"])
    filecheck(
        text,
        """
        CHECK: %acc = tt.load
        CHECK-NEXT: tt.dot %a, %a, %acc, inputPrecision = ieee
        CHECK-NOT: arith.addf
        CHECK: tt.load %pa, %m, {{%\\w+}} : tensor<16x16x!tt.ptr<f32>>
        CHECK-NOT: arith.select
        CHECK: tt.store
        """,
    )


def test_reorder_broadcast():
    body = """
    %a = tt.splat %x : f32 -> tensor<128xf32>
    %b = tt.splat %y : f32 -> tensor<128xf32>
    %c = arith.mulf %a, %b : tensor<128xf32>
    %row = tt.splat %p : !tt.ptr<f32> -> tensor<1x64x!tt.ptr<f32>>
    %u = tt.load %row : tensor<1x64x!tt.ptr<f32>>
    %ub = tt.broadcast %u : tensor<1x64xf32> -> tensor<32x64xf32>
    %k = tt.splat %x : f32 -> tensor<32x64xf32>
    %e = arith.mulf %ub, %k : tensor<32x64xf32>
    %pc = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    tt.store %pc, %c : tensor<128x!tt.ptr<f32>>
    %pe = tt.splat %p : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>>
    tt.store %pe, %e : tensor<32x64x!tt.ptr<f32>>
    """
    _, text = run(func(body, "%p: !tt.ptr<f32>, %x: f32, %y: f32"), ["reorder-broadcast", "dce"])
    filecheck(
        text,
        """
        CHECK: arith.mulf %x, %y : f32
        CHECK: %u = tt.load
        CHECK: tt.splat %x : f32 -> tensor<1x64xf32>
        CHECK-NEXT: arith.mulf %u, {{%\\w+}} : tensor<1x64xf32>
        CHECK-NEXT: tt.broadcast {{%\\w+}} : tensor<1x64xf32> -> tensor<32x64xf32>
        """,
    )


def test_licm_hoists_pure_ops_but_not_loads():
    body = """
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %i = %c0 to %n step %c1 : i32 {
      %offs = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
      %ps = tt.splat %p : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
      %pp = tt.addptr %ps, %offs : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
      %v = tt.load %pp : tensor<8x!tt.ptr<i32>>
      %iv = tt.splat %i : i32 -> tensor<8xi32>
      %w = arith.addi %v, %iv : tensor<8xi32>
      tt.store %pp, %w : tensor<8x!tt.ptr<i32>>
    }
    """
    _, text = run(func(body, "%p: !tt.ptr<i32>, %n: i32"), ["loop-invariant-code-motion"])
    filecheck(
        text,
        """
        CHECK: %offs = tt.make_range
        CHECK: %pp = tt.addptr
        CHECK: scf.for
        CHECK-NEXT: %v = tt.load %pp
        CHECK-NEXT: %iv = tt.splat %i
        """,
    )
