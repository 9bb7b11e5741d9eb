// The dental practice's availability service that resources/flows/appointment-booking.yaml calls
// through its `http` tool: a real HTTP server on a loopback port that records each request (raw
// body and headers, to check the signature) and answers per weekday as the test sets.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AvailabilityRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
}

/** What the service answers for a day: a status and JSON, or 'hang' to never answer. */
export type DayAnswer = { status: number; json: unknown } | 'hang';

export interface AvailabilityService {
  /** The URL to put in the flow's `http.url`. */
  url: string;
  received: AvailabilityRequest[];
  answers: Map<string, DayAnswer>;
  close(): Promise<void>;
}

export async function startAvailabilityService(answers: Record<string, DayAnswer>): Promise<AvailabilityService> {
  const received: AvailabilityRequest[] = [];
  const table = new Map(Object.entries(answers));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: any = null;
      try {
        json = JSON.parse(body);
      } catch {
        // recorded as null: the test says what it expected
      }
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json });
      const answer = table.get(String(json?.arguments?.day)) ?? { status: 404, json: { error: 'unknown day' } };
      if (answer === 'hang') return;
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/voxflow/availability`,
    received,
    answers: table,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
