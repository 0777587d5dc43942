// A current ClickHouse for the tests, without a server: chDB (ClickHouse
// as a library, npm's chdb) behind the few parts of ClickHouse's HTTP
// interface the cluster client uses. It serves one shard, whose
// Distributed tables reach their local part in the same process (the
// cluster "datadesk" lists this process's own TCP port, which ClickHouse
// takes for itself). Usage: node chdb.cjs DIR; it prints the port it
// listens on (127.0.0.1), then serves until killed.
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const { Session } = require('chdb');

const dir = process.argv[2];
fs.mkdirSync(dir, { recursive: true });
const config = path.join(dir, 'config.xml');
fs.writeFileSync(config, `<clickhouse>
  <tcp_port>9000</tcp_port>
  <remote_servers><datadesk><shard><replica><host>localhost</host><port>9000</port></replica></shard></datadesk></remote_servers>
</clickhouse>
`);
const session = new Session(path.join(dir, 'data'), { connectionArgs: ['--config-file=' + config] });
// What the HTTP interface's parameters set that a statement here cannot:
// inserts through a Distributed table return once the rows are there.
session.query('SET insert_distributed_sync = 1');

// Parameters of the HTTP interface that are not settings.
const notSettings = new Set(['query', 'database', 'user', 'password', 'wait_end_of_query', 'max_query_size', 'insert_quorum']);

function run(params, body) {
  for (const [k, v] of params) {
    if (!notSettings.has(k) && /^[a-z_]+$/.test(k) && /^[0-9]+$/.test(v)) {
      session.query(`SET ${k} = ${v}`);
    }
  }
  let query = params.get('query');
  if (query === null) {
    return session.query(body.toString('utf8'), 'TabSeparated');
  }
  if (body.length === 0) {
    return session.query(query, 'TabSeparated');
  }
  // An insert's rows come in the body: from a file here.
  const file = path.join(dir, 'insert.bin');
  fs.writeFileSync(file, body);
  const m = /^(INSERT INTO .*?) FORMAT (\w+)$/s.exec(query);
  if (!m) {
    throw new Error('Code: 62. the test server takes inserts as INSERT INTO ... FORMAT name');
  }
  return session.query(`${m[1]} FROM INFILE '${file}' FORMAT ${m[2]}`, 'TabSeparated');
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url, 'http://localhost');
    if (url.pathname === '/ping') {
      res.end('Ok.\n');
      return;
    }
    try {
      const out = run(url.searchParams, Buffer.concat(chunks));
      res.writeHead(200, { 'Content-Type': 'text/tab-separated-values; charset=UTF-8' });
      res.end(out || '');
    } catch (e) {
      res.writeHead(500, { 'Content-Type': 'text/plain; charset=UTF-8' });
      res.end(String(e.message || e));
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(server.address().port + '\n');
});
