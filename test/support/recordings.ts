// Downloads a recording once its call has ended and its last writes have landed: the recorder's
// final writes may come a moment after the session has closed, and a download before then is a
// well-formed WAV of the part written so far. So: ask until it stops growing.
import { expect } from 'vitest';

/** The recording at `url` once three downloads 200 ms apart agree on its length. */
export async function finishedRecording(url: string, headers: Record<string, string>): Promise<{ wav: Buffer; response: Response }> {
  let wav = Buffer.alloc(0);
  let response: Response | undefined;
  for (let same = 0, i = 0; same < 3 && i < 50; i++) {
    response = await fetch(url, { headers });
    expect(response.status).toBe(200);
    const body = Buffer.from(await response.arrayBuffer());
    same = body.length === wav.length ? same + 1 : 0;
    wav = body;
    if (same < 3) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { wav, response: response! };
}
