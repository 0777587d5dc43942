"""Print workbooks' cells as the reference readers see them, as JSON.

xlrd reads .xls, openpyxl .xlsx/.xlsm. Each sheet is a list of its rows that
have a value; each row a list of "kind:text" cells in datadesk's forms
(ISO dates, TRUE/FALSE, shortest numbers), "" for an empty cell.
"""
import datetime
import decimal
import json
import os
import re
import sys


def number(v):
    if v == 0:
        return "0"
    if v == int(v) and abs(v) < 1e21:
        return str(int(v))
    return format(decimal.Decimal(repr(v)), "f")


def shows_date_and_time(fmt):
    """Whether a number format code shows a date and a time of day."""
    fmt = re.sub(r'"[^"]*"|\\.|\[[^]]*\]', "", fmt.split(";")[0].lower())
    return bool(re.search(r"[dy]", fmt)) and bool(re.search(r"[hs]", fmt))


def when(v, fmt=""):
    if isinstance(v, datetime.datetime):
        if v.microsecond:
            v = v + datetime.timedelta(microseconds=500)
            v = v.replace(microsecond=v.microsecond // 1000 * 1000)
        if (v.hour, v.minute, v.second, v.microsecond) == (0, 0, 0, 0) and not shows_date_and_time(fmt):
            return "d:" + v.strftime("%Y-%m-%d")
        s = v.strftime("%Y-%m-%dT%H:%M:%S")
        if v.microsecond:
            s += ("%.3f" % (v.microsecond / 1e6))[1:].rstrip("0")
        return "dt:" + s
    if isinstance(v, datetime.time):
        s = v.strftime("%H:%M:%S")
        if v.microsecond:
            s += ("%.3f" % (v.microsecond / 1e6))[1:].rstrip("0")
        return "t:" + s
    if isinstance(v, datetime.date):
        return "d:" + v.strftime("%Y-%m-%d")
    return None


def trim(rows):
    out = []
    for r in rows:
        while r and r[-1] == "":
            r.pop()
        if any(c.split(":", 1)[-1].strip() for c in r):
            out.append(r)
    return out


def xls(path):
    import xlrd
    book = xlrd.open_workbook(path, logfile=open(os.devnull, "w"), formatting_info=True)
    sheets = []
    for sh in book.sheets():
        rows = []
        for r in range(sh.nrows):
            row = []
            for c in range(sh.ncols):
                cell = sh.cell(r, c)
                t, v = cell.ctype, cell.value
                if t == xlrd.XL_CELL_TEXT:
                    row.append("s:" + v if v != "" else "")
                elif t == xlrd.XL_CELL_NUMBER:
                    row.append("n:" + number(v))
                elif t == xlrd.XL_CELL_DATE:
                    try:
                        if v < 1:
                            row.append(when(xlrd.xldate.xldate_as_datetime(v, book.datemode).time()))
                        else:
                            fmt = book.format_map[book.xf_list[cell.xf_index].format_key].format_str
                            row.append(when(xlrd.xldate.xldate_as_datetime(v, book.datemode), fmt))
                    except Exception:
                        row.append("n:" + number(v))
                elif t == xlrd.XL_CELL_BOOLEAN:
                    row.append("b:" + ("TRUE" if v else "FALSE"))
                elif t == xlrd.XL_CELL_ERROR:
                    row.append("e:" + xlrd.error_text_from_code.get(v, "#N/A"))
                else:
                    row.append("")
            rows.append(row)
        sheets.append({"name": sh.name, "rows": trim(rows)})
    return sheets


def xlsx(path):
    import openpyxl
    book = openpyxl.load_workbook(path, data_only=True)
    sheets = []
    for sh in book.worksheets:
        rows = []
        for r in sh.iter_rows():
            row = []
            for cell in r:
                v = cell.value
                if v is None or v == "":
                    row.append("")
                elif isinstance(v, bool):
                    row.append("b:" + ("TRUE" if v else "FALSE"))
                elif cell.data_type == "e":
                    row.append("e:" + str(v))
                elif isinstance(v, (int, float)):
                    row.append("n:" + number(float(v)))
                elif when(v) is not None:
                    row.append(when(v, cell.number_format or ""))
                elif isinstance(v, datetime.timedelta):
                    row.append("n:" + number(v.total_seconds() / 86400))
                else:
                    row.append("s:" + str(v))
            rows.append(row)
        sheets.append({"name": sh.title, "rows": trim(rows)})
    return sheets


import warnings

warnings.simplefilter("ignore")
out = {}
for path in sys.argv[1:]:
    try:
        out[path] = xls(path) if path.lower().endswith(".xls") else xlsx(path)
    except Exception as e:  # the reference cannot read it
        out[path] = str(e)
print(json.dumps(out))
