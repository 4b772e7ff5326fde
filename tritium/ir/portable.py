"""An IR module as flat data that pickles, to hand it to another process.

    data = to_portable(module)        # nested tuples of op classes, types, attributes, ids
    pickle.dumps(data)                # a few ms for attention's frontend TTIR
    copy = from_portable(data)        # (in the other process) the same module, rebuilt

xDSL's IR is a graph of linked lists (ops, blocks, the uses of each value), which the
pickle module walks recursively: the attention forward's 189-op TTIR already passes
Python's recursion limit. Printing it and parsing the text works but costs ~10x more
(xDSL's parser: ~20 ms for a vector add's 30 ops on the 2-core machine, its formats
parsed on first use, against ~1 ms here). So the module goes as data, in program order:
for each op its class, operand value ids, result types and name hints, properties,
attributes, location, successor block ids and regions (blocks with their arguments' types,
locations and names); the attributes and types themselves pickle as they are (frozen
dataclasses: trees, not linked lists). `from_portable` rebuilds it as xDSL's
`Operation.clone` does (`create` with the same operands, result types, properties,
attributes, location, successors and regions; every operand set once all values exist,
so a use before its definition in block order is kept), with every name copied as it
is (`_name`, as `compiler._snapshot` does: the name setter would strip a `_N` suffix).
"""

from __future__ import annotations

from xdsl.ir import Block, Operation, Region


def to_portable(op: Operation) -> tuple:
    """`op` (and everything nested in it) as data of tuples, op classes and attributes."""
    ids: dict = {}  # SSA value or block -> its id

    def value_id(v) -> int:
        return ids.setdefault(v, len(ids))

    def region_data(region: Region) -> tuple:
        for block in region.blocks:  # (successors may name a later block)
            value_id(block)
        return tuple(
            (
                value_id(block),
                block._name,
                tuple((value_id(a), a.type, a.location, a._name) for a in block.args),
                tuple(op_data(o) for o in block.ops),
            )
            for block in region.blocks
        )

    def op_data(o: Operation) -> tuple:
        return (
            type(o),
            tuple((value_id(r), r.type, r._name) for r in o.results),
            dict(o.properties),
            dict(o.attributes),
            o.location,
            tuple(value_id(b) for b in o.successors),
            tuple(region_data(r) for r in o.regions),
            tuple(value_id(v) for v in o.operands),
        )

    return op_data(op)


def from_portable(data: tuple) -> Operation:
    """The op `to_portable` described, rebuilt (a new, detached op)."""
    values: dict[int, object] = {}
    operands: list[tuple[Operation, tuple[int, ...]]] = []

    def region_of(blocks: tuple) -> Region:
        region = Region()
        for block_id, name, args, _ in blocks:
            block = Block()
            for i, (_, type_, location, _) in enumerate(args):
                block.insert_arg(type_, i, location)
            block._name = name
            for arg, (arg_id, _, _, arg_name) in zip(block.args, args, strict=True):
                arg._name = arg_name
                values[arg_id] = arg
            values[block_id] = block
            region.add_block(block)
        for block, (_, _, _, ops) in zip(region.blocks, blocks, strict=True):
            block.add_ops([op_of(o) for o in ops])
        return region

    def op_of(o: tuple) -> Operation:
        cls, results, properties, attributes, location, successors, regions, uses = o
        op = cls.create(
            result_types=[t for _, t, _ in results],
            properties=properties,
            attributes=attributes,
            location=location,
            successors=[values[b] for b in successors],
            regions=[region_of(r) for r in regions],
        )
        for result, (result_id, _, name) in zip(op.results, results, strict=True):
            result._name = name
            values[result_id] = result
        if uses:
            operands.append((op, uses))
        return op

    op = op_of(data)
    for user, uses in operands:
        user.operands = tuple(values[i] for i in uses)
    return op


__all__ = ["from_portable", "to_portable"]
