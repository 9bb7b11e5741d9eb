// The writers of writes.bench.ts, in their own process, as a business's backend would be: the
// client's own work does not run on the server's thread. Sends `count` POSTs to `path` with the
// JSON `body`, `writers` at a time, keep-alive connections, and prints the sorted latencies (ms)
// as JSON on stdout. `apiKey` may list several keys with commas: writer w sends with key w mod n
// (eight tenants at once rather than one tenant eight times). `url` may list several servers
// with commas in the same way: writer w sends to server w mod n (one load over several nodes).
import { Agent, request } from 'node:http';

const [urlList, path, apiKeyList, bodyJson, count, writers, report] = process.argv.slice(2) as [string, string, string, string, string, string, string?];
const apiKeys = apiKeyList.split(',');
const targets = urlList.split(',').map((url) => new URL(path, url));
const agent = new Agent({ keepAlive: true, maxSockets: Number(writers) });

function post(body: string, apiKey: string, target: URL): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(target, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-service-key': apiKey, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        if (res.statusCode !== 200 && res.statusCode !== 201) reject(new Error(`${path} answered ${res.statusCode}: ${Buffer.concat(chunks).toString()}`));
        else resolve(performance.now() - started);
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const times: number[] = [];
const total = Number(count);
const width = Number(writers);
let next = 0;
const bodyFor = (i: number) => bodyJson.replaceAll('{i}', String(i));
// Warm-up: the connections and both JITs, untimed.
for (let i = 0; i < 20; i++) await post(bodyFor(-1 - i), apiKeys[i % apiKeys.length]!, targets[i % targets.length]!);
const timedFrom = performance.now();
for (let round = 0; round < total / width; round++) {
  const batch = Array.from({ length: width }, (_, w) => post(bodyFor(next++), apiKeys[w % apiKeys.length]!, targets[w % targets.length]!));
  times.push(...(await Promise.all(batch)));
}
agent.destroy();
times.sort((a, b) => a - b);
// `wall` as a 7th argument: {times, wallMs}, the timed rounds' wall time too (for a throughput).
process.stdout.write(JSON.stringify(report === 'wall' ? { times, wallMs: performance.now() - timedFrom } : times));
