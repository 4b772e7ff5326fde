"""Device memory through the CUDA driver: allocations, copies, memset, and what CUDA knows
about an address (which device holds it, what kind of memory, its allocation's range).

    >>> from tritium.runtime import memory
    >>> ptr = memory.mem_alloc(4096, ordinal=1)          # in device 1's context
    >>> memory.memcpy_htod(ptr, np.arange(1024, dtype=np.float32), 4096, ordinal=1)
    >>> memory.pointer_device(ptr), memory.pointer_memory_type(ptr)
    (1, 'device')

Every call goes through `driver` (driver.py: the lazily imported cuda-python module, result
checking, contexts and streams) by attribute, so a test that replaces a driver function
(`monkeypatch.setattr(driver, "synchronize", ...)`) replaces it here too.
"""

from __future__ import annotations

from typing import Any

from tritium.runtime import driver

__all__ = [
    "device_allocation",
    "mem_alloc",
    "mem_free",
    "memcpy_dtod_async",
    "memcpy_dtoh",
    "memcpy_dtoh_async",
    "memcpy_htod",
    "memcpy_htod_async",
    "memset_d8",
    "pointer_device",
    "pointer_memory_type",
]


def mem_alloc(nbytes: int, ordinal: int | None = None) -> int:
    """cuMemAlloc on device `ordinal` (default: the thread's current context): a device
    address (int). Zero bytes gives address 0 and allocates nothing."""
    if nbytes <= 0:
        return 0
    with driver.in_context(ordinal):
        err, ptr = driver.cuda().cuMemAlloc(nbytes)
    if err:
        raise driver.launch_error(err, "cuMemAlloc", detail=f"allocating {nbytes} bytes")
    return int(ptr)


def mem_free(ptr: int, quiet: bool = False, ordinal: int | None = None) -> None:
    """cuMemFree (in device `ordinal`'s context when given: a finalizer may run on a thread
    that never used CUDA, or where another device is current). With `quiet`, errors are
    ignored (for finalizers, and after a lost context)."""
    if not ptr:
        return
    try:
        with driver.in_context(ordinal):
            err = driver.cuda().cuMemFree(ptr)[0]
    except Exception:
        if quiet:
            return
        raise
    if err and not quiet:
        raise driver.launch_error(err, "cuMemFree")


def _host(buf: Any) -> Any:
    """A host buffer as cuda-python should get it: numpy arrays by address (cuda-python tries
    int(x) first, which for a one-element array is its *value*), bytes-likes as they are."""
    iface = getattr(buf, "__array_interface__", None)
    return iface["data"][0] if iface is not None else buf


def memcpy_htod_async(dst: int, src: Any, nbytes: int, s: Any = None) -> None:
    """Copy `nbytes` from host `src` (an int address, numpy array or bytes-like) to `dst`.
    From pageable memory the copy has left `src` when this returns."""
    if nbytes:
        driver.check(driver.cuda().cuMemcpyHtoDAsync(dst, _host(src), nbytes, driver.stream(s))[0], "cuMemcpyHtoDAsync")


def memcpy_dtoh_async(dst: Any, src: int, nbytes: int, s: Any = None) -> None:
    """Copy `nbytes` from device address `src` to host `dst` (an int address, numpy array or
    writable bytes-like). Into pageable memory the copy is complete when this returns."""
    if nbytes:
        driver.check(driver.cuda().cuMemcpyDtoHAsync(_host(dst), src, nbytes, driver.stream(s))[0], "cuMemcpyDtoHAsync")


def memcpy_dtod_async(dst: int, src: int, nbytes: int, s: Any = None) -> None:
    if nbytes:
        driver.check(driver.cuda().cuMemcpyDtoDAsync(dst, src, nbytes, driver.stream(s))[0], "cuMemcpyDtoDAsync")


def memcpy_htod(dst: int, src: Any, nbytes: int, s: Any = None, ordinal: int | None = None) -> None:
    """Host-to-device copy on stream `s` (of device `ordinal`, default: the thread's current
    context), then wait for the stream."""
    with driver.in_context(ordinal):
        memcpy_htod_async(dst, src, nbytes, s)
        driver.synchronize(s)


def memcpy_dtoh(dst: Any, src: int, nbytes: int, s: Any = None, ordinal: int | None = None) -> None:
    """Device-to-host copy on stream `s` (of device `ordinal`, default: the thread's current
    context), then wait for the stream."""
    with driver.in_context(ordinal):
        memcpy_dtoh_async(dst, src, nbytes, s)
        driver.synchronize(s)


def memset_d8(ptr: int, value: int, nbytes: int, s: Any = None, ordinal: int | None = None) -> None:
    if nbytes:
        with driver.in_context(ordinal):
            driver.check(driver.cuda().cuMemsetD8Async(ptr, value, nbytes, driver.stream(s))[0], "cuMemsetD8Async")


def pointer_memory_type(ptr: int) -> str | None:
    """'device', 'host' (pinned), 'unified' or 'array' for an address CUDA knows; else None."""
    value = _pointer_attribute("CU_POINTER_ATTRIBUTE_MEMORY_TYPE", ptr)
    if value is None:
        return None
    return {1: "host", 2: "device", 3: "array", 4: "unified"}.get(value, "unknown")


def _pointer_attribute(name: str, ptr: int) -> int | None:
    """cuPointerGetAttribute(name, ptr) as an int, or None for an address CUDA does not know
    (asked in the current device's context on a thread that has none)."""
    cu = driver.cuda()
    attr = getattr(cu.CUpointer_attribute, name)
    err, value = cu.cuPointerGetAttribute(attr, ptr)
    if err and driver.error_name(err) == "CUDA_ERROR_INVALID_CONTEXT":  # a thread new to CUDA
        with driver.in_context(None):
            err, value = cu.cuPointerGetAttribute(attr, ptr)
    return None if err else int(value)


def pointer_device(ptr: int) -> int | None:
    """The ordinal of the device holding address `ptr` (cuPointerGetAttribute's
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL), or None: no GPU, or an address CUDA does not know."""
    if not ptr or not driver.gpu_available():
        return None
    return _pointer_attribute("CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL", ptr)



def device_allocation(ptr: int) -> tuple[int, int] | None:
    """(base, size) of the device allocation holding address `ptr` (on any device), or None."""
    driver.ensure_context()
    err, base, size = driver.cuda().cuMemGetAddressRange(ptr)
    return None if err else (int(base), int(size))
