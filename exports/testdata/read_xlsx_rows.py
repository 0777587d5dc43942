"""Reads the first sheet of a workbook with openpyxl, in read-only mode or
normally (argv[2]: readonly or normal), and prints each row as a JSON array
on a line of its own: text as it is, numbers as Python's repr, dates in ISO
form, booleans as TRUE or FALSE, empty cells as null."""
import datetime
import json
import sys

import openpyxl


def cell(v):
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, float)):
        return repr(v)
    return v


wb = openpyxl.load_workbook(sys.argv[1], read_only=sys.argv[2] == "readonly")
ws = wb.worksheets[0]
out = sys.stdout
for row in ws.iter_rows(values_only=True):
    out.write(json.dumps([cell(v) for v in row]))
    out.write("\n")
