"""Print one table of a public file as a reference reader reads it, as JSON.

Usage: refstored.py PATH SHEET HEADER LAST NA [SKIP]

The csv module reads .csv, xlrd .xls, openpyxl .xlsx. HEADER is the row
(from 1) of the header (its last, when several rows make it), LAST the
last data row (0: to the end), NA the comma-separated marks of a missing
value (pandas' na_values), SKIP the comma-separated rows to leave out
(pandas' skiprows). Each cell is
"n:<repr of the float>", "d:<ISO date>", "b:TRUE|FALSE", "s:<text>" or null;
rows with no value are left out, as datadesk leaves them out and counts them.
"""
import csv
import datetime
import json
import sys


def cell(v, na):
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return "b:" + ("TRUE" if v else "FALSE")
    if isinstance(v, datetime.datetime):
        if (v.hour, v.minute, v.second) == (0, 0, 0):
            return "d:" + v.strftime("%Y-%m-%d")
        return "dt:" + v.strftime("%Y-%m-%dT%H:%M:%S")
    if isinstance(v, (int, float)):
        return "n:" + repr(float(v))
    s = str(v)
    if s.strip() in na:
        return None
    try:
        return "n:" + repr(float(s))
    except ValueError:
        return "s:" + s


def rows_of(path, sheet):
    low = path.lower()
    if low.endswith(".csv"):
        with open(path, newline="", encoding="utf-8-sig") as f:
            return [r for r in csv.reader(f)]
    if low.endswith(".xls"):
        import xlrd
        book = xlrd.open_workbook(path)
        sh = book.sheet_by_name(sheet) if sheet else book.sheet_by_index(0)
        out = []
        for r in range(sh.nrows):
            row = []
            for c in range(sh.ncols):
                x = sh.cell(r, c)
                if x.ctype == xlrd.XL_CELL_DATE:
                    row.append(xlrd.xldate.xldate_as_datetime(x.value, book.datemode))
                elif x.ctype == xlrd.XL_CELL_BOOLEAN:
                    row.append(bool(x.value))
                elif x.ctype == xlrd.XL_CELL_EMPTY or x.ctype == xlrd.XL_CELL_BLANK:
                    row.append(None)
                else:
                    row.append(x.value)
            out.append(row)
        return out
    import openpyxl
    book = openpyxl.load_workbook(path, data_only=True)
    sh = book[sheet] if sheet else book.worksheets[0]
    return [list(r) for r in sh.iter_rows(values_only=True)]


path, sheet, header, last, na = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
skip = set(int(s) for s in (sys.argv[6] if len(sys.argv) > 6 else "").split(",") if s)
marks = set(m for m in na.split(",") if m)
rows = rows_of(path, sheet)
end = last if last else len(rows)
data = [rows[i] for i in range(header, end) if i + 1 not in skip]
out = {
    "header": ["" if v is None else str(v) for v in rows[header - 1]],
    "rows": [[cell(v, marks) for v in r] for r in data if any(v is not None and v != "" for v in r)],
}
print(json.dumps(out))
