"""Ahead-of-time artifacts: a compiled kernel saved as PTX plus what it takes to launch it.

    c_wrapper.py  a C header + source embedding the PTX, with load_/launch_/unload_
                  functions on the CUDA driver API (`tritium compile ... --c-header K`)

The JSON file beside the PTX (`tritium compile ... --meta K.json`) is the runtime's
(`tritium/runtime/metadata.py`): loading a saved kernel from Python is `tritium.load_ptx`
(`tritium/aot_runtime.py`), which imports the runtime only. Nothing here imports the compiler.
"""
