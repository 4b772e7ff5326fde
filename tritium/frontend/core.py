"""The Triton language's value model: dtypes, `constexpr`, and `tensor`.

A kernel manipulates two kinds of values while it is being compiled:

* `constexpr`: a Python value known at compile time (block sizes, flags, literals);
* `tensor`: an IR value — a scalar (`shape == ()`) or a block of scalars — holding its
  xDSL SSA value (`handle`) and its Triton type (`dtype` + `shape`). Signedness lives
  here: the IR's integers are signless, so `uint32` and `int32` are both `i32` there.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from functools import cached_property

from xdsl.ir import Attribute, SSAValue

from tritium.frontend.semantic_errors import SemanticError
from tritium.ir import types as irt


class dtype:
    """A scalar type of the Triton language (`tl.float32`, `tl.int64`, `tl.pointer_type(...)`)."""

    SINT = ("int8", "int16", "int32", "int64")
    UINT = ("int1", "uint8", "uint16", "uint32", "uint64")
    FP8 = ("fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16")
    FP = ("fp16", "bf16", "fp32", "fp64") + FP8
    # fp8 formats: (exponent bits, mantissa bits, IR type); tritium's targets (sm_80-sm_90)
    # have no conversions for the last three (AMD's fnuz formats, the deprecated e4b15)
    FP8_FORMATS = {
        "fp8e4nv": (4, 3, irt.f8E4M3FN),
        "fp8e5": (5, 2, irt.f8E5M2),
        "fp8e4b15": (4, 3, irt.f8E4M3B11FNUZ),
        "fp8e4b8": (4, 3, irt.f8E4M3FNUZ),
        "fp8e5b16": (5, 2, irt.f8E5M2FNUZ),
    }

    def __init__(self, name: str):
        assert name in self.SINT + self.UINT + self.FP or name == "void", name
        self.name = name

    class SIGNEDNESS(Enum):
        SIGNED = 0
        UNSIGNED = 1

    # --- classification (upstream's methods, so kernels can branch on them: folded at
    # compile time, e.g. `if x.dtype.is_floating():`) -------------------------------
    def is_ptr(self) -> bool:
        return False

    def is_const(self) -> bool:
        return False

    def is_fp8(self) -> bool:
        return self.name in self.FP8

    def is_fp8e4nv(self) -> bool:
        return self.name == "fp8e4nv"

    def is_fp8e5(self) -> bool:
        return self.name == "fp8e5"

    def is_fp8e4b15(self) -> bool:
        return self.name == "fp8e4b15"

    def is_fp8e4b8(self) -> bool:
        return self.name == "fp8e4b8"

    def is_fp8e5b16(self) -> bool:
        return self.name == "fp8e5b16"

    def is_standard_floating(self) -> bool:
        return self.name in self.FP and not self.is_fp8()

    def is_int1(self) -> bool:
        return self.name == "int1"

    def is_int8(self) -> bool:
        return self.name == "int8"

    def is_int16(self) -> bool:
        return self.name == "int16"

    def is_int32(self) -> bool:
        return self.name == "int32"

    def is_int64(self) -> bool:
        return self.name == "int64"

    def is_uint8(self) -> bool:
        return self.name == "uint8"

    def is_uint16(self) -> bool:
        return self.name == "uint16"

    def is_uint32(self) -> bool:
        return self.name == "uint32"

    def is_uint64(self) -> bool:
        return self.name == "uint64"

    @staticmethod
    def is_dtype(type_str: str) -> bool:
        return type_str in dtype.SINT + dtype.UINT + dtype.FP + ("void",)

    @property
    def int_signedness(self) -> dtype.SIGNEDNESS:
        return self.SIGNEDNESS.UNSIGNED if self.is_int_unsigned() else self.SIGNEDNESS.SIGNED

    @property
    def itemsize(self) -> int:
        return self.primitive_bitwidth // 8

    @property
    def exponent_bias(self) -> int:
        return {"fp16": 15, "bf16": 127, "fp32": 127, "fp64": 1023}[self.name]

    def codegen_name(self) -> str:
        if self.name.startswith("fp"):
            return "float" + self.name[2:]
        if self.name.startswith("bf"):
            return "bfloat" + self.name[2:]
        return self.name

    def with_element_ty(self, element_ty: dtype) -> dtype:
        return element_ty

    def is_block_ptr(self) -> bool:
        return False

    def is_block(self) -> bool:
        return False

    def is_void(self) -> bool:
        return self.name == "void"

    def is_bool(self) -> bool:
        return self.name == "int1"

    def is_int(self) -> bool:
        return self.name in self.SINT or self.name in self.UINT

    def is_int_signed(self) -> bool:
        return self.name in self.SINT

    def is_int_unsigned(self) -> bool:
        return self.name in self.UINT

    def is_floating(self) -> bool:
        return self.name in self.FP

    def is_fp16(self) -> bool:
        return self.name == "fp16"

    def is_bf16(self) -> bool:
        return self.name == "bf16"

    def is_fp32(self) -> bool:
        return self.name == "fp32"

    def is_fp64(self) -> bool:
        return self.name == "fp64"

    def kind(self) -> int:
        """Ordering used by scalar promotion: bool < integer < floating."""
        if self.is_bool():
            return 0
        if self.is_int():
            return 1
        return 2

    @property
    def int_bitwidth(self) -> int:
        return int(self.name.removeprefix("u").removeprefix("int")) if self.is_int() else 0

    @property
    def primitive_bitwidth(self) -> int:
        if self.is_int():
            return self.int_bitwidth
        if self.is_fp8():
            return 8
        return {"fp16": 16, "bf16": 16, "fp32": 32, "fp64": 64}[self.name]

    @property
    def fp_mantissa_width(self) -> int:
        if self.is_fp8():
            return self.FP8_FORMATS[self.name][1]
        return {"fp16": 10, "bf16": 7, "fp32": 23, "fp64": 52}[self.name]

    def get_int_max_value(self) -> int:
        w = self.int_bitwidth
        return (1 << w) - 1 if self.is_int_unsigned() else (1 << (w - 1)) - 1

    def get_int_min_value(self) -> int:
        return 0 if self.is_int_unsigned() else -(1 << (self.int_bitwidth - 1))

    @property
    def scalar(self) -> dtype:
        return self

    # --- IR --------------------------------------------------------------
    def to_ir(self) -> Attribute:
        if self.is_int():
            return irt.IntegerType(self.int_bitwidth)
        if self.name in self.FP8[2:]:
            raise SemanticError(
                f"{self.name} is not supported on tritium's targets (sm_80-sm_90, as upstream's "
                "CUDA backend on Hopper); use tl.float8e4nv or tl.float8e5"
            )
        if self.is_fp8():
            return self.FP8_FORMATS[self.name][2]
        return {"fp16": irt.f16, "bf16": irt.bf16, "fp32": irt.f32, "fp64": irt.f64}[self.name]

    @property
    def signature(self) -> str:
        """The name used in signatures: i32, u8, fp32, bf16, i1."""
        if self.is_int():
            return ("u" if self.is_int_unsigned() and not self.is_bool() else "i") + str(
                self.int_bitwidth
            )
        return self.name

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, dtype) and type(other) is type(self) and self._key() == other._key()
        )

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self):
        return self.name

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"triton.language.{self.name}"


class pointer_type(dtype):
    """`tl.pointer_type(tl.float32)`: a pointer to global memory (address space 1).

    A block pointer (`tl.make_block_ptr`) is a `pointer_type(block_type(...))`, as
    upstream: `!tt.ptr<tensor<32x64xf16>>` in the IR.
    """

    def __init__(
        self, element_ty: dtype, address_space: int = 1, const: bool = False, origin: str = ""
    ):
        self.element_ty = element_ty
        self.address_space = address_space
        self.const = const
        self.origin = origin  # the `tl.const` parameter it comes from (for errors; not part of the type)
        self.name = f"{'const_' if const else ''}pointer<{self.element_ty}>"

    def is_ptr(self) -> bool:
        return True

    def is_const(self) -> bool:
        return self.const

    def is_block_ptr(self) -> bool:
        return self.element_ty.is_block()

    def is_int(self) -> bool:
        return False

    def is_floating(self) -> bool:
        return False

    def is_bool(self) -> bool:
        return False

    def kind(self) -> int:
        return 3

    @property
    def primitive_bitwidth(self) -> int:
        return 64

    def to_ir(self) -> Attribute:
        return irt.PointerType(self.element_ty.to_ir(), self.address_space)

    @property
    def signature(self) -> str:
        return "*" + self.element_ty.signature

    def _key(self):
        return ("ptr", self.element_ty._key(), self.address_space, self.const)

    def __repr__(self) -> str:
        return f"pointer_type({self.element_ty!r}{', const=True' if self.const else ''})"


class block_type:
    """The type of a block tensor: a scalar dtype and a static shape."""

    def __init__(self, element_ty: dtype, shape: Sequence[int]):
        self.element_ty = element_ty
        self.shape = tuple(int(s) for s in shape)

    @property
    def scalar(self) -> dtype:
        return self.element_ty

    def is_block(self) -> bool:
        return True

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def to_ir(self) -> Attribute:
        return irt.tensor(self.shape, self.element_ty.to_ir())

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, block_type)
            and self.shape == other.shape
            and self.element_ty == other.element_ty
        )

    def __hash__(self) -> int:
        return hash((self.element_ty, self.shape))

    def _key(self):  # as the pointee of a block pointer's pointer_type
        return ("block", self.element_ty._key(), self.shape)

    def __str__(self) -> str:
        return f"<{list(self.shape)}, {self.element_ty}>"


class const:
    """`x_ptr: tl.const`: the annotation marking a kernel's pointer parameter as pointing
    to read-only data (as upstream): storing through it is a compile error."""


void = dtype("void")
int1 = dtype("int1")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = dtype("fp32")
float64 = dtype("fp64")
float8e4nv = dtype("fp8e4nv")
float8e5 = dtype("fp8e5")
float8e4b15 = dtype("fp8e4b15")
float8e4b8 = dtype("fp8e4b8")
float8e5b16 = dtype("fp8e5b16")

pi32_t = pointer_type(int32)  # upstream's one exported pointer-type alias

DTYPES_BY_SIGNATURE = {
    "i1": int1,
    "i8": int8,
    "i16": int16,
    "i32": int32,
    "i64": int64,
    "u1": int1,
    "u8": uint8,
    "u16": uint16,
    "u32": uint32,
    "u64": uint64,
    "fp16": float16,
    "bf16": bfloat16,
    "fp32": float32,
    "fp64": float64,
    "fp8e4nv": float8e4nv,
    "fp8e5": float8e5,
    "fp8e4b15": float8e4b15,
    "fp8e4b8": float8e4b8,
    "fp8e5b16": float8e5b16,
}


def dtype_from_signature(s: str) -> dtype:
    """`"*fp32"` -> pointer_type(float32); `"i32"` -> int32. Raises KeyError if unknown."""
    if s.startswith("*"):
        return pointer_type(dtype_from_signature(s[1:]))
    return DTYPES_BY_SIGNATURE[s]


class constexpr:
    """A compile-time constant. Also the annotation marking a kernel parameter as one."""

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    def __bool__(self) -> bool:
        return bool(self.value)

    def __index__(self) -> int:
        return self.value.__index__()

    def __eq__(self, other) -> bool:
        return self.value == (other.value if isinstance(other, constexpr) else other)

    def __hash__(self) -> int:
        return hash(self.value)


class tensor:
    """An IR value with its Triton type. `shape == ()` for scalars."""

    def __init__(self, handle: SSAValue, type: dtype | block_type):
        self.handle = handle
        self.type = type

    @property
    def dtype(self) -> dtype:
        return self.type.scalar

    @cached_property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape if self.type.is_block() else ()

    @property
    def numel(self) -> int:
        return self.type.numel if self.type.is_block() else 1

    def __repr__(self) -> str:
        return f"tensor({self.type})"

    def __bool__(self):
        raise TypeError(
            "a tensor's truth value is not known at compile time; "
            "use tl.where for tensors, or make the value a tl.constexpr"
        )


def is_value(x) -> bool:
    return isinstance(x, tensor)


def unwrap(x):
    """The Python value of a constexpr, or `x` itself."""
    return x.value if isinstance(x, constexpr) else x
