"""Statements and control flow for the code generator (mixed into `CodeGenerator`).

* `if` on a constexpr is decided now; on a runtime scalar it becomes `scf.if`, yielding
  every variable that either branch changes (types must agree across branches).
* `for ... in range / tl.range` becomes `scf.for`; variables assigned in the body that
  already existed are loop-carried (`iter_args`), and must keep their type.
  `tl.static_range` is unrolled now.
* `while` becomes `scf.while`.
* `return` is structured by `ast_rewrite.lower_early_returns` before we get here, so an
  `if` that returns yields the returned values as its results.
"""

from __future__ import annotations

import ast

from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, UnitAttr
from xdsl.ir import Block

from tritium.frontend import core
from tritium.frontend.ast_rewrite import assigned_names, contains_return
from tritium.frontend.builder import name_value
from tritium.frontend.core import constexpr, tensor, unwrap
from tritium.frontend.iterators import range as tl_range
from tritium.frontend.iterators import static_range
from tritium.frontend.semantic import literal_dtype
from tritium.ir import arith


def _is_number(v) -> bool:
    return (
        isinstance(v, constexpr) and isinstance(v.value, (int, float, bool)) and v.value is not None
    )


def _number_fits(value, dt) -> bool:
    """Whether a number can join a tensor of `dt` (the other branch, or the loop's initial
    value) unchanged: as for a literal operand, it must not be of a higher kind (a float
    does not become an int tensor) and an integer must be in range."""
    if dt.is_ptr() or literal_dtype(value).kind() > dt.kind():
        return False
    if dt.is_int():
        return dt.get_int_min_value() <= int(value) <= dt.get_int_max_value()
    return True


def _type_str(v) -> str:
    if isinstance(v, tensor):
        return str(v.type)
    return f"constexpr {unwrap(v)!r}"


class ControlFlowMixin:
    # ------------------------------------------------------------------ blocks
    def visit_function_body(self, stmts: list[ast.stmt]) -> None:
        self.ret = None
        self.returned = False
        self.visit_block(stmts)

    def visit_block(self, stmts: list[ast.stmt]) -> None:
        for s in stmts:
            self.visit(s)
            if self.returned:
                break

    # ------------------------------------------------------------------ simple statements
    def visit_Expr(self, node: ast.Expr):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        call = node.value
        func = call.func if isinstance(call, ast.Call) else None
        if isinstance(func, ast.Name) or (
            isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
        ):  # as upstream: `tl.advance(p, ...)` alone does nothing (it returns the moved pointer)
            note = getattr(self.visit(func), "__tritium_must_use__", None)
            if note:
                raise self.error(note, node)
        self.visit(node.value)

    def visit_Pass(self, node: ast.Pass):
        return

    def visit_Assign(self, node: ast.Assign):
        name = (
            node.targets[0].id
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            else None
        )
        with self.b.naming(name):
            value = self.visit(node.value)
        for t in node.targets:
            self.assign(t, value)

    def assign(self, target: ast.AST, value) -> None:
        """Bind `target` to `value`. As upstream, a plain assignment makes a Python number
        (a literal or a constexpr) a scalar tensor typed by `to_tensor` (`x = 5` is an
        int32, `x = 1.5` an fp32); only `x: tl.constexpr = ...` keeps it a compile-time
        value (see `visit_AnnAssign`). Canonicalization folds such constants afterwards."""
        if isinstance(target, ast.Name):
            self.scope[target.id] = self._sanitize(value)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            seq = unwrap(value)
            if not isinstance(seq, tuple):
                raise self.error("only a tuple can be unpacked into several names", target)
            if len(seq) != len(target.elts):
                raise self.error(
                    f"cannot unpack {len(seq)} values into {len(target.elts)} names", target
                )
            for t, v in zip(target.elts, seq):
                self.assign(t, v if isinstance(v, (tensor, constexpr, tuple)) else constexpr(v))
            return
        raise self.error(
            "only names and tuples of names can be assigned to (not subscripts or attributes)",
            target,
        )

    def _sanitize(self, value):
        """Upstream's `_sanitize_value`: numbers (also inside tuples) become tensors; other
        compile-time values (dtypes, None, strings, functions) stay what they are."""
        if isinstance(value, tuple):
            return tuple(self._sanitize(v) for v in value)
        if isinstance(value, (int, float)) and not isinstance(value, constexpr):
            value = constexpr(value)
        if _is_number(value):
            return self.s.to_tensor(value)
        return value

    def visit_AugAssign(self, node: ast.AugAssign):
        if not isinstance(node.target, ast.Name):
            raise self.error("augmented assignment needs a plain name on the left", node.target)
        with self.b.naming(node.target.id):
            cur = self.lookup(node.target.id, node.target)
            value = self.binary(type(node.op), cur, self.visit(node.value), node)
        self.assign(node.target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign):
        if node.value is None:
            return
        ann = ast.unparse(node.annotation)
        with self.b.naming(node.target.id if isinstance(node.target, ast.Name) else None):
            value = self.visit(node.value)
        if "constexpr" in ann:
            if isinstance(value, tensor):
                raise self.error(
                    f"`{ast.unparse(node.target)}` is declared tl.constexpr but is given a runtime value",
                    node,
                )
            if not isinstance(node.target, ast.Name):
                raise self.error("only a plain name can be declared tl.constexpr", node.target)
            self.scope[node.target.id] = constexpr(unwrap(value))
            return
        self.assign(node.target, value)  # as upstream, other annotations are not checked

    def visit_Assert(self, node: ast.Assert):
        cond = self.visit(node.test)
        msg = unwrap(self.visit(node.msg)) if node.msg is not None else ""
        if not isinstance(cond, tensor):
            if not unwrap(cond):
                raise self.error(f"assertion failed: {msg}" if msg else "assertion failed", node)
            return
        if self.s.debug:
            self.s.device_assert(cond, str(msg) or f"assertion `{ast.unparse(node.test)}` failed")

    def visit_Return(self, node: ast.Return):
        value = self.visit(node.value) if node.value is not None else None
        if self.is_kernel and value is not None and unwrap(value) is not None:
            raise self.error("a kernel cannot return a value", node)
        if not self.is_kernel:  # as upstream, a returned number is a tensor (`return 0`: i32)
            value = self._sanitize(value)
        self.ret = value
        self.returned = True

    # ------------------------------------------------------------------ if
    def _scalar_condition(self, cond: tensor, node) -> tensor:
        if cond.shape:
            raise self.error(
                f"`if` / `while` conditions must be scalars, got a block of shape {list(cond.shape)}; use tl.where for blocks",
                node,
            )
        return cond if cond.dtype.is_bool() else self.s.cast(cond, core.int1)

    def visit_If(self, node: ast.If):
        cond = self.visit(node.test)
        if not isinstance(cond, tensor):
            self.visit_block(node.body if unwrap(cond) else node.orelse)
            return
        cond = self._scalar_condition(cond, node.test)
        if contains_return(node):
            self._if_returning(cond, node)
        else:
            self._if_merging(cond, node)

    def _branch(self, stmts, before):
        block = Block()
        self.scope = dict(before)
        self.ret, self.returned = None, False
        with self.b.at(block):
            self.visit_block(stmts)
        return block, self.scope, self.returned, self.ret

    def _unify(self, name: str, a, b, blocks, node):
        """Make the values `a` (then) and `b` (else) of `name` the same type; returns them as tensors."""
        if isinstance(a, tensor) and isinstance(b, tensor):
            if a.type != b.type:
                raise self.error(
                    f"`{name}` has type {_type_str(a)} in the then-branch but {_type_str(b)} in the else-branch",
                    node,
                )
            return a, b
        if (
            not isinstance(a, (tensor, constexpr))
            or not isinstance(b, (tensor, constexpr))
            or (not isinstance(a, tensor) and not _is_number(a))
            or (not isinstance(b, tensor) and not _is_number(b))
        ):
            raise self.error(
                f"`{name}` is assigned values of different kinds in the two branches ({_type_str(a)} vs {_type_str(b)})",
                node,
            )
        ref = a if isinstance(a, tensor) else b if isinstance(b, tensor) else None
        if ref is not None and not all(
            isinstance(v, tensor) or _number_fits(v.value, ref.dtype) for v in (a, b)
        ):
            raise self.error(
                f"`{name}` has type {_type_str(a)} in the then-branch but {_type_str(b)} in the else-branch",
                node,
            )
        out = []
        for v, blk in zip((a, b), blocks):
            if isinstance(v, tensor):
                out.append(v)
                continue
            with self.b.at(blk):
                if ref is None:
                    common = self.s.computation_type(
                        literal_dtype(a.value), False, literal_dtype(b.value), False, False
                    )
                    out.append(self.s.scalar_constant(v.value, common))
                else:
                    out.append(self.s.full(ref.shape, v.value, ref.dtype))
        if out[0].type != out[1].type:
            raise self.error(
                f"`{name}` has type {out[0].type} in the then-branch but {out[1].type} in the else-branch",
                node,
            )
        return out[0], out[1]

    def _if_merging(self, cond: tensor, node: ast.If):
        before = self.scope
        tb, ts, _, _ = self._branch(node.body, before)
        eb, es, _, _ = self._branch(node.orelse, before)
        names, tvals, evals = [], [], []
        for n in dict.fromkeys(list(ts) + list(es)):
            if n not in ts or n not in es:
                continue
            a, b = ts[n], es[n]
            if a is before.get(n) and b is before.get(n):
                continue
            if isinstance(a, constexpr) and isinstance(b, constexpr) and a == b:
                before = {**before, n: a}
                continue
            if (
                isinstance(a, tuple)
                or isinstance(b, tuple)
                or not isinstance(a, (tensor, constexpr))
            ):
                if a is b:
                    continue
                raise self.error(
                    f"`{n}` cannot be assigned a {type(unwrap(a)).__name__} inside a runtime `if`",
                    node,
                )
            a, b = self._unify(n, a, b, (tb, eb), node)
            names.append(n)
            tvals.append(a)
            evals.append(b)
        for blk, vals in ((tb, tvals), (eb, evals)):
            with self.b.at(blk):
                self.b.insert(scf.YieldOp(*[v.handle for v in vals]))
        self.scope = dict(before)
        op = self.b.insert(scf.IfOp(cond.handle, [v.type.to_ir() for v in tvals], [tb], [eb]))
        for n, r, v in zip(names, op.results, tvals):
            name_value(r, n)
            self.scope[n] = tensor(r, v.type)
        self.ret, self.returned = None, False

    def _if_returning(self, cond: tensor, node: ast.If):
        before = self.scope
        tb, _, tret, tval = self._branch(node.body, before)
        eb, _, eret, evals = self._branch(node.orelse, before)
        self.scope = before
        tv = self._ret_list(tval if tret else None)
        ev = self._ret_list(evals if eret else None)
        if tret != eret and (tv or ev):
            # One path falls off the end of the function: upstream returns `ub.poison`
            # there (any value of the type); tritium returns zeros of the other path's types.
            if tret:
                ev = self._poison_list(tv, eb, node)
            else:
                tv = self._poison_list(ev, tb, node)
        if len(tv) != len(ev):
            raise self.error(
                "inconsistent return types: this function returns "
                f"{len(tv) or 'no'} value(s) on one path and {len(ev) or 'no'} on another",
                node,
            )
        merged_t, merged_e = [], []
        for i, (a, b) in enumerate(zip(tv, ev)):
            a, b = self._unify(f"return value {i}", a, b, (tb, eb), node)
            merged_t.append(a)
            merged_e.append(b)
        for blk, vals in ((tb, merged_t), (eb, merged_e)):
            with self.b.at(blk):
                self.b.insert(scf.YieldOp(*[v.handle for v in vals]))
        op = self.b.insert(scf.IfOp(cond.handle, [v.type.to_ir() for v in merged_t], [tb], [eb]))
        results = [tensor(r, v.type) for r, v in zip(op.results, merged_t)]
        self.returned = True
        if not results:
            self.ret = None
        elif isinstance(unwrap(tval if tret else evals), tuple):
            self.ret = tuple(results)
        else:
            self.ret = results[0]

    def _poison_list(self, values: list, block: Block, node) -> list:
        """Zeros shaped and typed as `values`, made in `block` (for a path without a `return`)."""
        out = []
        with self.b.at(block):
            for v in values:
                if not isinstance(v, tensor) or v.dtype.is_block_ptr():
                    raise self.error(
                        f"this function returns {_type_str(v)} on one path and nothing on another",
                        node,
                    )
                if v.dtype.is_ptr():
                    zero = self.s.cast(self.s.scalar_constant(0, core.int64), v.dtype)
                    out.append(self.s.splat(zero, v.shape) if v.shape else zero)
                else:
                    out.append(self.s.full(v.shape, 0, v.dtype))
        return out

    @staticmethod
    def _ret_list(v) -> list:
        if v is None or (isinstance(v, constexpr) and v.value is None):
            return []
        v = unwrap(v) if isinstance(v, constexpr) and isinstance(v.value, tuple) else v
        if isinstance(v, tuple):
            return [x if isinstance(x, (tensor, constexpr)) else constexpr(x) for x in v]
        return [v]

    def dynamic_ifexp(self, cond: tensor, node: ast.IfExp):
        cond = self._scalar_condition(cond, node.test)
        vals, blocks = [], []
        for expr in (node.body, node.orelse):
            blk = Block()
            with self.b.at(blk):
                vals.append(self.visit(expr))
            blocks.append(blk)
        a, b = self._unify("the conditional expression", vals[0], vals[1], blocks, node)
        for blk, v in zip(blocks, (a, b)):
            with self.b.at(blk):
                self.b.insert(scf.YieldOp(v.handle))
        op = self.b.insert(scf.IfOp(cond.handle, [a.type.to_ir()], [blocks[0]], [blocks[1]]))
        return tensor(op.results[0], a.type)

    # ------------------------------------------------------------------ loops
    def _carried(self, body, exclude=()):
        names = []
        for n in assigned_names(body):
            if n in exclude or n not in self.scope:
                continue
            v = self.scope[n]
            if isinstance(v, tensor) or _is_number(v):
                names.append(n)
        return names

    def _as_init(self, name: str, v) -> tensor:
        if isinstance(v, tensor):
            return v
        return self.s.scalar_constant(v.value, literal_dtype(v.value))

    def _loop_yield(self, names, inits, node):
        out = []
        for n, init in zip(names, inits):
            v = self.scope.get(n)
            if _is_number(v) and _number_fits(v.value, init.dtype):
                v = self.s.full(init.shape, v.value, init.dtype)
            if not isinstance(v, tensor) or v.type != init.type:
                raise self.error(
                    f"loop-carried variable `{n}` has type {init.type} before the loop but {_type_str(v)} after an iteration; "
                    "make sure its type stays the same (e.g. initialise it with tl.zeros(..., dtype) or a literal of the right kind)",
                    node,
                )
            out.append(v.handle)
        return out

    def _check_untouched(self, body_scope, before, carried, node, exclude=()):
        for n in assigned_names(node.body):
            if n in carried or n in exclude or n not in before:
                continue
            if body_scope.get(n) is not before[n] and not (
                isinstance(before[n], constexpr) and body_scope.get(n) == before[n]
            ):
                raise self.error(
                    f"`{n}` holds {_type_str(before[n])} and cannot be re-assigned inside a runtime loop",
                    node,
                )

    def visit_For(self, node: ast.For):
        if node.orelse:
            raise self.error("for ... else is not supported", node)
        it = self.visit(node.iter)
        if not isinstance(it, (tl_range, static_range)):
            raise self.error(
                "kernels can only loop over range(...), tl.range(...) or tl.static_range(...)",
                node.iter,
            )
        if not isinstance(node.target, ast.Name):
            raise self.error("the loop variable must be a plain name", node.target)
        if isinstance(it, static_range):
            bounds = [unwrap(x) for x in (it.start, it.end, it.step)]
            if any(isinstance(x, tensor) or not isinstance(x, int) for x in bounds):
                raise self.error("tl.static_range bounds must be tl.constexpr integers", node.iter)
            for i in range(*bounds):
                self.scope[node.target.id] = constexpr(i)
                self.visit_block(node.body)
            return
        self._dynamic_for(it, node)

    def _dynamic_for(self, it: tl_range, node: ast.For):
        s = self.s
        parts = [it.start, it.end, it.step]
        dts = []
        for p in parts:
            v = unwrap(p)
            if isinstance(v, tensor):
                if v.shape or not v.dtype.is_int():
                    raise self.error(
                        f"loop bounds must be integer scalars, got {v.type}", node.iter
                    )
                dts.append(v.dtype)
            elif isinstance(v, bool) or not isinstance(v, int):
                raise self.error(f"loop bounds must be integers, got {v!r}", node.iter)
            else:
                dts.append(literal_dtype(v))
        step = unwrap(it.step)
        if not isinstance(step, tensor) and step == 0:
            raise self.error("the loop step must not be zero", node.iter)
        # As upstream: a constant negative step runs the loop upwards from `end` to `start`
        # with step -step, and the body sees `start + end - iv` (the values of Python's
        # range). A runtime step stays as it is: `scf.for` counts up while iv < end, so a
        # negative one runs no iterations (when start >= end), as on upstream.
        negative = not isinstance(step, tensor) and step < 0
        if negative:
            parts = [it.end, it.start, -step]
            dts = [dts[1], dts[0], literal_dtype(-step)]
        iv_ty = dts[0]
        for d in dts[1:]:
            iv_ty = s.integer_promote(iv_ty, d)
        lb, ub, st = (
            s.cast(unwrap(p), iv_ty)
            if isinstance(unwrap(p), tensor)
            else s.scalar_constant(unwrap(p), iv_ty)
            for p in parts
        )
        target = node.target.id
        carried = self._carried(node.body, exclude=(target,))
        inits = [self._as_init(n, self.scope[n]) for n in carried]
        before = dict(self.scope)
        block = Block(arg_types=[iv_ty.to_ir()] + [v.type.to_ir() for v in inits])
        name_value(block.args[0], target)
        self.scope = dict(before)
        self.scope[target] = tensor(block.args[0], iv_ty)
        for n, a, v in zip(carried, block.args[1:], inits):
            name_value(a, n)
            self.scope[n] = tensor(a, v.type)
        with self.b.at(block):
            if negative:
                with self.b.naming(target):
                    down = s._binop(arith.SubiOp, ub, self.scope[target])
                    self.scope[target] = s._binop(arith.AddiOp, down, lb)
            self.visit_block(node.body)
            vals = self._loop_yield(carried, inits, node)
            self.b.insert(scf.YieldOp(*vals))
        body_scope = self.scope
        self.scope = before
        self._check_untouched(body_scope, before, carried, node, exclude=(target,))
        op = self.b.insert(
            scf.ForOp(lb.handle, ub.handle, st.handle, [v.handle for v in inits], block)
        )
        if it.num_stages is not None:
            op.attributes["tt.num_stages"] = IntegerAttr(int(unwrap(it.num_stages)), 32)
        if it.loop_unroll_factor is not None:
            op.attributes["tt.loop_unroll_factor"] = IntegerAttr(
                int(unwrap(it.loop_unroll_factor)), 32
            )
        for flag in ("disallow_acc_multi_buffer", "flatten", "warp_specialize"):
            value = unwrap(getattr(it, flag))
            if isinstance(value, tensor):
                raise self.error(f"tl.range's {flag} must be a compile-time bool", node.iter)
            if value:
                op.attributes[f"tt.{flag}"] = UnitAttr()
        for n, r, v in zip(carried, op.results, inits):
            name_value(r, n)
            self.scope[n] = tensor(r, v.type)

    def visit_While(self, node: ast.While):
        if node.orelse:
            raise self.error("while ... else is not supported", node)
        carried = self._carried(node.body)
        inits = [self._as_init(n, self.scope[n]) for n in carried]
        types = [v.type.to_ir() for v in inits]
        before = dict(self.scope)
        cond_blk = Block(arg_types=types)
        self.scope = dict(before)
        for n, a, v in zip(carried, cond_blk.args, inits):
            name_value(a, n)
            self.scope[n] = tensor(a, v.type)
        with self.b.at(cond_blk):
            cond = self.visit(node.test)
            if not isinstance(cond, tensor):
                raise self.error(
                    "a while loop's condition must be a runtime value (this one is known at compile time)",
                    node.test,
                )
            cond = self._scalar_condition(cond, node.test)
            self.b.insert(scf.ConditionOp(cond.handle, *cond_blk.args))
        body_blk = Block(arg_types=types)
        self.scope = dict(before)
        for n, a, v in zip(carried, body_blk.args, inits):
            name_value(a, n)
            self.scope[n] = tensor(a, v.type)
        with self.b.at(body_blk):
            self.visit_block(node.body)
            vals = self._loop_yield(carried, inits, node)
            self.b.insert(scf.YieldOp(*vals))
        body_scope = self.scope
        self.scope = before
        self._check_untouched(body_scope, before, carried, node)
        op = self.b.insert(scf.WhileOp([v.handle for v in inits], types, [cond_blk], [body_blk]))
        for n, r, v in zip(carried, op.results, inits):
            name_value(r, n)
            self.scope[n] = tensor(r, v.type)
