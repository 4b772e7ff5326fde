"""The AST visitor that turns a `@jit` function into TTIR.

Values flowing through the visitor are `constexpr` (known now), `tensor` (IR values),
Python tuples of those, or compile-time objects (modules, dtypes, `@jit` functions,
builtins). Expressions on constexprs are folded in Python; anything involving a tensor
goes through `Semantic`, which applies Triton's typing rules and emits the ops. Calls to
other `@jit` functions are inlined. Statements and control flow live in
`codegen_control.py`.
"""

from __future__ import annotations

import ast
import builtins as pybuiltins
import inspect
import operator
import types

from tritium import config
from tritium.errors import CompilationError, SourceLoc, UnsupportedSyntaxError
from tritium.frontend import builtins as tlb
from tritium.frontend import core
from tritium.frontend import standard as tlstd
from tritium.frontend.ast_rewrite import UNSUPPORTED
from tritium.frontend.builtins import atomic as tla
from tritium.frontend.builtins import elementwise as tle
from tritium.frontend.builtins import scan as tls
from tritium.frontend.codegen_control import ControlFlowMixin
from tritium.frontend.core import constexpr, tensor, unwrap
from tritium.frontend.iterators import range as tl_range
from tritium.frontend.iterators import static_range
from tritium.frontend.kernel_source import KernelSource
from tritium.frontend.semantic import Semantic, SemanticError

MAX_INLINE_DEPTH = 64

_PY_BUILTINS_OK = {
    "min",
    "max",
    "len",
    "int",
    "float",
    "bool",
    "abs",
    "print",
    "isinstance",
    "tuple",
    "list",
    "getattr",
    "hasattr",
    "str",
    "round",
    "pow",
    "divmod",
    "all",
    "any",
}


class BoundMethod:
    """`x.sum` on a tensor: a builtin with the tensor as its first argument."""

    def __init__(self, fn, obj):
        self.fn = fn
        self.obj = obj


TENSOR_METHODS = {
    name: getattr(tlb, name)
    for name in (
        "to", "cast", "sum", "max", "min", "argmax", "argmin", "reshape", "view", "ravel", "permute",
        "trans", "expand_dims", "broadcast_to", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin",
        "cos", "abs", "erf", "floor", "ceil", "reduce", "xor_sum", "tanh",
    )
}  # fmt: skip
TENSOR_METHODS["advance"] = tlb.advance  # block pointers: `p.advance((0, BK))`
TENSOR_METHODS.update(  # pointer blocks: `ptrs.atomic_add(1, mask=m)`, as upstream
    {name: getattr(tla, name) for name in tla.__all__}
)
TENSOR_METHODS.update(  # `x.cumsum(0)`, `x.associative_scan(0, fn)`, as upstream
    {name: getattr(tls, name) for name in tls.__all__}
)
TENSOR_METHODS.update(  # members only, as upstream: `(a < n).logical_and(b < m)`
    {name: getattr(tle, name) for name in ("logical_and", "logical_or")}
)
TENSOR_METHODS.update(  # library functions upstream makes tensor members: `x.sort(descending=1)`
    {name: getattr(tlstd, name) for name in ("sigmoid", "softmax", "sort", "flip", "topk")}
)


_BINOPS = {
    ast.Add: ("add", operator.add),
    ast.Sub: ("sub", operator.sub),
    ast.Mult: ("mul", operator.mul),
    ast.Div: ("truediv", operator.truediv),
    ast.FloorDiv: ("floordiv", operator.floordiv),
    ast.Mod: ("mod", operator.mod),
    ast.BitAnd: ("and_", operator.and_),
    ast.BitOr: ("or_", operator.or_),
    ast.BitXor: ("xor_", operator.xor),
    ast.LShift: ("shl", operator.lshift),
    ast.RShift: ("shr", operator.rshift),
    ast.Pow: (None, operator.pow),
    ast.MatMult: (None, None),
}

_OP_SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
    ast.Pow: "**", ast.MatMult: "@",
}  # fmt: skip

_CMPOPS = {
    ast.Lt: ("less_than", operator.lt),
    ast.LtE: ("less_equal", operator.le),
    ast.Gt: ("greater_than", operator.gt),
    ast.GtE: ("greater_equal", operator.ge),
    ast.Eq: ("equal", operator.eq),
    ast.NotEq: ("not_equal", operator.ne),
    ast.Is: (None, operator.is_),
    ast.IsNot: (None, operator.is_not),
    ast.In: (None, lambda a, b: a in b),
    ast.NotIn: (None, lambda a, b: a not in b),
}


def _c_mod(a, b):
    """Integer % with C semantics for constexprs (as the kernel computes it at run time)."""
    if isinstance(a, int) and isinstance(b, int):
        r = abs(a) % abs(b)
        return -r if a < 0 else r
    return operator.mod(a, b)


def _c_floordiv(a, b):
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return -q if (a < 0) != (b < 0) else q
    return operator.floordiv(a, b)


def _has_tensor(args, kwargs) -> bool:
    return any(isinstance(a, tensor) for a in args) or any(
        isinstance(v, tensor) for v in kwargs.values()
    )


def _wrap_const(v):
    if isinstance(v, (constexpr, tensor)):
        return v
    if isinstance(v, tuple):
        return tuple(_wrap_const(x) for x in v)
    return constexpr(v)


class CodeGenerator(ControlFlowMixin, ast.NodeVisitor):
    def __init__(
        self,
        fn,
        semantic: Semantic,
        scope: dict,
        depth: int = 0,
        is_kernel: bool = False,
        deps: set | None = None,
    ):
        self.fn = fn
        self.s = semantic
        self.b = semantic.b
        self.scope = scope
        self.gscope = fn.fn.__globals__
        self.file = fn.file
        self.line0 = fn.line - 1
        self.col0 = getattr(fn, "col0", 0)
        self.depth = depth
        self.is_kernel = is_kernel
        self.ret = None
        self.returned = False
        self.deps = deps if deps is not None else set()
        self.node: ast.AST | None = None

    # ------------------------------------------------------------------ locations & errors
    def srcloc(self, node: ast.AST | None) -> SourceLoc | None:
        if node is None or not hasattr(node, "lineno"):
            return None
        return SourceLoc(self.file, node.lineno + self.line0, node.col_offset + 1 + self.col0)

    def visit(self, node):
        if not hasattr(node, "lineno"):
            return super().visit(node)
        saved = self.node
        self.node = node
        loc = self.srcloc(node)
        try:
            with self.b.location(loc.file, loc.line, loc.col):
                return super().visit(node)
        except CompilationError:
            raise
        except SemanticError as e:
            raise CompilationError(str(e), loc) from None
        except RecursionError:
            raise CompilationError("recursion too deep while compiling this kernel", loc) from None
        except Exception as e:
            if config.debug():
                raise
            raise CompilationError(
                f"internal compiler error: {type(e).__name__}: {e} (rerun with TRITIUM_DEBUG=1 for a traceback)",
                loc,
            ) from e
        finally:
            self.node = saved

    def generic_visit(self, node):
        what = UNSUPPORTED.get(type(node), type(node).__name__)
        raise UnsupportedSyntaxError(
            f"{what} {'is' if not what.endswith('s') else 'are'} not supported in a tritium kernel",
            self.srcloc(node),
        )

    def error(self, msg: str, node: ast.AST | None = None) -> CompilationError:
        return CompilationError(msg, self.srcloc(node or self.node))

    # ------------------------------------------------------------------ names
    def lookup(self, name: str, node: ast.AST):
        if name in self.scope:
            return self.scope[name]
        if name in self.gscope:
            v = self.gscope[name]
            return self._global_value(name, v, node)
        if name in _PY_BUILTINS_OK or name == "range":
            return getattr(pybuiltins, name)
        if hasattr(pybuiltins, name):
            raise self.error(f"Python's built-in `{name}` cannot be used in a kernel", node)
        raise self.error(f"name '{name}' is not defined", node)

    def _global_value(self, name, v, node):
        if self.is_jit_function(v) or isinstance(
            v, (constexpr, core.dtype, types.ModuleType, tl_range, static_range, type)
        ):
            return v
        if callable(v):
            return v
        if isinstance(v, (int, float, bool)) and name.isupper():
            return constexpr(v)
        if v is None:
            return constexpr(None)
        raise self.error(
            f"cannot use global variable `{name}` ({type(v).__name__}) in a kernel; "
            f"only globals declared as tl.constexpr (e.g. `{name} = tl.constexpr(...)`) are allowed",
            node,
        )

    # ------------------------------------------------------------------ expressions
    def visit_Constant(self, node: ast.Constant):
        return constexpr(node.value)

    def visit_Name(self, node: ast.Name):
        return self.lookup(node.id, node)

    def visit_Tuple(self, node: ast.Tuple):
        return tuple(self.visit(e) for e in node.elts)

    visit_List = visit_Tuple

    def visit_JoinedStr(self, node: ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            else:
                val = self.visit(v.value)
                if isinstance(val, tensor):
                    raise self.error("f-strings can only format compile-time values", v)
                parts.append(
                    format(
                        unwrap(val),
                        v.format_spec and "".join(str(x.value) for x in v.format_spec.values) or "",
                    )
                )
        return constexpr("".join(parts))

    def visit_Attribute(self, node: ast.Attribute):
        base = self.visit(node.value)
        attr = node.attr
        if isinstance(base, tensor):
            if attr == "dtype":
                return constexpr(base.dtype)
            if attr == "type":  # `x.type.element_ty`, `x.type.shape`, as upstream
                return constexpr(base.type)
            if attr == "shape":
                return tuple(constexpr(s) for s in base.shape)
            if attr == "numel":
                return constexpr(base.numel)
            if attr == "T":
                return tlb.trans(base, _semantic=self.s)
            if attr in TENSOR_METHODS:
                return BoundMethod(TENSOR_METHODS[attr], base)
            raise self.error(f"tensor has no attribute `{attr}`", node)
        obj = unwrap(base)
        if isinstance(obj, tuple):
            raise self.error(f"tuple has no attribute `{attr}`", node)
        try:
            v = getattr(obj, attr)
        except AttributeError:
            if isinstance(obj, (int, float, bool)) and attr in TENSOR_METHODS:
                src = ast.unparse(node.value)
                fix = f"tl.cast({src}, dtype)" if attr == "to" else f"tl.{attr}({src}, ...)"
                raise self.error(
                    f"`{src}` is the compile-time constant {obj!r} here, not a tensor, so it has "
                    f"no `.{attr}`; write {fix} instead (note that an integer argument equal "
                    "to 1 is specialised to the constant 1)",
                    node,
                ) from None
            raise self.error(
                f"`{getattr(obj, '__name__', obj)}` has no attribute `{attr}`", node
            ) from None
        if isinstance(obj, types.ModuleType):
            return v if not isinstance(v, (int, float, bool)) or attr.isupper() else constexpr(v)
        if isinstance(obj, core.dtype) and callable(v):
            return v
        return v if callable(v) or isinstance(v, (constexpr, core.dtype, tensor)) else constexpr(v)

    def visit_Subscript(self, node: ast.Subscript):
        base = self.visit(node.value)
        if isinstance(base, tensor):
            return self._tensor_subscript(base, node.slice)
        idx = self.visit(node.slice)
        seq = unwrap(base)
        i = unwrap(idx)
        if isinstance(i, tensor):
            raise self.error("tuples can only be indexed with compile-time integers", node)
        try:
            return _wrap_const(seq[i])
        except (TypeError, IndexError, KeyError) as e:
            raise self.error(f"cannot index {type(seq).__name__} with {i!r}: {e}", node) from None

    def _tensor_subscript(self, x: tensor, sl: ast.AST) -> tensor:
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        axis = 0
        for it in items:
            if isinstance(it, ast.Constant) and it.value is None:
                x = self.s.expand_dims(x, axis)
                axis += 1
            elif (
                isinstance(it, ast.Slice)
                and it.lower is None
                and it.upper is None
                and it.step is None
            ):
                axis += 1
            else:
                raise self.error(
                    "tensors can only be indexed with `:` and `None` (e.g. x[:, None])", it
                )
        if axis - sum(1 for it in items if isinstance(it, ast.Constant)) > len(x.shape):
            raise self.error(f"too many indices for a tensor of rank {len(x.shape)}", sl)
        return x

    def visit_BinOp(self, node: ast.BinOp):
        lhs = self.visit(node.left)
        rhs = self.visit(node.right)
        return self.binary(type(node.op), lhs, rhs, node)

    def binary(self, op_type, lhs, rhs, node):
        name, pyop = _BINOPS[op_type]
        if not isinstance(lhs, tensor) and not isinstance(rhs, tensor):
            a, b = unwrap(lhs), unwrap(rhs)
            if op_type is ast.Mod:
                pyop = _c_mod
            elif op_type is ast.FloorDiv:
                pyop = _c_floordiv
            if pyop is None:
                raise self.error("`@` is not supported; use tl.dot", node)
            try:
                return _wrap_const(pyop(a, b))
            except Exception as e:
                raise self.error(
                    f"cannot compute {a!r} {_OP_SYMBOLS.get(op_type, '?')} {b!r}: {e}",
                    node,
                ) from None
        if name is None:
            raise self.error(
                "`**` and `@` are not supported on tensors; use tl.math functions or tl.dot", node
            )
        for v in (lhs, rhs):
            if isinstance(v, tuple):
                raise self.error("arithmetic on tuples is not supported", node)
        return getattr(self.s, name)(
            unwrap(lhs) if not isinstance(lhs, tensor) else lhs,
            unwrap(rhs) if not isinstance(rhs, tensor) else rhs,
        )

    def visit_UnaryOp(self, node: ast.UnaryOp):
        v = self.visit(node.operand)
        op = type(node.op)
        if not isinstance(v, tensor):
            x = unwrap(v)
            return _wrap_const(
                {
                    ast.USub: operator.neg,
                    ast.UAdd: operator.pos,
                    ast.Not: operator.not_,
                    ast.Invert: operator.invert,
                }[op](x)
            )
        if op is ast.USub:
            return self.s.minus(v)
        if op is ast.UAdd:
            return v
        if op is ast.Not:
            return self.s.logical_not(v)
        return self.s.invert(v)

    def visit_Compare(self, node: ast.Compare):
        lhs = self.visit(node.left)
        result = None
        for op, comp in zip(node.ops, node.comparators):
            rhs = self.visit(comp)
            name, pyop = _CMPOPS[type(op)]
            if not isinstance(lhs, tensor) and not isinstance(rhs, tensor):
                r = _wrap_const(pyop(unwrap(lhs), unwrap(rhs)))
            elif type(op) in (ast.Is, ast.IsNot) and not (
                isinstance(lhs, tensor) and isinstance(rhs, tensor)
            ):
                # `x is None` with a tensor x (a `Y: tl.constexpr = None` parameter given a
                # run-time value): a tensor is no constant, so the answer is known here, as
                # upstream's identity test on the unwrapped values gives
                r = _wrap_const(type(op) is ast.IsNot)
            else:
                if name is None:
                    raise self.error(
                        f"`{type(op).__name__.lower()}` cannot compare tensors; use ==, !=, <, ...",
                        node,
                    )
                r = getattr(self.s, name)(
                    lhs if isinstance(lhs, tensor) else unwrap(lhs),
                    rhs if isinstance(rhs, tensor) else unwrap(rhs),
                )
            result = r if result is None else self._logical(ast.And, result, r)
            lhs = rhs
        return result

    def _logical(self, op_type, a, b):
        if not isinstance(a, tensor) and not isinstance(b, tensor):
            return _wrap_const(
                unwrap(a) and unwrap(b) if op_type is ast.And else unwrap(a) or unwrap(b)
            )
        fn = self.s.logical_and if op_type is ast.And else self.s.logical_or
        return fn(
            a if isinstance(a, tensor) else unwrap(a), b if isinstance(b, tensor) else unwrap(b)
        )

    def visit_BoolOp(self, node: ast.BoolOp):
        op = type(node.op)
        result = self.visit(node.values[0])
        for v in node.values[1:]:
            if not isinstance(result, tensor):
                truth = bool(unwrap(result))
                if (op is ast.And and not truth) or (op is ast.Or and truth):
                    return result
                result = self.visit(v)
                continue
            result = self._logical(op, result, self.visit(v))
        return result

    def visit_IfExp(self, node: ast.IfExp):
        cond = self.visit(node.test)
        if not isinstance(cond, tensor):
            return self.visit(node.body if unwrap(cond) else node.orelse)
        return self.dynamic_ifexp(cond, node)

    # ------------------------------------------------------------------ calls
    def visit_Call(self, node: ast.Call):
        fn = self.visit(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                v = self.visit(a.value)
                if not isinstance(unwrap(v), tuple):
                    raise self.error("only tuples can be unpacked with * in a call", a)
                args.extend(_wrap_const(x) for x in unwrap(v))
            else:
                args.append(self.visit(a))
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error("**kwargs in calls are not supported", kw)
            kwargs[kw.arg] = self.visit(kw.value)
        return self.call(fn, args, kwargs, node)

    def call(self, fn, args, kwargs, node):
        if isinstance(fn, constexpr):  # a function passed as a constexpr (`OP=tl.maximum`)
            fn = fn.value
        if isinstance(fn, BoundMethod):
            return self.call(fn.fn, [fn.obj] + list(args), kwargs, node)
        if self.is_jit_function(fn):
            return self.call_jit(fn, args, kwargs)
        if tlb.is_builtin(fn):
            try:
                inspect.signature(fn).bind(*args, **kwargs)
            except TypeError as e:
                raise self.error(f"tl.{fn.__name__}: {e}", node) from None
            return fn(*args, **kwargs, _semantic=self.s, _generator=self)
        if fn in (tl_range, static_range, pybuiltins.range):
            return fn(*args, **kwargs) if fn is not pybuiltins.range else tl_range(*args, **kwargs)
        if isinstance(fn, tlb.constexpr_function):
            return fn.call_in_kernel(*args, **kwargs)
        if isinstance(fn, type) and issubclass(fn, constexpr):
            return constexpr(unwrap(args[0]))
        if isinstance(fn, type) and issubclass(fn, (core.dtype, core.block_type)):
            # tl.pointer_type(tl.bfloat16) and friends: types are compile-time values
            return constexpr(
                fn(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
            )
        if fn is pybuiltins.print:  # as upstream: Python's print in a kernel is device_print
            return self.call(tlb.device_print, args, kwargs, node)
        if fn in (pybuiltins.min, pybuiltins.max) and _has_tensor(args, kwargs):
            return self._min_max(fn, args, kwargs, node)
        if isinstance(getattr(fn, "__self__", None), (core.dtype, core.block_type)):
            # `x.dtype.is_floating()`, `x.dtype.get_int_max_value()`: folded now
            return _wrap_const(
                fn(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
            )
        if fn in (pybuiltins.tuple, pybuiltins.list) and len(args) == 1 and not kwargs:
            # `tl.tuple([a, b])` (upstream's tuple type is Python's tuple here), `tuple(t)`
            seq = args[0] if isinstance(args[0], tuple) else unwrap(args[0])
            if isinstance(seq, (tuple, list)):
                return tuple(_wrap_const(v) for v in seq)
        if getattr(fn, "__name__", None) in _PY_BUILTINS_OK and fn is getattr(
            pybuiltins, fn.__name__, None
        ):
            return self._python_builtin(fn, args, kwargs, node)
        if isinstance(fn, core.dtype):
            raise self.error(f"dtypes are not callable; use x.to({fn!r})", node)
        name = getattr(fn, "__name__", repr(fn))
        raise UnsupportedSyntaxError(
            f"calls to non-jit function `{name}` are not supported in a kernel; decorate it with @tritium.jit",
            self.srcloc(node),
        )

    def _min_max(self, fn, args, kwargs, node):
        """Python's `min` / `max` with a tensor argument: upstream binds them to
        `tl.minimum` / `tl.maximum`, which take two operands (a third positional one would
        become `propagate_nan`: an error for floats, silently ignored for ints), so more
        than two is refused here rather than half-computed."""
        tl_fn = tlb.minimum if fn is pybuiltins.min else tlb.maximum
        if len(args) != 2:
            raise self.error(
                f"`{fn.__name__}` of a tensor is tl.{tl_fn.__name__} (as upstream), which takes "
                f"exactly two operands, got {len(args)}; nest the calls, e.g. "
                f"{fn.__name__}({fn.__name__}(a, b), c)",
                node,
            )
        return self.call(tl_fn, args, kwargs, node)

    def _python_builtin(self, fn, args, kwargs, node):
        name = fn.__name__
        if name == "isinstance" and len(args) == 2 and not kwargs:
            return self._isinstance(*args)
        if any(isinstance(a, tensor) for a in args) or any(
            isinstance(v, tensor) for v in kwargs.values()
        ):
            hint = {
                "abs": "tl.abs",
                "float": "x.to(tl.float32)",
                "int": "x.to(tl.int32)",
            }.get(name, "tl functions")
            raise self.error(
                f"Python's `{name}` only works on compile-time values; use {hint} for tensors", node
            )
        vals = [
            unwrap(a) if not isinstance(a, tuple) else tuple(unwrap(x) for x in a) for a in args
        ]
        kw = {k: unwrap(v) for k, v in kwargs.items()}
        if name == "print":
            print(*vals, **kw)
            return constexpr(None)
        return _wrap_const(fn(*vals, **kw))

    @staticmethod
    def _isinstance(obj, classes):
        """Python's `isinstance` on any value, tensors too (`isinstance(p, tl.tensor)`,
        `isinstance(d, tl.tensor_descriptor)`); a compile-time value is also a
        `tl.constexpr`, as upstream."""
        cls = unwrap(classes)
        cls = tuple(unwrap(c) for c in cls) if isinstance(cls, tuple) else cls
        if isinstance(obj, constexpr) and any(
            c is constexpr for c in (cls if isinstance(cls, tuple) else (cls,))
        ):
            return constexpr(True)
        return constexpr(isinstance(obj if isinstance(obj, tensor) else unwrap(obj), cls))

    def is_jit_function(self, fn) -> bool:
        """Whether `fn` is a `@jit` function, which `call_jit` inlines (the builtins that take
        one, such as `tl.reduce`, ask the generator they receive)."""
        return isinstance(fn, KernelSource)

    def call_jit(self, fn, args, kwargs=None):
        """Inline the `@jit` function `fn` at the current insertion point; return its result."""
        kwargs = kwargs or {}
        if self.depth >= MAX_INLINE_DEPTH:
            raise self.error(
                f"calls nest deeper than {MAX_INLINE_DEPTH} (is `{fn.__name__}` recursive?)"
            )
        try:
            bound = fn.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise self.error(f"{fn.__name__}(): {e}") from None
        bound.apply_defaults()
        scope = {}
        for name, value in bound.arguments.items():
            if isinstance(value, tuple) and not isinstance(value, constexpr):
                value = tuple(_wrap_const(v) for v in value)
            elif not isinstance(value, (tensor, constexpr)) and not callable(value):
                value = constexpr(value)
            # As upstream, a callee's `tl.constexpr` annotation is not checked: a runtime
            # value given for it is an ordinary argument (upstream's fused-attention
            # tutorial passes `offs_m` and `N_CTX` so); what the caller passes decides.
            scope[name] = value
        self.deps.add(fn)
        gen = CodeGenerator(fn, self.s, scope, self.depth + 1, deps=self.deps)
        gen.visit_function_body(fn.body)
        return gen.ret
