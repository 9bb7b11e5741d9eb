// The flood of `bench ws-flood`, in a process of its own (so its CPU is not the server's): keeps
// `concurrency` voice WebSocket connects in flight for `seconds`, each to one of the URLs given
// (round robin), closing any that opens at once, and prints how they were answered as one JSON
// line: {"statuses":{"101":n,"401":n,"429":n,"503":n,…},"connects":n}.
import WebSocket from 'ws';

const [seconds, concurrency, headersJson, ...urls] = process.argv.slice(2);
const headers = JSON.parse(headersJson!) as Record<string, string>;
const statuses: Record<string, number> = {};
let connects = 0;
let next = 0;
const until = Date.now() + Number(seconds) * 1000;

function count(status: string): void {
  statuses[status] = (statuses[status] ?? 0) + 1;
}

function connectOnce(): Promise<void> {
  connects++;
  const url = urls[next++ % urls.length]!;
  return new Promise((resolve) => {
    const socket = new WebSocket(url, { headers: url.includes('/v1/ws/') ? {} : headers });
    socket.once('unexpected-response', (request, response) => {
      count(String(response.statusCode));
      response.resume();
      request.destroy();
      resolve();
    });
    socket.once('open', () => {
      count('101');
      socket.terminate();
      resolve();
    });
    socket.once('error', () => {
      count('error');
      resolve();
    });
  });
}

async function lane(): Promise<void> {
  while (Date.now() < until) await connectOnce();
}

await Promise.all(Array.from({ length: Number(concurrency) }, lane));
process.stdout.write(`${JSON.stringify({ statuses, connects })}\n`);
process.exit(0);
