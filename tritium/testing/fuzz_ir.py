"""The random kernels' program form: expressions, statements, Triton's typing rules, source.

A `Program` is a small kernel over one 2-D tile per program id (R rows x C columns):

    @tritium.jit
    def fuzz_kernel(in0_ptr, out0_ptr, n_rows, n_cols, s0, R: tl.constexpr, C: tl.constexpr):
        pid = tl.program_id(0)
        rows = pid * R + tl.arange(0, R)
        cols = tl.arange(0, C)
        rmask = rows < n_rows
        cmask = cols < n_cols
        mask = rmask[:, None] & cmask[None, :]
        in0 = tl.load(in0_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.5)
        v0 = in0 * s0
        for i in range(0, 3):
            v0 = v0 + (i * in0).to(tl.float32)
        tl.store(out0_ptr + rows[:, None] * n_cols + cols[None, :], v0, mask=mask)

Every value has a dtype (i1, i32, i64, fp16, fp32) and dims: () for a scalar, ("R",) for
a column of the tile, ("C",) for a row, ("R", "C") for the tile. A 1-D value used with a
2-D one is written `x[:, None]` / `x[None, :]`, so broadcasting is always explicit.

`typeof` is Triton's typing (upstream `semantic.py`'s rules, restated): a Python literal
does not widen a tensor of the same kind; fp32 beats fp16 beats integers; `/` and `%` of
fp16 compute in fp32; integers promote to the wider type; `tl.minimum` / `tl.maximum`
make a literal a tensor of its own type first (`tl.minimum(x_f16, 0.5)` is fp32);
comparisons give i1; `tl.sum`
of i1 would be uint32 (which the fuzzer has no type for: the generator sums i1 as i32);
`tl.max` / `tl.min` of fp16 give fp32 (upstream widens them first). The
generator (`fuzz.py`) and the numpy model (`fuzz_model.py`) both use it; the kernel's
source is made by `render`. Statements are assignments, `for` loops over `range`
(carrying accumulators) and `if` on a runtime scalar.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DIMS_ORDER = ("R", "C")
UNSIGNED = ("i1",)  # as upstream: int1 is unsigned
KIND = {"i1": 0, "i32": 1, "i64": 1, "fp16": 2, "fp32": 2}
INTS = ("i1", "i32", "i64")
FLOATS = ("fp16", "fp32")
BITS = {"i1": 1, "i8": 8, "i32": 32, "i64": 64, "fp16": 16, "bf16": 16, "fp32": 32}
TL_DTYPE = {"i8": "tl.int8", "i32": "tl.int32", "i64": "tl.int64", "fp16": "tl.float16",
            "bf16": "tl.bfloat16", "fp32": "tl.float32"}  # fmt: skip
NP_DTYPE = {"i1": "bool", "i32": "int32", "i64": "int64", "fp16": "float16", "fp32": "float32"}

ARITH = ("+", "-", "*")
DIVMOD = ("/", "//", "%")
BITWISE = ("&", "|", "^", "<<", ">>")
MINMAX = ("min", "max")
COMPARE = ("<", "<=", ">", ">=", "==", "!=")


# ------------------------------------------------------------------ expressions


@dataclass(frozen=True)
class Name:
    id: str


@dataclass(frozen=True)
class Lit:
    value: int | float


@dataclass(frozen=True)
class BinOp:
    op: str  # ARITH, DIVMOD, BITWISE or MINMAX
    a: object
    b: object


@dataclass(frozen=True)
class Compare:
    op: str
    a: object
    b: object


@dataclass(frozen=True)
class Unary:
    op: str  # "neg", "abs", "exp", "sqrt" (of a value known to be >= 0)
    a: object


@dataclass(frozen=True)
class Cast:
    a: object
    dtype: str


@dataclass(frozen=True)
class Where:
    c: object
    a: object
    b: object


@dataclass(frozen=True)
class Reduce:
    op: str  # "sum", "max", "min"
    a: object
    axis: int


@dataclass(frozen=True)
class Zeros:
    dtype: str
    dims: tuple


# The newer operations (fuzz_ops.py draws them): each is an expression like the above.

DOT_KINDS = ("fp16", "bf16", "i8", "tf32", "ieee")  # the operands' type, or fp32's precision
SCANS = ("cumsum", "cummax")  # tl.cumsum; tl.associative_scan with a maximum combine
SHAPES = ("trans", "permute", "reshape_trans", "trans_reshape", "join_split0",
          "join_split1", "broadcast")  # fmt: skip
RANDOM = ("rand", "randint", "randn")


@dataclass(frozen=True)
class Dot:
    """`tl.dot(a.to(IN), b.to(IN)[, c])` of two square tiles (R == C >= 16): IN is fp16,
    bf16 or int8 (kind), or fp32 with input_precision "tf32" / "ieee"; fp32 (int32 for
    int8) accumulation, `c` the accumulator or None."""

    kind: str
    a: object
    b: object
    c: object = None


@dataclass(frozen=True)
class Scan:
    """`tl.cumsum(a, axis, reverse=...)` or `tl.associative_scan(a, axis, _maximum, ...)`."""

    op: str
    a: object
    axis: int
    reverse: bool = False


@dataclass(frozen=True)
class Shape:
    """A shape operation whose result is again a value of the fuzzer's dims:
    "trans" / "permute" a square tile; "reshape_trans" `tl.trans(tl.reshape(a, (C, R)))`
    and "trans_reshape" `tl.reshape(tl.trans(a), (R, C))` of any tile; "join_split0/1"
    one half of `tl.split(tl.reshape(tl.permute(tl.join(a, b), ...), ...))` (the two
    values interleaved); "broadcast" `tl.broadcast_to(tl.expand_dims(a, k), (R, C))`."""

    op: str
    a: object
    b: object = None


@dataclass(frozen=True)
class Gather:
    """`tl.gather(a, b, axis)`: b an integer value of a's dims, in range along `axis`."""

    a: object
    b: object
    axis: int


@dataclass(frozen=True)
class Rand:
    """`tl.rand(a, b)`, `tl.randn(a, b)` or `tl.randint(a, b)` (read as int32): a the seed
    (an int scalar or literal), b the int32 offsets."""

    op: str
    a: object
    b: object


# ------------------------------------------------------------------ statements and programs


@dataclass(frozen=True)
class Assign:
    name: str
    expr: object


@dataclass(frozen=True)
class Loop:
    """`for var in range(start, stop, step):` body; names the body reassigns are carried."""

    var: str
    start: int
    stop: object  # Lit or Name of an integer scalar argument
    step: int
    body: tuple


@dataclass(frozen=True)
class If:
    """`if cond:` then `else:` orelse, on a runtime scalar; names either branch reassigns
    keep their type (Triton yields them from the `scf.if`)."""

    cond: object
    then: tuple
    orelse: tuple


@dataclass(frozen=True)
class Atomic:
    """`name = tl.atomic_OP(buf_ptr + offsets, a, mask=...)` at the kernel's top level:
    `buf` is a buffer of its own (a parameter `buf_ptr`, initialised from the seed and
    compared after the launch like an output); b is an extra mask condition (or None) or,
    for "cas", the compared value (`tl.atomic_cas(buf_ptr + pid, b, a)`, scalars). Offsets
    are the stores' (each lane its own element), or with `shared` the columns (a tile or
    a row: every row of every program hits them) or element 0 (a scalar): then the old
    values are not defined and not compared, only the final memory is."""

    name: str
    buf: str
    op: str  # ATOMICS
    a: object
    b: object = None
    shared: bool = False


ATOMICS = ("add", "max", "min", "xchg", "cas")
ATOMIC_DTYPES = {"add": ("i32", "i64", "fp32"), "max": ("i32", "i64"), "min": ("i32", "i64"),
                 "xchg": ("i32", "i64", "fp32"), "cas": ("i32", "i64")}  # fmt: skip


@dataclass(frozen=True)
class Input:
    """A kernel input loaded at the top: a tile, a row ("C",), a column ("R",) or a scalar."""

    name: str
    dtype: str
    dims: tuple
    lo: float
    hi: float
    other: int | float  # the load's `other` for masked-out lanes


@dataclass(frozen=True)
class Scalar:
    """A scalar kernel argument (an int becomes i32 / i64, or the constexpr 1; a float fp32)."""

    name: str
    value: int | float


@dataclass(frozen=True)
class Output:
    name: str  # the variable stored
    dtype: str  # the output buffer's element type (a store casts to it)


@dataclass
class Program:
    R: int
    C: int
    grid: int
    n_rows: int
    n_cols: int
    inputs: list[Input]
    scalars: list[Scalar]
    body: list
    outputs: list[Output]
    seed: int = 0
    notes: list[str] = field(default_factory=list)

    def source(self) -> str:
        return render(self)

    def atomics(self) -> list:
        """The atomic statements (at the top level), whose buffers follow the outputs."""
        return [s for s in self.body if isinstance(s, Atomic)]


# ------------------------------------------------------------------ typing


@dataclass(frozen=True)
class Ty:
    dtype: str
    dims: tuple
    weak: bool = False  # a Python literal (or a constexpr): does not widen same-kind tensors


def literal_dtype(v) -> str:
    if isinstance(v, bool):
        return "i1"
    if isinstance(v, int):
        return "i32" if -(2**31) <= v < 2**31 else "i64"
    return "fp32"


def union_dims(*dims: tuple) -> tuple:
    present = set().union(*dims)
    return tuple(d for d in DIMS_ORDER if d in present)


def integer_promote(a: str, b: str) -> str:
    return a if BITS[a] >= BITS[b] else b


def computation_type(a: Ty, b: Ty, div_or_mod: bool) -> str:
    """The type both operands are cast to (Triton's `computation_type_impl`)."""
    if a.weak != b.weak:
        lit, ten = (a, b) if a.weak else (b, a)
        if KIND[lit.dtype] <= KIND[ten.dtype]:
            if div_or_mod and ten.dtype == "fp16":
                return "fp32"
            return ten.dtype
    if "fp32" in (a.dtype, b.dtype):
        return "fp32"
    if "fp16" in (a.dtype, b.dtype):
        return "fp32" if div_or_mod else "fp16"
    if div_or_mod and (a.dtype == "i1") != (b.dtype == "i1"):  # i1 is unsigned
        raise TypeRuleError(f"/, // or % of {a.dtype} and {b.dtype}: different signedness")
    return integer_promote(a.dtype, b.dtype)


def operand_types(e, env: dict) -> tuple[Ty, Ty]:
    """The types of a binary expression's operands as its type rule sees them:
    `tl.minimum` / `tl.maximum` make each operand a tensor first (upstream's `to_tensor`),
    so a literal is no longer weak: `tl.minimum(x_f16, 0.5)` is fp32, as in upstream."""
    ta, tb = typeof(e.a, env), typeof(e.b, env)
    if isinstance(e, BinOp) and e.op in MINMAX:
        ta, tb = Ty(ta.dtype, ta.dims), Ty(tb.dtype, tb.dims)
    return ta, tb


class TypeRuleError(Exception):
    """The expression would not compile (the generator avoids these)."""


def typeof(e, env: dict) -> Ty:
    """The type of expression `e`; `env` maps names to their Ty."""
    if isinstance(e, Name):
        return env[e.id]
    if isinstance(e, Lit):
        return Ty(literal_dtype(e.value), (), True)
    if isinstance(e, Zeros):
        return Ty(e.dtype, e.dims)
    if isinstance(e, Cast):
        return Ty(e.dtype, typeof(e.a, env).dims)  # tl.cast makes a tensor even of a constant
    if isinstance(e, Unary):
        t = typeof(e.a, env)
        if e.op in ("exp", "sqrt") and t.dtype not in FLOATS:
            raise TypeRuleError(f"tl.{e.op} of {t.dtype}")
        return Ty(t.dtype, t.dims, t.weak and e.op == "neg")  # -constant stays a constant
    if isinstance(e, Reduce):
        t = typeof(e.a, env)
        if not t.dims:
            raise TypeRuleError("reduce of a scalar")
        dims = t.dims[: e.axis] + t.dims[e.axis + 1 :]
        dt = t.dtype
        if e.op == "sum" and dt == "i1":  # unsigned: upstream sums it as uint32
            raise TypeRuleError("tl.sum of i1 is uint32, which the fuzzer does not model")
        if e.op != "sum" and BITS[dt] < 32:
            dt = "fp32" if dt in FLOATS else "i32"  # tl.max / tl.min widen to 32 bits first
        return Ty(dt, dims)
    if isinstance(e, Dot | Scan | Shape | Gather | Rand):
        return _typeof_newer(e, env)
    if isinstance(e, Where):
        tc, ta, tb = typeof(e.c, env), typeof(e.a, env), typeof(e.b, env)
        dt = computation_type(ta, tb, False)
        return Ty(dt, union_dims(tc.dims, ta.dims, tb.dims))
    if isinstance(e, BinOp | Compare):
        ta, tb = operand_types(e, env)
        dims = union_dims(ta.dims, tb.dims)
        div = e.op in DIVMOD
        ct = computation_type(ta, tb, div)
        weak = ta.weak and tb.weak and e.op not in MINMAX  # Python folds constant operands
        if isinstance(e, Compare):
            return Ty("i1", dims, weak)
        if e.op in ("//",) + BITWISE and ct not in INTS:
            raise TypeRuleError(f"{e.op} of {ct}")
        if e.op == "/" and ct in INTS:
            ct = "fp32"
        return Ty(ct, dims, weak)
    raise TypeError(f"not an expression: {e!r}")


def _typeof_newer(e, env: dict) -> Ty:
    """The types of the newer operations (upstream's rules for them)."""
    ta = typeof(e.a, env)
    if isinstance(e, Dot):
        tb = typeof(e.b, env)
        want = ("i32", "i64") if e.kind == "i8" else FLOATS
        if ta.dims != ("R", "C") or tb.dims != ("R", "C"):
            raise TypeRuleError("tl.dot of values that are not tiles")
        if ta.dtype not in want or tb.dtype not in want:
            raise TypeRuleError(f"tl.dot ({e.kind}) of {ta.dtype} and {tb.dtype}")
        out = Ty("i32" if e.kind == "i8" else "fp32", ("R", "C"))
        if e.c is not None and typeof(e.c, env) != out:
            raise TypeRuleError("tl.dot's accumulator has another type")
        return out
    if isinstance(e, Scan):
        if not ta.dims or ta.dtype == "i1" or ta.weak:
            raise TypeRuleError(f"a scan of {ta}")  # cumsum of i1 would be uint32
        return Ty(ta.dtype, ta.dims)
    if isinstance(e, Shape):
        if e.op == "broadcast":
            if len(ta.dims) != 1:
                raise TypeRuleError("broadcast of a value that is not 1-D")
            return Ty(ta.dtype, ("R", "C"))
        if e.op.startswith("join_split"):
            if not ta.dims or typeof(e.b, env) != ta or ta.weak:
                raise TypeRuleError("tl.join of values of different types")
            return ta
        if ta.dims != ("R", "C"):
            raise TypeRuleError(f"{e.op} of a value that is not a tile")
        return ta
    if isinstance(e, Gather):
        tb = typeof(e.b, env)
        if not ta.dims or tb.dims != ta.dims or tb.dtype not in ("i32", "i64"):
            raise TypeRuleError("tl.gather's index must be an integer value of the same dims")
        return Ty(ta.dtype, ta.dims)
    tb = typeof(e.b, env)  # Rand: the seed, the offsets
    if ta.dims or ta.dtype not in ("i32", "i64") or tb.dtype != "i32" or tb.weak:
        raise TypeRuleError("tl.rand needs an integer scalar seed and int32 offsets")
    return Ty("i32" if e.op == "randint" else "fp32", tb.dims)


def shapes_ok(p: Program) -> bool:
    """Whether the program's tile fits its shape operations: a dot needs R == C >= 16,
    `tl.trans` / `tl.permute` of a tile R == C (the shrinker changes R and C)."""
    found: set = set()

    def walk(e):
        if isinstance(e, Dot):
            found.add("dot")
        elif isinstance(e, Shape) and e.op in ("trans", "permute"):
            found.add("square")
        for f in ("a", "b", "c"):
            if hasattr(e, f):
                walk(getattr(e, f))

    def block(stmts):
        for s in stmts:
            if isinstance(s, Assign):
                walk(s.expr)
            elif isinstance(s, Atomic):
                walk(s)
            elif isinstance(s, Loop):
                block(s.body)
            else:
                block(s.then + s.orelse)

    block(p.body)
    if "dot" in found and not (p.R == p.C >= 16):
        return False
    return "square" not in found or p.R == p.C


# ------------------------------------------------------------------ source


def _atomic(e) -> bool:
    """Whether `e`'s source needs no parentheses as an operand."""
    if isinstance(e, Lit):
        return e.value >= 0
    if isinstance(e, Unary):
        return e.op != "neg"
    if isinstance(e, BinOp):
        return e.op in MINMAX
    return not isinstance(e, Compare)


def render_expr(e, env: dict, target: tuple | None = None, operand: bool = False) -> str:
    """Source of `e`; a 1-D value inside a 2-D operation (`target`) is expanded with
    `[:, None]` / `[None, :]`; `operand` parenthesizes what an operator would split."""
    t = typeof(e, env)
    text = _render(e, env, t)
    expand = target is not None and len(target) == 2 and len(t.dims) == 1
    if (expand or operand) and not _atomic(e):
        text = f"({text})"
    if expand:
        text += "[:, None]" if t.dims == ("R",) else "[None, :]"
    return text


def _render(e, env: dict, t: Ty) -> str:
    if isinstance(e, Name):
        return e.id
    if isinstance(e, Lit):
        return repr(e.value)
    if isinstance(e, Zeros):
        shape = ", ".join(e.dims) + ("," if len(e.dims) == 1 else "")
        return f"tl.zeros(({shape}), dtype={TL_DTYPE[e.dtype]})"
    if isinstance(e, Cast):
        if typeof(e.a, env).weak:  # a constexpr has no .to(): Triton's own gotcha
            return f"tl.cast({render_expr(e.a, env)}, {TL_DTYPE[e.dtype]})"
        return f"{render_expr(e.a, env, operand=True)}.to({TL_DTYPE[e.dtype]})"
    if isinstance(e, Unary):
        if e.op == "neg":
            return f"-{render_expr(e.a, env, operand=True)}"
        return f"tl.{e.op}({render_expr(e.a, env)})"
    if isinstance(e, Reduce):
        return f"tl.{e.op}({render_expr(e.a, env)}, axis={e.axis})"
    if isinstance(e, Dot | Scan | Shape | Gather | Rand):
        return _render_newer(e, env)
    if isinstance(e, Where):
        c, a, b = (render_expr(x, env, t.dims) for x in (e.c, e.a, e.b))
        return f"tl.where({c}, {a}, {b})"
    if isinstance(e, BinOp | Compare):
        if e.op in MINMAX:
            a, b = (render_expr(x, env, t.dims) for x in (e.a, e.b))
            return f"tl.{'minimum' if e.op == 'min' else 'maximum'}({a}, {b})"
        a, b = (render_expr(x, env, t.dims, operand=True) for x in (e.a, e.b))
        return f"{a} {e.op} {b}"
    raise TypeError(f"not an expression: {e!r}")


def _render_newer(e, env: dict) -> str:
    a = render_expr(e.a, env)
    if isinstance(e, Dot):
        ins = []
        for x in (e.a, e.b):
            want = "fp32" if e.kind in ("tf32", "ieee") else e.kind
            t = typeof(x, env)
            text = render_expr(x, env, operand=True)
            ins.append(text if t.dtype == want else f"{text}.to({TL_DTYPE[want]})")
        if e.c is not None:
            ins.append(render_expr(e.c, env))
            if e.kind == "i8":  # upstream asserts an accumulator is of out_dtype (fp32 else)
                ins.append("out_dtype=tl.int32")
        if e.kind in ("tf32", "ieee"):
            ins.append(f'input_precision="{e.kind}"')
        return f"tl.dot({', '.join(ins)})"
    if isinstance(e, Scan):
        rev = ", reverse=True" if e.reverse else ""
        if e.op == "cumsum":
            return f"tl.cumsum({a}, axis={e.axis}{rev})"
        return f"tl.associative_scan({a}, {e.axis}, _maximum{rev})"
    if isinstance(e, Shape):
        if e.op == "trans":
            return f"tl.trans({a})"
        if e.op == "permute":
            return f"tl.permute({a}, (1, 0))"
        if e.op == "reshape_trans":
            return f"tl.trans(tl.reshape({a}, (C, R)))"
        if e.op == "trans_reshape":
            return f"tl.reshape(tl.trans({a}), (R, C))"
        if e.op == "broadcast":
            axis = 1 if typeof(e.a, env).dims == ("R",) else 0
            return f"tl.broadcast_to(tl.expand_dims({a}, {axis}), (R, C))"
        dims = typeof(e.a, env).dims
        joined = f"tl.join({a}, {render_expr(e.b, env)})"
        if len(dims) == 2:
            moved = f"tl.reshape(tl.permute({joined}, (0, 2, 1)), (R, C, 2))"
        else:
            moved = f"tl.reshape(tl.trans({joined}), ({dims[0]}, 2))"
        return f"tl.split({moved})[{e.op[-1]}]"
    if isinstance(e, Gather):
        return f"tl.gather({a}, {render_expr(e.b, env)}, axis={e.axis})"
    call = f"tl.{e.op}({a}, {render_expr(e.b, env)})"
    return f"{call}.to(tl.int32, bitcast=True)" if e.op == "randint" else call


def _atomic_offsets(s: Atomic, dims: tuple) -> tuple[str, str | None]:
    """(offsets, mask) of an atomic statement's lanes."""
    if not s.shared:
        return _offsets(dims)
    return {
        ("R", "C"): ("cols[None, :] + 0 * rows[:, None]", "mask"),
        ("C",): ("cols", "cmask"),
        (): ("0", None),
    }[dims]


def _render_atomic(s: Atomic, env: dict) -> str:
    t = typeof(s.a, env)
    if t.weak or t.dtype not in ATOMIC_DTYPES[s.op] or (s.op == "cas" and t.dims):
        raise TypeRuleError(f"tl.atomic_{s.op} of {t}")
    value = render_expr(s.a, env)
    if s.op == "cas":
        return f"tl.atomic_cas({s.buf}_ptr + pid, {render_expr(s.b, env)}, {value})"
    offs, mask = _atomic_offsets(s, t.dims)
    if s.b is not None:
        extra = render_expr(s.b, env, t.dims, operand=True)
        mask = f"{mask} & {extra}" if mask else extra
    m = f", mask={mask}" if mask else ""
    return f"tl.atomic_{s.op}({s.buf}_ptr + {offs}, {value}{m})"


def input_env(p: Program) -> dict:
    """Types of the names every kernel starts with, and of its inputs and scalar arguments."""
    env = {
        "pid": Ty("i32", ()),
        "rows": Ty("i32", ("R",)),
        "cols": Ty("i32", ("C",)),
    }
    for s in p.scalars:
        if isinstance(s.value, float):
            env[s.name] = Ty("fp32", ())
        elif s.value == 1:
            env[s.name] = Ty("i32", (), True)  # specialised to the constexpr 1
        else:
            env[s.name] = Ty(literal_dtype(s.value), ())
    for x in p.inputs:
        env[x.name] = Ty(x.dtype, x.dims)
    return env


def _offsets(dims: tuple) -> tuple[str, str]:
    """(pointer offsets, mask) for loading or storing a value of `dims`."""
    return {
        ("R", "C"): ("rows[:, None] * n_cols + cols[None, :]", "mask"),
        ("R",): ("rows", "rmask"),
        ("C",): ("pid * n_cols + cols", "cmask"),
        (): ("pid", None),
    }[dims]


def _input_offsets(dims: tuple) -> tuple[str, str | None]:
    if dims == ("C",):
        return "cols", "cmask"  # every program reads the same row
    return _offsets(dims)


def render(p: Program, package: str = "tritium") -> str:
    """The kernel's module source; `package="triton"` writes the same kernel for upstream
    Triton (`import triton`, `@triton.jit`: the language is the same)."""
    params = [f"{x.name}_ptr" for x in p.inputs] + [f"out{i}_ptr" for i in range(len(p.outputs))]
    params += [f"{a.buf}_ptr" for a in p.atomics()]
    params += (
        ["n_rows", "n_cols"] + [s.name for s in p.scalars] + ["R: tl.constexpr", "C: tl.constexpr"]
    )
    lines = [
        f"import {package}",
        f"import {package}.language as tl",
        "",
        "",
        f"@{package}.jit",
        f"def fuzz_kernel({', '.join(params)}):",
        "    pid = tl.program_id(0)",
        "    rows = pid * R + tl.arange(0, R)",
        "    cols = tl.arange(0, C)",
        "    rmask = rows < n_rows",
        "    cmask = cols < n_cols",
        "    mask = rmask[:, None] & cmask[None, :]",
    ]
    env = input_env(p)
    for x in p.inputs:
        offs, mask = _input_offsets(x.dims)
        m = f", mask={mask}, other={x.other!r}" if mask else ""
        lines.append(f"    {x.name} = tl.load({x.name}_ptr + {offs}{m})")
    _render_block(p.body, env, lines, "    ")
    for i, o in enumerate(p.outputs):
        offs, mask = _offsets(env[o.name].dims)
        m = f", mask={mask}" if mask else ""
        lines.append(f"    tl.store(out{i}_ptr + {offs}, {o.name}{m})")
    if "_maximum" in "\n".join(lines):  # the combine function of a max scan
        lines += ["", "", f"@{package}.jit", "def _maximum(a, b):", "    return tl.maximum(a, b)"]
    return "\n".join(lines) + "\n"


def _render_block(stmts, env: dict, lines: list, indent: str) -> None:
    for s in stmts:
        if isinstance(s, Assign):
            lines.append(f"{indent}{s.name} = {render_expr(s.expr, env)}")
            env[s.name] = typeof(s.expr, env)
        elif isinstance(s, Atomic):
            lines.append(f"{indent}{s.name} = {_render_atomic(s, env)}")
            env[s.name] = typeof(s.a, env)
        elif isinstance(s, If):
            lines.append(f"{indent}if {render_expr(s.cond, env)}:")
            for block, head in ((s.then, None), (s.orelse, "else:")):
                if head:
                    if not block:
                        continue
                    lines.append(f"{indent}{head}")
                inner = dict(env)
                _render_block(block or (), inner, lines, indent + "    ")
                if not block:
                    lines.append(f"{indent}    pass")
        else:
            stop = render_expr(s.stop, env)
            step = f", {s.step}" if s.step != 1 else ""
            lines.append(f"{indent}for {s.var} in range({s.start}, {stop}{step}):")
            inner = dict(env)
            inner[s.var] = Ty("i32", ())
            _render_block(s.body, inner, lines, indent + "    ")
            for a in s.body:  # carried names keep their type; loop temporaries end here
                if a.name in env:
                    env[a.name] = inner[a.name]
