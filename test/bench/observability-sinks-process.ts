// What an operator's monitoring does to a server, in a process of its own so that its work is not
// counted against the server's core (as the provider fakes and the callers are not): it stands in
// for Prometheus and an OpenTelemetry collector on other machines.
//   sink                 an OTLP/HTTP endpoint that takes every export; prints its URL, runs until killed
//   scrape <url> <token> GET <url> with the token every second (Prometheus' default is every 15 s:
//                        this is the harsher case); runs until killed
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const [mode, url, token] = process.argv.slice(2);
if (mode === 'sink') {
  const sink = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`http://127.0.0.1:${(sink.address() as AddressInfo).port}\n`);
} else if (mode === 'scrape' && url && token) {
  setInterval(() => {
    void fetch(url, { headers: { authorization: `Bearer ${token}` } })
      .then((r) => r.arrayBuffer())
      .catch(() => {});
  }, 1000);
} else {
  process.stderr.write('usage: observability-sinks-process.ts sink | scrape <url> <token>\n');
  process.exit(2);
}
