// Loads a CSV file into a table of a new DuckDB database with DuckDB's own
// reader, as a person would: CREATE TABLE AS SELECT * FROM read_csv(...).
// Arguments: the database's path, the CSV's path, threads, memory limit.
const { DuckDBInstance } = require('@duckdb/node-api');

(async () => {
  const [database, csv, threads, memory] = process.argv.slice(2);
  const db = await DuckDBInstance.create(database, { threads, memory_limit: memory });
  const conn = await db.connect();
  await conn.run("CREATE TABLE t AS SELECT * FROM read_csv('" + csv.replaceAll("'", "''") + "')");
  conn.closeSync();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
