// Not a bench: GET /v1/flows with an API key under load (autocannon in a child process) against
// an in-process server, so `node --cpu-prof --import tsx test/bench/profile-api.ts` shows where a
// request's time goes.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createAccount, createFlow, startTestServer } from '../support/server.ts';

const server = await startTestServer({ rateLimit: { authPerMinute: 1e6, credentialPerMinute: 1e9, ipPerMinute: 1e9 } }, { checkResponses: false });
const account = await createAccount(server);
for (let i = 0; i < 5; i++) await createFlow(server, account.apiKey, `Flow ${i}`);
const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', new URL('./load-generator.ts', import.meta.url).pathname, `${server.url}/v1/flows`, '10', '8', JSON.stringify({ 'x-service-key': account.apiKey })]);
process.stdout.write(stdout);
await server.close();
process.exit(0);
