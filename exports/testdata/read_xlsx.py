"""Reads a workbook the way many analysts' scripts do: openpyxl in read-only
mode, which trusts each sheet's declared range. Prints every sheet as JSON:
its declared range and its rows, each cell as [value, number format], dates
in ISO form."""
import datetime
import json
import sys

import openpyxl


def cell(c):
    v = c.value
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        v = v.isoformat()
    elif isinstance(v, float):
        v = repr(v)
    elif isinstance(v, bool):
        v = "TRUE" if v else "FALSE"
    elif isinstance(v, int):
        v = str(v)
    return [v, getattr(c, "number_format", None)]


wb = openpyxl.load_workbook(sys.argv[1], read_only=True)
out = {}
for ws in wb.worksheets:
    out[ws.title] = {
        "dimension": ws.calculate_dimension(),
        "rows": [[cell(c) for c in row] for row in ws.iter_rows()],
    }
json.dump(out, sys.stdout)
