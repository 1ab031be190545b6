#!/usr/bin/env bash
# Summarise a CSV/TSV file without Python: row count and, per column, non-empty and distinct
# counts and, for all-numeric columns, min/max/mean. Same table as csv_summary.py.
#
# Usage: bash csv_summary.sh PATH [DELIMITER]
#
# Simple splitting only: quoted fields containing the delimiter or newlines are NOT handled
# (use csv_summary.py for those). DELIMITER defaults to tab when the header has a tab, else
# a comma; pass 'tab' for tab. A UTF-8 BOM and CR line endings are removed. Works on bytes
# (LC_ALL=C), so UTF-8 text such as Chinese passes through unchanged.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: bash csv_summary.sh PATH [DELIMITER]" >&2
  exit 2
fi
path=$1
[ -r "$path" ] || { echo "cannot read $path" >&2; exit 1; }
delimiter=${2:-}
if [ -z "$delimiter" ]; then
  if head -n 1 "$path" | grep -q $'\t'; then delimiter=tab; else delimiter=,; fi
fi
[ "$delimiter" = '\t' ] && delimiter=tab
fs=$delimiter
[ "$delimiter" = tab ] && fs=$'\t'

LC_ALL=C awk -v FS="$fs" -v shown="$delimiter" -v path="$path" '
function isnum(v) { return v ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
function fmt(v,   s) {
  if (v == int(v) && v < 1e15 && v > -1e15) return sprintf("%d", v)
  s = sprintf("%.4f", v); sub(/0+$/, "", s); sub(/\.$/, "", s); return s
}
function trim(v) { gsub(/^[ \t]+|[ \t]+$/, "", v); return v }
{ sub(/\r$/, "") }
NR == 1 {
  sub(/^\357\273\277/, "")
  ncol = NF
  for (i = 1; i <= NF; i++) { name[i] = trim($i); numeric[i] = 1 }
  next
}
$0 == "" { next }
{
  rows++
  if (NF != ncol) ragged++
  for (i = 1; i <= ncol; i++) {
    v = trim($i)
    if (v == "") continue
    nonempty[i]++
    if (!((i, v) in seen)) { seen[i, v] = 1; distinct[i]++ }
    if (!numeric[i]) continue
    if (!isnum(v)) { numeric[i] = 0; continue }
    v += 0; sum[i] += v
    if (!(i in min) || v < min[i]) min[i] = v
    if (!(i in max) || v > max[i]) max[i] = v
  }
}
END {
  print "file: " path
  print "encoding: bytes (not decoded)"
  print "delimiter: " shown
  if (NR == 0) { print "rows: 0 (empty file)"; exit }
  print "rows: " rows + 0 " (not counting the header)"
  print "columns: " ncol
  if (ragged) print "warning: " ragged " rows do not have " ncol " fields"
  print ""
  print "column\tnon_empty\tdistinct\tmin\tmax\tmean"
  for (i = 1; i <= ncol; i++) {
    stats = "\t\t"
    if (numeric[i] && nonempty[i]) stats = fmt(min[i]) "\t" fmt(max[i]) "\t" fmt(sum[i] / nonempty[i])
    print name[i] "\t" nonempty[i] + 0 "\t" distinct[i] + 0 "\t" stats
  }
}' "$path"
