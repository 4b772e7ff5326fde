"""The interpreter's program ids: which program of the grid is running.

    %pid = tt.get_program_id x : i32      ->  st.pid[0]   (an np.int32)
    %n = tt.get_num_programs y : i32      ->  st.grid[1]

`grid.interpret` runs the programs one after another and sets `st.pid` before each.
"""

from __future__ import annotations


def _program_id(field):
    def build(op, fc):
        out, axis = fc(op.result), op.axis_value

        def run(env, st):
            env[out] = getattr(st, field)[axis]

        return run

    return build


HANDLERS = {
    "tt.get_program_id": _program_id("pid"),
    "tt.get_num_programs": _program_id("grid"),
}

__all__ = ["HANDLERS"]
