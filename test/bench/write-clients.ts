// The writers of writes.bench.ts, in their own process, as a business's backend would be: the
// client's own work does not run on the server's thread. Sends `count` POSTs to `path` with the
// JSON `body`, `writers` at a time, keep-alive connections, and prints the sorted latencies (ms)
// as JSON on stdout. `apiKey` may list several keys with commas: writer w sends with key w mod n
// (eight tenants at once rather than one tenant eight times).
import { Agent, request } from 'node:http';

const [url, path, apiKeyList, bodyJson, count, writers] = process.argv.slice(2) as [string, string, string, string, string, string];
const apiKeys = apiKeyList.split(',');
const agent = new Agent({ keepAlive: true, maxSockets: Number(writers) });
const target = new URL(path, url);

function post(body: string, apiKey: string): Promise<number> {
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
for (let i = 0; i < 20; i++) await post(bodyFor(-1 - i), apiKeys[i % apiKeys.length]!);
for (let round = 0; round < total / width; round++) {
  const batch = Array.from({ length: width }, (_, w) => post(bodyFor(next++), apiKeys[w % apiKeys.length]!));
  times.push(...(await Promise.all(batch)));
}
agent.destroy();
process.stdout.write(JSON.stringify(times.sort((a, b) => a - b)));
