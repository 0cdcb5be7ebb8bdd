"""Reading the CSV files shipped in ``streamcal/datasets/data`` (private)."""

from __future__ import annotations

import csv
import gzip
import importlib.resources
import io

import numpy as np

__all__ = ["read_columns"]


def read_columns(
    filename: str,
    text_columns: tuple[str, ...] = (),
    int_columns: tuple[str, ...] = (),
    time_column: str | None = None,
    time_unit: str = "D",
) -> dict[str, np.ndarray]:
    """The columns of ``data/<filename>`` (gzip-compressed if the name ends in ``.gz``),
    name to numpy array, in file order.

    ``text_columns`` stay strings, ``int_columns`` become int64, ``time_column`` becomes
    ``datetime64[time_unit]`` (a trailing ``Z``, for UTC, is dropped); every other
    column is float64, with empty fields read as NaN.
    """
    data = (
        importlib.resources.files("streamcal.datasets")
        .joinpath("data", filename)
        .read_bytes()
    )
    if filename.endswith(".gz"):
        data = gzip.decompress(data)
    reader = csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
    header = next(reader)
    rows = list(reader)
    columns = {}
    for j, name in enumerate(header):
        values = [row[j] for row in rows]
        if name in text_columns:
            columns[name] = np.array(values)
        elif name in int_columns:
            columns[name] = np.array([int(v) for v in values], dtype=np.int64)
        elif name == time_column:
            columns[name] = np.array(
                [v.rstrip("Z") for v in values], dtype=f"datetime64[{time_unit}]"
            )
        else:
            columns[name] = np.array(
                [float(v) if v != "" else np.nan for v in values], dtype=np.float64
            )
    return columns
