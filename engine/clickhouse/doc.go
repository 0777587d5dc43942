// Package clickhouse keeps big tables on a ClickHouse cluster and answers
// the same checked plans over them with the same semantics as the DuckDB
// store. It implements catalog.Backend and sees only the catalog and the
// plan: the owner's catalog stays in DuckDB, and a table's entry says its
// rows live here.
//
// The orders table on the cluster, after datadesk table move t_...
// --to clickhouse: every shard has
//
//	CREATE TABLE `datadesk`.`t_..._local` (__row UInt64, `order_id` Nullable(String),
//	  `customer_zip` Nullable(String), `amount` Nullable(Decimal(18, 2)), `day` Nullable(String))
//	  ENGINE = MergeTree ORDER BY __row
//	CREATE TABLE `datadesk`.`t_...` AS `datadesk`.`t_..._local`
//	  ENGINE = Distributed(`datadesk`, `datadesk`, `t_..._local`, intHash64(__row))
//
// and the query_table call
//
//	{"file_id": "f_...", "filters": [{"column": "order_id", "op": "eq", "value": 123}],
//	 "aggregates": [{"op": "sum", "column": "amount"}], "limit": 5}
//
// becomes two statements, the counts and the page, with the value written
// as an escaped literal (the identifier 123 is the text '123', never 000123):
//
//	SELECT count(), if(count(`amount`) = 0, NULL, sum(`amount`))
//	  FROM `datadesk`.`t_...` WHERE lowerUTF8(`order_id`) = lowerUTF8('123')
//	SELECT `order_id`, `customer_zip`, `amount`, `day`
//	  FROM `datadesk`.`t_...` WHERE lowerUTF8(`order_id`) = lowerUTF8('123') ORDER BY __row ASC LIMIT 0, 5
//
// More in ../testdata/plans/*.ch.sql.golden.
//
// A measure over the groups follows the servers' version. The
// files.analyze_table call
//
//	{"file_id": "f_...", "group_by": [{"column": "day", "bucket": "month"}],
//	 "measures": [{"op": "count", "name": "c"}, {"op": "running_total", "of": "c"}]}
//
// has, after the stage of the groups and their counts (__g0, __v0, and
// __n, each group's rows), on a server with window functions the stage
//
//	SELECT *, sum(`__v0`) OVER (ORDER BY `__g0` ASC NULLS LAST
//	  ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS `__v1` FROM (...)
//
// and on ClickHouse 18.16 the months gathered into one array sorted by
// month, the running total and whether any value was seen summed along it,
// and the rows unfolded again:
//
//	SELECT tupleElement(__r, 1) AS `__g0`, tupleElement(__r, 2) AS `__v0`, tupleElement(__r, 3) AS `__n`,
//	  if(__x1 = 0, NULL, __x0) AS `__v1`
//	FROM (SELECT __s,
//	    arrayCumSum(arrayMap(__y -> ifNull(__y, 0), arrayMap(__r -> toNullable(tupleElement(__r, 2)), __s))) AS __w0,
//	    arrayCumSum(arrayMap(__y -> isNotNull(__y), arrayMap(__r -> toNullable(tupleElement(__r, 2)), __s))) AS __w1
//	  FROM (SELECT arraySort(__r -> tuple(isNull(tupleElement(__r, 1)), assumeNotNull(tupleElement(__r, 1))),
//	      groupArray(tuple(`__g0`, `__v0`, `__n`))) AS __s
//	    FROM (...)))
//	ARRAY JOIN __s AS __r, __w0 AS __x0, __w1 AS __x1
package clickhouse
