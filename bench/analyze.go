package bench

import (
	"encoding/json"
	"os"
	"strings"

	"datadesk/engine/catalog"
)

// analyses are the files.analyze_table paths, one per capability, each
// beside the statement a person would write for the same answer: the
// page, the matched rows, the groups and the empty groups ({t} is the
// table, {l} the lookup table of regions). Percentiles interpolate
// between doubles, as pandas does: quantile_cont of a DECIMAL would round
// to the column's scale, another answer. not_in keeps empty cells and
// is_blank trims every space character, as the tool documents.
var analyses = []struct{ name, args, hand string }{
	{"month buckets", `{"group_by":[{"column":"order_date","bucket":"month"}],"measures":[{"op":"sum","column":"amount"}]}`,
		`SELECT CAST(date_trunc('month', order_date) AS DATE) AS m, sum(amount), sum(count(*)) OVER (), count(*) OVER (),
		 sum(CASE WHEN m IS NULL THEN 1 ELSE 0 END) OVER () FROM {t} GROUP BY m ORDER BY m LIMIT 20`},
	{"count distinct", `{"measures":[{"op":"count_distinct","column":"customer_zip"}]}`,
		`SELECT count(DISTINCT customer_zip), count(*) FROM {t}`},
	{"median and percentile", `{"group_by":["region"],"measures":[{"op":"median","column":"amount"},{"op":"percentile","column":"amount","p":0.9}]}`,
		`SELECT region, quantile_cont(CAST(amount AS DOUBLE), 0.5), quantile_cont(CAST(amount AS DOUBLE), 0.9), sum(count(*)) OVER (), count(*) OVER (),
		 sum(CASE WHEN region IS NULL THEN 1 ELSE 0 END) OVER () FROM {t} GROUP BY region ORDER BY region LIMIT 20`},
	{"standard deviation", `{"group_by":["category"],"measures":[{"op":"stddev","column":"amount"}]}`,
		`SELECT category, stddev_samp(amount), sum(count(*)) OVER (), count(*) OVER (),
		 sum(CASE WHEN category IS NULL THEN 1 ELSE 0 END) OVER () FROM {t} GROUP BY category ORDER BY category LIMIT 20`},
	{"share of the total", `{"group_by":["region"],"measures":[{"op":"share","column":"amount"}]}`,
		`SELECT region, sum(amount) / sum(sum(amount)) OVER (), sum(count(*)) OVER (), count(*) OVER (),
		 sum(CASE WHEN region IS NULL THEN 1 ELSE 0 END) OVER () FROM {t} GROUP BY region ORDER BY region LIMIT 20`},
	{"ratio of two sums", `{"group_by":["category"],"measures":[{"op":"sum","column":"amount"},{"op":"sum","column":"quantity"},{"name":"per_item","expr":"sum_amount / sum_quantity"}]}`,
		`SELECT category, sum(amount), sum(quantity), sum(amount) / sum(quantity), sum(count(*)) OVER (), count(*) OVER (),
		 sum(CASE WHEN category IS NULL THEN 1 ELSE 0 END) OVER () FROM {t} GROUP BY category ORDER BY category LIMIT 20`},
	{"having", `{"group_by":["customer_zip"],"measures":[{"op":"count"}],"having":[{"measure":"count","op":"gte","value":20}],"sort_by":"count","direction":"desc"}`,
		`SELECT zip, n, matched, count(*) OVER (), sum(CASE WHEN zip IS NULL THEN 1 ELSE 0 END) OVER () FROM
		 (SELECT customer_zip AS zip, count(*) AS n, sum(count(*)) OVER () AS matched FROM {t} GROUP BY zip) WHERE n >= 20
		 ORDER BY n DESC, zip LIMIT 20`},
	{"change and running total", `{"group_by":[{"column":"order_date","bucket":"month"}],"measures":[{"op":"sum","column":"amount"},{"op":"pct_change","of":"sum_amount"},{"op":"running_total","of":"sum_amount"}]}`,
		`SELECT m, s, (s - lag(s) OVER w) / lag(s) OVER w, sum(s) OVER (ORDER BY m ROWS UNBOUNDED PRECEDING), sum(n) OVER (), count(*) OVER (),
		 sum(CASE WHEN m IS NULL THEN 1 ELSE 0 END) OVER ()
		 FROM (SELECT CAST(date_trunc('month', order_date) AS DATE) AS m, sum(amount) AS s, count(*) AS n FROM {t} GROUP BY m)
		 WINDOW w AS (ORDER BY m) ORDER BY m LIMIT 20`},
	{"rank within a group", `{"group_by":["region","category"],"measures":[{"op":"sum","column":"amount"},{"op":"rank","of":"sum_amount","within":["region"]}]}`,
		`SELECT region, category, sum(amount), rank() OVER (PARTITION BY region ORDER BY sum(amount) DESC), sum(count(*)) OVER (), count(*) OVER (),
		 sum(CASE WHEN region IS NULL OR category IS NULL THEN 1 ELSE 0 END) OVER () FROM {t} GROUP BY region, category ORDER BY region, category LIMIT 20`},
	{"top 3 per group", `{"group_by":["region","category"],"measures":[{"op":"sum","column":"amount"}],"top":{"n":3,"per":["region"],"by":"sum_amount"}}`,
		`SELECT region, category, s, matched, count(*) OVER (), sum(CASE WHEN region IS NULL OR category IS NULL THEN 1 ELSE 0 END) OVER () FROM
		 (SELECT region, category, sum(amount) AS s, sum(count(*)) OVER () AS matched,
		  row_number() OVER (PARTITION BY region ORDER BY sum(amount) DESC, region, category) AS r FROM {t} GROUP BY region, category)
		 WHERE r <= 3 ORDER BY region, category LIMIT 20`},
	{"OR groups and new filters", `{"filters":[{"any":[{"column":"region","op":"eq","value":"north"},{"all":[{"column":"note","op":"starts_with","value":"gift"},
		{"column":"category","op":"not_in","value":["toys","tools"]}]}]},{"column":"order_date","op":"between","value":["2021-01-01","2021-12-31"]},
		{"column":"note","op":"is_blank","value":false}],"measures":[{"op":"count"}]}`,
		`SELECT count(*) FROM {t} WHERE (lower(region) = 'north' OR (starts_with(lower(note), 'gift') AND (category IS NULL OR lower(category) NOT IN ('toys', 'tools'))))
		 AND order_date BETWEEN DATE '2021-01-01' AND DATE '2021-12-31' AND NOT (note IS NULL OR trim(note, ' '||chr(9)||chr(10)||chr(11)||chr(12)||chr(13)) = '')`},
	{"lookup", `{"group_by":["lookup.manager"],"measures":[{"op":"sum","column":"amount"}],"lookup":{"on":[{"column":"region","lookup_column":"region"}]}}`,
		`SELECT l.manager, sum(t.amount), sum(count(*)) OVER (), count(*) OVER (), sum(CASE WHEN l.manager IS NULL THEN 1 ELSE 0 END) OVER ()
		 FROM {t} AS t LEFT JOIN {l} AS l ON t.region = l.region GROUP BY l.manager ORDER BY l.manager LIMIT 20`},
}

// regionsCSV is the lookup table of the lookup path.
const regionsCSV = "region,manager,target\nNorth,Ann,100\nSouth,Bob,120\nEast,Cem,90\nWest,Dee,110\nCentral,Eva,80\n"

// analyzePaths measures files.analyze_table, one path per capability.
func (r *runner) analyzePaths(t *catalog.Table) error {
	if err := os.WriteFile(r.path("regions.csv"), []byte(regionsCSV), 0o600); err != nil {
		return err
	}
	lookup, err := r.ingest("regions.csv")
	if err != nil {
		return err
	}
	for _, a := range analyses {
		var analysis catalog.Analysis
		dec := json.NewDecoder(strings.NewReader(a.args))
		dec.UseNumber()
		if err := dec.Decode(&analysis); err != nil {
			return err
		}
		analysis.FileID = t.ID
		if analysis.Lookup != nil {
			analysis.Lookup.FileID = lookup.Tables[0].ID
		}
		hand := strings.NewReplacer("{t}", `data."`+t.ID+`"`, "{l}", `data."`+lookup.Tables[0].ID+`"`).Replace(a.hand)
		base := func() error { _, err := r.store.Drain(r.ctx, hand); return err }
		subject := func() error {
			p, err := r.store.PlanAnalysis(r.ctx, analysis)
			if err != nil {
				return err
			}
			_, err = r.store.Analyze(r.ctx, p)
			return err
		}
		res := &Result{Name: "analyze_table: " + a.name, Baseline: "the statement a person would write", Target: 1.15}
		if err := r.pairTurns(res, base, subject); err != nil {
			return err
		}
	}
	return nil
}
