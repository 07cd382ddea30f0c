/** Server-sent-events framing (https://html.spec.whatwg.org/multipage/server-sent-events.html). */

export interface SseFrame {
  id?: string | number;
  event?: string;
  /** Written as one `data:` line per line of text. */
  data: string;
}

export function formatSseEvent(frame: SseFrame): string {
  let out = '';
  if (frame.id !== undefined) out += `id: ${String(frame.id)}\n`;
  if (frame.event !== undefined) out += `event: ${frame.event}\n`;
  for (const line of frame.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return out + '\n';
}

/** A comment line: ignored by SSE parsers, but keeps proxies and idle timers from closing the stream. */
export function formatSseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}
