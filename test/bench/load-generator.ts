// Runs autocannon in its own process, so the load generator does not share the server's event
// loop; prints autocannon's JSON result on stdout. Used by the benches.
import autocannon from 'autocannon';

const [url, connections, seconds, headersJson] = process.argv.slice(2);
const result = await autocannon({
  url: url!,
  connections: Number(connections ?? 10),
  duration: Number(seconds ?? 5),
  headers: headersJson ? (JSON.parse(headersJson) as Record<string, string>) : {},
});
process.stdout.write(JSON.stringify({ rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors }));
