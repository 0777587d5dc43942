// Runs statements on DuckDB in Node (@duckdb/node-api), for datadesk bench:
// the first line of stdin describes the database file, the table to load
// into it from a CSV file and the statements; each later line is a statement's index, answered with
// the milliseconds it took, its rows read in full.
const { DuckDBInstance } = require('@duckdb/node-api');
const readline = require('readline');

async function main() {
  const lines = readline.createInterface({ input: process.stdin });
  let conn = null;
  let setup = null;
  for await (const line of lines) {
    if (setup === null) {
      setup = JSON.parse(line);
      const db = await DuckDBInstance.create(setup.database, { threads: String(setup.threads), memory_limit: setup.memory });
      conn = await db.connect();
      const cols = setup.columns.map(c => `'${c.key}': 'VARCHAR'`).join(', ');
      const casts = setup.columns.map(c => `CAST(NULLIF("${c.key}", '') AS ${c.type}) AS "${c.key}"`).join(', ');
      await conn.run(`CREATE TABLE t AS SELECT ${casts} FROM read_csv('${setup.csv}', header = true, columns = {${cols}})`);
      const n = await conn.runAndReadAll('SELECT count(*) FROM t');
      process.stdout.write(JSON.stringify({ rows: Number(n.getRows()[0][0]) }) + '\n');
      continue;
    }
    const sql = setup.statements[Number(line)];
    const start = performance.now();
    const res = await conn.runAndReadAll(sql);
    res.getRows();
    process.stdout.write((performance.now() - start).toFixed(3) + '\n');
  }
}

main().catch(err => { process.stderr.write(String(err.stack || err) + '\n'); process.exit(1); });
