"""LLVM beside Python: a function run in a thread while this one works on, and the thread
switch interval that lets that thread have the GIL back promptly.

    with prompt_handoff():
        llvm = Background(lambda: llir_to_ptx(llir, arch))   # C++ through ctypes: no GIL
        asm["ttgir"] = print_ir(module)                       # Python work meanwhile
        ptx = llvm.result()                                   # its value, or its exception

(compiler.lower: where a core is free, the TTGIR's verification and printing cost no time.)
"""

from __future__ import annotations

import contextlib
import sys
import threading


class Background(threading.Thread):
    """`fn()` run in a thread from now on; `result()` waits for it: its value, or its
    exception raised here."""

    def __init__(self, fn):
        super().__init__(name="tritium-compile", daemon=True)
        self._fn, self._value, self._error = fn, None, None
        self.start()

    def run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as e:  # noqa: BLE001 - handed to the waiting thread
            self._error = e

    def result(self):
        self.join()
        if self._error is not None:
            raise self._error
        return self._value


_handoff_lock = threading.Lock()
_handoff_users = [0, 0.0]  # compiles inside prompt_handoff, the interval they found


@contextlib.contextmanager
def prompt_handoff():
    """Python's thread switch interval at 0.1 ms meanwhile (then as found). LLVM's thread
    needs the GIL back after each of its calls (parse, O3, print, codegen, ...); with the
    default 5 ms this thread, busy printing, kept it waiting up to 5 ms each time: on a
    16-core machine the LLVM stage of a GEMM took ~40 ms longer beside the prints."""
    with _handoff_lock:
        if _handoff_users[0] == 0:
            _handoff_users[1] = sys.getswitchinterval()
            sys.setswitchinterval(1e-4)
        _handoff_users[0] += 1
    try:
        yield
    finally:
        with _handoff_lock:
            _handoff_users[0] -= 1
            if _handoff_users[0] == 0:
                sys.setswitchinterval(_handoff_users[1])


__all__ = ["Background", "prompt_handoff"]
