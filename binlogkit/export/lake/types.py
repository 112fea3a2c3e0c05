"""Arrow types of the export layout as a lakehouse table can hold them (pure).

Iceberg and Delta have no unsigned integers, no duration, decimals of at most 38 digits and
timestamps in microseconds only:

==========================  ===============================================================
export type                 table type
==========================  ===============================================================
int8 / int16, uint8/16      int32
uint32                      int64
uint64                      decimal(20, 0)
duration[us] (TIME)         int64 microseconds
decimal256(p, s), p > 38    string (the exact decimal text)
timestamp[ms]               timestamp[us] (the same instant)
everything else             as it is
==========================  ===============================================================
"""

from __future__ import annotations


def lake_type(t):
    import pyarrow as pa

    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_uint8(t) or pa.types.is_uint16(t):
        return pa.int32()
    if pa.types.is_uint32(t):
        return pa.int64()
    if pa.types.is_uint64(t):
        return pa.decimal128(20, 0)
    if pa.types.is_duration(t):
        return pa.int64()
    if pa.types.is_decimal(t) and t.precision > 38:
        return pa.string()
    if pa.types.is_timestamp(t) and t.unit != "us":
        return pa.timestamp("us", tz=t.tz)
    if pa.types.is_list(t):
        return pa.list_(lake_type(t.value_type))
    return t


def lake_schema(schema):
    import pyarrow as pa

    return pa.schema([pa.field(f.name, lake_type(f.type)) for f in schema])


def to_lake(table):
    """``table`` cast to ``lake_schema`` of its schema (metadata dropped)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = []
    for f, col in zip(table.schema, table.columns):
        want = lake_type(f.type)
        if want == f.type:
            cols.append(col)
        elif pa.types.is_duration(f.type):
            cols.append(pc.cast(col, pa.int64()))
        elif pa.types.is_string(want) and pa.types.is_decimal(f.type):
            cols.append(pa.array([None if v is None else format(v, "f") for v in col.to_pylist()], pa.string()))
        else:
            cols.append(pc.cast(col, want))
    return pa.Table.from_arrays(cols, schema=lake_schema(table.schema))


def cast(values, typ):
    """``values`` (an Arrow array / chunked array) as ``typ`` for a retyped column (MODIFY),
    unchecked: an integer becomes a DECIMAL through the widest decimal of its kind (Arrow will
    not cast an int64 to a DECIMAL(20,2) directly: it wants room for every int64)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_integer(values.type) and pa.types.is_decimal(typ):
        wide = pa.decimal256(76, typ.scale) if pa.types.is_decimal256(typ) else pa.decimal128(38, typ.scale)
        values = pc.cast(values, wide, safe=False)
    return pc.cast(values, typ, safe=False)
