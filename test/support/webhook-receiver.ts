// A business's webhook receiver on a real port: it records every request (the raw body and the
// Standard Webhooks headers) and answers as the test says (a status, a redirect, or never).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
  /** Unix ms when it arrived. */
  at: number;
}

/** How to answer one request: a status, or 'hang' to never answer. */
export type Answer = number | 'hang' | { redirect: string };

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Sets how the next requests are answered (default 200). */
  answerWith(answer: (request: ReceivedWebhook, index: number) => Answer): void;
  waitFor(predicate: (request: ReceivedWebhook) => boolean, timeoutMs?: number, what?: string): Promise<ReceivedWebhook>;
  close(): Promise<void>;
}

/**
 * A receiver on `host` (127.0.0.1 unless given) at `port` (a free one unless given). Binding a
 * given port fails with the error (EADDRINUSE…) rather than leaving the test to time out.
 */
export async function startWebhookReceiver(port = 0, host = '127.0.0.1'): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const hanging = new Set<ServerResponse>();
  let answer: (request: ReceivedWebhook, index: number) => Answer = () => 200;
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        json = null;
      }
      const request: ReceivedWebhook = {
        id: String(req.headers['webhook-id'] ?? ''),
        timestamp: String(req.headers['webhook-timestamp'] ?? ''),
        signature: String(req.headers['webhook-signature'] ?? ''),
        headers: req.headers,
        body,
        json,
        at: Date.now(),
      };
      received.push(request);
      for (const wake of waiters) wake();
      const how = answer(request, received.length - 1);
      if (how === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      if (typeof how === 'object') res.writeHead(302, { location: how.redirect }).end();
      else res.writeHead(how, { 'content-type': 'text/plain' }).end(how >= 400 ? 'receiver says no' : 'ok');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: actual } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${actual}/hooks`,
    received,
    answerWith(next) {
      answer = next;
    },
    waitFor(predicate, timeoutMs = 10_000, what = 'a webhook') {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = received.find(predicate);
          if (!found) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${what} did not arrive within ${timeoutMs} ms; got ${received.map((r) => r.json?.type ?? '?').join(', ') || 'nothing'}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
