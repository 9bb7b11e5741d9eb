// A fake OpenAI API on node:http that speaks the real wire protocol (SSE chat completions, PCM
// speech, multipart transcriptions), so tests drive the real `openai` SDK. What the model says
// is a rule table the test writes, so a test reads like a script of the conversation.
// Over 400 lines: one fake for every OpenAI endpoint the product calls (chat with tools and
// structured outputs, speech, transcription), as the real API is one service.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type CountedFault, type Fault, faultFor, listen, pause, readBody, record, type RecordedRequest, sendJson, writeChunks } from './fake-http.ts';
import { concatPcm, findUtterances, parseWav, pcmBytes, speechLikeAudio } from './synthetic-audio.ts';

export interface ChatMatch {
  /** Tested against the text of the last user message. */
  lastUserText?: RegExp;
  /** Role of the last message; 'none' when the conversation has no user message yet. */
  lastRole?: 'user' | 'tool' | 'none';
  /** Tool names that must all be offered. */
  toolsOffered?: string[];
  systemIncludes?: string;
  /** Only the nth request (1-based) that meets the other conditions of this rule. */
  nth?: number;
  /** Structured outputs: the request asks for `response_format: json_schema` with this schema name. */
  jsonSchemaName?: string;
}

export interface ChatReply extends Fault {
  text?: string;
  /** `arguments`: an object is sent as JSON text, a string as is (to send garbage). */
  toolCalls?: Array<{ name: string; arguments: unknown }>;
  /** End the stream cleanly ([DONE]) but leave out the chunk with the finish_reason. */
  omitFinishReason?: boolean;
  /** Structured outputs: the message's content is this value's JSON text, as the real API sends it. */
  json?: unknown;
  /** Structured outputs: the model declines, in `message.refusal` with no content. */
  refusal?: string;
  /**
   * A model that tries to leave its state (the reply is worked out from each request): on the
   * caller's turn it calls one of `tools` the request does not offer; told that call's result (a
   * refusal), it calls one the request offers, its required arguments filled from their schema;
   * then it answers in words. Choices come from a generator seeded with `seed`, so a run repeats.
   */
  wander?: { tools: string[]; seed: number };
  /**
   * Structured outputs worked out from the prompt: each property of the request's schema is the
   * first capture of its pattern in the user messages' text, read as the property's type (a number,
   * an integer, true/false, else text); null when the pattern does not match.
   */
  extract?: Record<string, RegExp>;
}

export interface ChatRule {
  when?: ChatMatch;
  /** The reply, or a function giving each request's own (a load bench's callers each get their own words). */
  respond: ChatReply | (() => ChatReply);
}

export interface FakeOpenAIOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  rules?: ChatRule[];
  speech?: CountedFault;
  transcription?: CountedFault;
  /** One per transcription request that contains speech. */
  transcripts?: string[];
  /** Used instead of `transcripts` when given. */
  transcribe?: (pcm: Int16Array, sampleRate: number) => string;
  /** Length of the synthetic speech per word. */
  msPerWord?: number;
}

export interface FakeOpenAI {
  /** Base URL including `/v1`, as the SDK's `baseURL` wants it. */
  url: string;
  requests: RecordedRequest[];
  readonly rules: ChatRule[];
  transcripts: string[];
  setRules(rules: ChatRule[]): void;
  setSpeechFault(fault: CountedFault | undefined): void;
  setTranscriptionFault(fault: CountedFault | undefined): void;
  /** From now on, only this key is accepted (a key revoked at the provider); undefined: any. */
  setApiKey(key: string | undefined): void;
  /** Ends every `hangMs` wait under way now: those requests are answered as if it had run out. */
  endHangs(): void;
  close(): Promise<void>;
}

export const DEFAULT_REPLY = "I'm not sure what to say.";
const SPEECH_RATE = 24_000;
// An odd size puts every chunk boundary in the middle of a sample, as real networks do.
const SPEECH_CHUNK_BYTES = 4_801;

interface ChatBody {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages?: Array<{ role: string; content?: unknown; tool_calls?: Array<{ function?: { name?: string } }> }>;
  tools?: Array<{ function?: { name?: string; parameters?: JsonSchemaObject } }>;
  response_format?: { type?: string; json_schema?: { name?: string; schema?: unknown; strict?: boolean } };
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  let rules = options.rules ?? [];
  let ruleHits = new Map<ChatRule, number>();
  let speechFault = options.speech;
  let transcriptionFault = options.transcription;
  let speechCount = 0;
  let transcriptionCount = 0;
  let callCount = 0;
  const transcripts = options.transcripts ?? [];
  let requiredKey = options.apiKey;
  const hangs = new Set<() => void>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const raw = await readBody(req);
    const isMultipart = (req.headers['content-type'] ?? '').startsWith('multipart/form-data');
    const form = isMultipart ? await parseForm(req, raw) : null;
    const recorded = record(req, res, form ? form.recorded : parseJson(raw), requests);

    if (requiredKey !== undefined && req.headers.authorization !== `Bearer ${requiredKey}`) {
      return sendError(res, 401);
    }
    // The model list, as OpenAI and compatible servers answer it (a cheap request that checks a key).
    if (req.method === 'GET' && path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', created: 1_700_000_000, owned_by: 'fake' }] }));
      return;
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      const body = (recorded.body ?? {}) as ChatBody;
      const schemaProblem = strictSchemaProblem(body);
      if (schemaProblem) return sendError(res, 400, schemaProblem);
      const reply = pickReply(body);
      if (!(await beforeAnswer(reply, res, hangs))) return;
      return body.stream ? streamChat(res, recorded, body, reply, () => ++callCount) : answerChat(res, body, reply, () => ++callCount);
    }
    if (req.method === 'POST' && path === '/v1/audio/speech') {
      const fault = faultFor(speechFault, ++speechCount) ?? {};
      if (!(await beforeAnswer(fault, res, hangs))) return;
      return answerSpeech(res, recorded, (recorded.body ?? {}) as Record<string, unknown>, fault, options.msPerWord);
    }
    if (req.method === 'POST' && path === '/v1/audio/transcriptions') {
      const fault = faultFor(transcriptionFault, ++transcriptionCount) ?? {};
      if (!(await beforeAnswer(fault, res, hangs))) return;
      if (!form) return sendError(res, 400, 'Expected a multipart/form-data body.');
      return answerTranscription(res, recorded, form, fault, (pcm, rate) =>
        options.transcribe ? options.transcribe(pcm, rate) : (transcripts.shift() ?? ''),
      );
    }
    sendError(res, 404, `Invalid URL (${req.method} ${path})`);
  };

  const wanderers = new Map<ChatReply, () => number>();
  const pickReply = (body: ChatBody): ChatReply => {
    for (const rule of rules) {
      if (!matches(rule.when ?? {}, body)) continue;
      const hits = (ruleHits.get(rule) ?? 0) + 1;
      ruleHits.set(rule, hits);
      if (rule.when?.nth !== undefined && rule.when.nth !== hits) continue;
      const respond = typeof rule.respond === 'function' ? rule.respond() : rule.respond;
      const wander = respond.wander;
      if (wander) {
        let random = wanderers.get(respond);
        if (!random) wanderers.set(respond, (random = seededRandom(wander.seed)));
        return wanderingReply(wander.tools, body, random);
      }
      return respond;
    }
    return { text: DEFAULT_REPLY };
  };

  const listening = await listen(handle);
  return {
    url: `http://127.0.0.1:${listening.port}/v1`,
    requests,
    get rules() {
      return rules;
    },
    transcripts,
    setRules(next) {
      rules = next;
      ruleHits = new Map();
    },
    setSpeechFault(fault) {
      speechFault = fault;
      speechCount = 0;
    },
    setApiKey(key) {
      requiredKey = key;
    },
    setTranscriptionFault(fault) {
      transcriptionFault = fault;
      transcriptionCount = 0;
    },
    endHangs() {
      for (const end of [...hangs]) end();
    },
    close: listening.close,
  };
}

function matches(when: ChatMatch, body: ChatBody): boolean {
  const messages = body.messages ?? [];
  const lastUser = messages.filter((m) => m.role === 'user').at(-1);
  if (when.lastUserText) {
    when.lastUserText.lastIndex = 0;
    if (!lastUser || !when.lastUserText.test(textOf(lastUser.content))) return false;
  }
  if (when.lastRole !== undefined) {
    const role = lastUser ? messages.at(-1)?.role : 'none';
    if (role !== when.lastRole) return false;
  }
  if (when.toolsOffered) {
    const offered = new Set((body.tools ?? []).map((t) => t.function?.name));
    if (!when.toolsOffered.every((name) => offered.has(name))) return false;
  }
  if (when.jsonSchemaName !== undefined && body.response_format?.json_schema?.name !== when.jsonSchemaName) return false;
  if (when.systemIncludes !== undefined) {
    const systems = messages.filter((m) => m.role === 'system').map((m) => textOf(m.content));
    if (!systems.some((text) => text.includes(when.systemIncludes as string))) return false;
  }
  return true;
}

interface JsonSchemaObject {
  properties?: Record<string, { type?: string; enum?: unknown[] }>;
  required?: string[];
}

/** mulberry32: a small seeded generator, so a wandering model's choices repeat run to run. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The reply of a model that tries to leave its state (ChatReply.wander) to this request. */
function wanderingReply(flowTools: string[], body: ChatBody, random: () => number): ChatReply {
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
  const offered = new Map((body.tools ?? []).flatMap((t) => (t.function?.name ? [[t.function.name, t.function.parameters ?? {}] as const] : [])));
  const messages = body.messages ?? [];
  const last = messages.at(-1);
  const lastCalls = [...messages].reverse().find((m) => m.role === 'assistant')?.tool_calls ?? [];
  const offStateTried = lastCalls.some((c) => c.function?.name !== undefined && !offered.has(c.function.name));
  if (last?.role === 'user' || last === undefined) {
    const elsewhere = flowTools.filter((name) => !offered.has(name));
    if (elsewhere.length > 0) return { toolCalls: [{ name: pick(elsewhere), arguments: {} }] };
  }
  if (last?.role === 'tool' && offStateTried && offered.size > 0) {
    const [name, schema] = pick([...offered.entries()]);
    const args: Record<string, unknown> = {};
    for (const field of schema.required ?? []) {
      const spec = schema.properties?.[field] ?? {};
      args[field] = spec.enum && spec.enum.length > 0 ? pick(spec.enum) : spec.type === 'integer' || spec.type === 'number' ? 1 : spec.type === 'boolean' ? true : 'something';
    }
    return { toolCalls: [{ name, arguments: args }] };
  }
  return { text: 'Okay.' };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: { text?: string }) => part.text ?? '').join('');
  return '';
}

/** Applies the knobs that act before any answer; false when nothing more should be sent. */
async function beforeAnswer(fault: Fault, res: ServerResponse, hangs: Set<() => void>): Promise<boolean> {
  if (fault.hangMs !== undefined && !(await hang(fault.hangMs, res, hangs))) return false;
  if (fault.status !== undefined) {
    sendError(res, fault.status);
    return false;
  }
  return true;
}

/** A `hangMs` wait, which endHangs() may end early; true when the response can still be written. */
async function hang(ms: number, res: ServerResponse, hangs: Set<() => void>): Promise<boolean> {
  let end!: () => void;
  const ended = new Promise<boolean>((resolve) => (end = () => resolve(!res.destroyed)));
  hangs.add(end);
  try {
    return await Promise.race([pause(ms, res), ended]);
  } finally {
    hangs.delete(end);
  }
}

function sendError(res: ServerResponse, status: number, message?: string): void {
  const error =
    status === 401
      ? { message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' }
      : status === 429
        ? { message: 'Rate limit reached for requests. Please try again in 1s.', type: 'requests', param: null, code: 'rate_limit_exceeded' }
        : status >= 500
          ? { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null }
          : { message: message ?? 'Invalid request.', type: 'invalid_request_error', param: null, code: null };
  res.setHeader('x-request-id', `req_fake_${status}`);
  sendJson(res, status, { error });
}

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return null;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return raw.toString('utf8');
  }
}

// ── Chat completions ────────────────────────────────────────────────────────────────────────

interface ToolCallOut {
  id: string;
  name: string;
  arguments: string;
}

function toolCallsOf(reply: ChatReply, nextId: () => number): ToolCallOut[] {
  return (reply.toolCalls ?? []).map((call) => ({
    id: `call_fake${nextId()}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }));
}

function usageOf(body: ChatBody, reply: ChatReply) {
  const prompt_tokens = JSON.stringify(body.messages ?? []).length >> 2;
  const completion_tokens = ((reply.text ?? '').length >> 2) + (reply.toolCalls?.length ?? 0) * 8;
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

/** Splits into pieces of about `size` characters; a piece per call keeps the stream realistic. */
function splitEvenly(text: string, pieces: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / pieces));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

async function streamChat(res: ServerResponse, recorded: RecordedRequest, body: ChatBody, reply: ChatReply, nextId: () => number): Promise<void> {
  const id = `chatcmpl-fake${nextId()}`;
  const created = Math.floor(Date.now() / 1000);
  const withUsage = body.stream_options?.include_usage === true;
  const frame = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model ?? 'gpt-fake', system_fingerprint: 'fp_fake', choices, ...(withUsage ? { usage: null } : {}), ...extra })}\n\n`;
  const delta = (d: Record<string, unknown>, finish: string | null = null) => frame([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);

  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': `req_${id}` });
  res.flushHeaders();
  if (reply.garbage) {
    return writeChunks(res, recorded, [`data: {"id":"${id}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel\n\n`, 'data: [DONE]\n\n'], reply);
  }
  const calls = toolCallsOf(reply, nextId);
  const chunks: string[] = [delta({ role: 'assistant', content: reply.text !== undefined ? '' : null, refusal: null })];
  for (const word of (reply.text ?? '').match(/\s*\S+/g) ?? []) chunks.push(delta({ content: word }));
  calls.forEach((call, index) => {
    chunks.push(delta({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const piece of splitEvenly(call.arguments, 4)) chunks.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  if (!reply.omitFinishReason) chunks.push(delta({}, calls.length > 0 ? 'tool_calls' : 'stop'));
  if (withUsage) chunks.push(frame([], { usage: usageOf(body, reply) }));
  chunks.push('data: [DONE]\n\n');
  await writeChunks(res, recorded, chunks, reply);
}

async function answerChat(res: ServerResponse, body: ChatBody, reply: ChatReply, nextId: () => number): Promise<void> {
  if (reply.firstChunkDelayMs && !(await pause(reply.firstChunkDelayMs, res))) return;
  if (reply.garbage) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"id":"chatcmpl-garbage","choices":[{"message":');
    return;
  }
  const calls = toolCallsOf(reply, nextId);
  sendJson(res, 200, {
    id: `chatcmpl-fake${nextId()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? 'gpt-fake',
    system_fingerprint: 'fp_fake',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.refusal !== undefined ? null : structuredContent(body, reply),
          refusal: reply.refusal ?? null,
          ...(calls.length > 0 ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
        },
        logprobs: null,
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: usageOf(body, reply),
  });
}

/**
 * What the real API says of a strict json_schema it cannot hold a model to: every object must
 * list all its properties as required and set additionalProperties to false.
 */
function strictSchemaProblem(body: ChatBody): string | null {
  const format = body.response_format;
  if (format?.type !== 'json_schema') return null;
  const spec = format.json_schema;
  if (!spec?.name || !/^[a-zA-Z0-9_-]{1,64}$/.test(spec.name)) return "Invalid 'response_format.json_schema.name': must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64.";
  if (typeof spec.schema !== 'object' || spec.schema === null) return "Missing required parameter: 'response_format.json_schema.schema'.";
  if (!spec.strict) return null;
  const walk = (node: unknown, context: string): string | null => {
    if (typeof node !== 'object' || node === null) return null;
    const schema = node as { type?: unknown; properties?: Record<string, unknown>; required?: unknown; additionalProperties?: unknown; items?: unknown };
    if (schema.type === 'object') {
      if (schema.additionalProperties !== false) return `Invalid schema for response_format '${spec.name}': In context=(${context}), 'additionalProperties' is required to be supplied and to be false.`;
      const keys = Object.keys(schema.properties ?? {});
      const required = Array.isArray(schema.required) ? schema.required : [];
      const missing = keys.find((key) => !required.includes(key));
      if (missing) return `Invalid schema for response_format '${spec.name}': In context=(${context}), 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`;
      for (const key of keys) {
        const problem = walk(schema.properties![key], `${context ? `${context}, ` : ''}'properties', '${key}'`);
        if (problem) return problem;
      }
    }
    if (schema.type === 'array') return walk(schema.items, `${context ? `${context}, ` : ''}'items'`);
    return null;
  };
  return walk(spec.schema, '');
}

/**
 * The content of a non-streamed answer: `json` as its JSON text (text given as a string is sent as
 * is, to answer with something that is not the schema's JSON), `extract` read from the prompt, or
 * the plain `text`.
 */
function structuredContent(body: ChatBody, reply: ChatReply): string | null {
  if (typeof reply.json === 'string' && body.response_format?.type === 'json_schema') return reply.json;
  if (reply.json !== undefined) return JSON.stringify(reply.json);
  if (!reply.extract) return reply.text ?? null;
  type Property = { type?: unknown };
  const schema = (body.response_format?.json_schema?.schema ?? {}) as { properties?: Record<string, Property> };
  const prompt = (body.messages ?? []).filter((m) => m.role === 'user').map((m) => textOf(m.content)).join('\n');
  const out: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const pattern = reply.extract[name];
    if (pattern) pattern.lastIndex = 0;
    const found = pattern?.exec(prompt)?.[1];
    const types = Array.isArray(property.type) ? property.type : [property.type];
    out[name] = found === undefined ? null : types.includes('integer') || types.includes('number') ? Number(found) : types.includes('boolean') ? found === 'true' || found === 'yes' : found;
  }
  return JSON.stringify(out);
}

// ── Speech ──────────────────────────────────────────────────────────────────────────────────

async function answerSpeech(res: ServerResponse, recorded: RecordedRequest, body: Record<string, unknown>, fault: Fault, msPerWord?: number): Promise<void> {
  if (typeof body.input !== 'string' || typeof body.model !== 'string' || typeof body.voice !== 'string') {
    return sendError(res, 400, "Missing required parameter: 'input', 'model' or 'voice'.");
  }
  if (fault.garbage) {
    // What a captive portal or a misrouted proxy sends back with a 200.
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<html><body><h1>Welcome to nginx!</h1></body></html>');
    return;
  }
  const format = body.response_format ?? 'mp3';
  if (format !== 'pcm' && format !== 'wav') return sendError(res, 400, `The fake only speaks pcm and wav, not ${String(format)}.`);
  const pcm = pcmBytes(speechLikeAudio(body.input, SPEECH_RATE, msPerWord));
  const bytes = format === 'wav' ? Buffer.concat([wavHeader(pcm.length, SPEECH_RATE), pcm]) : pcm;
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += SPEECH_CHUNK_BYTES) chunks.push(bytes.subarray(at, at + SPEECH_CHUNK_BYTES));
  res.writeHead(200, { 'content-type': format === 'wav' ? 'audio/wav' : 'audio/pcm', 'transfer-encoding': 'chunked' });
  res.flushHeaders();
  await writeChunks(res, recorded, chunks, fault);
}

function wavHeader(dataBytes: number, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

// ── Transcriptions ──────────────────────────────────────────────────────────────────────────

interface ParsedForm {
  fields: Record<string, string>;
  file: File | null;
  recorded: Record<string, unknown>;
}

async function parseForm(req: IncomingMessage, raw: Buffer): Promise<ParsedForm> {
  // undici's Request parses multipart exactly as a server framework would.
  const form = await new Request('http://fake/', { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? '' }, body: raw }).formData();
  const fields: Record<string, string> = {};
  let file: File | null = null;
  const recorded: Record<string, unknown> = {};
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') {
      fields[name] = value;
      recorded[name] = value;
    } else {
      file = value;
      recorded[name] = { name: value.name, type: value.type, size: value.size };
    }
  }
  return { fields, file, recorded };
}

async function answerTranscription(res: ServerResponse, recorded: RecordedRequest, form: ParsedForm, fault: Fault, transcribe: (pcm: Int16Array, rate: number) => string): Promise<void> {
  if (!form.file || !form.fields.model) return sendError(res, 400, "Missing required parameter: 'file' or 'model'.");
  if (fault.firstChunkDelayMs && !(await pause(fault.firstChunkDelayMs, res))) return;
  if (fault.garbage) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"text": "I want to pa');
    return;
  }
  let wav;
  try {
    wav = parseWav(new Uint8Array(await form.file.arrayBuffer()));
  } catch (error) {
    return sendError(res, 400, `Audio file might be corrupted or unsupported: ${String(error)}`);
  }
  (recorded.body as Record<string, unknown>).audio = { sampleRate: wav.sampleRate, channels: wav.channels, durationMs: Math.round((wav.pcm.length * 1000) / wav.sampleRate) };
  const speech = findUtterances(wav.pcm, wav.sampleRate, { hangoverMs: null });
  const text = speech.length > 0 ? transcribe(concatPcm(speech.map((u) => u.pcm)), wav.sampleRate) : '';
  const format = form.fields.response_format ?? 'json';
  if (format === 'text') {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(`${text}\n`);
    return;
  }
  const duration = wav.pcm.length / wav.sampleRate;
  sendJson(res, 200, format === 'verbose_json' ? { task: 'transcribe', language: form.fields.language ?? 'english', duration, text, segments: [] } : { text, usage: { type: 'duration', seconds: Math.ceil(duration) } });
}
