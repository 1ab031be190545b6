#!/usr/bin/env python3
"""Summarise a CSV/TSV file: row count and, per column, non-empty and distinct counts and,
for all-numeric columns, min/max/mean.

Usage: python3 csv_summary.py PATH [--delimiter D]

The delimiter is sniffed from the first 64 KiB unless given (`,` `;` `|` or `tab`/`\\t`).
A UTF-8 BOM is removed; files that are not UTF-8 are read as GB18030 (Chinese) and then
Latin-1, and the encoding used is printed. Python standard library only.
"""

import argparse
import csv
import math
import sys

ENCODINGS = ("utf-8-sig", "gb18030", "latin-1")
SAMPLE_BYTES = 64 * 1024


def parse_args():
    parser = argparse.ArgumentParser(description="Summarise the columns of a CSV/TSV file.")
    parser.add_argument("path", help="the CSV or TSV file")
    parser.add_argument("--delimiter", help="field delimiter: , ; | or tab (default: sniffed)")
    return parser.parse_args()


def delimiter_from_arg(arg):
    if arg in ("tab", "\\t", "\t"):
        return "\t"
    if len(arg) != 1:
        sys.exit(f"--delimiter must be one character or 'tab', not {arg!r}")
    return arg


def sniff_delimiter(sample, path):
    try:
        return csv.Sniffer().sniff(sample, delimiters=",\t;|").delimiter
    except csv.Error:
        return "\t" if path.lower().endswith((".tsv", ".tab")) else ","


def to_number(text):
    try:
        value = float(text.replace("_", "x"))  # "1_000" is not a number in a CSV
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def fmt(value):
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.4f}".rstrip("0").rstrip(".")


def summarise(path, encoding, delimiter):
    with open(path, newline="", encoding=encoding) as handle:
        sample = handle.read(SAMPLE_BYTES)
        handle.seek(0)
        if delimiter is None:
            delimiter = sniff_delimiter(sample, path)
        reader = csv.reader(handle, delimiter=delimiter)
        header = next(reader, None)
        if header is None:
            return delimiter, None, 0, [], 0
        columns = [
            {"non_empty": 0, "distinct": set(), "numeric": True, "min": None, "max": None, "sum": 0.0}
            for _ in header
        ]
        rows = 0
        ragged = 0
        for row in reader:
            if not row:
                continue  # a blank line
            rows += 1
            if len(row) != len(header):
                ragged += 1
            for column, value in zip(columns, row):
                value = value.strip()
                if not value:
                    continue
                column["non_empty"] += 1
                column["distinct"].add(value)
                if column["numeric"]:
                    number = to_number(value)
                    if number is None:
                        column["numeric"] = False
                        continue
                    column["sum"] += number
                    column["min"] = number if column["min"] is None else min(column["min"], number)
                    column["max"] = number if column["max"] is None else max(column["max"], number)
        return delimiter, header, rows, columns, ragged


def main():
    args = parse_args()
    delimiter = delimiter_from_arg(args.delimiter) if args.delimiter else None
    for encoding in ENCODINGS:
        try:
            delimiter, header, rows, columns, ragged = summarise(args.path, encoding, delimiter)
            break
        except UnicodeDecodeError:
            continue
    else:
        sys.exit("could not decode the file")  # latin-1 decodes anything; never reached
    shown = "tab" if delimiter == "\t" else delimiter
    print(f"file: {args.path}")
    print(f"encoding: {'utf-8' if encoding == 'utf-8-sig' else encoding}")
    print(f"delimiter: {shown}")
    if header is None:
        print("rows: 0 (empty file)")
        return
    print(f"rows: {rows} (not counting the header)")
    print(f"columns: {len(header)}")
    if ragged:
        print(f"warning: {ragged} rows do not have {len(header)} fields")
    print()
    print("column\tnon_empty\tdistinct\tmin\tmax\tmean")
    for name, column in zip(header, columns):
        if column["numeric"] and column["non_empty"]:
            mean = column["sum"] / column["non_empty"]
            stats = f"{fmt(column['min'])}\t{fmt(column['max'])}\t{fmt(mean)}"
        else:
            stats = "\t\t"
        print(f"{name.strip()}\t{column['non_empty']}\t{len(column['distinct'])}\t{stats}")


if __name__ == "__main__":
    main()
