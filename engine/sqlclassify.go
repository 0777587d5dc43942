package engine

import (
	"context"
	"database/sql"
	"regexp"
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// The SQL pass counts the value shapes of every staging column in one
// vectorised scan, producing exactly the counts colStats makes in Go, so
// that decide stays the one place types are chosen. Each value is trimmed
// as strings.TrimSpace trims, sorted into a kind by a cheap first test and
// at most three patterns, and split into parts by regexp_extract; the
// counts are count_if and CASE aggregates (FILTER clauses copy the input once each) over those parts.

// Patterns of the SQL pass, each the exact counterpart of a Go test in
// classify.go.
const (
	plainNumberPattern = `^([-+]?)([0-9]*)(\.?)([0-9]*)$` // with at least one digit: colStats.number's allDigits
	digitishPattern    = `\+?\(?[0-9][0-9 ()./-]*`        // isDigitish
	isoDatePattern     = `[0-9]{4}-[0-9]{2}-[0-9]{2}`
	naiveTimePattern   = `([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?`                                    // timeShape without a zone
	zonedTimePattern   = `([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,6})?(Z|[+-](0[0-9]|1[0-4])(:?[0-5][0-9])?)` // timeShape with one
	dateishPattern     = isoDatePattern + `([ T].*)?|[0-9]{1,4}[/.][0-9]{1,2}[/.][0-9]{1,4}|` + yearMonthPattern
	yearMonthPattern   = `[0-9]{4}-(0[1-9]|1[0-2])`
	// quickIntPattern is a whole number of at most 15 digits as int64
	// prints it: quick code 1.
	quickIntPattern = `0|-?[1-9][0-9]{0,14}`
)

// sqlCounts counts the shapes of staging columns 1..width of table stage.
func sqlCounts(ctx context.Context, conn *sql.Conn, stage string, width int) ([]typing.Stats, error) {
	return sqlCountsFrom(ctx, conn, ducksql.Ident(stage), width)
}

// sqlCountsFrom counts the shapes of columns c1..cwidth of from, a table
// or a subquery the engine built.
func sqlCountsFrom(ctx context.Context, conn *sql.Conn, from string, width int) ([]typing.Stats, error) {
	q := countsSQL(from, width)
	// One row: per column, the fixed counts then a histogram of currencies.
	per := len(sqlCountNames) + 1
	vals := make([]any, width*per)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := conn.QueryRowContext(ctx, q).Scan(ptrs...); err != nil {
		return nil, classify(ctx, err)
	}
	out := make([]typing.Stats, width)
	for i := range out {
		m := map[string]int64{}
		for j, name := range sqlCountNames {
			m[name] = toInt64(vals[i*per+j])
		}
		if h, ok := vals[i*per+per-1].(duckdb.OrderedMap); ok {
			keys, counts := h.Keys(), h.Values()
			for j, k := range keys {
				if s, ok := k.(string); ok {
					m["cur:"+s] = toInt64(counts[j])
				}
			}
		}
		out[i] = statsFromCounts(m)
	}
	return out, nil
}

// sqlCountNames are the counts of one column, in the order countsSQL
// selects them.
var sqlCountNames = []string{
	"n", "int", "dec", "lead", "long", "bool", "date", "ts", "tsz", "dmy", "mdy", "dmydot", "ymdslash", "dateish",
	"serial", "serialint", "digitish", "intdigits", "scale",
	"form", "sci", "grouped", "ambiguous", "point", "pct", "paren", "blank", "padded", "longpoint", "ym",
}

// countsSQL builds the statement of the SQL pass: four projections (trim,
// kind, parts, flags) under one aggregate. Only constants and column
// positions go into it.
func countsSQL(from string, width int) string {
	var trims, kinds, parts, flags, aggs []string
	for i := 1; i <= width; i++ {
		n := strconv.Itoa(i)
		x, k, e := "x"+n, "k"+n, "e"+n
		trims = append(trims, ducksql.Trim(ducksql.StageColumn(i))+" AS "+x+", "+ducksql.Edge(ducksql.StageColumn(i))+" AS "+e)
		kinds = append(kinds, x+", "+e+", "+kindSQL(x)+" AS "+k)
		parts = append(parts, x+", "+k+", "+e+
			", CASE WHEN "+k+" = 'n' THEN regexp_extract("+x+", "+ducksql.Literal(plainNumberPattern)+", ['sg', 'ip', 'dt', 'fr']) END AS np"+n+
			", CASE WHEN "+k+" = 'w' THEN regexp_extract("+x+", "+ducksql.Literal(typing.WrittenPattern)+", "+sqlList(typing.WrittenParts)+") END AS wp"+n+
			", CASE WHEN "+k+" <> 'o' THEN regexp_full_match("+x+", "+ducksql.Literal(digitishPattern)+") END AS dg"+n)
		flags = append(flags, flagsSQL(n))
		aggs = append(aggs, aggsSQL(n)...)
	}
	// The parts are materialised: inlined, every flag would run the
	// patterns again.
	return "WITH p AS MATERIALIZED (SELECT " + strings.Join(parts, ", ") +
		" FROM (SELECT " + strings.Join(kinds, ", ") +
		" FROM (SELECT " + strings.Join(trims, ", ") + " FROM " + from + ")))" +
		", f AS MATERIALIZED (SELECT " + strings.Join(flags, ", ") + " FROM p)" +
		" SELECT " + strings.Join(aggs, ", ") + " FROM f"
}

func sqlList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = ducksql.Literal(n)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// kindSQL sorts a trimmed value: NULL when empty; o when its first
// character rules out every shape but text and booleans; n a plain number
// (colStats.number); w a number in a written form (readWritten); d
// something date-like; x anything else.
func kindSQL(x string) string {
	var isoCodes []string
	firsts := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "+", "-", ".", "("}
	for _, c := range typing.CurrencySigns {
		if typing.IsoCode(c) {
			isoCodes = append(isoCodes, c)
		} else {
			firsts = append(firsts, c)
		}
	}
	return "CASE WHEN " + x + " IS NULL OR " + x + " = '' THEN NULL" +
		" WHEN NOT (left(" + x + ", 1) IN " + sqlTuple(firsts) + " OR left(" + x + ", 3) IN " + sqlTuple(isoCodes) + ") THEN 'o'" +
		" WHEN regexp_full_match(" + x + ", '[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)') THEN 'n'" +
		" WHEN regexp_full_match(" + x + ", " + ducksql.Literal(typing.WrittenPattern) + ") THEN 'w'" +
		" WHEN regexp_full_match(" + x + ", " + ducksql.Literal(dateishPattern) + ") THEN 'd'" +
		" ELSE 'x' END"
}

func sqlTuple(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = ducksql.Literal(v)
	}
	return "(" + strings.Join(q, ", ") + ")"
}

// flagsSQL turns the parts of column n into one flag per shape, each the
// counterpart of a test in colStats.number, readWritten with
// colStats.written, or colStats.date.
func flagsSQL(n string) string {
	x, k, np, wp := "x"+n, "k"+n, "np"+n, "wp"+n
	col := func(expr, name string) string { return expr + " AS " + name + n }
	// Plain numbers.
	nsig := "length(ltrim(" + np + ".ip || " + np + ".fr, '0'))"
	nbase := "(" + k + " = 'n' AND " + nsig + " <= 15 AND " + np + ".ip <> '')"
	nlead := "(" + nbase + " AND length(" + np + ".ip) > 1 AND left(" + np + ".ip, 1) = '0')"
	nok := "(" + nbase + " AND NOT " + nlead + " AND " + np + ".sg <> '+')"
	nint := "(" + nok + " AND " + np + ".dt = '' AND NOT (" + np + ".sg = '-' AND " + np + ".ip = '0'))"
	// Written forms.
	has := func(g string) string { return "(" + wp + "." + g + " <> '')" }
	paren := "(" + has("lp") + " OR " + has("lp2") + ")"
	cur := "(" + wp + ".cp || " + wp + ".cs)"
	exp := "CASE WHEN " + wp + ".exp = '' THEN 0 ELSE TRY_CAST(" + wp + ".exp AS INTEGER) END"
	grouped := "contains(" + wp + ".int, ',')"
	digits := "replace(" + wp + ".int, ',', '')"
	valid := "(" + k + " = 'w' AND NOT (" + has("lp") + " AND " + has("lp2") + ") AND " + paren + " = " + has("rp") +
		" AND NOT (" + has("lp2") + " AND " + wp + ".cp = '') AND NOT (" + has("cp") + " AND " + has("cs") + ")" +
		" AND NOT (" + has("pct") + " AND " + cur + " <> '') AND NOT (" + has("m1") + " AND " + has("m2") + ")" +
		" AND NOT (" + paren + " AND (" + has("m1") + " OR " + has("m2") + ")) AND NOT (" + has("m2") + " AND " + wp + ".cp = '')" +
		" AND (" + wp + ".exp = '' OR (NOT " + grouped + " AND abs(" + exp + ") <= " + strconv.Itoa(typing.MaxExponent) + "))" +
		" AND (" + paren + " OR " + cur + " <> '' OR " + has("pct") + " OR " + grouped + " OR " + has("exp") + "))"
	wsig := "length(ltrim(" + digits + " || " + wp + ".frac, '0'))"
	wleadRaw := "(length(" + wp + ".int) > 1 AND left(" + wp + ".int, 1) = '0')"
	// Dates.
	d := "(" + k + " = 'd')"
	isoTime := func(pattern string) string {
		return "(" + d + " AND regexp_full_match(" + x + ", " + ducksql.Literal(isoDatePattern+"[ T]"+pattern) + ") AND TRY_CAST(left(" + x + ", 10) AS DATE) IS NOT NULL)"
	}
	dayMonth := func(pattern, format string) string {
		return "(" + d + " AND regexp_full_match(" + x + ", " + ducksql.Literal(pattern) + ") AND try_strptime(" + x + ", " + ducksql.Literal(format) + ") IS NOT NULL)"
	}
	return strings.Join([]string{
		x, k, "e" + n, "dg" + n, np + ".ip AS ip" + n, np + ".fr AS fr" + n, np + ".sg AS sg" + n,
		col("("+k+" = 'n' AND "+nsig+" > 15)", "nlong"),
		col("("+k+" = 'n' AND "+nsig+" > 15 AND "+np+".dt = '.')", "nlongpt"),
		col(nlead, "nlead"),
		col(nint, "nint"),
		col("("+nok+" AND "+np+".dt = '.' AND "+np+".fr <> '')", "ndec"),
		col("("+nok+" AND "+np+".sg = '' AND ("+np+".dt = '' OR "+np+".fr <> '') AND length("+np+".ip) <= 7 AND TRY_CAST("+np+".ip AS INTEGER) <= 2958465)", "nserial"),
		col("coalesce("+valid+", false)", "wv"),
		col(wsig, "wsig"),
		col(wleadRaw, "wlead"),
		col("greatest(length("+digits+") + "+exp+", 1)", "wint"),
		col("greatest(length("+wp+".frac) - "+exp+", 0)", "wscale"),
		col(cur, "cur"), col(has("exp"), "wsci"), col(grouped, "wgrp"),
		col("("+grouped+" AND length("+wp+".int) - length("+digits+") = 1 AND "+wp+".frac = '')", "wamb"),
		col(has("frac"), "wpoint"), col(has("pct"), "wpct"), col(paren, "wparen"),
		col("("+d+" AND regexp_full_match("+x+", '"+isoDatePattern+"') AND TRY_CAST("+x+" AS DATE) IS NOT NULL)", "date"),
		col(isoTime(naiveTimePattern), "tsn"),
		col(isoTime(zonedTimePattern), "tsz"),
		col(dayMonth(`[0-9]{1,2}/[0-9]{1,2}/[0-9]{4}`, "%d/%m/%Y"), "dmy"),
		col(dayMonth(`[0-9]{1,2}/[0-9]{1,2}/[0-9]{4}`, "%m/%d/%Y"), "mdy"),
		col(dayMonth(`[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{4}`, "%d.%m.%Y"), "dmydot"),
		col(dayMonth(`[0-9]{4}/[0-9]{1,2}/[0-9]{1,2}`, "%Y/%m/%d"), "ymd"),
		col("("+d+" AND regexp_full_match("+x+", "+ducksql.Literal(yearMonthPattern)+"))", "ym"),
	}, ", ")
}

// aggsSQL returns the aggregates of column n in sqlCountNames order, then
// its currency histogram.
func aggsSQL(n string) []string {
	v := func(name string) string { return name + n }
	f := func(cond string) string { return "CAST(coalesce(count_if(" + cond + "), 0) AS BIGINT)" }
	wok := "(" + v("wv") + " AND " + v("wsig") + " <= 15 AND NOT " + v("wlead") + ")"
	maxOf := func(a, condA, b, condB string) string {
		return "greatest(coalesce(max(CASE WHEN " + condA + " THEN " + a + " END), 0), coalesce(max(CASE WHEN " + condB + " THEN " + b + " END), 0))"
	}
	return []string{
		f(v("k") + " IS NOT NULL"),
		f(v("nint")), f(v("ndec")),
		f(v("nlead") + " OR (" + v("wv") + " AND " + v("wsig") + " <= 15 AND " + v("wlead") + ")"),
		f(v("nlong") + " OR (" + v("wv") + " AND " + v("wsig") + " > 15)"),
		f("lower(" + v("x") + ") IN ('true', 'false')"),
		f(v("date")), f(v("date") + " OR " + v("tsn")), f(v("tsz")),
		f(v("dmy")), f(v("mdy")), f(v("dmydot")), f(v("ymd")),
		f(v("dmy") + " OR " + v("mdy") + " OR " + v("dmydot") + " OR " + v("ymd") + " OR " + v("ym")),
		f(v("nserial")), f(v("nint") + " AND " + v("sg") + " = ''"), f("coalesce(" + v("dg") + ", false)"),
		maxOf("length("+v("ip")+")", v("nint")+" OR "+v("ndec"), v("wint"), wok),
		maxOf("length("+v("fr")+")", v("ndec"), v("wscale"), wok),
		f(wok), f(wok + " AND " + v("wsci")), f(wok + " AND " + v("wgrp")), f(wok + " AND " + v("wamb")),
		f(wok + " AND " + v("wpoint")), f(wok + " AND " + v("wpct")), f(wok + " AND " + v("wparen")),
		f(v("e") + " = 1"), f(v("e") + " = 2"),
		f(v("nlongpt") + " OR (" + v("wv") + " AND " + v("wsig") + " > 15 AND " + v("wpoint") + ")"),
		f(v("ym")),
		"histogram(CASE WHEN " + wok + " AND " + v("cur") + " <> '' THEN " + v("cur") + " END)",
	}
}

// statsFromCounts fills a colStats from counts, as counts() reports them.
func statsFromCounts(m map[string]int64) typing.Stats {
	c := typing.Stats{
		N: m["n"], Ints: m["int"], Decs: m["dec"], Lead: m["lead"], Long: m["long"], Bools: m["bool"],
		Dates: m["date"], Stamps: m["ts"], DMY: m["dmy"], MDY: m["mdy"], DMYDot: m["dmydot"],
		YMDSlash: m["ymdslash"], Serial: m["serial"], SerialInt: m["serialint"], Digits: m["digitish"],
		IntDigits: m["intdigits"], Scale: m["scale"],
		Forms: m["form"], Sci: m["sci"], Grouped: m["grouped"], Ambiguous: m["ambiguous"], Points: m["point"],
		Percent: m["pct"], Paren: m["paren"], Zoned: m["tsz"], Dateish: m["dateish"],
		Blank: m["blank"], Padded: m["padded"], LongPoint: m["longpoint"], YearMonths: m["ym"],
	}
	for k, v := range m {
		if s, ok := strings.CutPrefix(k, "cur:"); ok && v > 0 {
			if c.Currencies == nil {
				c.Currencies = map[string]int64{}
			}
			c.Currencies[s] = v
		}
	}
	return c
}

// Value codes of the quick pass. Each code is a set of values whose
// shape counts colStats would make are known exactly (codes 0, 2, 3) or
// known well enough that decide cannot choose otherwise (1, 4, 5, 6).
const (
	quickEmpty   = 0 // empty
	quickInt     = 1 // a canonical whole number of at most 15 digits
	quickBool    = 2 // true or false
	quickText    = 3 // starts with nothing a number, date or code starts with
	quickDecimal = 4 // a canonical decimal of at most 15 significant digits
	quickLead    = 5 // digits with a leading zero, at most 15 significant
	quickDate    = 6 // an ISO date
	quickOther   = 7 // needs the full count
	quickCodes   = 8
)

// quickSQL sorts raw value x into a quick code with cheap tests, the
// cheapest first: code points, patterns, a round-trip cast. It
// does not trim (trimming every value cost as much as the rest): a value
// starting with a space goes to the full count, and one ending with a
// space fails every round trip and pattern but the text one, where only
// true and false care, and those are trimmed.
func quickSQL(x string) string {
	var spaces []string
	for _, c := range typing.SpaceChars {
		spaces = append(spaces, strconv.Itoa(int(c)))
	}
	a := "ascii(" + x + ")"
	return "CASE WHEN " + x + " IS NULL OR " + x + " = '' THEN 0" +
		" WHEN NOT " + quickMaybeSQL(x) +
		" THEN CASE WHEN " + a + " IN (70, 84, 102, 116) AND lower(" + ducksql.Trim(x) + ") IN ('true', 'false') THEN 2 ELSE 3 END" +
		" WHEN " + a + " IN (" + strings.Join(spaces, ", ") + ") THEN 7" +
		" WHEN regexp_full_match(" + x + ", " + ducksql.Literal(quickIntPattern) + ") THEN 1" +
		" WHEN strlen(" + x + ") <= 16 AND regexp_full_match(" + x + ", '-?(0|[1-9][0-9]*)\\.[0-9]+') THEN 4" +
		" WHEN regexp_full_match(" + x + ", '0[0-9]{1,14}') THEN 5" +
		" WHEN length(" + x + ") = 10 AND TRY_CAST(" + x + " AS DATE)::VARCHAR = " + x + " THEN 6" +
		" ELSE 7 END"
}

// quickMaybeSQL is false for a non-empty value x whose first character
// starts no number, date, currency code or space: text (quick codes 2
// and 3). One anchored pattern tests it: a chain of code point tests ran
// ten times slower.
func quickMaybeSQL(x string) string {
	return "regexp_matches(" + x + ", " + ducksql.Literal(quickMaybePattern) + ")"
}

// quickMaybePattern matches the start of a value that may be other than
// text: a digit, sign, point, parenthesis, space, currency sign or ISO
// currency code.
var quickMaybePattern = maybePattern()

func maybePattern() string {
	var isoCodes []string
	class := "0-9"
	for _, c := range typing.CurrencySigns {
		if typing.IsoCode(c) {
			isoCodes = append(isoCodes, c)
		} else {
			class += regexp.QuoteMeta(c)
		}
	}
	for _, c := range typing.SpaceChars + "+.(" {
		class += `\x{` + strconv.FormatInt(int64(c), 16) + `}`
	}
	class += `\-`
	return "^([" + class + "]|" + strings.Join(isoCodes, "|") + ")"
}

// quickCounts is what the quick pass found in one column.
type quickCounts struct {
	codes            [quickCodes]int64
	intDigits, scale int64
	// blank and padded count cells of only spaces and values with spaces
	// around them (ducksql.Edge).
	blank, padded int64
	// negative counts the whole and decimal numbers with a minus sign:
	// the others are digitish, which decide asks of text columns.
	negative int64
}

// settle returns the counts decide needs when the quick pass alone fixes
// the decision, or false when the column needs the full count. The
// counts left out are ones decide does not reach for these columns.
func (q quickCounts) settle() (typing.Stats, bool) {
	c := q.codes
	n := c[quickInt] + c[quickBool] + c[quickText] + c[quickDecimal] + c[quickLead] + c[quickDate] + c[quickOther]
	switch {
	case c[quickOther] > 0:
		return typing.Stats{}, false
	case c[quickInt]+c[quickDecimal]+c[quickLead] == n:
		// Numbers and dates of the quick pass have no space around them
		// (true and false may).
		return typing.Stats{N: n, Ints: c[quickInt], Decs: c[quickDecimal], Lead: c[quickLead], IntDigits: q.intDigits, Scale: q.scale,
			Digits: n - q.negative, Trimmed: true}, true
	case c[quickBool]+c[quickText] == n:
		return typing.Stats{N: n, Bools: c[quickBool]}, true
	case c[quickDate] == n:
		return typing.Stats{N: n, Dates: n, Stamps: n, Trimmed: true}, true
	}
	return typing.Stats{}, false
}

// quickPass runs the quick pass over columns cols of table, one
// statement per column: DuckDB reads only that column, and plans a narrow
// statement far faster than one wide one (a statement over 28 columns ran
// out of memory while planning).
func quickPass(ctx context.Context, conn *sql.Conn, table string, cols []string) ([]quickCounts, error) {
	out := make([]quickCounts, len(cols))
	for i, col := range cols {
		aggs := make([]string, 0, quickCodes+3)
		for k := 0; k < quickCodes; k++ {
			aggs = append(aggs, "CAST(coalesce(count_if(q = "+strconv.Itoa(k)+"), 0) AS BIGINT)")
		}
		// Whole digits and scale: strpos finds the point of a decimal.
		aggs = append(aggs,
			"coalesce(max(CASE WHEN q = 1 THEN length(x) - (ascii(x) = 45)::INT WHEN q = 4 THEN strpos(x, '.') - 1 - (ascii(x) = 45)::INT END), 0)",
			"coalesce(max(CASE WHEN q = 4 THEN length(x) - strpos(x, '.') END), 0)",
			"CAST(coalesce(count_if(q IN (1, 4) AND ascii(x) = 45), 0) AS BIGINT)",
			"CAST(coalesce(count_if(e = 1), 0) AS BIGINT)", "CAST(coalesce(count_if(e = 2), 0) AS BIGINT)")
		q := "SELECT " + strings.Join(aggs, ", ") + " FROM (SELECT " + quickSQL("x") + " AS q, x, " + ducksql.Edge("x") + " AS e" +
			" FROM (SELECT " + col + " AS x FROM " + table + "))"
		vals := make([]int64, quickCodes+5)
		ptrs := make([]any, len(vals))
		for j := range vals {
			ptrs[j] = &vals[j]
		}
		if err := conn.QueryRowContext(ctx, q).Scan(ptrs...); err != nil {
			return nil, classify(ctx, err)
		}
		copy(out[i].codes[:], vals[:quickCodes])
		out[i].intDigits, out[i].scale, out[i].negative = vals[quickCodes], vals[quickCodes+1], vals[quickCodes+2]
		out[i].blank, out[i].padded = vals[quickCodes+3], vals[quickCodes+4]
	}
	return out, nil
}

// classifyStaged counts the shapes of staging columns 1..width in SQL.
func classifyStaged(ctx context.Context, conn *sql.Conn, stage string, width int) ([]typing.Stats, error) {
	cols := make([]string, width)
	for i := range cols {
		cols[i] = ducksql.StageColumn(i + 1)
	}
	return classifyColumns(ctx, conn, ducksql.Ident(stage), cols)
}

// classifyColumns counts the shapes of text columns cols of table in SQL:
// the quick pass for every column, and the full count for the columns it
// leaves open.
func classifyColumns(ctx context.Context, conn *sql.Conn, table string, cols []string) ([]typing.Stats, error) {
	quick, err := quickPass(ctx, conn, table, cols)
	if err != nil {
		return nil, err
	}
	out := make([]typing.Stats, len(cols))
	for i, q := range quick {
		if st, ok := q.settle(); ok {
			out[i] = st
		} else {
			// The full count runs over the open columns only, one at a
			// time.
			full, err := sqlCountsFrom(ctx, conn, "(SELECT "+cols[i]+" AS "+ducksql.StageColumn(1)+" FROM "+table+")", 1)
			if err != nil {
				return nil, err
			}
			out[i] = full[0]
		}
		out[i].Blank, out[i].Padded = q.blank, q.padded
	}
	return out, nil
}
